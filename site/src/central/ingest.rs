//! The central's side: site batches in, each hop held once by (site, key)
//! and in seq order per site, the one place with its SQL.
//!
//! A batch is one transaction (run again on a PostgreSQL serialization
//! conflict, [`crate::store::sql::retry_conflicts`]). Per hop, in batch order:
//! a key the central holds for the site is *replayed* when the hop's
//! canonical JSON hashes the same, else refused 409
//! `IDEMPOTENCY_KEY_REUSED`; a new key whose seq is at or below the last
//! seq held for the site is refused 409 [`SEQ_OUT_OF_ORDER`], and one past
//! the seq right after it 409 [`SEQ_GAP`] (a site's stream has no holes,
//! so a jump is never the site's new floor); any other hop is *applied*.
//! Nothing refused is stored. A hop answered for good (applied, replayed
//! or refused for what it holds) moves the site's stream past its seq; the
//! two seq refusals do not, and the site, told where its stream stands
//! ([`StreamPosition`]), sends its hops again after it.
//!
//! A batch carries the site's outbox epoch, new at each restore of the
//! site from a backup: a higher one than held begins the site's new epoch
//! (only when signed with the site's own secret; logged and kept for the
//! company's view), a lower one comes from a copy of the site from before
//! its restore and is refused whole, 409 [`EPOCH_STALE`].
//!
//! A batch's summary of the site, when it carries one, replaces the one
//! held for the site unless that was taken later (a batch sent again after
//! a newer one), in the same transaction.

use stockhop::time::UnixMs;
use stockhop::wire::codes as wire_codes;

use super::wire::SiteHop;
use super::wire::{
    CentralBatch, CentralBatchResponse, CentralHop, CentralResult, SiteSummary, StreamPosition,
    SummaryError, EPOCH_NEEDS_OWN_SECRET, EPOCH_STALE, KEY_MISMATCH, SEQ_GAP, SEQ_OUT_OF_ORDER,
};
use crate::ledger::hops::{kinds, SourceMode};
use crate::ledger::receipts::request_hash;
use crate::ledger::{LedgerError, Refusal};
use crate::limits::CENTRAL_BATCH_HOPS_MAX;
use crate::limits::{
    CENTRAL_HOP_FACTS_BYTES_MAX, CENTRAL_HOP_INSTANT_WINDOW_MS, MAX_CLOCK_SKEW_MS,
};
use crate::store::sql::retry_conflicts;
use crate::store::sql::{params, Connection, OptionalExtension};
use stockhop::wire::Mode;

/// The code of a batch refused (422) for a hop's field.
pub const INVALID_HOP: &str = "INVALID_HOP";

/// Why a whole batch was refused before any hop was looked at (400, or
/// 422 for a hop's field).
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
    /// A hop's field the central would store unchecked (422).
    #[error("the hop of seq {seq}: {error}")]
    Hop { seq: i64, error: HopError },
}

/// Why a hop's field is refused: the same rules as the site's for what
/// it takes from outside, so a central stores and serves nothing a site
/// would not.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HopError {
    #[error(transparent)]
    Ident(#[from] crate::ident::IdentError),
    #[error("kind must be one of {}", kinds::ALL.join(", "))]
    Kind,
    #[error("mode must be one of {}", Mode::ALL.map(Mode::as_str).join(", "))]
    Mode,
    #[error("source_mode must be one of {}", SourceMode::ALL.map(SourceMode::as_str).join(", "))]
    SourceMode,
    #[error(
        "{0} must be an instant within {years} years of the central's clock, in Unix milliseconds",
        years = CENTRAL_HOP_INSTANT_WINDOW_MS / (366 * 24 * 3600 * 1000)
    )]
    Instant(&'static str),
    #[error("device_clock_skew_ms must be within {MAX_CLOCK_SKEW_MS} ms either way")]
    Skew,
    #[error("facts must be at most {CENTRAL_HOP_FACTS_BYTES_MAX} bytes of JSON")]
    Facts,
}

