//! What a supervisor's correction posts, by the ledger's rules: the
//! compensating hop that reverses an applied scan (the undo a handheld
//! could no longer make), an ADJUST that puts a unit where a refused scan
//! found it, and the ADJUST hops that book a GRN's short and over lines.
//!
//! Each hop carries a key derived from the decision it settles
//! ([`super::modes::derived_key`]), so a correction posts once however
//! often it is asked for, and is recorded under [`SITE_ACTOR`], the site
//! itself. A correction that the ledger's state no longer allows (the
//! unit has moved since, the count is approved) is refused with 409 and
//! writes nothing: a person looks again, or counts the zone.

use crate::store::sql::{Connection, OptionalExtension};
use stockhop::time::UnixMs;
use stockhop::wire::Mode;

use super::counts;
use super::grns::{self, states as grn_states};
use super::hops::{self, kinds, HopFacts, NewHop, SourceMode};
use super::manifests::states as manifest_states;
use super::modes::cycle_count::SITE_ACTOR;
use super::units::{self, Unit, UnitState};
use super::{bins, codes, periods, LedgerError, Refusal};
use crate::params;

/// The command name correction hops are recorded with.
pub const COMMAND: &str = "correct";

fn refused(message: impl Into<String>) -> LedgerError {
    LedgerError::Refused(Refusal::new(409, codes::NOT_CORRECTABLE, message))
}

/// A correction hop under `key`, at `now`, as the site.
fn site_hop<'a>(
    key: &'a str,
    kind: &'a str,
    mode: Option<Mode>,
    facts: &'a serde_json::Value,
    now: UnixMs,
    closed_until: Option<UnixMs>,
) -> NewHop<'a> {
    NewHop {
        device_id: SITE_ACTOR,
        session_id: None,
        key,
        client_seq: None,
        command: COMMAND,
        kind,
        mode,
        unit_id: None,
        from_bin: None,
        to_bin: None,
        unit_version: None,
        facts,
        occurred_at: now,
        recorded_at: now,
        device_clock_skew_ms: 0,
        source_mode: SourceMode::Live,
        compensates: None,
        closed_until,
    }
}

fn unit_of(conn: &Connection, original: &HopFacts) -> Result<Unit, LedgerError> {
    let unit_id = original
        .unit_id
        .ok_or_else(|| refused(format!("hop {} names no unit", original.hop_id)))?;
    units::get(conn, unit_id)?
        .ok_or_else(|| LedgerError::Corrupt(format!("unit {unit_id} vanished")))
}

/// A value the hop's facts or its session's context name (`grn`,
/// `manifest`, `count_id`).
fn named(conn: &Connection, hop_id: i64, name: &str) -> crate::store::sql::Result<Option<String>> {
    let (facts, context): (String, Option<String>) = conn
        .prepare_cached(
            "SELECT h.facts, s.context FROM hops h
             LEFT JOIN sessions s ON s.session_id = h.session_id WHERE h.hop_id = ?1",
        )?
        .query_row([hop_id], |row| Ok((row.get(0)?, row.get(1)?)))?;
    let read = |text: &str| {
        serde_json::from_str::<serde_json::Value>(text)
            .ok()
            .and_then(|value| value.get(name)?.as_str().map(str::to_owned))
    };
    Ok(read(&facts).or_else(|| context.as_deref().and_then(read)))
}

/// What reversing an applied scan takes, read before anything is written.
enum Reversal {
    /// Put-away: back where it was.
    PutAway,
    /// Receive: off its GRN line.
    Receive { grn: String, sku: String },
    /// Dispatch verify: unverified on its manifest, back in its bin.
    Dispatch { manifest: String },
    /// Cycle count: the tag no longer counted.
    Count { count_id: String },
}

/// Whether `original` can be reversed now ([`compensate`] would succeed),
/// read without writing: the workbench offers the correction only then.
pub fn reversible(conn: &Connection, original: &HopFacts) -> crate::store::sql::Result<bool> {
    match reversal(conn, original) {
        Ok(_) => Ok(true),
        Err(LedgerError::Refused(_)) => Ok(false),
        Err(LedgerError::Sqlite(err)) => Err(err),
        Err(other) => Err(crate::store::sql::Error::conversion(0, other.to_string())),
    }
}

