// Receive: a GRN (its QC accepted), then its tags, each counted against
// the GRN's lines by SKU; a tag the site does not know takes the SKU label
// scanned before it. A GS1 unit label (scan.js hands it over as the
// unit's tag) takes its SKU from its GTIN and carries its GTIN, lot and
// expiry to the site; a GS1 label of a SKU's lot ((01) with (10)/(17))
// is a SKU label whose lot and expiry the new tags after it carry. The
// lines show the site's received figures from the cache and this
// device's scans since. With encode on, each tag's label
// prints at the station's printer (labels.js).

import { msg, t, valueWords } from '../l10n.js';
import { capture } from '../capture.js';
import { ago, el, fill } from '../dom.js';
import { emit } from '../events.js';
import { cached, epcOf, keysOf } from '../lookup.js';
import { refuse, result } from '../results.js';
import { openSession } from '../session.js';
import * as state from '../state.js';
import { ask } from '../worker.js';
import * as labels from '../../labels.js';

export const title = msg('mode-receive');
export const blurb = msg('mode-receive-blurb');
/** Its figures count the queue's items: redrawn on each walk of the queue. */
export const figuresFromQueue = true;

/** The GRN row from the cache, and when that copy last reached the site's end. */
let grnRow = null;
let grnAt = null;

export function reset() {
  grnRow = null;
}

/** After a reload: the open GRN's row again. */
export async function resume(session) {
  if (session.context.grn) await loadGrn();
}

/** The cache moved on: the open GRN's row again. */
export async function referenceChanged(session) {
  if (session.context.grn) await loadGrn();
}

async function loadGrn() {
  const reply = await ask({ type: 'reference_get', kind: 'grn', id: state.session().context.grn });
  grnRow = reply.ok ? reply.row : null;
  // The row and the instant its copy last reached the site's end come from
  // one answer: the scans counted "since" are those the row cannot hold.
  grnAt = reply.ok ? reply.refreshed_at : null;
}

export function needs(session) {
  const c = session.context;
  return [{ need: 'grn', label: c.grn ? t('receive-grn', { grn: c.grn }) : t('receive-need-none'), met: !!c.grn }];
}

export function prompt(session) {
  const c = session.context;
  if (!c.grn) return [t('receive-prompt'), t('receive-prompt-small')];
  const small = !session.sku ? t('receive-prompt-sku-first')
    : session.lot ? t('receive-prompt-sku-lot', { sku: session.sku, keys: keysOf(session.lot) }) : t('receive-prompt-sku', { sku: session.sku });
  return [t('receive-prompt-tags', { grn: c.grn }), small];
}

/** The GRNs to tap while none is chosen; undefined once one is. */
export async function choices(session) {
  if (session.context.grn) return undefined;
  const list = await ask({ type: 'reference_list', kind: 'grns' });
  const rows = list.ok ? list.rows.filter((g) => g.state !== 'complete') : [];
  if (!rows.length) return [el('p', { class: 'status warn', text: t('receive-none-waiting') })];
  return rows.map((g) => el('button', {
    type: 'button', 'data-grn': g.grn, disabled: g.qc !== 'accepted',
  }, el('strong', { text: g.grn }), el('span', { text: g.qc === 'accepted' ? t('receive-choice', { lines: g.lines.length, state: valueWords('grn-state', g.state) }) : t('receive-qc', { qc: valueWords('grn-qc', g.qc) }) })));
}

/** A tapped choice (`button[data-grn]`). */
export function choose(button) {
  return chooseGrn(button.dataset.grn);
}

/** A tap on the detail: the encode toggle. */
export function detailClicked(event) {
  if (!event.target.closest('#encode-toggle')) return;
  const session = state.session();
  session.encode = !session.encode;
  state.saveSession();
  emit('detail');
}

/**
 * This device's scans of the open GRN that the cached row cannot count
 * yet, by SKU (+1 a scan, −1 an undo of one): `answered`, those the site
 * applied after the copy was read (its figures, not read back yet), and
 * `waiting`, those still waiting to go (the bar's waiting count holds
 * them). Refused and discarded ones count nothing.
 */
function since(session) {
  const items = state.sessionItems().filter((item) => item.session_id === session.session_id);
  const answered = {};
  const waiting = {};
  const byKey = new Map(items.map((item) => [item.key, item]));
  const isWaiting = (item) => item.state === 'queued' || item.state === 'sending';
  const answeredSince = (item) => item.state === 'done' && (grnAt == null || item.recorded_at == null || item.recorded_at > grnAt);
  const skuOf = (item) => item && item.command === 'scan' && item.body && item.body.grn === session.context.grn
    && (item.body.sku || session.skus[item.key]);
  for (const item of items) {
    const into = isWaiting(item) ? waiting : answeredSince(item) ? answered : null;
    if (!into) continue;
    const undone = item.command === 'undo' && item.body ? byKey.get(item.body.target_key) : null;
    const sku = undone ? skuOf(undone) : skuOf(item);
    if (sku) into[sku] = (into[sku] || 0) + (undone ? -1 : 1);
  }
  return { answered, waiting };
}

export function renderDetail(box) {
  fill(box, detail(state.session()));
}