/// Checks every field of `hop` a central stores, at `now`.
pub fn check_hop(hop: &SiteHop, now: UnixMs) -> Result<(), HopError> {
    use crate::ident::check as ident;
    ident("key", &hop.key)?;
    ident("device_id", &hop.device_id)?;
    if let Some(session_id) = &hop.session_id {
        ident("session_id", session_id)?;
    }
    ident("command", &hop.command)?;
    if !kinds::ALL.contains(&hop.kind.as_str()) {
        return Err(HopError::Kind);
    }
    if let Some(mode) = &hop.mode {
        if !Mode::ALL.iter().any(|known| known.as_str() == mode) {
            return Err(HopError::Mode);
        }
    }
    for (field, bin) in [("from_bin", &hop.from_bin), ("to_bin", &hop.to_bin)] {
        if let Some(bin) = bin {
            ident(field, bin)?;
        }
    }
    if !SourceMode::ALL
        .iter()
        .any(|known| known.as_str() == hop.source_mode)
    {
        return Err(HopError::SourceMode);
    }
    for (field, at) in [
        ("occurred_at", hop.occurred_at),
        ("booked_at", hop.booked_at),
        ("recorded_at", hop.recorded_at),
    ] {
        if at.abs_diff(now.0) > CENTRAL_HOP_INSTANT_WINDOW_MS as u64 {
            return Err(HopError::Instant(field));
        }
    }
    if hop.device_clock_skew_ms.unsigned_abs() > MAX_CLOCK_SKEW_MS as u64 {
        return Err(HopError::Skew);
    }
    let facts = serde_json::to_vec(&hop.facts).map_or(usize::MAX, |bytes| bytes.len());
    if facts > CENTRAL_HOP_FACTS_BYTES_MAX {
        return Err(HopError::Facts);
    }
    Ok(())
}

/// Checks what can be refused of a batch as a whole, at `now`.
pub fn check(batch: &CentralBatch, now: UnixMs) -> Result<(), BatchError> {
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
    for hop in &batch.hops {
        check_hop(&hop.hop, now).map_err(|error| BatchError::Hop {
            seq: hop.seq,
            error,
        })?;
    }
    if let Some(summary) = &batch.summary {
        summary.check()?;
    }
    Ok(())
}

/// Which secret signed a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signer {
    /// The site's own secret (`central add-site`).
    OwnSecret,
    /// The central's shared `--central-secret`.
    SharedSecret,
}

/// Takes a checked batch at `now`: one result per hop, in batch order, and
/// where the site's stream stands after it.
pub fn ingest(
    conn: &mut Connection,
    batch: &CentralBatch,
    signer: Signer,
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
        let (results, stream) = ingest_in(&tx, batch, &hashed, signer, now)?;
        tx.commit()?;
        Ok(CentralBatchResponse {
            results,
            stream: Some(stream),
        })
    })
}

/// Begins the site's new outbox epoch, or refuses a batch of an old one.
fn epoch(
    conn: &Connection,
    batch: &CentralBatch,
    held: i64,
    last_seq: i64,
    signer: Signer,
    now: UnixMs,
) -> Result<(), LedgerError> {
    if batch.epoch < held {
        return Err(LedgerError::Refused(Refusal::new(
            409,
            EPOCH_STALE,
            format!(
                "this batch is of outbox epoch {}, but site {:?} began epoch {held} when it was \
                 restored: it comes from a copy of the site from before that restore",
                batch.epoch, batch.site_id
            ),
        )));
    }
    if batch.epoch == held {
        return Ok(());
    }
    if signer != Signer::OwnSecret {
        return Err(LedgerError::Refused(Refusal::new(
            403,
            EPOCH_NEEDS_OWN_SECRET,
            format!(
                "site {:?} begins a new outbox epoch (it was restored from a backup): only its own \
                 secret may do that; give it one with `stockhop-site central add-site`",
                batch.site_id
            ),
        )));
    }
    conn.execute(
        "UPDATE central_sites SET epoch = ?2, epoch_started_at = ?3, epoch_after_seq = ?4
         WHERE site_id = ?1",
        params![batch.site_id, batch.epoch, now.0, last_seq],
    )?;
    tracing::warn!(
        site_id = %batch.site_id.escape_debug(),
        epoch = batch.epoch,
        previous = held,
        after_seq = last_seq,
        "a site restored from a backup began a new outbox epoch: its stream goes on after the last seq held"
    );
    Ok(())
}

