// The open mode's scan rows: each scan's line from "writing…" to what the
// ledger decided (kept, applied, refused with the reason in words and the
// next step, blocked, undone), with Undo where the ledger will honour it;
// the last scan's status line; and the dock's tallies (captured, not
// captured, refused).

import { $, el, show } from './dom.js';
import * as constants from './constants.js';
import * as state from './state.js';
import * as labels from '../labels.js';
import { explain, msg, t } from './l10n.js';
import { signal } from '../signal.js';

/** Scans the mode screen lists at a glance: the last few, and any older one Undo can still reach. */
const RESULTS_SHOWN = 4;
/** Rows kept for the screen and for the answers that reach them. */
const RESULTS_KEPT = 50;

/** What a scan row says its scan came to, by its kind. */
const OUTCOME_WORDS = {
  pending: msg('outcome-pending'),
  kept: msg('outcome-kept'),
  applied: msg('outcome-applied'),
  training: msg('outcome-training'),
  refused: msg('outcome-refused'),
  blocked: msg('outcome-blocked'),
  voided: msg('outcome-voided'),
  failed: msg('outcome-failed'),
  undone: msg('outcome-undone'),
};

/** What a kept scan's row says while the site refuses this handheld: it is kept, but not on its way. */
const HELD_WORDS = msg('outcome-held');

/** The picker asked for every row kept, not only a glance's worth. */
let expanded = false;

/** This page's scans, newest first: {id, code, text, kind, key?, occurred_at, session_id, mode?, state?, …}. */
let results = [];
let resultSeq = 0;
/** The newest result already shown (a new one flashes once). */
let flashed = 0;
let resultsQueued = false;
const tally = { captured: 0, failed: 0, refused: 0 };

/** The rows, newest first; an entry's fields change as its item's answer comes. */
export function rows() {
  return results;
}

/** The row of the scan captured under `key`. */
export function rowOf(key) {
  return results.find((r) => r.key === key);
}

/** A new mode or session starts with no rows. */
export function clearRows() {
  results = [];
  expanded = false;
}

export function addResult(entry) {
  entry.id = ++resultSeq;
  results.unshift(entry);
  results.length = Math.min(results.length, RESULTS_KEPT);
  scheduleResults();
  return entry;
}

/** A row that is not a capture (a bin, a GRN, a command's answer). */
export function result(code, text, kind) {
  addResult({ code, text, kind, occurred_at: Date.now() });
  show('scan-status', text, kind === 'refused' ? 'warn' : '');
  signal('acknowledge');
}

/**
 * A scan refused on this device (nothing captured), with what to do next
 * and, where there is one, the refusal's code (shown in small print);
 * returns its row.
 */
export function refuse(code, text, next, reason) {
  countRefused();
  const entry = addResult({ code, text, next, kind: 'refused', occurred_at: Date.now(), ...(reason ? { code_shown: reason } : {}) });
  show('scan-status', text, 'error');
  signal('refused');
  return entry;
}

/**
 * Says a refusal's row in other words once what it spoke of is gone (the
 * question it said to answer), and the status line with it while that
 * still shows the row's old words.
 */
export function restate(entry, text, next) {
  if ($('scan-status').textContent === entry.text) show('scan-status', text, 'error');
  entry.text = text;
  entry.next = next;
  scheduleResults();
}

export function countCaptured() {
  tally.captured += 1;
  $('scan-count').textContent = String(tally.captured);
}

export function countFailed() {
  tally.failed += 1;
  $('scan-failed').textContent = String(tally.failed);
}

export function countRefused() {
  tally.refused += 1;
  $('scan-refused').textContent = String(tally.refused);
}

/** Draws the rows at the next frame (a burst of changes draws once). */
export function scheduleResults() {
  if (resultsQueued) return;
  resultsQueued = true;
  requestAnimationFrame(() => {
    resultsQueued = false;
    renderResults();
  });
}

/**
 * Whether the ledger will honour an Undo of `entry`'s scan, as the core's
 * `stockhop::undo::Target` decides it: a scan of a mode that changes
 * something, not refused, blocked or discarded, one that named a hop once
 * applied (a repeated verify changed nothing), not undone already, within
 * the undo window of its capture (rule 10).
 */
export function undoable(entry, now) {
  return !!entry.key && constants.undoable(entry.mode) && !entry.undone
    && ['kept', 'applied', 'training'].includes(entry.kind) && !(entry.state === 'done' && entry.hops === 0)
    && now - entry.occurred_at < constants.undoWindowMs();
}

export function renderResults() {
  const list = $('results');
  const now = Date.now();
  const held = state.refused();
  // A glance's worth, and every older row whose Undo is still open: a row
  // keeps its Undo for the whole window, however many scans came after it.
  const listed = expanded ? results : results.filter((r, i) => i < RESULTS_SHOWN || undoable(r, now));
  const shown = listed.map((r) => {
    const why = r.kind === 'refused' || r.kind === 'blocked' ? explain(r.reason) : null;
    const outcome = held && r.kind === 'kept' ? HELD_WORDS : OUTCOME_WORDS[r.kind];
    const li = el('li', { dataset: { kind: r.kind, ...(r.key ? { key: r.key } : {}), ...(r.state ? { state: r.state } : {}) } },
      el('span', { class: 'what' },
        el('span', { class: 'scan', text: r.text }),
        r.key && outcome ? el('span', { class: 'outcome', text: ` · ${t(outcome)}` }) : null,
        why ? el('span', { class: 'why', text: why.words }) : null,
        why || r.next ? el('span', { class: 'next', text: why ? why.next : r.next }) : null,
        why || r.code_shown ? el('small', { class: 'code', text: why ? why.code : r.code_shown }) : null,
        labels.note(el, r.key)));
    if (undoable(r, now)) {
      li.append(el('button', { type: 'button', 'data-action': 'undo', 'data-key': r.key, text: t('undo') }));
    }
    if (r.id > flashed) li.classList.add('fresh');
    return li;
  });
  list.replaceChildren(...shown);
  flashed = resultSeq;
  const more = $('results-more');
  const hidden = results.length - listed.length;
  more.hidden = !expanded && hidden === 0;
  more.textContent = expanded ? t('results-fewer') : t('results-more', { count: hidden });
  more.setAttribute('aria-expanded', String(expanded));
}

/** The button under the rows: every row kept on this page, or a glance's worth. */
export function toggleExpanded() {
  expanded = !expanded;
  renderResults();
}
