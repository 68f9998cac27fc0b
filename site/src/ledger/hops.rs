//! The hop ledger: one row per thing that happened to a unit, appended and
//! never changed (the schema's triggers refuse UPDATE and DELETE). A
//! correction is a new, compensating hop that names the one it undoes.

use crate::store::sql::{params, Connection, OptionalExtension, Row};
use stockhop::time::UnixMs;
use stockhop::wire::{HopView, Mode};

use super::periods;

/// Where a hop came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceMode {
    /// A commissioned handheld.
    Live,
    /// A device that is not commissioned: recorded, posts nothing.
    Sim,
    /// A fixed terminal, through the listener.
    Terminal,
}

impl SourceMode {
    pub const ALL: [SourceMode; 3] = [SourceMode::Live, SourceMode::Sim, SourceMode::Terminal];

    pub fn as_str(self) -> &'static str {
        match self {
            SourceMode::Live => "live",
            SourceMode::Sim => "sim",
            SourceMode::Terminal => "terminal",
        }
    }
}

/// The hop kinds the ledger writes.
pub mod kinds {
    /// A compensating hop posted by an undo.
    pub const UNDO: &str = "UNDO";
    /// A fixed gate observed a known unit.
    pub const GATE_READ: &str = "GATE_READ";
    /// Put-away moved (or observed) a unit in a bin.
    pub const ZONE_CHANGE: &str = "ZONE_CHANGE";
    /// A unit received on a GRN line.
    pub const RECEIVE: &str = "RECEIVE";
    /// A tag written while receiving.
    pub const ENCODE: &str = "ENCODE";
    /// A unit verified onto a dispatch manifest.
    pub const DISPATCH: &str = "DISPATCH";
    /// A tag seen by a cycle count.
    pub const CYCLE_COUNT: &str = "CYCLE_COUNT";
    /// A count variance posted by `count approve`.
    pub const ADJUST: &str = "ADJUST";
    /// Every kind, as the hop feed's schema lists them.
    pub const ALL: [&str; 8] = [
        UNDO,
        GATE_READ,
        ZONE_CHANGE,
        RECEIVE,
        ENCODE,
        DISPATCH,
        CYCLE_COUNT,
        ADJUST,
    ];
}

/// The hop kind a scan in `mode` emits (docs/design.md §5).
pub fn scan_kind(mode: Mode) -> &'static str {
    match mode {
        Mode::CycleCount => kinds::CYCLE_COUNT,
        Mode::Receive => kinds::RECEIVE,
        Mode::DispatchVerify => kinds::DISPATCH,
        Mode::PutAway => kinds::ZONE_CHANGE,
        // Never recorded: a find_unit item is refused `read_only_mode`.
        Mode::FindUnit => "FIND",
    }
}

/// A hop to append.
#[derive(Clone)]
pub struct NewHop<'a> {
    pub device_id: &'a str,
    pub session_id: Option<&'a str>,
    pub key: &'a str,
    pub client_seq: Option<u64>,
    pub command: &'a str,
    pub kind: &'a str,
    pub mode: Option<Mode>,
    pub unit_id: Option<i64>,
    pub from_bin: Option<&'a str>,
    pub to_bin: Option<&'a str>,
    /// The unit's version after this hop.
    pub unit_version: Option<u64>,
    pub facts: &'a serde_json::Value,
    pub occurred_at: UnixMs,
    pub recorded_at: UnixMs,
    pub device_clock_skew_ms: i64,
    pub source_mode: SourceMode,
    pub compensates: Option<i64>,
    /// The end of the last closed period, if any ([`periods::closed_until`]).
    pub closed_until: Option<UnixMs>,
}

/// Appends a hop, booked in the open period, and returns its id.
pub fn append(conn: &Connection, hop: &NewHop<'_>) -> crate::store::sql::Result<i64> {
    let booked_at = periods::booking_time(hop.closed_until, hop.occurred_at);
    conn.prepare_cached(
        "INSERT INTO hops (device_id, session_id, key, client_seq, command, kind, mode, unit_id,
                           from_bin, to_bin, unit_version, facts, occurred_at, booked_at,
                           recorded_at, device_clock_skew_ms, source_mode, compensates)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)
         RETURNING hop_id",
    )?
    .query_row(
        params![
            hop.device_id,
            hop.session_id,
            hop.key,
            hop.client_seq.map(|s| s as i64),
            hop.command,
            hop.kind,
            hop.mode.map(Mode::as_str),
            hop.unit_id,
            hop.from_bin,
            hop.to_bin,
            hop.unit_version.map(|v| v as i64),
            hop.facts.to_string(),
            hop.occurred_at.0,
            booked_at.0,
            hop.recorded_at.0,
            hop.device_clock_skew_ms,
            hop.source_mode.as_str(),
            hop.compensates,
        ],
        |row| row.get(0),
    )
}

