//! Reference data in: `stockhop-site import bins|units|grns|manifests|operators
//! FILE` and `PUT /v1/admin/reference/{kind}`, CSV (a header row, then one
//! row per bin, unit, GRN line, manifest unit or operator) or a JSON array
//! of the same fields, through one path.
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

use std::collections::VecDeque;
use std::hash::BuildHasher;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::sql::{params, Connection, OptionalExtension, TransactionBehavior};
use serde::{Deserialize, Serialize};
use stockhop::time::UnixMs;

use super::bins::{self, Bin};
use super::operators::{self, Operator};
use super::units::{self, UnitFacts, UnitState};
use super::{grns, manifests};
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
fn turn_budget(engine: crate::sql::Engine) -> Duration {
    match engine {
        crate::sql::Engine::Sqlite => TURN_BUDGET_SQLITE,
        crate::sql::Engine::Postgres => TURN_BUDGET_POSTGRES,
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

fn apply_statement_rows(engine: crate::sql::Engine) -> usize {
    match engine {
        crate::sql::Engine::Sqlite => APPLY_STATEMENT_ROWS_SQLITE,
        crate::sql::Engine::Postgres => APPLY_READ_ROWS as usize,
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
    /// `epc,code,sku,state,bin` (code and bin may be empty)
    Units,
    /// `grn,qc,sku,expected`, one row per line
    Grns,
    /// `manifest,state,epc`, one row per unit
    Manifests,
    /// `badge,name`, one row per operator
    Operators,
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
        }
    }

    fn parse(name: &str) -> Option<Kind> {
        [
            Kind::Bins,
            Kind::Units,
            Kind::Grns,
            Kind::Manifests,
            Kind::Operators,
        ]
        .into_iter()
        .find(|kind| kind.name() == name)
    }
}

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
        source: crate::sql::Error,
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
        source: crate::sql::Error,
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

impl Connections for crate::db::Db {
    /// On SQLite a turn's commit does not wait for the disk while it holds
    /// the writer: the turn's writes are flushed once it is let go, before
    /// the next turn (see [`crate::checkpoint::unflushed`]). So a turn holds
    /// the writer for its work alone, never for a flush that a busy disk
    /// can stretch to tens of milliseconds; each turn is on the disk before
    /// the next begins, and the import returns only once its last one is.
    fn turn<T>(&self, work: impl FnOnce(&mut Connection) -> T) -> (T, Duration) {
        // Timed inside: the writer is held from here, not while waiting.
        let (out, took) = self.call_blocking(|conn| {
            let start = Instant::now();
            let out = crate::checkpoint::unflushed(conn, work);
            (out, start.elapsed())
        });
        if let Some(path) = self.path() {
            if let Err(err) = crate::checkpoint::flush_log(path) {
                tracing::warn!(%err, "an import turn's writes could not be flushed; the next commit flushes them");
            }
        }
        std::thread::sleep(took.mul_f64((1.0 - IMPORT_WRITER_SHARE) / IMPORT_WRITER_SHARE));
        (out, took)
    }

    /// A sync waits for SQLite's one writer (see [`crate::db::Db::writer_wanted`]).
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
    Json(Vec<serde_json::Value>),
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
pub fn visible_until(conn: &Connection) -> crate::sql::Result<Option<i64>> {
    Ok(applying(conn)?.map(|at| at.watermark))
}

/// An import under way, as `GET /v1/admin/imports` lists it: one a client
/// gave up waiting for goes on, and this says how far it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct Underway {
    pub import_id: i64,
    /// `bins`, `units`, `grns`, `manifests` or `operators`.
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
pub fn underway(conn: &Connection) -> crate::sql::Result<Vec<Underway>> {
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
pub fn applying(conn: &Connection) -> crate::sql::Result<Option<Applying>> {
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
pub fn settle(conns: &impl Connections, now: UnixMs) -> crate::sql::Result<usize> {
    sweep_kept(conns)?;
    let stale: Vec<(i64, String, String, i64)> = conns.with(|conn| {
        conn.prepare(
            "SELECT import_id, kind, state, started_at FROM imports
             WHERE touched_at < ?1 ORDER BY import_id",
        )?
        .query_map([now.0 - IMPORT_LEASE_MS], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
        })?
        .collect::<crate::sql::Result<Vec<(i64, String, String, i64)>>>()
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
/// [`crate::sql::CONFLICT_ATTEMPTS`] or no connection was free. Given up
/// once no turn has finished for [`IMPORT_LEASE_MS`], when the import's
/// lease is gone and the next import or start takes it over anyway.
fn while_busy<T>(mut work: impl FnMut() -> crate::sql::Result<T>) -> crate::sql::Result<T> {
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
    mut work: impl FnMut(&mut Connection, &dyn Fn() -> bool) -> crate::sql::Result<T>,
) -> crate::sql::Result<T> {
    while_busy(|| {
        conns
            .turn(|conn| crate::sql::retry_conflicts(|| work(conn, &|| conns.wanted())))
            .0
    })
}

/// Parses, checks and stages every row; returns how many. Stops staging
/// (but goes on checking) at the first bad row.
fn stage<R: std::io::Read>(
    conns: &impl Connections,
    import_id: i64,
    records: &mut Records<R>,
    clock: &dyn Fn() -> UnixMs,
) -> crate::sql::Result<usize> {
    let mut checked = Checked::default();
    let mut ahead: VecDeque<(u64, Row)> = VecDeque::new();
    let mut rows = 0;
    loop {
        let more = records.read_ahead(&mut checked, &mut ahead);
        while !ahead.is_empty() {
            let clean = records.errors.is_empty();
            let now = clock();
            let (consumed, staged, errors) = run_turn(conns, |conn, wanted| {
                stage_turn(conn, import_id, &ahead, clean, now, wanted)
            })?;
            ahead.drain(..consumed);
            rows += staged;
            for error in errors {
                records.error(error.line, error.message);
            }
            if records.errors.len() >= MAX_IMPORT_ERRORS {
                return Ok(rows);
            }
        }
        if !more {
            return Ok(rows);
        }
    }
}

/// One staging transaction: checks rows from the front of `ahead` against
/// the ledger and, while the import is `clean`, writes the good ones, for
/// at most its budget ([`turn_budget`]; [`TURN_FLOOR`] while `wanted`). Returns the
/// rows it took, those it staged and the errors it found.
fn stage_turn(
    conn: &mut Connection,
    import_id: i64,
    ahead: &VecDeque<(u64, Row)>,
    clean: bool,
    now: UnixMs,
    wanted: &dyn Fn() -> bool,
) -> crate::sql::Result<(usize, usize, Vec<LineError>)> {
    let turn = Instant::now();
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let budget = turn_budget(tx.engine());
    let mut consumed = 0;
    let mut staged = 0;
    let mut errors = Vec::new();
    let mut batch: Vec<(u64, String)> = Vec::with_capacity(STAGE_INSERT_ROWS);
    for (line, row) in ahead {
        if consumed > 0 && turn_over(turn.elapsed(), budget, wanted) {
            break;
        }
        consumed += 1;
        match row.check_in(&tx)? {
            Err(message) => errors.push(LineError {
                line: *line,
                message,
            }),
            Ok(()) if clean && errors.is_empty() => {
                let fields = serde_json::to_string(row)
                    .map_err(|err| crate::sql::Error::conversion(0, err.to_string()))?;
                batch.push((*line, fields));
                if batch.len() == STAGE_INSERT_ROWS {
                    staged += insert_staged(&tx, import_id, &mut batch)?;
                }
            }
            Ok(()) => {}
        }
    }
    staged += insert_staged(&tx, import_id, &mut batch)?;
    tx.execute(
        "UPDATE imports SET touched_at = ?2 WHERE import_id = ?1",
        params![import_id, now.0],
    )?;
    tx.commit()?;
    Ok((consumed, staged, errors))
}

fn insert_staged(
    conn: &Connection,
    import_id: i64,
    batch: &mut Vec<(u64, String)>,
) -> crate::sql::Result<usize> {
    if batch.is_empty() {
        return Ok(0);
    }
    let placeholders: Vec<String> = (0..batch.len())
        .map(|i| format!("(?{}, ?{}, ?{})", 3 * i + 1, 3 * i + 2, 3 * i + 3))
        .collect();
    let sql = format!(
        "INSERT INTO import_rows (import_id, line, fields) VALUES {}",
        placeholders.join(", ")
    );
    let mut values: Vec<crate::sql::Value> = Vec::with_capacity(batch.len() * 3);
    for (line, fields) in batch.drain(..) {
        values.push(crate::sql::Value::Integer(import_id));
        values.push(crate::sql::Value::Integer(line as i64));
        values.push(crate::sql::Value::Text(fields));
    }
    conn.prepare_cached(&sql)?.execute(values.as_slice())?;
    Ok(values.len() / 3)
}

/// Sweeps an import that will not be applied: its staged rows a turn at a
/// time, then its row.
fn abandon(conns: &impl Connections, import_id: i64) -> crate::sql::Result<()> {
    loop {
        let (swept, _) = conns.turn(|conn| {
            conn.execute(
                "DELETE FROM import_rows WHERE import_id = ?1 AND line IN
                     (SELECT line FROM import_rows WHERE import_id = ?1 ORDER BY line LIMIT ?2)",
                params![import_id, APPLY_READ_ROWS],
            )
        });
        let swept = swept?;
        if swept == 0 {
            break;
        }
    }
    conns.with(|conn| conn.execute("DELETE FROM imports WHERE import_id = ?1", [import_id]))?;
    Ok(())
}

/// Decides the import: one statement. Waits while another import applies
/// (taking it over once its lease runs out).
fn flip(
    conns: &impl Connections,
    import_id: i64,
    rows: usize,
    clock: &dyn Fn() -> UnixMs,
) -> crate::sql::Result<()> {
    loop {
        let now = clock();
        let flipped = while_busy(|| conns.with(|conn| flip_now(conn, import_id, rows, now)));
        match flipped {
            Ok(_) => return Ok(()),
            Err(err) if err.unique_violation().is_some() => {
                // Keep this import's lease while it waits.
                conns.with(|conn| {
                    conn.execute(
                        "UPDATE imports SET touched_at = ?2 WHERE import_id = ?1",
                        params![import_id, now.0],
                    )
                })?;
                settle(conns, now)?;
                std::thread::sleep(APPLYING_POLL);
            }
            Err(err) => return Err(err),
        }
    }
}

/// The flip's one transaction. On PostgreSQL it first takes the reference
/// lock that every writer of cached rows holds to its commit: every change
/// number at or below the watermark has then committed, and every writer
/// after it sees the import applying, so the schema keeps the rows it
/// changes as they stood at the flip (migration 0019).
fn flip_now(
    conn: &mut Connection,
    import_id: i64,
    rows: usize,
    now: UnixMs,
) -> crate::sql::Result<usize> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    if tx.engine() == crate::sql::Engine::Postgres {
        tx.execute_batch("SELECT 1 FROM reference_lock WHERE id = 1 FOR NO KEY UPDATE")?;
    }
    let flipped = tx.execute(
        "UPDATE imports SET state = 'applying', row_count = ?2, touched_at = ?3,
                watermark = (SELECT seq FROM reference_clock)
         WHERE import_id = ?1",
        params![import_id, rows as i64, now.0],
    )?;
    tx.commit()?;
    Ok(flipped)
}

/// Applies a decided import's staged rows a turn at a time; returns the
/// rows that changed something, this run's and earlier runs' together.
fn apply(
    conns: &impl Connections,
    import_id: i64,
    kind: Kind,
    started_at: UnixMs,
    clock: &dyn Fn() -> UnixMs,
) -> crate::sql::Result<usize> {
    loop {
        let now = clock();
        let done = run_turn(conns, |conn, wanted| {
            apply_turn(conn, import_id, kind, started_at, now, wanted)
        })?;
        if let Some(changed) = done {
            run_turn(conns, |conn, _| finish(conn, import_id))?;
            sweep_kept(conns)?;
            return Ok(changed);
        }
    }
}

/// Ends an applied import: its row deleted, so handhelds' pages go past
/// the change number of its flip again ([`visible_until`]). On PostgreSQL
/// it first takes the reference lock that the apply turns went without
/// (see [`write_unlocked`]): once it holds it, every change number taken
/// before has committed, so a handheld that pages past the import's
/// numbers passes none that commits later.
fn finish(conn: &mut Connection, import_id: i64) -> crate::sql::Result<()> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    if tx.engine() == crate::sql::Engine::Postgres {
        tx.execute_batch("SELECT 1 FROM reference_lock WHERE id = 1 FOR NO KEY UPDATE")?;
    }
    tx.execute("DELETE FROM imports WHERE import_id = ?1", [import_id])?;
    tx.commit()
}

/// Sweeps the rows that imports no longer applying kept as they stood at
/// their flips (migration 0019), [`APPLY_READ_ROWS`] a statement and as
/// many statements as fit a turn ([`turn_budget`]): after an
/// import ends, and at every [`settle`] for an importer killed between its
/// end and its sweep. Returns how many it swept.
fn sweep_kept(conns: &impl Connections) -> crate::sql::Result<usize> {
    let mut swept = 0;
    loop {
        let ended: Option<i64> = conns.with(|conn| {
            conn.query_row(
                "SELECT import_id FROM import_before
                 WHERE import_id NOT IN (SELECT import_id FROM imports WHERE state = 'applying')
                 LIMIT 1",
                [],
                |row| row.get(0),
            )
            .optional()
        })?;
        let Some(import_id) = ended else {
            return Ok(swept);
        };
        loop {
            let n = run_turn(conns, |conn, wanted| sweep_turn(conn, import_id, wanted))?;
            if n == 0 {
                break;
            }
            swept += n;
        }
    }
}

/// One turn of [`sweep_kept`] for the ended import `import_id`: each
/// statement deletes [`APPLY_READ_ROWS`] kept rows, a range of the key
/// from its start (no statement looks at rows another has deleted, or at
/// the rest), as many statements as fit the turn. Returns how many.
fn sweep_turn(
    conn: &mut Connection,
    import_id: i64,
    wanted: &dyn Fn() -> bool,
) -> crate::sql::Result<usize> {
    let turn = Instant::now();
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let budget = turn_budget(tx.engine());
    let mut swept = 0;
    loop {
        let deleted = tx.execute(
            "DELETE FROM import_before WHERE import_id = ?1 AND ref_seq <= coalesce(
                 (SELECT ref_seq FROM import_before WHERE import_id = ?1
                  ORDER BY ref_seq LIMIT 1 OFFSET ?2),
                 9223372036854775807)",
            params![import_id, APPLY_READ_ROWS - 1],
        )?;
        swept += deleted;
        if deleted < APPLY_READ_ROWS as usize || turn_over(turn.elapsed(), budget, wanted) {
            break;
        }
    }
    tx.commit()?;
    Ok(swept)
}

/// Lets an apply turn on PostgreSQL write reference rows without the
/// reference lock, which every other writer of them holds to its commit:
/// a sync that moves a unit then never waits for an import's turn. Safe
/// because no handheld reads past the flip's change number until the
/// import ends, and [`finish`] takes the lock. Not for units: a units row
/// that moves a unit books a hop, whose id needs the lock, and a turn that
/// took it after the units it holds could deadlock with a sync that holds
/// it and wants one of them; those turns lock at their first unit, as
/// before. (SQLite has one writer, which orders every change number.)
fn write_unlocked(tx: &Connection, kind: Kind) -> crate::sql::Result<()> {
    if tx.engine() == crate::sql::Engine::Postgres && kind != Kind::Units {
        tx.execute_batch("SET LOCAL stockhop.import_applying = 'on'")?;
    }
    Ok(())
}

/// One apply transaction of at most about its budget ([`turn_budget`]; [`TURN_FLOOR`]
/// while `wanted`); the import's total of changed rows once the last row
/// is applied (its row is then deleted by [`finish`]), else `None`. Staged
/// rows are read
/// [`APPLY_READ_ROWS`] at a time, so reading never takes the turn's budget
/// from applying; bins go in one statement a read.
fn apply_turn(
    conn: &mut Connection,
    import_id: i64,
    kind: Kind,
    started_at: UnixMs,
    now: UnixMs,
    wanted: &dyn Fn() -> bool,
) -> crate::sql::Result<Option<usize>> {
    let turn = Instant::now();
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    write_unlocked(&tx, kind)?;
    let budget = turn_budget(tx.engine());
    let mut changed = 0_i64;
    let mut last_line = None;
    let finished = loop {
        if last_line.is_some() && turn_over(turn.elapsed(), budget, wanted) {
            break false;
        }
        let staged: Vec<(i64, String)> = tx
            .prepare_cached(
                "SELECT line, fields FROM import_rows WHERE import_id = ?1 AND line > ?2
                 ORDER BY line LIMIT ?3",
            )?
            .query_map(
                params![import_id, last_line.unwrap_or(i64::MIN), APPLY_READ_ROWS],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )?
            .collect::<crate::sql::Result<_>>()?;
        let rows = staged
            .iter()
            .map(|(line, fields)| {
                serde_json::from_str::<Row>(fields)
                    .map(|row| (*line, row))
                    .map_err(|err| crate::sql::Error::conversion(2, err.to_string()))
            })
            .collect::<crate::sql::Result<Vec<(i64, Row)>>>()?;
        if kind == Kind::Bins {
            for chunk in rows.chunks(apply_statement_rows(tx.engine())) {
                if last_line.is_some() && turn_over(turn.elapsed(), budget, wanted) {
                    break;
                }
                changed += apply_bins(&tx, chunk)? as i64;
                last_line = chunk.last().map(|(line, _)| *line).or(last_line);
            }
        } else {
            for (line, row) in &rows {
                if last_line.is_some() && turn_over(turn.elapsed(), budget, wanted) {
                    break;
                }
                match row.apply(&tx, started_at, now, (import_id, *line))? {
                    Applied::Changed => changed += 1,
                    Applied::Same => {}
                    Applied::Skipped(reason) => tracing::warn!(
                        import_id,
                        kind = kind.name(),
                        line,
                        %reason,
                        "an imported row was left out: the ledger changed under it after it was checked"
                    ),
                }
                last_line = Some(*line);
            }
        }
        // Rows are staged before the flip and none after: a short read
        // applied to its end was the last.
        if staged.len() < APPLY_READ_ROWS as usize
            && last_line == staged.last().map(|(line, _)| *line).or(last_line)
        {
            break true;
        }
    };
    if let Some(last_line) = last_line {
        tx.execute(
            "DELETE FROM import_rows WHERE import_id = ?1 AND line <= ?2",
            params![import_id, last_line],
        )?;
    }
    let total: i64 = tx.query_row(
        "UPDATE imports SET changed = changed + ?2, touched_at = ?3 WHERE import_id = ?1
         RETURNING changed",
        params![import_id, changed, now.0],
        |row| row.get(0),
    )?;
    tx.commit()?;
    Ok(finished.then_some(total as usize))
}

/// Writes a read of staged bins in one statement; returns how many changed.
fn apply_bins(conn: &Connection, rows: &[(i64, Row)]) -> crate::sql::Result<usize> {
    let bins: Vec<Bin> = rows
        .iter()
        .filter_map(|(_, row)| match row {
            Row::Bin {
                bin,
                zone,
                location,
            } => Some(Bin {
                bin: bin.clone(),
                zone: zone.clone(),
                location: location.clone(),
            }),
            _ => None,
        })
        .collect();
    bins::upsert_many(conn, &bins)
}

/// Books a unit that a units row moved to another bin or another state
/// as an `ADJUST` hop of the site (`command` `import`, the import and line
/// in its facts), as a count's approval books its variance: stock never
/// changes without a hop, so the hop feed accounts for every move, a
/// file's included (a file that puts back where an older copy had them
/// units the floor has moved since, say).
fn moved(
    conn: &Connection,
    unit: &units::Unit,
    facts: &UnitFacts<'_>,
    version: u64,
    now: UnixMs,
    (import_id, line): (i64, i64),
) -> crate::sql::Result<()> {
    use super::hops::{self, kinds, NewHop, SourceMode};
    use super::modes::{cycle_count::SITE_ACTOR, derived_key};
    let key = derived_key(&[
        "import",
        &import_id.to_string(),
        &line.to_string(),
        &unit.unit_id.to_string(),
        &version.to_string(),
    ]);
    let hop_facts = serde_json::json!({
        "import": import_id,
        "line": line,
        "epc": facts.epc,
        "from_state": unit.state.as_str(),
        "state": facts.state.as_str(),
    });
    hops::append(
        conn,
        &NewHop {
            device_id: SITE_ACTOR,
            session_id: None,
            key: &key,
            client_seq: None,
            command: "import",
            kind: kinds::ADJUST,
            mode: None,
            unit_id: Some(unit.unit_id),
            from_bin: unit.bin.as_deref(),
            to_bin: facts.bin,
            unit_version: Some(version),
            facts: &hop_facts,
            occurred_at: now,
            recorded_at: now,
            device_clock_skew_ms: 0,
            source_mode: SourceMode::Live,
            compensates: None,
            closed_until: super::periods::closed_until(conn)?,
        },
    )?;
    Ok(())
}

/// A row, checked on its own, as staged (JSON in `import_rows.fields`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Row {
    Bin {
        bin: String,
        zone: String,
        location: String,
    },
    Unit {
        epc: String,
        code: Option<String>,
        sku: String,
        state: String,
        bin: Option<String>,
    },
    GrnLine {
        grn: String,
        qc: String,
        sku: String,
        expected: u64,
    },
    ManifestUnit {
        manifest: String,
        state: String,
        epc: String,
    },
    Operator {
        badge: String,
        name: String,
    },
}

enum Applied {
    Changed,
    Same,
    Skipped(String),
}

impl Row {
    /// What the row names in the ledger: a unit's bin and code, a
    /// manifest's unit. `Err` is the reason the row is refused.
    fn check_in(&self, conn: &Connection) -> crate::sql::Result<Result<(), String>> {
        match self {
            Row::Unit { epc, code, bin, .. } => {
                if let Some(code) = code {
                    if let Some(holder) = units::find(conn, None, Some(code))? {
                        if holder.epc.as_deref() != Some(epc.as_str()) {
                            return Ok(Err(format!(
                                "code {code:?} belongs to unit {}",
                                holder.epc.as_deref().unwrap_or("without an epc")
                            )));
                        }
                    }
                }
                if let Some(bin) = bin {
                    if bins::find(conn, bin)?.is_none() {
                        return Ok(Err(format!("unknown bin {bin:?}: import bins first")));
                    }
                }
                Ok(Ok(()))
            }
            Row::ManifestUnit { epc, .. } => {
                if units::find(conn, Some(epc), None)?.is_none() {
                    return Ok(Err(format!("unknown unit {epc:?}: import units first")));
                }
                Ok(Ok(()))
            }
            Row::Bin { .. } | Row::GrnLine { .. } | Row::Operator { .. } => Ok(Ok(())),
        }
    }

    /// Writes the row. A unit whose code another unit took after the row
    /// was checked is left out (the only check the ledger can undo under
    /// an import: bins and units are never deleted).
    /// Applies the row; `started_at` stamps a unit it creates, `now` the
    /// hop of a unit it moves; `at` is the import and line it came from.
    fn apply(
        &self,
        conn: &Connection,
        started_at: UnixMs,
        now: UnixMs,
        at: (i64, i64),
    ) -> crate::sql::Result<Applied> {
        let changed = |yes: bool| if yes { Applied::Changed } else { Applied::Same };
        match self {
            Row::Bin {
                bin,
                zone,
                location,
            } => Ok(changed(bins::upsert(
                conn,
                &Bin {
                    bin: bin.clone(),
                    zone: zone.clone(),
                    location: location.clone(),
                },
            )?)),
            Row::Unit {
                epc,
                code,
                sku,
                state,
                bin,
            } => {
                if let Err(reason) = self.check_in(conn)? {
                    return Ok(Applied::Skipped(reason));
                }
                let state = UnitState::parse(state)
                    .ok_or_else(|| crate::sql::Error::conversion(2, format!("state {state:?}")))?;
                let facts = UnitFacts {
                    epc: Some(epc),
                    code: code.as_deref(),
                    sku: Some(sku),
                    state,
                    bin: bin.as_deref(),
                };
                Ok(match units::find(conn, Some(epc), None)? {
                    Some(unit) => {
                        let version = units::update(conn, &unit, &facts)?;
                        if unit.bin.as_deref() != facts.bin || unit.state != facts.state {
                            moved(conn, &unit, &facts, version, now, at)?;
                        }
                        changed(version != unit.version)
                    }
                    None => {
                        units::create(conn, &facts, started_at)?;
                        Applied::Changed
                    }
                })
            }
            Row::GrnLine {
                grn,
                qc,
                sku,
                expected,
            } => {
                let head = grns::upsert_head(conn, grn, qc)?;
                let line = grns::upsert_line(conn, grn, sku, *expected)?;
                Ok(changed(head || line))
            }
            Row::ManifestUnit {
                manifest,
                state,
                epc,
            } => {
                let head = manifests::upsert(conn, manifest, state)?;
                let added = manifests::add_unit(conn, manifest, epc)?;
                Ok(changed(head || added))
            }
            Row::Operator { badge, name } => Ok(changed(operators::upsert(
                conn,
                &Operator {
                    badge: badge.clone(),
                    name: name.clone(),
                },
            )?)),
        }
    }
}

/// What the rows so far have said: each key's first line, and the value a
/// group's rows must agree on.
///
/// The keys and values are kept in one text, not an allocation each: a
/// million rows' keys are then let go as two allocations when the import
/// is decided. As a million small strings they took the allocator about
/// 150 ms to merge back, at its next large allocation: inside the flip,
/// holding the writer.
#[derive(Default)]
struct Checked {
    /// Every key and value, one after another.
    text: String,
    seen: hashbrown::HashTable<Said>,
    hasher: std::hash::RandomState,
}

/// A key's first line, and the value its group gave there (empty for a
/// key that must not repeat), as places in [`Checked::text`].
struct Said {
    key: std::ops::Range<usize>,
    line: u64,
    value: std::ops::Range<usize>,
}

impl Checked {
    /// Remembers `key` at `line`; a key repeated in the file is an error.
    fn once(&mut self, key: &str, line: u64, what: &str) -> Result<(), String> {
        if let Some(first) = self.find(key) {
            return Err(format!("{what} is already on line {}", first.line));
        }
        self.remember(key, line, "");
        Ok(())
    }

    /// A group's `value` must be the one its first row gave.
    fn agrees(&mut self, group: &str, value: &str, line: u64, what: &str) -> Result<(), String> {
        match self.find(group) {
            Some(first) => {
                let earlier = &self.text[first.value.clone()];
                if earlier == value {
                    Ok(())
                } else {
                    Err(format!(
                        "{what} {value:?} differs from {earlier:?} on line {}",
                        first.line
                    ))
                }
            }
            None => {
                self.remember(group, line, value);
                Ok(())
            }
        }
    }

    fn find(&self, key: &str) -> Option<&Said> {
        let text = &self.text;
        self.seen.find(self.hasher.hash_one(key), |said| {
            &text[said.key.clone()] == key
        })
    }

    fn remember(&mut self, key: &str, line: u64, value: &str) {
        let Checked { text, seen, hasher } = self;
        let start = text.len();
        text.push_str(key);
        let key = start..text.len();
        text.push_str(value);
        let value = key.end..text.len();
        seen.insert_unique(
            hasher.hash_one(&text[key.clone()]),
            Said { key, line, value },
            |said| hasher.hash_one(&text[said.key.clone()]),
        );
    }
}

/// A field: empty is `None` (an error when `required`); too long, with a
/// control character (which no scan could ever match: sync refuses them)
/// or with a direction control (which could show a name reversed on the
/// site's view, [`crate::ident::direction_control`]) is an error. The
/// characters are checked as sync checks a scan's text fields
/// ([`crate::ident::check_text`]).
fn field(value: &str, name: &'static str, required: bool) -> Result<Option<String>, String> {
    if value.is_empty() {
        return if required {
            Err(format!("{name} is empty"))
        } else {
            Ok(None)
        };
    }
    if value.chars().count() > MAX_FIELD_CHARS {
        return Err(format!(
            "{name} is longer than {MAX_FIELD_CHARS} characters"
        ));
    }
    crate::ident::check_text(name, value).map_err(|err| err.to_string())?;
    Ok(Some(value.to_owned()))
}

fn required(value: &str, name: &'static str) -> Result<String, String> {
    Ok(field(value, name, true)?.unwrap_or_default())
}

/// A field a handheld scans or the site's view shows as an identifier
/// (bin, tag, code, GRN, manifest, badge): the one identifier check sync
/// applies, so an import never takes what a scan of it would be refused.
fn identifier(value: &str, name: &'static str) -> Result<String, String> {
    let value = required(value, name)?;
    crate::ident::check(name, &value).map_err(|err| err.to_string())?;
    Ok(value)
}

/// An optional identifier: empty is none, anything else as [`identifier`].
fn optional_identifier(value: &str, name: &'static str) -> Result<Option<String>, String> {
    if value.is_empty() {
        return Ok(None);
    }
    identifier(value, name).map(Some)
}

fn one_of(value: &str, name: &str, allowed: &[&str]) -> Result<(), String> {
    if allowed.contains(&value) {
        Ok(())
    } else {
        Err(format!(
            "{name} {value:?} is not one of {}",
            allowed.join(", ")
        ))
    }
}

/// How far into a CSV input the import looks to see whether it is plainly
/// something else ([`NotCsv`]), in bytes: to the end of its first line, or
/// less once it shows itself JSON. A header is tens of bytes; the bound
/// keeps a file of one endless line from being held here (its first
/// 64 KiB are looked at; the whole input is read as CSV all the same).
pub const LOOK_AHEAD_BYTES: usize = 64 * 1024;

/// What a CSV input plainly is instead, seen in its first bytes: JSON
/// (sent or saved as CSV), or a file a spreadsheet saved with `;` (or
/// tabs) between its fields, as Excel does in locales whose decimal mark
/// is a comma. The import would only say the header names no column; this
/// says what to change. The command line and the endpoint both read it
/// here, as the import reads the header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotCsv {
    /// Its first byte past blanks (and a byte order mark) is `[` or `{`.
    Json,
    /// Its first line has no comma but `;` or tabs: the separator as told
    /// (`';'`, `tabs`).
    Separated(&'static str),
    /// It begins with UTF-16's byte order mark (Excel's "Unicode Text").
    Utf16,
}

impl NotCsv {
    /// What `head`, an input's first bytes (from [`look_ahead`]), plainly
    /// is if not CSV.
    pub fn find(head: &[u8]) -> Option<NotCsv> {
        if utf16(head) {
            return Some(NotCsv::Utf16);
        }
        let text = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head);
        let start = text.iter().position(|byte| !byte.is_ascii_whitespace())?;
        if matches!(text[start], b'[' | b'{') {
            return Some(NotCsv::Json);
        }
        let header = &text[..text
            .iter()
            .position(|byte| matches!(byte, b'\n' | b'\r'))
            .unwrap_or(text.len())];
        [(b';', "';'"), (b'\t', "tabs")]
            .into_iter()
            .find(|(byte, _)| !header.contains(&b',') && header.contains(byte))
            .map(|(_, told)| NotCsv::Separated(told))
    }

    /// Whether `head` holds all [`NotCsv::find`] reads: a byte past blanks,
    /// and the end of the first line unless that byte opens JSON.
    fn seen_enough(head: &[u8]) -> bool {
        if utf16(head) {
            return true;
        }
        let text = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head);
        match text.iter().position(|byte| !byte.is_ascii_whitespace()) {
            None => false,
            Some(start) if matches!(text[start], b'[' | b'{') => true,
            Some(_) => text.iter().any(|byte| matches!(byte, b'\n' | b'\r')),
        }
    }

    /// What to change, for a file of `kind`.
    pub fn message(self, kind: Kind) -> String {
        let columns = kind.columns().join(",");
        match self {
            NotCsv::Json => format!(
                "the file is JSON, not CSV: save it as CSV with a header row ({columns}), \
                 or send the JSON array to PUT /v1/admin/reference/{} as application/json",
                kind.name()
            ),
            NotCsv::Separated(told) => format!(
                "the header is separated by {told}, not commas: save the file as CSV with commas \
                 ({columns})"
            ),
            NotCsv::Utf16 => "the file is UTF-16 (as Excel's \"Unicode Text\" saves it), \
                              not UTF-8: save it as \"CSV UTF-8 (Comma delimited)\" and \
                              import it again"
                .to_owned(),
        }
    }
}

