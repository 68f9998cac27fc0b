//! Reference data in: `stockhop-site import
//! bins|units|grns|manifests|operators|skus FILE` and
//! `PUT /v1/admin/reference/{kind}`, CSV (a header row, then one row per
//! bin, unit, GRN line, manifest unit, operator or SKU) or a JSON array of
//! the same fields, through one path.
//!
//! An import of any size never holds the writer for long, and readers see
//! all of it or none of it as it is decided:
//!
//! 1. **Staging.** Rows are parsed and checked (fields, control
//!    characters and direction controls, repeats within the file, and
//!    what they name in the ledger) ahead of the writer, then written to
//!    `import_rows` a short transaction at a time ([`TURN_BUDGET_SQLITE`],
//!    [`TURN_BUDGET_POSTGRES`], less
//!    when a sync waits: [`TURN_FLOOR`]); nothing else reads them. A
//!    bad row fails the whole import: every error (up to
//!    [`MAX_IMPORT_ERRORS`]) with its line, and the staged rows are swept.
//! 2. **The flip.** One statement marks the import `applying`: it is
//!    decided. Before it, a killed import has changed nothing any reader
//!    sees (its staged rows are swept once its lease runs out); after it,
//!    the rest is applied by whoever finds it ([`settle`]: the next
//!    import, the next start of the server).
//! 3. **Applying.** Staged rows are merged into the reference tables a
//!    short transaction at a time. Handhelds' reference pages stop at the
//!    change number of the flip until the import ends ([`finish`]), so a
//!    handheld takes the whole import at once ([`visible_until`]). On
//!    PostgreSQL these turns write without the reference lock that every
//!    other writer of reference rows holds to its commit (units turns
//!    excepted), so a sync never waits for one ([`write_unlocked`]).
//!
//! Importing the same rows again changes nothing; a row that changes a
//! unit bumps its version, so devices that read the old one get
//! `stale_state`, and a row that puts a unit in another bin or state is
//! booked as an `ADJUST` hop of the site, so the hop feed accounts for it.
//! Rows add and update; nothing is deleted by leaving it out
//! of a file (a GRN line or a manifest unit the ledger has counted must not
//! vanish under it).

mod apply;
mod input;
mod rows;
mod stage;

pub use self::input::*;
use self::{apply::*, rows::*, stage::*};

use std::collections::VecDeque;
use std::hash::BuildHasher;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::store::sql::{params, Connection, OptionalExtension, TransactionBehavior};
use serde::{Deserialize, Serialize};
use stockhop::time::UnixMs;

use super::bins::{self, Bin};
use super::operators::{self, Operator};
use super::skus::{self, Sku};
use super::units::{self, Gs1Keys, UnitFacts, UnitState};
use super::{grns, labels, manifests};
use crate::limits::MAX_ITEM_FIELD_CHARS as MAX_FIELD_CHARS;

/// The longest one transaction of an import runs on SQLite before it
/// commits and lets the one writer go. A sync that comes meanwhile waits
/// for the rest of the turn and its commit, and its own `fsync` then
/// carries whatever of the turn's log the import has not yet flushed: both
/// grow with the turn. Over a 1,000,000-bin import beside back-to-back
/// syncs, the syncs' p99 was 12–13 ms with turns of 10 ms, 8–9 ms with
/// 2 ms and 7–7.5 ms with 1 ms, against 2.3–3.6 ms quiet; the import took
/// 80, 90 and 120–170 s. A turn gives way sooner to a sync that waits for
/// the writer ([`TURN_FLOOR`]).
pub const TURN_BUDGET_SQLITE: Duration = Duration::from_millis(1);
/// The longest one transaction of an import runs on PostgreSQL: a tenth of
/// the 100 ms a turn may take, the rest for a machine that stalls the
/// thread mid-turn. No sync waits for these turns (bins, GRNs, manifests
/// and operators write without the reference lock, [`write_unlocked`]), so
/// they are as long as keeps each commit a small part of the import.
pub const TURN_BUDGET_POSTGRES: Duration = Duration::from_millis(10);
/// The least a turn runs before it commits for someone waiting for the
/// writer (a sync on the site's SQLite database): enough work that the
/// turn's commit is a fair part of it, so the import still moves while
/// syncs arrive back to back. A sync that arrives during a turn waits for
/// this, the row or read in hand, and the commit, instead of the rest of
/// the budget (from the look that found it waiting to the writer's
/// release: p50 0.25 ms, p99 0.5 ms in the import's bench).
pub const TURN_FLOOR: Duration = Duration::from_micros(250);

