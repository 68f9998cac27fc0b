//! The hop feed on a central: every site's hops in the order the central
//! committed them (`received_id`, taken in commit order on both engines as
//! a site's `hop_id` is, migration 0011), each with its site. The same
//! pages and cursor as a site's ([`crate::ledger::hop_feed`]); a site's
//! hop carries no operator, so `operator_id` is empty here.

use stockhop::time::UnixMs;

use super::wire::SiteHop;
use crate::ledger::hop_feed::{fact, FeedHop, FeedPage, CSV_SCAN_IDS, MAX_FEED_HOPS};
use crate::store::sql::{Connection, Row};

/// Every site's hops after `after`, at most `limit`, in commit order.
pub fn page(conn: &Connection, after: i64, limit: usize) -> crate::store::sql::Result<FeedPage> {
    let limit = limit.clamp(1, MAX_FEED_HOPS) as i64;
    let hops = conn
        .prepare_cached(
            "SELECT received_id, site_id, hop FROM central_hops
             WHERE received_id > ?1 ORDER BY received_id LIMIT ?2",
        )?
        .query_map(crate::params![after, limit], from_row)?
        .collect::<crate::store::sql::Result<Vec<_>>>()?;
    Ok(FeedPage::new(hops, after))
}

/// The receipt number of the last hop the central took; 0 with none.
pub fn last_id(conn: &Connection) -> crate::store::sql::Result<i64> {
    conn.prepare_cached("SELECT coalesce(max(received_id), 0) FROM central_hops")?
        .query_row([], |row| row.get(0))
}

/// One step of a CSV export, as [`crate::ledger::hop_feed::scan`].
pub fn scan(
    conn: &Connection,
    after: i64,
    from: UnixMs,
    to: UnixMs,
) -> crate::store::sql::Result<(Vec<FeedHop>, bool)> {
    let hops = conn
        .prepare_cached(
            "SELECT received_id, site_id, hop FROM central_hops
             WHERE received_id > ?1 AND received_id <= ?2 ORDER BY received_id",
        )?
        .query_map(crate::params![after, after + CSV_SCAN_IDS], from_row)?
        .filter(|hop| {
            hop.as_ref()
                .map_or(true, |hop| hop.recorded_at >= from && hop.recorded_at < to)
        })
        .collect::<crate::store::sql::Result<Vec<_>>>()?;
    let more = conn
        .prepare_cached("SELECT 1 FROM central_hops WHERE received_id > ?1 LIMIT 1")?
        .exists([after + CSV_SCAN_IDS])?;
    Ok((hops, more))
}

fn from_row(row: &Row<'_>) -> crate::store::sql::Result<FeedHop> {
    let text: String = row.get(2)?;
    let hop: SiteHop = serde_json::from_str(&text)
        .map_err(|err| crate::store::sql::Error::conversion(2, err.to_string()))?;
    Ok(FeedHop {
        hop_id: row.get(0)?,
        site_id: Some(row.get(1)?),
        epc: fact(&hop.facts, "epc"),
        bin: hop.to_bin.clone().or_else(|| hop.from_bin.clone()),
        grn: fact(&hop.facts, "grn"),
        manifest: fact(&hop.facts, "manifest"),
        count_id: fact(&hop.facts, "count_id"),
        variance: fact(&hop.facts, "variance"),
        sku: fact(&hop.facts, "sku"),
        quantity: crate::ledger::hop_feed::quantity(&hop.facts),
        to_bin: hop.to_bin.clone(),
        key: hop.key,
        kind: hop.kind,
        command: hop.command,
        mode: hop.mode,
        device_id: hop.device_id,
        session_id: hop.session_id,
        client_seq: hop.client_seq,
        operator_id: None,
        from_bin: hop.from_bin,
        occurred_at: UnixMs(hop.occurred_at),
        booked_at: UnixMs(hop.booked_at),
        recorded_at: UnixMs(hop.recorded_at),
        source_mode: hop.source_mode,
        compensates: hop.compensates,
        // A central keeps no units: the keys a scan gave (a receive of a
        // GS1 label).
        gtin: fact(&hop.facts, "gtin"),
        serial: None,
        lot: fact(&hop.facts, "lot"),
        expiry: fact(&hop.facts, "expiry"),
    })
}
