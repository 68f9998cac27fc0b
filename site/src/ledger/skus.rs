//! SKUs and their GTINs: what a GS1 label that names a GTIN and lot, with
//! no serial, names (docs/design.md, real labels), and the SKU a receive
//! of a GS1 unit label takes from its GTIN. Loaded from reference data
//! (`stockhop-site import skus`, `sku,gtin`) and cached by handhelds.

use crate::store::sql::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};

/// A SKU and its GTIN (14 digits, its check digit holding).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Sku {
    pub sku: String,
    pub gtin: String,
}

fn from_row(row: &crate::store::sql::Row<'_>) -> crate::store::sql::Result<Sku> {
    Ok(Sku {
        sku: row.get(0)?,
        gtin: row.get(1)?,
    })
}

pub fn find(conn: &Connection, sku: &str) -> crate::store::sql::Result<Option<Sku>> {
    conn.prepare_cached("SELECT sku, gtin FROM skus WHERE sku = ?1")?
        .query_row([sku], from_row)
        .optional()
}

/// The SKU whose GTIN this is.
pub fn by_gtin(conn: &Connection, gtin: &str) -> crate::store::sql::Result<Option<Sku>> {
    conn.prepare_cached("SELECT sku, gtin FROM skus WHERE gtin = ?1")?
        .query_row([gtin], from_row)
        .optional()
}

/// Writes a SKU's GTIN; returns whether anything changed.
pub fn upsert(conn: &Connection, sku: &Sku) -> crate::store::sql::Result<bool> {
    match find(conn, &sku.sku)? {
        Some(existing) if existing == *sku => Ok(false),
        Some(_) => {
            conn.execute(
                "UPDATE skus SET gtin = ?2 WHERE sku = ?1",
                params![sku.sku, sku.gtin],
            )?;
            Ok(true)
        }
        None => {
            conn.execute(
                "INSERT INTO skus (sku, gtin) VALUES (?1, ?2)",
                params![sku.sku, sku.gtin],
            )?;
            Ok(true)
        }
    }
}
