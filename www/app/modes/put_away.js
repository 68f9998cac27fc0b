// Put-away: a bin label, then the units that go into it (by tag, serial
// or GS1 unit label, which scan.js hands over as the unit's tag). A burst of tags goes straight on; only a code the cache lacks
// waits for the site, and one the site knows as neither a unit nor a bin
// is told so, the bin unchanged, and not captured.

import { capture } from '../capture.js';
import { emit } from '../events.js';
import { binOrUnit, EPC_PATTERN, otherKind } from '../lookup.js';
import { refuse, result } from '../results.js';
import { msg, t } from '../l10n.js';
import { openSession } from '../session.js';
import * as state from '../state.js';

export const title = msg('mode-put_away');
export const blurb = msg('mode-put_away-blurb');
/** The screen shows the bin last scanned. */
export const showsBin = true;

/** Opens at once: it needs nothing but the device. */
export async function opened() {
  await openSession({});
}

export function needs(session) {
  return [{ need: 'bin', label: session.bin ? t('bin-need', { bin: session.bin }) : t('bin-need-none'), met: !!session.bin }];
}

export function prompt(session) {
  return session.bin ? [t('put-prompt-units', { bin: session.bin }), t('put-prompt-other-bin')] : [t('prompt-bin'), t('put-prompt-wait')];
}

export function renderDetail(box) {
  box.replaceChildren();
}

/** `label`: the GS1 unit label `code` (the unit's EPC) was read from. */
export async function scan(code, at, label) {
  const session = state.session();
  // A burst of tags goes straight on (the cache answers bins at once);
  // only a code the cache lacks waits for the site.
  const known = state.bins().has(code) ? { bin: state.bins().get(code) } : EPC_PATTERN.test(code) ? {} : await binOrUnit(code);
  if (known.bin) {
    session.bin = code;
    state.saveSession();
    emit('mode');
    result(code, t('find-bin', { bin: code }), 'ok');
    return;
  }
  const still = session.bin ? t('put-still', { bin: session.bin }) : t('mode-put_away-blurb');
  if (!EPC_PATTERN.test(code) && !known.unit) {
    const other = await otherKind(code);
    if (other) return refuse(code, t('put-other-kind', { code, kind: other.kind }), still);
    // Offline, the site decides: the code is kept as a unit's serial.
    if (known.asked) return refuse(code, t('put-neither', { code }), still);
  }
  const shown = label ? label.text : code;
  if (!session.bin) return refuse(shown, t('bin-first', { code: shown }), t('put-bin-then-units'));
  const body = { mode: 'put_away', bin: session.bin };
  if (EPC_PATTERN.test(code)) body.epc = code.toUpperCase();
  else body.code = code;
  // Not awaited: a burst's captures go out in order and are acknowledged
  // as their transactions complete.
  capture(body, at, shown);
}
