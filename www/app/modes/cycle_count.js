// Cycle count: a count session (a zone, or one bin), then bin by bin the
// tags in each. The figures are the site's (expected, seen, missing,
// unexpected: live when it answers, else as it last said, with their age)
// and this device's tags since. Closing the session closes the count for
// the whole zone, so it asks first, with the figures.

import { msg, t, valueWords } from '../l10n.js';
import { capture } from '../capture.js';
import { confirmBox } from '../dialogs.js';
import { ago, el, fill, loadJson } from '../dom.js';
import { emit } from '../events.js';
import { binOf, cached, epcOf } from '../lookup.js';
import { refuse, result } from '../results.js';
import { walkQueue } from '../outcomes.js';
import { openSession } from '../session.js';
import { siteGet } from '../site.js';
import * as state from '../state.js';
import { ask } from '../worker.js';

export const title = msg('mode-cycle_count');
export const blurb = msg('mode-cycle_count-blurb');
/** The screen shows the bin last scanned. */
export const showsBin = true;
/** Its figures count the queue's items: redrawn on each walk of the queue. */
export const figuresFromQueue = true;

/** A count's expected total as the site last said it, per count id. */
const COUNT_EXPECTED_KEY = 'stockhop.count_expected';
/** How soon after this device's scans land the figures are read again: once for a burst. */
const VIEW_AFTER_ACTION_MS = 250;

/** The count's figures as the site last said them, and whether that was just now. */
let countView = null;
let countViewQueued = null;

export function reset() {
  countView = null;
}

/** After a reload: the count's figures again. */
export function resume(session) {
  if (session.context.count_id) loadCountView();
}

export function needs(session) {
  const c = session.context;
  return [
    { need: 'count', label: c.count_id ? t('count-need', { count: c.count_id }) : t('count-need-none'), met: !!c.count_id },
    { need: 'bin', label: session.bin ? t('bin-need', { bin: session.bin }) : t('bin-need-none'), met: !!session.bin },
  ];
}

export function prompt(session) {
  const c = session.context;
  if (!c.count_id) return [t('count-prompt-choose'), ''];
  return session.bin ? [t('count-prompt-tags', { bin: session.bin }), t('count-prompt-next-bin')] : [t('prompt-bin'), t('count-prompt-zone', { zone: session.zone || '' })];
}

/** The open counts to tap while none is chosen; undefined once one is. */
export async function choices(session) {
  if (session.context.count_id) return undefined;
  const list = await ask({ type: 'reference_list', kind: 'counts' });
  const rows = list.ok ? list.rows.filter((c) => c.state === 'open') : [];
  if (!rows.length) return [el('p', { class: 'status warn', text: t('count-none-open') })];
  return rows.map((c) => el('button', { type: 'button', 'data-count': c.count_id },
    el('strong', { text: c.count_id }), el('span', { text: t('count-choice', { location: c.location, zone: c.zone }) })));
}

/** A tapped choice (`button[data-count]`). */
export function choose(button) {
  return chooseCount(button.dataset.count);
}

async function chooseCount(id) {
  const session = state.session();
  const row = (await cached('count', id)).row;
  if (!row) return refuse(id, t('count-unknown', { count: id }), state.online() === false ? t('offline-scan-again') : t('count-check-sheet'));
  if (row.state !== 'open') return refuse(id, t('count-not-open', { count: id, state: valueWords('count-state', row.state) }), t('count-tap-open'));
  session.zone = row.zone;
  session.location = row.location;
  // A count of one bin: that bin is the only one it takes.
  if (row.bin) {
    session.count_bin = row.bin;
    session.bin = row.bin;
  }
  if (await openSession({ count_id: id })) {
    result(id, t('count-chosen', { count: id, zone: row.zone }), 'ok');
    loadCountView();
  }
}

