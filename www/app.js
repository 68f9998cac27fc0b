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
//   #screen-setup #setup-form #site-url #device-id #device-token #setup-save #setup-back #setup-status
//                                       also read from the URL fragment #site=…&token=…&device=…
//   #screen-picker #operator #operator-change #picker-prompt #picker-modes #picker-status
//                                       mode buttons: #pick-<mode> (only the profile's modes)
//   #screen-mode[data-mode][data-open] #mode-title #session-status #mode-needs
//                                       needs: <li data-need="bin"|"grn"|"count"|"manifest" data-met>
//     #prompt (what to scan next) #scan-bin (put-away, cycle count: the bin last scanned)
//     #mode-notice (a refusal, e.g. dispatch verify offline) #mode-choices (buttons
//     [data-grn] / [data-count]) #mode-detail: #grn-lines tr[data-sku] (cells sku, expected,
//     received, queued) #encode-toggle[aria-pressed] #receive-sku #count-progress
//     (#count-seen #count-expected) #manifest-progress (#manifest-verified #manifest-total)
//     #manifest-units li[data-epc][data-verified] #find-result[data-found] #find-age
//     #scan-status (the last scan's result) #results li[data-key][data-kind] with
//     button[data-action="undo"][data-key] while within 120 s of capture
//     #mode-switch #session-close
//   #screen-queue #queue-back #queue-counts #queue-oldest #queue-retry #queue-refresh
//     #queue-list li[data-id][data-state] with buttons [data-action="discard"|"acknowledge"|
//     "undo"|"rescan"][data-id] #queue-more #queue-status
//   #screen-menu #menu-back #menu-queue #menu-switch #menu-refresh #menu-commands (/commands)
//     #menu-setup #menu-device #menu-reference #storage-estimate #storage-persist
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
//                          device: {device_id, profile, modes, encode} | null}
//   reference_refresh {} (error OFFLINE when the site does not answer)
//   find_unit {code} → {unit | null, bin | null, refreshed_at, age_ms}
//   reference_get {kind: "unit"|"bin"|"grn"|"count", id} → {row | null, refreshed_at, age_ms}
//   reference_list {kind: "bins"|"grns"|"counts"} → {rows}
//   refresh_unit {epc} → {unit}
// window.stockhop.ask(message) is the same call, for scripts and tests.
//
// The page reads the site itself only where a mode needs it live: the
// manifest dispatch verify checks against (GET /v1/manifests/{id}) and a
// count's expected total (GET /v1/counts/{id}), with the device token kept
// from setup in localStorage; and /healthz for the status bar's online
// light.

import * as release from './release.js';

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

let registration = null;

async function worker() {
  if (!registration) registration = await navigator.serviceWorker.ready;
  return navigator.serviceWorker.controller || registration.active;
}

