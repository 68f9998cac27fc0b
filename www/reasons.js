// What the ledger's answers mean to the person holding the handheld: every
// rejection reason a sync result can carry and every code that blocks an
// item has a message `reason-<code>` in the catalogues (locales/<locale>/
// shell.ftl: its words, and `.next`, what to do next). The screens show
// the words large and the code in small print. tests/e2e/reasons.test.mjs
// keeps the English catalogue equal to the ledger's list
// (docs/design.md §5.4), and tests/e2e/locales.test.mjs every locale.
// This module only says which message a reason reads (no words of its own,
// so the tests read it without a page).

/** A blocked item's reason as the worker keeps it: "CODE (HTTP 409)" or "HTTP 403". */
const BLOCKED_FORM = /^([A-Z_]+) \(HTTP (\d+)\)$/;

/** The messages for an answer the catalogue has no words of its own for. */
export const REFUSED_AS_SENT = msg('reason-http');
export const WAITING_BEHIND = msg('reason-waiting-behind');
export const REFUSED_OTHER = msg('reason-other');

/**
 * The message that words `reason` as the worker keeps it: `{code, id}`
 * (`id` the code's own `reason-<code>`, which `known(id)` must confirm,
 * else `fallback`, the general one); null without a reason.
 */
export function reasonMessage(reason) {
  if (!reason) return null;
  const blocked = BLOCKED_FORM.exec(reason);
  const code = blocked ? blocked[1] : reason;
  const fallback = /^HTTP \d+$/.test(reason) ? REFUSED_AS_SENT
    : reason.startsWith('waiting behind blocked item') ? WAITING_BEHIND : REFUSED_OTHER;
  return { code: reason, id: `reason-${code}`, fallback };
}

/** Marks a literal as a message id (as app/l10n.js's `msg`: returns it unchanged). */
function msg(id) {
  return id;
}
