// Stockhop handheld app: device setup (once), the mode picker, the five
// mode screens, the queue screen and the menu, under a status bar that
// never scrolls away and above one always-focused scan field. Everything
// durable happens in the service worker (sw.js → wasm): the queue and the
// reference cache; the page asks it, one message per action, each with a
// MessageChannel port for the reply.
//
// This module starts the page and wires what no screen owns. The first
// screen shows from what the page and its preloaded modules hold, before
// the service worker answers (on a handheld's first start the worker is
// still caching the shell and compiling the module): setup, or the picker
// and its badge prompt. Until the page has started, a scan typed is held
// in the page (release.js) and handled in order once it has, so the
// wedge's first read is never lost or refused.
//
// The app is
// the ES modules under app/ (no bundler: the browser loads them, and the
// worker caches each with the shell, as shell.json lists them):
//   app/dom.js, app/events.js (what changed, for the screens that show it),
//   app/state.js (the shared state and its accessors), app/worker.js (ask),
//   app/constants.js (the site's command barcodes and undo window),
//   app/site.js, app/lookup.js, app/operators.js, app/setup.js,
//   app/screens.js, app/bar.js, app/picker.js, app/sign_in.js,
//   app/mode_screen.js, app/modes/ (one module per mode: its screen, what
//   it needs and its scan handling), app/scan.js, app/capture.js,
//   app/results.js, app/outcomes.js, app/undo.js, app/dialogs.js,
//   app/queue_screen.js, app/menu.js, app/storage.js.
//
// Element ids (stable; the end-to-end suite drives them):
//   #status-bar (tap: the queue screen) #net-status[data-net="online"|"offline"|"refused"]
//     #bar-queue #bar-oldest #bar-attention #bar-cache   #menu-button
//   #worker-status                      shown only when the worker failed
//   #banners: #refused-banner (the site refused this handheld's token) #training (the site says this device is not commissioned) #late-banner
//     (refusals that came after an outage: #late-text #late-show #late-seen)
//   #screen-setup #setup-form #site-url #device-id #device-token #setup-save #setup-back
//     #setup-status[data-failure="url"|"mixed"|"unreachable"|"port"|"certificate"|"token"|"device"|"site"]
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
//     #manifest-units li[data-epc][data-verified="true"|"waiting"|"undo-waiting"|"false"] #find-result[data-found] #find-age
//     #count-missing #count-unexpected #count-age #manifest-age #grn-age
//     #scan-status (the last scan's result) #results li[data-key][data-kind="pending"|"kept"|
//     "applied"|"training"|"refused"|"blocked"|"voided"|"failed"|"undone"|"ok"][data-state]
//     (.why, .next, small.code for a refusal) with button[data-action="undo"][data-key]
//     where the ledger will honour it #results-more (every row kept, or the last few) #mode-switch #session-close
//   #screen-queue #queue-back #queue-counts #queue-oldest #queue-next (the drain's next try) #queue-retry #queue-refresh
//     #queue-filter-all #queue-filter-decide
//     #queue-list li[data-id][data-state][data-label="S-<session> #<seq> <command>"][data-decide]
//     with buttons [data-action="discard"|"acknowledge"|"undo"|"rescan"][data-id] #queue-more #queue-status
//     #queue-export #queue-export-box[data-items][data-name] #queue-export-status #queue-export-save (<a download>)
//     #queue-export-share (shown where navigator.canShare takes the file)
//   #screen-menu #menu-back #menu-queue #menu-switch #menu-refresh #menu-commands (/commands)
//     #menu-setup #menu-signals[aria-pressed] #menu-idle #menu-device #menu-reference
//     #storage-estimate #storage-persist
//   #confirm (a yes/no question: #confirm-title #confirm-text #confirm-yes #confirm-no)
//   #scan-input (the keyboard wedge: each scan ends with Enter) #scan-count #scan-failed #scan-refused
//   #alert (blocking) #alert-title #alert-text #alert-ack
//   body[data-shown="true"] once the first screen shows, before the worker answers (not with a
//     session open); body[data-ready="true"] once started (held scans handled, the field handles);
//     body[data-screen] the screen shown
//
// Messages to the worker ({type, …} → {ok: true, …} | {ok: false, error: {code, message}}):
//   setup {site_url, device_token, device_id, done_retention_days?}
//   device {} → {configured, site_url?, device_id?, refused (the site refused its token: 401),
//                closed_sessions: [{session_id, closed_at}] (as the last heartbeat's answer listed them)}
//   wake {} → {requests, items_sent, pending, next_attempt_at (when the backoff ends) | null, not_configured}
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
//   read_label {text} → {kind, names, text, gtin?, serial?, lot?, expiry?, sscc?, epc?, unit, bin, sku?} | {refused: {error, ai?, message}}
//   export_queue {} → {items, name, bytes, file (a Uint8Array: the rescue file, stockhop-rescue-<device>-<instant>.jsonl)}
//                     | {items: 0, name: null, bytes: 0, file: null} when nothing waits; changes nothing
// window.stockhop.ask(message) is the same call, for scripts and tests.
//
// The page reads the site itself only where a mode needs it live: the
// manifest dispatch verify checks against (GET /v1/manifests/{id}) and a
// count's figures (GET /v1/counts/{id}), with the device token kept from
// setup in localStorage; /healthz for the status bar's online light; at
// setup, /healthz and one page of /v1/reference to check the site and the
// token before they are saved; and GET /v1/handheld/constants (the command
// barcodes, the undo window) at start, kept for offline starts.
//
// What the ledger answers reaches each scan's row (reasons.js words every
// reason and blocking code); signal.js sounds and vibrates kept, refused
// and the blocking alert.

