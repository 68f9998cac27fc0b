// The operators the site lists (reference data, from the worker's cache),
// by badge: their names for the screens and the language each reads (the
// handheld speaks it while they are signed in). While the site lists none,
// any badge is taken.

import { t } from './l10n.js';

/** {badge: name}, from the last `reference_status` answer. */
let operators = {};
/** {badge: BCP 47 tag}, for the operators whose row names a language. */
let languages = {};

/** Takes the operators the cache holds (a `reference_status` answer's). */
export function takeOperators(status) {
  const rows = Object.values(status.operators || {});
  operators = Object.fromEntries(rows.map((o) => [o.badge, o.name]));
  languages = Object.fromEntries(rows.filter((o) => typeof o.language === 'string' && o.language).map((o) => [o.badge, o.language]));
}

/** The language operator `badge` reads (a BCP 47 tag), or null when the site names none. */
export function operatorLanguage(badge) {
  return Object.prototype.hasOwnProperty.call(languages, badge) ? languages[badge] : null;
}

/** Whether the site lists any operator (then only their badges sign in). */
export function anyListed() {
  return Object.keys(operators).length > 0;
}

export function operatorName(badge) {
  return Object.prototype.hasOwnProperty.call(operators, badge) ? operators[badge] : null;
}

/** The operator as the screens name them: "Name (badge)", or the badge while the site sends no name. */
export function operatorLabel(badge) {
  const name = operatorName(badge);
  return name ? t('operator-label', { name, badge }) : badge;
}
