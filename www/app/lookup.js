// What a scanned code is, from the worker's reference cache: a tag (an
// EPC), a unit's serial, a bin label, a GRN, a count session or an
// operator badge. A code the cache lacks asks the site first when it
// answers (a bin or unit added mid-shift).

import { withTimeout } from './dom.js';
import { askSiteFirst, LOOKUP_WAIT_MS, takeReference } from './site.js';
import { operatorName } from './operators.js';
import * as state from './state.js';
import { ask } from './worker.js';

/** A tag's EPC as the scanners type it: 96 bits in hex. */
export const EPC_PATTERN = /^[0-9A-Fa-f]{24}$/;

/**
 * `find_unit` with a serial read whatever its case: as scanned, then in
 * upper and in lower case (a label printed in one case and typed in
 * another is the same unit).
 */
export async function findCached(code) {
  const code2 = EPC_PATTERN.test(code) ? code.toUpperCase() : code;
  let found = await ask({ type: 'find_unit', code: code2 });
  for (const other of [code.toUpperCase(), code.toLowerCase()]) {
    if (!found.ok || found.unit || other === code2) continue;
    const again = await ask({ type: 'find_unit', code: other });
    if (again.ok && again.unit) found = again;
  }
  return found;
}

/** A scanned code as an EPC: itself when it is one, else the cached unit whose serial it is. */
export async function epcOf(code) {
  if (EPC_PATTERN.test(code)) return code.toUpperCase();
  const found = await findCached(code);
  return found.ok && found.unit ? found.unit.epc : null;
}

/**
 * A bin's cached row by its label: from the bins the page holds (a list
 * stops at the worker's most rows a list answers, so a large site's page
 * holds only the first of them), else read from the cache by its label.
 */
async function cachedBin(code) {
  const bins = state.bins();
  if (bins.has(code)) return bins.get(code);
  const reply = await ask({ type: 'reference_get', kind: 'bin', id: code });
  return reply.ok && reply.row ? reply.row : null;
}

/**
 * A bin label's cached row: a code that is not a tag, a bin or a cached
 * unit's serial asks the site first (a bin added mid-shift).
 */
export async function binOf(code) {
  if (EPC_PATTERN.test(code)) return state.bins().get(code) || null;
  const bin = await cachedBin(code);
  if (bin) return bin;
  const unit = await findCached(code);
  if (unit.ok && unit.unit) return null;
  if (await askSiteFirst()) return cachedBin(code);
  return null;
}

/**
 * A code as a bin label or a unit's serial: {bin, unit, asked}. One the
 * cache knows as neither is asked of the site when it answers (its
 * changes read to the end, bounded by LOOKUP_WAIT_MS); `asked` says the
 * site answered, so "neither" is the site's word, not only this copy's.
 */
export async function binOrUnit(code) {
  const look = async () => {
    const bin = await cachedBin(code);
    const found = bin ? null : await findCached(code);
    return { bin, unit: found && found.ok ? found.unit : null };
  };
  const known = await look();
  if (known.bin || known.unit || state.online() === false || !state.device().siteUrl) return { ...known, asked: false };
  const reply = await withTimeout(ask({ type: 'reference_refresh' }), LOOKUP_WAIT_MS);
  if (!reply || !reply.ok) return { ...known, asked: false };
  await takeReference(reply);
  return { ...(await look()), asked: true };
}

/** A cached row by kind and id; on a miss, read again after the site's changes. */
export async function cached(kind, id) {
  const get = () => ask({ type: 'reference_get', kind, id });
  let reply = await get();
  if (reply.ok && !reply.row && await askSiteFirst()) reply = await get();
  return reply.ok ? reply : { row: null };
}

/** What else a code may be, when it is not what the screen takes: a GRN, a count (a badge is told before a mode sees it: `badgeOf`). */
export async function otherKind(code) {
  for (const [kind, words] of [['grn', 'a GRN'], ['count', 'a count session']]) {
    const reply = await ask({ type: 'reference_get', kind, id: code });
    if (reply.ok && reply.row) return words;
  }
  return null;
}

/** What a scanned code is when it cannot be a badge (a tag, a bin, a unit's serial, a GRN, a count), else null. */
export async function notABadge(code) {
  if (EPC_PATTERN.test(code)) return 'a tag';
  if (await cachedBin(code)) return 'a bin label';
  const unit = await findCached(code);
  if (unit.ok && unit.unit) return `the serial of unit ${unit.unit.epc}`;
  for (const [kind, words] of [['grn', 'a GRN'], ['count', 'a count session']]) {
    const reply = await ask({ type: 'reference_get', kind, id: code });
    if (reply.ok && reply.row) return words;
  }
  return null;
}

/**
 * Whose badge a code is, when it is one: {badge, name} for an operator the
 * site lists (name null when it sends none) or the operator signed in (a
 * site that lists none takes any badge), unless the cache knows the code
 * as a unit (by tag or serial) or a bin label, which it then is. Else
 * null. Only a badge asks the cache: a burst of tags is not slowed.
 */
export async function badgeOf(code) {
  const name = operatorName(code);
  if (name == null && code !== state.operator()) return null;
  if (await cachedBin(code)) return null;
  const unit = await findCached(code);
  if (unit.ok && unit.unit) return null;
  return { badge: code, name };
}
