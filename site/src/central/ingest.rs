//! The central's side: site batches in, each hop held once by (site, key)
//! and in seq order per site, the one place with its SQL.
//!
//! A batch is one transaction (run again on a PostgreSQL serialization
//! conflict, [`crate::store::sql::retry_conflicts`]). Per hop, in batch order:
//! a key the central holds for the site is *replayed* when the hop's
//! canonical JSON hashes the same, else refused 409
//! `IDEMPOTENCY_KEY_REUSED`; a new key whose seq is at or below the last
//! seq held for the site is refused 409 [`SEQ_OUT_OF_ORDER`] (a site's
//! outbox sends in seq order, and a lower seq would break the site's order
//! at the central); any other hop is *applied*. Nothing refused is stored.
//! A batch's summary of the site, when it carries one, replaces the one
//! held for the site unless that was taken later (a batch sent again after
//! a newer one), in the same transaction.

use stockhop::time::UnixMs;
use stockhop::wire::codes as wire_codes;

use super::wire::{
    CentralBatch, CentralBatchResponse, CentralHop, CentralResult, SiteSummary, SummaryError,
    KEY_MISMATCH, SEQ_OUT_OF_ORDER,
};
use crate::ledger::receipts::request_hash;
use crate::ledger::{LedgerError, Refusal};
use crate::limits::CENTRAL_BATCH_HOPS_MAX;
use crate::store::sql::retry_conflicts;
use crate::store::sql::{params, Connection, OptionalExtension};

