//! `stockhop-site import bins|units|grns|manifests|operators FILE`:
//! reference data from CSV (a header row, then one row per bin, unit, GRN
//! line, manifest unit or operator).
//!
//! One transaction per file: a bad row fails the whole file with
//! `FILE:LINE: reason` and nothing of it is written. Importing the same
//! rows again changes nothing; a row that changes a unit bumps its
//! version, so devices that read the old one get `stale_state`. Rows add
//! and update; nothing is deleted by leaving it out of a file (a GRN line
//! or a manifest unit the ledger has counted must not vanish under it).

use std::collections::HashMap;
use std::path::Path;

use crate::sql::Connection;
use serde::Deserialize;
use stockhop::time::UnixMs;

use super::bins::{self, Bin};
use super::operators::{self, Operator};
use super::sync::MAX_FIELD_CHARS;
use super::units::{self, UnitFacts, UnitState};
use super::{grns, manifests};

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
}

/// Why a file was not imported.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// A row (or the header, line 1) is wrong: nothing was imported.
    #[error("{file}:{line}: {reason}")]
    Row {
        file: String,
        line: u64,
        reason: String,
    },
    #[error("{file}: {reason}")]
    File { file: String, reason: String },
    #[error("{file}: {source}")]
    Sqlite {
        file: String,
        source: crate::sql::Error,
    },
}

/// What an import did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    pub rows: usize,
    /// Rows that added or changed something.
    pub changed: usize,
}

/// Imports `path` as `kind` in one transaction.
pub fn import(
    conn: &mut Connection,
    kind: Kind,
    path: &Path,
    now: UnixMs,
) -> Result<Summary, ImportError> {
    let file = path.display().to_string();
    let input = std::fs::File::open(path).map_err(|err| ImportError::File {
        file: file.clone(),
        reason: err.to_string(),
    })?;
    import_reader(conn, kind, &file, input, now)
}

/// Imports the CSV text `input` as `kind` in one transaction; `file` names
/// it in errors.
pub fn import_reader(
    conn: &mut Connection,
    kind: Kind,
    file: &str,
    input: impl std::io::Read,
    now: UnixMs,
) -> Result<Summary, ImportError> {
    let file = file.to_owned();
    let sqlite = |source| ImportError::Sqlite {
        file: file.clone(),
        source,
    };
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_reader(input);
    let row_error = |line: u64, reason: String| ImportError::Row {
        file: file.clone(),
        line,
        reason,
    };
    let headers = reader
        .headers()
        .map_err(|err| row_error(1, err.to_string()))?
        .clone();
    for column in kind.columns() {
        if !headers.iter().any(|name| name == *column) {
            return Err(row_error(
                1,
                format!(
                    "the header names no {column:?} column (expected {})",
                    kind.columns().join(",")
                ),
            ));
        }
    }
    let tx = conn.transaction().map_err(sqlite)?;
    let mut rows = Rows {
        conn: &tx,
        now,
        seen: HashMap::new(),
        summary: Summary::default(),
    };
    for record in reader.records() {
        let record = record.map_err(|err| {
            let line = err.position().map_or(0, csv::Position::line);
            row_error(line, err.to_string())
        })?;
        let line = record.position().map_or(0, csv::Position::line);
        let changed = match kind {
            Kind::Bins => rows.bin(&record, &headers, line),
            Kind::Units => rows.unit(&record, &headers, line),
            Kind::Grns => rows.grn_line(&record, &headers, line),
            Kind::Manifests => rows.manifest_unit(&record, &headers, line),
            Kind::Operators => rows.operator(&record, &headers, line),
        }
        .map_err(|err| match err {
            RowError::Bad(reason) => row_error(line, reason),
            RowError::Sqlite(source) => sqlite(source),
        })?;
        rows.summary.rows += 1;
        rows.summary.changed += usize::from(changed);
    }
    let summary = rows.summary;
    tx.commit().map_err(sqlite)?;
    Ok(summary)
}

enum RowError {
    Bad(String),
    Sqlite(crate::sql::Error),
}

impl From<crate::sql::Error> for RowError {
    fn from(err: crate::sql::Error) -> RowError {
        RowError::Sqlite(err)
    }
}

