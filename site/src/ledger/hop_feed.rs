//! The hop feed: the hop ledger read in commit order, for a WMS or ERP
//! that must see every stock move once (`GET /v1/hops`, `GET /v1/hops.csv`).
//!
//! A page is every hop after a cursor, by `hop_id`. Ids follow commit
//! order on both engines: SQLite's one writer commits a transaction at a
//! time, and on PostgreSQL a hop takes its id under a lock held to its
//! commit (migration 0011). So a hop a reader has not seen always has an
//! id above the reader's cursor: paging to the end and resuming later from
//! `next` skips none and repeats none, whatever writers run meanwhile.
//! A central pages the hops every site sent it the same way
//! ([`crate::central::feed`]).

use serde::Serialize;
use stockhop::time::UnixMs;

use crate::store::sql::{Connection, Row};

/// Most hops one page holds: a page is one short read of the ledger.
pub const MAX_FEED_HOPS: usize = 1_000;
/// Hops a page holds when the request names no `limit`.
pub const DEFAULT_FEED_HOPS: usize = 100;
/// Hop ids one read of a CSV export scans for hops in its period: the
/// export walks the ledger in steps this long, so no read holds the
/// database long however many hops fall outside the period.
pub const CSV_SCAN_IDS: i64 = 5_000;

/// One hop as the feed shows it.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct FeedHop {
    /// Its place in the feed (the site's hop id; a central's receipt
    /// number).
    pub hop_id: i64,
    /// The site it happened at (on a central).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub site_id: Option<String>,
    /// The idempotency key of the item or record that made it.
    pub key: String,
    pub kind: String,
    pub command: String,
    pub mode: Option<String>,
    pub device_id: String,
    pub session_id: Option<String>,
    pub client_seq: Option<i64>,
    pub operator_id: Option<String>,
    pub epc: Option<String>,
    /// The bin the unit was put in or counted in (else the one it left).
    pub bin: Option<String>,
    pub from_bin: Option<String>,
    /// The bin the unit is in after the hop; null when it is in none (a
    /// unit that left its bin) or the hop names no unit. Beside `bin`,
    /// which names the bin it left then.
    pub to_bin: Option<String>,
    /// A count's variance that the hop books on approval: `missing` or
    /// `unexpected` (an `ADJUST` of `count_approve`); null otherwise.
    pub variance: Option<String>,
    pub grn: Option<String>,
    pub manifest: Option<String>,
    pub count_id: Option<String>,
    /// The SKU the hop moves: its unit's, or the GRN line's that an
    /// `ADJUST` of a resolved GRN books.
    pub sku: Option<String>,
    /// The quantity a hop of no single unit books: for an `ADJUST` of a
    /// resolved GRN, received − expected on its line (negative when
    /// short); null for a hop of one unit.
    pub quantity: Option<i64>,
    #[schema(value_type = String, format = DateTime)]
    pub occurred_at: UnixMs,
    #[schema(value_type = String, format = DateTime)]
    pub booked_at: UnixMs,
    #[schema(value_type = String, format = DateTime)]
    pub recorded_at: UnixMs,
    /// `live`, `sim` or `terminal`.
    pub source_mode: String,
    /// The hop this one compensates (an undo).
    pub compensates: Option<i64>,
    /// The GS1 keys of the hop's unit (its GTIN and serial, its lot and
    /// its expiry `YYYY-MM-DD`) as the site knows them, else as the scan
    /// gave them (a receive of a GS1 label); null when unknown.
    pub gtin: Option<String>,
    pub serial: Option<String>,
    pub lot: Option<String>,
    pub expiry: Option<String>,
}

/// A page of the feed.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct FeedPage {
    pub hops: Vec<FeedHop>,
    /// Pass it back as `after`: the next page, or later the hops committed
    /// since. The cursor given when the page is empty.
    pub next: String,
}

/// Reads a cursor: the decimal id a page answered; none is the start.
pub fn parse_cursor(text: Option<&str>) -> Option<i64> {
    match text {
        None | Some("") => Some(0),
        Some(text) => text.parse().ok().filter(|id: &i64| *id >= 0),
    }
}

impl FeedPage {
    /// A page of `hops` read after `after`.
    pub fn new(hops: Vec<FeedHop>, after: i64) -> FeedPage {
        let next = hops.last().map_or(after, |hop| hop.hop_id).to_string();
        FeedPage { hops, next }
    }
}