/// Why a whole batch was refused before any hop was looked at (400).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BatchError {
    #[error(transparent)]
    SiteId(#[from] crate::ident::IdentError),
    #[error("a batch holds at most {CENTRAL_BATCH_HOPS_MAX} hops")]
    TooMany,
    #[error("seqs must be positive and strictly increasing within a batch")]
    Order,
    #[error(transparent)]
    Summary(#[from] SummaryError),
}

/// Checks what can be refused of a batch as a whole.
pub fn check(batch: &CentralBatch) -> Result<(), BatchError> {
    crate::ident::check("site_id", &batch.site_id)?;
    if batch.hops.len() > CENTRAL_BATCH_HOPS_MAX {
        return Err(BatchError::TooMany);
    }
    let mut last = 0;
    for hop in &batch.hops {
        if hop.seq <= last {
            return Err(BatchError::Order);
        }
        last = hop.seq;
    }
    if let Some(summary) = &batch.summary {
        summary.check()?;
    }
    Ok(())
}

/// Takes a checked batch at `now`: one result per hop, in batch order.
pub fn ingest(
    conn: &mut Connection,
    batch: &CentralBatch,
    now: UnixMs,
) -> Result<CentralBatchResponse, LedgerError> {
    let hashed: Vec<(String, String)> = batch
        .hops
        .iter()
        .map(|hop| {
            let value = serde_json::to_value(&hop.hop).unwrap_or(serde_json::Value::Null);
            let mut canonical = String::new();
            crate::ledger::receipts::write_canonical(&value, &mut canonical);
            (canonical, request_hash(&value))
        })
        .collect();
    retry_conflicts(|| {
        let tx =
            conn.transaction_with_behavior(crate::store::sql::TransactionBehavior::Immediate)?;
        let results = ingest_in(&tx, batch, &hashed, now)?;
        tx.commit()?;
        Ok(CentralBatchResponse { results })
    })
}

fn ingest_in(
    conn: &Connection,
    batch: &CentralBatch,
    hashed: &[(String, String)],
    now: UnixMs,
) -> Result<Vec<CentralResult>, LedgerError> {
    let mut last_seq: i64 = conn.query_row(
        "INSERT INTO central_sites (site_id, first_seen_at, last_seen_at) VALUES (?1, ?2, ?2)
         ON CONFLICT (site_id) DO UPDATE SET last_seen_at = excluded.last_seen_at
         RETURNING last_seq",
        params![batch.site_id, now.0],
        |row| row.get(0),
    )?;
    let mut received = 0_i64;
    let mut results = Vec::with_capacity(batch.hops.len());
    for (hop, (canonical, sha256)) in batch.hops.iter().zip(hashed) {
        let result = |status: u16, replayed: bool, refusal: Option<Refusal>| CentralResult {
            seq: hop.seq,
            key: hop.key.clone(),
            status,
            replayed,
            code: refusal.as_ref().map(|r| r.code.to_owned()),
            message: refusal.map(|r| r.message),
        };
        if hop.key != hop.hop.key {
            results.push(result(
                422,
                false,
                Some(Refusal::new(
                    422,
                    KEY_MISMATCH,
                    "the hop's key is not the key it is sent under",
                )),
            ));
            continue;
        }
        let held: Option<String> = conn
            .prepare_cached("SELECT hop_sha256 FROM central_hops WHERE site_id = ?1 AND key = ?2")?
            .query_row(params![batch.site_id, hop.key], |row| row.get(0))
            .optional()?;
        match held {
            Some(held) if held == *sha256 => results.push(result(200, true, None)),
            Some(_) => results.push(result(
                409,
                false,
                Some(Refusal::new(
                    409,
                    wire_codes::IDEMPOTENCY_KEY_REUSED,
                    "this site sent another hop under this key",
                )),
            )),
            None if hop.seq <= last_seq => results.push(result(
                409,
                false,
                Some(Refusal::new(
                    409,
                    SEQ_OUT_OF_ORDER,
                    format!(
                        "seq {} is not after {last_seq}, the last this central holds for the site",
                        hop.seq
                    ),
                )),
            )),
            None => {
                insert(conn, &batch.site_id, hop, canonical, sha256, now)?;
                last_seq = hop.seq;
                received += 1;
                results.push(result(200, false, None));
            }
        }
    }
    if let Some(summary) = &batch.summary {
        let json = serde_json::to_string(summary).map_err(|err| {
            crate::store::sql::Error::conversion(0, format!("summary as JSON: {err}"))
        })?;
        conn.execute(
            "UPDATE central_sites SET summary = ?2, summary_at = ?3
             WHERE site_id = ?1 AND (summary_at IS NULL OR summary_at <= ?3)",
            params![batch.site_id, json, summary.taken_at.0],
        )?;
    }
    if received > 0 {
        conn.execute(
            "UPDATE central_sites SET last_seq = ?2, hops_received = hops_received + ?3
             WHERE site_id = ?1",
            params![batch.site_id, last_seq, received],
        )?;
    }
    Ok(results)
}

fn insert(
    conn: &Connection,
    site_id: &str,
    hop: &CentralHop,
    canonical: &str,
    sha256: &str,
    now: UnixMs,
) -> crate::store::sql::Result<()> {
    conn.prepare_cached(
        "INSERT INTO central_hops (site_id, key, seq, hop, hop_sha256, received_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![site_id, hop.key, hop.seq, canonical, sha256, now.0])?;
    Ok(())
}

/// A site the central has heard from.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct CentralSite {
    pub site_id: String,
    #[schema(value_type = String, format = DateTime)]
    pub first_seen_at: UnixMs,
    #[schema(value_type = String, format = DateTime)]
    pub last_seen_at: UnixMs,
    pub hops_received: i64,
    /// The last outbox seq it holds from the site.
    pub last_seq: i64,
    /// The latest summary the site sent of how it is doing; null until
    /// one arrives (a site of an older release sends none).
    pub summary: Option<SiteSummary>,
}

/// Every site the central has heard from, by id.
pub fn sites(conn: &Connection) -> crate::store::sql::Result<Vec<CentralSite>> {
    let mut select = conn.prepare_cached(
        "SELECT site_id, first_seen_at, last_seen_at, hops_received, last_seq, summary
         FROM central_sites ORDER BY site_id",
    )?;
    let rows = select.query_map([], |row| {
        Ok(CentralSite {
            site_id: row.get(0)?,
            first_seen_at: UnixMs(row.get(1)?),
            last_seen_at: UnixMs(row.get(2)?),
            hops_received: row.get(3)?,
            last_seq: row.get(4)?,
            summary: row
                .get::<_, Option<String>>(5)?
                .map(|json| serde_json::from_str(&json))
                .transpose()
                .map_err(|err| crate::store::sql::Error::conversion(5, err.to_string()))?,
        })
    })?;
    rows.collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::central::wire::SiteHop;
    use crate::store::db::Db;

    fn hop(seq: i64, key: &str, to_bin: &str) -> CentralHop {
        CentralHop {
            seq,
            key: key.into(),
            hop: SiteHop {
                hop_id: seq,
                device_id: "HH-1".into(),
                session_id: None,
                key: key.into(),
                client_seq: None,
                command: "scan".into(),
                kind: "ZONE_CHANGE".into(),
                mode: None,
                unit_id: None,
                from_bin: None,
                to_bin: Some(to_bin.into()),
                unit_version: None,
                facts: serde_json::json!({}),
                occurred_at: 1,
                booked_at: 1,
                recorded_at: 1,
                device_clock_skew_ms: 0,
                source_mode: "live".into(),
                compensates: None,
            },
        }
    }

    fn batch(hops: Vec<CentralHop>) -> CentralBatch {
        CentralBatch {
            site_id: "S".into(),
            hops,
            summary: None,
        }
    }

    fn summary(taken_at: i64, queue_depth: i64) -> SiteSummary {
        SiteSummary {
            taken_at: UnixMs(taken_at),
            time_zone: "Europe/Berlin".into(),
            trend: crate::central::wire::Trend::Growing,
            queue_depth,
            oldest_queued_at: None,
            devices_offline: 0,
            alert: None,
            outbox_pending: 0,
            outbox_lag_ms: 0,
            view_url: Some("https://dc-1.example:8443/site/".into()),
        }
    }

    #[test]
    fn the_latest_summary_is_kept_and_one_taken_earlier_arriving_late_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path()).unwrap();
        db.call_blocking(|conn| {
            let with = |taken_at, depth| CentralBatch {
                summary: Some(summary(taken_at, depth)),
                ..batch(Vec::new())
            };
            assert!(check(&with(10, 4)).is_ok());
            ingest(conn, &with(10, 4), UnixMs(11)).unwrap();
            assert_eq!(sites(conn).unwrap()[0].summary, Some(summary(10, 4)));
            ingest(conn, &with(9, 7), UnixMs(12)).unwrap();
            assert_eq!(sites(conn).unwrap()[0].summary, Some(summary(10, 4)));
            ingest(conn, &batch(Vec::new()), UnixMs(13)).unwrap();
            let site = &sites(conn).unwrap()[0];
            assert_eq!(
                (site.last_seen_at, &site.summary),
                (UnixMs(13), &Some(summary(10, 4)))
            );
            ingest(conn, &with(20, 0), UnixMs(21)).unwrap();
            assert_eq!(sites(conn).unwrap()[0].summary, Some(summary(20, 0)));
        });
    }

    #[test]
    fn a_summary_with_a_negative_count_or_a_url_that_is_not_the_web_is_refused() {
        let mut bad = summary(1, -1);
        let refused = |s: &SiteSummary| {
            check(&CentralBatch {
                summary: Some(s.clone()),
                ..batch(Vec::new())
            })
        };
        assert_eq!(
            refused(&bad),
            Err(BatchError::Summary(SummaryError::Negative("queue_depth")))
        );
        bad.queue_depth = 0;
        bad.view_url = Some("javascript:alert(1)".into());
        assert_eq!(
            refused(&bad),
            Err(BatchError::Summary(SummaryError::ViewUrl))
        );
        bad.view_url = None;
        bad.time_zone = "\u{7}".into();
        assert_eq!(
            refused(&bad),
            Err(BatchError::Summary(SummaryError::TimeZone))
        );
    }

    #[test]
    fn a_batch_needs_a_site_id_and_increasing_seqs() {
        assert_eq!(
            check(&batch(vec![hop(1, "a", "B"), hop(2, "b", "B")])),
            Ok(())
        );
        assert_eq!(
            check(&batch(vec![hop(2, "a", "B"), hop(2, "b", "B")])),
            Err(BatchError::Order)
        );
        assert_eq!(
            check(&batch(vec![hop(0, "a", "B")])),
            Err(BatchError::Order)
        );
        let mut nameless = batch(Vec::new());
        nameless.site_id.clear();
        assert_eq!(
            check(&nameless),
            Err(BatchError::SiteId(crate::ident::IdentError::Length(
                "site_id"
            )))
        );
    }

    #[test]
    fn each_hop_is_applied_once_replayed_after_and_refused_with_another_body_or_a_late_seq() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path()).unwrap();
        db.call_blocking(|conn| {
            let statuses = |conn: &mut Connection, hops| {
                ingest(conn, &batch(hops), UnixMs(5))
                    .unwrap()
                    .results
                    .into_iter()
                    .map(|r| (r.status, r.replayed, r.code))
                    .collect::<Vec<_>>()
            };
            let first = statuses(conn, vec![hop(1, "a", "B"), hop(3, "b", "B")]);
            assert_eq!(first, [(200, false, None), (200, false, None)]);
            let again = statuses(
                conn,
                vec![hop(1, "a", "B"), hop(3, "b", "X"), hop(4, "c", "B")],
            );
            assert_eq!(
                again,
                [
                    (200, true, None),
                    (409, false, Some("IDEMPOTENCY_KEY_REUSED".into())),
                    (200, false, None)
                ]
            );
            let late = statuses(conn, vec![hop(2, "d", "B")]);
            assert_eq!(late, [(409, false, Some(SEQ_OUT_OF_ORDER.into()))]);
            let sites = sites(conn).unwrap();
            assert_eq!((sites[0].hops_received, sites[0].last_seq), (3, 4));
        });
    }
}