/// The file's rows so far: what each key was first given as, and where.
struct Rows<'a> {
    conn: &'a Connection,
    now: UnixMs,
    /// A row's key → (its line, the value that must agree on every row).
    seen: HashMap<String, (u64, String)>,
    summary: Summary,
}

fn field(value: &str, name: &str, required: bool) -> Result<Option<String>, RowError> {
    if value.is_empty() {
        return if required {
            Err(RowError::Bad(format!("{name} is empty")))
        } else {
            Ok(None)
        };
    }
    if value.chars().count() > MAX_FIELD_CHARS {
        return Err(RowError::Bad(format!(
            "{name} is longer than {MAX_FIELD_CHARS} characters"
        )));
    }
    Ok(Some(value.to_owned()))
}

/// A required field that names something on a label or a screen: no
/// control characters (a badge is scanned, a name is shown).
fn identifier(value: &str, name: &str) -> Result<String, RowError> {
    let value = field(value, name, true)?.unwrap_or_default();
    if value.chars().any(char::is_control) {
        return Err(RowError::Bad(format!(
            "{name} must not contain control characters"
        )));
    }
    Ok(value)
}

fn one_of(value: &str, name: &str, allowed: &[&str]) -> Result<(), RowError> {
    if allowed.contains(&value) {
        Ok(())
    } else {
        Err(RowError::Bad(format!(
            "{name} {value:?} is not one of {}",
            allowed.join(", ")
        )))
    }
}

fn read<T: serde::de::DeserializeOwned>(
    record: &csv::StringRecord,
    headers: &csv::StringRecord,
) -> Result<T, RowError> {
    record
        .deserialize(Some(headers))
        .map_err(|err| match err.kind() {
            csv::ErrorKind::Deserialize { err, .. } => RowError::Bad(err.to_string()),
            _ => RowError::Bad(err.to_string()),
        })
}

#[derive(Deserialize)]
struct BinRow {
    bin: String,
    zone: String,
    location: String,
}

#[derive(Deserialize)]
struct UnitRow {
    epc: String,
    code: String,
    sku: String,
    state: String,
    bin: String,
}

#[derive(Deserialize)]
struct GrnRow {
    grn: String,
    qc: String,
    sku: String,
    expected: String,
}

#[derive(Deserialize)]
struct OperatorRow {
    badge: String,
    name: String,
}

#[derive(Deserialize)]
struct ManifestRow {
    manifest: String,
    state: String,
    epc: String,
}

