// The site, as the page reads it: the reference cache's status through
// the worker (and a pull first when asked), the site's light (/healthz),
// and the live reads a mode makes itself with the device token kept from
// setup (a manifest, a count's figures, the station's printer).

import { withTimeout } from './dom.js';
import { emit } from './events.js';
import { takeOperators } from './operators.js';
import * as state from './state.js';
import { ask } from './worker.js';

/** The device token, kept from setup for the reads the page makes itself. */
export const TOKEN_KEY = 'stockhop.device_token';
/** How long a question to the site, and a live read, may take before the answer is "offline". */
export const SITE_TIMEOUT_MS = 4000;
/** How long start-up waits for the reference cache before showing what it has. */
export const REFERENCE_WAIT_MS = 15000;
/** How long a scan of something the cache lacks waits for the site's changes before it is refused. */
export const LOOKUP_WAIT_MS = 3000;

/** Reads the cache's status (pulling first with `refresh`) and the bins. */
export async function loadReference(refresh) {
  if (refresh) await withTimeout(ask({ type: 'reference_refresh' }), REFERENCE_WAIT_MS);
  const status = await ask({ type: 'reference_status' });
  if (status.ok) await takeReference(status);
}

/** Forgets the status last read, so the next one counts as changed (the menu's refresh). */
export function forgetReference() {
  state.setReference(null);
}

/**
 * Takes a `reference_status` answer: when the cache moved on (its cursor)
 * or the site's word on this device changed, the rows the screens hold
 * (bins, the open GRN) are read again. The comparison is with what the
 * page last read, so the one place that keeps the status is here.
 */
export async function takeReference(status) {
  const before = state.reference();
  const changed = !before || before.cursor !== status.cursor
    || JSON.stringify(before.device) !== JSON.stringify(status.device);
  state.setReference(status);
  takeOperators(status);
  if (changed) {
    const list = await ask({ type: 'reference_list', kind: 'bins' });
    if (list.ok) state.setBins(new Map(list.rows.map((row) => [row.bin, row])));
  }
  await emit('reference', { changed });
}

/**
 * Something scanned is not in the cache: when the site answers, its
 * changes are read (bounded by LOOKUP_WAIT_MS) before the scan is refused,
 * so a bin or GRN added mid-shift is known at once. Resolves true when the
 * cache moved on.
 */
export async function askSiteFirst() {
  if (state.online() === false || !state.device().siteUrl) return false;
  const before = state.reference() && state.reference().cursor;
  const reply = await withTimeout(ask({ type: 'reference_refresh' }), LOOKUP_WAIT_MS);
  if (!reply || !reply.ok) return false;
  await takeReference(reply);
  return reply.cursor !== before;
}

/** Asks the site whether it answers, for the status bar's light. */
export async function checkOnline() {
  const { siteUrl } = state.device();
  if (!siteUrl) return;
  let ok = false;
  try {
    await fetch(new URL('/healthz', siteUrl), { mode: 'no-cors', cache: 'no-store', signal: AbortSignal.timeout(SITE_TIMEOUT_MS) });
    ok = navigator.onLine !== false;
  } catch {
    ok = false;
  }
  if (ok) await siteAnswered();
  else if (state.setOnline(false)) emit('online', false);
}

/**
 * The site answered one of the page's requests: the light turns on, and
 * when it was off (the site was out of reach), the queue is sent at once
 * rather than when the worker's backoff ends.
 */
async function siteAnswered() {
  if (!state.setOnline(true)) return;
  ask({ type: 'retry_now' });
  loadReference(false);
  await emit('online', true);
}

/**
 * Reads what the site last said of this device through the worker (its
 * token refused, the sessions it closed); a change is emitted as `word`.
 */
export async function readSiteWord() {
  const reply = await ask({ type: 'device' });
  if (!reply.ok) return;
  const before = state.word();
  const word = { refused: reply.refused, closed_sessions: reply.closed_sessions };
  state.setWord(word);
  const key = (w) => (w ? JSON.stringify([w.refused, w.closed_sessions]) : '');
  if (key(before) !== key(word)) await emit('word', word);
}

/** The browser says the network is gone. */
export function wentOffline() {
  state.setOnline(false);
  emit('online', false);
}

/** A live read of the site with the device token: the JSON, or {offline} / {status}. */
export async function siteGet(path) {
  const token = localStorage.getItem(TOKEN_KEY);
  const { siteUrl } = state.device();
  if (!siteUrl || !token) return { offline: true };
  try {
    const res = await fetch(new URL(path, siteUrl), {
      headers: { authorization: `Bearer ${token}` },
      cache: 'no-store',
      signal: AbortSignal.timeout(SITE_TIMEOUT_MS),
    });
    const refusedBefore = state.refused();
    state.setRefusedHere(res.status === 401);
    if (state.refused() !== refusedBefore) emit('word', state.word());
    if (state.online() !== true) siteAnswered();
    if (!res.ok) return { status: res.status };
    return { body: await res.json() };
  } catch {
    return { offline: true };
  }
}