const SELECT: &str = "SELECT h.hop_id, h.key, h.kind, h.command, h.mode, h.device_id, h.session_id,
        h.client_seq, s.operator_id, u.epc, h.from_bin, h.to_bin, h.facts, h.occurred_at,
        h.booked_at, h.recorded_at, h.source_mode, h.compensates, u.sku,
        u.gtin, u.serial, u.lot, u.expiry, s.context
    FROM hops h
    LEFT JOIN sessions s ON s.session_id = h.session_id
    LEFT JOIN units u ON u.unit_id = h.unit_id";

/// The site's hops after `after`, at most `limit` (up to
/// [`MAX_FEED_HOPS`]), in commit order.
pub fn page(conn: &Connection, after: i64, limit: usize) -> crate::store::sql::Result<FeedPage> {
    let limit = limit.clamp(1, MAX_FEED_HOPS) as i64;
    let hops = conn
        .prepare_cached(&format!(
            "{SELECT} WHERE h.hop_id > ?1 ORDER BY h.hop_id LIMIT ?2"
        ))?
        .query_map(crate::params![after, limit], from_row)?
        .collect::<crate::store::sql::Result<Vec<_>>>()?;
    Ok(FeedPage::new(hops, after))
}

/// The id of the site's last hop; 0 with none.
pub fn last_id(conn: &Connection) -> crate::store::sql::Result<i64> {
    conn.prepare_cached("SELECT coalesce(max(hop_id), 0) FROM hops")?
        .query_row([], |row| row.get(0))
}

/// The answer to a cursor `after` past the feed's `last` hop id. A reader
/// only ever holds a cursor a page gave it, so one past the end means the
/// ledger lost hops it had shown (a restore from an older backup), and
/// the ids after `last` will name other hops: answering an empty page
/// would have the reader skip them as if caught up.
pub fn cursor_ahead(after: i64, last: i64) -> super::Refusal {
    super::Refusal::new(
        409,
        super::codes::CURSOR_AHEAD,
        format!(
            "the cursor {after} is past the last hop, {last}: a cursor is a `next` this feed \
             gave; if it was, the ledger was restored from an earlier backup and hop ids after \
             {last} will be given out again; resume from a cursor no later than {last}"
        ),
    )
}

/// One step of a CSV export: the hops with ids in `(after, after +
/// CSV_SCAN_IDS]` recorded in `[from, to)`, and whether hops past the step
/// exist.
pub fn scan(
    conn: &Connection,
    after: i64,
    from: UnixMs,
    to: UnixMs,
) -> crate::store::sql::Result<(Vec<FeedHop>, bool)> {
    let hops = conn
        .prepare_cached(&format!(
            "{SELECT} WHERE h.hop_id > ?1 AND h.hop_id <= ?2
                 AND h.recorded_at >= ?3 AND h.recorded_at < ?4
             ORDER BY h.hop_id"
        ))?
        .query_map(
            crate::params![after, after + CSV_SCAN_IDS, from.0, to.0],
            from_row,
        )?
        .collect::<crate::store::sql::Result<Vec<_>>>()?;
    let more = conn
        .prepare_cached("SELECT 1 FROM hops WHERE hop_id > ?1 LIMIT 1")?
        .exists([after + CSV_SCAN_IDS])?;
    Ok((hops, more))
}

fn from_row(row: &Row<'_>) -> crate::store::sql::Result<FeedHop> {
    let facts: String = row.get(12)?;
    let facts: serde_json::Value = serde_json::from_str(&facts)
        .map_err(|err| crate::store::sql::Error::conversion(12, err.to_string()))?;
    let from_bin: Option<String> = row.get(10)?;
    let to_bin: Option<String> = row.get(11)?;
    let epc: Option<String> = row.get(9)?;
    // What the hop's session was opened on (a receive's GRN, a dispatch's
    // manifest, a count): a scan names it in its session's context, not in
    // each scan, and a reader of the feed needs it on every hop.
    let context: serde_json::Value = row
        .get::<_, Option<String>>(23)?
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default();
    let named = |name: &str| fact(&facts, name).or_else(|| fact(&context, name));
    Ok(FeedHop {
        hop_id: row.get(0)?,
        site_id: None,
        key: row.get(1)?,
        kind: row.get(2)?,
        command: row.get(3)?,
        mode: row.get(4)?,
        device_id: row.get(5)?,
        session_id: row.get(6)?,
        client_seq: row.get(7)?,
        operator_id: row.get(8)?,
        epc: epc.or_else(|| fact(&facts, "epc")),
        bin: to_bin.clone().or_else(|| from_bin.clone()),
        from_bin,
        to_bin,
        variance: fact(&facts, "variance"),
        grn: named("grn"),
        manifest: named("manifest"),
        count_id: named("count_id"),
        sku: row
            .get::<_, Option<String>>(18)?
            .or_else(|| fact(&facts, "sku")),
        quantity: quantity(&facts),
        occurred_at: UnixMs(row.get(13)?),
        booked_at: UnixMs(row.get(14)?),
        recorded_at: UnixMs(row.get(15)?),
        source_mode: row.get(16)?,
        compensates: row.get(17)?,
        gtin: row
            .get::<_, Option<String>>(19)?
            .or_else(|| fact(&facts, "gtin")),
        serial: row.get(20)?,
        lot: row
            .get::<_, Option<String>>(21)?
            .or_else(|| fact(&facts, "lot")),
        expiry: row
            .get::<_, Option<String>>(22)?
            .or_else(|| fact(&facts, "expiry")),
    })
}

