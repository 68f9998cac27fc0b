//! Bins: where units are put away, named by the text of their label, each
//! in a zone of a location. Loaded from reference data.

use crate::store::sql::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Bin {
    pub bin: String,
    pub zone: String,
    pub location: String,
}

pub fn find(conn: &Connection, bin: &str) -> crate::store::sql::Result<Option<Bin>> {
    conn.prepare_cached("SELECT bin, zone, location FROM bins WHERE bin = ?1")?
        .query_row([bin], |row| {
            Ok(Bin {
                bin: row.get(0)?,
                zone: row.get(1)?,
                location: row.get(2)?,
            })
        })
        .optional()
}

/// Bins one [`upsert_many`] statement writes at most: 3 parameters a bin,
/// far under SQLite's 32,766 and PostgreSQL's 65,535 a statement.
pub const UPSERT_MANY_MAX: usize = 1_000;

/// Writes `bins` in one statement (one round trip on PostgreSQL, where a
/// bin at a time costs two); returns how many were added or changed. The
/// bins must name distinct bins: a statement may write a row only once.
pub fn upsert_many(conn: &Connection, bins: &[Bin]) -> crate::store::sql::Result<usize> {
    assert!(
        bins.len() <= UPSERT_MANY_MAX,
        "{} bins in one statement",
        bins.len()
    );
    if bins.is_empty() {
        return Ok(0);
    }
    let rows: Vec<String> = (0..bins.len())
        .map(|i| format!("(?{}, ?{}, ?{})", 3 * i + 1, 3 * i + 2, 3 * i + 3))
        .collect();
    // Only new or changed bins are proposed for insertion: an unchanged one
    // is left as it is, takes no change number (PostgreSQL numbers every
    // row proposed, conflicting or not) and is not counted.
    let sql = format!(
        "INSERT INTO bins (bin, zone, location)
         SELECT v.column1, v.column2, v.column3 FROM (VALUES {}) AS v
         LEFT JOIN bins b ON b.bin = v.column1
         WHERE b.bin IS NULL OR b.zone <> v.column2 OR b.location <> v.column3
         ON CONFLICT (bin) DO UPDATE SET zone = excluded.zone, location = excluded.location",
        rows.join(", ")
    );
    let values: Vec<crate::store::sql::Value> = bins
        .iter()
        .flat_map(|bin| [&bin.bin, &bin.zone, &bin.location])
        .map(|text| crate::store::sql::Value::Text(text.clone()))
        .collect();
    conn.prepare_cached(&sql)?.execute(values.as_slice())
}

/// Writes a bin; returns whether anything changed.
pub fn upsert(conn: &Connection, bin: &Bin) -> crate::store::sql::Result<bool> {
    match find(conn, &bin.bin)? {
        Some(existing) if existing == *bin => Ok(false),
        Some(_) => {
            conn.execute(
                "UPDATE bins SET zone = ?2, location = ?3 WHERE bin = ?1",
                params![bin.bin, bin.zone, bin.location],
            )?;
            Ok(true)
        }
        None => {
            conn.execute(
                "INSERT INTO bins (bin, zone, location) VALUES (?1, ?2, ?3)",
                params![bin.bin, bin.zone, bin.location],
            )?;
            Ok(true)
        }
    }
}
