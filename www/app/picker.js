// The picker: who is signed in, and the modes the device's profile runs
// (as the site says); picking one opens its screen, and closing its
// session (Switch mode, Close session, the MODE and CLOSE barcodes)
// comes back here.

import { $, el, failure, show } from './dom.js';
import { closeAlert, notice } from './dialogs.js';
import { scheduleBar } from './bar.js';
import { walkQueue } from './outcomes.js';
import { on } from './events.js';
import { deviceLanguage, msg, t } from './l10n.js';
import { operatorName } from './operators.js';
import { clearRows, refuse } from './results.js';
import { go, onShow } from './screens.js';
import * as state from './state.js';
import { ask } from './worker.js';
import { current, MODE_ORDER, MODES, resetAll } from './modes/index.js';
import { signal } from '../signal.js';

/** What the picker says when the site closed the session that was open here. */
export const SESSION_CLOSED_WORDS = msg('picker-session-closed');

/** Why the picker shows: the site closed the session (cleared once a badge is scanned). */
let closedBySite = false;
/** The summary of the session just closed here (cleared once a mode is picked). */
let closedSummary = '';
/** Why the last badge scanned did not sign in, with its code (cleared once a badge signs in). */
let badgeRefusal = null;

/**
 * The last badge scanned did not sign in: `words()` says why, naming
 * `code`, in the language of the moment (null once one signs in). The picker keeps saying so until the next
 * badge, whatever redraws it (the reference data arriving, a language);
 * clearing it leaves the redraw to the caller.
 */
export function refuseBadge(words, code) {
  badgeRefusal = words ? { words, code } : null;
  if (badgeRefusal) renderPicker();
}

/** What the session came to, in words: its scans, applied, refused and waiting (from the queue's last walk). */
function summary(session, mode) {
  const ofSession = state.sessionItems().filter((item) => item.session_id === session.session_id);
  const items = ofSession.filter((item) => item.command === 'scan');
  const undone = ofSession.filter((item) => item.command === 'undo' && item.state === 'done').length;
  const what = Object.values(session.context || {}).join(' ');
  const by = (...states) => items.filter((item) => states.includes(item.state)).length;
  const title = mode ? t(mode.title) : session.mode;
  const figures = {
    mode: what ? `${title} ${what}` : title,
    count: items.length,
    applied: by('done'),
    refused: by('rejected', 'blocked'),
    waiting: by('queued', 'sending'),
  };
  return undone ? t('picker-summary-undone', { ...figures, undone }) : t('picker-summary', figures);
}

export function renderPicker() {
  const operator = state.operator();
  const awaiting = state.awaitingOperator();
  // While the picker waits for a badge nobody is signed in to pick a mode:
  // the header names no one (not the operator before, whose badge a
  // refused one did not replace).
  const shown = awaiting ? '' : operator;
  $('operator').textContent = shown || '–';
  const name = shown && operatorName(shown);
  $('operator-name').textContent = name || '';
  $('operator-name').hidden = !name;
  $('operator-signout').hidden = !operator;
  const modes = state.deviceModes();
  const box = $('picker-modes');
  box.replaceChildren();
  if (awaiting) {
    show('picker-prompt', t('picker-scan-badge'), badgeRefusal ? 'error' : '');
  } else {
    closedBySite = false;
    show('picker-prompt', modes && modes.length ? t('picker-tap-mode') : '');
  }
  // Before a badge, that is the first thing to do: the big prompt, with the modes waiting below it.
  $('picker-title').textContent = awaiting ? t('picker-sign-in') : t('picker-choose');
  $('picker-prompt').classList.toggle('prompt', awaiting);
  $('picker-prompt').classList.toggle('prompt-small', !awaiting);
  // Why the picker shows, when it has something to say: the site closed the session, or what it came to.
  const refused = awaiting && badgeRefusal ? [badgeRefusal.words(), 'error', [badgeRefusal.code]] : null;
  const note = refused || (closedBySite ? [t(SESSION_CLOSED_WORDS), 'error'] : closedSummary ? [closedSummary, ''] : null);
  if (!modes) {
    show('picker-status', ...(note || [t('picker-no-profile'), 'warn']));
    return;
  }
  const device = state.reference().device;
  if (modes.length === 0) {
    show('picker-status', t('picker-no-modes', { profile: device.profile }), 'warn');
    return;
  }
  show('picker-status', ...(note || [t('picker-device', { device: device.device_id, profile: device.profile })]));
  for (const mode of MODE_ORDER.filter((m) => modes.includes(m))) {
    const info = MODES[mode];
    box.append(el('button', { type: 'button', id: `pick-${mode}`, 'data-mode': mode, disabled: awaiting },
      el('span', { text: t(info.title) }), el('small', { text: t(info.blurb) })));
  }
}

async function pickMode(mode) {
  const operator = state.operator();
  if (state.awaitingOperator() || !operator) {
    show('picker-prompt', t('picker-scan-badge-first'), 'error');
    return;
  }
  closedSummary = '';
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
    await walkQueue();
    closedSummary = summary(session, mode);
  }
  state.setSession(null);
  resetAll();
  clearRows();
  closeAlert();
  go('picker');
  scheduleBar();
  return true;
}

/**
 * The site closed the open session (a supervisor's Close session, or
 * `device close-session`), as a heartbeat's answer or a refusal
 * `session_closed` told: it ends here without a close of its own (the
 * site has closed it), the operator is signed out and the picker says why.
 */
async function endClosedSession() {
  const session = state.session();
  if (!session || !session.session_id) return;
  state.setSession(null);
  resetAll();
  clearRows();
  closeAlert();
  state.setOperator('');
  closedBySite = true;
  // Signed out by the site: the device's language again, before the picker says why.
  await deviceLanguage();
  go('picker');
  signal('alert');
  scheduleBar();
}

/** Whether what the site said closes the open session. */
function closedHere(word) {
  const session = state.session();
  if (!session || !session.session_id) return false;
  const closed = (word && Array.isArray(word.closed_sessions)) ? word.closed_sessions : [];
  return closed.some((c) => c.session_id === session.session_id)
    || state.sessionItems().some((item) => item.session_id === session.session_id
      && item.state === 'rejected' && item.reason === 'session_closed');
}

export function wire() {
  onShow('picker', renderPicker);
  on('word', (word) => {
    if (closedHere(word)) endClosedSession();
  });
  on('queue', () => {
    if (closedHere(state.word())) endClosedSession();
  });
  on('reference', ({ changed }) => {
    if (changed && state.screen() === 'picker') renderPicker();
  });
  $('picker-modes').addEventListener('click', (event) => {
    const target = event.target.closest('button[data-mode]');
    if (target) pickMode(target.dataset.mode);
  });
}
