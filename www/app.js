// Stockhop page: device setup, capture session, scan input and the queue
// screen. Everything durable happens in the service worker (sw.js → wasm);
// the page only asks it, one message per action, each with a MessageChannel
// port for the reply.
//
// Element ids (stable; the end-to-end suite drives them):
//   #worker-status                      worker state ("ready", or the error)
//   #setup-form #site-url #device-token #device-id #setup-save #setup-status
//                                       device setup; also read from the URL
//                                       fragment #site=…&token=…&device=…
//   #session-form #operator-id #mode #session-open #session-close #session-status
//   #scan-input                         keyboard-wedge input: each scan ends with Enter
//   #scan-bin                           put-away: the bin whose label was scanned last
//   #scan-status #scan-count #scan-failed #scan-refused
//   #queue-counts #queue-oldest #queue-refresh #queue-retry #queue-list #queue-more #queue-status
//                                       rows: <tr data-id data-state>, buttons
//                                       [data-action="discard"|"acknowledge"][data-id]
//   #storage-estimate #storage-persist
//
// Messages to the worker ({type, …} → {ok: true, …} | {ok: false, error: {code, message}}):
//   setup {site_url, device_token, device_id, done_retention_days?}   device {}
//                                       (done items are pruned after done_retention_days, 7 by default)
//   open_session {operator_id, mode, context?, session_id?} → {session_id, key, client_seq, id}
//   capture {session_id, command?: "scan"|"undo", body} → {key, client_seq, id}
//   capture_many {session_id, command?, bodies: [body, …]} → {items: [{key, client_seq, id} | {error}]}
//                                       (a sled's burst; at most 1,000 a message)
//   close_session {session_id}
//   list {after?, limit?} → {items: [{id, key, client_seq, command, state, why, …}], next_after}
//   counts {} → {queued, sending, done, rejected, blocked, voided, oldest_queued_at, oldest_queued_age_ms}
//   retry_now {}   wake {} (drain on schedule; heartbeat if due)   discard {id} → {void}   acknowledge {id}   storage {} → {usage, quota}
//   ping {} → {ok} (answered by sw.js itself: the messaging floor)
// window.stockhop.ask(message) is the same call, for scripts and tests.
//
// Put-away: a scanned code that is one of the site's bin labels chooses the
// bin; unit scans are refused ("scan a bin label first") until one is
// chosen, and each carries `bin`. The site's bins come from
// GET /v1/reference (the device token, when online) and are kept in
// localStorage, so the page knows them offline.

const $ = (id) => document.getElementById(id);
const SESSION_KEY = 'stockhop.session';
/** The site's bin labels, which site they are of, and the reference cursor
 * they were read up to. */
const BINS_KEY = 'stockhop.bins';
/** The device token, kept from setup to read the site's reference data. */
const TOKEN_KEY = 'stockhop.device_token';
/** Rows a reference page may carry (the site's own ceiling). */
const REFERENCE_PAGE_ROWS = 2000;
/** How long a reference read may take before the page uses its copy. */
const REFERENCE_TIMEOUT_MS = 5000;
const QUEUE_REFRESH_MS = 3000;
// The browser stops an idle service worker, and its timers with it: while
// the page is open it wakes the worker this often, so the heartbeat goes
// out when due (the worker decides; the shortest profile period is 60 s).
const WAKE_EVERY_MS = 60 * 1000;
const STORAGE_WARN_RATIO = 0.8;

let registration = null;

async function worker() {
  if (!registration) {
    registration = await navigator.serviceWorker.ready;
  }
  return navigator.serviceWorker.controller || registration.active;
}

async function ask(message) {
  const target = await worker();
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = (event) => resolve(event.data);
    target.postMessage(message, [channel.port2]);
  });
}

function show(id, text, kind) {
  const el = $(id);
  el.textContent = text;
  el.className = 'status' + (kind ? ' ' + kind : '');
}

function failure(reply) {
  return reply && reply.error ? `${reply.error.code}: ${reply.error.message}` : 'no reply';
}

// ---- device setup -------------------------------------------------------

