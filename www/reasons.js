// What the ledger's answers mean to the person holding the handheld: every
// rejection reason a sync result can carry and every code that blocks an
// item, each in plain words with what to do next. The screens show the
// words large and the code in small print. The table mirrors the ledger's
// list (docs/design.md); tests/e2e/reasons.test.mjs fails when the
// ledger answers a reason this table does not have.

/** reason or code → {words, next}. */
export const REASONS = {
  // Put-away.
  unknown_bin: { words: 'The site does not know this bin label.', next: 'Check the label; ask a supervisor to add the bin, then scan it again.' },
  unknown_unit: { words: 'The site does not know this tag.', next: 'Put the unit aside for a supervisor; receive it first if it is new.' },
  unit_state: { words: 'This unit cannot be put away: it is dispatched or missing.', next: 'Put it aside and tell a supervisor.' },
  stale_state: { words: 'The unit moved after this device last read it.', next: 'Re-scan it to read it again, or Acknowledge.' },
  // Receive.
  grn_not_accepted: { words: 'This GRN cannot be received: unknown, or QC has not accepted it.', next: 'Ask QC or a supervisor; receive against another GRN.' },
  not_on_grn: { words: 'This tag\'s SKU is not on the GRN.', next: 'Set the unit aside; check the delivery against its GRN.' },
  excess_line: { words: 'More of this SKU than the GRN expects.', next: 'Set the unit aside for a supervisor to resolve the GRN.' },
  already_received: { words: 'This unit was received already.', next: 'Nothing to do for this tag; carry on.' },
  // Cycle count.
  count_not_open: { words: 'This count is not open any more.', next: 'Close the session; open a count a supervisor has opened.' },
  // Dispatch verify.
  manifest_not_ready: { words: 'The manifest is not packing or dispatched.', next: 'Ask dispatch; verify it once it is ready.' },
  not_on_manifest: { words: 'This tag is not on the manifest.', next: 'Take the unit off the dock, then Acknowledge.' },
  // Any mode.
  mode_not_allowed: { words: 'This device\'s profile cannot do that.', next: 'Use a handheld that can; ask a supervisor.' },
  read_only_mode: { words: 'Find a unit is read only: nothing is recorded.', next: 'Nothing to do; Acknowledge.' },
  unknown_operator: { words: 'The site does not know this operator badge.', next: 'Sign in with your own badge; ask a supervisor to add it.' },
  session_not_open: { words: 'The session was not open on the site.', next: 'Close the session and open it again.' },
  session_already_opened: { words: 'The session was opened already.', next: 'Nothing to do; Acknowledge.' },
  session_already_closed: { words: 'The session was closed already.', next: 'Open a new session to go on scanning.' },
  // Undo.
  undo_window_expired: { words: 'Too late to undo: undo works within 120 s of the scan.', next: 'Ask a supervisor to correct it.' },
  unknown_target: { words: 'The site has no scan to undo under that key.', next: 'Acknowledge; check the unit on the site.' },
  cannot_undo_an_undo: { words: 'An undo cannot be undone.', next: 'Scan the unit again instead.' },
  target_rejected: { words: 'The scan to undo was refused, so nothing changed.', next: 'Nothing to undo; Acknowledge.' },
  target_not_undoable: { words: 'That scan cannot be undone.', next: 'Ask a supervisor to correct it.' },
  target_not_applied: { words: 'The scan to undo had not reached the ledger yet.', next: 'Wait for it to be applied, then undo again.' },
  // Codes that block an item (the site will never accept it as sent).
  IDEMPOTENCY_KEY_REUSED: { words: 'The site holds another scan under this one\'s key.', next: 'Discard it and scan again; tell a supervisor.' },
  IDEMPOTENCY_RECEIPT_UNAVAILABLE: { words: 'The site cannot read its record of this scan.', next: 'Tell a supervisor; do not scan it again yet.' },
  SEQ_ALREADY_USED: { words: 'The site has another scan in this place of the session.', next: 'Discard it and scan again.' },
  SESSION_CONFLICT: { words: 'This device or operator has another session open on the site.', next: 'Close the other session, then discard this and scan again.' },
  SESSION_NOT_YOURS: { words: 'The session belongs to another device.', next: 'Discard it; open a session on this device.' },
  INVALID_ITEM: { words: 'The site could not read this scan.', next: 'Discard it and scan again; tell a supervisor if it repeats.' },
  UNIT_CONFLICT: { words: 'The site refused the unit\'s change.', next: 'Discard it and scan again; tell a supervisor if it repeats.' },
  ALREADY_UNDONE: { words: 'That scan was undone already.', next: 'Nothing to do; discard this one.' },
  CONSTRAINT_CONFLICT: { words: 'The site refused it as a duplicate.', next: 'Discard it; tell a supervisor.' },
  DEVICE_MISMATCH: { words: 'The scan names another device than this one.', next: 'Check Device setup; tell a supervisor.' },
  NOT_FOUND: { words: 'The site does not have what this scan names.', next: 'Discard it; tell a supervisor.' },
};

/** A blocked item's reason as the worker keeps it: "CODE (HTTP 409)" or "HTTP 403". */
const BLOCKED_FORM = /^([A-Z_]+) \(HTTP (\d+)\)$/;

/** What a result says, for the screen: {code, words, next}; null without a reason. */
export function explain(reason) {
  if (!reason) return null;
  const blocked = BLOCKED_FORM.exec(reason);
  const code = blocked ? blocked[1] : reason;
  const known = REASONS[code];
  if (known) return { code: reason, words: known.words, next: known.next };
  if (/^HTTP \d+$/.test(reason)) {
    return { code: reason, words: 'The site refused this scan as sent.', next: 'Discard it and scan again; tell a supervisor if it repeats.' };
  }
  if (reason.startsWith('waiting behind blocked item')) {
    return { code: reason, words: 'Waiting behind a blocked scan of its session.', next: 'Decide the blocked scan on the queue screen.' };
  }
  return { code: reason, words: 'The site refused this scan.', next: 'Show it to a supervisor.' };
}
