// The page's screens, one shown at a time (setup, picker, mode, queue,
// menu), and the scan field that keeps the focus. Each screen's module
// says what to do when it is shown (`onShow`), so this module imports
// none of them.

import { $ } from './dom.js';
import * as state from './state.js';

const SCREENS = ['setup', 'picker', 'mode', 'queue', 'menu'];

/** Where Back goes from the queue screen and the menu. */
let returnTo = 'picker';
const shown = new Map();

/** Runs `handler` each time screen `name` is shown. */
export function onShow(name, handler) {
  shown.set(name, handler);
}

export function go(name) {
  if (name !== 'queue' && name !== 'menu') returnTo = name;
  state.setScreen(name);
  document.body.dataset.screen = name;
  for (const s of SCREENS) $(`screen-${s}`).hidden = s !== name;
  $('menu-button').setAttribute('aria-expanded', String(name === 'menu'));
  const handler = shown.get(name);
  if (handler) handler();
  focusScan();
}

export function back() {
  go(state.session() ? 'mode' : returnTo === 'setup' && state.device().deviceId ? 'picker' : returnTo);
}

/** The scan field keeps the focus everywhere but setup (which needs typing). */
export function focusScan() {
  if (state.screen() === 'setup') return;
  const input = $('scan-input');
  if (document.activeElement !== input) input.focus({ preventScroll: true });
}
