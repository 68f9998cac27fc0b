// Hands a scan to the worker for the open session, with the input event's
// instant as its capture time. Its row shows it pending until the worker
// says it is durable, then kept (or not captured, with why).

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
    refuse(code, 'The session is not open yet.');
    return Promise.resolve(null);
  }
  const entry = addResult({
    code, text: `${code}…`, kind: 'pending', occurred_at: at, session_id: session.session_id, mode: session.mode, offline: state.online() === false,
  });
  const shown = body.bin ? ` → ${body.bin}` : '';
  return ask({ type: 'capture', session_id: session.session_id, body, occurred_at: at }).then((reply) => {
    if (reply.ok) {
      countCaptured();
      entry.kind = note ? 'refused' : 'kept';
      entry.state = 'queued';
      entry.key = reply.key;
      entry.seq = reply.client_seq;
      entry.announced = !!note;
      entry.text = `#${reply.client_seq} ${code}${shown}${note ? ` · ${note}` : ''}`;
      if (state.refused()) {
        // Kept, but not on its way: the site refuses this handheld until it is set up again.
        show('scan-status', `Kept on this device #${reply.client_seq}: ${code}${shown}, NOT sent: this handheld is not allowed on the site`, 'error');
        if (!note) signal('refused');
      } else {
        show('scan-status', `Kept on this device #${reply.client_seq}: ${code}${shown}`, note ? 'warn' : '');
        if (!note) signal('kept');
      }
    } else {
      countFailed();
      entry.kind = 'failed';
      entry.text = `${code}: NOT captured (${failure(reply)})`;
      show('scan-status', `NOT captured ${code}: ${failure(reply)}`, 'error');
      signal('alert');
    }
    scheduleResults();
    emit('captured', reply);
    return reply;
  });
}
