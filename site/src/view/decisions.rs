//! The decisions waiting for a person: count variances to approve, GRNs to
//! resolve, the correction list (items the ledger rejected, among them
//! undos past the 120 s window) and print jobs whose tag read back wrong or
//! whose printer did not answer (reprinted or dismissed through
//! `view::printers`, which calls `printers::store::decide`).
//!
//! The status carries these lists as [`Decisions`]; what is settled in the
//! decision log ([`crate::ledger::decision_log`]) is left out. The
//! workbench ([`super::workbench`]) lists the same decisions with their
//! full context and settles them. The correction list is read from the
//! ledger's stored answers (its total from the rejection summaries), the
//! counts closed and awaiting approval from
//! `counts`, the GRNs that need resolution from `grns`.

use crate::store::sql::Connection;
use stockhop::time::UnixMs;

use crate::ledger::{counts, grns, rejections};
use crate::printers::store::{self as printers, JobView};

/// Rows each list carries; the page shows the total beside them.
pub const MAX_LISTED: usize = 100;

/// A count session closed and waiting for approval of its variance.
/// `missing` and `unexpected` (EPCs) are shown before the approve button.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
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
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct GrnIssue {
    pub grn_id: String,
    pub short: u64,
    pub excess: u64,
}

/// An item the ledger rejected: it stays on its device until an operator
/// resolves it (DESIGN rule 5), and a person decides what happened.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct Correction {
    pub device_id: String,
    pub key: String,
    pub session_id: Option<String>,
    pub client_seq: Option<i64>,
    pub command: String,
    pub reason: Option<String>,
    #[schema(value_type = String, format = DateTime)]
    pub received_at: UnixMs,
}

/// Everything waiting for a person.
#[derive(
    Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize, utoipa::ToSchema,
)]
pub struct Decisions {
    pub count_variances: Vec<CountVariance>,
    pub grns: Vec<GrnIssue>,
    /// The newest [`MAX_LISTED`] rejected items.
    pub corrections: Vec<Correction>,
    /// How many rejected items there are in all.
    pub corrections_total: i64,
    /// Print jobs a person must decide on: a tag that read back wrong or
    /// void, or a format sent without an answer (reprint or dismiss).
    pub print_jobs: Vec<JobView>,
}

/// The rows of the correction list: final answers whose outcome is
/// `rejected` (the partial index `receipts_rejected` holds just these).
const REJECTED: &str = "r.state = 'final'
      AND CASE WHEN json_valid(r.response) THEN json_extract(r.response, '$.outcome') END = 'rejected'
      AND NOT EXISTS (SELECT 1 FROM decision_log d
                      WHERE d.decision_id = 'item:' || r.scope || ':' || r.key)";

/// Reads every list. The correction list's total is the rejection
/// summaries' ([`rejections::unsettled`]), never a count of receipts; its
/// rows are read only when there are some.
pub fn pending(conn: &Connection) -> crate::store::sql::Result<Decisions> {
    let corrections_total = rejections::unsettled(conn)?;
    let corrections = if corrections_total > 0 {
        newest_corrections(conn)?
    } else {
        Vec::new()
    };
    Ok(Decisions {
        count_variances: count_variances(conn)?,
        grns: grn_issues(conn)?,
        corrections,
        corrections_total,
        print_jobs: printers::waiting(conn)?,
    })
}

/// The newest [`MAX_LISTED`] rejected items nobody settled: a walk of the
/// partial index `receipts_rejected` from its newest end.
fn newest_corrections(conn: &Connection) -> crate::store::sql::Result<Vec<Correction>> {
    let mut select = conn.prepare_cached(&format!(
        "SELECT r.scope, r.key, r.session_id, r.client_seq, r.command, r.received_at,
                json_extract(r.response, '$.reason')
         FROM receipts r WHERE {REJECTED}
         ORDER BY r.received_at DESC LIMIT ?1"
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
        .collect::<crate::store::sql::Result<Vec<_>>>()?;
    Ok(corrections)
}

/// The counts closed and awaiting approval ([`counts::awaiting_approval`]:
/// not cancelled ones, nothing they counted posts): those with missing or
/// unexpected units first, each group the longest waiting first.
fn count_variances(conn: &Connection) -> crate::store::sql::Result<Vec<CountVariance>> {
    let ids = counts::awaiting_approval(conn, None, MAX_LISTED)?;
    let mut variances = Vec::with_capacity(ids.len());
    for (count_id, _) in ids {
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
fn grn_issues(conn: &Connection) -> crate::store::sql::Result<Vec<GrnIssue>> {
    conn.prepare_cached(
        "SELECT g.grn,
                CAST(coalesce(sum(CASE WHEN l.expected > l.received
                                       THEN l.expected - l.received ELSE 0 END), 0) AS BIGINT),
                CAST(coalesce(sum(CASE WHEN l.received > l.expected
                                       THEN l.received - l.expected ELSE 0 END), 0) AS BIGINT)
         FROM grns AS g LEFT JOIN grn_lines AS l ON l.grn = g.grn
         WHERE g.state = ?1 AND NOT EXISTS
               (SELECT 1 FROM decision_log d WHERE d.decision_id = 'grn:' || g.grn)
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