/// What an undo needs to know about the hop it compensates.
#[derive(Debug, Clone)]
pub struct HopFacts {
    pub hop_id: i64,
    pub command: String,
    pub mode: Option<String>,
    pub unit_id: Option<i64>,
    pub from_bin: Option<String>,
    pub to_bin: Option<String>,
    pub unit_version: Option<u64>,
    pub occurred_at: UnixMs,
    pub source_mode: String,
    /// The session it was recorded in (a handheld's hops have one).
    pub session_id: Option<String>,
    /// What the device sent, as stored JSON.
    pub facts: String,
}

impl HopFacts {
    /// A field of the facts the device sent, when it is a string.
    pub fn fact(&self, name: &str) -> Option<String> {
        serde_json::from_str::<serde_json::Value>(&self.facts)
            .ok()?
            .get(name)?
            .as_str()
            .map(str::to_owned)
    }
}

/// The hop an item of `device_id` with `key` recorded, if any.
pub fn by_key(
    conn: &Connection,
    device_id: &str,
    key: &str,
) -> crate::store::sql::Result<Option<HopFacts>> {
    conn.prepare_cached(
        "SELECT hop_id, command, mode, unit_id, from_bin, to_bin, unit_version, occurred_at,
                source_mode, session_id, facts
         FROM hops WHERE device_id = ?1 AND key = ?2",
    )?
    .query_row([device_id, key], |row| {
        Ok(HopFacts {
            hop_id: row.get(0)?,
            command: row.get(1)?,
            mode: row.get(2)?,
            unit_id: row.get(3)?,
            from_bin: row.get(4)?,
            to_bin: row.get(5)?,
            unit_version: row.get::<_, Option<i64>>(6)?.map(|v| v as u64),
            occurred_at: UnixMs(row.get(7)?),
            source_mode: row.get(8)?,
            session_id: row.get(9)?,
            facts: row.get(10)?,
        })
    })
    .optional()
}

/// Whether an undo compensated hop `hop_id` already.
pub fn compensated(conn: &Connection, hop_id: i64) -> crate::store::sql::Result<bool> {
    conn.prepare_cached("SELECT 1 FROM hops WHERE compensates = ?1")?
        .exists([hop_id])
}

/// A session's hops in applied order.
pub fn for_session(conn: &Connection, session_id: &str) -> crate::store::sql::Result<Vec<HopView>> {
    let mut statement = conn.prepare_cached(
        "SELECT hop_id, key, client_seq, command, mode, facts, occurred_at, recorded_at,
                device_clock_skew_ms, source_mode, compensates, kind, booked_at
         FROM hops WHERE session_id = ?1 ORDER BY hop_id",
    )?;
    let rows = statement.query_map([session_id], view_from_row)?;
    rows.collect()
}

fn conversion(column: usize, what: String) -> crate::store::sql::Error {
    crate::store::sql::Error::conversion(column, what)
}

fn view_from_row(row: &Row<'_>) -> crate::store::sql::Result<HopView> {
    let key: String = row.get(1)?;
    let command: String = row.get(3)?;
    let mode: Option<String> = row.get(4)?;
    let facts: String = row.get(5)?;
    Ok(HopView {
        hop_id: row.get(0)?,
        key: key.parse().map_err(|err| conversion(1, format!("{err}")))?,
        client_seq: row.get::<_, Option<i64>>(2)?.unwrap_or_default() as u64,
        command: serde_json::from_value(serde_json::Value::String(command))
            .map_err(|err| conversion(3, err.to_string()))?,
        mode: mode
            .map(|m| serde_json::from_value::<Mode>(serde_json::Value::String(m)))
            .transpose()
            .map_err(|err| conversion(4, err.to_string()))?,
        facts: serde_json::from_str(&facts).map_err(|err| conversion(5, err.to_string()))?,
        occurred_at: UnixMs(row.get(6)?),
        recorded_at: UnixMs(row.get(7)?),
        device_clock_skew_ms: row.get(8)?,
        source_mode: row.get(9)?,
        compensates: row.get(10)?,
        kind: row.get(11)?,
        booked_at: Some(UnixMs(row.get(12)?)),
    })
}