/// The longest one turn runs on `engine`.
fn turn_budget(engine: crate::store::sql::Engine) -> Duration {
    match engine {
        crate::store::sql::Engine::Sqlite => TURN_BUDGET_SQLITE,
        crate::store::sql::Engine::Postgres => TURN_BUDGET_POSTGRES,
    }
}

/// Whether a turn that has run for `took` of its `budget` commits now: its
/// budget spent, or past its floor while someone waits for the writer
/// (`wanted`, asked only then).
fn turn_over(took: Duration, budget: Duration, wanted: impl FnOnce() -> bool) -> bool {
    took >= budget || (took >= TURN_FLOOR && wanted())
}

/// The share of the writer's time an import on the site's database takes:
/// after a turn of `t` it rests `t × (1 − share) / share`, so a sync that
/// arrives during a turn finds the writer free right after it, and the
/// sync's own turns are never crowded out.
pub const IMPORT_WRITER_SHARE: f64 = 0.5;
/// Rows parsed ahead of the writer before a staging turn takes them: a few
/// turns' worth, so parsing never waits on the database nor runs far
/// ahead of it (memory).
pub const PARSE_AHEAD_ROWS: usize = 4_096;
/// Rows in one staging `INSERT`: one round trip for many rows on
/// PostgreSQL, 300 parameters (SQLite allows 32,766).
pub const STAGE_INSERT_ROWS: usize = 100;
/// Staged rows an apply turn reads at once, again and again until its
/// budget ([`TURN_BUDGET_POSTGRES`]) is spent: few enough to read and decode in a few
/// milliseconds even in a debug build against PostgreSQL (2,000 at once
/// took most of a turn there, leaving it one row to apply), and at most
/// [`bins::UPSERT_MANY_MAX`], as a read of bins is written in one statement.
pub const APPLY_READ_ROWS: i64 = 250;
const _: () = assert!(APPLY_READ_ROWS as usize <= bins::UPSERT_MANY_MAX);
/// Bins one apply statement writes on SQLite: a statement runs to its
/// end once begun, and a sync that comes to the one writer meanwhile
/// waits for it, so it is kept to a fraction of a millisecond (about
/// 20 µs a bin, its indexes included). On PostgreSQL, where no sync waits
/// for the import's statements, a whole read goes in one round trip.
pub const APPLY_STATEMENT_ROWS_SQLITE: usize = 16;

fn apply_statement_rows(engine: crate::store::sql::Engine) -> usize {
    match engine {
        crate::store::sql::Engine::Sqlite => APPLY_STATEMENT_ROWS_SQLITE,
        crate::store::sql::Engine::Postgres => APPLY_READ_ROWS as usize,
    }
}

/// Errors one failed import lists: enough to fix a file in one go, few
/// enough for a terminal or a JSON answer.
pub const MAX_IMPORT_ERRORS: usize = 100;
/// An import that has not finished a turn for this long is abandoned (a
/// staging one) or taken over (an applying one) by the next import or
/// start: a turn takes well under a second, and a killed importer must
/// not leave the site waiting long.
pub const IMPORT_LEASE_MS: i64 = 30_000;
/// How long an import waits between looks when another one is applying,
/// and before it runs again a turn that found the database busy.
pub const APPLYING_POLL: Duration = Duration::from_millis(100);

/// What a file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Kind {
    /// `bin,zone,location`
    Bins,
    /// `epc,code,sku,state,bin` (code and bin may be empty), and the
    /// optional GS1 columns `gtin,serial,lot,expiry`
    Units,
    /// `grn,qc,sku,expected`, one row per line
    Grns,
    /// `manifest,state,epc`, one row per unit, and the optional `sscc`
    /// of the unit's pallet
    Manifests,
    /// `badge,name`, one row per operator, and the optional `language`
    /// (BCP 47) the operator reads
    Operators,
    /// `sku,gtin`, one row per SKU
    Skus,
}

