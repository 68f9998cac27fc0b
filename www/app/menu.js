// The menu: the queue, Switch mode, a refresh of the reference data, the
// command barcodes (/commands), device setup, the sound and vibration and
// idle sign-out settings, and what this device is and holds.

import { $, ago, el, failure, show } from './dom.js';
import { referenceProgress } from './bar.js';
import { t } from './l10n.js';
import { closeSession } from './picker.js';
import { back, go, onShow } from './screens.js';
import { forgetReference, loadReference } from './site.js';
import { IDLE_CHOICES_MIN, IDLE_KEY, idleMinutes } from './sign_in.js';
import * as state from './state.js';
import { storage } from './storage.js';
import { ask } from './worker.js';
import { setSignalsOn, signal, signalsOn } from '../signal.js';

function renderMenu() {
  const reference = state.reference();
  const { siteUrl, deviceId } = state.device();
  const d = reference && reference.device;
  const device = { device: deviceId, profile: d && d.profile, site: siteUrl };
  show('menu-device', !deviceId ? t('menu-not-set-up')
    : !d ? t('menu-device', device)
      : d.encode ? t('menu-device-encodes', device) : t('menu-device-profile', device));
  show('menu-reference', referenceProgress(reference) || (reference ? referenceCopy(reference) : t('menu-reference-none')));
  $('menu-switch').disabled = !state.session();
  renderSettings();
  storage();
}

/** The reference copy's figures and age, in words. */
function referenceCopy(reference) {
  const figures = { units: reference.units, bins: reference.bins, grns: reference.grns, counts: reference.counts };
  if (reference.refreshed_at) {
    const aged = { ...figures, age: ago(reference.age_ms) };
    return reference.loading ? t('menu-reference-loading', aged) : t('menu-reference', aged);
  }
  return reference.loading ? t('menu-reference-never-loading', figures) : t('menu-reference-never', figures);
}

function renderSettings() {
  const on = signalsOn();
  $('menu-signals').setAttribute('aria-pressed', String(on));
  $('menu-signals').textContent = on ? t('menu-signals-on') : t('menu-signals-off');
  const minutes = idleMinutes();
  const choices = IDLE_CHOICES_MIN.includes(minutes) ? IDLE_CHOICES_MIN : [...IDLE_CHOICES_MIN, minutes].sort((a, b) => a - b);
  $('menu-idle').replaceChildren(...choices.map((m) => el('option', { value: String(m), selected: m === minutes, text: m < 60 ? t('menu-idle-minutes', { n: m }) : t('menu-idle-hours', { n: m / 60 }) })));
}

export function wire() {
  onShow('menu', renderMenu);
  $('menu-signals').addEventListener('click', () => {
    setSignalsOn(!signalsOn());
    renderSettings();
    signal('kept');
  });
  $('menu-idle').addEventListener('change', (event) => {
    localStorage.setItem(IDLE_KEY, event.target.value);
    renderSettings();
  });
  $('menu-button').addEventListener('click', () => (state.screen() === 'menu' ? back() : go('menu')));
  $('menu-back').addEventListener('click', back);
  $('menu-queue').addEventListener('click', () => go('queue'));
  $('menu-switch').addEventListener('click', closeSession);
  $('menu-refresh').addEventListener('click', async () => {
    const reply = await ask({ type: 'reference_refresh' });
    show('menu-reference', reply.ok ? t('menu-reference-read') : failure(reply), reply.ok ? '' : 'error');
    if (reply.ok) {
      forgetReference();
      await loadReference(false);
      renderMenu();
    }
  });
  $('menu-setup').addEventListener('click', () => {
    $('setup-back').hidden = !state.device().deviceId;
    go('setup');
    $('site-url').focus();
  });
}
