// Dispatch verify: a manifest read live from the site (it cannot open
// offline), then the tags on the dock against it. A tag not on the
// manifest is captured (the ledger refuses it) and stops the dock with the
// blocking alert until acknowledged.

import { capture } from '../capture.js';
import { notice, openAlert } from '../dialogs.js';
import { ago, el, fill } from '../dom.js';
import { emit } from '../events.js';
import { EPC_PATTERN, epcOf } from '../lookup.js';
import { refuse, result } from '../results.js';
import { openSession } from '../session.js';
import { siteGet } from '../site.js';
import * as state from '../state.js';

export const title = 'Dispatch verify';
export const blurb = 'Check tags against the live manifest.';

const DISPATCH_OFFLINE = 'Offline: dispatch verify reads the live manifest and cannot open until the site answers. Reconnect and scan the manifest again.';

/** The live manifest while the mode is open, and when it was read. */
let manifest = null;
let manifestAt = null;

export function reset() {
  manifest = null;
}

/** After a reload: the session's manifest is read again. */
export async function resume(session) {
  if (!session.context.manifest) return;
  const live = await siteGet(`/v1/manifests/${encodeURIComponent(session.context.manifest)}`);
  if (live.body) {
    manifest = live.body;
    manifestAt = Date.now();
  } else notice('Offline: the manifest is read live; scan it again once the site answers.');
}

export function needs(session) {
  const c = session.context;
  return [{ need: 'manifest', label: c.manifest ? `manifest ${c.manifest}` : 'manifest (live)', met: !!(c.manifest && manifest) }];
}

export function prompt(session) {
  const c = session.context;
  if (!c.manifest || !manifest) return ['Scan the manifest', 'read live from the site'];
  return [`Scan tags for ${c.manifest}`, 'a tag not on it stops the dock'];
}

/** Says at once, not only when a manifest is scanned, that it cannot open offline. */
export function rendering() {
  if (!manifest) notice(state.online() === false ? DISPATCH_OFFLINE : '');
}

/** The screen's clock ticked: the manifest's age moves. */
export const redrawsOnTick = true;

async function chooseManifest(id) {
  const session = state.session();
  const live = await siteGet(`/v1/manifests/${encodeURIComponent(id)}`);
  if (live.offline) {
    notice(DISPATCH_OFFLINE);
    return refuse(id, `Dispatch verify did not open: the site does not answer (${id})`);
  }
  if (live.status === 404) return refuse(id, `No manifest ${id} on the site`);
  if (!live.body) return refuse(id, `Manifest ${id}: the site answered ${live.status}`);
  if (!['packing', 'dispatched'].includes(live.body.state)) {
    return refuse(id, `Manifest ${id} is ${live.body.state}: not ready for dispatch`);
  }
  if (session.session_id && session.context.manifest !== id) {
    return refuse(id, `Close this session to verify another manifest than ${session.context.manifest}`);
  }
  notice('');
  manifest = live.body;
  manifestAt = Date.now();
  if (session.session_id) {
    emit('mode');
    return result(id, `Manifest ${id} read again`, 'ok');
  }
  if (await openSession({ manifest: id })) result(id, `Manifest ${id}: ${manifest.units.length} unit(s)`, 'ok');
}

export function renderDetail(box) {
  fill(box, detail());
}

function detail() {
  if (!manifest) return [];
  const verified = manifest.units.filter((u) => u.verified).length;
  const here = manifest.units.filter((u) => u.here).length;
  return [
    el('p', { id: 'manifest-progress', class: 'big-figure' },
      'Verified ', el('span', { id: 'manifest-verified', text: String(verified) }), ' / ', el('span', { id: 'manifest-total', text: String(manifest.units.length) })),
    el('p', { id: 'manifest-age', class: 'status muted', text: `The site's manifest read ${ago(Date.now() - manifestAt)} ago; +${here} verified on this device since.` }),
    el('ul', { id: 'manifest-units', class: 'manifest-units' },
      ...manifest.units.map((u) => el('li', { dataset: { epc: u.epc, verified: String(!!u.verified) }, text: u.epc }))),
  ];
}

export async function scan(code, at) {
  const session = state.session();
  if (!manifest) {
    // After a reload the session's manifest is read again before any tag.
    return chooseManifest(session.context.manifest && EPC_PATTERN.test(code) ? session.context.manifest : code);
  }
  const epc = await epcOf(code);
  if (!epc) return refuse(code, `${code}: not a tag`);
  const unit = manifest.units.find((u) => u.epc === epc);
  const reply = await capture({ mode: 'dispatch_verify', manifest: session.context.manifest, epc }, at, code, unit ? null : 'Not on the manifest');
  if (!unit) {
    if (reply && reply.ok) {
      session.pending_alert = reply.key;
      state.saveSession();
    }
    openAlert('Not on the manifest', `${epc} is not on ${session.context.manifest}. Take it off the dock, then acknowledge.`);
    return;
  }
  if (!unit.verified) unit.here = true;
  unit.verified = true;
  emit('detail');
}

/** An undone scan's unit is unverified again. */
export function undone(entry) {
  if (!manifest) return;
  const epc = entry.code.toUpperCase();
  const unit = manifest.units.find((u) => u.epc === epc);
  if (unit) {
    unit.verified = false;
    unit.here = false;
  }
}
