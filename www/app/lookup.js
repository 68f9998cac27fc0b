// What a scanned code is, from the worker's reference cache: a tag (an
// EPC), a unit's serial, a bin label, a GRN, a count session or an
// operator badge; and what a scan says as a label (below). A code the
// cache lacks asks the site first when it answers (a bin or unit added
// mid-shift).

import { withTimeout } from './dom.js';
import { msg, t } from './l10n.js';
import { refuse } from './results.js';
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

/**
 * What else a code may be, when it is not what the screen takes: a GRN, a
 * count (a badge is told before a mode sees it: `badgeOf`). `{kind}`, the
 * selector of the messages that say it (`grn`, `count`), else null.
 */
export async function otherKind(code) {
  for (const kind of ['grn', 'count']) {
    const reply = await ask({ type: 'reference_get', kind, id: code });
    if (reply.ok && reply.row) return { kind };
  }
  return null;
}

/**
 * What a scanned code is when it cannot be a badge: `{kind}` (`tag`, `bin`,
 * `grn`, `count`, or `unit` with the unit's `epc` for a unit's serial), else null.
 */
export async function notABadge(code) {
  if (EPC_PATTERN.test(code)) return { kind: 'tag' };
  if (await cachedBin(code)) return { kind: 'bin' };
  const unit = await findCached(code);
  if (unit.ok && unit.unit) return { kind: 'unit', epc: unit.unit.epc };
  return otherKind(code);
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

// Labels. A scan in a mode is read as a label by the worker, the one GS1
// parser (the page holds no GS1 rule): a GS1 element string (`]C1…`,
// ASCII 29 or the site's substitute, the bracketed form), a GS1 Digital
// Link or an SGTIN/SSCC EPC, else plain text. A label that does not parse
// is refused before anything is queued, in the parser's words (its code
// in small print). Plain text goes to the mode as before. A unit's label
// ((01)+(21), or an SGTIN EPC) goes to the mode as that unit's tag, with
// the label beside it; a pallet's (SSCC) and a SKU's lot go to the modes
// that take them, and are refused by the others with what they are.

/** What to do after a label the parser refused. */
const REFUSED_NEXT = msg('label-refused-next');

/** The worker's reading of `code`: {names, text, gtin?, serial?, lot?, expiry?, sscc?, epc?, unit, bin, sku?, …} or {refused}. */
export function readLabel(code) {
  return ask({ type: 'read_label', text: code });
}

/** Refuses a label that does not parse, naming its AI and what is wrong. */
export function refuseLabel(code, refused) {
  return refuse(code, t('label-refused', { why: refused.message }), t(REFUSED_NEXT), refused.error);
}

/** A label's keys in words: "GTIN 0952… serial 12", "SSCC 1061…", "GTIN 0952… lot AB-1". */
export function keysOf(label) {
  const parts = [];
  if (label.sscc) parts.push(t('label-sscc', { value: label.sscc }));
  if (label.gtin) parts.push(t('label-gtin', { value: label.gtin }));
  if (label.serial) parts.push(t('label-serial', { value: label.serial }));
  if (label.lot) parts.push(t('label-lot', { value: label.lot }));
  if (label.expiry) parts.push(t('label-expiry', { value: label.expiry }));
  return parts.join(' ');
}

/**
 * The EPC of the unit a unit's label names: the cached unit's, else the
 * label's own when it is an SGTIN EPC (a tag the site may not know yet),
 * else, when the site answers, the unit its changes bring. Null when no
 * one knows it: `{epc, label}`, the label as last read.
 */
async function unitOf(code, label) {
  if (label.unit) return { epc: label.unit.epc, label };
  if (label.epc) return { epc: label.epc, label };
  if (!(await askSiteFirst())) return { epc: null, label };
  const again = await readLabel(code);
  return { epc: again.unit ? again.unit.epc : null, label: again.unit ? again : label };
}

/**
 * Hands `code`, read as `label`, to `mode`. A unit's label is the unit's
 * tag to every mode (`mode.scan(epc, at, label)`); a pallet's and a
 * SKU's lot go to `mode.scanPallet` and `mode.scanSkuLot` where a mode
 * has them.
 */
export async function scanLabel(mode, session, code, label, at) {
  const keys = keysOf(label);
  const what = keys ? t('label-what', { text: label.text, keys }) : label.text;
  const still = mode.prompt(session)[0];
  switch (label.names) {
    case 'unit': {
      const unit = await unitOf(code, label);
      if (unit.epc) return mode.scan(unit.epc, at, unit.label);
      if (mode.unknownLabel) return mode.unknownLabel(unit.label);
      return refuse(code, t('label-no-unit', { what }), t('label-no-unit-next'));
    }
    case 'pallet':
      if (mode.scanPallet) return mode.scanPallet(label, code, at);
      return refuse(code, t('label-pallet', { what, mode: t(mode.title) }), t('scan-prompt-again', { prompt: still }));
    case 'sku_lot':
      if (mode.scanSkuLot) return mode.scanSkuLot(label, code, at);
      return refuse(code, t('label-sku-lot', { what }), t('label-sku-lot-next', { prompt: still }));
    default:
      return refuse(code, t('label-nothing', { what }), t('scan-prompt-again', { prompt: still }));
  }
}
