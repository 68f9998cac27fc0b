// The picker: who is signed in, and the modes the device's profile runs
// (as the site says); picking one opens its screen, and closing its
// session (Switch mode, Close session, the MODE and CLOSE barcodes)
// comes back here.

import { $, el, failure, show } from './dom.js';
import { closeAlert, notice } from './dialogs.js';
import { scheduleBar } from './bar.js';
import { on } from './events.js';
import { operatorName } from './operators.js';
import { clearRows, refuse } from './results.js';
import { go, onShow } from './screens.js';
import * as state from './state.js';
import { ask } from './worker.js';
import { current, MODE_ORDER, MODES, resetAll } from './modes/index.js';

export function renderPicker() {
  const operator = state.operator();
  const awaiting = state.awaitingOperator();
  $('operator').textContent = operator || '–';
  const name = operator && operatorName(operator);
  $('operator-name').textContent = name || '';
  $('operator-name').hidden = !name;
  $('operator-signout').hidden = !operator;
  const modes = state.deviceModes();
  const box = $('picker-modes');
  box.replaceChildren();
  if (awaiting) {
    show('picker-prompt', 'Scan your operator badge');
  } else {
    show('picker-prompt', modes && modes.length ? 'Tap a mode' : '');
  }
  if (!modes) {
    show('picker-status', 'This device does not know its profile yet: it reads it from the site once online.', 'warn');
    return;
  }
  const device = state.reference().device;
  if (modes.length === 0) {
    show('picker-status', `Profile ${device.profile} runs no handheld mode.`, 'warn');
    return;
  }
  show('picker-status', `${device.device_id} · ${device.profile}`);
  for (const mode of MODE_ORDER.filter((m) => modes.includes(m))) {
    const info = MODES[mode];
    box.append(el('button', { type: 'button', id: `pick-${mode}`, 'data-mode': mode, disabled: awaiting },
      el('span', { text: info.title }), el('small', { text: info.blurb })));
  }
}

async function pickMode(mode) {
  const operator = state.operator();
  if (state.awaitingOperator() || !operator) {
    show('picker-prompt', 'Scan your operator badge first', 'error');
    return;
  }
  state.setSession({ mode, operator_id: operator, session_id: null, context: {}, encode: false, skus: {}, seen: [], dock_acked: [] });
  // A notice belongs to the mode that raised it (dispatch verify's offline one).
  notice('');
  clearRows();
  resetAll();
  go('mode');
  // Modes that need nothing but the device open their session at once.
  const picked = MODES[mode];
  if (picked.opened) await picked.opened();
}

/** Closes the open session (asking first where the mode does) and shows the picker; resolves true once closed. */
export async function closeSession() {
  const session = state.session();
  const mode = current(session);
  if (mode && mode.beforeClose && !(await mode.beforeClose(session))) return false;
  if (session && session.session_id) {
    const reply = await ask({ type: 'close_session', session_id: session.session_id });
    if (!reply.ok && reply.error.code !== 'SESSION_CLOSED') {
      refuse('close', failure(reply));
      return false;
    }
  }
  state.setSession(null);
  resetAll();
  clearRows();
  closeAlert();
  go('picker');
  scheduleBar();
  return true;
}

export function wire() {
  onShow('picker', renderPicker);
  on('reference', ({ changed }) => {
    if (changed && state.screen() === 'picker') renderPicker();
  });
  $('picker-modes').addEventListener('click', (event) => {
    const target = event.target.closest('button[data-mode]');
    if (target) pickMode(target.dataset.mode);
  });
}