function detail(session) {
  const parts = [];
  if (state.canEncode()) {
    parts.push(el('div', { class: 'row' }, el('button', {
      type: 'button', id: 'encode-toggle', class: 'toggle', 'aria-pressed': String(!!session.encode),
    }, session.encode ? t('receive-encode-on') : t('receive-encode-off'))));
    if (session.encode) parts.push(labels.stationLine(el));
  }
  if (!session.context.grn) return parts;
  parts.push(el('p', { id: 'receive-sku', class: 'status', text: !session.sku ? t('receive-no-sku') : session.lot ? t('receive-sku-lot', { sku: session.sku, lot: lotWords(session.lot) }) : t('receive-sku', { sku: session.sku }) }));
  if (session.last_label) {
    const last = session.last_label;
    parts.push(el('p', { id: 'receive-label', class: 'status', dataset: { lot: last.lot || '', expiry: last.expiry || '' } },
      last.sku ? t('receive-last-label-sku', { epc: last.epc, sku: last.sku, lot: lotWords(last) }) : t('receive-last-label', { epc: last.epc, lot: lotWords(last) })));
  }
  if (!grnRow) {
    parts.push(el('p', { class: 'status warn', text: t('receive-grn-not-cached') }));
    return parts;
  }
  const { answered, waiting } = since(session);
  const rows = grnRow.lines.map((line) => {
    const received = line.received + (answered[line.sku] || 0);
    const mine = waiting[line.sku] || 0;
    return el('tr', { dataset: { sku: line.sku, full: String(received + mine >= line.expected) } },
      el('td', { text: line.sku }), el('td', { class: 'num', text: String(line.expected) }),
      el('td', { class: 'num', text: String(received) }), el('td', { class: 'num', text: mine > 0 ? `+${mine}` : mine < 0 ? `−${-mine}` : '0' }));
  });
  parts.push(el('table', { id: 'grn-lines' },
    el('thead', {}, el('tr', {}, el('th', { text: t('find-sku') }), el('th', { class: 'num', text: t('receive-expected') }),
      el('th', { class: 'num', text: t('receive-received') }), el('th', { class: 'num', text: t('receive-queued-here') }))),
    el('tbody', {}, ...rows)));
  parts.push(el('p', { id: 'grn-age', class: 'status muted', text: grnAt == null ? t('receive-age-never') : t('receive-age', { age: ago(Date.now() - grnAt) }) }));
  return parts;
}

async function chooseGrn(id) {
  const reply = await cached('grn', id);
  const row = reply.row;
  if (!row) return refuse(id, t('receive-unknown-grn', { grn: id }), state.online() === false ? t('offline-scan-again') : t('receive-check-papers'));
  if (row.qc !== 'accepted') return refuse(id, t('receive-qc-not-accepted', { grn: id, qc: valueWords('grn-qc', row.qc) }), t('receive-ask-qc'));
  grnRow = row;
  grnAt = reply.refreshed_at;
  if (await openSession({ grn: id })) result(id, t('receive-grn', { grn: id }), 'ok');
}

/** A label's lot and expiry in words. */
function lotWords(label) {
  return t('receive-lot', { lot: label.lot || '–', expiry: label.expiry || '–' });
}

/** A GS1 label of a SKU's lot: the SKU its GTIN names, whose new tags carry its lot and expiry. */
export function scanSkuLot(label, code) {
  const session = state.session();
  if (!session.context.grn) return refuse(label.text, t('receive-not-grn', { code: label.text }), t('receive-grn-first'));
  if (!label.sku) {
    return refuse(label.text, t('receive-gtin-no-sku', { gtin: label.gtin }), t('receive-gtin-no-sku-next'));
  }
  if (grnRow && !grnRow.lines.some((line) => line.sku === label.sku)) {
    return refuse(label.text, t('receive-sku-not-on', { sku: label.sku, gtin: label.gtin, grn: session.context.grn }), t('receive-check-delivery'));
  }
  session.sku = label.sku;
  session.lot = { gtin: label.gtin, lot: label.lot || null, expiry: label.expiry || null };
  state.saveSession();
  emit('mode');
  return result(code, t('receive-sku-lot', { sku: label.sku, lot: lotWords(label) }), 'ok');
}

/** `label`: the GS1 unit label `code` (the unit's EPC) was read from. */
export async function scan(code, at, label) {
  const session = state.session();
  if (!session.context.grn) return chooseGrn(code);
  if (!label && grnRow && grnRow.lines.some((line) => line.sku === code)) {
    session.sku = code;
    session.lot = null;
    state.saveSession();
    emit('mode');
    return result(code, t('receive-sku', { sku: code }), 'ok');
  }
  return receiveTag(code, at, label);
}

async function receiveTag(code, at, label) {
  const session = state.session();
  const shown = label ? label.text : code;
  const epc = await epcOf(code);
  if (!epc) return refuse(code, t('receive-not-tag', { code, grn: session.context.grn }));
  const found = await ask({ type: 'find_unit', code: epc });
  const unit = found.ok ? found.unit : null;
  const body = { mode: 'receive', grn: session.context.grn, epc, encode: !!session.encode };
  let sku = unit && unit.sku;
  // The lot a new tag carries: its own label's, else the SKU lot label's
  // scanned before it, for a tag that takes that label's SKU.
  let lot = label && label.gtin ? label : null;
  if (!sku) {
    sku = (label && label.sku) || session.sku;
    if (!sku) {
      return refuse(shown, label && label.gtin ? t('receive-tag-gtin-no-sku', { epc, gtin: label.gtin }) : t('receive-tag-unknown', { epc }));
    }
    body.sku = sku;
    if (!lot && sku === session.sku) lot = session.lot;
  }
  if (lot) {
    for (const field of ['gtin', 'lot', 'expiry']) if (lot[field]) body[field] = lot[field];
  }
  const reply = await capture(body, at, shown);
  if (reply && reply.ok) {
    session.skus[reply.key] = sku;
    if (lot) session.last_label = { epc, sku, gtin: lot.gtin, lot: lot.lot || null, expiry: lot.expiry || null };
    state.saveSession();
    state.sessionItems().push({ key: reply.key, session_id: session.session_id, command: 'scan', body: reply.body, state: 'queued' });
    if (body.encode) labels.follow(reply.key, epc);
    emit('detail');
  }
}