fn ingest_in(
    conn: &Connection,
    batch: &CentralBatch,
    hashed: &[(String, String)],
    signer: Signer,
    now: UnixMs,
) -> Result<(Vec<CentralResult>, StreamPosition), LedgerError> {
    let (mut last_seq, held_epoch): (i64, i64) = conn.query_row(
        "INSERT INTO central_sites (site_id, first_seen_at, last_seen_at) VALUES (?1, ?2, ?2)
         ON CONFLICT (site_id) DO UPDATE SET last_seen_at = excluded.last_seen_at
         RETURNING last_seq, epoch",
        params![batch.site_id, now.0],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )?;
    epoch(conn, batch, held_epoch, last_seq, signer, now)?;
    let first_seq = last_seq;
    let mut received = 0_i64;
    let mut results = Vec::with_capacity(batch.hops.len());
    for (hop, (canonical, sha256)) in batch.hops.iter().zip(hashed) {
        let refused = |status: u16, code: &'static str, message: String| CentralResult {
            seq: hop.seq,
            key: hop.key.clone(),
            status,
            replayed: false,
            code: Some(code.to_owned()),
            message: Some(message),
        };
        let taken = |replayed: bool| CentralResult {
            seq: hop.seq,
            key: hop.key.clone(),
            status: 200,
            replayed,
            code: None,
            message: None,
        };
        let held: Option<String> = if hop.key == hop.hop.key {
            conn.prepare_cached(
                "SELECT hop_sha256 FROM central_hops WHERE site_id = ?1 AND key = ?2",
            )?
            .query_row(params![batch.site_id, hop.key], |row| row.get(0))
            .optional()?
        } else {
            None
        };
        let result = if hop.key != hop.hop.key {
            refused(
                422,
                KEY_MISMATCH,
                "the hop's key is not the key it is sent under".to_owned(),
            )
        } else if let Some(held) = held {
            if held == *sha256 {
                taken(true)
            } else {
                refused(
                    409,
                    wire_codes::IDEMPOTENCY_KEY_REUSED,
                    "this site sent another hop under this key".to_owned(),
                )
            }
        } else if hop.seq <= last_seq {
            refused(
                409,
                SEQ_OUT_OF_ORDER,
                format!(
                    "seq {} is not after {last_seq}, the last this central holds for the site: \
                     the site goes on after it",
                    hop.seq
                ),
            )
        } else if hop.seq > last_seq + 1 {
            refused(
                409,
                SEQ_GAP,
                format!(
                    "seq {} jumps ahead of {last_seq}, the last this central holds for the site: \
                     the next is {}",
                    hop.seq,
                    last_seq + 1
                ),
            )
        } else {
            insert(conn, &batch.site_id, hop, canonical, sha256, now)?;
            received += 1;
            taken(false)
        };
        // A hop answered for good moves the stream past it when it is the
        // next; a seq refusal never moves it.
        let seq_refusal = matches!(result.code.as_deref(), Some(SEQ_OUT_OF_ORDER | SEQ_GAP));
        if !seq_refusal && hop.seq == last_seq + 1 {
            last_seq = hop.seq;
        }
        results.push(result);
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
    if last_seq != first_seq || received > 0 {
        conn.execute(
            "UPDATE central_sites SET last_seq = ?2, hops_received = hops_received + ?3
             WHERE site_id = ?1",
            params![batch.site_id, last_seq, received],
        )?;
    }
    let stream = StreamPosition {
        epoch: held_epoch.max(batch.epoch),
        last_seq,
    };
    Ok((results, stream))
}

/// Moves the stream of `site_id` past `seq` when it is the next: a batch
/// of that one hop was refused as a whole for what the hop holds (a site
/// sends the hops of a refused batch again one at a time, and drops the
/// one refused), so the hops behind it are not a gap. Nothing of the hop
/// is stored.
pub fn refused_alone(
    conn: &mut Connection,
    site_id: &str,
    seq: i64,
    now: UnixMs,
) -> Result<(), LedgerError> {
    retry_conflicts(|| {
        conn.execute(
            "INSERT INTO central_sites (site_id, first_seen_at, last_seen_at, last_seq)
             VALUES (?1, ?3, ?3, CASE WHEN CAST(?2 AS BIGINT) = 1 THEN 1 ELSE 0 END)
             ON CONFLICT (site_id) DO UPDATE SET last_seen_at = excluded.last_seen_at,
                 last_seq = CASE WHEN central_sites.last_seq + 1 = CAST(?2 AS BIGINT)
                                 THEN CAST(?2 AS BIGINT) ELSE central_sites.last_seq END",
            params![site_id, seq, now.0],
        )?;
        Ok(())
    })
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
    /// The site's outbox epoch: 0 until it is restored from a backup, a
    /// new one at each restore.
    pub epoch: i64,
    /// When the central took the site's current epoch (null: never
    /// restored).
    #[schema(value_type = Option<String>, format = DateTime)]
    pub epoch_started_at: Option<UnixMs>,
    /// The seq the site's stream went on after at its current epoch.
    pub epoch_after_seq: Option<i64>,
    /// The latest summary the site sent of how it is doing; null until
    /// one arrives (a site of an older release sends none).
    pub summary: Option<SiteSummary>,
}

