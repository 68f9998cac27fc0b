//! The decisions waiting for a person: count variances to approve, GRNs to
//! resolve, and the correction list (items the ledger rejected, among them
//! undos past the 120 s window).
//!
//! This module is the dashboard's one interface to them: the page and the
//! JSON read [`Decisions`], and the actions go through [`approve_count`]
//! and [`resolve_grn`]. The correction list is read from the ledger's
//! stored answers. The ledger keeps no count sessions or GRNs yet, so their
//! lists are empty and their actions answer 404 until it does; the count
//! and GRN rules belong to the ledger, and these functions are where the
//! dashboard calls them.

use rusqlite::Connection;
use stockhop::time::UnixMs;

use crate::ledger::{LedgerError, Refusal};

/// Rows each list carries; the page shows the total beside them.
pub const MAX_LISTED: usize = 100;

/// A count session whose variance waits for approval. `missing` and
/// `unexpected` are shown before the approve button.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CountVariance {
    pub count_id: String,
    pub location: String,
    pub missing: Vec<String>,
    pub unexpected: Vec<String>,
}

/// A GRN with unresolved short or excess lines.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct GrnIssue {
    pub grn_id: String,
    pub short: u64,
    pub excess: u64,
}

/// An item the ledger rejected: it stays on its device until an operator
/// resolves it (DESIGN rule 5), and a person decides what happened.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Correction {
    pub device_id: String,
    pub key: String,
    pub session_id: Option<String>,
    pub client_seq: Option<i64>,
    pub command: String,
    pub reason: Option<String>,
    pub received_at: UnixMs,
}

/// Everything waiting for a person.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct Decisions {
    pub count_variances: Vec<CountVariance>,
    pub grns: Vec<GrnIssue>,
    /// The newest [`MAX_LISTED`] rejected items.
    pub corrections: Vec<Correction>,
    /// How many rejected items there are in all.
    pub corrections_total: i64,
}

/// The rows of the correction list: final answers whose outcome is
/// `rejected` (the partial index `receipts_rejected` holds just these).
const REJECTED: &str = "state = 'final'
      AND CASE WHEN json_valid(response) THEN json_extract(response, '$.outcome') END = 'rejected'";

/// Reads every list.
pub fn pending(conn: &Connection) -> rusqlite::Result<Decisions> {
    let corrections_total = conn
        .prepare_cached(&format!("SELECT count(*) FROM receipts WHERE {REJECTED}"))?
        .query_row([], |row| row.get(0))?;
    let mut select = conn.prepare_cached(&format!(
        "SELECT scope, key, session_id, client_seq, command, received_at,
                json_extract(response, '$.reason')
         FROM receipts WHERE {REJECTED}
         ORDER BY received_at DESC LIMIT ?1"
    ))?;
    let corrections = select
        .query_map([MAX_LISTED as i64], |row| {
            Ok(Correction {
                device_id: row.get(0)?,
                key: row.get(1)?,
                session_id: row.get(2)?,
                client_seq: row.get(3)?,
                command: row.get(4)?,
                received_at: UnixMs(row.get(5)?),
                reason: row.get(6)?,
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(Decisions {
        count_variances: Vec::new(),
        grns: Vec::new(),
        corrections,
        corrections_total,
    })
}

fn not_found(what: &str, id: &str) -> LedgerError {
    LedgerError::Refused(Refusal::new(
        404,
        crate::ledger::codes::NOT_FOUND,
        format!("no {what} {id:?} waits for a decision"),
    ))
}

/// Approves a count session's variance on behalf of `admin`: its hops post.
pub fn approve_count(
    _conn: &Connection,
    count_id: &str,
    _admin: &str,
    _now: UnixMs,
) -> Result<(), LedgerError> {
    Err(not_found("count session", count_id))
}

/// Resolves a GRN's short and excess lines on behalf of `admin`.
pub fn resolve_grn(
    _conn: &Connection,
    grn_id: &str,
    _admin: &str,
    _now: UnixMs,
) -> Result<(), LedgerError> {
    Err(not_found("GRN", grn_id))
}
