// The open mode's screen: its title and session, what it still needs,
// what to scan next, its choices and figures (drawn by the mode's own
// module), and the last scans. It redraws when the mode, the reference
// cache, the site's light or the queue moves.

import { $, el, show } from './dom.js';
import { on } from './events.js';
import { t } from './l10n.js';
import { operatorLabel } from './operators.js';
import { closeSession } from './picker.js';
import { renderResults, rowOf, toggleExpanded } from './results.js';
import { enqueue } from './scan.js';
import { focusScan, onShow } from './screens.js';
import * as state from './state.js';
import { undo } from './undo.js';
import { current } from './modes/index.js';

export function renderMode() {
  const session = state.session();
  const mode = current(session);
  if (!mode) return;
  const view = $('screen-mode');
  view.dataset.mode = session.mode;
  view.dataset.open = String(!!session.session_id || !!mode.readOnly);
  $('mode-title').textContent = t(mode.title);
  $('session-status').textContent = session.session_id
    ? t('session-open', { operator: operatorLabel(session.operator_id), session: session.session_id.slice(0, 8) })
    : mode.readOnly ? t('session-read-only', { operator: operatorLabel(session.operator_id) }) : t('session-not-open');
  // A need not yet met says so before its label (the list's style puts the word before it, a tick once met).
  const missing = t('mode-need-missing');
  $('mode-needs').replaceChildren(...mode.needs(session).map((n) => el('li', { dataset: { need: n.need, met: String(n.met), ...(n.met ? {} : { missing }) }, text: n.label })));
  const [big, small] = mode.prompt(session);
  // A code (a bin, a GRN) is never broken across lines.
  const words = big.split(/(\S*\d\S*)/).map((part, i) => (i % 2 ? el('bdi', { dir: 'ltr', class: 'code', text: part }) : part));
  $('prompt').replaceChildren(el('span', { class: 'big' }, ...words), small ? el('small', { text: small }) : '');
  const binLine = $('scan-bin');
  binLine.hidden = !mode.showsBin;
  if (!binLine.hidden) {
    if (session.bin) show('scan-bin', t('scan-bin-units', { bin: session.bin }), '', [session.bin]);
    else show('scan-bin', t('scan-bin-first'), 'warn');
  }
  $('session-close').disabled = !session.session_id;
  if (mode.rendering) mode.rendering();
  renderChoices();
  renderDetail();
  renderResults();
}

async function renderChoices() {
  const box = $('mode-choices');
  const session = state.session();
  const mode = current(session);
  const choices = mode && mode.choices ? await mode.choices(session) : undefined;
  box.replaceChildren(...(choices || []));
}

export function renderDetail() {
  const mode = current(state.session());
  if (mode) mode.renderDetail($('mode-detail'));
}

/** The interval's tick while this screen shows: ages move. */
export function tick() {
  const mode = current(state.session());
  if (mode && mode.redrawsOnTick) renderDetail();
}

export function wire() {
  onShow('mode', renderMode);
  on('mode', renderMode);
  on('detail', renderDetail);
  on('reference', async ({ changed }) => {
    if (!changed) return;
    const session = state.session();
    const mode = current(session);
    if (mode && mode.referenceChanged) await mode.referenceChanged(session);
    if (state.screen() === 'mode') renderMode();
  });
  on('online', () => {
    if (state.screen() === 'mode') renderMode();
  });
  on('queue', () => {
    const mode = current(state.session());
    if (state.screen() === 'mode' && mode && mode.figuresFromQueue) renderDetail();
  });
  on('results', () => {
    const mode = current(state.session());
    if (mode && mode.rowsChanged) mode.rowsChanged();
  });
  $('mode-choices').addEventListener('click', (event) => {
    const target = event.target.closest('button[data-grn], button[data-count]');
    const mode = current(state.session());
    if (target && mode && mode.choose) enqueue(() => mode.choose(target));
    focusScan();
  });
  $('mode-detail').addEventListener('click', (event) => {
    const mode = current(state.session());
    if (mode && mode.detailClicked) mode.detailClicked(event);
    focusScan();
  });
  $('results').addEventListener('click', (event) => {
    const target = event.target.closest('button[data-action="undo"]');
    if (target) {
      const entry = rowOf(target.dataset.key);
      undo(target.dataset.key, entry && entry.session_id);
    }
    focusScan();
  });
  $('results-more').addEventListener('click', () => {
    toggleExpanded();
    focusScan();
  });
  on('word', () => {
    if (state.screen() === 'mode') renderResults();
  });
  $('mode-switch').addEventListener('click', closeSession);
  $('session-close').addEventListener('click', closeSession);
}
