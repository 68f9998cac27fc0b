//! The decisions waiting for a person: count variances to approve, GRNs to
//! resolve, and the correction list (items the ledger rejected, among them
//! undos past the 120 s window).
//!
//! This module is the dashboard's one interface to them: the page and the
//! JSON read [`Decisions`], and the actions go through [`approve_count`]
//! and [`resolve_grn`]. The correction list is read from the ledger's
//! stored answers, the counts closed and awaiting approval from `counts`,
//! the GRNs that need resolution from `grns`. The count and GRN rules
//! belong to the ledger (`ledger::modes`): the actions call the same
//! functions as `stockhop-site count approve` and `grn resolve`.

use crate::sql::Connection;
use stockhop::time::UnixMs;

use crate::ledger::modes::{cycle_count, receive};
use crate::ledger::{counts, grns, LedgerError};

/// Rows each list carries; the page shows the total beside them.
pub const MAX_LISTED: usize = 100;

/// A count session closed and waiting for approval of its variance.
/// `missing` and `unexpected` (EPCs) are shown before the approve button.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CountVariance {
    pub count_id: String,
    pub location: String,
    pub zone: String,
    /// The one bin counted; null for a count of the whole zone.
    #[serde(default)]
    pub bin: Option<String>,
    pub missing: Vec<String>,
    pub unexpected: Vec<String>,
}

/// A GRN with unresolved short or excess lines: `short` and `excess` are
/// units summed over its lines.
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
pub fn pending(conn: &Connection) -> crate::sql::Result<Decisions> {
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
        .collect::<crate::sql::Result<Vec<_>>>()?;
    Ok(Decisions {
        count_variances: count_variances(conn)?,
        grns: grn_issues(conn)?,
        corrections,
        corrections_total,
    })
}

/// The counts closed and awaiting approval (not cancelled ones: nothing
/// they counted posts): those with missing or unexpected units first, each
/// group the longest waiting first.
fn count_variances(conn: &Connection) -> crate::sql::Result<Vec<CountVariance>> {
    let ids = conn
        .prepare_cached(
            "SELECT count_id FROM counts WHERE state = ?1 AND cancelled_at IS NULL
             ORDER BY closed_at, count_no LIMIT ?2",
        )?
        .query_map(
            crate::params![counts::states::CLOSED, MAX_LISTED as i64],
            |row| row.get::<_, String>(0),
        )?
        .collect::<crate::sql::Result<Vec<_>>>()?;
    let mut variances = Vec::with_capacity(ids.len());
    for count_id in ids {
        if let Some(view) = counts::view(conn, &count_id)? {
            variances.push(CountVariance {
                count_id: view.count_id,
                location: view.location,
                zone: view.zone,
                bin: view.bin,
                missing: view.missing,
                unexpected: view.unexpected,
            });
        }
    }
    // Stable: closing order is kept within each group.
    variances.sort_by_key(|v| v.missing.is_empty() && v.unexpected.is_empty());
    Ok(variances)
}

/// The GRNs whose short or excess lines wait for a person, by GRN.
fn grn_issues(conn: &Connection) -> crate::sql::Result<Vec<GrnIssue>> {
    conn.prepare_cached(
        "SELECT g.grn,
                CAST(coalesce(sum(CASE WHEN l.expected > l.received
                                       THEN l.expected - l.received ELSE 0 END), 0) AS BIGINT),
                CAST(coalesce(sum(CASE WHEN l.received > l.expected
                                       THEN l.received - l.expected ELSE 0 END), 0) AS BIGINT)
         FROM grns AS g LEFT JOIN grn_lines AS l ON l.grn = g.grn
         WHERE g.state = ?1
         GROUP BY g.grn ORDER BY g.grn LIMIT ?2",
    )?
    .query_map(
        crate::params![grns::states::NEEDS_RESOLUTION, MAX_LISTED as i64],
        |row| {
            Ok(GrnIssue {
                grn_id: row.get(0)?,
                short: row.get::<_, i64>(1)? as u64,
                excess: row.get::<_, i64>(2)? as u64,
            })
        },
    )?
    .collect()
}

/// Approves a closed count's variance on behalf of `admin`: its ADJUST
/// hops post, as `stockhop-site count approve` posts them.
pub fn approve_count(
    conn: &Connection,
    count_id: &str,
    admin: &str,
    now: UnixMs,
) -> Result<(), LedgerError> {
    let approval = cycle_count::approve(conn, count_id, now)?;
    tracing::info!(
        %count_id,
        admin,
        adjustments = approval.hop_ids.len(),
        moved_since = approval.moved_since.len(),
        "count variance approved"
    );
    Ok(())
}

/// Resolves a GRN's short and excess lines on behalf of `admin`, as
/// `stockhop-site grn resolve` does: it is complete as it stands.
pub fn resolve_grn(
    conn: &Connection,
    grn_id: &str,
    admin: &str,
    _now: UnixMs,
) -> Result<(), LedgerError> {
    receive::resolve(conn, grn_id)?;
    tracing::info!(grn = %grn_id, admin, "GRN resolved");
    Ok(())
}