import { $, show } from './app/dom.js';
import { deviceLocale, msg, setLanguage, t } from './app/l10n.js';
import { operatorLanguage } from './app/operators.js';
import * as bar from './app/bar.js';
import * as constants from './app/constants.js';
import * as dialogs from './app/dialogs.js';
import { on } from './app/events.js';
import * as menu from './app/menu.js';
import * as modeScreen from './app/mode_screen.js';
import * as outcomes from './app/outcomes.js';
import * as picker from './app/picker.js';
import * as queueScreen from './app/queue_screen.js';
import { rowOf, scheduleResults } from './app/results.js';
import { chain, enqueue, onScanKey, queueScan } from './app/scan.js';
import { back, focusScan, go } from './app/screens.js';
import * as setup from './app/setup.js';
import * as signIn from './app/sign_in.js';
import { checkOnline, loadReference, siteGet, TOKEN_KEY, wentOffline } from './app/site.js';
import * as state from './app/state.js';
import { ask, worker } from './app/worker.js';
import { current } from './app/modes/index.js';
import * as labels from './labels.js';
import * as release from './release.js';
import { unlockAudio } from './signal.js';

/** How often the status bar and an open queue screen are refreshed. */
const REFRESH_EVERY_MS = 2000;
/** How often the page asks the site whether it answers (the online light). */
const HEALTH_EVERY_MS = 5000;
/**
 * How often it asks while the site does not answer: the site back is seen
 * within about this, and the queue then drains at once (one small request
 * a second, only during an outage).
 */
const HEALTH_OFFLINE_EVERY_MS = 1000;
// The browser stops an idle service worker, and its timers with it: while
// the page is open it wakes the worker this often, so the heartbeat goes
// out when due (the worker decides; the shortest profile period is 60 s).
const WAKE_EVERY_MS = 60 * 1000;
/** The scan field's words while the page starts: what is scanned now is not lost. */
const STARTING_PLACEHOLDER = msg('starting-placeholder');
/** The picker's words while the page starts, before the worker has said what it holds. */
const STARTING_WORDS = msg('starting-words');

function wire() {
  setup.wire();
  dialogs.wire();
  bar.wire();
  outcomes.wire();
  picker.wire();
  signIn.wire();
  modeScreen.wire();
  queueScreen.wire();
  menu.wire();
  // The site's constants again once it answers, when the page has none yet.
  on('online', (ok) => {
    if (ok && !constants.known()) constants.load();
  });
  $('late-show').addEventListener('click', () => {
    outcomes.lateSeen();
    queueScreen.showToDecide();
  });
  // A browser lets a page sound only after a key or a tap: the first one makes the audio context.
  for (const type of ['keydown', 'pointerdown']) {
    document.addEventListener(type, () => {
      unlockAudio();
      signIn.touch();
    }, { capture: true, passive: true });
  }
  // The banners under the status bar push the screens down by their height.
  new ResizeObserver(() => {
    document.body.style.setProperty('--banners-h', `${$('banners').offsetHeight}px`);
  }).observe($('banners'));
  $('status-bar').addEventListener('click', () => go(state.screen() === 'queue' ? (state.session() ? 'mode' : 'picker') : 'queue'));
  $('queue-back').addEventListener('click', back);
  $('scan-input').addEventListener('keydown', onScanKey);
  // The scan field takes the focus back from whatever a tap gave it to.
  $('scan-input').addEventListener('blur', () => setTimeout(focusScan, 0));
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible') ask({ type: 'wake' });
  });
  window.addEventListener('online', checkOnline);
  // A setup link opened while the app is open changes only the fragment.
  window.addEventListener('hashchange', () => {
    enqueue(setup.setupFromFragment);
  });
  window.addEventListener('offline', wentOffline);
}

