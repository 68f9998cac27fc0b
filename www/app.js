// Stockhop handheld app: device setup (once), the mode picker, the five
// mode screens, the queue screen and the menu, under a status bar that
// never scrolls away and above one always-focused scan field. Everything
// durable happens in the service worker (sw.js → wasm): the queue and the
// reference cache; the page asks it, one message per action, each with a
// MessageChannel port for the reply.
//
// Element ids (stable; the end-to-end suite drives them):
//   #status-bar (tap: the queue screen) #net-status[data-net="online"|"offline"]
//     #bar-queue #bar-oldest #bar-attention #bar-cache   #menu-button
//   #worker-status                      shown only when the worker failed
//   #banners: #training (the site says this device is not commissioned) #late-banner
//     (refusals that came after an outage: #late-text #late-show #late-seen)
//   #screen-setup #setup-form #site-url #device-id #device-token #setup-save #setup-back
//     #setup-status[data-failure="url"|"mixed"|"unreachable"|"certificate"|"token"|"device"|"site"]
//     #setup-anyway                     also read from the URL fragment #site=…&token=…&device=…
//   #screen-picker #operator (the badge) #operator-name #operator-change #operator-signout
//     #picker-prompt #picker-modes #picker-status #persist-advice
//                                       mode buttons: #pick-<mode> (only the profile's modes)
//   #screen-mode[data-mode][data-open] #mode-title #session-status #mode-needs
//                                       needs: <li data-need="bin"|"grn"|"count"|"manifest" data-met>
//     #prompt (what to scan next) #scan-bin (put-away, cycle count: the bin last scanned)
//     #mode-notice (a refusal, e.g. dispatch verify offline) #mode-choices (buttons
//     [data-grn] / [data-count]) #mode-detail: #grn-lines tr[data-sku] (cells sku, expected,
//     received, queued) #encode-toggle[aria-pressed] #receive-sku #count-progress
//     (#count-seen #count-expected) #manifest-progress (#manifest-verified #manifest-total)
//     #manifest-units li[data-epc][data-verified] #find-result[data-found] #find-age
//     #count-missing #count-unexpected #count-age #manifest-age #grn-age
//     #scan-status (the last scan's result) #results li[data-key][data-kind="pending"|"kept"|
//     "applied"|"training"|"refused"|"blocked"|"voided"|"failed"|"undone"|"ok"][data-state]
//     (.why, .next, small.code for a refusal) with button[data-action="undo"][data-key]
//     where the ledger will honour it #mode-switch #session-close
//   #screen-queue #queue-back #queue-counts #queue-oldest #queue-retry #queue-refresh
//     #queue-filter-all #queue-filter-decide
//     #queue-list li[data-id][data-state][data-label="S-<session> #<seq> <command>"][data-decide]
//     with buttons [data-action="discard"|"acknowledge"|"undo"|"rescan"][data-id] #queue-more #queue-status
//   #screen-menu #menu-back #menu-queue #menu-switch #menu-refresh #menu-commands (/commands)
//     #menu-setup #menu-signals[aria-pressed] #menu-idle #menu-device #menu-reference
//     #storage-estimate #storage-persist
//   #confirm (a yes/no question: #confirm-title #confirm-text #confirm-yes #confirm-no)
//   #scan-input (the keyboard wedge: each scan ends with Enter) #scan-count #scan-failed #scan-refused
//   #alert (blocking) #alert-title #alert-text #alert-ack
//   body[data-ready="true"] once started; body[data-screen] the screen shown
//
// Messages to the worker ({type, …} → {ok: true, …} | {ok: false, error: {code, message}}):
//   setup {site_url, device_token, device_id, done_retention_days?}   device {}
//   open_session {operator_id, mode, context?} → {session_id, key, client_seq, id}
//   capture {session_id, command?: "scan"|"undo", body, occurred_at?} → {key, client_seq, id, occurred_at, body}
//                                       (occurred_at: the input event's instant, Unix ms)
//   capture_many {session_id, command?, bodies, occurred_at?: [ms…]} → {items: [...]}
//   close_session {session_id}
//   list {after?, limit?} → {items: [{id, key, session_id, client_seq, command, body, state,
//                                     reason, why, occurred_at, acknowledged, …}], next_after}
//   counts {} → {queued, sending, done, rejected, blocked, voided, oldest_queued_at, oldest_queued_age_ms}
//   retry_now {}   wake {}   discard {id}   acknowledge {id}   storage {}
//   reference_status {} → {cursor, complete, loading, refreshed_at, age_ms, units, bins, grns, counts,
//                          device: {device_id, profile, modes, encode, commissioned} | null,
//                          operators: {badge: {badge, name}} | null}
//   reference_refresh {} (error OFFLINE when the site does not answer)
//   find_unit {code} → {unit | null, bin | null, refreshed_at, age_ms}
//   reference_get {kind: "unit"|"bin"|"grn"|"count", id} → {row | null, refreshed_at, age_ms}
//   reference_list {kind: "bins"|"grns"|"counts"} → {rows}
//   refresh_unit {epc} → {unit}
// window.stockhop.ask(message) is the same call, for scripts and tests.
//
// The page reads the site itself only where a mode needs it live: the
// manifest dispatch verify checks against (GET /v1/manifests/{id}) and a
// count's figures (GET /v1/counts/{id}), with the device token kept from
// setup in localStorage; /healthz for the status bar's online light; and, at
// setup, /healthz and one page of /v1/reference to check the site and the
// token before they are saved.
//
// What the ledger answers reaches each scan's row (reasons.js words every
// reason and blocking code); signal.js sounds and vibrates kept, refused
// and the blocking alert.

import { explain } from './reasons.js';
import { setSignalsOn, signal, signalsOn, unlockAudio } from './signal.js';

import * as release from './release.js';
import * as labels from './labels.js';

const $ = (id) => document.getElementById(id);

/** The open mode: {mode, operator_id, session_id?, context, bin?, sku?, encode, …}. */
const SESSION_KEY = 'stockhop.session';
const OPERATOR_KEY = 'stockhop.operator';
/** The device token, kept from setup for the reads the page makes itself. */
const TOKEN_KEY = 'stockhop.device_token';
/** A count's expected total as the site last said it, per count id. */
const COUNT_EXPECTED_KEY = 'stockhop.count_expected';

/** The command barcodes (`/commands` prints them), by what the scanner types. */
const COMMANDS = {
  'STOCKHOP:CLOSE': 'close',
  'STOCKHOP:UNDO': 'undo',
  'STOCKHOP:MODE': 'mode',
  'STOCKHOP:CONFIRM': 'confirm',
};

const MODES = {
  put_away: { title: 'Put-away', blurb: 'Scan a bin label, then its units.' },
  receive: { title: 'Receive', blurb: 'Count tags against a GRN.' },
  cycle_count: { title: 'Cycle count', blurb: 'Count a zone bin by bin.' },
  dispatch_verify: { title: 'Dispatch verify', blurb: 'Check tags against the live manifest.' },
  find_unit: { title: 'Find a unit', blurb: 'Where is it? From this device, offline too.' },
};
const MODE_ORDER = ['put_away', 'receive', 'cycle_count', 'dispatch_verify', 'find_unit'];
const DISPATCH_OFFLINE = 'Offline: dispatch verify reads the live manifest and cannot open until the site answers. Reconnect and scan the manifest again.';

/** The ledger's undo window, from the original's capture time. */
const UNDO_WINDOW_MS = 120 * 1000;
/** A tag's EPC as the scanners type it: 96 bits in hex. */
const EPC_PATTERN = /^[0-9A-Fa-f]{24}$/;
/** Scans the mode screen lists: the last few, a glance's worth. */
const RESULTS_SHOWN = 4;
/** Rows one queue page lists. */
const QUEUE_PAGE_ROWS = 50;
/** How often the status bar and an open queue screen are refreshed. */
const REFRESH_EVERY_MS = 2000;
/** How soon after a capture the bar is read again: once for a whole wedge burst. */
const BAR_AFTER_ACTION_MS = 250;
/** How often the page asks the site whether it answers (the online light). */
const HEALTH_EVERY_MS = 5000;
/** How long that question, and a live read, may take before the answer is "offline". */
const SITE_TIMEOUT_MS = 4000;
/** How long start-up waits for the reference cache before showing what it has. */
const REFERENCE_WAIT_MS = 15000;
/** Oldest waiting item the bar shows in plain colours; older is flagged. */
const OLDEST_WARN_MS = 60 * 1000;
// The browser stops an idle service worker, and its timers with it: while
// the page is open it wakes the worker this often, so the heartbeat goes
// out when due (the worker decides; the shortest profile period is 60 s).
const WAKE_EVERY_MS = 60 * 1000;
const STORAGE_WARN_RATIO = 0.8;
/**
 * The modes whose scans the ledger undoes (rule 10): every mode that
 * changes something. Mirrors the core's `stockhop::undo::mode_undoable`; find a
 * unit sends nothing to undo.
 */
const UNDOABLE_MODES = ['put_away', 'receive', 'cycle_count', 'dispatch_verify'];
/**
 * A refusal raises the banner that stays until seen (not only its row and
 * tone) when it came after an outage: its scan was kept while the page saw
 * the site offline or before it last did, or its answer landed this long
 * after its capture (a backlog), when the picker has moved on.
 */
const LATE_ANSWER_MS = 10 * 1000;
/** How often the page looks for answers while scans wait for the site (a refusal's tone within about this). */
const OUTCOME_POLL_MS = 400;
/** How long a scan of something the cache lacks waits for the site's changes before it is refused. */
const LOOKUP_WAIT_MS = 3000;
/** The refusals already signalled (by item id), so a reload does not sound them again. */
const SIGNALLED_KEY = 'stockhop.signalled';
/** How many of those ids are kept: far more than an operator leaves undecided. */
const SIGNALLED_MAX = 2000;
/** Sign-out after this many idle minutes (the operator's shift ends), per device. */
const IDLE_KEY = 'stockhop.idle_minutes';
const IDLE_DEFAULT_MIN = 30;
const IDLE_CHOICES_MIN = [5, 15, 30, 60, 120, 240];

let registration = null;

async function worker() {
  if (!registration) registration = await navigator.serviceWorker.ready;
  return navigator.serviceWorker.controller || registration.active;
}

async function ask(message) {
  await release.passage();
  const target = await worker();
  return release.track(new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = (event) => resolve(event.data);
    target.postMessage({ ...message, build: release.build }, [channel.port2]);
  }));
}

function show(id, text, kind) {
  const el = $(id);
  el.textContent = text;
  el.className = el.className.split(' ').filter((c) => c && c !== 'error' && c !== 'warn').concat(kind ? [kind] : []).join(' ');
}

function failure(reply) {
  return reply && reply.error ? `${reply.error.code}: ${reply.error.message}` : 'no reply';
}

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value == null || value === false) continue;
    if (name === 'text') node.textContent = value;
    else if (name === 'dataset') Object.assign(node.dataset, value);
    else node.setAttribute(name, value === true ? '' : value);
  }
  for (const child of children) if (child != null) node.append(child);
  return node;
}

function ago(ms) {
  if (ms == null) return '–';
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.round(s / 60)} min`;
  if (s < 86400) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86400)} d`;
}

function loadJson(key, fallback) {
  try {
    return JSON.parse(localStorage.getItem(key)) ?? fallback;
  } catch {
    return fallback;
  }
}

function withTimeout(promise, ms) {
  return Promise.race([promise, new Promise((resolve) => setTimeout(() => resolve(null), ms))]);
}

