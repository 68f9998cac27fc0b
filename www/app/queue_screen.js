// The queue screen: every item on this device, what waits for a person
// first (blocked, or refused and not yet acknowledged), in pages; Discard,
// Acknowledge, Re-scan and Undo where each applies; Retry now; Export
// (queue_export.js).

import { $, ago, el, failure, show, withCodes } from './dom.js';
import * as constants from './constants.js';
import { OLDEST_WARN_MS, refreshBar } from './bar.js';
import { on } from './events.js';
import { operatorLabel } from './operators.js';
import { focusScan, go, onShow } from './screens.js';
import * as state from './state.js';
import * as queueExport from './queue_export.js';
import { rescan, undo } from './undo.js';
import { ask } from './worker.js';
import { explain, locale, t, valueWords } from './l10n.js';

/** Rows one queue page lists. */
const QUEUE_PAGE_ROWS = 50;

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

/**
 * What an item does, in words (its mode as the catalogue words it,
 * `mode-<code>`, the code where it has none), with the codes it names
 * drawn as codes: nodes for the row (none where the head's command says
 * it all).
 */
function describe(item) {
  const b = item.body || {};
  const mode = b.mode ? valueWords('mode', b.mode) : '';
  if (item.command === 'open_session') {
    const context = b.context ? Object.values(b.context).map(String) : [];
    return withCodes(t('queue-open', { mode, context: context.join(' '), operator: operatorLabel(b.operator_id || '') }), [...context, b.operator_id]);
  }
  if (item.command === 'undo') {
    const found = state.queueItems().find((other) => other.key === b.target_key);
    const target = found ? `${sessionLabel(found.session_id)} #${found.client_seq}` : (b.target_key || '').slice(0, 8);
    return withCodes(t('queue-undo', { target }), [target]);
  }
  if (item.command === 'scan') {
    const codes = [b.epc || b.code, b.bin, b.grn, b.manifest, b.count_id].filter(Boolean).map(String);
    const parts = [mode, b.epc || b.code, b.bin && `→ ${b.bin}`, b.grn, b.manifest, b.count_id].filter(Boolean);
    return withCodes(parts.join(' '), codes);
  }
  // The row's head words the command; there is nothing more to say.
  return [];
}

/** A session's short name on the queue screen: the first 8 digits of its id (with the seq, unique on the device). */
function sessionLabel(id) {
  return `S-${String(id).slice(0, 8)}`;
}

function undoTargets() {
  return new Set(state.queueItems().filter((i) => i.command === 'undo' && !['rejected', 'blocked', 'voided'].includes(i.state))
    .map((i) => i.body && i.body.target_key));
}

/** A scan row offers Undo as results.undoable() decides it for the scan screen. */
function canUndo(item, undone, now) {
  return item.command === 'scan' && item.body && constants.undoable(item.body.mode)
    && !['rejected', 'blocked', 'voided'].includes(item.state) && !(item.state === 'done' && !(item.hop_ids || []).length)
    && !undone.has(item.key) && now - item.occurred_at < constants.undoWindowMs();
}

/** The age line's words; the one part of a row that changes in place. */
function ageText(item, now) {
  return t('queue-age', { age: ago(now - item.occurred_at) });
}

function queueRow(item, undone, now) {
  const actions = el('div', { class: 'q-actions' });
  const button = (action, label) => el('button', { type: 'button', 'data-action': action, 'data-id': String(item.id), text: label });
  if (item.state === 'blocked') actions.append(button('discard', t('queue-discard')));
  if (item.state === 'rejected' && !item.acknowledged) {
    if (item.reason === 'stale_state' && item.body && item.body.epc) actions.append(button('rescan', t('queue-rescan')));
    actions.append(button('acknowledge', t('alert-ack')));
  }
  if (canUndo(item, undone, now)) actions.append(button('undo', t('undo')));
  const why = explain(item.reason || item.why);
  const what = describe(item);
  const seq = `${sessionLabel(item.session_id)} #${item.client_seq}`;
  const label = `${seq} ${item.command}`;
  return el('li', { dataset: { id: String(item.id), state: item.state, label, decide: String(toDecide(item)) } },
    el('div', { class: 'q-head' }, el('span', { class: 'q-label', dataset: { command: item.command } },
      el('bdi', { dir: 'ltr', class: 'code', text: seq }), ' ', valueWords('command', item.command)),
      el('span', { class: 'state', dataset: { state: item.state }, text: t('queue-state', { state: item.state === 'done' && state.training() ? 'training' : item.state }) })),
    what.length ? el('div', { class: 'q-what' }, ...what) : null,
    why ? el('div', { class: 'q-why' }, el('span', { text: item.acknowledged ? t('queue-acknowledged', { words: why.words }) : why.words }),
      el('span', { class: 'q-next', text: item.acknowledged ? '' : why.next }), el('small', { class: 'code', text: why.code })) : null,
    el('div', { class: 'muted q-age', text: ageText(item, now) }),
    actions.childElementCount ? actions : null);
}

