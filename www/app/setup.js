// Device setup, once: the site's URL, the device id and its token, typed
// or read from a setup link's fragment (#site=…&token=…&device=…). A
// setup is checked before it is saved (the site answers, over a
// certificate this browser trusts, and takes the token), and a setup for
// another site asks first while this one still holds scans.

import { $, failure, show } from './dom.js';
import { confirmBox } from './dialogs.js';
import { chooseDeviceLanguage, deviceLanguage, deviceLocale, locale, msg, onLanguage, t } from './l10n.js';
import { operatorLanguage } from './operators.js';
import { clearRows } from './results.js';
import { back, go } from './screens.js';
import { checkOnline, loadReference, SITE_TIMEOUT_MS, TOKEN_KEY } from './site.js';
import * as state from './state.js';
import { persistAtSetup } from './storage.js';
import { ask } from './worker.js';

/**
 * The site's plain HTTP port when this page was not served by it: the
 * `serve` default (`--http`), where `/trust.html` and `/ca.crt` are open to
 * every device, so a handheld that does not trust the site's CA yet can
 * fetch it without a certificate warning.
 */
const SITE_PLAIN_PORT_DEFAULT = '8080';
/** The `serve` default HTTPS port (`--https`), named when a URL names none. */
const SITE_HTTPS_PORT_DEFAULT = '8443';

/** Where the site's CA is fetched: its plain port, over http (the page's own port when the site served it). */
function trustLink(base) {
  const samePlain = location.protocol === 'http:' && location.hostname === base.hostname;
  const port = samePlain ? location.port : SITE_PLAIN_PORT_DEFAULT;
  return `http://${base.hostname}${port ? `:${port}` : ''}/trust.html`;
}

/**
 * Checks a setup before it is saved: that the site answers at that URL
 * (over a certificate this browser trusts) and takes the token. Resolves
 * {ok: true} or {ok: false, failure, message}: `failure` is `url`,
 * `mixed`, `unreachable`, `port`, `certificate`, `token`, `device` or
 * `site`.
 */
async function checkSetup(site_url, device_token, device_id) {
  let base;
  try {
    base = new URL(site_url);
  } catch {
    return { ok: false, failure: 'url', message: t('setup-not-url', { url: site_url }) };
  }
  if (!['http:', 'https:'].includes(base.protocol)) {
    return { ok: false, failure: 'url', message: t('setup-not-web', { url: site_url }) };
  }
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(base.hostname);
  if (location.protocol === 'https:' && base.protocol === 'http:' && !loopback) {
    return { ok: false, failure: 'mixed', message: t('setup-mixed', { url: site_url }) };
  }
  const reach = await siteReach(base);
  if (reach !== 'ok') {
    // An https URL naming no port asks port 443; the site's HTTPS port is another unless set so.
    const port = base.port || (base.protocol === 'https:' ? '443' : '80');
    const portHint = base.protocol === 'https:' && !base.port ? ` ${t('setup-port-hint', { port: String(SITE_HTTPS_PORT_DEFAULT), host: base.hostname })}` : '';
    if (reach === 'plain') {
      return { ok: false, failure: 'port', message: t('setup-plain-port', { port: String(port), host: base.hostname, https: String(SITE_HTTPS_PORT_DEFAULT) }) };
    }
    return reach === 'certificate'
      ? { ok: false, failure: 'certificate', message: t('setup-certificate', { origin: base.origin, port: String(port), trust: trustLink(base) }) + portHint }
      : { ok: false, failure: 'unreachable', message: t('setup-unreachable', { origin: base.origin, port: String(port) }) + portHint };
  }
  let res;
  try {
    res = await fetch(new URL(`/v1/reference?limit=1`, base), {
      headers: { authorization: `Bearer ${device_token}` }, cache: 'no-store', signal: AbortSignal.timeout(SITE_TIMEOUT_MS),
    });
  } catch {
    return { ok: false, failure: 'site', message: t('setup-cross-origin', { origin: base.origin, page: location.origin }) };
  }
  if (res.status === 401) {
    return { ok: false, failure: 'token', message: t('setup-token', { device: device_id || '', command: `stockhop-site device link ${device_id || 'ID'}` }) };
  }
  if (!res.ok) return { ok: false, failure: 'site', message: t('setup-site-status', { status: String(res.status) }) };
  const body = await res.json().catch(() => null);
  const named = body && body.device && body.device.device_id;
  if (named && named !== device_id) {
    return { ok: false, failure: 'device', message: t('setup-other-device', { named, device: device_id }) };
  }
  return { ok: true };
}