impl Kind {
    /// The columns the header row must name.
    pub fn columns(self) -> &'static [&'static str] {
        match self {
            Kind::Bins => &["bin", "zone", "location"],
            Kind::Units => &["epc", "code", "sku", "state", "bin"],
            Kind::Grns => &["grn", "qc", "sku", "expected"],
            Kind::Manifests => &["manifest", "state", "epc"],
            Kind::Operators => &["badge", "name"],
            Kind::Skus => &["sku", "gtin"],
        }
    }

    /// The columns a header row may name besides [`Kind::columns`]: a file
    /// without them is read as before they existed.
    pub fn optional_columns(self) -> &'static [&'static str] {
        match self {
            Kind::Units => &UNIT_GS1_COLUMNS,
            Kind::Manifests => &["sscc"],
            Kind::Operators => &["language"],
            Kind::Bins | Kind::Grns | Kind::Skus => &[],
        }
    }

    /// Its name on the command line and in `/v1/admin/reference/{kind}`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Bins => "bins",
            Kind::Units => "units",
            Kind::Grns => "grns",
            Kind::Manifests => "manifests",
            Kind::Operators => "operators",
            Kind::Skus => "skus",
        }
    }

    fn parse(name: &str) -> Option<Kind> {
        [
            Kind::Bins,
            Kind::Units,
            Kind::Grns,
            Kind::Manifests,
            Kind::Operators,
            Kind::Skus,
        ]
        .into_iter()
        .find(|kind| kind.name() == name)
    }
}

/// The GS1 columns of a units file. A file that names none of them leaves
/// the units' GS1 keys as they are (but those an SGTIN EPC encodes).
pub const UNIT_GS1_COLUMNS: [&str; 4] = ["gtin", "serial", "lot", "expiry"];

/// One bad row (or the header, line 1) of a refused import. For a JSON
/// array, `line` is the element's position, from 1.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LineError {
    pub line: u64,
    pub message: String,
}

/// Why an import was not made.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// Rows (or the header) are wrong: nothing was imported. Listed in line
    /// order, at most [`MAX_IMPORT_ERRORS`].
    #[error("{}", invalid_lines(file, errors))]
    Invalid {
        file: String,
        errors: Vec<LineError>,
    },
    /// A CSV input that is plainly something else ([`NotCsv`]): refused at
    /// line 1, nothing imported. Apart from [`ImportError::Invalid`] so a
    /// caller can say how such an input is sent instead (the endpoint, by
    /// its media type).
    #[error("{file}:1: {}", found.message(*kind))]
    NotCsv {
        file: String,
        kind: Kind,
        found: NotCsv,
    },
    #[error("{file}: {reason}")]
    File { file: String, reason: String },
    #[error("{file}: {source}")]
    Sqlite {
        file: String,
        source: crate::store::sql::Error,
    },
    /// The import was decided (flipped) but applying it stopped: it is not
    /// lost, and what is left is applied by the next import or the next
    /// start of the site ([`settle`]); importing the file again is harmless.
    #[error(
        "{file}: the import is decided, but applying it stopped: {source}; \
         the next import or the next start of the site finishes it"
    )]
    Decided {
        file: String,
        source: crate::store::sql::Error,
    },
}

fn invalid_lines(file: &str, errors: &[LineError]) -> String {
    let mut lines: Vec<String> = errors
        .iter()
        .map(|error| format!("{file}:{}: {}", error.line, error.message))
        .collect();
    if errors.len() >= MAX_IMPORT_ERRORS {
        lines.push(stopped_at_cap(file));
    }
    lines.join("\n")
}

/// What a refusal that listed [`MAX_IMPORT_ERRORS`] errors adds: the
/// import stopped reading there, so the rest of the file may hold more.
fn stopped_at_cap(file: &str) -> String {
    format!(
        "{file}: stopped at the first {MAX_IMPORT_ERRORS} errors; the rest of the file was not checked"
    )
}

/// What an import did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    pub rows: usize,
    /// Rows that added or changed something.
    pub changed: usize,
    /// The longest this import held the database at a time (one turn).
    pub longest_turn: Duration,
}

/// Where the import's transactions get their connection: one held
/// throughout (a test, the simulation), or the site's database, let go
/// between turns so sync requests run in between.
pub trait Connections {
    /// Runs one turn's transaction.
    fn with<T>(&self, work: impl FnOnce(&mut Connection) -> T) -> T {
        self.turn(work).0
    }

    /// Runs one turn's transaction and rests after it (see
    /// [`IMPORT_WRITER_SHARE`]); also returns how long the turn took.
    fn turn<T>(&self, work: impl FnOnce(&mut Connection) -> T) -> (T, Duration);

    /// Whether someone else waits now for the connection a turn holds: the
    /// turn then commits once it has run [`TURN_FLOOR`]. No one, unless
    /// the connection is shared.
    fn wanted(&self) -> bool {
        false
    }
}