/// The reversal of `original` and the unit it moves, or why there is none:
/// a simulation, a unit that changed after the hop, a line or count that
/// no longer holds it.
fn reversal(
    conn: &Connection,
    original: &HopFacts,
) -> Result<(Option<Mode>, Unit, Reversal), LedgerError> {
    if original.source_mode != SourceMode::Live.as_str() {
        return Err(refused(format!(
            "hop {} posted nothing ({}): there is nothing to reverse",
            original.hop_id, original.source_mode
        )));
    }
    let mode = original
        .mode
        .as_deref()
        .and_then(|m| serde_json::from_value::<Mode>(serde_json::Value::String(m.into())).ok());
    let unit = unit_of(conn, original)?;
    if Some(unit.version) != original.unit_version {
        return Err(refused(format!(
            "unit {} changed after hop {}: count it where it is instead",
            unit.epc.as_deref().unwrap_or("?"),
            original.hop_id
        )));
    }
    let plan = match mode {
        Some(Mode::PutAway) => Reversal::PutAway,
        Some(Mode::Receive) => {
            let line: Option<(String, String)> = conn
                .prepare_cached(
                    "SELECT grn, sku FROM grn_receipts WHERE unit_id = ?1 AND hop_id = ?2",
                )?
                .query_row(params![unit.unit_id, original.hop_id], |row| {
                    Ok((row.get(0)?, row.get(1)?))
                })
                .optional()?;
            let Some((grn, sku)) = line else {
                return Err(refused(format!(
                    "hop {} is on no GRN line any more",
                    original.hop_id
                )));
            };
            Reversal::Receive { grn, sku }
        }
        Some(Mode::DispatchVerify) => {
            let Some(manifest) = named(conn, original.hop_id, "manifest")? else {
                return Err(refused(format!(
                    "hop {} names no manifest",
                    original.hop_id
                )));
            };
            Reversal::Dispatch { manifest }
        }
        Some(Mode::CycleCount) => {
            let Some(count_id) = named(conn, original.hop_id, "count_id")? else {
                return Err(refused(format!("hop {} names no count", original.hop_id)));
            };
            let count = counts::find(conn, &count_id)?;
            if count.is_none_or(|count| count.state == counts::states::APPROVED) {
                return Err(refused(format!(
                    "count {count_id} is approved: its variance is posted"
                )));
            }
            Reversal::Count { count_id }
        }
        Some(Mode::FindUnit) | None => {
            return Err(refused(format!(
                "hop {} is not a scan a correction reverses",
                original.hop_id
            )))
        }
    };
    Ok((mode, unit, plan))
}

/// Reverses the applied scan `original` with a compensating hop under
/// `key`: put-away puts the unit back where it was; receive takes it off
/// its GRN line; dispatch verify puts it back in its bin and unverifies
/// its manifest line; a cycle count forgets the tag. Refused when the unit
/// changed after the hop, or the hop was a simulation.
pub fn compensate(
    conn: &Connection,
    original: &HopFacts,
    key: &str,
    facts: &serde_json::Value,
    now: UnixMs,
) -> Result<i64, LedgerError> {
    let (mode, unit, plan) = reversal(conn, original)?;
    let (to_bin, state) = match plan {
        Reversal::PutAway => {
            // Back where it was: in stock there, or new again with no bin.
            let state = match original.from_bin {
                Some(_) => UnitState::InStock,
                None => UnitState::New,
            };
            (original.from_bin.clone(), state)
        }
        Reversal::Receive { grn, sku } => {
            unreceive(conn, &grn, &sku, unit.unit_id)?;
            // A GRN already settled is settled again from its lines.
            if grns::find(conn, &grn)?.is_some_and(|g| g.state != grn_states::OPEN) {
                grns::settle(conn, &grn)?;
            }
            (unit.bin.clone(), UnitState::New)
        }
        Reversal::Dispatch { manifest } => {
            unverify(conn, &manifest, unit.epc.as_deref().unwrap_or_default())?;
            (original.from_bin.clone(), UnitState::InStock)
        }
        Reversal::Count { count_id } => {
            unsee(conn, &count_id, unit.epc.as_deref().unwrap_or_default())?;
            (unit.bin.clone(), unit.state)
        }
    };
    // The unit's version moves even where its place does not, so every
    // handheld that read it sees the change.
    let version = match units::place(conn, &unit, to_bin.as_deref(), state)? {
        same if same == unit.version => touch(conn, &unit)?,
        bumped => bumped,
    };
    let mut hop = site_hop(
        key,
        kinds::UNDO,
        mode,
        facts,
        now,
        periods::closed_until(conn)?,
    );
    hop.unit_id = Some(unit.unit_id);
    hop.from_bin = unit.bin.as_deref();
    hop.to_bin = to_bin.as_deref();
    hop.unit_version = Some(version);
    hop.compensates = Some(original.hop_id);
    Ok(hops::append(conn, &hop)?)
}

/// Puts the unit `epc` in stock in `bin` with an ADJUST hop under `key`:
/// a supervisor confirms where a refused scan found it.
/// Whether [`place`] would put `epc` in stock in `bin` now: the unit and
/// the bin are known and the unit is not dispatched. The workbench offers
/// the correction only then, so the action it shows succeeds.
pub fn placeable(conn: &Connection, epc: &str, bin: &str) -> crate::store::sql::Result<bool> {
    let Some(unit) = units::find(conn, Some(epc), None)? else {
        return Ok(false);
    };
    Ok(unit.state != UnitState::Dispatched && bins::find(conn, bin)?.is_some())
}