/** Whether `/healthz` at `base` answers: 'ok', 'timeout' or 'failed'. */
function healthz(base) {
  return fetch(new URL('/healthz', base), { mode: 'no-cors', cache: 'no-store', signal: AbortSignal.timeout(SITE_TIMEOUT_MS) })
    .then(() => 'ok', (err) => (err && err.name === 'TimeoutError' ? 'timeout' : 'failed'));
}

/**
 * Whether the site answers at `base`: 'ok', 'plain' (an https URL whose
 * port answers plain HTTP: the site's plain port), 'certificate' (an
 * https site the browser reached but does not trust) or 'unreachable'.
 */
async function siteReach(base) {
  const answer = await healthz(base);
  if (answer === 'ok') return 'ok';
  // A timeout is silence: nothing to tell about a certificate.
  if (answer === 'timeout' || base.protocol !== 'https:') return 'unreachable';
  // The same port over plain HTTP, where this page may ask it (a page over
  // https may not): a plain port given as the HTTPS one answers.
  const plain = new URL(base);
  plain.protocol = 'http:';
  if ((location.protocol === 'http:' || ['localhost', '127.0.0.1', '[::1]'].includes(plain.hostname)) && await healthz(plain) === 'ok') return 'plain';
  return (await certificateRefused(base)) ? 'certificate' : 'unreachable';
}

/**
 * After a failed https fetch: whether the browser got as far as a TLS
 * handshake (a server answered, and its certificate was refused). A page
 * is not told why a fetch failed, but Chromium lists a failed fetch in
 * Resource Timing: with no time at all when nothing answered (a refused
 * connection, no route), with the handshake's time when it connected and
 * then refused the certificate. Without an entry the answer is
 * "unreachable", which is never a wrong instruction.
 */
async function certificateRefused(base) {
  const url = new URL('/healthz', base).href;
  const entries = performance.getEntriesByName(url);
  const last = entries[entries.length - 1];
  return !!(last && last.duration > 0);
}

/**
 * Asks before a setup for another site (or another device of one: a site
 * rebuilt at the same address) replaces one that still holds scans; true
 * to go on. The scans are kept either way.
 */
async function confirmSwitch(site_url, device_id) {
  const current = await ask({ type: 'device' });
  if (!current.ok || !current.configured || (current.site_url === site_url && current.device_id === device_id)) return true;
  const counts = await ask({ type: 'counts' });
  const held = counts.ok ? counts.queued + counts.sending + counts.blocked + counts.rejected : 0;
  if (!held) return true;
  const stay = t('setup-switch-no', { device: current.device_id });
  return confirmBox(t('setup-switch-title', { device: device_id, site: site_url }),
    t('setup-switch-text', { count: held, device: current.device_id, site: current.site_url }),
    t('setup-switch-yes'), stay, t('setup-switch-how', { no: stay }));
}

async function saveSetup(site_url, device_token, device_id, { anyway = false, fromLink = false } = {}) {
  $('setup-anyway').hidden = true;
  delete $('setup-status').dataset.failure;
  say(msg('setup-checking'), { url: site_url });
  const check = await checkSetup(site_url, device_token, device_id);
  const down = ['unreachable', 'certificate'].includes(check.failure);
  // A link the site printed is right by construction: when the site is
  // only out of reach it is kept (scans wait for the site); a typed setup
  // is saved over a failure only when the operator says so.
  if (!check.ok && !(down && (anyway || fromLink))) {
    $('setup-status').dataset.failure = check.failure;
    sayText(check.message, 'error');
    $('setup-anyway').hidden = !down;
    if (state.screen() !== 'setup') go('setup');
    return { ok: false, error: { code: check.failure, message: check.message } };
  }
  const before = await ask({ type: 'device' });
  if (!(await confirmSwitch(site_url, device_id))) {
    await readDevice();
    const { siteUrl, deviceId } = state.device();
    say(msg('setup-not-switched'), { device: deviceId, site: siteUrl }, 'warn');
    return { ok: false, error: { code: 'KEPT', message: 'not switched' } };
  }
  const reply = await ask({ type: 'setup', site_url, device_token, device_id });
  if (!reply.ok) {
    sayText(failure(reply), 'error');
    return reply;
  }
  state.setDevice(site_url, device_id);
  localStorage.setItem(TOKEN_KEY, device_token);
  if (before.ok && before.configured && (before.site_url !== site_url || before.device_id !== device_id) && state.session()) {
    // The open session was the other device's: its items stay queued, and
    // this one starts from the picker.
    state.setSession(null);
    clearRows();
    go('picker');
  }
  if (check.ok) say(msg('setup-done'), { device: device_id, site: site_url });
  else {
    $('setup-status').dataset.failure = check.failure;
    sayText(t('setup-done-but', { device: device_id, site: site_url, why: check.message }), 'warn');
  }
  persistAtSetup();
  checkOnline();
  await loadReference(true);
  const screen = state.screen();
  if (screen === 'setup' || screen == null) go(state.session() ? 'mode' : 'picker');
  return reply;
}

