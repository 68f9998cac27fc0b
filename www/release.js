// Releases on the handheld page: which build this page is, which build
// the service worker runs, and the hand-over between them, so no capture
// is ever answered by a worker of another build than the page's.
//
// * The page's build is the one the site wrote into index.html (the
//   worker serves the shell from its own build's cache, so a page is the
//   build of the worker that served it). Every message the page sends
//   names it; the worker refuses a write from a page of another build
//   (BUILD_MISMATCH) and names its own build in every reply.
// * The page asks the site which build it serves (/version.json) every
//   CHECK_EVERY_MS, when the screen wakes and when the network returns;
//   a new build makes the browser check for a new worker at once.
// * A new worker, once its shell is cached and its module links, says
//   `release_ready`. The page holds the scans typed from then on (kept in
//   sessionStorage), waits until no scan is being handled and no request
//   is out, asks the new worker to take over, and reloads as it does; the
//   reloaded page (the new build) handles the held scans first. From the
//   question on, the page sends nothing to the old worker (`passage()`):
//   the browser activates the new worker only once it has stopped the old
//   one, and a message reaching the old worker as it stops starts it again.
//   A page whose accepted offer brought no new worker in CONTROL_WAIT_MS
//   reloads anyway: the navigation makes the browser stop the old worker
//   again. An offer the page missed or that went unanswered is made again
//   on the next check.
// * The page shows its first screen before its worker answers (app.js):
//   until it has started and agreed with the worker, the scans typed are
//   held the same way, and handled in typing order once it has.
// * A worker whose module or queue did not start (a failed link, a queue
//   written by a newer release) says why; the page shows it where the
//   operator sees it, and the worker reports it in the heartbeat.
//
// Element ids: #release-status[data-state="updating"|"ready"] (#release-text,
// #release-reload) · #worker-status (app.js's alert line) says why capture
// stopped · body[data-build] (this page's build) · body[data-worker-build] ·
// body[data-release="current"|"updating"|"ready"|"stopped"] ·
// body[data-handover="quiet"|"asking"|"taking-over"|"refused"] (the last
// hand-over's stage, for the site engineer reading a stuck page).

import { t } from './app/l10n.js';

const $ = (id) => document.getElementById(id);

/** This page's build, as the site served it. */
export const build = document.querySelector('meta[name="stockhop-build"]')?.content ?? 'unknown';

/** How often the page asks the site which build it serves. */
const CHECK_EVERY_MS = 30 * 1000;
/** How long that question may take. */
const CHECK_TIMEOUT_MS = 4000;
/** How long the page holds scans for a worker that was asked to take over. */
const TAKE_OVER_WAIT_MS = 10 * 1000;
/**
 * How long a page whose offer was accepted waits for the new worker to take
 * control: it takes over once every open page has asked (each within
 * TAKE_OVER_WAIT_MS of its offer) and the old worker has stopped.
 */
const CONTROL_WAIT_MS = 3 * TAKE_OVER_WAIT_MS;
/** Settled while the page may talk to its worker; pending once it asked another to take over. */
let gate = Promise.resolve();
let openGate = () => {};
/** Scans typed while the page hands over, replayed by the page that loads next. */
const HELD_KEY = 'stockhop.held_scans';
/** The page build → worker build pair this tab last reloaded for (no reload loops). */
const RELOADED_KEY = 'stockhop.reloaded_for';

/** Writes and other requests out to the worker, awaited before a hand-over. */
let out = 0;
let idle = [];
/**
 * The page is starting: from its first screen (shown before its worker
 * answers) until `start` has agreed with the worker, a typed scan is held
 * here, not handled, and handled in order once the page has started.
 */
let starting = true;
/** The hand-over is under way: scans are held, not handled. */
let holding = false;
let handingOver = false;
/** A worker that said `release_ready` while a hand-over was under way. */
let missed = null;
/** The scans held, in typing order: {code, at}; first those a page before this one held as it reloaded. */
let held = heldBefore();
/** The page's scan chain (app.js): settled when no scan is being handled. */
let chain = () => Promise.resolve();
/** Hands a held scan to the page's scan handling. */
let replay = () => {};

/** Counts `promise` (a request to the worker) out until it settles. */
export function track(promise) {
  out += 1;
  return promise.finally(() => {
    out -= 1;
    if (out === 0) for (const resolve of idle.splice(0)) resolve();
  });
}

/**
 * Resolves when the page may send its worker a message: at once, except
 * from the moment it asked a new worker to take over until the offer ends
 * (then the page reloads, or goes on with the worker it has).
 */
export function passage() {
  return gate;
}

