// The site view's words, in the language of whoever reads it: one Fluent
// catalogue a locale (/site/locales/<locale>/view.ftl, embedded in the
// binary like the page) read with @fluent/bundle (/site/vendor/
// fluent-bundle.js, whose UMD build sets globalThis.FluentBundle). Plurals,
// numbers and dates go through Fluent and Intl; no message is joined from
// translated pieces.
//
// The language: the one chosen on the page (remembered in this browser),
// else the one the server picked from Accept-Language (the root's `lang`
// as served), else English. Arabic is right to left: the root's `dir`
// follows the language, and in a right-to-left language Fluent isolates
// every value a message holds (a device id, a bin, an EPC) so it reads
// left to right inside the sentence.
//
// How the code names a message (tests/e2e/lib/catalogues.mjs checks every
// one against every locale): a call of the lookup for a value or of the
// one for an attribute with a literal id, `data-l10n-id` in the page (its
// value becomes the text, its attributes `placeholder`, `aria-label`,
// `title`, `alt`), and the marker for an id kept in a table. A reason's
// message is `reason-<code>`, built at run time from the ledger's list.

const { FluentBundle, FluentResource } = globalThis.FluentBundle;

/** The locales the view speaks, English first (the fallback for a missing message). */
export const LOCALES = ['en', 'de', 'es', 'pl', 'ar'];
const RIGHT_TO_LEFT = new Set(['ar']);
/** Where this browser remembers the language chosen on the page. */
export const LANGUAGE_KEY = 'stockhop.site.language';
/** Attributes of a page element a message's attributes may set. */
const ELEMENT_ATTRIBUTES = ['placeholder', 'aria-label', 'title', 'alt'];

/**
 * The Intl locale of a view locale. Arabic keeps Latin digits: the codes,
 * bins and EPCs beside every figure are printed and scanned in them.
 */
const intlLocale = (locale) => (locale === 'ar' ? 'ar-u-nu-latn' : locale);

const bundles = new Map();
let bundle = null;
let english = null;
let current = 'en';

async function load(locale) {
  if (!bundles.has(locale)) {
    bundles.set(locale, (async () => {
      const response = await fetch(`/site/locales/${locale}/view.ftl`, { credentials: 'same-origin' });
      if (!response.ok) throw new Error(`the ${locale} catalogue answered ${response.status}`);
      const made = new FluentBundle(intlLocale(locale), { useIsolating: RIGHT_TO_LEFT.has(locale) });
      const errors = made.addResource(new FluentResource(await response.text()));
      for (const error of errors) console.warn(`view.ftl (${locale}):`, error);
      return made;
    })());
  }
  return bundles.get(locale);
}

/** The locale this page starts in: the remembered choice, else the server's pick. */
function initialLocale() {
  let chosen = null;
  try {
    chosen = localStorage.getItem(LANGUAGE_KEY);
  } catch {
    // Storage refused (a locked-down browser): the server's pick stands.
  }
  if (LOCALES.includes(chosen)) return chosen;
  const served = document.documentElement.lang;
  return LOCALES.includes(served) ? served : 'en';
}

/** The view's locale now. */
export const locale = () => current;

/** Switches the view to `next` (one of LOCALES): loads its catalogue, sets the root's lang and dir, redraws the page's words. */
export async function setLocale(next, { remember = false } = {}) {
  if (!LOCALES.includes(next)) next = 'en';
  english = english ?? (await load('en'));
  bundle = await load(next);
  current = next;
  if (remember) {
    try {
      localStorage.setItem(LANGUAGE_KEY, next);
    } catch {
      // Not remembered: the choice holds for this page.
    }
  }
  const root = document.documentElement;
  root.lang = next;
  root.dir = RIGHT_TO_LEFT.has(next) ? 'rtl' : 'ltr';
  translatePage(document);
}

/** Loads the starting locale's catalogue; the page's words are set before the view shows. */
export const start = () => setLocale(initialLocale());

function formatted(id, attribute, args) {
  for (const source of [bundle, english]) {
    const message = source?.getMessage(id);
    const pattern = attribute ? message?.attributes?.[attribute] : message?.value;
    if (pattern) {
      const errors = [];
      const text = source.formatPattern(pattern, args, errors);
      for (const error of errors) console.warn(`${id}${attribute ? `.${attribute}` : ''}:`, error.message);
      return text;
    }
  }
  console.warn(`no message ${id}${attribute ? `.${attribute}` : ''}`);
  return id;
}

/** A message's value in the view's language, with `args`. */
export const t = (id, args) => formatted(id, null, args);

/** A message's attribute in the view's language, with `args`. */
export const attr = (id, name, args) => formatted(id, name, args);

/** Marks an id kept in a table (the checker reads it); the id itself. */
export const msg = (id) => id;

/** Whether the view's catalogues hold `id` (a reason the ledger added since this page was built may not). */
export const has = (id) => Boolean(bundle?.hasMessage(id) || english?.hasMessage(id));

/** Sets every `[data-l10n-id]` element under `root` from its message. */
export function translatePage(root) {
  for (const element of root.querySelectorAll('[data-l10n-id]')) {
    const id = element.dataset.l10nId;
    const args = element.dataset.l10nArgs ? JSON.parse(element.dataset.l10nArgs) : undefined;
    const message = bundle?.getMessage(id) ?? english?.getMessage(id);
    if (!message) continue;
    if (message.value) element.textContent = t(id, args);
    for (const name of ELEMENT_ATTRIBUTES) {
      if (message.attributes?.[name]) element.setAttribute(name, attr(id, name, args));
    }
  }
}

/** A whole number or decimal in the view's language (1 234, 1.234, 1,234). */
export const number = (value, options) => new Intl.NumberFormat(intlLocale(current), options).format(value);

/** An instant's time of day (24-hour) on `timeZone`'s clock. */
export const timeOfDay = (date, timeZone) =>
  new Intl.DateTimeFormat(intlLocale(current), { hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone }).format(date);

/** An instant's day and short month on `timeZone`'s calendar. */
export const dayAndMonth = (date, timeZone) =>
  new Intl.DateTimeFormat(intlLocale(current), { day: 'numeric', month: 'short', timeZone }).format(date);
