// The page's tones and vibrations, counted: an init script records each
// `navigator.vibrate` call (its pattern) and each oscillator started (its
// frequency), with its instant, so a test can say what a picker heard and
// felt for each outcome.

/** The vibration pattern of each kind signal.js gives (the acknowledge tick has none). */
export const VIBRATION = { kept: '40', refused: '200,80,200', alert: '500,150,500,150,500' };
/** The tones of each kind (Hz, in order). */
export const TONES = { kept: [1760], refused: [330, 262], alert: [880, 587, 880, 587], acknowledge: [2640] };

/** Runs in the page before the app: keeps `window.__signals`, [{type: 'vibrate'|'tone', pattern|frequency, at}]. */
export function instrumentSignals() {
  window.__signals = [];
  const now = () => performance.timeOrigin + performance.now();
  Object.defineProperty(Navigator.prototype, 'vibrate', {
    configurable: true,
    value(pattern) {
      window.__signals.push({ type: 'vibrate', pattern: [].concat(pattern).join(','), at: now() });
      return true;
    },
  });
  const start = OscillatorNode.prototype.start;
  OscillatorNode.prototype.start = function startRecorded(when) {
    window.__signals.push({ type: 'tone', frequency: this.frequency.value, at: now() });
    return start.call(this, when);
  };
}

/** Forgets what was recorded so far. */
export function resetSignals(page) {
  return page.evaluate(() => { window.__signals = []; });
}

/** What was recorded since the last reset: {vibrations: [pattern…], tones: [Hz…]}. */
export async function takeSignals(page) {
  const signals = await page.evaluate(() => window.__signals);
  return {
    vibrations: signals.filter((s) => s.type === 'vibrate').map((s) => s.pattern),
    tones: signals.filter((s) => s.type === 'tone').map((s) => s.frequency),
  };
}

/**
 * Which kinds a recording holds, read from its tones in order (each kind's
 * tones are distinct): e.g. ['acknowledge', 'alert'].
 */
export function kindsHeard({ tones }) {
  const kinds = [];
  let rest = [...tones];
  while (rest.length) {
    const kind = Object.keys(TONES).find((k) => TONES[k].every((hz, i) => rest[i] === hz));
    if (!kind) throw new Error(`tones that are no signal's: ${JSON.stringify(rest)}`);
    kinds.push(kind);
    rest = rest.slice(TONES[kind].length);
  }
  return kinds;
}
