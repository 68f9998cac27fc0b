// The five modes, one module each. A mode module exports its screen
// (`title`, `blurb`, `needs(session)` — what it still needs, as
// [{need, label, met}] —, `prompt(session)` — what to scan next —,
// `renderDetail(box)`, and `choices(session)` where a tap can pick what
// it needs), its scan handling (`scan(code, at)`), and, where it has
// them: `opened()` (right after it is picked), `resume(session)` (after
// a reload), `referenceChanged(session)`, `rowsChanged()`,
// `undone(entry)`, `beforeClose(session)` (true to close),
// `keepsOperator(session)` (no idle sign-out), `rendering()`, `reset()`,
// and the flags `showsBin`, `figuresFromQueue`, `redrawsOnTick`,
// `readOnly`.

import * as cycleCount from './cycle_count.js';
import * as dispatchVerify from './dispatch_verify.js';
import * as findUnit from './find_unit.js';
import * as putAway from './put_away.js';
import * as receive from './receive.js';

export const MODES = {
  put_away: putAway,
  receive,
  cycle_count: cycleCount,
  dispatch_verify: dispatchVerify,
  find_unit: findUnit,
};

/** The order the picker lists them in. */
export const MODE_ORDER = ['put_away', 'receive', 'cycle_count', 'dispatch_verify', 'find_unit'];

/** The module of the open session's mode, or null. */
export function current(session) {
  return session ? MODES[session.mode] || null : null;
}

/** Every mode forgets what it held for the last session. */
export function resetAll() {
  for (const mode of Object.values(MODES)) if (mode.reset) mode.reset();
}