impl Rows<'_> {
    /// Remembers `key` at `line`; a key repeated in the file is an error,
    /// as is a `shared` value that differs from the key's group's first row.
    fn once(&mut self, key: String, line: u64, what: &str) -> Result<(), RowError> {
        if let Some((first, _)) = self.seen.get(&key) {
            return Err(RowError::Bad(format!("{what} is already on line {first}")));
        }
        self.seen.insert(key, (line, String::new()));
        Ok(())
    }

    fn agrees(
        &mut self,
        group: String,
        value: &str,
        line: u64,
        what: &str,
    ) -> Result<(), RowError> {
        match self.seen.get(&group) {
            Some((first, earlier)) if earlier != value => Err(RowError::Bad(format!(
                "{what} {value:?} differs from {earlier:?} on line {first}"
            ))),
            Some(_) => Ok(()),
            None => {
                self.seen.insert(group, (line, value.to_owned()));
                Ok(())
            }
        }
    }

    fn bin(
        &mut self,
        record: &csv::StringRecord,
        headers: &csv::StringRecord,
        line: u64,
    ) -> Result<bool, RowError> {
        let row: BinRow = read(record, headers)?;
        let bin = Bin {
            bin: field(&row.bin, "bin", true)?.unwrap_or_default(),
            zone: field(&row.zone, "zone", true)?.unwrap_or_default(),
            location: field(&row.location, "location", true)?.unwrap_or_default(),
        };
        self.once(
            format!("bin\0{}", bin.bin),
            line,
            &format!("bin {:?}", bin.bin),
        )?;
        Ok(bins::upsert(self.conn, &bin)?)
    }

    fn unit(
        &mut self,
        record: &csv::StringRecord,
        headers: &csv::StringRecord,
        line: u64,
    ) -> Result<bool, RowError> {
        let row: UnitRow = read(record, headers)?;
        let epc = field(&row.epc, "epc", true)?.unwrap_or_default();
        let code = field(&row.code, "code", false)?;
        let sku = field(&row.sku, "sku", true)?;
        let state = UnitState::parse(&row.state).ok_or_else(|| {
            RowError::Bad(format!(
                "state {:?} is not one of new, in_stock, dispatched, missing",
                row.state
            ))
        })?;
        let bin = field(&row.bin, "bin", false)?;
        self.once(format!("epc\0{epc}"), line, &format!("epc {epc:?}"))?;
        if let Some(code) = &code {
            self.once(format!("code\0{code}"), line, &format!("code {code:?}"))?;
            if let Some(holder) = units::find(self.conn, None, Some(code))? {
                if holder.epc.as_deref() != Some(epc.as_str()) {
                    return Err(RowError::Bad(format!(
                        "code {code:?} belongs to unit {}",
                        holder.epc.as_deref().unwrap_or("without an epc")
                    )));
                }
            }
        }
        if let Some(bin) = &bin {
            if bins::find(self.conn, bin)?.is_none() {
                return Err(RowError::Bad(format!(
                    "unknown bin {bin:?}: import bins first"
                )));
            }
        }
        let facts = UnitFacts {
            epc: Some(&epc),
            code: code.as_deref(),
            sku: sku.as_deref(),
            state,
            bin: bin.as_deref(),
        };
        Ok(match units::find(self.conn, Some(&epc), None)? {
            Some(unit) => units::update(self.conn, &unit, &facts)? != unit.version,
            None => {
                units::create(self.conn, &facts, self.now)?;
                true
            }
        })
    }

    fn grn_line(
        &mut self,
        record: &csv::StringRecord,
        headers: &csv::StringRecord,
        line: u64,
    ) -> Result<bool, RowError> {
        let row: GrnRow = read(record, headers)?;
        let grn = field(&row.grn, "grn", true)?.unwrap_or_default();
        one_of(&row.qc, "qc", &grns::qc::ALL)?;
        let sku = field(&row.sku, "sku", true)?.unwrap_or_default();
        let expected: u64 = row.expected.parse().map_err(|_| {
            RowError::Bad(format!(
                "expected {:?} is not a whole number of units",
                row.expected
            ))
        })?;
        if expected > i64::MAX as u64 {
            return Err(RowError::Bad("expected is out of range".into()));
        }
        self.agrees(format!("grn\0{grn}"), &row.qc, line, "qc")?;
        self.once(
            format!("line\0{grn}\0{sku}"),
            line,
            &format!("sku {sku:?} of GRN {grn:?}"),
        )?;
        let head = grns::upsert_head(self.conn, &grn, &row.qc)?;
        let line_changed = grns::upsert_line(self.conn, &grn, &sku, expected)?;
        Ok(head || line_changed)
    }

    fn operator(
        &mut self,
        record: &csv::StringRecord,
        headers: &csv::StringRecord,
        line: u64,
    ) -> Result<bool, RowError> {
        let row: OperatorRow = read(record, headers)?;
        let operator = Operator {
            badge: identifier(&row.badge, "badge")?,
            name: identifier(&row.name, "name")?,
        };
        self.once(
            format!("badge\0{}", operator.badge),
            line,
            &format!("badge {:?}", operator.badge),
        )?;
        Ok(operators::upsert(self.conn, &operator)?)
    }

    fn manifest_unit(
        &mut self,
        record: &csv::StringRecord,
        headers: &csv::StringRecord,
        line: u64,
    ) -> Result<bool, RowError> {
        let row: ManifestRow = read(record, headers)?;
        let manifest = field(&row.manifest, "manifest", true)?.unwrap_or_default();
        one_of(&row.state, "state", &manifests::states::ALL)?;
        let epc = field(&row.epc, "epc", true)?.unwrap_or_default();
        self.agrees(format!("manifest\0{manifest}"), &row.state, line, "state")?;
        self.once(
            format!("unit\0{manifest}\0{epc}"),
            line,
            &format!("epc {epc:?} of manifest {manifest:?}"),
        )?;
        if units::find(self.conn, Some(&epc), None)?.is_none() {
            return Err(RowError::Bad(format!(
                "unknown unit {epc:?}: import units first"
            )));
        }
        let head = manifests::upsert(self.conn, &manifest, &row.state)?;
        let added = manifests::add_unit(self.conn, &manifest, &epc)?;
        Ok(head || added)
    }
}