/// A text field of a hop's facts (the item's body as the device sent it).
pub fn fact(facts: &serde_json::Value, name: &str) -> Option<String> {
    facts.get(name)?.as_str().map(str::to_owned)
}

/// The quantity a hop's facts book (an `ADJUST` of a resolved GRN), as a
/// whole number.
pub fn quantity(facts: &serde_json::Value) -> Option<i64> {
    facts.get("quantity")?.as_i64()
}

/// The CSV export's columns, in order.
pub const CSV_COLUMNS: [&str; 29] = [
    "hop_id",
    "site_id",
    "key",
    "kind",
    "command",
    "mode",
    "device_id",
    "session_id",
    "client_seq",
    "operator_id",
    "epc",
    "bin",
    "from_bin",
    "grn",
    "manifest",
    "count_id",
    "occurred_at",
    "booked_at",
    "recorded_at",
    "source_mode",
    "compensates",
    "to_bin",
    "variance",
    "sku",
    "quantity",
    "gtin",
    "serial",
    "lot",
    "expiry",
];

/// A hop as a CSV record in [`CSV_COLUMNS`] order, every cell inert.
pub fn csv_record(hop: &FeedHop) -> [String; 29] {
    let text = |value: &Option<String>| inert(value.as_deref().unwrap_or_default());
    let number = |value: Option<i64>| value.map(|n| n.to_string()).unwrap_or_default();
    [
        hop.hop_id.to_string(),
        text(&hop.site_id),
        inert(&hop.key),
        inert(&hop.kind),
        inert(&hop.command),
        text(&hop.mode),
        inert(&hop.device_id),
        text(&hop.session_id),
        number(hop.client_seq),
        text(&hop.operator_id),
        text(&hop.epc),
        text(&hop.bin),
        text(&hop.from_bin),
        text(&hop.grn),
        text(&hop.manifest),
        text(&hop.count_id),
        hop.occurred_at.to_string(),
        hop.booked_at.to_string(),
        hop.recorded_at.to_string(),
        inert(&hop.source_mode),
        number(hop.compensates),
        text(&hop.to_bin),
        text(&hop.variance),
        text(&hop.sku),
        // Inert like every cell: a short line's `-4` is written `'-4`, as
        // the rule for a cell beginning with `-` has it.
        inert(&number(hop.quantity)),
        text(&hop.gtin),
        text(&hop.serial),
        text(&hop.lot),
        text(&hop.expiry),
    ]
}

/// A cell a spreadsheet will not run: text that begins with `=`, `+`, `-`
/// or `@` (or a tab or carriage return, which some read past to one) gets
/// a leading `'`, which shows the text as it is.
pub fn inert(cell: &str) -> String {
    match cell.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r') => format!("'{cell}"),
        _ => cell.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_that_a_spreadsheet_would_run_are_made_inert() {
        assert_eq!(inert("=HYPERLINK(\"x\")"), "'=HYPERLINK(\"x\")");
        assert_eq!(inert("+1"), "'+1");
        assert_eq!(inert("-2+3"), "'-2+3");
        assert_eq!(inert("@SUM(A1)"), "'@SUM(A1)");
        assert_eq!(inert("\tx"), "'\tx");
        assert_eq!(inert("B-1"), "B-1");
        assert_eq!(inert(""), "");
    }

    #[test]
    fn a_cursor_is_a_hop_id_and_none_is_the_start() {
        assert_eq!(parse_cursor(None), Some(0));
        assert_eq!(parse_cursor(Some("17")), Some(17));
        assert_eq!(parse_cursor(Some("-1")), None);
        assert_eq!(parse_cursor(Some("x")), None);
    }
}