impl Connections for crate::store::db::Db {
    /// On SQLite a turn's commit does not wait for the disk while it holds
    /// the writer: the turn's writes are flushed once it is let go, before
    /// the next turn (see [`crate::store::checkpoint::unflushed`]). So a turn holds
    /// the writer for its work alone, never for a flush that a busy disk
    /// can stretch to tens of milliseconds; each turn is on the disk before
    /// the next begins, and the import returns only once its last one is.
    fn turn<T>(&self, work: impl FnOnce(&mut Connection) -> T) -> (T, Duration) {
        // Timed inside: the writer is held from here, not while waiting.
        let (out, took) = self.call_blocking(|conn| {
            let start = Instant::now();
            let out = crate::store::checkpoint::unflushed(conn, work);
            (out, start.elapsed())
        });
        if let Some(path) = self.path() {
            if let Err(err) = crate::store::checkpoint::flush_log(path) {
                tracing::warn!(%err, "an import turn's writes could not be flushed; the next commit flushes them");
            }
        }
        std::thread::sleep(took.mul_f64((1.0 - IMPORT_WRITER_SHARE) / IMPORT_WRITER_SHARE));
        (out, took)
    }

    /// A sync waits for SQLite's one writer (see [`crate::store::db::Db::writer_wanted`]).
    fn wanted(&self) -> bool {
        self.writer_wanted()
    }
}

/// One connection held throughout: no one else writes, so no rests.
impl Connections for std::cell::RefCell<&mut Connection> {
    fn turn<T>(&self, work: impl FnOnce(&mut Connection) -> T) -> (T, Duration) {
        let start = Instant::now();
        let out = work(&mut self.borrow_mut());
        (out, start.elapsed())
    }
}

/// The input of an import.
pub enum Source<R> {
    /// CSV with a header row naming at least [`Kind::columns`].
    Csv(R),
    /// A JSON array of objects with [`Kind::columns`] as fields (strings,
    /// numbers, or null for an empty optional one).
    Json(Vec<JsonRow>),
}

/// Opens the file an import reads, refused as [`ImportError::File`] if it
/// cannot be read (a folder opens, and would fail only at its first read,
/// told as line 1 of a file).
pub fn open_file(path: &Path) -> Result<std::fs::File, ImportError> {
    let refused = |reason: String| ImportError::File {
        file: path.display().to_string(),
        reason,
    };
    let input = std::fs::File::open(path).map_err(|err| refused(err.to_string()))?;
    if input.metadata().is_ok_and(|meta| meta.is_dir()) {
        return Err(refused("is a folder, not a file".to_owned()));
    }
    Ok(input)
}

/// The file name that stands for standard input on the command line
/// (`stockhop-site import bins -`), as Unix tools take it, so an export
/// can be piped in (`erp-export bins | stockhop-site import bins -`).
pub const STDIN_ARG: &str = "-";
/// What messages call standard input where they name a file
/// (`stdin:3: …`, `stdin: 2 rows, 2 changed`).
pub const STDIN_NAME: &str = "stdin";

/// Opens what the command line's import reads, with the name its messages
/// give it: standard input for [`STDIN_ARG`] (named [`STDIN_NAME`]), else
/// the file at `path` ([`open_file`]). A file really named `-` is `./-`.
pub fn open_input(path: &Path) -> Result<(String, Box<dyn std::io::Read>), ImportError> {
    if path.as_os_str() == STDIN_ARG {
        return Ok((STDIN_NAME.to_owned(), Box::new(std::io::stdin().lock())));
    }
    Ok((path.display().to_string(), Box::new(open_file(path)?)))
}

/// Imports `path` as `kind` on one connection held throughout (the staging,
/// flip and apply turns all run; nothing else writes in between).
pub fn import(
    conn: &mut Connection,
    kind: Kind,
    path: &Path,
    now: UnixMs,
) -> Result<Summary, ImportError> {
    let file = path.display().to_string();
    let input = open_file(path)?;
    import_reader(conn, kind, &file, input, now)
}

/// Imports the CSV text `input` as `kind` on one connection; `file` names
/// it in errors.
pub fn import_reader(
    conn: &mut Connection,
    kind: Kind,
    file: &str,
    input: impl std::io::Read,
    now: UnixMs,
) -> Result<Summary, ImportError> {
    let conns = std::cell::RefCell::new(conn);
    run(&conns, kind, file, Source::Csv(input), &|| now)
}

