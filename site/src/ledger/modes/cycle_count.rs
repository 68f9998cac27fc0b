//! Cycle count: the operator reads every tag in a zone against a count a
//! supervisor opened. A scan is never rejected for its tag (an unknown tag
//! is a fact too) and changes no unit: it records a CYCLE_COUNT hop and,
//! while the count is open, what was seen where. Closing the session
//! closes the count; its variance (`missing`: expected, not seen;
//! `unexpected`: seen, not expected) posts nothing until `count approve`
//! moves missing units to `missing` and unexpected ones into the bin they
//! were counted in, each as an ADJUST hop that bumps the unit's version.

use crate::store::sql::Connection;
use serde::Serialize;
use stockhop::time::UnixMs;
use stockhop::wire::Mode;

use super::{derived_key, reasons, ScanCtx, Scanned, Undo};
use crate::ledger::bins;
use crate::ledger::counts::{self, states};
use crate::ledger::hops::{self, kinds, NewHop, SourceMode};
use crate::ledger::units::{self, UnitFacts, UnitState};
use crate::ledger::{codes, periods, savepoint, LedgerError, Refusal};

/// The device id ADJUST hops are recorded under: the site itself, on a
/// supervisor's approval.
pub const SITE_ACTOR: &str = "site";

/// Whether a count session may open for `count_id`.
pub fn open_refusal(
    conn: &Connection,
    count_id: Option<&str>,
) -> crate::store::sql::Result<Option<&'static str>> {
    let count = match count_id {
        Some(count_id) => counts::find(conn, count_id)?,
        None => None,
    };
    let open = count.is_some_and(|count| count.state == states::OPEN);
    Ok((!open).then_some(reasons::COUNT_NOT_OPEN))
}

pub fn scan(conn: &Connection, ctx: &ScanCtx<'_>) -> Result<Scanned, LedgerError> {
    let body = &ctx.body;
    let Some(count_id) = ctx.context_value("count_id", body.count_id.as_deref())? else {
        return Ok(Scanned::Rejected(reasons::COUNT_NOT_OPEN));
    };
    // Checked on arrival: a count scan names its tag.
    let epc = body.epc.as_deref().unwrap_or_default();
    // A count closed by another of its sessions keeps the facts as hops but
    // counts nothing more: its variance stands as the supervisor sees it.
    let open = counts::find(conn, &count_id)?.is_some_and(|count| count.state == states::OPEN);
    if open {
        counts::see(conn, &count_id, epc, body.bin.as_deref())?;
    }
    let unit = units::find(conn, Some(epc), None)?;
    let bin = unit.as_ref().and_then(|unit| unit.bin.as_deref());
    let version = unit.as_ref().map(|unit| unit.version);
    let hop_id = ctx.append(conn, kinds::CYCLE_COUNT, unit.as_ref(), bin, version)?;
    Ok(Scanned::Applied(vec![hop_id]))
}

/// What closing a count session computes: the count is closed, and its
/// variance is what `GET /v1/counts/{id}` shows from then on.
pub fn close(conn: &Connection, count_id: &str, now: UnixMs) -> crate::store::sql::Result<()> {
    counts::set_state(conn, count_id, states::OPEN, states::CLOSED, now).map(drop)
}

/// `stockhop-site count open`: a count for a zone of a location, with the
/// snapshot of the units expected there ([`open_place`] without a bin).
pub fn open(
    conn: &Connection,
    location: &str,
    zone: &str,
    now: UnixMs,
) -> Result<String, LedgerError> {
    open_place(conn, location, zone, None, now)
}

/// `stockhop-site count open [--bin B]`: a count for a zone of a location,
/// or for one `bin` of it, with the snapshot of the units expected there.
/// No two open counts overlap: one per bin, and a zone's count only while
/// none of its bins has one (a count of one bin never closes, or counts
/// against, the rest of its zone). All or nothing, in a savepoint of its
/// own.
pub fn open_place(
    conn: &Connection,
    location: &str,
    zone: &str,
    bin: Option<&str>,
    now: UnixMs,
) -> Result<String, LedgerError> {
    savepoint(conn, |conn| {
        open_in_savepoint(conn, location, zone, bin, now)
    })
}

/// A count as it opened: the answer of `stockhop-site count open` and of
/// `POST /v1/admin/counts` alike.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct CountOpened {
    pub count_id: String,
    /// Units the count expects: those the site knows, new or in stock, in
    /// the zone (or the bin) as it opened.
    pub expected: u64,
    /// Set when the count expects nothing: it is open all the same, but
    /// every tag it sees will be unexpected; null otherwise.
    pub warning: Option<String>,
}

