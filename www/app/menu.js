// The menu: the queue, Switch mode, a refresh of the reference data, the
// command barcodes (/commands), device setup, the sound and vibration and
// idle sign-out settings, and what this device is and holds.

import { $, ago, el, failure, show } from './dom.js';
import { referenceProgress } from './bar.js';
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
  show('menu-device', deviceId ? `${deviceId}${d ? ` · ${d.profile}${d.encode ? ' · encodes' : ''}` : ''} → ${siteUrl}` : 'Not set up.');
  show('menu-reference', referenceProgress(reference) || (reference
    ? `Reference copy: ${reference.units} units, ${reference.bins} bins, ${reference.grns} GRNs, ${reference.counts} counts; ${reference.refreshed_at ? `${ago(reference.age_ms)} old` : 'never complete'}${reference.loading ? ' (loading)' : ''}`
    : 'Reference copy: –'));
  $('menu-switch').disabled = !state.session();
  renderSettings();
  storage();
}

function renderSettings() {
  const on = signalsOn();
  $('menu-signals').setAttribute('aria-pressed', String(on));
  $('menu-signals').textContent = `Sound and vibration: ${on ? 'on' : 'off'}`;
  const minutes = idleMinutes();
  const choices = IDLE_CHOICES_MIN.includes(minutes) ? IDLE_CHOICES_MIN : [...IDLE_CHOICES_MIN, minutes].sort((a, b) => a - b);
  $('menu-idle').replaceChildren(...choices.map((m) => el('option', { value: String(m), selected: m === minutes, text: m < 60 ? `${m} min` : `${m / 60} h` })));
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
    show('menu-reference', reply.ok ? 'Reference data read.' : failure(reply), reply.ok ? '' : 'error');
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
