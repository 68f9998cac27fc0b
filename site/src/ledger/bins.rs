//! Bins: where units are put away, named by the text of their label, each
//! in a zone of a location. Loaded from reference data.

use crate::sql::{params, Connection, OptionalExtension};
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Bin {
    pub bin: String,
    pub zone: String,
    pub location: String,
}

pub fn find(conn: &Connection, bin: &str) -> crate::sql::Result<Option<Bin>> {
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

/// Writes a bin; returns whether anything changed.
pub fn upsert(conn: &Connection, bin: &Bin) -> crate::sql::Result<bool> {
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
