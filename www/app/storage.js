// The browser's storage for the queue: persistent storage asked for (and
// what to do when the browser refuses it), and the quota estimate with an
// early warning.

import { $, show } from './dom.js';

const STORAGE_WARN_RATIO = 0.8;

/** What to do when the browser keeps the queue only as long as it has room. */
const PERSIST_ADVICE = 'Persistent storage NOT granted: the browser may clear what this handheld holds when space runs low. '
  + 'Add Stockhop to the home screen (browser menu → Install app or Add to Home screen), or allow this site to store data in the browser\'s site settings, then open this menu again. '
  + 'Until then, let the queue drain before the device runs short of space.';

/** Asks for persistent storage once set up, and says what to do when the browser refuses. */
export async function persistAtSetup() {
  if (!navigator.storage || !navigator.storage.persist) return;
  const granted = await navigator.storage.persist();
  show('storage-persist', granted ? 'Persistent storage granted.' : PERSIST_ADVICE, granted ? '' : 'warn');
  $('persist-advice').hidden = granted;
  $('persist-advice').textContent = granted ? '' : PERSIST_ADVICE;
}

/** The menu's storage lines: persistence and the estimate. */
export async function storage() {
  if (!navigator.storage) {
    show('storage-estimate', 'Storage estimate unavailable.', 'warn');
    return;
  }
  const persisted = navigator.storage.persist ? await navigator.storage.persist() : false;
  show('storage-persist', persisted ? 'Persistent storage granted.' : PERSIST_ADVICE, persisted ? '' : 'warn');
  const { usage = 0, quota = 0 } = await navigator.storage.estimate();
  const ratio = quota ? usage / quota : 0;
  show('storage-estimate', `Using ${(usage / 1e6).toFixed(1)} MB of ${(quota / 1e6).toFixed(0)} MB`, ratio > STORAGE_WARN_RATIO ? 'warn' : '');
}