// ---- state -------------------------------------------------------------

let siteUrl = null;
let deviceId = null;
/** reference_status's last answer. */
let reference = null;
/** The site's bins by label, from the reference cache. */
let bins = new Map();
let online = null;
let screen = null;
let returnTo = 'picker';
let session = loadJson(SESSION_KEY, null);
let operator = localStorage.getItem(OPERATOR_KEY) || '';
/** The picker's next scan is an operator badge. */
let awaitingOperator = !operator;
/** This page's scans, newest first: {id, code, text, kind, key?, occurred_at, session_id}. */
let results = [];
let resultSeq = 0;
/** dispatch verify: the live manifest while the mode is open, and when it was read. */
let manifest = null;
let manifestAt = null;
/** cycle count: the count's expected total as the site last said it, and whether that was just now. */
let countView = null;
/** receive: the GRN row from the cache, and when that copy last reached the site's end. */
let grnRow = null;
let grnAt = null;
/** The queue's items of the open session (for receive's queued-since figures). */
let sessionItems = [];
/** The blocking alert is shown: scans wait for its acknowledgement. */
let alertOpen = false;
let captured = 0;
let failed = 0;
let refused = 0;

function saveSession() {
  if (session) localStorage.setItem(SESSION_KEY, JSON.stringify(session));
  else localStorage.removeItem(SESSION_KEY);
}

// ---- screens -------------------------------------------------------------

function go(name) {
  if (name !== 'queue' && name !== 'menu') returnTo = name;
  screen = name;
  document.body.dataset.screen = name;
  for (const s of ['setup', 'picker', 'mode', 'queue', 'menu']) $(`screen-${s}`).hidden = s !== name;
  $('menu-button').setAttribute('aria-expanded', String(name === 'menu'));
  if (name === 'queue') refreshQueue();
  if (name === 'menu') renderMenu();
  if (name === 'picker') renderPicker();
  if (name === 'mode') renderMode();
  focusScan();
}

function back() {
  go(session ? 'mode' : returnTo === 'setup' && deviceId ? 'picker' : returnTo);
}

/** The scan field keeps the focus everywhere but setup (which needs typing). */
function focusScan() {
  if (screen === 'setup') return;
  const input = $('scan-input');
  if (document.activeElement !== input) input.focus({ preventScroll: true });
}

// ---- setup ---------------------------------------------------------------

/**
 * Checks a setup before it is saved: that the site answers at that URL
 * (over a certificate this browser trusts) and takes the token. Resolves
 * {ok: true} or {ok: false, failure, message}: `failure` is `url`,
 * `mixed`, `unreachable`, `certificate`, `token`, `device` or `site`.
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
    const trust = `${base.protocol}//${base.hostname}/trust.html`;
    return reach === 'certificate'
      ? { ok: false, failure: 'certificate', message: `This handheld does not trust the certificate of ${base.origin}. Install the site's CA once (open ${trust} on the site's plain port, or ask IT to push it), then Save again.` }
      : { ok: false, failure: 'unreachable', message: `The site does not answer at ${base.origin}: check the address and port, that the site is running, and that this handheld is on its network.` };
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
    return { ok: false, failure: 'token', message: `The site refused the device token (401): it is mistyped, or the device was revoked. Print the link again on the site (stockhop-site device link ${device_id || 'ID'}) and scan it.` };
  }
  if (!res.ok) return { ok: false, failure: 'site', message: `The site answered ${res.status} to the token check.` };
  const body = await res.json().catch(() => null);
  const named = body && body.device && body.device.device_id;
  if (named && named !== device_id) {
    return { ok: false, failure: 'device', message: `That token is device ${named}'s, not ${device_id}'s: use the id the site printed with it.` };
  }
  return { ok: true };
}

/**
 * Whether the site answers at `base`: 'ok', 'certificate' (an https site
 * the browser reached but does not trust) or 'unreachable'.
 */
async function siteReach(base) {
  const answer = await fetch(new URL('/healthz', base), { mode: 'no-cors', cache: 'no-store', signal: AbortSignal.timeout(SITE_TIMEOUT_MS) })
    .then(() => 'ok', (err) => (err && err.name === 'TimeoutError' ? 'timeout' : 'failed'));
  if (answer === 'ok') return 'ok';
  // A timeout is silence: nothing to tell about a certificate.
  if (answer === 'timeout' || base.protocol !== 'https:') return 'unreachable';
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
    if (screen !== 'setup') go('setup');
    return { ok: false, error: { code: check.failure, message: check.message } };
  }
  const before = await ask({ type: 'device' });
  if (!(await confirmSwitch(site_url, device_id))) {
    await readDevice();
    show('setup-status', `Not switched: this handheld stays ${deviceId} → ${siteUrl}.`, 'warn');
    return { ok: false, error: { code: 'KEPT', message: 'not switched' } };
  }
  const reply = await ask({ type: 'setup', site_url, device_token, device_id });
  if (!reply.ok) {
    show('setup-status', failure(reply), 'error');
    return reply;
  }
  siteUrl = site_url;
  deviceId = device_id;
  localStorage.setItem(TOKEN_KEY, device_token);
  if (before.ok && before.configured && (before.site_url !== site_url || before.device_id !== device_id) && session) {
    // The open session was the other device's: its items stay queued, and
    // this one starts from the picker.
    session = null;
    saveSession();
    results = [];
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
  if (screen === 'setup' || screen == null) go(session ? 'mode' : 'picker');
  return reply;
}

/** Asks for persistent storage once set up, and says what to do when the browser refuses. */
async function persistAtSetup() {
  if (!navigator.storage || !navigator.storage.persist) return;
  const granted = await navigator.storage.persist();
  show('storage-persist', granted ? 'Persistent storage granted.' : PERSIST_ADVICE, granted ? '' : 'warn');
  $('persist-advice').hidden = granted;
  $('persist-advice').textContent = granted ? '' : PERSIST_ADVICE;
}

async function setupFromFragment() {
  if (!location.hash.includes('token=')) return;
  const params = new URLSearchParams(location.hash.slice(1));
  const site = params.get('site') || location.origin;
  const token = params.get('token');
  const device = params.get('device');
  history.replaceState(null, '', location.pathname + location.search);
  if (token && device) {
    $('site-url').value = site;
    $('device-id').value = device;
    await saveSetup(site, token, device, { fromLink: true });
  }
}

async function readDevice() {
  const reply = await ask({ type: 'device' });
  if (reply.ok && reply.configured) {
    siteUrl = reply.site_url;
    deviceId = reply.device_id;
    $('site-url').value = reply.site_url;
    $('device-id').value = reply.device_id;
    show('setup-status', `Set up as ${reply.device_id} → ${reply.site_url}`);
  } else if (reply.ok) {
    show('setup-status', 'Not set up yet: scans are kept on this device until it is.', 'warn');
  }
}

// ---- the reference cache and the site ----------------------------------

/** Reads the cache's status (pulling first with `refresh`) and the bins. */
async function loadReference(refresh) {
  if (refresh) await withTimeout(ask({ type: 'reference_refresh' }), REFERENCE_WAIT_MS);
  const status = await ask({ type: 'reference_status' });
  if (status.ok) await takeReference(status);
}

/**
 * Takes a `reference_status` answer: when the cache moved on (its cursor)
 * or the site's word on this device changed, the rows the screens hold
 * (bins, the open GRN) are read again. The comparison is with what the
 * page last read, so the one place that keeps `reference` is here.
 */
async function takeReference(status) {
  const changed = !reference || reference.cursor !== status.cursor
    || JSON.stringify(reference.device) !== JSON.stringify(status.device);
  reference = status;
  takeOperators(status);
  if (changed) {
    const list = await ask({ type: 'reference_list', kind: 'bins' });
    if (list.ok) bins = new Map(list.rows.map((row) => [row.bin, row]));
    if (session && session.mode === 'receive' && session.context.grn) await loadGrn();
    if (screen === 'picker') renderPicker();
    if (screen === 'mode') renderMode();
  }
  renderTraining();
  renderBar();
}

/**
 * Something scanned is not in the cache: when the site answers, its
 * changes are read (bounded by LOOKUP_WAIT_MS) before the scan is refused,
 * so a bin or GRN added mid-shift is known at once. Resolves true when the
 * cache moved on.
 */
async function askSiteFirst() {
  if (online === false || !siteUrl) return false;
  const before = reference && reference.cursor;
  const reply = await withTimeout(ask({ type: 'reference_refresh' }), LOOKUP_WAIT_MS);
  if (!reply || !reply.ok) return false;
  await takeReference(reply);
  return reply.cursor !== before;
}

async function checkOnline() {
  if (!siteUrl) return;
  let ok = false;
  try {
    await fetch(new URL('/healthz', siteUrl), { mode: 'no-cors', cache: 'no-store', signal: AbortSignal.timeout(SITE_TIMEOUT_MS) });
    ok = navigator.onLine !== false;
  } catch {
    ok = false;
  }
  if (!ok) offlineSeenAt = Date.now();
  if (ok !== online) {
    online = ok;
    renderBar();
    if (screen === 'mode') renderMode();
    if (ok) {
      ask({ type: 'wake' });
      loadReference(false);
      watchOutcomes();
    }
  }
}

/** A live read of the site with the device token: the JSON, or {offline} / {status}. */
async function siteGet(path) {
  const token = localStorage.getItem(TOKEN_KEY);
  if (!siteUrl || !token) return { offline: true };
  try {
    const res = await fetch(new URL(path, siteUrl), {
      headers: { authorization: `Bearer ${token}` },
      cache: 'no-store',
      signal: AbortSignal.timeout(SITE_TIMEOUT_MS),
    });
    if (!res.ok) return { status: res.status };
    return { body: await res.json() };
  } catch {
    return { offline: true };
  }
}

function deviceModes() {
  return reference && reference.device ? reference.device.modes : null;
}

function canEncode() {
  return !!(reference && reference.device && reference.device.encode);
}

// ---- the status bar ----------------------------------------------------

let lastCounts = null;

function renderBar() {
  const net = $('net-status');
  net.dataset.net = online == null ? 'unknown' : online ? 'online' : 'offline';
  net.textContent = online == null ? (siteUrl ? '…' : 'No site') : online ? 'Online' : 'Offline';
  if (lastCounts) {
    $('bar-queue').textContent = String(lastCounts.queued + lastCounts.sending);
    const age = lastCounts.oldest_queued_age_ms;
    const oldest = $('bar-oldest');
    oldest.textContent = age == null ? '' : `oldest ${ago(age)}`;
    oldest.dataset.old = String(age != null && age > OLDEST_WARN_MS);
    const attention = lastCounts.blocked + lastCounts.rejected_unacknowledged;
    const flag = $('bar-attention');
    flag.hidden = !attention;
    flag.textContent = `${attention} to decide`;
  }
  const loading = reference && !reference.complete && reference.loading;
  $('bar-cache').textContent = loading ? `cache ${reference.units.toLocaleString('en')} units…`
    : `cache ${reference && reference.age_ms != null ? ago(reference.age_ms) : '–'}`;
}

/**
 * How far a first load of the reference cache got, from a
 * `reference_status` answer (`''` once it has been complete): a load of a
 * large site takes a while, and a load that failed part-way resumes from
 * where this says.
 */
function referenceProgress(status) {
  if (!status || status.complete || !(status.loading || status.units)) return '';
  const units = status.units.toLocaleString('en');
  return status.loading ? `Loading reference data: ${units} units so far`
    : `Reference data: ${units} units so far; the load resumes from there`;
}