/** A hand-over to another build is under way: the page's background reads wait. */
export function updating() {
  return handingOver;
}

/**
 * Holds a typed scan while the page starts or hands over (kept in
 * sessionStorage, so a reload carries it to the next page); false when
 * the page handles scans.
 */
export function hold(code, at) {
  if (!holding && !starting) return false;
  held.push({ code, at });
  sessionStorage.setItem(HELD_KEY, JSON.stringify(held));
  return true;
}

/** The scans the page before this one held (its hand-over reloaded it). */
function heldBefore() {
  try {
    const scans = JSON.parse(sessionStorage.getItem(HELD_KEY) || '[]');
    return Array.isArray(scans) ? scans : [];
  } catch {
    return [];
  }
}

/** Hands every held scan to the page's scan handling, in typing order. */
function replayHeld() {
  const scans = held.splice(0);
  sessionStorage.removeItem(HELD_KEY);
  for (const scan of scans) replay(scan.code, scan.at);
}

/**
 * Listens to the workers from the page's first screen on, before it has
 * started: a first worker whose install fails says why where the operator
 * sees it (the page would otherwise wait for it without a word), and a
 * new build's offer is taken as at any time (scans stay held until the
 * page has started).
 */
export function listen() {
  navigator.serviceWorker.addEventListener('message', onWorkerMessage);
}

/**
 * Starts the page's side of releases, the last step of the page's start:
 * `scanChain()` returns the page's scan chain; `handle(code, at)` handles
 * a held scan (typed before a reload, or while the page started), and
 * from here on the page handles what is typed.
 */
export async function start({ scanChain, handle }) {
  chain = scanChain;
  replay = handle;
  document.body.dataset.build = build;
  $('release-reload').addEventListener('click', () => location.reload());
  navigator.serviceWorker.addEventListener('controllerchange', agree);
  const registration = await navigator.serviceWorker.ready;
  registration.addEventListener('updatefound', () => watch(registration.installing));
  await agree();
  // Scans held by the page before this one, then those typed while this
  // one started, in order; a page reloading for its worker's build
  // leaves them to the page that loads next.
  starting = false;
  if (!handingOver) replayHeld();
  // A worker that finished installing before this page listened.
  const pending = registration.installing || registration.waiting;
  if (pending) offerTakeOver(pending);
  check();
  setInterval(check, CHECK_EVERY_MS);
  window.addEventListener('online', check);
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible') check();
  });
}

function show(state, text) {
  const banner = $('release-status');
  banner.hidden = !state;
  banner.dataset.state = state || '';
  $('release-text').textContent = text || '';
  $('release-reload').hidden = state !== 'ready';
}

/** The worker does not capture: the page's alert line says why. */
function stopped(error) {
  document.body.dataset.release = 'stopped';
  show(null);
  const line = $('worker-status');
  line.hidden = false;
  line.textContent = stopText(error);
  line.className = 'error';
}

/** Plain words for a worker that does not capture. */
function stopText(error) {
  if (error.code === 'SCHEMA_NEWER') {
    return t('release-schema-newer');
  }
  return t('release-stopped', { code: error.code, message: error.message });
}

/** Compares this page's build with the worker's; reloads or says why not. */
async function agree() {
  const worker = navigator.serviceWorker.controller;
  if (!worker) return;
  const reply = await ask(worker, { type: 'build' });
  if (!reply) return;
  document.body.dataset.workerBuild = reply.build;
  if (!reply.started) {
    stopped(reply.error);
    return;
  }
  $('worker-status').hidden = true;
  if (reply.build === build) {
    document.body.dataset.release = 'current';
    sessionStorage.removeItem(RELOADED_KEY);
    if (!handingOver) show(null);
    return;
  }
  // A page of another build than its worker: the reload brings the
  // worker's build, unless this tab already tried for this pair (or a
  // hand-over is already reloading it).
  if (handingOver) return;
  const pair = `${build}>${reply.build}`;
  if (sessionStorage.getItem(RELOADED_KEY) === pair) {
    document.body.dataset.release = 'ready';
    show('ready', t('release-ready', { build: reply.build }));
    return;
  }
  await reloadWhenQuiet(pair);
}

/**
 * Holds the scans typed from now on, then resolves once no scan is being
 * handled and nothing is out to the worker. Holding first means a steady
 * stream of scans cannot put the hand-over off; a request that is never
 * answered delays it by TAKE_OVER_WAIT_MS at most.
 */