/// Whether `head` begins with UTF-16's byte order mark, either way round.
fn utf16(head: &[u8]) -> bool {
    head.starts_with(b"\xff\xfe") || head.starts_with(b"\xfe\xff")
}

/// The first bytes of `input`, as far as [`NotCsv::find`] needs them and
/// at most [`LOOK_AHEAD_BYTES`]; `input` goes on after them.
fn look_ahead(input: &mut impl std::io::Read) -> std::io::Result<Vec<u8>> {
    let mut head = Vec::new();
    let mut chunk = [0; 8 * 1024];
    while head.len() < LOOK_AHEAD_BYTES && !NotCsv::seen_enough(&head) {
        let want = chunk.len().min(LOOK_AHEAD_BYTES - head.len());
        match input.read(&mut chunk[..want]) {
            Ok(0) => break,
            Ok(read) => head.extend_from_slice(&chunk[..read]),
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
    Ok(head)
}

/// The input's records as CSV records under a header, with their lines;
/// the errors found so far.
struct Records<R> {
    kind: Kind,
    headers: csv::StringRecord,
    input: Input<R>,
    errors: Vec<LineError>,
}

enum Input<R> {
    Csv(
        csv::StringRecordsIntoIter<LineCounting<Looked<R>>>,
        LineStarts,
    ),
    Json(std::iter::Enumerate<std::vec::IntoIter<serde_json::Value>>),
}

/// A CSV input read on from its start after [`look_ahead`] read its first
/// bytes.
type Looked<R> = std::io::Chain<std::io::Cursor<Vec<u8>>, R>;

impl<R: std::io::Read> Records<R> {
    fn new(kind: Kind, file: &str, source: Source<R>) -> Result<Records<R>, ImportError> {
        let header_error = |message: String| ImportError::Invalid {
            file: file.to_owned(),
            errors: vec![LineError { line: 1, message }],
        };
        let (headers, input) = match source {
            Source::Csv(mut reader) => {
                let head = look_ahead(&mut reader)
                    .map_err(|err| header_error(csv::Error::from(err).to_string()))?;
                if let Some(found) = NotCsv::find(&head) {
                    return Err(ImportError::NotCsv {
                        file: file.to_owned(),
                        kind,
                        found,
                    });
                }
                let reader = std::io::Read::chain(std::io::Cursor::new(head), reader);
                let starts = LineStarts::default();
                // Flexible: a row with too few or too many fields is told
                // as such at its line, and the rows after
                // it are still checked.
                let mut reader = csv::ReaderBuilder::new()
                    .trim(csv::Trim::All)
                    .flexible(true)
                    .from_reader(LineCounting::new(reader, starts.clone()));
                let headers = reader
                    .headers()
                    .map_err(|err| header_error(csv_message(&err, None)))?
                    .clone();
                if headers.is_empty() {
                    return Err(header_error(format!(
                        "the file is empty: its first line names the columns ({}), then a row a line",
                        kind.columns().join(",")
                    )));
                }
                let headers = header_columns(kind, &headers).map_err(header_error)?;
                (headers, Input::Csv(reader.into_records(), starts))
            }
            Source::Json(values) => (
                csv::StringRecord::from(kind.columns().to_vec()),
                Input::Json(values.into_iter().enumerate()),
            ),
        };
        Ok(Records {
            kind,
            headers,
            input,
            errors: Vec::new(),
        })
    }

    fn error(&mut self, line: u64, message: String) {
        if self.errors.len() < MAX_IMPORT_ERRORS {
            self.errors.push(LineError { line, message });
        }
    }

    /// Reads up to [`PARSE_AHEAD_ROWS`] good rows into `ahead`; false once
    /// the input is done (or cannot be read on).
    fn read_ahead(&mut self, checked: &mut Checked, ahead: &mut VecDeque<(u64, Row)>) -> bool {
        while ahead.len() < PARSE_AHEAD_ROWS {
            if self.errors.len() >= MAX_IMPORT_ERRORS {
                return false;
            }
            let (line, record) = match self.next_record() {
                None => return false,
                Some(Err(error)) => {
                    self.error(error.line, error.message);
                    // A CSV that cannot be split into records cannot be
                    // read on reliably; a JSON element stands alone.
                    if matches!(self.input, Input::Csv(..)) {
                        return false;
                    }
                    continue;
                }
                Some(Ok(record)) => record,
            };
            if record.iter().all(str::is_empty) {
                self.error(
                    line,
                    "the line is empty but for its commas (a spreadsheet's leftover row): \
                     delete it"
                        .to_owned(),
                );
                continue;
            }
            if record.len() != self.headers.len() {
                let why = match record.len() < self.headers.len() {
                    true => "a value is missing, or a double quote opened here is never closed",
                    false => "a value holding a comma is put in double quotes",
                };
                let message = format!(
                    "this line has {} field{} where the header names {} ({}): {why}",
                    record.len(),
                    if record.len() == 1 { "" } else { "s" },
                    self.headers.len(),
                    self.headers.iter().collect::<Vec<_>>().join(","),
                );
                self.error(line, message);
                continue;
            }
            match self.row(&record, line, checked) {
                Ok(row) => ahead.push_back((line, row)),
                Err(message) => self.error(line, message),
            }
        }
        true
    }

    fn next_record(&mut self) -> Option<Result<(u64, csv::StringRecord), LineError>> {
        match &mut self.input {
            Input::Csv(records, starts) => Some(match records.next()? {
                Ok(record) => Ok((starts.line_at(record.position()), record)),
                Err(err) => Err(LineError {
                    line: starts.line_at(err.position()),
                    message: csv_message(&err, Some(&self.headers)),
                }),
            }),
            Input::Json(values) => {
                let (index, value) = values.next()?;
                let line = index as u64 + 1;
                Some(
                    json_record(self.kind, &value)
                        .map(|record| (line, record))
                        .map_err(|message| LineError { line, message }),
                )
            }
        }
    }

    fn row(
        &self,
        record: &csv::StringRecord,
        line: u64,
        checked: &mut Checked,
    ) -> Result<Row, String> {
        match self.kind {
            Kind::Bins => {
                let row: BinRow = read(record, &self.headers)?;
                let bin = identifier(&row.bin, "bin")?;
                let zone = required(&row.zone, "zone")?;
                let location = required(&row.location, "location")?;
                checked.once(&format!("bin\0{bin}"), line, &format!("bin {bin:?}"))?;
                Ok(Row::Bin {
                    bin,
                    zone,
                    location,
                })
            }
            Kind::Units => {
                let row: UnitRow = read(record, &self.headers)?;
                let epc = crate::ident::canonical_epc(identifier(&row.epc, "epc")?);
                let code = optional_identifier(&row.code, "code")?;
                let sku = required(&row.sku, "sku")?;
                if UnitState::parse(&row.state).is_none() {
                    return Err(format!(
                        "state {:?} is not one of new, in_stock, dispatched, missing",
                        row.state
                    ));
                }
                let bin = optional_identifier(&row.bin, "bin")?;
                checked.once(&format!("epc\0{epc}"), line, &format!("epc {epc:?}"))?;
                if let Some(code) = &code {
                    checked.once(&format!("code\0{code}"), line, &format!("code {code:?}"))?;
                }
                Ok(Row::Unit {
                    epc,
                    code,
                    sku,
                    state: row.state,
                    bin,
                })
            }
            Kind::Grns => {
                let row: GrnRow = read(record, &self.headers)?;
                let grn = identifier(&row.grn, "grn")?;
                one_of(&row.qc, "qc", &grns::qc::ALL)?;
                let sku = required(&row.sku, "sku")?;
                let expected: u64 = row.expected.parse().map_err(|_| {
                    format!("expected {:?} is not a whole number of units", row.expected)
                })?;
                if expected > i64::MAX as u64 {
                    return Err("expected is out of range".into());
                }
                checked.agrees(&format!("grn\0{grn}"), &row.qc, line, "qc")?;
                checked.once(
                    &format!("line\0{grn}\0{sku}"),
                    line,
                    &format!("sku {sku:?} of GRN {grn:?}"),
                )?;
                Ok(Row::GrnLine {
                    grn,
                    qc: row.qc,
                    sku,
                    expected,
                })
            }
            Kind::Manifests => {
                let row: ManifestRow = read(record, &self.headers)?;
                let manifest = identifier(&row.manifest, "manifest")?;
                one_of(&row.state, "state", &manifests::states::ALL)?;
                let epc = crate::ident::canonical_epc(identifier(&row.epc, "epc")?);
                checked.agrees(&format!("manifest\0{manifest}"), &row.state, line, "state")?;
                checked.once(
                    &format!("unit\0{manifest}\0{epc}"),
                    line,
                    &format!("epc {epc:?} of manifest {manifest:?}"),
                )?;
                Ok(Row::ManifestUnit {
                    manifest,
                    state: row.state,
                    epc,
                })
            }
            Kind::Operators => {
                // A badge is scanned and a name is shown: both required,
                // and `field` refuses control characters and direction
                // controls in either.
                let row: OperatorRow = read(record, &self.headers)?;
                let badge = identifier(&row.badge, "badge")?;
                let name = required(&row.name, "name")?;
                checked.once(
                    &format!("badge\0{badge}"),
                    line,
                    &format!("badge {badge:?}"),
                )?;
                Ok(Row::Operator { badge, name })
            }
        }
    }
}

/// What a CSV input that cannot be read is told at its line. The csv
/// crate's own words, except for text that is not UTF-8: a spreadsheet's
/// plain "CSV" (Excel's on Windows) is Windows-1252, where "é" is the one
/// byte 0xE9, and the crate's "invalid utf-8 in field 1 near byte index 3"
/// says neither that the whole file is in another encoding nor what to
/// do. The header and every row are read here, for the command line and
/// the endpoint alike; `headers` names the field of a row.
fn csv_message(err: &csv::Error, headers: Option<&csv::StringRecord>) -> String {
    let csv::ErrorKind::Utf8 { err: utf8, .. } = err.kind() else {
        return err.to_string();
    };
    let field = match headers.and_then(|headers| headers.get(utf8.field())) {
        Some(column) => format!("the {column:?} field of this line"),
        None if headers.is_none() => format!("field {} of the header", utf8.field() + 1),
        None => format!("field {} of this line", utf8.field() + 1),
    };
    format!(
        "the file is not UTF-8: {field} holds a byte that is not UTF-8 text (as a \
         spreadsheet's plain CSV writes \"é\" in Windows-1252); save the file as UTF-8 \
         (in Excel, \"CSV UTF-8 (Comma delimited)\") and import it again"
    )
}

/// Where the lines of a CSV input that hold something begin, as its
/// reader passes them to the CSV parser: `(byte offset, line from 1)`, the
/// lines an editor shows. The parser's own line count does not serve: it
/// counts `\n` alone, and gives a row after a `\r\n` the line before it
/// (two rows one line in a file that mixes line ends, every row one line
/// early in a CRLF file). Only the lines in the parser's buffer are kept.
#[derive(Clone, Default)]
struct LineStarts(std::rc::Rc<std::cell::RefCell<VecDeque<(u64, u64)>>>);

impl LineStarts {
    /// The line of the record that the parser began reading at
    /// `position`: the first line holding something from there on (the
    /// parser begins a record right after the last one's first line-end
    /// byte, and skips empty lines).
    fn line_at(&self, position: Option<&csv::Position>) -> u64 {
        let Some(position) = position else { return 0 };
        let mut starts = self.0.borrow_mut();
        while starts
            .front()
            .is_some_and(|(offset, _)| *offset < position.byte())
        {
            starts.pop_front();
        }
        starts
            .front()
            .map_or_else(|| position.line(), |(_, line)| *line)
    }
}

/// A reader that notes in [`LineStarts`] where each line that holds
/// something begins. A line ends at `\n`, `\r\n` or a lone `\r`, as the
/// CSV parser ends a record.
struct LineCounting<R> {
    inner: R,
    starts: LineStarts,
    offset: u64,
    line: u64,
    at_line_start: bool,
    after_cr: bool,
}

impl<R> LineCounting<R> {
    fn new(inner: R, starts: LineStarts) -> LineCounting<R> {
        LineCounting {
            inner,
            starts,
            offset: 0,
            line: 1,
            at_line_start: true,
            after_cr: false,
        }
    }
}

impl<R: std::io::Read> std::io::Read for LineCounting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let read = self.inner.read(buf)?;
        let mut starts = self.starts.0.borrow_mut();
        for &byte in &buf[..read] {
            if self.after_cr && byte != b'\n' {
                // A lone `\r` ended the line.
                self.line += 1;
                self.at_line_start = true;
            }
            self.after_cr = byte == b'\r';
            match byte {
                b'\n' => {
                    self.line += 1;
                    self.at_line_start = true;
                }
                b'\r' => {}
                _ if self.at_line_start => {
                    starts.push_back((self.offset, self.line));
                    self.at_line_start = false;
                }
                _ => {}
            }
            self.offset += 1;
        }
        Ok(read)
    }
}