async function refreshBar() {
  // While a new build takes over, the bar waits: the old worker's busy
  // reads would put its replacement's activation off.
  if (release.updating()) return;
  const counts = await ask({ type: 'counts' });
  if (counts.ok) {
    lastCounts = { ...counts, rejected_unacknowledged: lastCounts ? lastCounts.rejected_unacknowledged : 0 };
  }
  const status = await ask({ type: 'reference_status' });
  if (status.ok) await takeReference(status);
  await refreshSessionItems();
  renderBar();
}

let barQueued = null;

/** The bar again soon after an action (a burst of scans asks once). */
function scheduleBar() {
  if (barQueued) return;
  barQueued = setTimeout(() => {
    barQueued = null;
    refreshBar();
  }, BAR_AFTER_ACTION_MS);
}

/** The open session's items (for receive's queued figures) and what waits for a decision. */
async function refreshSessionItems() {
  const items = [];
  const every = [];
  let after;
  let open = 0;
  // The device's whole queue is small in normal work (done items are
  // pruned); walk it in pages.
  for (;;) {
    const reply = await ask({ type: 'list', after, limit: 500 });
    if (!reply.ok) return;
    for (const item of reply.items) {
      every.push(item);
      if (item.state === 'rejected' && !item.acknowledged) open += 1;
      if (session && item.session_id === session.session_id) items.push(item);
      if (item.state === 'rejected' && !item.acknowledged && session && session.dock_acked
          && session.dock_acked.includes(item.key)) {
        // The operator acknowledged this unmatched tag at the dock already.
        ask({ type: 'acknowledge', id: item.id });
      }
    }
    if (reply.next_after == null || reply.items.length === 0) break;
    after = reply.next_after;
  }
  if (lastCounts) lastCounts.rejected_unacknowledged = open;
  sessionItems = items;
  queueAll = every;
  takeOutcomes(every);
  if (screen === 'mode' && session && ['receive', 'cycle_count'].includes(session.mode)) renderDetail();
  if (screen === 'queue') renderQueue();
}

// ---- outcomes: what the ledger decided, at the glass ----------------------

/** Every item of the queue as last walked (the queue screen pages through it). */
let queueAll = [];
/** Refusals already signalled, by item id (kept across reloads). */
const signalled = new Set(loadJson(SIGNALLED_KEY, []));
/** Late refusals the operator has not yet seen: [{id, reason, at}]. */
let lateRefusals = [];
/** The last instant the page saw the site offline: a scan kept before it waited out an outage. */
let offlineSeenAt = null;

function rememberSignalled(id) {
  signalled.add(id);
  const ids = [...signalled];
  localStorage.setItem(SIGNALLED_KEY, JSON.stringify(ids.slice(-SIGNALLED_MAX)));
}

/**
 * Reads the queue's answers into the scan rows (kept → applied, or
 * refused with the reason), and signals each new refusal once: its tone
 * and vibration, and when it came late (after an outage) the banner.
 */
function takeOutcomes(items) {
  const byKey = new Map(items.map((item) => [item.key, item]));
  let rowsChanged = false;
  for (const entry of results) {
    const item = entry.key && byKey.get(entry.key);
    if (!item || entry.state === item.state) continue;
    entry.state = item.state;
    entry.reason = item.reason || null;
    entry.hops = (item.hop_ids || []).length;
    if (!entry.undone) entry.kind = kindOf(item);
    rowsChanged = true;
  }
  const fresh = [];
  for (const item of items) {
    if (!['rejected', 'blocked'].includes(item.state) || item.acknowledged || signalled.has(item.id)) continue;
    rememberSignalled(item.id);
    // A refusal the dock's alert already announced is not signalled twice.
    const entry = results.find((r) => r.key === item.key);
    if (entry && entry.announced) continue;
    fresh.push(item);
  }
  if (fresh.length) {
    const late = fresh.filter((item) => {
      const entry = results.find((r) => r.key === item.key);
      return (entry && entry.offline) || (item.updated_at ?? Date.now()) - item.occurred_at > LATE_ANSWER_MS
        || (offlineSeenAt != null && item.occurred_at <= offlineSeenAt);
    });
    signal(fresh.some((item) => item.state === 'blocked') ? 'alert' : 'refused');
    if (late.length) {
      lateRefusals.push(...late.map((item) => ({ id: item.id, reason: item.reason, at: item.updated_at })));
      renderLateBanner();
    }
    const newest = fresh[fresh.length - 1];
    const why = explain(newest.reason);
    if (why && screen === 'mode') show('scan-status', `Refused #${newest.client_seq}: ${why.words}`, 'error');
  }
  if (rowsChanged) {
    scheduleResults();
    scheduleCountView();
  }
}

/** A row's kind from its item's state. */
function kindOf(item) {
  switch (item.state) {
    case 'done':
      return training() ? 'training' : 'applied';
    case 'rejected':
      return 'refused';
    case 'blocked':
      return 'blocked';
    case 'voided':
      return 'voided';
    default:
      return 'kept';
  }
}

/** Whether the site says this device is not commissioned: its scans are practice. */
function training() {
  return !!(reference && reference.device && reference.device.commissioned === false);
}

function renderTraining() {
  const on = training();
  $('training').hidden = !on;
  document.body.dataset.training = String(on);
}

function renderLateBanner() {
  const banner = $('late-banner');
  banner.hidden = lateRefusals.length === 0;
  if (banner.hidden) return;
  const first = explain(lateRefusals[0].reason);
  const n = lateRefusals.length;
  $('late-text').replaceChildren(
    el('strong', { text: `${n} scan${n === 1 ? '' : 's'} refused by the site after ${n === 1 ? 'it was' : 'they were'} kept here.` }), ' ',
    el('span', { text: first ? `${first.words} ${first.next}` : '' }), ' ',
    first ? el('small', { class: 'code', text: first.code }) : '');
}

/** The operator has seen the late refusals: the banner goes; they still wait on the queue screen. */
function lateSeen() {
  lateRefusals = [];
  renderLateBanner();
  focusScan();
}

let outcomeTimer = null;
let lastOutcomeCounts = '';

/**
 * While scans wait for the site, the queue's counts are read every
 * OUTCOME_POLL_MS and the queue walked when they move, so an answer
 * reaches its row (and a refusal its tone) within about that.
 */
function watchOutcomes() {
  if (outcomeTimer) return;
  outcomeTimer = setTimeout(async () => {
    outcomeTimer = null;
    if (release.updating()) {
      watchOutcomes();
      return;
    }
    const counts = await ask({ type: 'counts' });
    if (!counts.ok) return;
    const key = ['queued', 'sending', 'done', 'rejected', 'blocked', 'voided'].map((k) => counts[k]).join('/');
    if (key !== lastOutcomeCounts) {
      lastOutcomeCounts = key;
      lastCounts = { ...counts, rejected_unacknowledged: lastCounts ? lastCounts.rejected_unacknowledged : 0 };
      await refreshSessionItems();
      renderBar();
    }
    if (counts.queued + counts.sending > 0 || results.some((r) => r.kind === 'kept' || r.kind === 'pending')) watchOutcomes();
  }, OUTCOME_POLL_MS);
}

// ---- operators ------------------------------------------------------------

/** The operators the site lists, {badge: name}, from the reference cache; empty while it has none (then any badge is taken). */
let operators = {};
/** The last scan or tap, for the idle sign-out. */
let lastActivity = Number(localStorage.getItem('stockhop.last_activity')) || Date.now();

function operatorName(badge) {
  return Object.prototype.hasOwnProperty.call(operators, badge) ? operators[badge] : null;
}

/** The operator as the screens name them: "Name (badge)", or the badge while the site sends no name. */
function operatorLabel(badge) {
  const name = operatorName(badge);
  return name ? `${name} (${badge})` : badge;
}

/** Takes the operators the cache holds (a `reference_status` answer's). */
function takeOperators(status) {
  operators = Object.fromEntries(Object.values(status.operators || {}).map((o) => [o.badge, o.name]));
}

/** What a scanned code is when it cannot be a badge (a tag, a bin, a unit's serial, a GRN, a count), else null. */
async function notABadge(code) {
  if (EPC_PATTERN.test(code)) return 'a tag';
  if (bins.has(code)) return 'a bin label';
  const unit = await findCached(code);
  if (unit.ok && unit.unit) return `the serial of unit ${unit.unit.epc}`;
  for (const [kind, words] of [['grn', 'a GRN'], ['count', 'a count session']]) {
    const reply = await ask({ type: 'reference_get', kind, id: code });
    if (reply.ok && reply.row) return words;
  }
  return null;
}

/** The picker's first scan signs the operator in, when it is a badge. */
async function signIn(code) {
  // A badge added since the cache last read the site is asked about first.
  if (!operatorName(code) && Object.keys(operators).length) await askSiteFirst();
  const known = Object.keys(operators).length > 0;
  let wrong = null;
  const kind = operatorName(code) ? null : await notABadge(code);
  if (kind) wrong = `${code} is ${kind}, not an operator badge`;
  else if (known && !operatorName(code)) wrong = `${code} is not an operator badge the site knows`;
  if (wrong) {
    refused += 1;
    $('scan-refused').textContent = String(refused);
    show('picker-prompt', 'Scan your operator badge', 'error');
    show('picker-status', `${wrong}: not signed in. Scan your own badge.`, 'error');
    signal('refused');
    return;
  }
  operator = code;
  awaitingOperator = false;
  localStorage.setItem(OPERATOR_KEY, operator);
  touch();
  renderPicker();
  show('picker-status', `Signed in: ${operatorLabel(code)}`);
  signal('kept');
}

/** Signs the operator out (closing an open session first): the next scan is a badge again. */
async function signOut(why) {
  if (session && !(await closeSession())) return;
  operator = '';
  awaitingOperator = true;
  localStorage.removeItem(OPERATOR_KEY);
  go('picker');
  show('picker-status', why);
}

function idleMinutes() {
  const minutes = Number(localStorage.getItem(IDLE_KEY));
  return minutes > 0 ? minutes : IDLE_DEFAULT_MIN;
}

/** A scan or a tap: the operator is still here. */
function touch() {
  lastActivity = Date.now();
  localStorage.setItem('stockhop.last_activity', String(lastActivity));
}

/** Signs out an operator idle for longer than the device's setting (the shift is over). */
function checkIdle() {
  // An open count is left for its operator: closing it closes the zone's count, which a person confirms.
  if (!operator || alertOpen || confirmAnswer || (session && session.mode === 'cycle_count' && session.session_id)) return;
  const idle = Date.now() - lastActivity;
  if (idle > idleMinutes() * 60 * 1000) signOut(`Signed out after ${ago(idle)} without a scan. Scan your badge to go on.`);
}

// ---- the picker ---------------------------------------------------------

function renderPicker() {
  $('operator').textContent = operator || '–';
  const name = operator && operatorName(operator);
  $('operator-name').textContent = name || '';
  $('operator-name').hidden = !name;
  $('operator-signout').hidden = !operator;
  const modes = deviceModes();
  const box = $('picker-modes');
  box.replaceChildren();
  if (awaitingOperator) {
    show('picker-prompt', 'Scan your operator badge');
  } else {
    show('picker-prompt', modes && modes.length ? 'Tap a mode' : '');
  }
  if (!modes) {
    show('picker-status', 'This device does not know its profile yet: it reads it from the site once online.', 'warn');
    return;
  }
  if (modes.length === 0) {
    show('picker-status', `Profile ${reference.device.profile} runs no handheld mode.`, 'warn');
    return;
  }
  show('picker-status', `${reference.device.device_id} · ${reference.device.profile}`);
  for (const mode of MODE_ORDER.filter((m) => modes.includes(m))) {
    const info = MODES[mode];
    box.append(el('button', { type: 'button', id: `pick-${mode}`, 'data-mode': mode, disabled: awaitingOperator },
      el('span', { text: info.title }), el('small', { text: info.blurb })));
  }
}