/** The setup status line's message and arguments while they can be said again (null: a failure's own words). */
let said = null;

/** The setup status line: message `id` with `args`, said again in a new language. */
function say(id, args, kind) {
  said = { id, args, kind };
  show('setup-status', t(id, args), kind);
}

/** The setup status line in words already formatted (a check's or the worker's failure). */
function sayText(text, kind) {
  said = null;
  show('setup-status', text, kind);
}

onLanguage(() => {
  if (said) show('setup-status', t(said.id, said.args), said.kind);
  showDeviceLanguage();
});

/**
 * The setup's language list on the device's language (the one chosen, else
 * the browser's best match), and its note while a signed-in operator's own
 * language is shown instead.
 */
function showDeviceLanguage() {
  $('setup-language').value = deviceLocale();
  $('setup-language-operator').hidden = locale() === deviceLocale();
}

/**
 * The device's language just chosen, on screen now unless a signed-in
 * operator reads their own (that one holds until sign-out).
 */
async function useDeviceLanguage() {
  const badge = state.operator();
  if (!(badge && operatorLanguage(badge))) await deviceLanguage();
  showDeviceLanguage();
}

/**
 * A setup link's fragment (#site=…&token=…&device=…, and `lang=` when the
 * setup chooses the device's language), taken and cleared from the URL.
 */
export async function setupFromFragment() {
  if (!location.hash.includes('token=')) return;
  const params = new URLSearchParams(location.hash.slice(1));
  const site = params.get('site') || location.origin;
  const token = params.get('token');
  const device = params.get('device');
  if (params.has('lang')) {
    chooseDeviceLanguage(params.get('lang'));
    await useDeviceLanguage();
  }
  history.replaceState(null, '', location.pathname + location.search);
  if (token && device) {
    // The link's values stay in the form: a setup the site refuses is shown with them, and its reason.
    $('site-url').value = site;
    $('device-id').value = device;
    $('device-token').value = token;
    await saveSetup(site, token, device, { fromLink: true });
  }
}

/** Reads the setup the worker holds. */
export async function readDevice() {
  const reply = await ask({ type: 'device' });
  if (reply.ok && reply.configured) {
    state.setDevice(reply.site_url, reply.device_id);
    $('site-url').value = reply.site_url;
    $('device-id').value = reply.device_id;
    say(msg('setup-done'), { device: reply.device_id, site: reply.site_url });
  } else if (reply.ok && !$('setup-status').dataset.failure) {
    // A setup that just failed keeps its reason on screen.
    say(msg('setup-not-yet'), {}, 'warn');
  }
}

export function wire() {
  $('setup-form').addEventListener('submit', (event) => {
    event.preventDefault();
    saveSetup($('site-url').value.trim(), $('device-token').value, $('device-id').value.trim());
  });
  $('setup-back').addEventListener('click', back);
  // The device's language, kept on the device for every later start.
  $('setup-language').addEventListener('change', (event) => {
    chooseDeviceLanguage(event.target.value);
    useDeviceLanguage();
  });
  showDeviceLanguage();
  $('setup-anyway').addEventListener('click', () => {
    saveSetup($('site-url').value.trim(), $('device-token').value, $('device-id').value.trim(), { anyway: true });
  });
}
