// The status bar that never scrolls away: the site's light, what waits in
// the queue and its oldest age, what waits for a decision, and the
// reference cache's age (or its first load's progress).

import { $, ago } from './dom.js';
import { on } from './events.js';
import { locale, onLanguage, t } from './l10n.js';
import { walkQueue } from './outcomes.js';
import { readSiteWord, takeReference } from './site.js';
import * as state from './state.js';
import { ask } from './worker.js';
import * as release from '../release.js';

/** Oldest waiting item the bar shows in plain colours; older is flagged. */
export const OLDEST_WARN_MS = 60 * 1000;
/** How soon after a capture the bar is read again: once for a whole wedge burst. */
const BAR_AFTER_ACTION_MS = 250;

let barQueued = null;

export function renderBar() {
  const online = state.online();
  const reference = state.reference();
  const lastCounts = state.counts();
  const refused = state.refused();
  const net = $('net-status');
  net.dataset.net = refused ? 'refused' : online == null ? 'unknown' : online ? 'online' : 'offline';
  net.textContent = refused ? t('net-refused') : online == null ? (state.device().siteUrl ? '…' : t('net-no-site')) : online ? t('net-online') : t('net-offline');
  $('bar').dataset.refused = String(refused);
  $('refused-banner').hidden = !refused;
  if (lastCounts) {
    const waiting = lastCounts.queued + lastCounts.sending;
    $('bar-queue').textContent = String(waiting);
    $('bar-waiting').textContent = t('bar-waiting', { count: waiting });
    const age = lastCounts.oldest_queued_age_ms;
    const oldest = $('bar-oldest');
    oldest.textContent = age == null ? '' : t('bar-oldest', { age: ago(age) });
    oldest.dataset.old = String(age != null && age > OLDEST_WARN_MS);
    const attention = lastCounts.blocked + lastCounts.rejected_unacknowledged;
    const flag = $('bar-attention');
    flag.hidden = !attention;
    flag.textContent = t('bar-attention', { count: attention });
  }
  const loading = reference && !reference.complete && reference.loading;
  $('bar-cache').textContent = loading ? t('bar-cache-loading', { units: reference.units })
    : t('bar-cache', { age: reference && reference.age_ms != null ? ago(reference.age_ms) : t('ago-none') });
  // Its accessible name says what it shows, in the words it shows them
  // (a name that differs from the visible words fails people who speak a
  // control's label to a voice assistant), then what a tap does.
  const figures = ['net-status', 'bar-queue', 'bar-oldest', 'bar-attention', 'bar-cache']
    .filter((id) => !$(id).hidden && $(id).textContent)
    .map((id) => (id === 'bar-queue' ? t('bar-label-waiting', { count: Number($(id).textContent) }) : $(id).textContent));
  const list = new Intl.ListFormat(locale(), { style: 'short', type: 'unit' }).format(figures);
  $('status-bar').setAttribute('aria-label', t('bar-label', { figures: list }));
}

/**
 * How far a first load of the reference cache got, from a
 * `reference_status` answer (`''` once it has been complete): a load of a
 * large site takes a while, and a load that failed part-way resumes from
 * where this says.
 */
export function referenceProgress(status) {
  if (!status || status.complete || !(status.loading || status.units)) return '';
  return status.loading ? t('reference-loading', { units: status.units }) : t('reference-partial', { units: status.units });
}

/** Reads the queue's counts, the cache's status and the queue again, and draws the bar. */
export async function refreshBar() {
  // While a new build takes over, the bar waits: the old worker's busy
  // reads would put its replacement's activation off.
  if (release.updating()) return;
  const counts = await ask({ type: 'counts' });
  if (counts.ok) state.takeCounts(counts);
  const status = await ask({ type: 'reference_status' });
  if (status.ok) await takeReference(status);
  await readSiteWord();
  await walkQueue();
  renderBar();
}

/** The bar again soon after an action (a burst of scans asks once). */
export function scheduleBar() {
  if (barQueued) return;
  barQueued = setTimeout(() => {
    barQueued = null;
    refreshBar();
  }, BAR_AFTER_ACTION_MS);
}

export function wire() {
  on('reference', renderBar);
  on('queue', renderBar);
  on('online', renderBar);
  on('word', renderBar);
  on('captured', scheduleBar);
  // The bar's words in the language just chosen, before its next refresh.
  onLanguage(renderBar);
}