/// [`open_place`], then what the count expects and, when that is nothing,
/// the warning a supervisor is told: the command line prints it on
/// stderr, the admin API answers it, both from here.
pub fn open_told(
    conn: &Connection,
    location: &str,
    zone: &str,
    bin: Option<&str>,
    now: UnixMs,
) -> Result<CountOpened, LedgerError> {
    let count_id = open_place(conn, location, zone, bin, now)?;
    let expected = counts::expected(conn, &count_id)?;
    Ok(CountOpened {
        warning: empty_place_warning(location, zone, bin, &count_id, expected),
        count_id,
        expected,
    })
}

/// What a supervisor is told of a count opened on a place the site thinks
/// empty (`expected` 0), or nothing. Opened all the same: a count of a place
/// the site thinks empty is how strays are found. But an empty snapshot is
/// as often a zone whose units were never imported, so the supervisor hears
/// of it before anyone starts scanning.
pub fn empty_place_warning(
    location: &str,
    zone: &str,
    bin: Option<&str>,
    count_id: &str,
    expected: u64,
) -> Option<String> {
    let place = place(location, zone, bin);
    (expected == 0).then(|| {
        format!(
            "{place} holds no units the site knows (none new or in stock): \
             count {count_id} expects nothing, so every tag it sees will be unexpected"
        )
    })
}

/// A count's place as a supervisor names it: `L/Z`, or `L/Z/B` for one bin.
pub fn place(location: &str, zone: &str, bin: Option<&str>) -> String {
    match bin {
        Some(bin) => format!("{location}/{zone}/{bin}"),
        None => format!("{location}/{zone}"),
    }
}

fn open_in_savepoint(
    conn: &Connection,
    location: &str,
    zone: &str,
    bin: Option<&str>,
    now: UnixMs,
) -> Result<String, LedgerError> {
    let not_found =
        |message: String| LedgerError::Refused(Refusal::new(404, codes::NOT_FOUND, message));
    match bin {
        Some(bin) => match bins::find(conn, bin)? {
            Some(found) if found.location == location && found.zone == zone => {}
            Some(found) => {
                return Err(not_found(format!(
                    "bin {bin:?} is in zone {:?} of location {:?}, not {zone:?} of {location:?}",
                    found.zone, found.location
                )))
            }
            None => return Err(not_found(format!("no bin {bin:?}: import it first"))),
        },
        None => {
            let has_bins: bool = conn.query_row(
                "SELECT EXISTS (SELECT 1 FROM bins WHERE location = ?1 AND zone = ?2)",
                [location, zone],
                |row| row.get(0),
            )?;
            if !has_bins {
                return Err(not_found(format!(
                    "no bins in zone {zone:?} of location {location:?}: import them first"
                )));
            }
        }
    }
    if let Some(open) = counts::open_overlapping(conn, location, zone, bin)? {
        return Err(LedgerError::Refused(Refusal::new(
            409,
            codes::COUNT_ALREADY_OPEN,
            format!("count {open} is open for this zone or bin"),
        )));
    }
    Ok(counts::insert(conn, location, zone, bin, now)?)
}

/// `stockhop-site count cancel`: a count opened by mistake is closed and
/// will never be approved; nothing it counted posts. Handhelds see it
/// `cancelled` and cannot open it; sessions open on it keep recording
/// their scans as facts, and count nothing more. An approved count cannot
/// be cancelled (its adjustments are posted); cancelling a cancelled one
/// again changes nothing.
pub fn cancel(conn: &Connection, count_id: &str, now: UnixMs) -> Result<(), LedgerError> {
    savepoint(conn, |conn| {
        let count = counts::find(conn, count_id)?.ok_or_else(|| {
            LedgerError::Refused(Refusal::new(
                404,
                codes::NOT_FOUND,
                format!("no count {count_id:?}"),
            ))
        })?;
        if count.state == states::APPROVED {
            return Err(LedgerError::Refused(Refusal::new(
                409,
                codes::COUNT_APPROVED,
                format!("count {count_id} is approved: its adjustments are posted"),
            )));
        }
        counts::cancel(conn, count_id, now)?;
        Ok(())
    })
}

/// What an approval posted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Approval {
    /// ADJUST hops posted.
    pub hop_ids: Vec<i64>,
    /// Missing units left alone because they moved after the count opened
    /// (another hop changed them since the snapshot).
    pub moved_since: Vec<String>,
}

/// `stockhop-site count approve`: posts a closed count's variance, all or
/// nothing, in a savepoint of its own.
pub fn approve(conn: &Connection, count_id: &str, now: UnixMs) -> Result<Approval, LedgerError> {
    savepoint(conn, |conn| approve_in_savepoint(conn, count_id, now))
}

