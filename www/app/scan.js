// The scan field: a keyboard wedge types each scan and ends it with Enter.
// Scans are handled one after another, in the order typed, each with its
// input event's instant: an answer to the open question, a command
// barcode, a badge on the picker (elsewhere told as a badge, never
// captured), or the open mode's scan.

import { $, failure, show } from './dom.js';
import * as constants from './constants.js';
import { acknowledgeAlert, alertOpen, answer, asking, question } from './dialogs.js';
import { msg, t } from './l10n.js';
import { badgeOf, readLabel, refuseLabel, scanLabel } from './lookup.js';
import { operatorLabel } from './operators.js';
import { closeSession } from './picker.js';
import { countRefused, refuse, restate, result } from './results.js';
import { signIn, signOut, touch } from './sign_in.js';
import * as state from './state.js';
import { undoLast } from './undo.js';
import { current } from './modes/index.js';
import * as release from '../release.js';

/** Scans are handled one after another, in the order the wedge typed them. */
let scanChain = Promise.resolve();

/** The chain as it stands: settled when no scan is being handled. */
export function chain() {
  return scanChain;
}

/** Runs `step` after every scan typed before it. */
export function enqueue(step) {
  scanChain = scanChain.then(step);
  return scanChain;
}

export function onScanKey(event) {
  if (event.key !== 'Enter') return;
  event.preventDefault();
  // Read and clear synchronously: the wedge's next burst is already queued
  // behind this event, and awaiting first would mix it into this code. The
  // capture instant is this input event's.
  const input = $('scan-input');
  const code = input.value.trim();
  input.value = '';
  if (!code) return;
  const at = Math.round(performance.timeOrigin + event.timeStamp);
  if (release.hold(code, at)) return;
  queueScan(code, at);
}

/**
 * Handles `code`, captured at `at`, after the scans before it. While a
 * question is open, a scan typed is handled at once: a command that asks
 * (MODE, CLOSE) holds the chain until the question is answered, and a scan
 * queued behind it would wait unseen, and be lost with the page.
 */
export function queueScan(code, at) {
  if (asking() && constants.known()) {
    touch();
    whileAsking(code);
    return;
  }
  scanChain = scanChain.then(() => handleScan(code, at)).catch((err) => refuse(code, String(err)));
}

/**
 * A scan while a question is open: CONFIRM answers yes, anything else is
 * refused with what CONFIRM would do in the question's own words ("Scan
 * CONFIRM to close the count"). Once the question is answered, its rows
 * no longer speak of it: a later CONFIRM answers nothing.
 */
function whileAsking(code) {
  if (constants.commandOf(code) === 'confirm') return answer(true);
  const asked = question();
  const row = refuse(code, t('scan-answer-first', { code }), asked.how);
  asked.answered.then(() => restate(row, t('scan-not-captured', { code }), t('scan-again')));
  return row;
}

async function handleScan(code, at) {
  touch();
  if (!constants.known()) {
    // Without the site's command barcodes a command would be captured as a scan.
    const text = t('scan-no-constants', { code });
    if (state.screen() === 'mode') return refuse(code, text);
    countRefused();
    show('picker-status', text, 'error');
    return;
  }
  if (asking()) return whileAsking(code);
  const command = constants.commandOf(code);
  if (command) return runCommand(command);
  if (alertOpen()) return refuse(code, t('scan-alert-first', { code }));
  const session = state.session();
  if (state.screen() === 'picker' || !session) {
    if (state.awaitingOperator() || !state.operator()) return signIn(code);
    countRefused();
    show('picker-status', t('scan-mode-first', { code }), 'error', [code]);
    return;
  }
  const mode = current(session);
  if (!mode) return refuse(code, t('scan-unknown-mode', { mode: session.mode }));
  // Every scan is read as a label by the worker first: one that does not
  // parse is refused before anything is queued, a GS1 label goes to the
  // mode as what it names, and plain text goes on as the code it is.
  const label = await readLabel(code);
  if (!label.ok) return refuse(code, t('scan-not-captured-why', { error: failure(label) }));
  if (label.refused) return refuseLabel(code, label.refused);
  if (label.names !== 'plain') return scanLabel(mode, session, code, label, at);
  // Every mode takes units (or a bin, a GRN, a count, a manifest), never a
  // badge: one read by mistake (an RFID badge on the sled's path, a badge
  // barcode) is told as such, not captured as a unit the site will refuse.
  const plain = label.text;
  const badge = await badgeOf(plain);
  if (badge) {
    const why = badge.name ? t('scan-badge-named', { name: badge.name, badge: badge.badge }) : t('scan-badge', { badge: badge.badge });
    return refuse(plain, why, t('scan-prompt-again', { prompt: mode.prompt(session)[0] }));
  }
  return mode.scan(plain, at);
}

async function runCommand(command) {
  switch (command) {
    case 'close': {
      // The end of a shift: the session closes and the operator signs out.
      const operator = state.operator();
      return signOut(operator ? { id: msg('signed-out-close'), args: { operator: operatorLabel(operator) } } : { id: msg('signed-out-nobody') });
    }
    case 'undo':
      return undoLast();
    case 'mode':
      return closeSession();
    case 'confirm':
      if (alertOpen()) return acknowledgeAlert();
      return result('confirm', t('scan-nothing-to-confirm'), 'refused');
    default:
      return undefined;
  }
}