async function ask(message) {
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
/** dispatch verify: the live manifest while the mode is open. */
let manifest = null;
/** cycle count: the count's expected total as the site last said it, and whether that was just now. */
let countView = null;
/** receive: the GRN row from the cache. */
let grnRow = null;
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

async function saveSetup(site_url, device_token, device_id) {
  const reply = await ask({ type: 'setup', site_url, device_token, device_id });
  if (!reply.ok) {
    show('setup-status', failure(reply), 'error');
    return reply;
  }
  siteUrl = site_url;
  deviceId = device_id;
  localStorage.setItem(TOKEN_KEY, device_token);
  show('setup-status', `Set up as ${device_id} → ${site_url}`);
  checkOnline();
  await loadReference(true);
  if (screen === 'setup' || screen == null) go(session ? 'mode' : 'picker');
  return reply;
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
    await saveSetup(site, token, device);
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
  if (!status.ok) return;
  const changed = !reference || reference.cursor !== status.cursor;
  reference = status;
  if (changed) {
    const list = await ask({ type: 'reference_list', kind: 'bins' });
    if (list.ok) bins = new Map(list.rows.map((row) => [row.bin, row]));
    if (session && session.mode === 'receive' && session.context.grn) await loadGrn();
    if (screen === 'picker') renderPicker();
    if (screen === 'mode') renderMode();
  }
  renderBar();
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
  if (ok !== online) {
    online = ok;
    renderBar();
    if (screen === 'mode') renderMode();
    if (ok) {
      ask({ type: 'wake' });
      loadReference(false);
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
  $('bar-cache').textContent = `cache ${reference && reference.age_ms != null ? ago(reference.age_ms) : '–'}`;
}

async function refreshBar() {
  const counts = await ask({ type: 'counts' });
  if (counts.ok) {
    lastCounts = { ...counts, rejected_unacknowledged: lastCounts ? lastCounts.rejected_unacknowledged : 0 };
  }
  const status = await ask({ type: 'reference_status' });
  if (status.ok) {
    const changed = !reference || reference.cursor !== status.cursor || !reference.device;
    reference = status;
    if (changed) loadReference(false);
  }
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
  let after;
  let open = 0;
  // The device's whole queue is small in normal work (done items are
  // pruned); walk it in pages.
  for (;;) {
    const reply = await ask({ type: 'list', after, limit: 500 });
    if (!reply.ok) return;
    for (const item of reply.items) {
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
  if (screen === 'mode' && session && session.mode === 'receive') renderDetail();
}

// ---- the picker ---------------------------------------------------------

function renderPicker() {
  $('operator').textContent = operator || '–';
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

async function closeSession() {
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
    ? `Open: ${session.operator_id} · ${session.session_id.slice(0, 8)}`
    : session.mode === 'find_unit' ? `${session.operator_id} · read only` : 'Not open yet';
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
}

/** Scans of the open GRN this device holds that the cached row cannot count yet. */
function queuedSince() {
  const refreshed = reference ? reference.refreshed_at : null;
  const by = {};
  for (const item of sessionItems) {
    if (item.command !== 'scan' || !item.body || item.body.grn !== session.context.grn) continue;
    const waiting = item.state === 'queued' || item.state === 'sending';
    const landedSince = item.state === 'done' && (refreshed == null || item.recorded_at == null || item.recorded_at > refreshed);
    if (!waiting && !landedSince) continue;
    const sku = item.body.sku || session.skus[item.key];
    if (sku) by[sku] = (by[sku] || 0) + 1;
  }
  return by;
}

function receiveDetail() {
  const parts = [];
  if (canEncode()) {
    parts.push(el('div', { class: 'row' }, el('button', {
      type: 'button', id: 'encode-toggle', class: 'toggle', 'aria-pressed': String(!!session.encode),
    }, session.encode ? 'Encode tags: on' : 'Encode tags: off')));
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
      el('td', { class: 'num', text: String(line.received) }), el('td', { class: 'num', text: mine ? `+${mine}` : '0' }));
  });
  parts.push(el('table', { id: 'grn-lines' },
    el('thead', {}, el('tr', {}, el('th', { text: 'SKU' }), el('th', { class: 'num', text: 'Expected' }),
      el('th', { class: 'num', text: 'Received' }), el('th', { class: 'num', text: 'Queued here' }))),
    el('tbody', {}, ...rows)));
  parts.push(el('p', { class: 'status muted', text: `Received as the site said ${ago(reference && reference.age_ms)} ago; queued here: this device's scans since.` }));
  return parts;
}

async function chooseGrn(id) {
  const reply = await ask({ type: 'reference_get', kind: 'grn', id });
  const row = reply.ok ? reply.row : null;
  if (!row) return refuse(id, `Not a GRN this device knows: ${id}`);
  if (row.qc !== 'accepted') return refuse(id, `GRN ${id}: QC ${row.qc}; receiving needs accepted`);
  grnRow = row;
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
    renderDetail();
  }
}

// ---- cycle count -------------------------------------------------------------

async function chooseCount(id) {
  const reply = await ask({ type: 'reference_get', kind: 'count', id });
  const row = reply.ok ? reply.row : null;
  if (!row) return refuse(id, `Not a count this device knows: ${id}`);
  if (row.state !== 'open') return refuse(id, `Count ${id} is ${row.state}: it takes no scans`);
  session.zone = row.zone;
  session.location = row.location;
  if (await openSession({ count_id: id })) {
    result(id, `Count ${id} · zone ${row.zone}`, 'ok');
    loadCountView();
  }
}

/** The count's expected total: live when the site answers, else as it last said. */
async function loadCountView() {
  const id = session.context.count_id;
  const live = await siteGet(`/v1/counts/${encodeURIComponent(id)}`);
  const kept = loadJson(COUNT_EXPECTED_KEY, {});
  if (live.body) {
    countView = { expected: live.body.expected, live: true };
    kept[id] = { expected: live.body.expected, at: Date.now() };
    localStorage.setItem(COUNT_EXPECTED_KEY, JSON.stringify(kept));
  } else if (kept[id]) {
    countView = { expected: kept[id].expected, live: false, at: kept[id].at };
  } else {
    countView = null;
  }
  if (session && session.mode === 'cycle_count') renderDetail();
}

function countDetail() {
  if (!session.context.count_id) return [];
  const seen = session.seen.length;
  const expected = countView ? String(countView.expected) : '?';
  return [
    el('p', { id: 'count-progress', class: 'big-figure' },
      'Seen ', el('span', { id: 'count-seen', text: String(seen) }), ' / expected ', el('span', { id: 'count-expected', text: expected })),
    el('p', { class: 'status muted', text: `Zone ${session.zone || '?'} at ${session.location || '?'}; seen: tags this device counted. ` +
      (countView ? (countView.live ? 'Expected as the site says now.' : `Expected as the site said ${ago(Date.now() - countView.at)} ago.`) : 'Expected: not read yet (offline).') }),
  ];
}

async function countScan(code, at) {
  if (!session.context.count_id) return chooseCount(code);
  const bin = bins.get(code);
  if (bin) {
    if (session.zone && bin.zone !== session.zone) return refuse(code, `Bin ${code} is in zone ${bin.zone}, not this count's zone ${session.zone}`);
    session.bin = code;
    saveSession();
    renderMode();
    return result(code, `Bin ${code}`, 'ok');
  }
  if (!session.bin) return refuse(code, `Scan a bin label first: ${code} was not captured.`);
  const epc = await epcOf(code);
  if (!epc) return refuse(code, `${code}: not a tag or a bin label`);
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
  if (session.session_id) {
    renderMode();
    return result(id, `Manifest ${id} read again`, 'ok');
  }
  if (await openSession({ manifest: id })) result(id, `Manifest ${id}: ${manifest.units.length} unit(s)`, 'ok');
}

function manifestDetail() {
  if (!manifest) return [];
  const verified = manifest.units.filter((u) => u.verified).length;
  return [
    el('p', { id: 'manifest-progress', class: 'big-figure' },
      'Verified ', el('span', { id: 'manifest-verified', text: String(verified) }), ' / ', el('span', { id: 'manifest-total', text: String(manifest.units.length) })),
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
  unit.verified = true;
  renderDetail();
}

// ---- find a unit -------------------------------------------------------------

async function findScan(code) {
  const found = await ask({ type: 'find_unit', code: EPC_PATTERN.test(code) ? code.toUpperCase() : code });
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
  const found = await ask({ type: 'find_unit', code });
  return found.ok && found.unit ? found.unit.epc : null;
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
  const command = COMMANDS[code.toUpperCase()];
  if (command) return runCommand(command);
  if (alertOpen) return refuse(code, `Acknowledge the alert first: ${code} was not captured.`);
  if (screen === 'picker' || !session) {
    if (awaitingOperator || !operator) {
      operator = code;
      awaitingOperator = false;
      localStorage.setItem(OPERATOR_KEY, operator);
      renderPicker();
      show('picker-status', `Operator ${code}`);
      return;
    }
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

function putAwayScan(code, at) {
  if (bins.has(code)) {
    session.bin = code;
    saveSession();
    renderMode();
    result(code, `Bin ${code}`, 'ok');
    return;
  }
  if (!session.bin) return refuse(code, `Scan a bin label first: ${code} was not captured.`);
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
  const entry = addResult({ code, text: `${code}…`, kind: 'pending', occurred_at: at, session_id: session.session_id });
  const shown = body.bin ? ` → ${body.bin}` : '';
  return ask({ type: 'capture', session_id: session.session_id, body, occurred_at: at }).then((reply) => {
    if (reply.ok) {
      captured += 1;
      $('scan-count').textContent = String(captured);
      entry.kind = note ? 'refused' : 'ok';
      entry.key = reply.key;
      entry.text = `#${reply.client_seq} ${code}${shown}${note ? ` · ${note}` : ''}`;
      show('scan-status', `Captured #${reply.client_seq}: ${code}${shown}`, note ? 'warn' : '');
    } else {
      failed += 1;
      $('scan-failed').textContent = String(failed);
      entry.kind = 'failed';
      entry.text = `${code}: NOT captured (${failure(reply)})`;
      show('scan-status', `NOT captured ${code}: ${failure(reply)}`, 'error');
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

function refuse(code, text) {
  refused += 1;
  $('scan-refused').textContent = String(refused);
  addResult({ code, text, kind: 'refused', occurred_at: Date.now() });
  show('scan-status', text, 'error');
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

function renderResults() {
  const list = $('results');
  const now = Date.now();
  const rows = results.slice(0, RESULTS_SHOWN).map((r) => {
    const li = el('li', { dataset: { kind: r.kind, ...(r.key ? { key: r.key } : {}) } }, el('span', { class: 'what', text: r.text }));
    if (r.key && r.kind === 'ok' && !r.undone && now - r.occurred_at < UNDO_WINDOW_MS) {
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
    if (entry) {
      entry.undone = true;
      entry.kind = 'undone';
    }
    result(entry ? entry.code : key, `Undone: ${entry ? entry.code : key}`, 'ok');
    if (session && session.mode === 'cycle_count' && entry) {
      session.seen = session.seen.filter((epc) => epc !== entry.code.toUpperCase());
      saveSession();
      renderDetail();
    }
  } else {
    refuse(key, `Undo failed: ${failure(reply)}`);
  }
  scheduleResults();
  scheduleBar();
  return reply;
}

async function undoLast() {
  const now = Date.now();
  const last = results.find((r) => r.key && r.kind === 'ok' && !r.undone);
  if (!last || now - last.occurred_at >= UNDO_WINDOW_MS) {
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
  addResult({ code: epc, text: `#${reply.client_seq} ${epc} re-scanned`, kind: 'ok', key: reply.key, occurred_at: reply.occurred_at, session_id: into });
  await ask({ type: 'acknowledge', id: item.id });
  return reply;
}

async function runCommand(command) {
  switch (command) {
    case 'close':
      if (!session) return result('close', 'No session to close.', 'refused');
      return closeSession();
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

let nextAfter = null;
let queueItems = new Map();
let undoneKeys = new Set();

function describe(item) {
  const b = item.body || {};
  if (item.command === 'open_session') return `open ${b.mode || ''} ${b.context ? Object.values(b.context).join(' ') : ''}`;
  if (item.command === 'undo') return `undo ${b.target_key ? b.target_key.slice(0, 8) : ''}`;
  if (item.command === 'scan') return [b.mode, b.epc || b.code, b.bin && `→ ${b.bin}`, b.grn, b.manifest, b.count_id].filter(Boolean).join(' ');
  return item.command;
}

function queueRow(item) {
  const now = Date.now();
  const actions = el('div', { class: 'q-actions' });
  const button = (action, label) => el('button', { type: 'button', 'data-action': action, 'data-id': String(item.id), text: label });
  if (item.state === 'blocked') actions.append(button('discard', 'Discard'));
  if (item.state === 'rejected' && !item.acknowledged) {
    if (item.reason === 'stale_state' && item.body && item.body.epc) actions.append(button('rescan', 'Re-scan'));
    actions.append(button('acknowledge', 'Acknowledge'));
  }
  if (item.command === 'scan' && !['rejected', 'blocked', 'voided'].includes(item.state)
      && !undoneKeys.has(item.key) && now - item.occurred_at < UNDO_WINDOW_MS) {
    actions.append(button('undo', 'Undo'));
  }
  const why = item.reason || item.why;
  return el('li', { dataset: { id: String(item.id), state: item.state } },
    el('div', { class: 'q-head' }, el('span', { text: `#${item.client_seq} ${item.command}` }),
      el('span', { class: 'state', dataset: { state: item.state }, text: item.state })),
    el('div', { class: 'q-what', text: describe(item) }),
    why ? el('div', { class: 'q-why', text: item.acknowledged ? `${why} (acknowledged)` : why }) : null,
    el('div', { class: 'muted', text: `captured ${ago(now - item.occurred_at)} ago` }),
    actions.childElementCount ? actions : null);
}

async function refreshQueue() {
  const counts = await ask({ type: 'counts' });
  if (counts.ok) {
    lastCounts = { ...counts, rejected_unacknowledged: lastCounts ? lastCounts.rejected_unacknowledged : 0 };
    show('queue-counts', `queued ${counts.queued} · sending ${counts.sending} · done ${counts.done} · ` +
      `rejected ${counts.rejected} · blocked ${counts.blocked} · voided ${counts.voided}`);
    const age = counts.oldest_queued_age_ms;
    show('queue-oldest', age == null ? 'Nothing waiting.' : `Oldest waiting: ${ago(age)}`, age > OLDEST_WARN_MS ? 'warn' : '');
    renderBar();
  }
  const list = await ask({ type: 'list', limit: QUEUE_PAGE_ROWS });
  queueItems = new Map();
  $('queue-list').replaceChildren();
  appendRows(list);
}

function appendRows(list) {
  if (!list.ok) {
    show('queue-status', failure(list), 'error');
    return;
  }
  for (const item of list.items) {
    queueItems.set(item.id, item);
    if (item.command === 'undo' && item.body && item.body.target_key) undoneKeys.add(item.body.target_key);
  }
  for (const item of list.items) $('queue-list').appendChild(queueRow(item));
  nextAfter = list.next_after;
  $('queue-more').hidden = list.items.length === 0 || nextAfter == null;
}

async function moreQueue() {
  appendRows(await ask({ type: 'list', after: nextAfter, limit: QUEUE_PAGE_ROWS }));
}

async function onQueueAction(event) {
  const target = event.target.closest('button[data-action]');
  if (!target) return;
  const id = Number(target.dataset.id);
  const action = target.dataset.action;
  const item = queueItems.get(id);
  let reply;
  if (action === 'undo') reply = await undo(item.key, item.session_id);
  else if (action === 'rescan') reply = await rescan(item);
  else reply = await ask({ type: action, id });
  if (reply.ok && action === 'undo') undoneKeys.add(item.key);
  show('queue-status', reply.ok ? `${action}: done` : failure(reply), reply.ok ? '' : 'error');
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
  show('menu-reference', reference
    ? `Reference copy: ${reference.units} units, ${reference.bins} bins, ${reference.grns} GRNs, ${reference.counts} counts; ${reference.refreshed_at ? `${ago(reference.age_ms)} old` : 'never complete'}${reference.loading ? ' (loading)' : ''}`
    : 'Reference copy: –');
  $('menu-switch').disabled = !session;
  storage();
}

async function storage() {
  if (!navigator.storage) {
    show('storage-estimate', 'Storage estimate unavailable.', 'warn');
    return;
  }
  const persisted = navigator.storage.persist ? await navigator.storage.persist() : false;
  show('storage-persist', persisted ? 'Persistent storage granted.' : 'Persistent storage NOT granted: the browser may evict the queue under pressure.',
    persisted ? '' : 'warn');
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
  window.addEventListener('offline', () => {
    online = false;
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
      if (live.body) manifest = live.body;
      else notice('Offline: the manifest is read live; scan it again once the site answers.');
    }
    go('mode');
  } else go('picker');
  await refreshBar();
  setInterval(() => {
    if (document.visibilityState !== 'visible') return;
    refreshBar();
    if (screen === 'queue') refreshQueue();
    if (screen === 'mode') scheduleResults();
  }, REFRESH_EVERY_MS);
  setInterval(checkOnline, HEALTH_EVERY_MS);
  setInterval(() => ask({ type: 'wake' }).catch(() => {}), WAKE_EVERY_MS);
  await release.start({ scanChain: () => scanChain, handle: queueScan });
  document.body.dataset.ready = 'true';
}

start().catch((err) => {
  $('worker-status').hidden = false;
  show('worker-status', String(err), 'error');
});