async function pickMode(mode) {
  if (awaitingOperator || !operator) {
    show('picker-prompt', 'Scan your operator badge first', 'error');
    return;
  }
  session = { mode, operator_id: operator, session_id: null, context: {}, encode: false, skus: {}, seen: [], dock_acked: [] };
  saveSession();
  // A notice belongs to the mode that raised it (dispatch verify's offline one).
  notice('');
  results = [];
  manifest = null;
  countView = null;
  grnRow = null;
  go('mode');
  // Modes that need nothing but the device open their session at once.
  if (mode === 'put_away') await openSession({});
}

async function openSession(context) {
  const reply = await ask({ type: 'open_session', operator_id: session.operator_id, mode: session.mode, context });
  if (!reply.ok) {
    notice(`Could not open the session: ${failure(reply)}`);
    return false;
  }
  session.session_id = reply.session_id;
  session.context = context;
  saveSession();
  renderMode();
  return true;
}

/** The open question (`ask`'s yes/no dialog): its resolver while shown. */
let confirmAnswer = null;

/** Asks a yes/no question over the screen; resolves true for yes (a tap, or the CONFIRM barcode). */
function confirmBox(title, text, yes, no) {
  $('confirm-title').textContent = title;
  $('confirm-text').textContent = text;
  $('confirm-yes').textContent = yes;
  $('confirm-no').textContent = no;
  $('confirm').hidden = false;
  signal('alert');
  return new Promise((resolve) => {
    confirmAnswer = (answer) => {
      confirmAnswer = null;
      $('confirm').hidden = true;
      resolve(answer);
      focusScan();
    };
  });
}

/**
 * Closing a count session closes the count for the whole zone (the site
 * computes its variance), so it asks first, with the figures.
 */
async function confirmCountClose() {
  if (!session || session.mode !== 'cycle_count' || !session.session_id) return true;
  await loadCountView();
  const f = countFigures();
  const figures = f.missing
    ? ` Missing ${f.missing.length}, unexpected ${f.unexpected.length} (the site's figures ${ago(Date.now() - f.view.at)} old, and this device's scans since).`
    : '';
  return confirmBox(`Close count ${session.context.count_id}?`,
    `This closes the count for all of zone ${session.zone || '?'}; the site then works out the variance.${figures}`,
    'Close the count', 'Keep counting');
}

async function closeSession() {
  if (!(await confirmCountClose())) return false;
  if (session && session.session_id) {
    const reply = await ask({ type: 'close_session', session_id: session.session_id });
    if (!reply.ok && reply.error.code !== 'SESSION_CLOSED') {
      refuse('close', failure(reply));
      return false;
    }
  }
  session = null;
  saveSession();
  manifest = null;
  countView = null;
  grnRow = null;
  results = [];
  closeAlert();
  go('picker');
  scheduleBar();
  return true;
}

// ---- a mode's screen -------------------------------------------------------

function notice(text, kind) {
  const box = $('mode-notice');
  box.hidden = !text;
  box.textContent = text || '';
  box.className = 'notice' + (kind ? ` ${kind}` : '');
}

/** What the open mode still needs: [{need, label, met}]. */
function needs() {
  if (!session) return [];
  const c = session.context;
  switch (session.mode) {
    case 'put_away':
      return [{ need: 'bin', label: session.bin ? `bin ${session.bin}` : 'bin label', met: !!session.bin }];
    case 'receive':
      return [{ need: 'grn', label: c.grn ? `GRN ${c.grn}` : 'GRN', met: !!c.grn }];
    case 'cycle_count':
      return [
        { need: 'count', label: c.count_id ? `count ${c.count_id}` : 'count session', met: !!c.count_id },
        { need: 'bin', label: session.bin ? `bin ${session.bin}` : 'bin label', met: !!session.bin },
      ];
    case 'dispatch_verify':
      return [{ need: 'manifest', label: c.manifest ? `manifest ${c.manifest}` : 'manifest (live)', met: !!(c.manifest && manifest) }];
    default:
      return [];
  }
}

function prompt() {
  const c = session.context;
  switch (session.mode) {
    case 'put_away':
      return session.bin ? [`Scan units for bin ${session.bin}`, 'or another bin label'] : ['Scan a bin label', 'unit scans wait for it'];
    case 'receive':
      if (!c.grn) return ['Scan or tap a GRN', 'receiving needs a GRN with QC accepted'];
      return [`Scan tags for ${c.grn}`, session.sku ? `new tags are SKU ${session.sku}` : 'a tag the site does not know needs its SKU label first'];
    case 'cycle_count':
      if (!c.count_id) return ['Scan or tap a count session', ''];
      return session.bin ? [`Scan tags in bin ${session.bin}`, 'or the next bin label'] : ['Scan a bin label', `zone ${session.zone || ''}`];
    case 'dispatch_verify':
      if (!c.manifest || !manifest) return ['Scan the manifest', 'read live from the site'];
      return [`Scan tags for ${c.manifest}`, 'a tag not on it stops the dock'];
    case 'find_unit':
      return ['Scan a tag or serial', 'answered from this device'];
    default:
      return ['', ''];
  }
}

function renderMode() {
  if (!session) return;
  const info = MODES[session.mode];
  const view = $('screen-mode');
  view.dataset.mode = session.mode;
  view.dataset.open = String(!!session.session_id || session.mode === 'find_unit');
  $('mode-title').textContent = info.title;
  $('session-status').textContent = session.session_id
    ? `Open: ${operatorLabel(session.operator_id)} · ${session.session_id.slice(0, 8)}`
    : session.mode === 'find_unit' ? `${operatorLabel(session.operator_id)} · read only` : 'Not open yet';
  $('mode-needs').replaceChildren(...needs().map((n) => el('li', { dataset: { need: n.need, met: String(n.met) }, text: n.label })));
  const [big, small] = prompt();
  // A code (a bin, a GRN) is never broken across lines.
  const words = big.split(/(\S*\d\S*)/).map((part, i) => (i % 2 ? el('span', { class: 'code', text: part }) : part));
  $('prompt').replaceChildren(el('span', { class: 'big' }, ...words), small ? el('small', { text: small }) : '');
  const binLine = $('scan-bin');
  binLine.hidden = !['put_away', 'cycle_count'].includes(session.mode);
  if (!binLine.hidden) {
    if (session.bin) show('scan-bin', `Bin ${session.bin}: scan its units`);
    else show('scan-bin', 'Scan a bin label first.', 'warn');
  }
  $('session-close').disabled = !session.session_id;
  // Dispatch verify says at once, not only when a manifest is scanned, that it cannot open offline.
  if (session.mode === 'dispatch_verify' && !manifest) notice(online === false ? DISPATCH_OFFLINE : '');
  renderChoices();
  renderDetail();
  renderResults();
}

async function renderChoices() {
  const box = $('mode-choices');
  const mode = session && session.mode;
  if (mode === 'receive' && !session.context.grn) {
    const list = await ask({ type: 'reference_list', kind: 'grns' });
    const rows = list.ok ? list.rows.filter((g) => g.state !== 'complete') : [];
    box.replaceChildren(...rows.map((g) => el('button', {
      type: 'button', 'data-grn': g.grn, disabled: g.qc !== 'accepted',
    }, el('strong', { text: g.grn }), el('span', { text: g.qc === 'accepted' ? `${g.lines.length} line(s) · ${g.state}` : `QC ${g.qc}` }))));
    if (!rows.length) box.replaceChildren(el('p', { class: 'status warn', text: 'No GRN waiting in this device\'s copy: scan one.' }));
  } else if (mode === 'cycle_count' && !session.context.count_id) {
    const list = await ask({ type: 'reference_list', kind: 'counts' });
    const rows = list.ok ? list.rows.filter((c) => c.state === 'open') : [];
    box.replaceChildren(...rows.map((c) => el('button', { type: 'button', 'data-count': c.count_id },
      el('strong', { text: c.count_id }), el('span', { text: `${c.location} · zone ${c.zone}` }))));
    if (!rows.length) box.replaceChildren(el('p', { class: 'status warn', text: 'No open count in this device\'s copy: scan one.' }));
  } else {
    box.replaceChildren();
  }
}

function renderDetail() {
  const box = $('mode-detail');
  if (!session) return;
  switch (session.mode) {
    case 'receive':
      box.replaceChildren(...receiveDetail());
      break;
    case 'cycle_count':
      box.replaceChildren(...countDetail());
      break;
    case 'dispatch_verify':
      box.replaceChildren(...manifestDetail());
      break;
    case 'find_unit':
      if (!$('find-result')) box.replaceChildren(el('div', { id: 'find-result', class: 'found', 'data-found': 'none' }));
      break;
    default:
      box.replaceChildren();
  }
}

// ---- receive ---------------------------------------------------------------

async function loadGrn() {
  const reply = await ask({ type: 'reference_get', kind: 'grn', id: session.context.grn });
  grnRow = reply.ok ? reply.row : null;
  // The row and the instant its copy last reached the site's end come from
  // one answer: the scans counted "since" are those the row cannot hold.
  grnAt = reply.ok ? reply.refreshed_at : null;
}

/**
 * This device's scans of the open GRN that the cached row cannot count
 * yet (waiting here, or recorded after the copy was read), by SKU: +1 a
 * scan, −1 an undo of one; refused and discarded ones count nothing.
 */
function queuedSince() {
  const by = {};
  const byKey = new Map(sessionItems.map((item) => [item.key, item]));
  const notInRow = (item) => item.state === 'queued' || item.state === 'sending'
    || (item.state === 'done' && (grnAt == null || item.recorded_at == null || item.recorded_at > grnAt));
  const skuOf = (item) => item && item.command === 'scan' && item.body && item.body.grn === session.context.grn
    && (item.body.sku || session.skus[item.key]);
  for (const item of sessionItems) {
    if (!notInRow(item)) continue;
    const undone = item.command === 'undo' && item.body ? byKey.get(item.body.target_key) : null;
    const sku = undone ? skuOf(undone) : skuOf(item);
    if (sku) by[sku] = (by[sku] || 0) + (undone ? -1 : 1);
  }
  return by;
}

function receiveDetail() {
  const parts = [];
  if (canEncode()) {
    parts.push(el('div', { class: 'row' }, el('button', {
      type: 'button', id: 'encode-toggle', class: 'toggle', 'aria-pressed': String(!!session.encode),
    }, session.encode ? 'Encode tags: on' : 'Encode tags: off')));
    if (session.encode) parts.push(labels.stationLine(el));
  }
  if (!session.context.grn) return parts;
  parts.push(el('p', { id: 'receive-sku', class: 'status', text: session.sku ? `SKU ${session.sku}` : 'No SKU label scanned' }));
  if (!grnRow) {
    parts.push(el('p', { class: 'status warn', text: 'This GRN is not in the device\'s copy yet.' }));
    return parts;
  }
  const queued = queuedSince();
  const rows = grnRow.lines.map((line) => {
    const mine = queued[line.sku] || 0;
    return el('tr', { dataset: { sku: line.sku, full: String(line.received + mine >= line.expected) } },
      el('td', { text: line.sku }), el('td', { class: 'num', text: String(line.expected) }),
      el('td', { class: 'num', text: String(line.received) }), el('td', { class: 'num', text: mine > 0 ? `+${mine}` : mine < 0 ? `−${-mine}` : '0' }));
  });
  parts.push(el('table', { id: 'grn-lines' },
    el('thead', {}, el('tr', {}, el('th', { text: 'SKU' }), el('th', { class: 'num', text: 'Expected' }),
      el('th', { class: 'num', text: 'Received' }), el('th', { class: 'num', text: 'Queued here' }))),
    el('tbody', {}, ...rows)));
  parts.push(el('p', { id: 'grn-age', class: 'status muted', text: `Received as the site said ${grnAt == null ? '(never read)' : `${ago(Date.now() - grnAt)} ago`}; queued here: this device's scans since.` }));
  return parts;
}