/// Imports `source` as `kind`, each transaction a turn of at most about
/// [`TURN_BUDGET_SQLITE`] or [`TURN_BUDGET_POSTGRES`] on a connection from `conns`; `clock` stamps the
/// import's lease. First settles an import left by a killed importer.
pub fn run<R: std::io::Read>(
    conns: &impl Connections,
    kind: Kind,
    file: &str,
    source: Source<R>,
    clock: &dyn Fn() -> UnixMs,
) -> Result<Summary, ImportError> {
    let sql = |source| ImportError::Sqlite {
        file: file.to_owned(),
        source,
    };
    let conns = &Longest {
        conns,
        longest: std::cell::Cell::new(Duration::ZERO),
    };
    settle(conns, clock()).map_err(sql)?;
    let mut records = Records::new(kind, file, source)?;
    let started_at = clock();
    let import_id: i64 = conns
        .with(|conn| {
            conn.query_row(
                "INSERT INTO imports (kind, state, source, started_at, touched_at)
                 VALUES (?1, 'staging', ?2, ?3, ?3) RETURNING import_id",
                params![kind.name(), file, started_at.0],
                |row| row.get(0),
            )
        })
        .map_err(sql)?;
    let staged = stage(conns, import_id, &mut records, clock);
    let rows = match staged {
        Ok(rows) if records.errors.is_empty() => rows,
        outcome => {
            abandon(conns, import_id).map_err(sql)?;
            outcome.map_err(sql)?;
            // A row's parse errors are found as it is read, its checks
            // against the ledger a little later: told in line order.
            let mut errors = records.errors;
            errors.sort_by_key(|error| error.line);
            return Err(ImportError::Invalid {
                file: file.to_owned(),
                errors,
            });
        }
    };
    flip(conns, import_id, rows, clock).map_err(sql)?;
    let changed = apply(conns, import_id, kind, started_at, clock).map_err(|source| {
        ImportError::Decided {
            file: file.to_owned(),
            source,
        }
    })?;
    Ok(Summary {
        rows,
        changed,
        longest_turn: conns.longest.get(),
    })
}

/// [`Connections`] that remember their longest turn.
struct Longest<'a, C> {
    conns: &'a C,
    longest: std::cell::Cell<Duration>,
}

impl<C: Connections> Connections for Longest<'_, C> {
    fn turn<T>(&self, work: impl FnOnce(&mut Connection) -> T) -> (T, Duration) {
        let (out, took) = self.conns.turn(work);
        self.longest.set(self.longest.get().max(took));
        (out, took)
    }

    fn wanted(&self) -> bool {
        self.conns.wanted()
    }
}

/// The change number handhelds' reference pages stop at while an import
/// applies (that of its flip), so they take it whole; `None` when none is.
pub fn visible_until(conn: &Connection) -> crate::store::sql::Result<Option<i64>> {
    Ok(applying(conn)?.map(|at| at.watermark))
}

/// An import under way, as `GET /v1/admin/imports` lists it: one a client
/// gave up waiting for goes on, and this says how far it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct Underway {
    pub import_id: i64,
    /// `bins`, `units`, `grns`, `manifests`, `operators` or `skus`.
    pub kind: String,
    /// `staging`: its rows are read, checked and set aside, nothing changed
    /// yet (a bad row ends it with nothing imported); `applying`: decided,
    /// applied a turn at a time, and finished by the site whatever
    /// becomes of the client that sent it.
    pub state: String,
    /// The file it reads (`stdin`), or `PUT {kind}` for one sent to the API.
    pub source: String,
    #[schema(value_type = String, format = DateTime)]
    pub started_at: UnixMs,
    /// Its last turn: an import whose last turn is 30 s old was stopped,
    /// and the next import or start of the site finishes or sweeps it.
    #[schema(value_type = String, format = DateTime)]
    pub touched_at: UnixMs,
    /// Rows set aside so far (staging) or in all (applying).
    pub rows: u64,
    /// Rows applied so far (0 while staging).
    pub applied: u64,
}

