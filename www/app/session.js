// Opening the open mode's session at the worker: the mode, its operator
// and what it names (a GRN, a count, a manifest). Its first queued item
// is the `open_session` command.

import { failure } from './dom.js';
import { notice } from './dialogs.js';
import { emit } from './events.js';
import { t } from './l10n.js';
import * as state from './state.js';
import { ask } from './worker.js';

/** Opens the session of the mode picked, naming `context`; resolves true once the worker holds it. */
export async function openSession(context) {
  const session = state.session();
  const reply = await ask({ type: 'open_session', operator_id: session.operator_id, mode: session.mode, context });
  if (!reply.ok) {
    notice(t('session-open-failed', { error: failure(reply) }));
    return false;
  }
  session.session_id = reply.session_id;
  session.context = context;
  state.saveSession();
  emit('mode');
  return true;
}