/** A cached row by kind and id; on a miss, read again after the site's changes. */
async function cached(kind, id) {
  const get = () => ask({ type: 'reference_get', kind, id });
  let reply = await get();
  if (reply.ok && !reply.row && await askSiteFirst()) reply = await get();
  return reply.ok ? reply : { row: null };
}

async function chooseGrn(id) {
  const reply = await cached('grn', id);
  const row = reply.row;
  if (!row) return refuse(id, `Not a GRN this device knows: ${id}`, online === false ? 'Offline: scan it again once the site answers.' : 'Check the number with the delivery papers.');
  if (row.qc !== 'accepted') return refuse(id, `GRN ${id}: QC ${row.qc}; receiving needs accepted`, 'Ask QC; receive another GRN meanwhile.');
  grnRow = row;
  grnAt = reply.refreshed_at;
  if (await openSession({ grn: id })) result(id, `GRN ${id}`, 'ok');
}

async function receiveScan(code, at) {
  if (!session.context.grn) return chooseGrn(code);
  if (grnRow && grnRow.lines.some((line) => line.sku === code)) {
    session.sku = code;
    saveSession();
    renderMode();
    return result(code, `SKU ${code}`, 'ok');
  }
  const epc = await epcOf(code);
  if (!epc) return refuse(code, `${code}: not a tag, nor a SKU of ${session.context.grn}`);
  const found = await ask({ type: 'find_unit', code: epc });
  const unit = found.ok ? found.unit : null;
  const body = { mode: 'receive', grn: session.context.grn, epc, encode: !!session.encode };
  let sku = unit && unit.sku;
  if (!sku) {
    if (!session.sku) return refuse(code, `${epc}: the site does not know this tag; scan its SKU label first`);
    sku = session.sku;
    body.sku = sku;
  }
  const reply = await capture(body, at, code);
  if (reply && reply.ok) {
    session.skus[reply.key] = sku;
    saveSession();
    sessionItems.push({ key: reply.key, command: 'scan', body: reply.body, state: 'queued' });
    if (body.encode) labels.follow(reply.key, epc);
    renderDetail();
  }
}

// ---- cycle count -------------------------------------------------------------

async function chooseCount(id) {
  const row = (await cached('count', id)).row;
  if (!row) return refuse(id, `Not a count this device knows: ${id}`, online === false ? 'Offline: scan it again once the site answers.' : 'Check the count sheet.');
  if (row.state !== 'open') return refuse(id, `Count ${id} is ${row.state}: it takes no scans`, 'Tap a count that is open.');
  session.zone = row.zone;
  session.location = row.location;
  // A count of one bin: that bin is the only one it takes.
  if (row.bin) {
    session.count_bin = row.bin;
    session.bin = row.bin;
  }
  if (await openSession({ count_id: id })) {
    result(id, `Count ${id} · zone ${row.zone}`, 'ok');
    loadCountView();
  }
}

/** The count's expected total: live when the site answers, else as it last said. */
async function loadCountView() {
  const id = session.context.count_id;
  const asked = Date.now();
  const live = await siteGet(`/v1/counts/${encodeURIComponent(id)}`);
  const kept = loadJson(COUNT_EXPECTED_KEY, {});
  if (live.body) {
    const { expected, seen, missing, unexpected, state } = live.body;
    // The figures as of the instant the site was asked: scans recorded later are this device's "since".
    kept[id] = { expected, seen, missing, unexpected, state, at: asked };
    localStorage.setItem(COUNT_EXPECTED_KEY, JSON.stringify(kept));
    countView = { ...kept[id], live: true };
  } else if (kept[id]) {
    countView = { seen: 0, ...kept[id], live: false };
  } else {
    countView = null;
  }
  if (session && session.mode === 'cycle_count') renderDetail();
}

/** Reads the count's figures again soon after this device's scans land (a burst asks once). */
let countViewQueued = null;
function scheduleCountView() {
  if (countViewQueued || !session || session.mode !== 'cycle_count' || !session.context.count_id) return;
  countViewQueued = setTimeout(() => {
    countViewQueued = null;
    if (session && session.mode === 'cycle_count' && session.context.count_id) loadCountView();
  }, BAR_AFTER_ACTION_MS);
}

/**
 * The count's figures: the site's (expected, seen, missing, unexpected,
 * as last read, with their age) and this device's tags since, which the
 * site's figures cannot hold yet. A tag since that the site listed missing
 * is seen now; one it did not expect and had not seen is unexpected.
 */
function countFigures() {
  const view = countView || { expected: null, seen: 0, missing: null, unexpected: [] };
  const undone = new Set(sessionItems.filter((i) => i.command === 'undo' && !['rejected', 'blocked', 'voided'].includes(i.state))
    .map((i) => i.body && i.body.target_key));
  const counted = (i) => i.command === 'scan' && i.body && i.body.epc && !undone.has(i.key) && !['rejected', 'blocked', 'voided'].includes(i.state);
  const since = (i) => i.state === 'queued' || i.state === 'sending' || (i.state === 'done' && (view.at == null || i.recorded_at == null || i.recorded_at > view.at));
  const landed = new Set(sessionItems.filter((i) => counted(i) && !since(i)).map((i) => i.body.epc));
  const here = new Set(sessionItems.filter((i) => counted(i) && since(i)).map((i) => i.body.epc));
  // Scans kept on this page that the queue walk has not listed yet.
  for (const epc of session.seen) if (!landed.has(epc) && !sessionItems.some((i) => counted(i) && i.body.epc === epc)) here.add(epc);
  const missingThen = new Set(view.missing || []);
  const unexpectedThen = new Set(view.unexpected || []);
  const newHere = [...here].filter((epc) => !landed.has(epc) && !unexpectedThen.has(epc));
  const found = newHere.filter((epc) => missingThen.has(epc));
  const surprises = view.missing ? newHere.filter((epc) => !missingThen.has(epc)) : [];
  return {
    expected: view.expected,
    seen: view.seen + newHere.length,
    missing: view.missing ? view.missing.filter((epc) => !here.has(epc)) : null,
    unexpected: [...(view.unexpected || []), ...surprises],
    since: newHere.length,
    view,
  };
}

function countDetail() {
  if (!session.context.count_id) return [];
  const f = countFigures();
  const age = countView ? `${ago(Date.now() - countView.at)} old` : null;
  const list = (epcs) => (epcs.length > 3 ? `${epcs.slice(0, 3).join(', ')} and ${epcs.length - 3} more` : epcs.join(', '));
  return [
    el('p', { id: 'count-progress', class: 'big-figure' },
      'Seen ', el('span', { id: 'count-seen', text: String(f.seen) }), ' / expected ', el('span', { id: 'count-expected', text: f.expected == null ? '?' : String(f.expected) })),
    el('p', { class: 'count-variance' },
      'Missing ', el('strong', { id: 'count-missing', text: f.missing ? String(f.missing.length) : '?' }),
      ' · unexpected ', el('strong', { id: 'count-unexpected', text: f.missing ? String(f.unexpected.length) : '?' })),
    f.missing && f.missing.length ? el('p', { id: 'count-missing-list', class: 'status muted epcs', text: `Missing: ${list(f.missing)}` }) : null,
    f.unexpected.length ? el('p', { id: 'count-unexpected-list', class: 'status muted epcs', text: `Unexpected: ${list(f.unexpected)}` }) : null,
    el('p', { id: 'count-age', class: 'status muted', text: `Zone ${session.zone || '?'} at ${session.location || '?'}${session.count_bin ? `, bin ${session.count_bin} only` : ''}. ` +
      (age ? `The site's figures ${age}` : 'The site\'s figures: not read yet (offline)') + `; +${f.since} tag${f.since === 1 ? '' : 's'} from this device since.` }),
  ];
}

async function countScan(code, at) {
  if (!session.context.count_id) return chooseCount(code);
  const bin = await binOf(code);
  if (bin) {
    if (session.count_bin && code !== session.count_bin) return refuse(code, `This count is of bin ${session.count_bin} only: ${code} is not counted`, `Scan tags in bin ${session.count_bin}.`);
    if (session.zone && bin.zone !== session.zone) return refuse(code, `Bin ${code} is in zone ${bin.zone}, not this count's zone ${session.zone}`, 'Scan a bin of this count\'s zone.');
    session.bin = code;
    saveSession();
    renderMode();
    return result(code, `Bin ${code}`, 'ok');
  }
  if (!session.bin) return refuse(code, `Scan a bin label first: ${code} was not captured.`, 'Scan the bin\'s label, then its tags.');
  const epc = await epcOf(code);
  if (!epc) return refuse(code, `${code}: not a tag or a bin label`, 'Scan a tag or a bin label.');
  const reply = await capture({ mode: 'cycle_count', count_id: session.context.count_id, epc, bin: session.bin }, at, code);
  if (reply && reply.ok && !session.seen.includes(epc)) {
    session.seen.push(epc);
    saveSession();
    renderDetail();
  }
}

// ---- dispatch verify ------------------------------------------------------

async function chooseManifest(id) {
  const live = await siteGet(`/v1/manifests/${encodeURIComponent(id)}`);
  if (live.offline) {
    notice(DISPATCH_OFFLINE);
    return refuse(id, `Dispatch verify did not open: the site does not answer (${id})`);
  }
  if (live.status === 404) return refuse(id, `No manifest ${id} on the site`);
  if (!live.body) return refuse(id, `Manifest ${id}: the site answered ${live.status}`);
  if (!['packing', 'dispatched'].includes(live.body.state)) {
    return refuse(id, `Manifest ${id} is ${live.body.state}: not ready for dispatch`);
  }
  if (session.session_id && session.context.manifest !== id) {
    return refuse(id, `Close this session to verify another manifest than ${session.context.manifest}`);
  }
  notice('');
  manifest = live.body;
  manifestAt = Date.now();
  if (session.session_id) {
    renderMode();
    return result(id, `Manifest ${id} read again`, 'ok');
  }
  if (await openSession({ manifest: id })) result(id, `Manifest ${id}: ${manifest.units.length} unit(s)`, 'ok');
}

function manifestDetail() {
  if (!manifest) return [];
  const verified = manifest.units.filter((u) => u.verified).length;
  const here = manifest.units.filter((u) => u.here).length;
  return [
    el('p', { id: 'manifest-progress', class: 'big-figure' },
      'Verified ', el('span', { id: 'manifest-verified', text: String(verified) }), ' / ', el('span', { id: 'manifest-total', text: String(manifest.units.length) })),
    el('p', { id: 'manifest-age', class: 'status muted', text: `The site's manifest read ${ago(Date.now() - manifestAt)} ago; +${here} verified on this device since.` }),
    el('ul', { id: 'manifest-units', class: 'manifest-units' },
      ...manifest.units.map((u) => el('li', { dataset: { epc: u.epc, verified: String(!!u.verified) }, text: u.epc }))),
  ];
}