async function saveSetup(site_url, device_token, device_id) {
  const reply = await ask({ type: 'setup', site_url, device_token, device_id });
  if (reply.ok) {
    siteUrl = site_url;
    localStorage.setItem(TOKEN_KEY, device_token);
    show('setup-status', `Set up as ${device_id} → ${site_url}`);
    refreshBins();
  } else {
    show('setup-status', failure(reply), 'error');
  }
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

async function showDevice() {
  const reply = await ask({ type: 'device' });
  if (reply.ok && reply.configured) {
    siteUrl = reply.site_url;
    $('site-url').value = reply.site_url;
    $('device-id').value = reply.device_id;
    show('setup-status', `Set up as ${reply.device_id} → ${reply.site_url}`);
  } else if (reply.ok) {
    show('setup-status', 'Not set up: scans are kept on this device until it is.', 'warn');
  }
}

// ---- the site's bins -----------------------------------------------------

let siteUrl = null;

function cachedBins() {
  try {
    const cached = JSON.parse(localStorage.getItem(BINS_KEY));
    // Another site's bins are not this one's.
    if (cached && Array.isArray(cached.bins) && (!siteUrl || cached.site === siteUrl)) return cached;
  } catch {
    // an unreadable copy is read again from the start
  }
  return { site: siteUrl, cursor: '', bins: [] };
}

let bins = new Set(cachedBins().bins);

/**
 * Reads the bins changed since the kept cursor, page by page, and keeps
 * them; offline (or on any failure) the kept copy stands.
 */
async function refreshBins() {
  const token = localStorage.getItem(TOKEN_KEY);
  if (!siteUrl || !token) return;
  const cached = cachedBins();
  const known = new Set(cached.bins);
  bins = known;
  let cursor = cached.cursor;
  try {
    for (;;) {
      const url = new URL('/v1/reference', siteUrl);
      if (cursor) url.searchParams.set('after', cursor);
      url.searchParams.set('limit', String(REFERENCE_PAGE_ROWS));
      const res = await fetch(url, {
        headers: { authorization: `Bearer ${token}` },
        signal: AbortSignal.timeout(REFERENCE_TIMEOUT_MS),
      });
      if (!res.ok) return;
      const page = await res.json();
      for (const bin of page.bins) known.add(bin.bin);
      cursor = page.cursor;
      localStorage.setItem(BINS_KEY, JSON.stringify({ site: siteUrl, cursor, bins: [...known] }));
      bins = known;
      if (!page.more) return;
    }
  } catch {
    // offline: the kept bins stand
  }
}

// ---- session ------------------------------------------------------------

function currentSession() {
  try {
    return JSON.parse(localStorage.getItem(SESSION_KEY));
  } catch {
    return null;
  }
}

function renderSession() {
  const session = currentSession();
  $('session-close').disabled = !session;
  $('session-open').disabled = !!session;
  $('scan-input').disabled = !session;
  if (session) {
    show('session-status', `Open: ${session.operator_id}, ${session.mode} (${session.session_id})`);
    $('scan-input').focus();
  } else {
    show('session-status', 'No open session.');
  }
  renderBin(session);
}

function renderBin(session) {
  const binLine = $('scan-bin');
  binLine.hidden = !session || session.mode !== 'put_away';
  if (binLine.hidden) return;
  if (session.bin) show('scan-bin', `Bin ${session.bin}: scan its units`);
  else show('scan-bin', 'Scan a bin label first.', 'warn');
}

async function openSession(event) {
  event.preventDefault();
  const operator_id = $('operator-id').value.trim();
  const mode = $('mode').value;
  const reply = await ask({ type: 'open_session', operator_id, mode });
  if (!reply.ok) {
    show('session-status', failure(reply), 'error');
    return;
  }
  localStorage.setItem(SESSION_KEY, JSON.stringify({ session_id: reply.session_id, operator_id, mode }));
  renderSession();
  refreshQueue();
}

async function closeSession() {
  const session = currentSession();
  if (!session) return;
  const reply = await ask({ type: 'close_session', session_id: session.session_id });
  if (!reply.ok && reply.error.code !== 'SESSION_CLOSED') {
    show('session-status', failure(reply), 'error');
    return;
  }
  localStorage.removeItem(SESSION_KEY);
  renderSession();
  refreshQueue();
}

// ---- scanning -----------------------------------------------------------

let captured = 0;
let failed = 0;
let refused = 0;

function onScanKey(event) {
  if (event.key !== 'Enter') return;
  event.preventDefault();
  // Read and clear synchronously: the wedge's next burst is already queued
  // behind this event, and awaiting first would mix it into this code.
  const code = $('scan-input').value.trim();
  $('scan-input').value = '';
  if (!code) return;
  const session = currentSession();
  if (!session) return;
  const body = { mode: session.mode };
  if (session.mode === 'put_away') {
    // Synchronous, like the read above: a wedge types a bin label and its
    // units in one burst.
    if (bins.has(code)) {
      session.bin = code;
      localStorage.setItem(SESSION_KEY, JSON.stringify(session));
      renderBin(session);
      show('scan-status', `Bin ${code}`);
      return;
    }
    if (!session.bin) {
      refused += 1;
      $('scan-refused').textContent = String(refused);
      show('scan-status', `Scan a bin label first: ${code} was not captured.`, 'error');
      return;
    }
    body.bin = session.bin;
  }
  if (/^[0-9A-Fa-f]{24}$/.test(code)) body.epc = code.toUpperCase();
  else body.code = code;
  ask({ type: 'capture', session_id: session.session_id, body }).then((reply) => {
    if (reply.ok) {
      captured += 1;
      $('scan-count').textContent = String(captured);
      show('scan-status', `Captured #${reply.client_seq}: ${code}`);
    } else {
      failed += 1;
      $('scan-failed').textContent = String(failed);
      show('scan-status', `NOT captured ${code}: ${failure(reply)}`, 'error');
    }
  });
}

// ---- queue screen -------------------------------------------------------

let nextAfter = null;

function row(item) {
  const tr = document.createElement('tr');
  tr.dataset.id = item.id;
  tr.dataset.state = item.state;
  const cells = [item.id, item.client_seq, item.command, item.state, item.why || ''];
  for (const text of cells) {
    const td = document.createElement('td');
    td.textContent = text == null ? '' : String(text);
    tr.appendChild(td);
  }
  const actions = document.createElement('td');
  if (item.state === 'blocked') actions.appendChild(button('discard', item.id, 'Discard'));
  if (item.state === 'rejected' && !item.acknowledged) actions.appendChild(button('acknowledge', item.id, 'Acknowledge'));
  tr.appendChild(actions);
  return tr;
}

function button(action, id, label) {
  const b = document.createElement('button');
  b.type = 'button';
  b.dataset.action = action;
  b.dataset.id = id;
  b.textContent = label;
  return b;
}

async function refreshQueue() {
  const counts = await ask({ type: 'counts' });
  if (counts.ok) {
    show('queue-counts', `queued ${counts.queued} · sending ${counts.sending} · done ${counts.done} · ` +
      `rejected ${counts.rejected} · blocked ${counts.blocked} · voided ${counts.voided}`);
    const age = counts.oldest_queued_age_ms;
    show('queue-oldest', age == null ? 'Nothing waiting.' : `Oldest waiting: ${Math.round(age / 1000)} s`,
      age > 60000 ? 'warn' : '');
  }
  const list = await ask({ type: 'list', limit: 50 });
  const body = $('queue-list');
  body.replaceChildren();
  appendRows(list);
}

function appendRows(list) {
  if (!list.ok) {
    show('queue-status', failure(list), 'error');
    return;
  }
  for (const item of list.items) $('queue-list').appendChild(row(item));
  nextAfter = list.next_after;
  $('queue-more').hidden = list.items.length === 0 || nextAfter == null;
}

async function moreQueue() {
  appendRows(await ask({ type: 'list', after: nextAfter, limit: 50 }));
}

async function onQueueAction(event) {
  const target = event.target.closest('button[data-action]');
  if (!target) return;
  const reply = await ask({ type: target.dataset.action, id: Number(target.dataset.id) });
  show('queue-status', reply.ok ? `${target.dataset.action}: done` : failure(reply), reply.ok ? '' : 'error');
  refreshQueue();
}

async function retryNow() {
  const reply = await ask({ type: 'retry_now' });
  show('queue-status', reply.ok ? `sent ${reply.items_sent} in ${reply.requests} request(s)` : failure(reply),
    reply.ok ? '' : 'error');
  refreshQueue();
}

// ---- storage ------------------------------------------------------------

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
  show('storage-estimate', `Using ${(usage / 1e6).toFixed(1)} MB of ${(quota / 1e6).toFixed(0)} MB`,
    ratio > STORAGE_WARN_RATIO ? 'warn' : '');
}

