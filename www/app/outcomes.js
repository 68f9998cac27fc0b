// What the ledger decided, at the glass: the queue is walked (all of it,
// in pages) and each answer reaches its scan's row; a new refusal sounds
// once (kept across reloads), and one that came after an outage raises
// the banner that stays until the operator has seen it. While scans wait
// for the site, the queue's counts are watched so an answer reaches its
// row within about OUTCOME_POLL_MS. The TRAINING banner is here too.

import { $, el, loadJson, show } from './dom.js';
import { emit, on } from './events.js';
import { rowOf, rows, scheduleResults } from './results.js';
import { focusScan } from './screens.js';
import * as state from './state.js';
import { ask } from './worker.js';
import * as release from '../release.js';
import { explain, t } from './l10n.js';
import { signal } from '../signal.js';

/**
 * A refusal raises the banner that stays until seen (not only its row and
 * tone) when it came after an outage: its scan was kept while the page saw
 * the site offline or before it last did, or its answer landed this long
 * after its capture (a backlog), when the picker has moved on.
 */
const LATE_ANSWER_MS = 10 * 1000;
/** How often the page looks for answers while scans wait for the site (a refusal's tone within about this). */
const OUTCOME_POLL_MS = 400;
/** Items one `list` message reads while the queue is walked. */
const WALK_PAGE_ITEMS = 500;
/** The refusals already signalled (by item id), so a reload does not sound them again. */
const SIGNALLED_KEY = 'stockhop.signalled';
/** How many of those ids are kept: far more than an operator leaves undecided. */
const SIGNALLED_MAX = 2000;

/** Refusals already signalled, by item id (kept across reloads). */
const signalled = new Set(loadJson(SIGNALLED_KEY, []));
/** Late refusals the operator has not yet seen: [{id, reason, at}]. */
let lateRefusals = [];
let outcomeTimer = null;
let lastOutcomeCounts = '';

function rememberSignalled(id) {
  signalled.add(id);
  const ids = [...signalled];
  localStorage.setItem(SIGNALLED_KEY, JSON.stringify(ids.slice(-SIGNALLED_MAX)));
}

/** Walks the queue: the open session's items, what waits for a decision, and every answer into its row. */
export async function walkQueue() {
  const session = state.session();
  const items = [];
  const every = [];
  let after;
  let open = 0;
  // The device's whole queue is small in normal work (done items are
  // pruned); walk it in pages.
  for (;;) {
    const reply = await ask({ type: 'list', after, limit: WALK_PAGE_ITEMS });
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
  state.setUnacknowledged(open);
  state.setQueue(every, items);
  takeOutcomes(every);
  await emit('queue');
}

/**
 * Reads the queue's answers into the scan rows (kept → applied, or
 * refused with the reason), and signals each new refusal once: its tone
 * and vibration, and when it came late (after an outage) the banner.
 */
function takeOutcomes(items) {
  const byKey = new Map(items.map((item) => [item.key, item]));
  let rowsChanged = false;
  for (const entry of rows()) {
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
    const entry = rowOf(item.key);
    if (entry && entry.announced) continue;
    fresh.push(item);
  }
  if (fresh.length) {
    const offlineSeenAt = state.offlineSeenAt();
    const late = fresh.filter((item) => {
      const entry = rowOf(item.key);
      return (entry && entry.offline) || (item.updated_at ?? Date.now()) - item.occurred_at > LATE_ANSWER_MS
        || (offlineSeenAt != null && item.occurred_at <= offlineSeenAt);
    });
    // A blocking item, or a refusal the picker has moved on from, stops work: the alert.
    signal(late.length || fresh.some((item) => item.state === 'blocked') ? 'alert' : 'refused');
    if (late.length) {
      lateRefusals.push(...late.map((item) => ({ id: item.id, reason: item.reason, at: item.updated_at })));
      renderLateBanner();
    }
    const newest = fresh[fresh.length - 1];
    const why = explain(newest.reason);
    if (why && state.screen() === 'mode') show('scan-status', t('outcome-refused-seq', { seq: newest.client_seq, words: why.words }), 'error');
  }
  if (rowsChanged) {
    scheduleResults();
    emit('results');
  }
}

/** A row's kind from its item's state. */
function kindOf(item) {
  switch (item.state) {
    case 'done':
      return state.training() ? 'training' : 'applied';
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

export function renderTraining() {
  const on = state.training();
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
    el('strong', { text: t('late-refused', { count: n }) }), ' ',
    el('span', { text: first ? t('reason-words-next', { words: first.words, next: first.next }) : '' }), ' ',
    first ? el('small', { class: 'code', text: first.code }) : '');
}

/** The operator has seen the late refusals: the banner goes; they still wait on the queue screen. */
export function lateSeen() {
  lateRefusals = [];
  renderLateBanner();
  focusScan();
}

/**
 * While scans wait for the site, the queue's counts are read every
 * OUTCOME_POLL_MS and the queue walked when they move, so an answer
 * reaches its row (and a refusal its tone) within about that.
 */
export function watchOutcomes() {
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
      state.takeCounts(counts);
      await walkQueue();
    }
    if (counts.queued + counts.sending > 0 || rows().some((r) => r.kind === 'kept' || r.kind === 'pending')) watchOutcomes();
  }, OUTCOME_POLL_MS);
}

export function wire() {
  on('reference', renderTraining);
  on('captured', (reply) => {
    if (reply && reply.ok) watchOutcomes();
  });
  on('online', (ok) => {
    if (ok) watchOutcomes();
  });
  $('late-seen').addEventListener('click', lateSeen);
}
