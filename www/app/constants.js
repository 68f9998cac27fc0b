// What the site defines and the page follows, read from the site
// (GET /v1/handheld/constants) rather than written here a second time:
// the command barcodes' payloads and what each does, the undo window,
// and the modes whose scans can be undone. The last answer is kept in
// localStorage, so a page loaded offline (from the worker's cache) knows
// them too; the API is never answered from the worker's cache.
//
// Until the page has read them once, it cannot tell a command barcode
// from a code to capture, so every scan is refused with the reason
// (`known()` false), and they are read again each time the site's light
// turns on.

import { SITE_TIMEOUT_MS } from './site.js';

const CONSTANTS_KEY = 'stockhop.constants';
const CONSTANTS_PATH = '/v1/handheld/constants';

let constants = stored();

function stored() {
  try {
    return usable(JSON.parse(localStorage.getItem(CONSTANTS_KEY)));
  } catch {
    return null;
  }
}

/** The answer when it has every field the page reads, else null. */
function usable(body) {
  return body && Number.isFinite(body.undo_window_ms) && Array.isArray(body.commands)
    && Array.isArray(body.undoable_modes) ? body : null;
}

/** Reads the site's answer (this page's own origin), keeping it; resolves true when the page knows the constants. */
export async function load() {
  const body = usable(await fetch(CONSTANTS_PATH, { cache: 'no-store', signal: AbortSignal.timeout(SITE_TIMEOUT_MS) })
    .then((res) => (res.ok ? res.json() : null))
    .catch(() => null));
  if (body) {
    constants = body;
    localStorage.setItem(CONSTANTS_KEY, JSON.stringify(body));
  }
  return known();
}

/** Whether the page has read the site's constants (now or on an earlier load). */
export function known() {
  return constants !== null;
}

/** What a scanned code commands (`close`, `undo`, `mode`, `confirm`), or undefined when it is no command barcode. */
export function commandOf(code) {
  if (!constants) return undefined;
  const wanted = code.toUpperCase();
  const found = constants.commands.find((c) => c.payload.toUpperCase() === wanted);
  return found ? found.action : undefined;
}

/** The ledger's undo window, from the original's capture time (rule 10). */
export function undoWindowMs() {
  return constants ? constants.undo_window_ms : 0;
}

/** The modes whose scans the ledger undoes: every mode that changes something. */
export function undoable(mode) {
  return !!constants && constants.undoable_modes.includes(mode);
}