// ---- start --------------------------------------------------------------

async function start() {
  if (!window.isSecureContext) {
    // Browsers run service workers only over HTTPS (or on the site machine
    // itself): without one there is no offline queue.
    show('worker-status', 'Not secure: open this site over https:// (trust the site CA from /trust.html first).', 'error');
    return;
  }
  if (!('serviceWorker' in navigator)) {
    show('worker-status', 'No service worker support: scans cannot be kept offline.', 'error');
    return;
  }
  await navigator.serviceWorker.register('/sw.js', { type: 'module' });
  await worker();
  $('worker-status').textContent = 'ready';
  window.stockhop = { ask };
  $('setup-form').addEventListener('submit', (event) => {
    event.preventDefault();
    saveSetup($('site-url').value.trim(), $('device-token').value, $('device-id').value.trim());
  });
  $('session-form').addEventListener('submit', openSession);
  $('session-close').addEventListener('click', closeSession);
  $('scan-input').addEventListener('keydown', onScanKey);
  $('queue-refresh').addEventListener('click', refreshQueue);
  $('queue-retry').addEventListener('click', retryNow);
  $('queue-more').addEventListener('click', moreQueue);
  $('queue-list').addEventListener('click', onQueueAction);
  // Page-driven wake-ups, for browsers without Background Sync.
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible') ask({ type: 'wake' });
  });
  window.addEventListener('online', () => {
    ask({ type: 'wake' });
    refreshBins();
  });
  await setupFromFragment();
  await showDevice();
  // Before the page says ready: a put-away's first scan may be a bin label.
  await refreshBins();
  renderSession();
  await refreshQueue();
  storage();
  setInterval(() => {
    if (document.visibilityState === 'visible') refreshQueue();
  }, QUEUE_REFRESH_MS);
  setInterval(() => ask({ type: 'wake' }).catch(() => {}), WAKE_EVERY_MS);
  document.body.dataset.ready = 'true';
}

start().catch((err) => show('worker-status', String(err), 'error'));
