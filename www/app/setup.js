// Device setup, once: the site's URL, the device id and its token, typed
// or read from a setup link's fragment (#site=…&token=…&device=…). A
// setup is checked before it is saved (the site answers, over a
// certificate this browser trusts, and takes the token), and a setup for
// another site asks first while this one still holds scans.

import { $, failure, show } from './dom.js';
import { confirmBox } from './dialogs.js';
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
    return { ok: false, failure: 'url', message: `${site_url} is not a URL: it starts https:// and names the site's host and port.` };
  }
  if (!['http:', 'https:'].includes(base.protocol)) {
    return { ok: false, failure: 'url', message: `${site_url} is not a web address: it starts https://.` };
  }
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(base.hostname);
  if (location.protocol === 'https:' && base.protocol === 'http:' && !loopback) {
    return { ok: false, failure: 'mixed', message: `${site_url} is plain http: this page is https and may not reach it. Use the site's https:// address.` };
  }
  const reach = await siteReach(base);
  if (reach !== 'ok') {
    // An https URL naming no port asks port 443; the site's HTTPS port is another unless set so.
    const port = base.port || (base.protocol === 'https:' ? '443' : '80');
    const portHint = base.protocol === 'https:' && !base.port ? ` The site's HTTPS port is ${SITE_HTTPS_PORT_DEFAULT} unless it was set otherwise: try https://${base.hostname}:${SITE_HTTPS_PORT_DEFAULT}.` : '';
    if (reach === 'plain') {
      return { ok: false, failure: 'port', message: `Port ${port} of ${base.hostname} answers plain HTTP, not HTTPS: it is the site's plain port. Use the site's HTTPS address (https://${base.hostname}:${SITE_HTTPS_PORT_DEFAULT} unless it was set otherwise).` };
    }
    return reach === 'certificate'
      ? { ok: false, failure: 'certificate', message: `This handheld does not trust the certificate of ${base.origin}, or port ${port} is not the site's HTTPS port. If the port is right, install the site's CA once: open ${trustLink(base)} (or ask IT to push it), then Save again.${portHint}` }
      : { ok: false, failure: 'unreachable', message: `The site does not answer at ${base.origin}: nothing took the connection on port ${port}. Check the address and port, that the site is running, and that this handheld is on its network.${portHint}` };
  }
  let res;
  try {
    res = await fetch(new URL(`/v1/reference?limit=1`, base), {
      headers: { authorization: `Bearer ${device_token}` }, cache: 'no-store', signal: AbortSignal.timeout(SITE_TIMEOUT_MS),
    });
  } catch {
    return { ok: false, failure: 'site', message: `${base.origin} answers, but this page (from ${location.origin}) may not read it: open the setup link on the site itself.` };
  }
  if (res.status === 401) {
    return { ok: false, failure: 'token', message: `The site refused the device token (401): it is mistyped, or device ${device_id || ''} was revoked or given a new token since. Ask a supervisor for a new setup link (stockhop-site device link ${device_id || 'ID'}) and open it.` };
  }
  if (!res.ok) return { ok: false, failure: 'site', message: `The site answered ${res.status} to the token check.` };
  const body = await res.json().catch(() => null);
  const named = body && body.device && body.device.device_id;
  if (named && named !== device_id) {
    return { ok: false, failure: 'device', message: `That token is device ${named}'s, not ${device_id}'s: use the id the site printed with it.` };
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
  return confirmBox(`Switch to ${device_id} at ${site_url}?`,
    `This handheld holds ${held} scan${held === 1 ? '' : 's'} of ${current.device_id} at ${current.site_url} not yet settled. `
    + 'They stay on this device either way (the queue screen shows them), but from now on they go out under the new setup. '
    + 'Let them drain first unless a supervisor says otherwise.',
    'Switch', `Stay ${current.device_id}`);
}

async function saveSetup(site_url, device_token, device_id, { anyway = false, fromLink = false } = {}) {
  $('setup-anyway').hidden = true;
  delete $('setup-status').dataset.failure;
  show('setup-status', `Checking ${site_url}…`);
  const check = await checkSetup(site_url, device_token, device_id);
  const down = ['unreachable', 'certificate'].includes(check.failure);
  // A link the site printed is right by construction: when the site is
  // only out of reach it is kept (scans wait for the site); a typed setup
  // is saved over a failure only when the operator says so.
  if (!check.ok && !(down && (anyway || fromLink))) {
    $('setup-status').dataset.failure = check.failure;
    show('setup-status', check.message, 'error');
    $('setup-anyway').hidden = !down;
    if (state.screen() !== 'setup') go('setup');
    return { ok: false, error: { code: check.failure, message: check.message } };
  }
  const before = await ask({ type: 'device' });
  if (!(await confirmSwitch(site_url, device_id))) {
    await readDevice();
    const { siteUrl, deviceId } = state.device();
    show('setup-status', `Not switched: this handheld stays ${deviceId} → ${siteUrl}.`, 'warn');
    return { ok: false, error: { code: 'KEPT', message: 'not switched' } };
  }
  const reply = await ask({ type: 'setup', site_url, device_token, device_id });
  if (!reply.ok) {
    show('setup-status', failure(reply), 'error');
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
  if (check.ok) show('setup-status', `Set up as ${device_id} → ${site_url}`);
  else {
    $('setup-status').dataset.failure = check.failure;
    show('setup-status', `Set up as ${device_id} → ${site_url}. ${check.message}`, 'warn');
  }
  persistAtSetup();
  checkOnline();
  await loadReference(true);
  const screen = state.screen();
  if (screen === 'setup' || screen == null) go(state.session() ? 'mode' : 'picker');
  return reply;
}

/** A setup link's fragment (#site=…&token=…&device=…), taken and cleared from the URL. */
export async function setupFromFragment() {
  if (!location.hash.includes('token=')) return;
  const params = new URLSearchParams(location.hash.slice(1));
  const site = params.get('site') || location.origin;
  const token = params.get('token');
  const device = params.get('device');
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
    show('setup-status', `Set up as ${reply.device_id} → ${reply.site_url}`);
  } else if (reply.ok && !$('setup-status').dataset.failure) {
    // A setup that just failed keeps its reason on screen.
    show('setup-status', 'Not set up yet: scans are kept on this device until it is.', 'warn');
  }
}

export function wire() {
  $('setup-form').addEventListener('submit', (event) => {
    event.preventDefault();
    saveSetup($('site-url').value.trim(), $('device-token').value, $('device-id').value.trim());
  });
  $('setup-back').addEventListener('click', back);
  $('setup-anyway').addEventListener('click', () => {
    saveSetup($('site-url').value.trim(), $('device-token').value, $('device-id').value.trim(), { anyway: true });
  });
}
