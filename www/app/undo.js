// Undo and re-scan: an Undo of a scan (its row's button, the queue
// screen's, or the UNDO barcode for this session's last scan) is itself a
// queued `undo` item; a re-scan of a `stale_state` refusal reads the unit
// live, captures the scan again and acknowledges the refused one.

import { failure, show } from './dom.js';
import * as constants from './constants.js';
import { emit } from './events.js';
import { t } from './l10n.js';
import { addResult, countCaptured, refuse, result, rowOf, rows, scheduleResults, undoable } from './results.js';
import * as state from './state.js';
import { ask } from './worker.js';
import { current, MODES } from './modes/index.js';
import { signal } from '../signal.js';

/** Undoes the scan captured under `key` (from this session's list or the queue). */
export async function undo(key, sessionId) {
  const session = state.session();
  const into = session && session.session_id ? session.session_id : sessionId;
  if (!into) return { ok: false, error: { code: 'NO_SESSION', message: t('undo-no-session') } };
  const reply = await ask({ type: 'capture', session_id: into, command: 'undo', body: { target_key: key } });
  const entry = rowOf(key);
  if (reply.ok) {
    const what = entry ? entry.code : key.slice(0, 8);
    if (entry) {
      entry.undone = true;
      entry.kind = 'undone';
    }
    addResult({ code: what, text: t('undo-row', { seq: reply.client_seq, code: what }), kind: 'kept', state: 'queued', key: reply.key, occurred_at: reply.occurred_at, session_id: into });
    // The screen's figures take the undo at once, as waiting, until the walk of the queue lists it.
    if (session && into === session.session_id) {
      state.sessionItems().push({ key: reply.key, session_id: into, command: 'undo', body: reply.body, state: 'queued' });
    }
    show('scan-status', t('undo-done', { code: what }), '', [what]);
    signal('kept');
    undoneHere(entry);
  } else {
    refuse(key, t('undo-failed', { error: failure(reply) }));
  }
  scheduleResults();
  emit('captured', reply);
  return reply;
}

/** What the open screen counted for a scan now undone comes off its figures. */
function undoneHere(entry) {
  const session = state.session();
  if (!session || !entry) return;
  const mode = current(session);
  if (mode && mode.undone) mode.undone(entry);
  emit('detail');
}

/** The UNDO barcode: this session's last scan, when the ledger will honour it. */
export async function undoLast() {
  const now = Date.now();
  const last = rows().find((r) => r.key && constants.undoable(r.mode) && !r.undone && r.kind !== 'undone');
  if (!last || !undoable(last, now)) {
    result('undo', t('undo-nothing', { seconds: Math.round(constants.undoWindowMs() / 1000) }), 'refused');
    return;
  }
  await undo(last.key, last.session_id);
}

/** Re-scan of a `stale_state` item: read the unit live, capture the scan again, acknowledge the old one. */
export async function rescan(item) {
  const epc = item.body && item.body.epc;
  if (!epc) return { ok: false, error: { code: 'NO_EPC', message: t('rescan-no-epc') } };
  const read = await ask({ type: 'refresh_unit', epc });
  if (!read.ok) return read;
  const mode = item.body.mode;
  const session = state.session();
  const into = session && session.session_id && session.mode === mode ? session.session_id : null;
  if (!into) return { ok: false, error: { code: 'NO_SESSION', message: t('rescan-no-session', { mode: MODES[mode] ? t(MODES[mode].title) : mode }) } };
  const body = { ...item.body };
  delete body.unit_version;
  const reply = await ask({ type: 'capture', session_id: into, body, occurred_at: Date.now() });
  if (!reply.ok) return reply;
  countCaptured();
  addResult({
    code: epc, text: t('rescan-row', { seq: reply.client_seq, epc }), kind: 'kept', state: 'queued', key: reply.key,
    seq: reply.client_seq, occurred_at: reply.occurred_at, session_id: into, mode,
  });
  signal('kept');
  emit('captured', reply);
  await ask({ type: 'acknowledge', id: item.id });
  return reply;
}