async function quiet() {
  holding = true;
  const deadline = Date.now() + TAKE_OVER_WAIT_MS;
  for (;;) {
    const settled = chain();
    await settled;
    if (out > 0) {
      await Promise.race([
        new Promise((resolve) => idle.push(resolve)),
        new Promise((resolve) => setTimeout(resolve, Math.max(0, deadline - Date.now()))),
      ]);
    }
    if (settled === chain() && (out === 0 || Date.now() >= deadline)) return;
  }
}

async function reloadWhenQuiet(pair) {
  handingOver = true;
  document.body.dataset.release = 'updating';
  show('updating', t('release-updating'));
  await quiet();
  sessionStorage.setItem(RELOADED_KEY, pair);
  sessionStorage.setItem(HELD_KEY, JSON.stringify(held));
  location.reload();
}

function watch(worker) {
  if (!worker) return;
  worker.addEventListener('statechange', () => {
    if (worker.state === 'redundant' && !navigator.serviceWorker.controller) show(null);
  });
}

function onWorkerMessage(event) {
  const message = event.data || {};
  if (message.type === 'release_ready' && message.build !== build) {
    // Said while an offer is under way (to the same worker, before it had
    // installed): offered again once that one settles.
    if (handingOver) missed = event.source;
    else offerTakeOver(event.source);
  }
  if (message.type === 'release' && message.error) {
    // The worker in charge (or this page's own build) did not start: capture
    // is stopped. Another build that did not install leaves this one running.
    const running = document.body.dataset.workerBuild;
    if (!running || message.build === running || message.build === build) {
      stopped(message.error);
    } else {
      show('ready', t('release-failed', { build: message.build, code: message.error.code, running }));
      $('release-reload').hidden = true;
    }
  }
}

/** Lets an installed worker of another build take over between scans. */
async function offerTakeOver(worker) {
  if (handingOver || !worker) return;
  handingOver = true;
  document.body.dataset.release = 'updating';
  show('updating', t('release-updating'));
  // The new worker takes over by itself once it has waited long enough for
  // a page: that may happen while this page waits for quiet.
  let took = false;
  const tookOver = () => { took = true; };
  navigator.serviceWorker.addEventListener('controllerchange', tookOver, { once: true });
  document.body.dataset.handover = 'quiet';
  await quiet();
  document.body.dataset.handover = 'asking';
  gate = new Promise((resolve) => { openGate = resolve; });
  const changed = took ? Promise.resolve(true) : new Promise((resolve) => {
    navigator.serviceWorker.addEventListener('controllerchange', () => resolve(true), { once: true });
    setTimeout(() => resolve(false), CONTROL_WAIT_MS);
  });
  const reply = took ? { ok: true } : await ask(worker, { type: 'take_over' });
  navigator.serviceWorker.removeEventListener('controllerchange', tookOver);
  document.body.dataset.handover = reply && reply.ok ? 'taking-over' : 'refused';
  if (reply && reply.ok) {
    // Taken over, or not yet: the old worker was started again as it
    // stopped, and the reload's navigation has the browser stop it again.
    // The reloaded page hands over again if it is still the old build.
    await changed;
    sessionStorage.setItem(HELD_KEY, JSON.stringify(held));
    location.reload();
    return;
  }
  // Not installed yet (it says release_ready when it is): the held scans
  // are handled here, in order.
  openGate();
  holding = false;
  handingOver = false;
  // A page still starting handles them once it has started.
  if (!starting) replayHeld();
  document.body.dataset.release = 'current';
  show(null);
  // The worker in charge may have changed after all (late, or on its own):
  // compare again, so the page never stays on another build than its worker.
  await agree();
  const again = missed;
  missed = null;
  if (again && !handingOver) offerTakeOver(again);
}

/** Asks the site which build it serves; a new one makes the browser look for its worker. */
export async function check() {
  if (handingOver) return;
  try {
    const response = await fetch('/version.json', { cache: 'no-store', signal: AbortSignal.timeout(CHECK_TIMEOUT_MS) });
    if (!response.ok) return;
    const served = await response.json();
    const registration = await navigator.serviceWorker.ready;
    if (served.build !== build) await registration.update();
    // A new worker whose offer to take over went unanswered (it had not
    // installed yet, or the page was busy): offered again.
    const pending = registration.waiting || registration.installing;
    if (pending) offerTakeOver(pending);
  } catch {
    // Offline: the next check, or the network's return, asks again.
  }
}

/** One message to `worker` and its reply (null when it does not answer in time). */
function ask(worker, message) {
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    const timer = setTimeout(() => resolve(null), TAKE_OVER_WAIT_MS);
    channel.port1.onmessage = (event) => {
      clearTimeout(timer);
      resolve(event.data);
    };
    worker.postMessage(message, [channel.port2]);
  });
}