/** The queue's items in the screen's order: what waits for a person first, newest first within each. */
function queueOrder() {
  const all = state.queueItems();
  const newest = (a, b) => b.occurred_at - a.occurred_at || b.id - a.id;
  const decide = all.filter(toDecide).sort(newest);
  if (queueFilter === 'decide') return decide;
  return [...decide, ...all.filter((item) => !toDecide(item)).sort(newest)];
}

/**
 * Draws the queue screen from the last walk of the queue. Rows are kept by
 * item id and redrawn only when their state or their buttons changed; the
 * age line is rewritten in place. So a refresh neither collapses the pages
 * shown nor swaps a button from under a finger.
 */
function renderQueue() {
  const all = state.queueItems();
  const now = Date.now();
  const undone = undoTargets();
  const order = queueOrder();
  const shown = order.slice(0, queueShown);
  queueItems = new Map(all.map((item) => [item.id, item]));
  const rows = shown.map((item) => {
    const sig = JSON.stringify([item.state, item.reason, item.why, item.acknowledged, canUndo(item, undone, now), state.training(), locale()]);
    const drawn = queueRows.get(item.id);
    if (drawn && drawn.sig === sig) {
      const age = drawn.li.querySelector('.q-age');
      const text = ageText(item, now);
      if (age.textContent !== text) age.textContent = text;
      return drawn.li;
    }
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
  $('queue-more').textContent = t('queue-more-count', { count: order.length - shown.length });
  const decide = all.filter(toDecide).length;
  $('queue-filter-decide').textContent = t('queue-filter-decide-count', { count: decide });
  $('queue-filter-all').setAttribute('aria-pressed', String(queueFilter === 'all'));
  $('queue-filter-decide').setAttribute('aria-pressed', String(queueFilter === 'decide'));
  if (!order.length) list.replaceChildren(el('li', { class: 'q-empty', text: queueFilter === 'decide' ? t('queue-nothing-to-decide') : t('queue-empty') }));
}

function setQueueFilter(filter) {
  queueFilter = filter;
  queueShown = QUEUE_PAGE_ROWS;
  renderQueue();
  focusScan();
}

/** Opens the queue screen on what waits for a person (the late banner's Show them). */
export function showToDecide() {
  queueFilter = 'decide';
  go('queue');
}

/** Reads the queue again and draws the screen with its counts. */
export async function refreshQueue() {
  await refreshBar();
  const counts = state.counts();
  if (!counts) return;
  show('queue-counts', t('queue-counts', {
    queued: counts.queued, sending: counts.sending, done: counts.done, rejected: counts.rejected, blocked: counts.blocked, voided: counts.voided,
  }));
  const age = counts.oldest_queued_age_ms;
  show('queue-oldest', age == null ? t('queue-nothing-waiting') : t('queue-oldest', { age: ago(age) }), age > OLDEST_WARN_MS ? 'warn' : '');
  if (!(counts.queued + counts.sending)) show('queue-next', '');
  else ask({ type: 'wake' }).then(nextTry);
}

/** When the drain tries again, from a `wake` answer, in words: the site's answer ends the wait at once. */
function nextTry(report) {
  if (!report.ok) return;
  const at = report.next_attempt_at == null ? null : Date.parse(report.next_attempt_at);
  if (at == null || at <= Date.now()) {
    show('queue-next', report.pending ? t('queue-sending-now') : '');
    return;
  }
  show('queue-next', t('queue-next-try', { at: new Date(at), in: ago(at - Date.now()) }));
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
  show('queue-status', reply.ok ? t('queue-action-done', { action, label }) : t('queue-action-failed', { label, error: failure(reply) }), reply.ok ? '' : 'error');
  await refreshQueue();
  focusScan();
}

async function retryNow() {
  const reply = await ask({ type: 'retry_now' });
  show('queue-status', reply.ok ? t('queue-sent', { items: reply.items_sent, requests: reply.requests }) : failure(reply), reply.ok ? '' : 'error');
  await refreshQueue();
}

export function wire() {
  onShow('queue', refreshQueue);
  on('queue', () => {
    if (state.screen() === 'queue') renderQueue();
  });
  $('queue-filter-all').addEventListener('click', () => setQueueFilter('all'));
  $('queue-filter-decide').addEventListener('click', () => setQueueFilter('decide'));
  $('queue-refresh').addEventListener('click', refreshQueue);
  $('queue-retry').addEventListener('click', retryNow);
  $('queue-more').addEventListener('click', moreQueue);
  $('queue-list').addEventListener('click', onQueueAction);
  queueExport.wire();
}