/// Other columns a refused header's message names as the likely
/// misspelling of a missing one: a few, so a file whose line ends were
/// lost (one line of thousands of fields) is told in a line.
const MAX_NAMED_COLUMNS: usize = 5;

/// A CSV header as the rows are read under it: each name in lower case
/// (a spreadsheet's `Bin` is `bin`), every column of `kind` named once.
/// Columns the kind does not have are left alone (an export from another
/// system carries more), but named when a column is missing, as the
/// likely misspelling of it.
fn header_columns(kind: Kind, headers: &csv::StringRecord) -> Result<csv::StringRecord, String> {
    let named: csv::StringRecord = headers.iter().map(str::to_lowercase).collect();
    let expected = kind.columns().join(",");
    for column in kind.columns() {
        match named.iter().filter(|name| name == column).count() {
            1 => {}
            0 => {
                let mut others: Vec<String> = named
                    .iter()
                    .filter(|name| !name.is_empty() && !kind.columns().contains(name))
                    .map(|name| format!("{name:?}"))
                    .collect();
                let count = others.len();
                if count > MAX_NAMED_COLUMNS {
                    others.truncate(MAX_NAMED_COLUMNS);
                    others.push(format!("and {} more", count - MAX_NAMED_COLUMNS));
                }
                let besides = match count {
                    0 => String::new(),
                    1 => format!("; it names {}, which is not one", others[0]),
                    _ => format!("; it names {}, which are not", others.join(", ")),
                };
                return Err(format!(
                    "the header names no {column:?} column{besides} (expected {expected})"
                ));
            }
            _ => {
                return Err(format!(
                    "the header names the {column:?} column twice (expected {expected})"
                ))
            }
        }
    }
    Ok(named)
}