/// Every site the central has heard from, by id.
pub fn sites(conn: &Connection) -> crate::store::sql::Result<Vec<CentralSite>> {
    let mut select = conn.prepare_cached(
        "SELECT site_id, first_seen_at, last_seen_at, hops_received, last_seq, summary,
                epoch, epoch_started_at, epoch_after_seq
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
            epoch: row.get(6)?,
            epoch_started_at: row.get::<_, Option<i64>>(7)?.map(UnixMs),
            epoch_after_seq: row.get(8)?,
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
            epoch: 0,
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
            assert!(check(&with(10, 4), UnixMs(10)).is_ok());
            ingest(conn, &with(10, 4), Signer::OwnSecret, UnixMs(11)).unwrap();
            assert_eq!(sites(conn).unwrap()[0].summary, Some(summary(10, 4)));
            ingest(conn, &with(9, 7), Signer::OwnSecret, UnixMs(12)).unwrap();
            assert_eq!(sites(conn).unwrap()[0].summary, Some(summary(10, 4)));
            ingest(conn, &batch(Vec::new()), Signer::OwnSecret, UnixMs(13)).unwrap();
            let site = &sites(conn).unwrap()[0];
            assert_eq!(
                (site.last_seen_at, &site.summary),
                (UnixMs(13), &Some(summary(10, 4)))
            );
            ingest(conn, &with(20, 0), Signer::OwnSecret, UnixMs(21)).unwrap();
            assert_eq!(sites(conn).unwrap()[0].summary, Some(summary(20, 0)));
        });
    }

    #[test]
    fn a_summary_with_a_negative_count_or_a_url_that_is_not_the_web_is_refused() {
        let mut bad = summary(1, -1);
        let refused = |s: &SiteSummary| {
            check(
                &CentralBatch {
                    summary: Some(s.clone()),
                    ..batch(Vec::new())
                },
                UnixMs(1),
            )
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
            check(&batch(vec![hop(1, "a", "B"), hop(2, "b", "B")]), UnixMs(1)),
            Ok(())
        );
        assert_eq!(
            check(&batch(vec![hop(2, "a", "B"), hop(2, "b", "B")]), UnixMs(1)),
            Err(BatchError::Order)
        );
        assert_eq!(
            check(&batch(vec![hop(0, "a", "B")]), UnixMs(1)),
            Err(BatchError::Order)
        );
        let mut nameless = batch(Vec::new());
        nameless.site_id.clear();
        assert_eq!(
            check(&nameless, UnixMs(1)),
            Err(BatchError::SiteId(crate::ident::IdentError::Length(
                "site_id"
            )))
        );
    }

    #[test]
    fn a_hop_with_markup_a_kind_or_mode_off_the_list_a_wild_instant_or_huge_facts_is_refused_naming_the_field(
    ) {
        let now = UnixMs(1_800_000_000_000);
        let refused = |change: &dyn Fn(&mut SiteHop)| {
            let mut bad = hop(7, "k", "B");
            bad.hop.occurred_at = now.0;
            bad.hop.booked_at = now.0;
            bad.hop.recorded_at = now.0;
            change(&mut bad.hop);
            match check(&batch(vec![bad]), now) {
                Err(BatchError::Hop { seq: 7, error }) => error.to_string(),
                other => panic!("{other:?}"),
            }
        };
        assert!(refused(&|h| h.device_id = "<img src=x>".into()).starts_with("device_id must"));
        assert!(refused(&|h| h.kind = "<b>X</b>".into()).starts_with("kind must be one of"));
        assert!(refused(&|h| h.source_mode = "bogus".into()).starts_with("source_mode must"));
        assert!(refused(&|h| h.mode = Some("mode\u{7}".into())).starts_with("mode must"));
        assert!(refused(&|h| h.to_bin = Some("LA-\u{E0041}".into())).contains("U+E0041"));
        assert!(
            refused(&|h| h.occurred_at = i64::MAX).starts_with("occurred_at must be an instant")
        );
        assert!(refused(&|h| h.recorded_at = 0).starts_with("recorded_at must be an instant"));
        assert!(refused(&|h| h.device_clock_skew_ms = i64::MIN).starts_with("device_clock_skew_ms"));
        let big = "x".repeat(900 * 1024);
        assert!(refused(&|h| h.facts = serde_json::json!({ "note": big }))
            .starts_with("facts must be at most"));
        let mut good = hop(7, "k", "B");
        good.hop.occurred_at = now.0 - 3_600_000;
        good.hop.booked_at = now.0;
        good.hop.recorded_at = now.0;
        good.hop.mode = Some("put_away".into());
        assert_eq!(check(&batch(vec![good]), now), Ok(()));
    }

    #[test]
    fn each_hop_is_applied_once_replayed_after_and_refused_with_another_body_or_a_late_seq() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path()).unwrap();
        db.call_blocking(|conn| {
            let statuses = |conn: &mut Connection, hops| {
                ingest(conn, &batch(hops), Signer::OwnSecret, UnixMs(5))
                    .unwrap()
                    .results
                    .into_iter()
                    .map(|r| (r.status, r.replayed, r.code))
                    .collect::<Vec<_>>()
            };
            let first = statuses(conn, vec![hop(1, "a", "B"), hop(2, "b", "B")]);
            assert_eq!(first, [(200, false, None), (200, false, None)]);
            let again = statuses(
                conn,
                vec![hop(1, "a", "B"), hop(2, "b", "X"), hop(3, "c", "B")],
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
            assert_eq!((sites[0].hops_received, sites[0].last_seq), (3, 3));
        });
    }

    #[test]
    fn a_seq_jumping_ahead_is_refused_as_a_gap_and_never_becomes_the_sites_floor() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path()).unwrap();
        db.call_blocking(|conn| {
            let send = |conn: &mut Connection, hops| {
                let answer = ingest(conn, &batch(hops), Signer::OwnSecret, UnixMs(5)).unwrap();
                let codes: Vec<_> = answer
                    .results
                    .into_iter()
                    .map(|r| (r.status, r.code))
                    .collect();
                (codes, answer.stream.unwrap().last_seq)
            };
            assert_eq!(send(conn, vec![hop(1, "a", "B")]), (vec![(200, None)], 1));
            assert_eq!(
                send(conn, vec![hop(1001, "forged", "B")]),
                (vec![(409, Some(SEQ_GAP.into()))], 1),
                "a jump is refused and the stream stays where it was"
            );
            assert_eq!(
                send(conn, vec![hop(2, "real", "B")]),
                (vec![(200, None)], 2),
                "the site's next real hop is taken"
            );
            // A hop refused for good at the next seq moves the stream past it.
            let mut mismatched = hop(3, "k", "B");
            mismatched.hop.key = "other".into();
            assert_eq!(
                send(conn, vec![mismatched, hop(4, "after", "B")]),
                (vec![(422, Some(KEY_MISMATCH.into())), (200, None)], 4)
            );
            // Asking where the stream stands is a batch without hops.
            assert_eq!(send(conn, Vec::new()), (vec![], 4));
        });
    }

    #[test]
    fn a_new_outbox_epoch_is_taken_only_with_the_sites_own_secret_and_an_older_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path()).unwrap();
        db.call_blocking(|conn| {
            ingest(
                conn,
                &batch(vec![hop(1, "a", "B")]),
                Signer::SharedSecret,
                UnixMs(5),
            )
            .unwrap();
            let restored = |epoch| CentralBatch {
                epoch,
                ..batch(vec![hop(2, "b", "B")])
            };
            let refused = |result: Result<CentralBatchResponse, LedgerError>| match result {
                Err(LedgerError::Refused(refusal)) => (refusal.status, refusal.code),
                other => panic!("{other:?}"),
            };
            assert_eq!(
                refused(ingest(conn, &restored(7), Signer::SharedSecret, UnixMs(6))),
                (403, EPOCH_NEEDS_OWN_SECRET)
            );
            assert_eq!(sites(conn).unwrap()[0].epoch, 0, "nothing changed");
            let answer = ingest(conn, &restored(7), Signer::OwnSecret, UnixMs(8)).unwrap();
            assert_eq!(answer.results[0].status, 200);
            assert_eq!(
                answer.stream,
                Some(StreamPosition {
                    epoch: 7,
                    last_seq: 2
                })
            );
            let site = &sites(conn).unwrap()[0];
            assert_eq!(
                (site.epoch, site.epoch_started_at, site.epoch_after_seq),
                (7, Some(UnixMs(8)), Some(1))
            );
            assert_eq!(
                refused(ingest(
                    conn,
                    &batch(vec![hop(3, "c", "B")]),
                    Signer::OwnSecret,
                    UnixMs(9)
                )),
                (409, EPOCH_STALE),
                "a copy of the site from before its restore"
            );
        });
    }
}
