// Find a unit: a tag, a serial or a GS1 unit label ((01)+(21), a Digital
// Link, an SGTIN EPC: scan.js hands it over as the unit's tag), answered
// from this device's reference cache, offline too (a unit the copy lacks
// is asked of the site when it answers). Read only: it captures nothing.

import { $, ago, el, failure, withTimeout } from '../dom.js';
import { EPC_PATTERN, findCached } from '../lookup.js';
import { refuse, result } from '../results.js';
import { askSiteFirst, LOOKUP_WAIT_MS } from '../site.js';
import * as state from '../state.js';
import { ask } from '../worker.js';

export const title = 'Find a unit';
export const blurb = 'Where is it? From this device, offline too.';
/** Open without a session: nothing is sent. */
export const readOnly = true;

export function needs() {
  return [];
}

export function prompt() {
  return ['Scan a tag, serial or unit label', 'answered from this device'];
}

export function renderDetail(box) {
  if (!$('find-result')) box.replaceChildren(el('div', { id: 'find-result', class: 'found', 'data-found': 'none' }));
}

/** The box the answer is shown in. */
function resultBox() {
  const box = $('find-result') || el('div', { id: 'find-result', class: 'found' });
  if (!$('find-result')) $('mode-detail').replaceChildren(box);
  return box;
}

/** A unit's label that names no unit this device's copy or the site knows. */
export function unknownLabel(label) {
  const box = resultBox();
  box.dataset.found = 'false';
  box.replaceChildren(el('p', { class: 'big-figure', text: `${label.text}: not known` }),
    el('p', { id: 'find-age', class: 'status', text: `From this device's copy, ${ago(label.age_ms)} old.` }));
  return result(label.text, `${label.text}: no unit with this GTIN and serial in this device's copy`, 'refused');
}

/** `label`: the GS1 unit label `code` (the unit's EPC) was read from; the site was asked already. */
export async function scan(code, at, label) {
  let found = await findCached(code);
  if (found.ok && !found.unit && !label && state.online() !== false) {
    // Not in this device's copy: the site may know it (a unit added since).
    if (EPC_PATTERN.test(code)) {
      const live = await withTimeout(ask({ type: 'refresh_unit', epc: code.toUpperCase() }), LOOKUP_WAIT_MS);
      if (live && live.ok && live.unit) found = await findCached(code);
    } else if (await askSiteFirst()) {
      found = await findCached(code);
    }
  }
  const box = resultBox();
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
      el('dt', { text: 'Serial' }), el('dd', { text: u.code || '–' }),
      ...gs1Rows(u)),
    age);
  result(code, `${u.epc}: ${u.state}, ${u.bin || 'no bin'}`, 'ok');
}

/** The unit's GS1 keys as the site holds them, those it has: GTIN, serial, lot, expiry. */
function gs1Rows(unit) {
  return [['GTIN', 'gtin'], ['GS1 serial', 'serial'], ['Lot', 'lot'], ['Expiry', 'expiry']]
    .filter(([, field]) => unit[field])
    .flatMap(([words, field]) => [el('dt', { text: words }), el('dd', { id: `find-${field}`, text: unit[field] })]);
}