/** The count's expected total: live when the site answers, else as it last said. */
async function loadCountView() {
  const id = state.session().context.count_id;
  const asked = Date.now();
  const live = await siteGet(`/v1/counts/${encodeURIComponent(id)}`);
  const kept = loadJson(COUNT_EXPECTED_KEY, {});
  if (live.body) {
    const { expected, seen, missing, unexpected, state: countState, as_of: asOf } = live.body;
    // Their age is this device's (asked); which of its scans they hold is
    // the site's clock (as_of against each scan's recorded_at): a scan
    // recorded later is this device's "since", whatever this clock says.
    kept[id] = { expected, seen, missing, unexpected, state: countState, at: asked, siteAt: Date.parse(asOf) };
    localStorage.setItem(COUNT_EXPECTED_KEY, JSON.stringify(kept));
    countView = { ...kept[id], live: true };
  } else if (kept[id]) {
    countView = { seen: 0, ...kept[id], live: false };
  } else {
    countView = null;
  }
  const session = state.session();
  if (session && session.mode === 'cycle_count') emit('detail');
}

/** A scan row changed: the count's figures are read again soon (a burst asks once). */
export function rowsChanged() {
  const open = () => {
    const session = state.session();
    return session && session.mode === 'cycle_count' && session.context.count_id;
  };
  if (countViewQueued || !open()) return;
  countViewQueued = setTimeout(() => {
    countViewQueued = null;
    if (open()) loadCountView();
  }, VIEW_AFTER_ACTION_MS);
}

/**
 * The count's figures: the site's (expected, seen, missing, unexpected,
 * as last read, with their age) and this device's tags since, which the
 * site's figures cannot hold yet. A tag since that the site listed missing
 * is seen now; one it did not expect and had not seen is unexpected.
 */
function countFigures(session) {
  const items = state.sessionItems().filter((i) => i.session_id === session.session_id);
  const view = countView || { expected: null, seen: 0, missing: null, unexpected: [] };
  const undone = new Set(items.filter((i) => i.command === 'undo' && !['rejected', 'blocked', 'voided'].includes(i.state))
    .map((i) => i.body && i.body.target_key));
  const counted = (i) => i.command === 'scan' && i.body && i.body.epc && !undone.has(i.key) && !['rejected', 'blocked', 'voided'].includes(i.state);
  const siteAt = Number.isFinite(view.siteAt) ? view.siteAt : null;
  const since = (i) => i.state === 'queued' || i.state === 'sending' || (i.state === 'done' && (siteAt == null || i.recorded_at == null || i.recorded_at > siteAt));
  const landed = new Set(items.filter((i) => counted(i) && !since(i)).map((i) => i.body.epc));
  const here = new Set(items.filter((i) => counted(i) && since(i)).map((i) => i.body.epc));
  // Scans kept on this page that the queue walk has not listed yet (one
  // it lists refused or undone counts nothing).
  for (const epc of session.seen) if (!items.some((i) => i.command === 'scan' && i.body && i.body.epc === epc)) here.add(epc);
  const waiting = [...here].filter((epc) => items.some((i) => counted(i) && i.body.epc === epc && (i.state === 'queued' || i.state === 'sending'))
    || !items.some((i) => i.command === 'scan' && i.body && i.body.epc === epc)).length;
  const missingThen = new Set(view.missing || []);
  const unexpectedThen = new Set(view.unexpected || []);
  const newHere = [...here].filter((epc) => !landed.has(epc) && !unexpectedThen.has(epc));
  const surprises = view.missing ? newHere.filter((epc) => !missingThen.has(epc)) : [];
  return {
    expected: view.expected,
    seen: view.seen + newHere.length,
    missing: view.missing ? view.missing.filter((epc) => !here.has(epc)) : null,
    unexpected: [...(view.unexpected || []), ...surprises],
    since: newHere.length,
    waiting,
    view,
  };
}

export function renderDetail(box) {
  fill(box, detail(state.session()));
}

