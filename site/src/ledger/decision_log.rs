//! The decision log: who settled which waiting decision, when, how and
//! why, and the hops the settlement posted. A decision is settled once
//! (its id is the table's key); the site's view lists as open only what
//! has no row here. Rows are never changed or deleted (the schema's
//! triggers refuse it), so the log is the audit trail.
//!
//! A decision's id names what it is about, so the same waiting item has
//! the same id on every read and a settlement cannot land on another:
//! `count:COUNT_ID`, `grn:GRN`, `item:DEVICE_ID:KEY` (a rejected item, by
//! the device's scope and its key) and `terminal:SEQ` (a terminal record
//! the listener dead-lettered).

use crate::store::sql::{params, Connection, OptionalExtension};
use stockhop::time::UnixMs;

/// What waits for a person, by what it is about.
pub mod kinds {
    /// A closed count whose variance waits for approval.
    pub const COUNT_VARIANCE: &str = "count_variance";
    /// A GRN closed with a short or over line.
    pub const GRN_RESOLUTION: &str = "grn_resolution";
    /// A handheld item the ledger rejected.
    pub const REJECTED_ITEM: &str = "rejected_item";
    /// An undo the ledger could not honour (past the 120 s window, or of a
    /// hop no undo reverses on the handheld).
    pub const LATE_UNDO: &str = "late_undo";
    /// A terminal record the listener's forwarder dead-lettered.
    pub const TERMINAL_FAILED: &str = "terminal_failed";
}

/// How a decision was settled.
pub mod actions {
    /// Settled without posting anything: the person saw it and it stands.
    pub const DISMISS: &str = "dismiss";
    /// Settled by posting what puts the ledger right.
    pub const CORRECT: &str = "correct";
    /// The operator acknowledged the item on the handheld.
    pub const ACKNOWLEDGE: &str = "acknowledge";
    /// The operator scanned the unit again on the handheld.
    pub const RESCAN: &str = "rescan";
}

/// Longest note a settlement keeps: a sentence or two of why.
pub const MAX_NOTE_CHARS: usize = 500;

/// Entries one read of the log returns, newest first.
pub const MAX_LOG_ENTRIES: usize = 200;

pub fn count_id(count_id: &str) -> String {
    format!("count:{count_id}")
}

pub fn grn_id(grn: &str) -> String {
    format!("grn:{grn}")
}

pub fn item_id(device_id: &str, key: &str) -> String {
    format!("item:{device_id}:{key}")
}

pub fn terminal_id(seq: i64) -> String {
    format!("terminal:{seq}")
}

/// What a decision id names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    Count(String),
    Grn(String),
    Item { device_id: String, key: String },
    Terminal(i64),
}

impl Subject {
    /// Reads an id [`count_id`], [`grn_id`], [`item_id`] or
    /// [`terminal_id`] made; `None` for anything else.
    pub fn parse(id: &str) -> Option<Subject> {
        let (kind, rest) = id.split_once(':')?;
        if rest.is_empty() {
            return None;
        }
        match kind {
            "count" => Some(Subject::Count(rest.to_owned())),
            "grn" => Some(Subject::Grn(rest.to_owned())),
            // A key is a UUID (no colon); a device id may hold one.
            "item" => {
                let (device_id, key) = rest.rsplit_once(':')?;
                (!device_id.is_empty() && !key.is_empty()).then(|| Subject::Item {
                    device_id: device_id.to_owned(),
                    key: key.to_owned(),
                })
            }
            "terminal" => rest.parse().ok().map(Subject::Terminal),
            _ => None,
        }
    }
}

/// One settlement, as logged.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct Entry {
    pub decision_id: String,
    pub kind: String,
    pub action: String,
    pub settled_by: String,
    pub note: String,
    #[schema(value_type = String, format = DateTime)]
    pub settled_at: UnixMs,
    pub hop_ids: Vec<i64>,
    pub summary: String,
}

/// Whether the decision `id` is settled.
pub fn is_settled(conn: &Connection, id: &str) -> crate::store::sql::Result<bool> {
    conn.prepare_cached("SELECT 1 FROM decision_log WHERE decision_id = ?1")?
        .exists([id])
}

/// Logs a settlement, and takes a rejected item's out of the rejection
/// summaries' unsettled count. A second settlement of the same decision is
/// a unique violation, which the ledger answers 409 `ALREADY_SETTLED`.
pub fn record(conn: &Connection, entry: &Entry) -> crate::store::sql::Result<()> {
    let hop_ids = serde_json::to_string(&entry.hop_ids)
        .map_err(|err| crate::store::sql::Error::ToSqlConversionFailure(err.to_string()))?;
    conn.prepare_cached(
        "INSERT INTO decision_log (decision_id, kind, action, settled_by, note, settled_at,
                                   hop_ids, summary)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?
    .execute(params![
        entry.decision_id,
        entry.kind,
        entry.action,
        entry.settled_by,
        entry.note,
        entry.settled_at.0,
        hop_ids,
        entry.summary,
    ])?;
    super::rejections::settled(conn, &entry.decision_id)
}

/// The settlement of `id`, if any.
pub fn find(conn: &Connection, id: &str) -> crate::store::sql::Result<Option<Entry>> {
    conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM decision_log WHERE decision_id = ?1"
    ))?
    .query_row([id], entry_from_row)
    .optional()
}

/// The newest `limit` settlements, newest first.
pub fn newest(conn: &Connection, limit: usize) -> crate::store::sql::Result<Vec<Entry>> {
    conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM decision_log ORDER BY settled_at DESC, decision_id LIMIT ?1"
    ))?
    .query_map([limit as i64], entry_from_row)?
    .collect()
}

const COLUMNS: &str = "decision_id, kind, action, settled_by, note, settled_at, hop_ids, summary";

fn entry_from_row(row: &crate::store::sql::Row<'_>) -> crate::store::sql::Result<Entry> {
    let hop_ids: String = row.get(6)?;
    Ok(Entry {
        decision_id: row.get(0)?,
        kind: row.get(1)?,
        action: row.get(2)?,
        settled_by: row.get(3)?,
        note: row.get(4)?,
        settled_at: UnixMs(row.get(5)?),
        hop_ids: serde_json::from_str(&hop_ids)
            .map_err(|err| crate::store::sql::Error::conversion(6, err.to_string()))?,
        summary: row.get(7)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_read_back_to_what_they_name() {
        let check = |id: String, subject: Subject| assert_eq!(Subject::parse(&id), Some(subject));
        check(count_id("C-1"), Subject::Count("C-1".into()));
        check(grn_id("G:1"), Subject::Grn("G:1".into()));
        check(
            item_id("HH:1", "8a0c"),
            Subject::Item {
                device_id: "HH:1".into(),
                key: "8a0c".into(),
            },
        );
        check(terminal_id(42), Subject::Terminal(42));
        for bad in ["", "count:", "item:HH-1", "terminal:x", "other:1", "count"] {
            assert_eq!(Subject::parse(bad), None, "{bad}");
        }
    }
}