async function dispatchScan(code, at) {
  if (!manifest) {
    // After a reload the session's manifest is read again before any tag.
    return chooseManifest(session.context.manifest && EPC_PATTERN.test(code) ? session.context.manifest : code);
  }
  const epc = await epcOf(code);
  if (!epc) return refuse(code, `${code}: not a tag`);
  const unit = manifest.units.find((u) => u.epc === epc);
  const reply = await capture({ mode: 'dispatch_verify', manifest: session.context.manifest, epc }, at, code, unit ? null : 'Not on the manifest');
  if (!unit) {
    if (reply && reply.ok) {
      session.pending_alert = reply.key;
      saveSession();
    }
    openAlert('Not on the manifest', `${epc} is not on ${session.context.manifest}. Take it off the dock, then acknowledge.`);
    return;
  }
  if (!unit.verified) unit.here = true;
  unit.verified = true;
  renderDetail();
}

// ---- find a unit -------------------------------------------------------------

async function findScan(code) {
  let found = await findCached(code);
  if (found.ok && !found.unit && online !== false) {
    // Not in this device's copy: the site may know it (a unit added since).
    if (EPC_PATTERN.test(code)) {
      const live = await withTimeout(ask({ type: 'refresh_unit', epc: code.toUpperCase() }), LOOKUP_WAIT_MS);
      if (live && live.ok && live.unit) found = await findCached(code);
    } else if (await askSiteFirst()) {
      found = await findCached(code);
    }
  }
  const box = $('find-result') || el('div', { id: 'find-result', class: 'found' });
  if (!$('find-result')) $('mode-detail').replaceChildren(box);
  if (!found.ok) {
    box.dataset.found = 'error';
    box.replaceChildren(el('p', { class: 'error', text: failure(found) }));
    return refuse(code, failure(found));
  }
  const age = el('p', { id: 'find-age', class: 'status', text: `From this device's copy, ${ago(found.age_ms)} old.` });
  if (!found.unit) {
    box.dataset.found = 'false';
    box.replaceChildren(el('p', { class: 'big-figure', text: `${code}: not known` }), age);
    return result(code, `${code}: not in this device's copy`, 'refused');
  }
  const u = found.unit;
  const place = found.bin ? `${found.bin.bin} · zone ${found.bin.zone} · ${found.bin.location}` : (u.bin || 'no bin');
  box.dataset.found = 'true';
  box.replaceChildren(
    el('p', { class: 'big-figure', text: u.bin ? `Bin ${u.bin}` : 'No bin' }),
    el('dl', {},
      el('dt', { text: 'State' }), el('dd', { id: 'find-state', text: u.state }),
      el('dt', { text: 'Where' }), el('dd', { id: 'find-bin', text: place }),
      el('dt', { text: 'SKU' }), el('dd', { text: u.sku || '–' }),
      el('dt', { text: 'EPC' }), el('dd', { text: u.epc }),
      el('dt', { text: 'Serial' }), el('dd', { text: u.code || '–' })),
    age);
  result(code, `${u.epc}: ${u.state}, ${u.bin || 'no bin'}`, 'ok');
}

// ---- scanning ------------------------------------------------------------

/** A scanned code as an EPC: itself when it is one, else the cached unit whose serial it is. */
async function epcOf(code) {
  if (EPC_PATTERN.test(code)) return code.toUpperCase();
  const found = await findCached(code);
  return found.ok && found.unit ? found.unit.epc : null;
}

/**
 * `find_unit` with a serial read whatever its case: as scanned, then in
 * upper and in lower case (a label printed in one case and typed in
 * another is the same unit).
 */
async function findCached(code) {
  const code2 = EPC_PATTERN.test(code) ? code.toUpperCase() : code;
  let found = await ask({ type: 'find_unit', code: code2 });
  for (const other of [code.toUpperCase(), code.toLowerCase()]) {
    if (!found.ok || found.unit || other === code2) continue;
    const again = await ask({ type: 'find_unit', code: other });
    if (again.ok && again.unit) found = again;
  }
  return found;
}

/** Scans are handled one after another, in the order the wedge typed them. */
let scanChain = Promise.resolve();

function onScanKey(event) {
  if (event.key !== 'Enter') return;
  event.preventDefault();
  // Read and clear synchronously: the wedge's next burst is already queued
  // behind this event, and awaiting first would mix it into this code. The
  // capture instant is this input event's.
  const input = $('scan-input');
  const code = input.value.trim();
  input.value = '';
  if (!code) return;
  const at = Math.round(performance.timeOrigin + event.timeStamp);
  if (release.hold(code, at)) return;
  queueScan(code, at);
}

function queueScan(code, at) {
  scanChain = scanChain.then(() => handleScan(code, at)).catch((err) => refuse(code, String(err)));
}

async function handleScan(code, at) {
  touch();
  const command = COMMANDS[code.toUpperCase()];
  if (confirmAnswer) {
    if (command === 'confirm') return confirmAnswer(true);
    return refuse(code, `Answer the question first: ${code} was not captured.`, 'Tap an answer, or scan CONFIRM for yes.');
  }
  if (command) return runCommand(command);
  if (alertOpen) return refuse(code, `Acknowledge the alert first: ${code} was not captured.`);
  if (screen === 'picker' || !session) {
    if (awaitingOperator || !operator) return signIn(code);
    refused += 1;
    $('scan-refused').textContent = String(refused);
    show('picker-status', `Choose a mode first: ${code} was not captured.`, 'error');
    return;
  }
  switch (session.mode) {
    case 'put_away':
      return putAwayScan(code, at);
    case 'receive':
      return receiveScan(code, at);
    case 'cycle_count':
      return countScan(code, at);
    case 'dispatch_verify':
      return dispatchScan(code, at);
    case 'find_unit':
      return findScan(code);
    default:
      return refuse(code, `unknown mode ${session.mode}`);
  }
}

/**
 * A bin label's cached row: a code that is not a tag, a bin or a cached
 * unit's serial asks the site first (a bin added mid-shift).
 */
async function binOf(code) {
  if (bins.has(code)) return bins.get(code);
  if (EPC_PATTERN.test(code)) return null;
  const unit = await findCached(code);
  if (unit.ok && unit.unit) return null;
  if (await askSiteFirst()) return bins.get(code) || null;
  return null;
}

/** What else a code may be, when it is not what the screen takes: a GRN, a count, a badge. */
async function otherKind(code) {
  if (operatorName(code)) return 'an operator badge';
  for (const [kind, words] of [['grn', 'a GRN'], ['count', 'a count session']]) {
    const reply = await ask({ type: 'reference_get', kind, id: code });
    if (reply.ok && reply.row) return words;
  }
  return null;
}

async function putAwayScan(code, at) {
  // A burst of tags goes straight on (the cache answers bins at once);
  // only a code the cache lacks waits for the site.
  const bin = bins.get(code) || (!EPC_PATTERN.test(code) && await binOf(code));
  if (bin) {
    session.bin = code;
    saveSession();
    renderMode();
    result(code, `Bin ${code}`, 'ok');
    return;
  }
  if (!EPC_PATTERN.test(code)) {
    const other = await otherKind(code);
    if (other) return refuse(code, `${code} is ${other}, not a unit or a bin label: not captured.`, 'Scan a unit\'s tag or serial, or a bin label.');
  }
  if (!session.bin) return refuse(code, `Scan a bin label first: ${code} was not captured.`, 'Scan the bin\'s label, then its units.');
  const body = { mode: 'put_away', bin: session.bin };
  if (EPC_PATTERN.test(code)) body.epc = code.toUpperCase();
  else body.code = code;
  // Not awaited: a burst's captures go out in order and are acknowledged
  // as their transactions complete.
  capture(body, at, code);
}

/**
 * Hands a scan to the worker; resolves with its reply. The result line
 * shows it pending until the worker says it is durable.
 */
function capture(body, at, code, note) {
  if (!session.session_id) {
    refuse(code, 'The session is not open yet.');
    return Promise.resolve(null);
  }
  const entry = addResult({
    code, text: `${code}…`, kind: 'pending', occurred_at: at, session_id: session.session_id, mode: session.mode, offline: online === false,
  });
  const shown = body.bin ? ` → ${body.bin}` : '';
  return ask({ type: 'capture', session_id: session.session_id, body, occurred_at: at }).then((reply) => {
    if (reply.ok) {
      captured += 1;
      $('scan-count').textContent = String(captured);
      entry.kind = note ? 'refused' : 'kept';
      entry.state = 'queued';
      entry.key = reply.key;
      entry.seq = reply.client_seq;
      entry.announced = !!note;
      entry.text = `#${reply.client_seq} ${code}${shown}${note ? ` · ${note}` : ''}`;
      show('scan-status', `Kept on this device #${reply.client_seq}: ${code}${shown}`, note ? 'warn' : '');
      if (!note) signal('kept');
      watchOutcomes();
    } else {
      failed += 1;
      $('scan-failed').textContent = String(failed);
      entry.kind = 'failed';
      entry.text = `${code}: NOT captured (${failure(reply)})`;
      show('scan-status', `NOT captured ${code}: ${failure(reply)}`, 'error');
      signal('alert');
    }
    scheduleResults();
    scheduleBar();
    return reply;
  });
}

function addResult(entry) {
  entry.id = ++resultSeq;
  results.unshift(entry);
  results.length = Math.min(results.length, 50);
  scheduleResults();
  return entry;
}

function result(code, text, kind) {
  addResult({ code, text, kind, occurred_at: Date.now() });
  show('scan-status', text, kind === 'refused' ? 'warn' : '');
}

function refuse(code, text, next) {
  refused += 1;
  $('scan-refused').textContent = String(refused);
  addResult({ code, text, next, kind: 'refused', occurred_at: Date.now() });
  show('scan-status', text, 'error');
  signal('refused');
}

let resultsQueued = false;
/** The newest result already shown (a new one flashes once). */
let flashed = 0;

function scheduleResults() {
  if (resultsQueued) return;
  resultsQueued = true;
  requestAnimationFrame(() => {
    resultsQueued = false;
    renderResults();
  });
}

/** What a scan row says its scan came to, by its kind. */
const OUTCOME_WORDS = {
  pending: 'writing…',
  kept: 'kept on this device',
  applied: 'applied',
  training: 'recorded as training: nothing moved',
  refused: 'refused',
  blocked: 'blocked: decide on the queue screen',
  voided: 'discarded',
  failed: 'not captured',
  undone: 'undone',
};

/**
 * Whether the ledger will honour an Undo of `entry`'s scan, as the core's
 * `stockhop::undo::Target` decides it: a scan of a mode that changes
 * something, not refused, blocked or discarded, one that named a hop once
 * applied (a repeated verify changed nothing), not undone already, within
 * the undo window of its capture (rule 10).
 */
function undoable(entry, now) {
  return !!entry.key && UNDOABLE_MODES.includes(entry.mode) && !entry.undone
    && ['kept', 'applied', 'training'].includes(entry.kind) && !(entry.state === 'done' && entry.hops === 0)
    && now - entry.occurred_at < UNDO_WINDOW_MS;
}

