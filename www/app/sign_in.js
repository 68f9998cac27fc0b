// The operator: the picker's first scan signs in (a badge the site lists,
// once it lists any), CLOSE and Sign out sign out, and an operator idle
// past the device's setting (the shift is over) is signed out.

import { $, ago, show } from './dom.js';
import { alertOpen, asking } from './dialogs.js';
import { deviceLanguage, deviceLocale, msg, setLanguage, t } from './l10n.js';
import { notABadge } from './lookup.js';
import { anyListed, operatorLanguage, operatorName, operatorLabel } from './operators.js';
import { closeSession, refuseBadge, renderPicker } from './picker.js';
import { countRefused } from './results.js';
import { focusScan, go } from './screens.js';
import { askSiteFirst } from './site.js';
import * as state from './state.js';
import { current } from './modes/index.js';
import { signal } from '../signal.js';

/** Sign-out after this many idle minutes (the operator's shift ends), per device. */
export const IDLE_KEY = 'stockhop.idle_minutes';
const IDLE_DEFAULT_MIN = 30;
export const IDLE_CHOICES_MIN = [5, 15, 30, 60, 120, 240];
const LAST_ACTIVITY_KEY = 'stockhop.last_activity';

/** The last scan or tap, for the idle sign-out. */
let lastActivity = Number(localStorage.getItem(LAST_ACTIVITY_KEY)) || Date.now();

/** The picker's first scan signs the operator in, when it is a badge. */
export async function signIn(code) {
  // A badge added since the cache last read the site is asked about first.
  if (!operatorName(code) && anyListed()) await askSiteFirst();
  const known = anyListed();
  // Why the code does not sign in, in words (a function: the picker words it again in the language it draws in).
  let wrong = null;
  const kind = operatorName(code) ? null : await notABadge(code);
  if (kind) wrong = () => t('sign-in-not-badge-kind', { code, kind: kind.kind, epc: kind.epc || '' });
  else if (known && !operatorName(code)) wrong = () => t('sign-in-not-known', { code });
  if (wrong) {
    countRefused();
    // Nobody is signed in until a badge the site knows is scanned.
    state.awaitOperator();
    refuseBadge(() => t('sign-in-refused', { why: wrong() }), code);
    signal('refused');
    return;
  }
  state.setOperator(code);
  refuseBadge(null);
  touch();
  // The operator's language, when the site names one, before the picker draws.
  await setLanguage(operatorLanguage(code) || deviceLocale());
  renderPicker();
  show('picker-status', t('signed-in', { operator: operatorLabel(code) }), '', [code]);
  signal('acknowledge');
}

/** Signs the operator out (closing an open session first): the next scan is a badge again. */
export async function signOut(why) {
  if (state.session() && !(await closeSession())) return;
  state.setOperator('');
  refuseBadge(null);
  await deviceLanguage();
  go('picker');
  show('picker-status', t(why.id, why.args));
}

export function idleMinutes() {
  const minutes = Number(localStorage.getItem(IDLE_KEY));
  return minutes > 0 ? minutes : IDLE_DEFAULT_MIN;
}

/** A scan or a tap: the operator is still here. */
export function touch() {
  lastActivity = Date.now();
  localStorage.setItem(LAST_ACTIVITY_KEY, String(lastActivity));
}

/** Signs out an operator idle for longer than the device's setting (the shift is over). */
export function checkIdle() {
  const session = state.session();
  const mode = current(session);
  if (!state.operator() || alertOpen() || asking() || (mode && mode.keepsOperator && mode.keepsOperator(session))) return;
  const idle = Date.now() - lastActivity;
  if (idle > idleMinutes() * 60 * 1000) signOut({ id: msg('signed-out-idle'), args: { idle: ago(idle) } });
}

export function wire() {
  $('operator-change').addEventListener('click', () => {
    state.awaitOperator();
    renderPicker();
    focusScan();
  });
  $('operator-signout').addEventListener('click', () => signOut({ id: msg('signed-out'), args: { operator: operatorLabel(state.operator()) } }));
}
