// The handheld's words, in the language of whoever holds it: the message
// catalogues (locales/<locale>/shell.ftl, Project Fluent) read with
// @fluent/bundle (www/vendor/, copied from npm by the build). Plurals and
// numbers go through Fluent and Intl; no screen joins translated pieces.
//
// The language is the device's (the browser's languages, best match among
// LOCALES, else English; or the one the setup chose) until an operator
// whose reference row names a language signs in, and the device's again
// at sign-out. Arabic is right to left: the root element's `dir` follows
// the language, and in a right-to-left language every value a message
// holds (a code, a bin, an EPC, a GS1 value) is isolated by Fluent
// (U+2068 … U+2069), so it reads left to right inside the sentence.
//
// How the code names a message (tests/e2e/lib/catalogues.mjs checks every
// one against every locale): `t(<id>, { args })` for a message's value,
// `attr(<id>, <name>, { args })` for an attribute, `data-l10n-id=<id>` in
// the page (value → text, attributes → `placeholder`, `aria-label`,
// `title`), `msg(<id>)` for an id kept in a table. A reason's message is
// `reason-<code>`, built at run time (reasons.js).

import { FluentBundle, FluentResource } from '../vendor/fluent-bundle/index.js';
import { reasonMessage } from '../reasons.js';

/** The locales shipped, English first (the fallback for a missing message). */
export const LOCALES = ['en', 'de', 'es', 'pl', 'ar'];
const RIGHT_TO_LEFT = new Set(['ar']);
/** The language the device's setup chose, when it chose one (else the browser's). */
export const DEVICE_LANGUAGE_KEY = 'stockhop.language';
/** Attributes of a page element a message's attributes may set. */
const ELEMENT_ATTRIBUTES = new Set(['placeholder', 'aria-label', 'title']);

/** locale → Promise<FluentBundle>: each catalogue is fetched once per page. */
const bundles = new Map();
let bundle = null;
let english = null;
let current = 'en';
const listeners = [];

/** The shipped locale that best matches BCP 47 `tags` (in preference order), or null. */
export function bestMatch(tags) {
  for (const tag of tags || []) {
    if (typeof tag !== 'string') continue;
    const primary = tag.trim().toLowerCase().split(/[-_]/)[0];
    if (LOCALES.includes(primary)) return primary;
  }
  return null;
}

/** The device's language: the setup's choice, else the browser's best match, else English. */
export function deviceLocale() {
  const chosen = localStorage.getItem(DEVICE_LANGUAGE_KEY);
  return bestMatch([chosen]) || bestMatch(navigator.languages || [navigator.language]) || 'en';
}

function load(locale) {
  if (!bundles.has(locale)) {
    bundles.set(locale, fetch(`/locales/${locale}/shell.ftl`).then(async (response) => {
      if (!response.ok) throw new Error(`locales/${locale}/shell.ftl: HTTP ${response.status}`);
      const made = new FluentBundle(locale, { useIsolating: RIGHT_TO_LEFT.has(locale) });
      const errors = made.addResource(new FluentResource(await response.text()));
      if (errors.length) console.warn(`locales/${locale}/shell.ftl`, errors);
      return made;
    }).catch((err) => {
      bundles.delete(locale);
      throw err;
    }));
  }
  return bundles.get(locale);
}

/** The language shown now. */
export function locale() {
  return current;
}

/** Runs `handler(locale)` after each change of language. */
export function onLanguage(handler) {
  listeners.push(handler);
}

/**
 * Shows the page in `tag`'s best match (the device's language when it has
 * none among LOCALES); resolves once the page's own words are redrawn.
 */
export async function setLanguage(tag) {
  const wanted = bestMatch([tag]) || deviceLocale();
  let chosen = wanted;
  let read;
  try {
    read = await Promise.all([load(wanted), load('en')]);
  } catch (err) {
    console.warn(err);
    chosen = 'en';
    read = await Promise.all([load('en'), load('en')]);
  }
  [bundle, english] = read;
  const changed = chosen !== current;
  current = chosen;
  const root = document.documentElement;
  root.lang = chosen;
  root.dir = RIGHT_TO_LEFT.has(chosen) ? 'rtl' : 'ltr';
  translate(document);
  if (changed) for (const handler of listeners) handler(chosen);
  return chosen;
}

/**
 * The language the device's setup chose (its language list, or a setup link's `lang`, BCP 47),
 * kept for every later start; a tag none of LOCALES matches (or an empty
 * one) leaves the device on the browser's language.
 */
export function chooseDeviceLanguage(tag) {
  if (bestMatch([tag])) localStorage.setItem(DEVICE_LANGUAGE_KEY, tag);
  else localStorage.removeItem(DEVICE_LANGUAGE_KEY);
}

/** The device's language again (sign-out). */
export function deviceLanguage() {
  return setLanguage(deviceLocale());
}

function format(id, part, args) {
  for (const source of [bundle, english]) {
    const message = source && source.getMessage(id);
    const pattern = message && (part ? message.attributes[part] : message.value);
    if (pattern) {
      const errors = [];
      const text = source.formatPattern(pattern, args, errors);
      if (errors.length) console.warn(id, errors);
      return text;
    }
  }
  console.warn(`no message ${id}${part ? `.${part}` : ''}`);
  return id;
}

/** Message `id`'s words in the language shown, with `args`. */
export function t(id, args) {
  return format(id, null, args);
}

/** Attribute `name` of message `id`, with `args`. */
export function attr(id, name, args) {
  return format(id, name, args);
}

/** Whether message `id` exists (a reason the catalogue does not word falls back to a general one). */
export function has(id) {
  return !!(english && english.hasMessage(id));
}

/**
 * The words for a value the site answers as a code of one of the ledger's
 * closed lists: `list` is `unit-state`, `grn-state`, `grn-qc`,
 * `manifest-state` or `count-state` (or a queue item's `command` or
 * `mode`), and the message is `<list>-<code>` (for example
 * <unit-state-in_stock>, <command-open_session>, <mode-put_away>), built
 * here at run time; the catalogues' test reads every code from the site's
 * own lists (the commands from the core's wire names). A code the
 * catalogue does not word yet (a later site's) is shown as itself,
 * isolated left to right (U+2066 … U+2069) so it reads whole in any
 * direction.
 */
export function valueWords(list, code) {
  if (code == null || code === '') return '–';
  const id = `${list}-${code}`;
  return has(id) ? t(id) : `\u2066${code}\u2069`;
}

/** Marks a literal as a message id kept for later (returns it unchanged). */
export function msg(id) {
  return id;
}

/** What a result's reason says, for the screen: {code, words, next}; null without a reason. */
export function explain(reason) {
  const message = reasonMessage(reason);
  if (!message) return null;
  const id = has(message.id) ? message.id : message.fallback;
  return { code: message.code, words: t(id), next: attr(id, 'next') };
}

/** Draws the words of every `[data-l10n-id]` element under `root`. */
export function translate(root) {
  for (const node of root.querySelectorAll('[data-l10n-id]')) {
    const id = node.dataset.l10nId;
    const args = node.dataset.l10nArgs ? JSON.parse(node.dataset.l10nArgs) : undefined;
    const message = (bundle && bundle.getMessage(id)) || (english && english.getMessage(id));
    if (!message) continue;
    if (message.value) node.textContent = format(id, null, args);
    for (const name of Object.keys(message.attributes)) {
      if (ELEMENT_ATTRIBUTES.has(name)) node.setAttribute(name, format(id, name, args));
    }
  }
}

// The device's language before any screen draws (every module that shows
// words imports this one, so the page waits for the catalogue).
await setLanguage(deviceLocale());