/// A JSON array element as a record in [`Kind::columns`] order: strings
/// as they are, numbers and booleans as their text, null or absent empty.
/// A field the kind does not have is an error: a CSV header must name
/// every column, but an element leaves an optional field out by not naming
/// it, so a misspelt one (`"Bin"` for `"bin"`) would be dropped and the row
/// imported without it.
fn json_record(kind: Kind, value: &serde_json::Value) -> Result<csv::StringRecord, String> {
    let Some(object) = value.as_object() else {
        return Err(format!(
            "each element is an object with the fields {}",
            kind.columns().join(", ")
        ));
    };
    let unknown: Vec<String> = object
        .keys()
        .filter(|field| !kind.columns().contains(&field.as_str()))
        .map(|field| format!("{field:?}"))
        .collect();
    if !unknown.is_empty() {
        return Err(format!(
            "unknown field{} {}: the fields of {} are {}",
            if unknown.len() == 1 { "" } else { "s" },
            unknown.join(", "),
            kind.name(),
            kind.columns().join(", ")
        ));
    }
    let mut record = csv::StringRecord::new();
    for column in kind.columns() {
        match object.get(*column) {
            None | Some(serde_json::Value::Null) => record.push_field(""),
            Some(serde_json::Value::String(text)) => record.push_field(text.trim()),
            Some(serde_json::Value::Number(number)) => record.push_field(&number.to_string()),
            Some(serde_json::Value::Bool(flag)) => record.push_field(&flag.to_string()),
            Some(_) => return Err(format!("{column} is not a string or a number")),
        }
    }
    Ok(record)
}

