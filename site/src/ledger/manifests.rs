//! Dispatch manifests and the units on them, each with the pallet (SSCC)
//! it ships on when the manifest says. Loaded from reference data;
//! dispatch verify marks units verified, one by its tag or a pallet's
//! all by its SSCC. Handhelds read a manifest live
//! (`GET /v1/manifests/{id}`), never from a cache.

use crate::store::sql::{params, Connection, OptionalExtension};
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct ManifestUnit {
    pub epc: String,
    pub verified: bool,
    /// The SSCC (18 digits) of the pallet the unit ships on; left out when
    /// unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sscc: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct Manifest {
    pub manifest: String,
    pub state: String,
    pub units: Vec<ManifestUnit>,
}

pub mod states {
    pub const PACKING: &str = "packing";
    pub const DISPATCHED: &str = "dispatched";
    pub const VERIFIED: &str = "verified";
    pub const ALL: [&str; 4] = ["draft", PACKING, DISPATCHED, VERIFIED];
}

pub fn state_of(conn: &Connection, manifest: &str) -> crate::store::sql::Result<Option<String>> {
    conn.prepare_cached("SELECT state FROM manifests WHERE manifest = ?1")?
        .query_row([manifest], |row| row.get(0))
        .optional()
}

/// A manifest with its units in EPC order.
pub fn find(conn: &Connection, manifest: &str) -> crate::store::sql::Result<Option<Manifest>> {
    let Some(state) = state_of(conn, manifest)? else {
        return Ok(None);
    };
    let units = conn
        .prepare_cached(
            "SELECT epc, verified, sscc FROM manifest_units WHERE manifest = ?1 ORDER BY epc",
        )?
        .query_map([manifest], |row| {
            Ok(ManifestUnit {
                epc: row.get(0)?,
                verified: row.get(1)?,
                sscc: row.get(2)?,
            })
        })?
        .collect::<crate::store::sql::Result<_>>()?;
    Ok(Some(Manifest {
        manifest: manifest.to_owned(),
        state,
        units,
    }))
}

/// Whether `epc` is on the manifest, and verified.
pub fn unit(
    conn: &Connection,
    manifest: &str,
    epc: &str,
) -> crate::store::sql::Result<Option<bool>> {
    conn.prepare_cached("SELECT verified FROM manifest_units WHERE manifest = ?1 AND epc = ?2")?
        .query_row([manifest, epc], |row| row.get(0))
        .optional()
}

/// The units of the pallet `sscc` on the manifest, in EPC order, with
/// whether each is verified; empty when the pallet is not on it.
pub fn pallet(
    conn: &Connection,
    manifest: &str,
    sscc: &str,
) -> crate::store::sql::Result<Vec<(String, bool)>> {
    conn.prepare_cached(
        "SELECT epc, verified FROM manifest_units WHERE manifest = ?1 AND sscc = ?2 ORDER BY epc",
    )?
    .query_map([manifest, sscc], |row| Ok((row.get(0)?, row.get(1)?)))?
    .collect()
}

/// Marks a unit verified; when it was the last, the manifest is verified,
/// remembering the state it was verified from.
pub fn verify(conn: &Connection, manifest: &str, epc: &str) -> crate::store::sql::Result<()> {
    conn.prepare_cached("UPDATE manifest_units SET verified = 1 WHERE manifest = ?1 AND epc = ?2")?
        .execute([manifest, epc])?;
    conn.prepare_cached(
        "UPDATE manifests SET state = ?2, verified_from = state
         WHERE manifest = ?1 AND state <> ?2 AND NOT EXISTS
             (SELECT 1 FROM manifest_units WHERE manifest = ?1 AND verified = 0)",
    )?
    .execute([manifest, states::VERIFIED])?;
    Ok(())
}

/// Takes back a verify: the unit is unverified, and a verified manifest
/// goes back to the state it was verified from (packing for one verified
/// before the site remembered it: its goods are not all checked).
pub fn unverify(conn: &Connection, manifest: &str, epc: &str) -> crate::store::sql::Result<()> {
    conn.prepare_cached("UPDATE manifest_units SET verified = 0 WHERE manifest = ?1 AND epc = ?2")?
        .execute([manifest, epc])?;
    conn.prepare_cached(
        "UPDATE manifests SET state = coalesce(verified_from, ?3), verified_from = NULL
         WHERE manifest = ?1 AND state = ?2",
    )?
    .execute([manifest, states::VERIFIED, states::PACKING])?;
    Ok(())
}

/// Writes a manifest's state from reference data; returns whether it changed.
pub fn upsert(conn: &Connection, manifest: &str, state: &str) -> crate::store::sql::Result<bool> {
    match state_of(conn, manifest)? {
        Some(existing) if existing == state => Ok(false),
        Some(_) => {
            conn.execute(
                "UPDATE manifests SET state = ?2 WHERE manifest = ?1",
                [manifest, state],
            )?;
            Ok(true)
        }
        None => {
            conn.execute(
                "INSERT INTO manifests (manifest, state) VALUES (?1, ?2)",
                [manifest, state],
            )?;
            Ok(true)
        }
    }
}

/// Puts a unit on a manifest, leaving the pallet it is on as it is (a
/// file without an `sscc` column); returns whether that added it.
pub fn add_unit_keeping_pallet(
    conn: &Connection,
    manifest: &str,
    epc: &str,
) -> crate::store::sql::Result<bool> {
    let added = conn.execute(
        "INSERT INTO manifest_units (manifest, epc) VALUES (?1, ?2)
         ON CONFLICT (manifest, epc) DO NOTHING",
        params![manifest, epc],
    )?;
    Ok(added == 1)
}

/// Puts a unit on a manifest, on the pallet `sscc` if one is named;
/// returns whether that changed anything.
pub fn add_unit(
    conn: &Connection,
    manifest: &str,
    epc: &str,
    sscc: Option<&str>,
) -> crate::store::sql::Result<bool> {
    let added = conn.execute(
        "INSERT INTO manifest_units (manifest, epc, sscc) VALUES (?1, ?2, ?3)
         ON CONFLICT (manifest, epc) DO UPDATE SET sscc = excluded.sscc
         WHERE manifest_units.sscc IS DISTINCT FROM excluded.sscc",
        params![manifest, epc, sscc],
    )?;
    Ok(added == 1)
}