function renderResults() {
  const list = $('results');
  const now = Date.now();
  const rows = results.slice(0, RESULTS_SHOWN).map((r) => {
    const why = r.kind === 'refused' || r.kind === 'blocked' ? explain(r.reason) : null;
    const outcome = OUTCOME_WORDS[r.kind];
    const li = el('li', { dataset: { kind: r.kind, ...(r.key ? { key: r.key } : {}), ...(r.state ? { state: r.state } : {}) } },
      el('span', { class: 'what' },
        el('span', { class: 'scan', text: r.text }),
        r.key && outcome ? el('span', { class: 'outcome', text: ` · ${outcome}` }) : null,
        why ? el('span', { class: 'why', text: why.words }) : null,
        why || r.next ? el('span', { class: 'next', text: why ? why.next : r.next }) : null,
        why ? el('small', { class: 'code', text: why.code }) : null,
        labels.note(el, r.key)));
    if (undoable(r, now)) {
      li.append(el('button', { type: 'button', 'data-action': 'undo', 'data-key': r.key, text: 'Undo' }));
    }
    if (r.id > flashed) li.classList.add('fresh');
    return li;
  });
  list.replaceChildren(...rows);
  flashed = resultSeq;
}

// ---- undo, re-scan, commands ---------------------------------------------

/** Undoes the scan captured under `key` (from this session's list or the queue). */
async function undo(key, sessionId) {
  const into = session && session.session_id ? session.session_id : sessionId;
  if (!into) return { ok: false, error: { code: 'NO_SESSION', message: 'no open session to record the undo in' } };
  const reply = await ask({ type: 'capture', session_id: into, command: 'undo', body: { target_key: key } });
  const entry = results.find((r) => r.key === key);
  if (reply.ok) {
    const what = entry ? entry.code : key.slice(0, 8);
    if (entry) {
      entry.undone = true;
      entry.kind = 'undone';
    }
    addResult({ code: what, text: `#${reply.client_seq} undo of ${what}`, kind: 'kept', state: 'queued', key: reply.key, occurred_at: reply.occurred_at, session_id: into });
    show('scan-status', `Undone: ${what} (kept on this device; the site applies it)`);
    signal('kept');
    watchOutcomes();
    undoneHere(entry);
  } else {
    refuse(key, `Undo failed: ${failure(reply)}`);
  }
  scheduleResults();
  scheduleBar();
  return reply;
}

/** What the open screen counted for a scan now undone comes off its figures. */
function undoneHere(entry) {
  if (!session || !entry) return;
  const epc = entry.code.toUpperCase();
  if (session.mode === 'cycle_count') {
    session.seen = session.seen.filter((seen) => seen !== epc);
    saveSession();
  }
  if (session.mode === 'dispatch_verify' && manifest) {
    const unit = manifest.units.find((u) => u.epc === epc);
    if (unit) {
      unit.verified = false;
      unit.here = false;
    }
  }
  renderDetail();
}

async function undoLast() {
  const now = Date.now();
  const last = results.find((r) => r.key && UNDOABLE_MODES.includes(r.mode) && !r.undone && r.kind !== 'undone');
  if (!last || !undoable(last, now)) {
    result('undo', 'Nothing to undo: undo works on this session\'s last scan within 120 s.', 'refused');
    return;
  }
  await undo(last.key, last.session_id);
}

/** Re-scan of a `stale_state` item: read the unit live, capture the scan again, acknowledge the old one. */
async function rescan(item) {
  const epc = item.body && item.body.epc;
  if (!epc) return { ok: false, error: { code: 'NO_EPC', message: 'the item names no EPC' } };
  const read = await ask({ type: 'refresh_unit', epc });
  if (!read.ok) return read;
  const mode = item.body.mode;
  const into = session && session.session_id && session.mode === mode ? session.session_id : null;
  if (!into) return { ok: false, error: { code: 'NO_SESSION', message: `open a ${MODES[mode] ? MODES[mode].title : mode} session to re-scan` } };
  const body = { ...item.body };
  delete body.unit_version;
  const reply = await ask({ type: 'capture', session_id: into, body, occurred_at: Date.now() });
  if (!reply.ok) return reply;
  captured += 1;
  $('scan-count').textContent = String(captured);
  addResult({
    code: epc, text: `#${reply.client_seq} ${epc} re-scanned`, kind: 'kept', state: 'queued', key: reply.key,
    seq: reply.client_seq, occurred_at: reply.occurred_at, session_id: into, mode,
  });
  signal('kept');
  watchOutcomes();
  await ask({ type: 'acknowledge', id: item.id });
  return reply;
}

async function runCommand(command) {
  switch (command) {
    case 'close':
      // The end of a shift: the session closes and the operator signs out.
      return signOut(operator ? `${operatorLabel(operator)} signed out (CLOSE).` : 'No one signed in.');
    case 'undo':
      return undoLast();
    case 'mode':
      return closeSession();
    case 'confirm':
      if (alertOpen) return acknowledgeAlert();
      return result('confirm', 'Nothing to confirm.', 'refused');
    default:
      return undefined;
  }
}

// ---- the blocking alert ------------------------------------------------

function openAlert(title, text) {
  alertOpen = true;
  $('alert-title').textContent = title;
  $('alert-text').textContent = text;
  $('alert').hidden = false;
  focusScan();
}

function closeAlert() {
  alertOpen = false;
  $('alert').hidden = true;
}

function acknowledgeAlert() {
  if (session && session.pending_alert) {
    session.dock_acked.push(session.pending_alert);
    delete session.pending_alert;
    saveSession();
  }
  closeAlert();
  result('confirm', 'Alert acknowledged.', 'ok');
  focusScan();
}

// ---- queue screen --------------------------------------------------------

/** The queue screen's filter: every item, or those waiting for a person. */
let queueFilter = 'all';
/** How many rows the queue screen lists: a page, and another for each More (a refresh keeps it). */
let queueShown = QUEUE_PAGE_ROWS;
let queueItems = new Map();
/** Rows drawn, by item id, with what they showed: a refresh redraws only what changed. */
const queueRows = new Map();

/** An item waits for a person: blocked, or refused and not yet acknowledged. */
function toDecide(item) {
  return item.state === 'blocked' || (item.state === 'rejected' && !item.acknowledged);
}

function describe(item) {
  const b = item.body || {};
  if (item.command === 'open_session') return `open ${b.mode || ''} ${b.context ? Object.values(b.context).join(' ') : ''} · ${operatorLabel(b.operator_id || '')}`;
  if (item.command === 'undo') {
    const target = queueAll.find((other) => other.key === b.target_key);
    return `undo ${target ? `${sessionLabel(target.session_id)} #${target.client_seq}` : (b.target_key || '').slice(0, 8)}`;
  }
  if (item.command === 'scan') return [b.mode, b.epc || b.code, b.bin && `→ ${b.bin}`, b.grn, b.manifest, b.count_id].filter(Boolean).join(' ');
  return item.command;
}

/** A session's short name on the queue screen: the first 8 digits of its id (with the seq, unique on the device). */
function sessionLabel(id) {
  return `S-${String(id).slice(0, 8)}`;
}

function undoTargets() {
  return new Set(queueAll.filter((i) => i.command === 'undo' && !['rejected', 'blocked', 'voided'].includes(i.state))
    .map((i) => i.body && i.body.target_key));
}

function queueRow(item, undone, now) {
  const actions = el('div', { class: 'q-actions' });
  const button = (action, label) => el('button', { type: 'button', 'data-action': action, 'data-id': String(item.id), text: label });
  if (item.state === 'blocked') actions.append(button('discard', 'Discard'));
  if (item.state === 'rejected' && !item.acknowledged) {
    if (item.reason === 'stale_state' && item.body && item.body.epc) actions.append(button('rescan', 'Re-scan'));
    actions.append(button('acknowledge', 'Acknowledge'));
  }
  // As undoable() decides it for a scan row.
  const canUndo = item.command === 'scan' && item.body && UNDOABLE_MODES.includes(item.body.mode)
    && !['rejected', 'blocked', 'voided'].includes(item.state) && !(item.state === 'done' && !(item.hop_ids || []).length)
    && !undone.has(item.key) && now - item.occurred_at < UNDO_WINDOW_MS;
  if (canUndo) actions.append(button('undo', 'Undo'));
  const why = explain(item.reason || item.why);
  const label = `${sessionLabel(item.session_id)} #${item.client_seq} ${item.command}`;
  return el('li', { dataset: { id: String(item.id), state: item.state, label, decide: String(toDecide(item)) } },
    el('div', { class: 'q-head' }, el('span', { class: 'q-label', text: label }),
      el('span', { class: 'state', dataset: { state: item.state }, text: item.state === 'done' && training() ? 'training' : item.state })),
    el('div', { class: 'q-what', text: describe(item) }),
    why ? el('div', { class: 'q-why' }, el('span', { text: item.acknowledged ? `${why.words} (acknowledged)` : why.words }),
      el('span', { class: 'q-next', text: item.acknowledged ? '' : why.next }), el('small', { class: 'code', text: why.code })) : null,
    el('div', { class: 'muted', text: `captured ${ago(now - item.occurred_at)} ago` }),
    actions.childElementCount ? actions : null);
}

/** The queue's items in the screen's order: what waits for a person first, newest first within each. */
function queueOrder() {
  const newest = (a, b) => b.occurred_at - a.occurred_at || b.id - a.id;
  const decide = queueAll.filter(toDecide).sort(newest);
  if (queueFilter === 'decide') return decide;
  return [...decide, ...queueAll.filter((item) => !toDecide(item)).sort(newest)];
}

/**
 * Draws the queue screen from the last walk of the queue. Rows are kept by
 * item id and redrawn only when what they show changed (their age moves
 * in minutes), so a refresh neither collapses the pages shown nor swaps a
 * button from under a finger.
 */
function renderQueue() {
  const now = Date.now();
  const undone = undoTargets();
  const order = queueOrder();
  const shown = order.slice(0, queueShown);
  queueItems = new Map(queueAll.map((item) => [item.id, item]));
  const rows = shown.map((item) => {
    const sig = JSON.stringify([item.state, item.reason, item.why, item.acknowledged, undone.has(item.key),
      now - item.occurred_at < UNDO_WINDOW_MS, ago(now - item.occurred_at), training()]);
    const drawn = queueRows.get(item.id);
    if (drawn && drawn.sig === sig) return drawn.li;
    const li = queueRow(item, undone, now);
    if (drawn) drawn.li.replaceWith(li);
    queueRows.set(item.id, { sig, li });
    return li;
  });
  const list = $('queue-list');
  const same = rows.length === list.children.length && rows.every((li, i) => list.children[i] === li);
  if (!same) list.replaceChildren(...rows);
  for (const id of queueRows.keys()) if (!queueItems.has(id)) queueRows.delete(id);
  $('queue-more').hidden = order.length <= queueShown;
  $('queue-more').textContent = `More (${order.length - shown.length} more)`;
  const decide = queueAll.filter(toDecide).length;
  $('queue-filter-decide').textContent = `To decide (${decide})`;
  $('queue-filter-all').setAttribute('aria-pressed', String(queueFilter === 'all'));
  $('queue-filter-decide').setAttribute('aria-pressed', String(queueFilter === 'decide'));
  if (!order.length) list.replaceChildren(el('li', { class: 'q-empty', text: queueFilter === 'decide' ? 'Nothing waits for a decision.' : 'The queue is empty.' }));
}

function setQueueFilter(filter) {
  queueFilter = filter;
  queueShown = QUEUE_PAGE_ROWS;
  renderQueue();
  focusScan();
}

