// What the ledger's answers mean to the person holding the handheld: every
// rejection reason a sync result can carry and every code that blocks an
// item, each in plain words with what to do next. The screens show the
// words large and the code in small print. The table mirrors the ledger's
// list (docs/design.md §5.4); tests/e2e/reasons.test.mjs fails when the
// ledger answers a reason this table does not have.

/** reason or code → {words, next}. */
export const REASONS = {
  // Rejection reasons, as docs/design.md §5.4 words them (src/reason.rs defines them).
  stale_state: { words: 'The unit changed on the site after this device last read it.', next: 'Re-scan it (the device reads the unit again first), or acknowledge.' },
  session_not_open: { words: 'This scan\'s session never opened on the site.', next: 'Look at the session\'s first item (why it was refused), then start a new session.' },
  session_already_opened: { words: 'This session was already opened.', next: 'Nothing to do; acknowledge.' },
  session_already_closed: { words: 'This session was already closed.', next: 'Nothing to do; acknowledge.' },
  session_closed: { words: 'A supervisor closed this session at the site before this scan was taken.', next: 'Scan your badge to start a new session, then scan it again.' },
  undo_window_expired: { words: 'Undo came more than 2 minutes after the scan.', next: 'Ask a supervisor to correct it (it is on their list).' },
  unknown_target: { words: 'The site never received the scan this undo names.', next: 'Acknowledge; check the scan itself on the queue.' },
  cannot_undo_an_undo: { words: 'An undo cannot be undone.', next: 'Scan the item again if it should stand.' },
  target_rejected: { words: 'The scan was refused, so there is nothing to undo.', next: 'Acknowledge.' },
  target_not_undoable: { words: 'That scan changed nothing that can be undone.', next: 'Acknowledge; ask a supervisor if something must change.' },
  target_not_applied: { words: 'The scan has not been applied yet.', next: 'Wait for it to apply, then undo again.' },
  target_not_rejected: { words: 'That item was not refused, so there is nothing to acknowledge.', next: 'Nothing to do.' },
  unknown_operator: { words: 'This badge is not on the site\'s list of operators.', next: 'Scan your own badge, or ask a supervisor to add you.' },
  mode_not_allowed: { words: 'This device cannot do that (its profile).', next: 'Use a handheld that can; ask a supervisor about this device.' },
  read_only_mode: { words: 'Find a unit never changes anything on the site.', next: 'Nothing to do; acknowledge.' },
  unknown_bin: { words: 'The site has no bin with this label.', next: 'Scan the bin\'s label again, or ask a supervisor to add the bin.' },
  unknown_unit: { words: 'The site does not know this tag or serial.', next: 'Set the unit aside and tell a supervisor.' },
  unit_state: { words: 'This unit cannot be put away: it is dispatched or missing.', next: 'Set it aside and tell a supervisor.' },
  grn_not_accepted: { words: 'This GRN is unknown, or QC has not accepted it.', next: 'Check the GRN number; ask QC or a supervisor.' },
  not_on_grn: { words: 'This unit\'s SKU is not on the GRN.', next: 'Set it aside; tell a supervisor (wrong GRN or wrong delivery).' },
  excess_line: { words: 'The GRN line already has every unit it expects.', next: 'Set the extra unit aside and tell a supervisor.' },
  already_received: { words: 'This unit was received already.', next: 'Set it aside; it may be a duplicate tag.' },
  count_not_open: { words: 'The count is closed, approved or cancelled.', next: 'Pick an open count, or ask a supervisor to open one.' },
  manifest_not_ready: { words: 'The manifest is unknown, or not packing or dispatched.', next: 'Check the manifest number; ask a supervisor.' },
  not_on_manifest: { words: 'This unit is not on the manifest.', next: 'Keep it off the truck and tell a supervisor.' },
  // Codes that block an item (the site will never accept it as sent), as §5.4 words them.
  INVALID_ITEM: { words: 'The scan is missing something the site needs, or names another session\'s GRN, count or manifest.', next: 'Discard it and scan again; tell a supervisor if it repeats.' },
  SESSION_CONFLICT: { words: 'This device or operator already has another session open on the site.', next: 'Sign out on the other handheld; if it is lost or was reset, ask a supervisor to close its session on the site\'s view (Devices, Close session). Then discard this and start again.' },
  SESSION_NOT_YOURS: { words: 'The session belongs to another device.', next: 'Discard it and start a new session.' },
  SEQ_ALREADY_USED: { words: 'The site already holds another item in this place of the session.', next: 'Discard it; scan again if it should stand.' },
  IDEMPOTENCY_KEY_REUSED: { words: 'The site holds a different item under the same key.', next: 'Discard it and scan again.' },
  IDEMPOTENCY_RECEIPT_UNAVAILABLE: { words: 'The site cannot read its answer for this item.', next: 'Tell a supervisor; do not scan it again until they say.' },
  ALREADY_UNDONE: { words: 'The scan was undone already.', next: 'Discard it.' },
  UNIT_CONFLICT: { words: 'The tag or serial belongs to another unit on the site.', next: 'Set the unit aside and tell a supervisor.' },
  CONSTRAINT_CONFLICT: { words: 'The site refused it as conflicting with what it holds.', next: 'Discard it; tell a supervisor if it repeats.' },
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
