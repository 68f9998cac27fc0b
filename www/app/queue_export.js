// The queue screen's Export: for a handheld that can no longer reach the
// site (a broken radio, the wrong site, a device being retired), every
// item the site has not acknowledged as one signed rescue file, which a
// supervisor imports at the site (`stockhop-site rescue import FILE`).
//
// The worker writes the file (`export_queue`: a read-only pass over the
// queue, signed with the device's token); this page makes a Blob of it and
// offers it as a download and, where the browser can share files, through
// the share sheet. Exporting changes nothing: the items stay queued and
// still go to the site if the device reaches it again. Offline too: no
// request leaves the device.

import { $, failure, show } from './dom.js';
import { locale, t } from './l10n.js';
import { ask } from './worker.js';

/** The file's media type: JSON Lines, UTF-8. */
const RESCUE_TYPE = 'application/jsonl';

/** The object URL of the last file, released when the next one is made. */
let lastUrl = null;
/** The last file, for Share. */
let lastFile = null;

/** A byte count as the screen says it, in the language shown: `812 B`, `3.4 MB`. */
function size(bytes) {
  const [value, unit] = bytes < 1000 ? [bytes, 'B'] : bytes < 1_000_000 ? [bytes / 1000, 'kB'] : [bytes / 1_000_000, 'MB'];
  return `${new Intl.NumberFormat(locale(), { maximumFractionDigits: 1 }).format(value)} ${unit}`;
}

/** Whether this browser's share sheet takes `file`. */
function canShare(file) {
  try {
    return typeof navigator.share === 'function' && typeof navigator.canShare === 'function'
      && navigator.canShare({ files: [file] });
  } catch {
    return false;
  }
}

/** Asks the worker for the file and offers it. */
async function exportQueue() {
  const button = $('queue-export');
  const save = $('queue-export-save');
  const share = $('queue-export-share');
  button.disabled = true;
  $('queue-export-box').hidden = false;
  save.hidden = true;
  share.hidden = true;
  show('queue-export-status', t('queue-export-writing'));
  try {
    const reply = await ask({ type: 'export_queue' });
    if (!reply.ok) {
      show('queue-export-status', t('queue-export-failed', { error: failure(reply) }), 'error');
      return;
    }
    if (!reply.items) {
      show('queue-export-status', t('queue-export-nothing'));
      return;
    }
    if (lastUrl) URL.revokeObjectURL(lastUrl);
    lastFile = new File([reply.file], reply.name, { type: RESCUE_TYPE });
    lastUrl = URL.createObjectURL(lastFile);
    save.href = lastUrl;
    save.download = reply.name;
    save.hidden = false;
    share.hidden = !canShare(lastFile);
    show('queue-export-status', t('queue-export-done', { items: reply.items, name: reply.name, size: size(reply.bytes) }), '', [reply.name]);
    $('queue-export-box').dataset.items = String(reply.items);
    $('queue-export-box').dataset.name = reply.name;
  } finally {
    button.disabled = false;
  }
}

/** The share sheet, with the file made last (a tap's own activation). */
async function shareFile() {
  if (!lastFile) return;
  try {
    await navigator.share({ files: [lastFile], title: lastFile.name });
  } catch (err) {
    // Closing the sheet is no failure; anything else is said.
    if (err && err.name !== 'AbortError') show('queue-export-status', t('queue-export-share-failed', { error: err.message || String(err) }), 'error');
  }
}

export function wire() {
  $('queue-export').addEventListener('click', exportQueue);
  $('queue-export-share').addEventListener('click', shareFile);
}