async function refreshQueue() {
  await refreshBar();
  if (!lastCounts) return;
  const counts = lastCounts;
  show('queue-counts', `queued ${counts.queued} · sending ${counts.sending} · done ${counts.done} · ` +
    `rejected ${counts.rejected} · blocked ${counts.blocked} · voided ${counts.voided}`);
  const age = counts.oldest_queued_age_ms;
  show('queue-oldest', age == null ? 'Nothing waiting.' : `Oldest waiting: ${ago(age)}`, age > OLDEST_WARN_MS ? 'warn' : '');
}

function moreQueue() {
  queueShown += QUEUE_PAGE_ROWS;
  renderQueue();
  focusScan();
}

async function onQueueAction(event) {
  const target = event.target.closest('button[data-action]');
  if (!target) return;
  const id = Number(target.dataset.id);
  const action = target.dataset.action;
  const item = queueItems.get(id);
  if (!item) return;
  let reply;
  if (action === 'undo') reply = await undo(item.key, item.session_id);
  else if (action === 'rescan') reply = await rescan(item);
  else reply = await ask({ type: action, id });
  const label = `${sessionLabel(item.session_id)} #${item.client_seq}`;
  show('queue-status', reply.ok ? `${action}: done (${label})` : `${label}: ${failure(reply)}`, reply.ok ? '' : 'error');
  await refreshQueue();
  focusScan();
}

async function retryNow() {
  const reply = await ask({ type: 'retry_now' });
  show('queue-status', reply.ok ? `sent ${reply.items_sent} in ${reply.requests} request(s)` : failure(reply), reply.ok ? '' : 'error');
  await refreshQueue();
}

// ---- menu and storage ----------------------------------------------------

function renderMenu() {
  const d = reference && reference.device;
  show('menu-device', deviceId ? `${deviceId}${d ? ` · ${d.profile}${d.encode ? ' · encodes' : ''}` : ''} → ${siteUrl}` : 'Not set up.');
  show('menu-reference', referenceProgress(reference) || (reference
    ? `Reference copy: ${reference.units} units, ${reference.bins} bins, ${reference.grns} GRNs, ${reference.counts} counts; ${reference.refreshed_at ? `${ago(reference.age_ms)} old` : 'never complete'}${reference.loading ? ' (loading)' : ''}`
    : 'Reference copy: –'));
  $('menu-switch').disabled = !session;
  renderSettings();
  storage();
}

function renderSettings() {
  const on = signalsOn();
  $('menu-signals').setAttribute('aria-pressed', String(on));
  $('menu-signals').textContent = `Sound and vibration: ${on ? 'on' : 'off'}`;
  const minutes = idleMinutes();
  const choices = IDLE_CHOICES_MIN.includes(minutes) ? IDLE_CHOICES_MIN : [...IDLE_CHOICES_MIN, minutes].sort((a, b) => a - b);
  $('menu-idle').replaceChildren(...choices.map((m) => el('option', { value: String(m), selected: m === minutes, text: m < 60 ? `${m} min` : `${m / 60} h` })));
}

/** What to do when the browser keeps the queue only as long as it has room. */
const PERSIST_ADVICE = 'Persistent storage NOT granted: the browser may clear what this handheld holds when space runs low. '
  + 'Add Stockhop to the home screen (browser menu → Install app or Add to Home screen), or allow this site to store data in the browser\'s site settings, then open this menu again. '
  + 'Until then, let the queue drain before the device runs short of space.';

async function storage() {
  if (!navigator.storage) {
    show('storage-estimate', 'Storage estimate unavailable.', 'warn');
    return;
  }
  const persisted = navigator.storage.persist ? await navigator.storage.persist() : false;
  show('storage-persist', persisted ? 'Persistent storage granted.' : PERSIST_ADVICE, persisted ? '' : 'warn');
  const { usage = 0, quota = 0 } = await navigator.storage.estimate();
  const ratio = quota ? usage / quota : 0;
  show('storage-estimate', `Using ${(usage / 1e6).toFixed(1)} MB of ${(quota / 1e6).toFixed(0)} MB`, ratio > STORAGE_WARN_RATIO ? 'warn' : '');
}

// ---- start ---------------------------------------------------------------

function wire() {
  $('setup-form').addEventListener('submit', (event) => {
    event.preventDefault();
    saveSetup($('site-url').value.trim(), $('device-token').value, $('device-id').value.trim());
  });
  $('setup-back').addEventListener('click', back);
  $('setup-anyway').addEventListener('click', () => {
    saveSetup($('site-url').value.trim(), $('device-token').value, $('device-id').value.trim(), { anyway: true });
  });
  $('late-seen').addEventListener('click', lateSeen);
  $('late-show').addEventListener('click', () => {
    lateSeen();
    queueFilter = 'decide';
    go('queue');
  });
  $('queue-filter-all').addEventListener('click', () => setQueueFilter('all'));
  $('queue-filter-decide').addEventListener('click', () => setQueueFilter('decide'));
  $('confirm-yes').addEventListener('click', () => confirmAnswer && confirmAnswer(true));
  $('confirm-no').addEventListener('click', () => confirmAnswer && confirmAnswer(false));
  $('menu-signals').addEventListener('click', () => {
    setSignalsOn(!signalsOn());
    renderSettings();
    signal('kept');
  });
  $('menu-idle').addEventListener('change', (event) => {
    localStorage.setItem(IDLE_KEY, event.target.value);
    renderSettings();
  });
  // A browser lets a page sound only after a key or a tap: the first one makes the audio context.
  for (const type of ['keydown', 'pointerdown']) {
    document.addEventListener(type, () => {
      unlockAudio();
      touch();
    }, { capture: true, passive: true });
  }
  // The banners under the status bar push the screens down by their height.
  new ResizeObserver(() => {
    document.body.style.setProperty('--banners-h', `${$('banners').offsetHeight}px`);
  }).observe($('banners'));
  $('status-bar').addEventListener('click', () => go(screen === 'queue' ? (session ? 'mode' : 'picker') : 'queue'));
  $('menu-button').addEventListener('click', () => (screen === 'menu' ? back() : go('menu')));
  $('menu-back').addEventListener('click', back);
  $('queue-back').addEventListener('click', back);
  $('menu-queue').addEventListener('click', () => go('queue'));
  $('menu-switch').addEventListener('click', closeSession);
  $('menu-refresh').addEventListener('click', async () => {
    const reply = await ask({ type: 'reference_refresh' });
    show('menu-reference', reply.ok ? 'Reference data read.' : failure(reply), reply.ok ? '' : 'error');
    if (reply.ok) {
      reference = null;
      await loadReference(false);
      renderMenu();
    }
  });
  $('menu-setup').addEventListener('click', () => {
    $('setup-back').hidden = !deviceId;
    go('setup');
    $('site-url').focus();
  });
  $('operator-change').addEventListener('click', () => {
    awaitingOperator = true;
    renderPicker();
    focusScan();
  });
  $('operator-signout').addEventListener('click', () => signOut(`${operatorLabel(operator)} signed out.`));
  $('picker-modes').addEventListener('click', (event) => {
    const target = event.target.closest('button[data-mode]');
    if (target) pickMode(target.dataset.mode);
  });
  $('mode-choices').addEventListener('click', (event) => {
    const grn = event.target.closest('button[data-grn]');
    const count = event.target.closest('button[data-count]');
    if (grn) scanChain = scanChain.then(() => chooseGrn(grn.dataset.grn));
    if (count) scanChain = scanChain.then(() => chooseCount(count.dataset.count));
    focusScan();
  });
  $('mode-detail').addEventListener('click', (event) => {
    if (event.target.closest('#encode-toggle')) {
      session.encode = !session.encode;
      saveSession();
      renderDetail();
    }
    focusScan();
  });
  $('results').addEventListener('click', (event) => {
    const target = event.target.closest('button[data-action="undo"]');
    if (target) {
      const entry = results.find((r) => r.key === target.dataset.key);
      undo(target.dataset.key, entry && entry.session_id);
    }
    focusScan();
  });
  $('mode-switch').addEventListener('click', closeSession);
  $('session-close').addEventListener('click', closeSession);
  $('scan-input').addEventListener('keydown', onScanKey);
  // The scan field takes the focus back from whatever a tap gave it to.
  $('scan-input').addEventListener('blur', () => setTimeout(focusScan, 0));
  $('queue-refresh').addEventListener('click', refreshQueue);
  $('queue-retry').addEventListener('click', retryNow);
  $('queue-more').addEventListener('click', moreQueue);
  $('queue-list').addEventListener('click', onQueueAction);
  $('alert-ack').addEventListener('click', acknowledgeAlert);
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible') ask({ type: 'wake' });
  });
  window.addEventListener('online', checkOnline);
  // A setup link opened while the app is open changes only the fragment.
  window.addEventListener('hashchange', () => {
    scanChain = scanChain.then(setupFromFragment);
  });
  window.addEventListener('offline', () => {
    online = false;
    offlineSeenAt = Date.now();
    renderBar();
    if (screen === 'mode') renderMode();
  });
}

async function start() {
  if (!window.isSecureContext) {
    // Browsers run service workers only over HTTPS (or on the site machine
    // itself): without one there is no offline queue.
    $('worker-status').hidden = false;
    show('worker-status', 'Not secure: open this site over https:// (trust the site CA from /trust.html first).', 'error');
    return;
  }
  if (!('serviceWorker' in navigator)) {
    $('worker-status').hidden = false;
    show('worker-status', 'No service worker support: scans cannot be kept offline.', 'error');
    return;
  }
  await navigator.serviceWorker.register('/sw.js', { type: 'module' });
  await worker();
  $('worker-status').textContent = 'ready';
  window.stockhop = { ask };
  wire();
  labels.setup({
    get: siteGet,
    device: () => deviceId,
    stateOf: (key) => (results.find((r) => r.key === key) || {}).state,
    changed: () => {
      if (screen === 'mode' && session && session.mode === 'receive') renderDetail();
      scheduleResults();
    },
  });
  await setupFromFragment();
  if (!deviceId) await readDevice();
  if (!reference) await loadReference(!!deviceId);
  checkOnline();
  if (!deviceId) go('setup');
  else if (session) {
    if (session.mode === 'receive' && session.context.grn) await loadGrn();
    if (session.mode === 'cycle_count' && session.context.count_id) loadCountView();
    if (session.mode === 'dispatch_verify' && session.context.manifest) {
      const live = await siteGet(`/v1/manifests/${encodeURIComponent(session.context.manifest)}`);
      if (live.body) {
        manifest = live.body;
        manifestAt = Date.now();
      } else notice('Offline: the manifest is read live; scan it again once the site answers.');
    }
    go('mode');
  } else go('picker');
  await refreshBar();
  setInterval(() => {
    if (document.visibilityState !== 'visible') return;
    if (screen === 'queue') refreshQueue();
    else refreshBar();
    if (screen === 'mode') {
      scheduleResults();
      // Its figures' age (receive and count redraw with each walk of the queue).
      if (session && session.mode === 'dispatch_verify') renderDetail();
    }
    checkIdle();
  }, REFRESH_EVERY_MS);
  watchOutcomes();
  setInterval(checkOnline, HEALTH_EVERY_MS);
  setInterval(() => {
    if (!release.updating()) ask({ type: 'wake' }).catch(() => {});
  }, WAKE_EVERY_MS);
  await release.start({ scanChain: () => scanChain, handle: queueScan });
  document.body.dataset.ready = 'true';
}

start().catch((err) => {
  $('worker-status').hidden = false;
  show('worker-status', String(err), 'error');
});
