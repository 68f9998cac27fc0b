// Hands a scan to the worker for the open session, with the input event's
// instant as its capture time. Its row shows it pending until the worker
// says it is durable, then kept (or not captured, with why).

import { t } from './l10n.js';
import { failure, show } from './dom.js';
import { emit } from './events.js';
import { addResult, countCaptured, countFailed, refuse, scheduleResults } from './results.js';
import * as state from './state.js';
import { ask } from './worker.js';
import { signal } from '../signal.js';

/**
 * Captures `body` in the open session; resolves with the worker's reply
 * (null when no session is open). `note` marks a capture the page already
 * refuses on screen (a tag not on the manifest): its row says so.
 */
export function capture(body, at, code, note) {
  const session = state.session();
  if (!session.session_id) {
    refuse(code, t('capture-not-open'));
    return Promise.resolve(null);
  }
  const entry = addResult({
    code, text: `${code}…`, kind: 'pending', occurred_at: at, session_id: session.session_id, mode: session.mode, offline: state.online() === false,
  });
  // The code, and the bin it goes to (put-away), as the rows and the status line show them.
  const shown = body.bin ? t('capture-to-bin', { code, bin: body.bin }) : code;
  return ask({ type: 'capture', session_id: session.session_id, body, occurred_at: at }).then((reply) => {
    if (reply.ok) {
      countCaptured();
      entry.kind = note ? 'refused' : 'kept';
      entry.state = 'queued';
      entry.key = reply.key;
      entry.seq = reply.client_seq;
      entry.announced = !!note;
      entry.text = note ? t('capture-row-note', { seq: reply.client_seq, code: shown, note }) : t('capture-row', { seq: reply.client_seq, code: shown });
      if (state.refused()) {
        // Kept, but not on its way: the site refuses this handheld until it is set up again.
        show('scan-status', t('capture-kept-held', { seq: reply.client_seq, code: shown }), 'error', [shown]);
        if (!note) signal('refused');
      } else {
        show('scan-status', t('capture-kept', { seq: reply.client_seq, code: shown }), note ? 'warn' : '', [shown]);
        if (!note) signal('kept');
      }
    } else {
      countFailed();
      entry.kind = 'failed';
      entry.text = t('capture-failed-row', { code, error: failure(reply) });
      show('scan-status', t('capture-failed', { code, error: failure(reply) }), 'error', [code]);
      signal('alert');
    }
    scheduleResults();
    emit('captured', reply);
    return reply;
  });
}
