// Find a unit: a tag or serial, answered from this device's reference
// cache, offline too (a unit the copy lacks is asked of the site when it
// answers). Read only: it captures nothing.

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
  return ['Scan a tag or serial', 'answered from this device'];
}

export function renderDetail(box) {
  if (!$('find-result')) box.replaceChildren(el('div', { id: 'find-result', class: 'found', 'data-found': 'none' }));
}

export async function scan(code) {
  let found = await findCached(code);
  if (found.ok && !found.unit && state.online() !== false) {
    // Not in this device's copy: the site may know it (a unit added since).
    if (EPC_PATTERN.test(code)) {
      const live = await withTimeout(ask({ type: 'refresh_unit', epc: code.toUpperCase() }), LOOKUP_WAIT_MS);
      if (live && live.ok && live.unit) found = await findCached(code);
    } else if (await askSiteFirst()) {
      found = await findCached(code);
    }
  }
  const box = $('find-result') || el('div', { id: 'find-result', class: 'found' });
  if (!$('find-result')) $('mode-detail').replaceChildren(box);
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
      el('dt', { text: 'Serial' }), el('dd', { text: u.code || '–' })),
    age);
  result(code, `${u.epc}: ${u.state}, ${u.bin || 'no bin'}`, 'ok');
}