pub fn place(
    conn: &Connection,
    epc: &str,
    bin: &str,
    key: &str,
    facts: &serde_json::Value,
    now: UnixMs,
) -> Result<i64, LedgerError> {
    let unit = units::find(conn, Some(epc), None)?
        .ok_or_else(|| refused(format!("unit {epc} is unknown: import it first")))?;
    if bins::find(conn, bin)?.is_none() {
        return Err(refused(format!("bin {bin} is unknown: import it first")));
    }
    if unit.state == UnitState::Dispatched {
        return Err(refused(format!("unit {epc} is dispatched")));
    }
    let version = units::place(conn, &unit, Some(bin), UnitState::InStock)?;
    let mut hop = site_hop(
        key,
        kinds::ADJUST,
        Some(Mode::PutAway),
        facts,
        now,
        periods::closed_until(conn)?,
    );
    hop.unit_id = Some(unit.unit_id);
    hop.from_bin = unit.bin.as_deref();
    hop.to_bin = Some(bin);
    hop.unit_version = Some(version);
    Ok(hops::append(conn, &hop)?)
}

/// Books a GRN's short and over lines as ADJUST hops (one a line, each
/// under a key derived from `key_base` and the SKU, carrying the line's
/// SKU and its quantity, received − expected) and completes the GRN. The
/// one way a GRN is resolved: the command line, the admin API and the
/// workbench all come here.
pub fn book_grn(
    conn: &Connection,
    grn: &str,
    key_base: &str,
    note: &str,
    now: UnixMs,
) -> Result<Vec<i64>, LedgerError> {
    let found = grns::find(conn, grn)?.ok_or_else(|| refused(format!("GRN {grn} is unknown")))?;
    if found.state != grn_states::NEEDS_RESOLUTION {
        return Err(LedgerError::Refused(Refusal::new(
            409,
            codes::NOTHING_TO_RESOLVE,
            format!("GRN {grn} is {}, not needs_resolution", found.state),
        )));
    }
    let closed_until = periods::closed_until(conn)?;
    let mut hop_ids = Vec::new();
    for line in found.lines.iter().filter(|l| l.expected != l.received) {
        let variance = if line.received < line.expected {
            "short"
        } else {
            "excess"
        };
        // Received − expected: what the line books into stock (negative
        // for a short line), as the hop feed shows it.
        let quantity = line.received as i64 - line.expected as i64;
        let facts = serde_json::json!({
            "grn": grn,
            "sku": line.sku,
            "expected": line.expected,
            "received": line.received,
            "variance": variance,
            "quantity": quantity,
            "note": note,
        });
        let key = super::modes::derived_key(&[key_base, &line.sku, kinds::ADJUST]);
        let hop = site_hop(
            &key,
            kinds::ADJUST,
            Some(Mode::Receive),
            &facts,
            now,
            closed_until,
        );
        hop_ids.push(hops::append(conn, &hop)?);
    }
    grns::set_state(conn, grn, grn_states::COMPLETE)?;
    Ok(hop_ids)
}

// The reverse of the modes' own writes. They sit here, beside the one
// caller, while the handheld's undo reverses put-away alone.

/// Takes a unit off the GRN line it was received on.
fn unreceive(
    conn: &Connection,
    grn: &str,
    sku: &str,
    unit_id: i64,
) -> crate::store::sql::Result<()> {
    conn.prepare_cached("DELETE FROM grn_receipts WHERE unit_id = ?1")?
        .execute([unit_id])?;
    conn.prepare_cached(
        "UPDATE grn_lines SET received = received - 1
         WHERE grn = ?1 AND sku = ?2 AND received > 0",
    )?
    .execute([grn, sku])?;
    Ok(())
}

/// Marks a manifest unit unverified again; a verified manifest is
/// dispatched (not every unit verified) once more.
fn unverify(conn: &Connection, manifest: &str, epc: &str) -> crate::store::sql::Result<()> {
    conn.prepare_cached("UPDATE manifest_units SET verified = 0 WHERE manifest = ?1 AND epc = ?2")?
        .execute([manifest, epc])?;
    conn.prepare_cached("UPDATE manifests SET state = ?2 WHERE manifest = ?1 AND state = ?3")?
        .execute([
            manifest,
            manifest_states::DISPATCHED,
            manifest_states::VERIFIED,
        ])?;
    Ok(())
}

/// Forgets that a count saw a tag.
fn unsee(conn: &Connection, count_id: &str, epc: &str) -> crate::store::sql::Result<()> {
    conn.prepare_cached("DELETE FROM count_seen WHERE count_id = ?1 AND epc = ?2")?
        .execute([count_id, epc])?;
    Ok(())
}

/// Bumps a unit's version where nothing else about it changed.
fn touch(conn: &Connection, unit: &Unit) -> crate::store::sql::Result<u64> {
    let version = unit.version + 1;
    conn.prepare_cached("UPDATE units SET version = ?2 WHERE unit_id = ?1")?
        .execute(params![unit.unit_id, version as i64])?;
    Ok(version)
}
