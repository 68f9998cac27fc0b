//! Every reason the ledger can give when it refuses an item as a business
//! matter (`"outcome": "rejected"` with a `reason`), in one leaf module
//! that both the ledger and the handheld read.
//!
//! A rejection is stored and replayed like any answer and waits on the
//! handheld for an operator, so each code here has a sentence and a next
//! step in docs/design.md §5.4, which the page shows in plain words (the
//! code in small print). A test below keeps that table and [`ALL`] equal.

/// The unit moved since the device read it (rule 4): the scan carried a
/// version the site no longer has. Never forced.
pub const STALE_STATE: &str = "stale_state";
/// A scan or undo in a session whose `open_session` has not applied.
pub const SESSION_NOT_OPEN: &str = "session_not_open";
/// A second `open_session` for a session that is open or closed.
pub const SESSION_ALREADY_OPENED: &str = "session_already_opened";
/// A second `close_session`.
pub const SESSION_ALREADY_CLOSED: &str = "session_already_closed";
/// A scan or undo captured after the site closed its session (Close
/// session in the site's view, `device close-session`): what the device
/// captured before the close still applies.
pub const SESSION_CLOSED: &str = "session_closed";
/// An undo captured more than the undo window after its target (rule 10).
pub const UNDO_WINDOW_EXPIRED: &str = "undo_window_expired";
/// An undo whose target key this device never sent.
pub const UNKNOWN_TARGET: &str = "unknown_target";
/// An undo of an undo.
pub const CANNOT_UNDO_AN_UNDO: &str = "cannot_undo_an_undo";
/// An undo of a scan the ledger rejected: there is nothing to compensate.
pub const TARGET_REJECTED: &str = "target_rejected";
/// An undo of something that is not an undoable scan (an `open_session`,
/// a `find_unit`, a scan that changed nothing).
pub const TARGET_NOT_UNDOABLE: &str = "target_not_undoable";
/// An undo of a scan that has not applied (still buffered).
pub const TARGET_NOT_APPLIED: &str = "target_not_applied";
/// An `acknowledge` of an item the ledger did not reject: there is no
/// decision for it to settle.
pub const TARGET_NOT_REJECTED: &str = "target_not_rejected";
/// An `open_session` whose operator badge is not on the site's operator
/// list, once the site has one.
pub const UNKNOWN_OPERATOR: &str = "unknown_operator";
/// A mode (or an encode) the device's profile cannot run.
pub const MODE_NOT_ALLOWED: &str = "mode_not_allowed";
/// A `find_unit` item: the device answers it from its cache; it never posts.
pub const READ_ONLY_MODE: &str = "read_only_mode";
/// Put-away: the bin label names no bin the site knows.
pub const UNKNOWN_BIN: &str = "unknown_bin";
/// Put-away or receive: the tag or serial names no unit the site knows
/// (receive: and the scan names no SKU for a new one).
pub const UNKNOWN_UNIT: &str = "unknown_unit";
/// Put-away: the unit is neither new nor in stock (dispatched, missing).
pub const UNIT_STATE: &str = "unit_state";
/// Receive: the GRN is unknown, or its QC disposition is not accepted.
pub const GRN_NOT_ACCEPTED: &str = "grn_not_accepted";
/// Receive: the unit's SKU has no line on the GRN.
pub const NOT_ON_GRN: &str = "not_on_grn";
/// Receive: the unit's line already has every unit it expects.
pub const EXCESS_LINE: &str = "excess_line";
/// Receive: the unit was received already (on this GRN or another).
pub const ALREADY_RECEIVED: &str = "already_received";
/// Cycle count: the count is unknown, closed, approved or cancelled.
pub const COUNT_NOT_OPEN: &str = "count_not_open";
/// Dispatch verify: the manifest is unknown, or not packing or dispatched.
pub const MANIFEST_NOT_READY: &str = "manifest_not_ready";
/// Dispatch verify: the tag is not on the manifest.
pub const NOT_ON_MANIFEST: &str = "not_on_manifest";

/// Every reason, in the order of docs/design.md §5.4's table.
pub const ALL: &[&str] = &[
    STALE_STATE,
    SESSION_NOT_OPEN,
    SESSION_ALREADY_OPENED,
    SESSION_ALREADY_CLOSED,
    SESSION_CLOSED,
    UNDO_WINDOW_EXPIRED,
    UNKNOWN_TARGET,
    CANNOT_UNDO_AN_UNDO,
    TARGET_REJECTED,
    TARGET_NOT_UNDOABLE,
    TARGET_NOT_APPLIED,
    TARGET_NOT_REJECTED,
    UNKNOWN_OPERATOR,
    MODE_NOT_ALLOWED,
    READ_ONLY_MODE,
    UNKNOWN_BIN,
    UNKNOWN_UNIT,
    UNIT_STATE,
    GRN_NOT_ACCEPTED,
    NOT_ON_GRN,
    EXCESS_LINE,
    ALREADY_RECEIVED,
    COUNT_NOT_OPEN,
    MANIFEST_NOT_READY,
    NOT_ON_MANIFEST,
];

#[cfg(test)]
mod tests {
    use super::*;

    /// The codes in the first column of docs/design.md §5.4's reasons table.
    fn documented() -> Vec<String> {
        let design = include_str!("../docs/design.md");
        let table = design
            .split("<!-- reasons table -->")
            .nth(1)
            .expect("docs/design.md marks its reasons table with <!-- reasons table -->");
        table
            .lines()
            .skip_while(|line| !line.starts_with("| `"))
            .take_while(|line| line.starts_with('|'))
            .filter_map(|line| line.split('`').nth(1).map(str::to_owned))
            .collect()
    }

    #[test]
    fn the_design_documents_every_reason_in_order_and_no_other() {
        assert_eq!(documented(), ALL.to_vec());
    }

    #[test]
    fn reasons_are_distinct_lower_snake_case() {
        for (i, reason) in ALL.iter().enumerate() {
            assert!(reason.chars().all(|c| c.is_ascii_lowercase() || c == '_'));
            assert!(!ALL[..i].contains(reason), "{reason} twice");
        }
    }
}
