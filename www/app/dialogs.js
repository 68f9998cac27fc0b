// What stops the operator: the blocking alert (an unmatched tag at the
// dock, acknowledged by a tap or the CONFIRM barcode), the yes/no question
// (a tap, or CONFIRM for yes), and the open mode's notice line (a
// refusal such as dispatch verify's offline one).

import { $ } from './dom.js';
import { t } from './l10n.js';
import { result } from './results.js';
import { focusScan } from './screens.js';
import * as state from './state.js';
import { signal } from '../signal.js';

/**
 * The open question while it is shown: its answers' labels (`yes`, `no`),
 * `how` (how to answer it, in words: tap No or scan CONFIRM for yes),
 * `answered` (the promise its answer settles) and `settle`.
 */
let openQuestion = null;
/** The blocking alert is shown: scans wait for its acknowledgement. */
let alertShown = false;

/** Whether a yes/no question waits for its answer. */
export function asking() {
  return openQuestion !== null;
}

/**
 * The open question's answers, for a line that speaks of it, or null:
 * {yes, no, how, answered}, where `answered` settles once it is answered (a
 * line that spoke of it says something else from then on).
 */
export function question() {
  if (!openQuestion) return null;
  const { yes, no, how, answered } = openQuestion;
  return { yes, no, how, answered };
}

/** Answers the open question (no-op when none is open). */
export function answer(yes) {
  if (openQuestion) openQuestion.settle(yes);
}

/**
 * Asks a yes/no question over the screen; resolves true for yes (a tap, or
 * the CONFIRM barcode). `how` says how to answer it, for a scan refused
 * meanwhile.
 */
export function confirmBox(title, text, yes, no, how) {
  $('confirm-title').textContent = title;
  $('confirm-text').textContent = text;
  $('confirm-yes').textContent = yes;
  $('confirm-no').textContent = no;
  $('confirm').hidden = false;
  signal('alert');
  let resolve;
  const answered = new Promise((done) => {
    resolve = done;
  });
  openQuestion = {
    yes,
    no,
    how,
    answered,
    settle: (yesNo) => {
      openQuestion = null;
      $('confirm').hidden = true;
      resolve(yesNo);
      focusScan();
    },
  };
  return answered;
}

export function alertOpen() {
  return alertShown;
}

/** Stops the operator with the blocking alert, heard as well as seen. */
export function openAlert(title, text) {
  alertShown = true;
  signal('alert');
  $('alert-title').textContent = title;
  $('alert-text').textContent = text;
  $('alert').hidden = false;
  focusScan();
}

export function closeAlert() {
  alertShown = false;
  $('alert').hidden = true;
}

export function acknowledgeAlert() {
  const session = state.session();
  if (session && session.pending_alert) {
    session.dock_acked.push(session.pending_alert);
    delete session.pending_alert;
    state.saveSession();
  }
  closeAlert();
  result('confirm', t('alert-acknowledged'), 'ok');
  focusScan();
}

/** The open mode's notice line; empty text hides it. */
export function notice(text, kind) {
  const box = $('mode-notice');
  box.hidden = !text;
  box.textContent = text || '';
  box.className = 'notice' + (kind ? ` ${kind}` : '');
}

export function wire() {
  $('confirm-yes').addEventListener('click', () => answer(true));
  $('confirm-no').addEventListener('click', () => answer(false));
  $('alert-ack').addEventListener('click', acknowledgeAlert);
}