fn read<T: serde::de::DeserializeOwned>(
    record: &csv::StringRecord,
    headers: &csv::StringRecord,
) -> Result<T, String> {
    record
        .deserialize(Some(headers))
        .map_err(|err| match err.kind() {
            csv::ErrorKind::Deserialize { err, .. } => err.to_string(),
            _ => err.to_string(),
        })
}

// The rows as a file or a JSON element gives them: the fields of
// [`Kind::columns`], each as text (a JSON number or boolean as its text).
// Their schemas are those of `PUT /v1/admin/reference/{kind}`'s JSON
// elements in the OpenAPI document.

/// A bin: `bin` (its label), the `zone` it is in and the zone's `location`.
#[derive(Deserialize, utoipa::ToSchema)]
#[schema(as = ImportBin)]
pub(crate) struct BinRow {
    bin: String,
    zone: String,
    location: String,
}

/// A unit: its `epc`, an optional `code` (barcode), its `sku`, its `state`
/// and, when in stock, its `bin`.
#[derive(Deserialize, utoipa::ToSchema)]
#[schema(as = ImportUnit)]
pub(crate) struct UnitRow {
    epc: String,
    #[schema(required = false, nullable)]
    code: String,
    sku: String,
    state: String,
    #[schema(required = false, nullable)]
    bin: String,
}

