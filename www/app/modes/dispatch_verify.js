// Dispatch verify: a manifest read live from the site (it cannot open
// offline), then the tags on the dock against it: a unit's tag or GS1
// label (scan.js hands it over as the unit's tag), or a pallet's SSCC
// label, which verifies every unit the manifest puts on that pallet. A tag not on the
// manifest is captured (the ledger refuses it) and stops the dock with the
// blocking alert until acknowledged. The ticks are the site's (the
// manifest as last read, read again whenever one of this session's scans
// is answered) and this device's scans and undos still waiting, marked
// as waiting: never what was captured.

import { attr, msg, t, valueWords } from '../l10n.js';
import { capture } from '../capture.js';
import { notice, openAlert } from '../dialogs.js';
import { ago, el, fill } from '../dom.js';
import { emit } from '../events.js';
import { EPC_PATTERN, epcOf } from '../lookup.js';
import { refuse, result } from '../results.js';
import { openSession } from '../session.js';
import { siteGet } from '../site.js';
import * as state from '../state.js';

export const title = msg('mode-dispatch_verify');
export const blurb = msg('mode-dispatch_verify-blurb');

const DISPATCH_OFFLINE = msg('dispatch-offline');

/** How soon after this session's scans are answered the manifest is read again: once for a burst. */
const MANIFEST_AFTER_ANSWER_MS = 250;

/** The live manifest while the mode is open, and when it was read (asked: this device's clock). */
let manifest = null;
let manifestAt = null;
let manifestQueued = null;

export function reset() {
  manifest = null;
}

/** After a reload: the session's manifest is read again. */
export async function resume(session) {
  if (!session.context.manifest) return;
  if (!(await readManifest(session.context.manifest))) notice(t('dispatch-offline-resume'));
}

/** Reads the session's manifest live again; true when the site answered. */
async function readManifest(id) {
  const asked = Date.now();
  const live = await siteGet(`/v1/manifests/${encodeURIComponent(id)}`);
  if (!live.body) return false;
  manifest = live.body;
  manifestAt = asked;
  return true;
}

/** One of this session's scans was answered: the manifest is read again soon (a burst asks once). */
export function rowsChanged() {
  const open = () => {
    const session = state.session();
    return session && session.mode === 'dispatch_verify' && session.context.manifest && manifest ? session : null;
  };
  if (manifestQueued || !open()) return;
  manifestQueued = setTimeout(async () => {
    manifestQueued = null;
    const session = open();
    if (session && await readManifest(session.context.manifest)) emit('detail');
  }, MANIFEST_AFTER_ANSWER_MS);
}

/** Its figures count the queue's items: redrawn on each walk of the queue. */
export const figuresFromQueue = true;

/**
 * Each unit's tick: `true` when the site holds it verified (its manifest,
 * or an answer that came after the manifest was read), `waiting` when
 * this device's scan of it still waits to go, `false` otherwise. An undo
 * takes the tick off the same way (answered, or waiting); a refused scan
 * or undo changes nothing.
 */
function ticks(session) {
  const tick = new Map(manifest.units.map((u) => [u.epc, u.verified ? 'true' : 'false']));
  const items = state.sessionItems().filter((i) => i.session_id === session.session_id);
  // A scan names its tag, or its pallet: every unit of that pallet on the manifest.
  const epcsOf = (body) => (!body ? [] : body.epc ? [body.epc] : body.sscc ? palletUnits(body.sscc).map((u) => u.epc) : []);
  const epcsOfKey = new Map(items.filter((i) => i.command === 'scan').map((i) => [i.key, epcsOf(i.body)]));
  const waiting = (i) => i.state === 'queued' || i.state === 'sending';
  // An answer the manifest as read cannot hold yet: recorded after it was asked for.
  const since = (i) => i.state === 'done' && (i.updated_at == null || i.updated_at >= manifestAt);
  for (const item of items) {
    if (!waiting(item) && !since(item)) continue;
    const epcs = item.command === 'scan' ? epcsOf(item.body) : item.command === 'undo' ? epcsOfKey.get(item.body && item.body.target_key) || [] : [];
    for (const epc of epcs) {
      if (!tick.has(epc)) continue;
      if (item.command === 'scan') tick.set(epc, waiting(item) && tick.get(epc) !== 'true' ? 'waiting' : 'true');
      else tick.set(epc, waiting(item) ? 'undo-waiting' : 'false');
    }
  }
  return tick;
}

/** The manifest's units on the pallet `sscc`, as the site's manifest says. */
function palletUnits(sscc) {
  return manifest.units.filter((u) => u.sscc === sscc);
}

export function needs(session) {
  const c = session.context;
  return [{ need: 'manifest', label: c.manifest ? t('dispatch-need', { manifest: c.manifest }) : t('dispatch-need-none'), met: !!(c.manifest && manifest) }];
}

export function prompt(session) {
  const c = session.context;
  if (!c.manifest || !manifest) return [t('dispatch-prompt'), t('dispatch-prompt-small')];
  return [t('dispatch-prompt-tags', { manifest: c.manifest }), t('dispatch-prompt-tags-small')];
}

/** Says at once, not only when a manifest is scanned, that it cannot open offline. */
export function rendering() {
  if (!manifest) notice(state.online() === false ? t(DISPATCH_OFFLINE) : '');
}

/** The screen's clock ticked: the manifest's age moves. */
export const redrawsOnTick = true;

