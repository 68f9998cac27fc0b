// The browser's storage for the queue: persistent storage asked for (and
// what to do when the browser refuses it), and the quota estimate with an
// early warning.

import { $, show } from './dom.js';
import { msg, onLanguage, t } from './l10n.js';

const STORAGE_WARN_RATIO = 0.8;

/** What to do when the browser keeps the queue only as long as it has room. */
const PERSIST_ADVICE = msg('storage-persist-advice');

// The picker's advice is said again in the language now shown.
onLanguage(() => {
  if (!$('persist-advice').hidden) $('persist-advice').textContent = t(PERSIST_ADVICE);
});

/** Asks for persistent storage once set up, and says what to do when the browser refuses. */
export async function persistAtSetup() {
  if (!navigator.storage || !navigator.storage.persist) return;
  const granted = await navigator.storage.persist();
  show('storage-persist', granted ? t('storage-persist-granted') : t(PERSIST_ADVICE), granted ? '' : 'warn');
  $('persist-advice').hidden = granted;
  $('persist-advice').textContent = granted ? '' : t(PERSIST_ADVICE);
}

/** The menu's storage lines: persistence and the estimate. */
export async function storage() {
  if (!navigator.storage) {
    show('storage-estimate', t('storage-unavailable'), 'warn');
    return;
  }
  const persisted = navigator.storage.persist ? await navigator.storage.persist() : false;
  show('storage-persist', persisted ? t('storage-persist-granted') : t(PERSIST_ADVICE), persisted ? '' : 'warn');
  const { usage = 0, quota = 0 } = await navigator.storage.estimate();
  const ratio = quota ? usage / quota : 0;
  show('storage-estimate', t('storage-estimate', { used: usage / 1e6, quota: quota / 1e6 }), ratio > STORAGE_WARN_RATIO ? 'warn' : '');
}