function detail(session) {
  if (!session.context.count_id) return [];
  const f = countFigures(session);
  const age = countView ? ago(Date.now() - countView.at) : null;
  // The first three EPCs, then how many more: the EPCs are codes, never words.
  const list = (epcs) => (epcs.length > 3 ? t('count-epcs-more', { epcs: epcs.slice(0, 3).join(', '), more: epcs.length - 3 }) : epcs.join(', '));
  const where = { zone: session.zone || '?', location: session.location || '?', bin: session.count_bin || '', since: f.since, waiting: f.waiting };
  const figures = session.count_bin
    ? (age ? t('count-age-bin', { ...where, age }) : t('count-age-bin-unread', where))
    : (age ? t('count-age', { ...where, age }) : t('count-age-unread', where));
  return [
    el('p', { id: 'count-progress', class: 'big-figure' },
      el('span', { text: t('count-seen') }), ' ', el('span', { id: 'count-seen', text: String(f.seen) }), ' ', el('span', { text: t('count-expected') }), ' ', el('span', { id: 'count-expected', text: f.expected == null ? '?' : String(f.expected) })),
    el('p', { class: 'count-variance' },
      el('span', { text: t('count-missing') }), ' ', el('strong', { id: 'count-missing', text: f.missing ? String(f.missing.length) : '?' }),
      ' ', el('span', { text: t('count-unexpected') }), ' ', el('strong', { id: 'count-unexpected', text: f.missing ? String(f.unexpected.length) : '?' })),
    f.missing && f.missing.length ? el('p', { id: 'count-missing-list', class: 'status muted epcs', text: t('count-missing-list', { epcs: list(f.missing) }) }) : null,
    f.unexpected.length ? el('p', { id: 'count-unexpected-list', class: 'status muted epcs', text: t('count-unexpected-list', { epcs: list(f.unexpected) }) }) : null,
    el('p', { id: 'count-age', class: 'status muted', text: figures }),
  ];
}

export async function scan(code, at) {
  const session = state.session();
  if (!session.context.count_id) return chooseCount(code);
  const bin = await binOf(code);
  if (bin) {
    if (session.count_bin && code !== session.count_bin) return refuse(code, t('count-bin-only', { bin: session.count_bin, code }), t('count-scan-tags-in', { bin: session.count_bin }));
    if (session.zone && bin.zone !== session.zone) return refuse(code, t('count-other-zone', { bin: code, zone: bin.zone, count_zone: session.zone }), t('count-scan-zone-bin'));
    session.bin = code;
    state.saveSession();
    emit('mode');
    return result(code, t('find-bin', { bin: code }), 'ok');
  }
  if (!session.bin) return refuse(code, t('bin-first', { code }), t('count-bin-then-tags'));
  const epc = await epcOf(code);
  if (!epc) return refuse(code, t('count-not-tag', { code }), t('count-tag-or-bin'));
  const reply = await capture({ mode: 'cycle_count', count_id: session.context.count_id, epc, bin: session.bin }, at, code);
  if (reply && reply.ok && !session.seen.includes(epc)) {
    session.seen.push(epc);
    state.saveSession();
    emit('detail');
  }
}

/** An undone scan's tag comes off the figures. */
export function undone(entry) {
  const session = state.session();
  const epc = entry.code.toUpperCase();
  session.seen = session.seen.filter((seen) => seen !== epc);
  state.saveSession();
}

/**
 * The longest the close question waits for this device's scans in flight
 * to be answered: a scan the site has counted but not yet answered (or
 * that the last walk of the queue did not list) could be told neither
 * from the site's figures nor from the queue, and would count twice, as
 * unexpected. An answer takes well under a second online; offline, the
 * question asks with what it has after this.
 */
const IN_FLIGHT_WAIT_MS = 3000;
/** How often the queue is walked again while a scan is in flight. */
const IN_FLIGHT_LOOK_MS = 50;

/** Walks the queue until none of this session's scans is in flight (or for at most IN_FLIGHT_WAIT_MS). */
async function inFlightAnswered() {
  const until = performance.now() + IN_FLIGHT_WAIT_MS;
  for (;;) {
    await walkQueue();
    if (!state.sessionItems().some((i) => i.state === 'sending') || performance.now() >= until) return;
    await new Promise((settle) => setTimeout(settle, IN_FLIGHT_LOOK_MS));
  }
}

/**
 * Closing a count session closes the count for the whole zone (the site
 * computes its variance), so it asks first, with the figures; true to close.
 */
export async function beforeClose(session) {
  if (!session.session_id) return true;
  await inFlightAnswered();
  await loadCountView();
  const f = countFigures(session);
  const zone = session.zone || '?';
  const text = f.missing
    ? t('count-close-text-figures', { zone, missing: f.missing.length, unexpected: f.unexpected.length, age: ago(Date.now() - f.view.at) })
    : t('count-close-text', { zone });
  return confirmBox(t('count-close-title', { count: session.context.count_id }), text,
    t('count-close-yes'), t('count-close-no'), t('count-close-how', { no: t('count-close-no') }));
}

/** An open count is left for its operator at idle: closing it closes the zone's count, which a person confirms. */
export function keepsOperator(session) {
  return !!session.session_id;
}
