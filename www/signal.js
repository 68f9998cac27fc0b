// Sound and vibration for what a scan came to, so the picker need not look:
// one short high tone for a scan kept, two low ones for a refusal, a long
// two-tone call for an alert that stops work (the dock's stop, a blocking
// item, a refusal that came after an outage), and a faint tick, without
// vibration, for a scan answered on this device without a capture (a bin,
// a SKU label, a manifest, a badge, a Find result, "Nothing to undo"). Web Audio tones (no sound
// files to cache) and `navigator.vibrate`; a setting (kept per device)
// turns both off. A browser lets a page make sound only after a tap or a
// key: the audio context is made at the first one, and a signal before it
// is vibration alone.

const SETTING_KEY = 'stockhop.signals';

/** Each kind's tones ([frequency Hz, duration ms], a gap of GAP_MS between) and vibration pattern (ms on, off, on…). */
export const SIGNALS = {
  kept: { tones: [[1760, 60]], vibrate: [40] },
  refused: { tones: [[330, 160], [262, 220]], vibrate: [200, 80, 200] },
  alert: { tones: [[880, 250], [587, 250], [880, 250], [587, 250]], vibrate: [500, 150, 500, 150, 500] },
  acknowledge: { tones: [[2640, 25]], vibrate: null },
};
/** The silence between a signal's tones. */
const GAP_MS = 70;
/** Loud enough on a warehouse floor, short of clipping. */
const GAIN = 0.6;

let audio = null;

/** Whether signals are on (the default). */
export function signalsOn() {
  return localStorage.getItem(SETTING_KEY) !== 'off';
}

export function setSignalsOn(on) {
  localStorage.setItem(SETTING_KEY, on ? 'on' : 'off');
}

/** Makes (or wakes) the audio context; call from a user gesture. */
export function unlockAudio() {
  const Context = window.AudioContext || window.webkitAudioContext;
  if (!Context) return;
  if (!audio) audio = new Context();
  if (audio.state === 'suspended') audio.resume().catch(() => {});
}

/** Plays `kind`'s tones and vibration, unless signals are off. */
export function signal(kind) {
  const spec = SIGNALS[kind];
  if (!spec || !signalsOn()) return;
  if (spec.vibrate && navigator.vibrate) navigator.vibrate(spec.vibrate);
  if (!audio || audio.state === 'closed') return;
  let at = audio.currentTime;
  for (const [frequency, ms] of spec.tones) {
    const osc = audio.createOscillator();
    const gain = audio.createGain();
    osc.type = 'square';
    osc.frequency.value = frequency;
    gain.gain.setValueAtTime(GAIN, at);
    gain.gain.setValueAtTime(0, at + ms / 1000);
    osc.connect(gain).connect(audio.destination);
    osc.start(at);
    osc.stop(at + ms / 1000);
    at += (ms + GAP_MS) / 1000;
  }
}