/// A GRN line: the GRN, its QC disposition (the same on each of its
/// lines), a SKU and the units expected of it.
#[derive(Deserialize, utoipa::ToSchema)]
#[schema(as = ImportGrnLine)]
pub(crate) struct GrnRow {
    grn: String,
    qc: String,
    sku: String,
    /// A whole number of units (a number, or its text).
    #[schema(value_type = u64)]
    expected: String,
}

/// An operator: the `badge` that opens sessions and the `name` shown.
#[derive(Deserialize, utoipa::ToSchema)]
#[schema(as = ImportOperator)]
pub(crate) struct OperatorRow {
    badge: String,
    name: String,
}

/// A unit of a manifest: the manifest, its state (the same on each of its
/// units) and the unit's EPC.
#[derive(Deserialize, utoipa::ToSchema)]
#[schema(as = ImportManifestUnit)]
pub(crate) struct ManifestRow {
    manifest: String,
    state: String,
    epc: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_turn_gives_way_past_its_floor_only_while_the_writer_is_wanted() {
        let unasked = || -> bool { panic!("asked before the floor") };
        for budget in [TURN_BUDGET_SQLITE, TURN_BUDGET_POSTGRES] {
            assert!(TURN_FLOOR < budget);
            assert!(!turn_over(Duration::ZERO, budget, unasked));
            let before_floor = TURN_FLOOR - Duration::from_micros(1);
            assert!(!turn_over(before_floor, budget, unasked));
            assert!(!turn_over(TURN_FLOOR, budget, || false));
            assert!(turn_over(TURN_FLOOR, budget, || true));
            let before_end = budget - Duration::from_micros(1);
            assert!(!turn_over(before_end, budget, || false));
            assert!(turn_over(budget, budget, || false));
        }
    }

