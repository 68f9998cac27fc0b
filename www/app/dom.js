// Small helpers over the page's elements and values, shared by every
// module of the handheld app; no state of its own.

import { t } from './l10n.js';

export const $ = (id) => document.getElementById(id);

/** Sets a status line's text and its kind (`error`, `warn` or none); `codes` are values in it drawn as codes (see `withCodes`). */
export function show(id, text, kind, codes) {
  const node = $(id);
  if (codes && codes.length) node.replaceChildren(...withCodes(text, codes));
  else node.textContent = text;
  node.className = node.className.split(' ').filter((c) => c && c !== 'error' && c !== 'warn').concat(kind ? [kind] : []).join(' ');
}

/**
 * A code longer than this many characters (an EPC: 24 hex digits; a rescue
 * file's name: about 40) may break anywhere to fit a 480 px wide screen; a
 * shorter one (a bin, a badge, a GRN) never breaks.
 */
const LONG_CODE_CHARS = 16;

/**
 * `text` as nodes, with each of `codes` (bins, badges, EPCs, file names,
 * GS1 values) found in it drawn as a code: a `<bdi dir="ltr">` read left to
 * right in a right-to-left page too, never broken at its hyphen (`.code`;
 * a long one, `.code.long`, breaks anywhere, still left to right).
 */
export function withCodes(text, codes) {
  const wanted = [...new Set(codes.filter((code) => code != null && code !== '').map(String))].sort((a, b) => b.length - a.length);
  if (!wanted.length) return [text];
  const literal = (code) => code.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const pattern = new RegExp(`(${wanted.map(literal).join('|')})`);
  return text.split(pattern).map((part, i) => (i % 2
    ? el('bdi', { dir: 'ltr', class: part.length > LONG_CODE_CHARS ? 'code long' : 'code', text: part })
    : part)).filter((part) => part !== '');
}

/** A worker reply's error in words. */
export function failure(reply) {
  return reply && reply.error ? `${reply.error.code}: ${reply.error.message}` : t('no-reply');
}

/** An element with attributes (`text`, `dataset`, the rest as attributes) and children. */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value == null || value === false) continue;
    if (name === 'text') node.textContent = value;
    else if (name === 'dataset') Object.assign(node.dataset, value);
    else node.setAttribute(name, value === true ? '' : value);
  }
  for (const child of children) if (child != null) node.append(child);
  return node;
}

/**
 * Replaces `box`'s children with `nodes`, skipping the `null`s a screen
 * puts for a part it does not show (as `el` does): `replaceChildren`
 * would write them as the text "null".
 */
export function fill(box, nodes) {
  box.replaceChildren(...nodes.filter((node) => node != null));
}

/** A span of milliseconds as the screens say it: `12 s`, `3 min`, `2 h`, `1 d`. */
export function ago(ms) {
  if (ms == null) return t('ago-none');
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return t('ago-seconds', { n: s });
  if (s < 3600) return t('ago-minutes', { n: Math.round(s / 60) });
  if (s < 86400) return t('ago-hours', { n: Math.round(s / 3600) });
  return t('ago-days', { n: Math.round(s / 86400) });
}

export function loadJson(key, fallback) {
  try {
    return JSON.parse(localStorage.getItem(key)) ?? fallback;
  } catch {
    return fallback;
  }
}

/** `promise`'s value, or null once `ms` have passed. */
export function withTimeout(promise, ms) {
  return Promise.race([promise, new Promise((resolve) => setTimeout(() => resolve(null), ms))]);
}