/// The imports under way, oldest first.
pub fn underway(conn: &Connection) -> crate::store::sql::Result<Vec<Underway>> {
    conn.prepare_cached(
        "SELECT import_id, kind, state, source, started_at, touched_at, row_count,
                (SELECT count(*) FROM import_rows WHERE import_rows.import_id = imports.import_id)
         FROM imports ORDER BY import_id",
    )?
    .query_map([], |row| {
        let state: String = row.get(2)?;
        let total = row.get::<_, i64>(6)? as u64;
        let staged = row.get::<_, i64>(7)? as u64;
        let (rows, applied) = match state.as_str() {
            "applying" => (total, total.saturating_sub(staged)),
            _ => (staged, 0),
        };
        Ok(Underway {
            import_id: row.get(0)?,
            kind: row.get(1)?,
            state,
            source: row.get(3)?,
            started_at: UnixMs(row.get(4)?),
            touched_at: UnixMs(row.get(5)?),
            rows,
            applied,
        })
    })?
    .collect()
}

/// The import that applies, as handhelds' reference pages read around it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Applying {
    pub import_id: i64,
    /// The change number of its flip: pages stop there until it ends.
    pub watermark: i64,
}

/// The import that applies, if one does. Rows changed since its flip are
/// kept as they stood then (`import_before`, migration 0019, written by
/// the schema's triggers), under its id, for pages to read in their old
/// place.
pub fn applying(conn: &Connection) -> crate::store::sql::Result<Option<Applying>> {
    conn.prepare_cached(
        "SELECT import_id, watermark FROM imports
         WHERE state = 'applying' AND watermark IS NOT NULL",
    )?
    .query_row([], |row| {
        Ok(Applying {
            import_id: row.get(0)?,
            watermark: row.get(1)?,
        })
    })
    .optional()
}

/// Finishes what a killed importer left: its staged rows swept if it was
/// still staging, the rest of its rows applied if it had flipped. Only
/// imports whose lease ([`IMPORT_LEASE_MS`]) ran out by `now`: a live one
/// is another process's. Returns the imports applied.
pub fn settle(conns: &impl Connections, now: UnixMs) -> crate::store::sql::Result<usize> {
    sweep_kept(conns)?;
    let stale: Vec<(i64, String, String, i64)> = conns.with(|conn| {
        conn.prepare(
            "SELECT import_id, kind, state, started_at FROM imports
             WHERE touched_at < ?1 ORDER BY import_id",
        )?
        .query_map([now.0 - IMPORT_LEASE_MS], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
        })?
        .collect::<crate::store::sql::Result<Vec<(i64, String, String, i64)>>>()
    })?;
    let mut applied = 0;
    for (import_id, kind, state, started_at) in stale {
        match (state.as_str(), Kind::parse(&kind)) {
            ("applying", Some(kind)) => {
                let changed = apply(conns, import_id, kind, UnixMs(started_at), &|| now)?;
                tracing::info!(
                    import_id,
                    kind = kind.name(),
                    changed,
                    "finished an import a killed importer had decided"
                );
                applied += 1;
            }
            _ => {
                abandon(conns, import_id)?;
                tracing::info!(import_id, %kind, "swept the staged rows of an import that was killed before it was decided");
            }
        }
    }
    Ok(applied)
}

/// Runs one turn (`work`, a whole transaction) again while the database
/// is busy: on SQLite another process (the serving site) held the writer
/// past the busy timeout; on PostgreSQL conflicts went on past
/// [`crate::store::sql::CONFLICT_ATTEMPTS`] or no connection was free. Given up
/// once no turn has finished for [`IMPORT_LEASE_MS`], when the import's
/// lease is gone and the next import or start takes it over anyway.
fn while_busy<T>(
    mut work: impl FnMut() -> crate::store::sql::Result<T>,
) -> crate::store::sql::Result<T> {
    let since = Instant::now();
    let lease = Duration::from_millis(IMPORT_LEASE_MS as u64);
    loop {
        match work() {
            Err(err) if err.is_busy() && since.elapsed() < lease => {
                tracing::warn!(%err, "an import turn found the database busy; running it again");
                std::thread::sleep(APPLYING_POLL);
            }
            other => return other,
        }
    }
}

/// One turn's transaction (`work`, told who waits for the writer) at the
/// writer: a PostgreSQL conflict rerun at once, a busy database again
/// ([`while_busy`]).
fn run_turn<C: Connections, T>(
    conns: &C,
    mut work: impl FnMut(&mut Connection, &dyn Fn() -> bool) -> crate::store::sql::Result<T>,
) -> crate::store::sql::Result<T> {
    while_busy(|| {
        conns
            .turn(|conn| crate::store::sql::retry_conflicts(|| work(conn, &|| conns.wanted())))
            .0
    })
}

#[cfg(test)]
mod tests;
