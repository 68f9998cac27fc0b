// The operators the site lists (reference data, from the worker's cache),
// by badge: their names for the screens. While the site lists none, any
// badge is taken.

/** {badge: name}, from the last `reference_status` answer. */
let operators = {};

/** Takes the operators the cache holds (a `reference_status` answer's). */
export function takeOperators(status) {
  operators = Object.fromEntries(Object.values(status.operators || {}).map((o) => [o.badge, o.name]));
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
  return name ? `${name} (${badge})` : badge;
}
