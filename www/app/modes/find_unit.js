// Find a unit: a tag, a serial or a GS1 unit label ((01)+(21), a Digital
// Link, an SGTIN EPC: scan.js hands it over as the unit's tag), answered
// from this device's reference cache, offline too (a unit the copy lacks
// is asked of the site when it answers). Read only: it captures nothing.

import { $, ago, el, failure, withTimeout } from '../dom.js';
import { msg, t, valueWords } from '../l10n.js';
import { EPC_PATTERN, findCached } from '../lookup.js';
import { refuse, result } from '../results.js';
import { askSiteFirst, LOOKUP_WAIT_MS } from '../site.js';
import * as state from '../state.js';
import { ask } from '../worker.js';

export const title = msg('mode-find_unit');
export const blurb = msg('mode-find_unit-blurb');
/** Open without a session: nothing is sent. */
export const readOnly = true;

export function needs() {
  return [];
}

export function prompt() {
  return [t('find-prompt'), t('find-prompt-small')];
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
  box.replaceChildren(el('p', { class: 'big-figure', text: t('find-not-known', { code: label.text }) }),
    el('p', { id: 'find-age', class: 'status', text: t('find-age', { age: ago(label.age_ms) }) }));
  return result(label.text, t('find-no-gs1-unit', { code: label.text }), 'refused');
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
  const age = el('p', { id: 'find-age', class: 'status', text: t('find-age', { age: ago(found.age_ms) }) });
  if (!found.unit) {
    box.dataset.found = 'false';
    box.replaceChildren(el('p', { class: 'big-figure', text: t('find-not-known', { code }) }), age);
    return result(code, t('find-not-in-copy', { code }), 'refused');
  }
  const u = found.unit;
  const place = found.bin ? t('find-place', { bin: found.bin.bin, zone: found.bin.zone, location: found.bin.location }) : (u.bin || t('find-no-bin-lower'));
  box.dataset.found = 'true';
  box.replaceChildren(
    el('p', { class: 'big-figure', text: u.bin ? t('find-bin', { bin: u.bin }) : t('find-no-bin') }),
    el('dl', {},
      el('dt', { text: t('find-state') }), el('dd', { id: 'find-state', dataset: { state: u.state }, text: valueWords('unit-state', u.state) }),
      el('dt', { text: t('find-where') }), el('dd', { id: 'find-bin', text: place }),
      el('dt', { text: t('find-sku') }), el('dd', { class: 'code', text: u.sku || '–' }),
      el('dt', { text: t('find-epc') }), el('dd', { class: 'code long', text: u.epc }),
      el('dt', { text: t('find-serial') }), el('dd', { class: 'code long', text: u.code || '–' }),
      ...gs1Rows(u)),
    age);
  result(code, t('find-result', { epc: u.epc, state: valueWords('unit-state', u.state), bin: u.bin || t('find-no-bin-lower') }), 'ok');
}

/** The unit's GS1 keys as the site holds them, those it has: GTIN, serial, lot, expiry. */
function gs1Rows(unit) {
  return [[msg('find-gtin'), 'gtin'], [msg('find-gs1-serial'), 'serial'], [msg('find-lot'), 'lot'], [msg('find-expiry'), 'expiry']]
    .filter(([, field]) => unit[field])
    .flatMap(([words, field]) => [el('dt', { text: t(words) }), el('dd', { id: `find-${field}`, class: 'code long', text: unit[field] })]);
}