    /// One connection whose every turn is wanted by someone else.
    struct Wanted<'a>(std::cell::RefCell<&'a mut Connection>);

    impl Connections for Wanted<'_> {
        fn turn<T>(&self, work: impl FnOnce(&mut Connection) -> T) -> (T, Duration) {
            self.0.turn(work)
        }

        fn wanted(&self) -> bool {
            true
        }
    }

    #[test]
    fn an_import_that_gives_way_every_turn_still_lands_whole() {
        let dir = tempfile::tempdir().unwrap();
        let mut sqlite = crate::db::open_connection(&dir.path().join("db.sqlite")).unwrap();
        crate::db::migrate(&mut sqlite).unwrap();
        let mut conn = Connection::Sqlite(sqlite);
        let rows = 3 * APPLY_READ_ROWS as usize + 1;
        let mut csv = String::from("bin,zone,location\n");
        for i in 0..rows {
            csv.push_str(&format!("B-{i},Z-1,L-1\n"));
        }
        let conns = Wanted(std::cell::RefCell::new(&mut conn));
        let summary = run(
            &conns,
            Kind::Bins,
            "bins.csv",
            Source::Csv(csv.as_bytes()),
            &|| UnixMs(1),
        )
        .unwrap();
        assert_eq!((summary.rows, summary.changed), (rows, rows));
        let (bins, staged, imports): (i64, i64, i64) = conn
            .query_row(
                "SELECT (SELECT count(*) FROM bins), (SELECT count(*) FROM import_rows),
                        (SELECT count(*) FROM imports)",
                [],
                |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
            )
            .unwrap();
        assert_eq!((bins, staged, imports), (rows as i64, 0, 0));
    }

    fn migrated_in_memory() -> Connection {
        let mut sqlite = rusqlite::Connection::open_in_memory().unwrap();
        crate::db::migrate(&mut sqlite).unwrap();
        Connection::Sqlite(sqlite)
    }

    /// The lines `run` reports for the bad rows (an empty bin) of `csv`.
    fn bad_lines(csv: &str) -> Vec<u64> {
        let mut conn = migrated_in_memory();
        let conns = std::cell::RefCell::new(&mut conn);
        match run(
            &conns,
            Kind::Bins,
            "bins.csv",
            Source::Csv(csv.as_bytes()),
            &|| UnixMs(1),
        ) {
            Err(ImportError::Invalid { errors, .. }) => {
                errors.into_iter().map(|error| error.line).collect()
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_bad_row_is_told_at_its_line_whatever_ends_the_lines() {
        let rows = ["B-1,Z,L", ",Z,L", "B-2,Z,L", ",Z,L"];
        for end in ["\n", "\r\n", "\r"] {
            let csv = format!("bin,zone,location{end}{}{end}", rows.join(end));
            assert_eq!(bad_lines(&csv), [3, 5], "lines ended by {end:?}");
        }
        // Mixed ends, an empty line, a quoted field over two lines (a
        // line end in a zone is a control character: refused on its
        // first line).
        let csv = "bin,zone,location\nB-1,Z,L\r\n,Z,L\r\n\r\nB-2,\"Z\nZ\",L\r,Z,L\n";
        assert_eq!(bad_lines(csv), [3, 5, 7]);
    }

    #[test]
    fn a_file_with_mixed_line_ends_imports_every_row() {
        let mut conn = migrated_in_memory();
        let csv =
            "bin,zone,location\nH-01-01,H,DC1\r\nH-01-02,H,DC1\r\nH-01-03,H,DC1\rH-01-04,H,DC1\n";
        let summary =
            import_reader(&mut conn, Kind::Bins, "c5.csv", csv.as_bytes(), UnixMs(1)).unwrap();
        assert_eq!((summary.rows, summary.changed), (4, 4));
    }

    #[test]
    fn a_field_with_a_control_character_is_refused_like_a_scan_of_it() {
        assert_eq!(field("B-1", "bin", true), Ok(Some("B-1".into())));
        for bad in ["B\u{0}1", "B\u{1b}[31m", "B\u{7f}"] {
            assert_eq!(
                field(bad, "bin", true),
                Err("bin must not contain control characters".into())
            );
        }
    }

    #[test]
    fn a_field_with_a_direction_control_is_refused_naming_its_code_point() {
        for (bad, code) in [("Ann\u{202E}eeL", "U+202E"), ("\u{2067}Bo", "U+2067")] {
            let refused = field(bad, "name", true).unwrap_err();
            assert!(
                refused.starts_with(&format!("name must not contain {code}")),
                "{refused}"
            );
        }
        // In a file: the operator's name and the bin's zone, each at its
        // line, and nothing imported.
        let (told, conn) = refusal(
            Kind::Operators,
            "badge,name\nOP-1,Ann Lee\nOP-2,\"\u{202E}eeL nnA\"\n".as_bytes(),
        );
        assert_eq!(told.len(), 1, "{told:?}");
        assert_eq!(told[0].0, 3);
        assert!(
            told[0].1.starts_with("name must not contain U+202E"),
            "{told:?}"
        );
        let operators: i64 = conn
            .query_row("SELECT count(*) FROM operators", [], |row| row.get(0))
            .unwrap();
        assert_eq!(operators, 0);
        let (told, _) = refusal(
            Kind::Bins,
            "bin,zone,location\nB-1,Z\u{2066}A\u{2069},L\n".as_bytes(),
        );
        assert_eq!(told[0].0, 2);
        assert!(
            told[0].1.starts_with("zone must not contain U+2066"),
            "{told:?}"
        );
    }

    #[test]
    fn a_spreadsheets_header_in_capitals_and_with_a_byte_order_mark_reads_as_the_columns() {
        // Excel's "CSV UTF-8" starts with a byte order mark; people write
        // headers capitalised.
        let mut conn = migrated_in_memory();
        let csv = "\u{feff}Bin, Zone ,LOCATION,Note\nB-1,Z-1,L-1,by the door\n";
        let summary =
            import_reader(&mut conn, Kind::Bins, "file.csv", csv.as_bytes(), UnixMs(1)).unwrap();
        assert_eq!((summary.rows, summary.changed), (1, 1));
        let bin = bins::find(&conn, "B-1").unwrap().unwrap();
        assert_eq!((bin.zone.as_str(), bin.location.as_str()), ("Z-1", "L-1"));
    }

    #[test]
    fn a_row_with_too_few_or_too_many_fields_is_told_at_its_line_and_the_rest_still_checked() {
        let (told, conn) = refusal(
            Kind::Bins,
            b"bin,zone,location\nB-1,Z\nB-2,Z,L,Dock 1, east\nB-3,Z,L\n,Z,L\n,,\n",
        );
        assert_eq!(
            told,
            [
                (
                    2,
                    "this line has 2 fields where the header names 3 (bin,zone,location): \
                     a value is missing, or a double quote opened here is never closed"
                        .to_owned()
                ),
                (
                    3,
                    "this line has 5 fields where the header names 3 (bin,zone,location): \
                     a value holding a comma is put in double quotes"
                        .to_owned()
                ),
                (5, "bin is empty".to_owned()),
                (
                    6,
                    "the line is empty but for its commas (a spreadsheet's leftover row): \
                     delete it"
                        .to_owned()
                ),
            ]
        );
        assert_eq!(bins::find(&conn, "B-3").unwrap(), None, "nothing imported");
    }

    #[test]
    fn a_utf16_file_is_told_to_be_saved_as_utf8() {
        let mut conn = migrated_in_memory();
        // Excel's "Unicode Text": UTF-16 little-endian after its mark.
        let text: Vec<u8> = [0xff, 0xfe]
            .into_iter()
            .chain(
                "bin,zone,location\n"
                    .encode_utf16()
                    .flat_map(u16::to_le_bytes),
            )
            .collect();
        match import_reader(
            &mut conn,
            Kind::Bins,
            "file.csv",
            text.as_slice(),
            UnixMs(1),
        ) {
            Err(
                err @ ImportError::NotCsv {
                    found: NotCsv::Utf16,
                    ..
                },
            ) => assert!(
                err.to_string()
                    .starts_with("file.csv:1: the file is UTF-16"),
                "{err}"
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_header_missing_a_column_names_what_it_has_instead_and_a_column_named_twice_is_told() {
        let (told, _) = refusal(Kind::Units, b"epc,cdoe,sku,state,bin\nE-1,,S,new,\n");
        assert_eq!(
            told,
            [(
                1,
                "the header names no \"code\" column; it names \"cdoe\", which is not one \
                 (expected epc,code,sku,state,bin)"
                    .to_owned()
            )]
        );
        let (told, _) = refusal(Kind::Bins, b"bin,Bin,zone,location\nB-1,B-1,Z,L\n");
        assert_eq!(
            told,
            [(
                1,
                "the header names the \"bin\" column twice (expected bin,zone,location)".to_owned()
            )]
        );
    }

    /// The error of importing `csv` as `kind` into a new ledger: each line
    /// and message, and the ledger after it.
    fn refusal(kind: Kind, csv: &[u8]) -> (Vec<(u64, String)>, Connection) {
        let mut conn = migrated_in_memory();
        match import_reader(&mut conn, kind, "file.csv", csv, UnixMs(1)) {
            Err(ImportError::Invalid { errors, .. }) => (
                errors
                    .into_iter()
                    .map(|error| (error.line, error.message))
                    .collect(),
                conn,
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_file_that_is_not_utf8_is_told_at_its_line_to_be_saved_as_utf8() {
        // Excel's plain CSV on Windows: "é" is the byte 0xE9.
        let (told, _) = refusal(
            Kind::Bins,
            b"bin,zone,location\r\nB-1,Z,L\r\nB-2,Entr\xe9e,L\r\n",
        );
        assert_eq!(told.len(), 1, "{told:?}");
        let (line, message) = &told[0];
        assert_eq!(*line, 3);
        assert!(
            message.starts_with("the file is not UTF-8: the \"zone\" field of this line"),
            "{message}"
        );
        assert!(message.contains("save the file as UTF-8"), "{message}");
        assert!(message.contains("CSV UTF-8"), "{message}");
        // In the header, it is line 1.
        let (told, _) = refusal(Kind::Bins, b"bin,zon\xe9,location\nB-1,Z,L\n");
        assert_eq!(told[0].0, 1);
        assert!(
            told[0]
                .1
                .starts_with("the file is not UTF-8: field 2 of the header"),
            "{told:?}"
        );
    }

    #[test]
    fn a_json_element_reads_as_the_csv_row_of_the_same_fields() {
        let record = json_record(
            Kind::Grns,
            &serde_json::json!({"grn": "G-1", "qc": "accepted", "sku": "S", "expected": 3}),
        )
        .unwrap();
        assert_eq!(
            record,
            csv::StringRecord::from(vec!["G-1", "accepted", "S", "3"])
        );
        assert!(json_record(Kind::Bins, &serde_json::json!(["B-1"])).is_err());
    }
}