async function chooseManifest(id) {
  const session = state.session();
  const asked = Date.now();
  const live = { ...(await siteGet(`/v1/manifests/${encodeURIComponent(id)}`)), asked };
  if (live.offline) {
    notice(t(DISPATCH_OFFLINE));
    return refuse(id, t('dispatch-no-answer', { manifest: id }));
  }
  if (live.status === 404) return refuse(id, t('dispatch-no-manifest', { manifest: id }));
  if (!live.body) return refuse(id, t('dispatch-answered', { manifest: id, status: String(live.status) }));
  if (!['packing', 'dispatched'].includes(live.body.state)) {
    return refuse(id, t('dispatch-not-ready', { manifest: id, state: valueWords('manifest-state', live.body.state) }));
  }
  if (session.session_id && session.context.manifest !== id) {
    return refuse(id, t('dispatch-close-first', { manifest: session.context.manifest }));
  }
  notice('');
  manifest = live.body;
  manifestAt = live.asked;
  if (session.session_id) {
    emit('mode');
    return result(id, t('dispatch-read-again', { manifest: id }), 'ok');
  }
  if (await openSession({ manifest: id })) result(id, t('dispatch-opened', { manifest: id, units: manifest.units.length }), 'ok');
}

export function renderDetail(box) {
  fill(box, detail());
}

const TICK_WORDS = { true: msg('tick-verified'), waiting: msg('tick-waiting'), 'undo-waiting': msg('tick-undo-waiting'), false: msg('tick-not-verified') };

function detail() {
  if (!manifest) return [];
  const tick = ticks(state.session());
  const all = [...tick.values()];
  const waiting = all.filter((t) => t === 'waiting').length;
  const verified = all.filter((t) => t === 'true' || t === 'waiting').length;
  return [
    el('p', { id: 'manifest-progress', class: 'big-figure' },
      el('span', { text: t('dispatch-verified') }), ' ', el('span', { id: 'manifest-verified', text: String(verified) }), ' / ', el('span', { id: 'manifest-total', text: String(manifest.units.length) }),
      waiting ? el('small', { id: 'manifest-waiting', class: 'waiting', text: ` ${t('dispatch-waiting-here', { count: waiting })}` }) : null),
    el('p', { id: 'manifest-age', class: 'status muted', text: t('dispatch-age', { age: ago(Date.now() - manifestAt), waiting }) }),
    el('ul', { id: 'manifest-units', class: 'manifest-units', 'aria-label': attr('dispatch-units', 'aria-label') },
      ...manifest.units.map((u) => el('li', {
        dataset: { epc: u.epc, verified: tick.get(u.epc), ...(u.sscc ? { sscc: u.sscc } : {}) },
        'aria-label': u.sscc ? t('dispatch-unit-pallet', { epc: u.epc, sscc: u.sscc, tick: t(TICK_WORDS[tick.get(u.epc)]) })
          : t('dispatch-unit', { epc: u.epc, tick: t(TICK_WORDS[tick.get(u.epc)]) }),
        text: u.epc,
      }, u.sscc ? el('small', { class: 'pallet', text: ` ${t('dispatch-pallet', { sscc: u.sscc })}` }) : null))),
  ];
}

/** A pallet's label: its SSCC verifies every unit the manifest puts on that pallet. */
export async function scanPallet(label, code, at) {
  const session = state.session();
  if (!manifest) return refuse(label.text, t('dispatch-manifest-first', { code: label.text }), t('dispatch-manifest-first-next'));
  const sscc = label.sscc;
  const units = palletUnits(sscc);
  const body = { mode: 'dispatch_verify', manifest: session.context.manifest, sscc };
  const reply = await capture(body, at, t('dispatch-pallet-shown', { code: label.text, units: units.length }), units.length ? null : t('dispatch-not-on'));
  if (!units.length) {
    if (reply && reply.ok) {
      session.pending_alert = reply.key;
      state.saveSession();
    }
    openAlert(t('dispatch-not-on'), t('dispatch-pallet-not-on', { sscc, manifest: session.context.manifest }));
    return;
  }
  if (reply && reply.ok) {
    state.sessionItems().push({ key: reply.key, session_id: session.session_id, command: 'scan', body: reply.body, state: 'queued' });
    emit('detail');
  }
}

/** `label`: the GS1 unit label `code` (the unit's EPC) was read from. */
export async function scan(code, at, label) {
  const session = state.session();
  if (!manifest) {
    // After a reload the session's manifest is read again before any tag.
    return chooseManifest(session.context.manifest && EPC_PATTERN.test(code) ? session.context.manifest : code);
  }
  const epc = await epcOf(code);
  if (!epc) return refuse(code, t('dispatch-not-tag', { code }));
  const unit = manifest.units.find((u) => u.epc === epc);
  const body = { mode: 'dispatch_verify', manifest: session.context.manifest, epc };
  const reply = await capture(body, at, label ? label.text : code, unit ? null : t('dispatch-not-on'));
  if (!unit) {
    if (reply && reply.ok) {
      session.pending_alert = reply.key;
      state.saveSession();
    }
    openAlert(t('dispatch-not-on'), t('dispatch-tag-not-on', { epc, manifest: session.context.manifest }));
    return;
  }
  if (reply && reply.ok) {
    // Waiting here until the walk of the queue lists it with its answer.
    state.sessionItems().push({ key: reply.key, session_id: session.session_id, command: 'scan', body: reply.body, state: 'queued' });
    emit('detail');
  }
}
