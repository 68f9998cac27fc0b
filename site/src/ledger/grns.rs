//! Goods received notes: a GRN's QC disposition, its state and its lines
//! (SKU, expected, received). Loaded from reference data; receive scans
//! count units on the lines, and closing a receive session settles the
//! GRN's state.

use crate::store::sql::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct GrnLine {
    pub sku: String,
    pub expected: u64,
    pub received: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Grn {
    pub grn: String,
    pub qc: String,
    pub state: String,
    pub lines: Vec<GrnLine>,
}

pub mod qc {
    pub const ACCEPTED: &str = "accepted";
    pub const ALL: [&str; 3] = [ACCEPTED, "held", "rejected"];
}

pub mod states {
    pub const OPEN: &str = "open";
    pub const NEEDS_RESOLUTION: &str = "needs_resolution";
    pub const COMPLETE: &str = "complete";
}

/// A GRN with its lines in SKU order.
pub fn find(conn: &Connection, grn: &str) -> crate::store::sql::Result<Option<Grn>> {
    let head = conn
        .prepare_cached("SELECT grn, qc, state FROM grns WHERE grn = ?1")?
        .query_row([grn], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
        .optional()?;
    let Some((grn, qc, state)) = head else {
        return Ok(None);
    };
    let lines = conn
        .prepare_cached(
            "SELECT sku, expected, received FROM grn_lines WHERE grn = ?1 ORDER BY sku",
        )?
        .query_map([&grn], |row| {
            Ok(GrnLine {
                sku: row.get(0)?,
                expected: row.get::<_, i64>(1)? as u64,
                received: row.get::<_, i64>(2)? as u64,
            })
        })?
        .collect::<crate::store::sql::Result<_>>()?;
    Ok(Some(Grn {
        grn,
        qc,
        state,
        lines,
    }))
}

/// The QC disposition of a GRN, if it exists.
pub fn qc_of(conn: &Connection, grn: &str) -> crate::store::sql::Result<Option<String>> {
    conn.prepare_cached("SELECT qc FROM grns WHERE grn = ?1")?
        .query_row([grn], |row| row.get(0))
        .optional()
}

/// A line's expected and received counts.
pub fn line(
    conn: &Connection,
    grn: &str,
    sku: &str,
) -> crate::store::sql::Result<Option<(u64, u64)>> {
    conn.prepare_cached("SELECT expected, received FROM grn_lines WHERE grn = ?1 AND sku = ?2")?
        .query_row([grn, sku], |row| {
            Ok((row.get::<_, i64>(0)? as u64, row.get::<_, i64>(1)? as u64))
        })
        .optional()
}

/// Counts one unit received on a line, and remembers which.
pub fn receive(
    conn: &Connection,
    grn: &str,
    sku: &str,
    unit_id: i64,
    hop_id: i64,
) -> crate::store::sql::Result<()> {
    conn.prepare_cached(
        "UPDATE grn_lines SET received = received + 1 WHERE grn = ?1 AND sku = ?2",
    )?
    .execute([grn, sku])?;
    conn.prepare_cached(
        "INSERT INTO grn_receipts (unit_id, grn, sku, hop_id) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![unit_id, grn, sku, hop_id])?;
    Ok(())
}

/// Takes back what [`receive`] counted for the hop `hop_id`: the line
/// counts one less and the unit is no longer received. Returns the GRN,
/// or `None` when the hop counted nothing.
pub fn unreceive(
    conn: &Connection,
    hop_id: i64,
    unit_id: i64,
) -> crate::store::sql::Result<Option<String>> {
    let counted: Option<(String, String)> = conn
        .prepare_cached(
            "DELETE FROM grn_receipts WHERE unit_id = ?1 AND hop_id = ?2 RETURNING grn, sku",
        )?
        .query_row(params![unit_id, hop_id], |row| {
            Ok((row.get(0)?, row.get(1)?))
        })
        .optional()?;
    let Some((grn, sku)) = counted else {
        return Ok(None);
    };
    conn.prepare_cached(
        "UPDATE grn_lines SET received = received - 1
         WHERE grn = ?1 AND sku = ?2 AND received > 0",
    )?
    .execute([&grn, &sku])?;
    Ok(Some(grn))
}

/// Whether a unit was received on any GRN.
pub fn was_received(conn: &Connection, unit_id: i64) -> crate::store::sql::Result<bool> {
    conn.prepare_cached("SELECT 1 FROM grn_receipts WHERE unit_id = ?1")?
        .exists([unit_id])
}

/// Sets a GRN's state from its lines: complete when every line received
/// what it expected, else needs_resolution (a line short or over).
pub fn settle(conn: &Connection, grn: &str) -> crate::store::sql::Result<&'static str> {
    let unresolved: bool = conn
        .prepare_cached(
            "SELECT EXISTS (SELECT 1 FROM grn_lines WHERE grn = ?1 AND received != expected)",
        )?
        .query_row([grn], |row| row.get(0))?;
    let state = if unresolved {
        states::NEEDS_RESOLUTION
    } else {
        states::COMPLETE
    };
    set_state(conn, grn, state)?;
    Ok(state)
}

/// Sets a GRN's state (the trigger bumps its change number only on a change).
pub fn set_state(conn: &Connection, grn: &str, state: &str) -> crate::store::sql::Result<()> {
    conn.prepare_cached("UPDATE grns SET state = ?2 WHERE grn = ?1 AND state != ?2")?
        .execute([grn, state])?;
    Ok(())
}

/// Writes a GRN's head from reference data; returns whether it changed.
pub fn upsert_head(conn: &Connection, grn: &str, qc: &str) -> crate::store::sql::Result<bool> {
    match qc_of(conn, grn)? {
        Some(existing) if existing == qc => Ok(false),
        Some(_) => {
            conn.execute("UPDATE grns SET qc = ?2 WHERE grn = ?1", [grn, qc])?;
            Ok(true)
        }
        None => {
            conn.execute("INSERT INTO grns (grn, qc) VALUES (?1, ?2)", [grn, qc])?;
            Ok(true)
        }
    }
}

/// Writes a line's expected count from reference data (received is the
/// ledger's); returns whether it changed.
pub fn upsert_line(
    conn: &Connection,
    grn: &str,
    sku: &str,
    expected: u64,
) -> crate::store::sql::Result<bool> {
    match line(conn, grn, sku)? {
        Some((existing, _)) if existing == expected => Ok(false),
        Some(_) => {
            conn.execute(
                "UPDATE grn_lines SET expected = ?3 WHERE grn = ?1 AND sku = ?2",
                params![grn, sku, expected as i64],
            )?;
            Ok(true)
        }
        None => {
            conn.execute(
                "INSERT INTO grn_lines (grn, sku, expected) VALUES (?1, ?2, ?3)",
                params![grn, sku, expected as i64],
            )?;
            Ok(true)
        }
    }
}