fn approve_in_savepoint(
    conn: &Connection,
    count_id: &str,
    now: UnixMs,
) -> Result<Approval, LedgerError> {
    let count = counts::find(conn, count_id)?.ok_or_else(|| {
        LedgerError::Refused(Refusal::new(
            404,
            codes::NOT_FOUND,
            format!("no count {count_id:?}"),
        ))
    })?;
    if count.state != states::CLOSED {
        let why = match count.state.as_str() {
            states::OPEN => "still open: close its session on the handheld first",
            states::CANCELLED => "cancelled: nothing it counted posts",
            _ => "already approved",
        };
        return Err(LedgerError::Refused(Refusal::new(
            409,
            codes::COUNT_NOT_CLOSED,
            format!("count {count_id} is {why}"),
        )));
    }
    let closed_until = periods::closed_until(conn)?;
    let mut approval = Approval::default();
    let mut post = |epc: &str,
                    variance: &str,
                    unit: &units::Unit,
                    from_bin: Option<&str>|
     -> crate::store::sql::Result<()> {
        let key = derived_key(&[count_id, epc, kinds::ADJUST]);
        let facts = serde_json::json!({"count_id": count_id, "epc": epc, "variance": variance});
        let hop_id = hops::append(
            conn,
            &NewHop {
                device_id: SITE_ACTOR,
                session_id: None,
                key: &key,
                client_seq: None,
                command: "count_approve",
                kind: kinds::ADJUST,
                mode: Some(Mode::CycleCount),
                unit_id: Some(unit.unit_id),
                from_bin,
                to_bin: unit.bin.as_deref(),
                unit_version: Some(unit.version),
                facts: &facts,
                occurred_at: now,
                recorded_at: now,
                device_clock_skew_ms: 0,
                source_mode: SourceMode::Live,
                compensates: None,
                closed_until,
            },
        )?;
        approval.hop_ids.push(hop_id);
        Ok(())
    };
    for missing in counts::missing(conn, count_id)? {
        let unit = units::get(conn, missing.unit_id)?
            .ok_or_else(|| LedgerError::Corrupt(format!("unit {} vanished", missing.unit_id)))?;
        if unit.version != missing.unit_version {
            approval.moved_since.push(missing.epc);
            continue;
        }
        let version = units::place(conn, &unit, unit.bin.as_deref(), UnitState::Missing)?;
        let after = units::Unit {
            state: UnitState::Missing,
            version,
            ..unit.clone()
        };
        post(&missing.epc, "missing", &after, unit.bin.as_deref())?;
    }
    for (epc, bin) in counts::unexpected(conn, count_id)? {
        let (unit, from_bin) = match units::find(conn, Some(&epc), None)? {
            Some(unit) => {
                let to = bin.as_deref().or(unit.bin.as_deref());
                let version = units::place(conn, &unit, to, UnitState::InStock)?;
                let after = units::Unit {
                    bin: to.map(str::to_owned),
                    state: UnitState::InStock,
                    version,
                    ..unit.clone()
                };
                (after, unit.bin)
            }
            None => {
                let facts = UnitFacts {
                    epc: Some(&epc),
                    code: None,
                    sku: None,
                    state: UnitState::InStock,
                    bin: bin.as_deref(),
                    gs1: None,
                };
                (units::create(conn, &facts, now)?, None)
            }
        };
        post(&epc, "unexpected", &unit, from_bin.as_deref())?;
    }
    counts::set_state(conn, count_id, states::CLOSED, states::APPROVED, now)?;
    Ok(approval)
}

/// Undoes a count scan: the tag is no longer counted (it stays counted
/// while another scan of it that is not undone counts it). The count must
/// still be open: a closed count's variance stands as the supervisor sees
/// it (`count_not_open`). A count scan changed no unit, so the unit
/// moving since is no reason to refuse.
pub fn undo(
    conn: &Connection,
    undo: Undo<'_>,
    count_id: Option<String>,
) -> Result<Scanned, LedgerError> {
    undo.not_undone_yet(conn)?;
    let Some(count_id) = count_id else {
        return Ok(Scanned::Rejected(reasons::COUNT_NOT_OPEN));
    };
    let open = counts::find(conn, &count_id)?.is_some_and(|count| count.state == states::OPEN);
    if !open {
        return Ok(Scanned::Rejected(reasons::COUNT_NOT_OPEN));
    }
    let Some(epc) = undo.original.fact("epc") else {
        return Err(LedgerError::Corrupt(format!(
            "count hop {} names no tag",
            undo.original.hop_id
        )));
    };
    counts::unsee(conn, &count_id, &epc)?;
    let bin = undo.unit.and_then(|unit| unit.bin.as_deref());
    let version = undo.unit.map(|unit| unit.version);
    undo.post(conn, bin, bin, version)
}