/**
 * The first screen, from what the page keeps itself (no worker yet):
 * setup while it holds no device token (a setup keeps one), else the
 * picker with its badge prompt. A session left open waits for the
 * worker: its screen reads the queue.
 */
function firstScreen() {
  if (state.session()) return;
  if (localStorage.getItem(TOKEN_KEY)) {
    go('picker');
    show('picker-status', t(STARTING_WORDS));
  } else {
    go('setup');
  }
  document.body.dataset.shown = 'true';
}

async function start() {
  if (!window.isSecureContext) {
    // Browsers run service workers only over HTTPS (or on the site machine
    // itself): without one there is no offline queue.
    $('worker-status').hidden = false;
    show('worker-status', t('worker-not-secure'), 'error');
    return;
  }
  if (!('serviceWorker' in navigator)) {
    $('worker-status').hidden = false;
    show('worker-status', t('worker-no-support'), 'error');
    return;
  }
  // Scans typed from here on are held until the page has started
  // (release.js): the wedge types into a field that never drops a read,
  // rather than a disabled one that would.
  const input = $('scan-input');
  const placeholder = input.placeholder;
  input.placeholder = t(STARTING_PLACEHOLDER);
  wire();
  const constantsRead = constants.load();
  firstScreen();
  release.listen();
  await navigator.serviceWorker.register('/sw.js', { type: 'module' });
  await worker();
  $('worker-status').textContent = t('worker-ready');
  window.stockhop = { ask };
  labels.setup({
    get: siteGet,
    device: () => state.device().deviceId,
    stateOf: (key) => (rowOf(key) || {}).state,
    changed: () => {
      const session = state.session();
      if (state.screen() === 'mode' && session && session.mode === 'receive') modeScreen.renderDetail();
      scheduleResults();
    },
  });
  await constantsRead;
  await setup.setupFromFragment();
  if (!state.device().deviceId) await setup.readDevice();
  if (!state.reference()) await loadReference(!!state.device().deviceId);
  // An operator still signed in from before the reload: their language again.
  if (state.operator()) await setLanguage(operatorLanguage(state.operator()) || deviceLocale());
  checkOnline();
  const session = state.session();
  if (!state.device().deviceId) go('setup');
  else if (session) {
    const mode = current(session);
    if (mode && mode.resume) await mode.resume(session);
    go('mode');
  } else go('picker');
  await bar.refreshBar();
  setInterval(() => {
    if (document.visibilityState !== 'visible') return;
    if (state.screen() === 'queue') queueScreen.refreshQueue();
    else bar.refreshBar();
    if (state.screen() === 'mode') {
      scheduleResults();
      // Its figures' age (receive and count redraw with each walk of the queue).
      modeScreen.tick();
    }
    signIn.checkIdle();
  }, REFRESH_EVERY_MS);
  outcomes.watchOutcomes();
  const health = async () => {
    await checkOnline();
    setTimeout(health, state.online() === false ? HEALTH_OFFLINE_EVERY_MS : HEALTH_EVERY_MS);
  };
  setTimeout(health, HEALTH_EVERY_MS);
  setInterval(() => {
    if (!release.updating()) ask({ type: 'wake' }).catch(() => {});
  }, WAKE_EVERY_MS);
  await release.start({ scanChain: chain, handle: queueScan });
  input.placeholder = placeholder;
  document.body.dataset.ready = 'true';
}

start().catch((err) => {
  $('worker-status').hidden = false;
  show('worker-status', String(err), 'error');
});
