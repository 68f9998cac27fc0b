//! Each site its own secret at a central, the one place with its SQL.
//!
//! `stockhop-site central add-site ID` mints a site's secret and prints it
//! once; the site signs its batches with it (`--central-secret`). A batch
//! for a site that has its own secret is taken only when that secret
//! signed it (401 `SITE_MISMATCH` otherwise), so the holder of one site's
//! secret (or of the central's shared one) cannot post as another site. A
//! site without its own secret may still sign with the shared secret
//! (`--central-secret` on the central), and the central logs that it did,
//! so an operator sees which sites are left to move.

use stockhop::time::UnixMs;

use crate::ident;
use crate::ledger::{auth, LedgerError, Refusal};
use crate::store::sql::{params, Connection, OptionalExtension};

/// The error code of a batch signed with another site's (or the shared)
/// secret for a site that has its own.
pub const SITE_MISMATCH: &str = "SITE_MISMATCH";
/// The error code of `add-site` for a site that has its secret already.
pub const SITE_EXISTS: &str = "SITE_EXISTS";

/// Mints and stores the secret of `site_id`; returns it (the only time it
/// is shown).
pub fn add(conn: &Connection, site_id: &str, now: UnixMs) -> Result<String, LedgerError> {
    ident::check("site_id", site_id)
        .map_err(|err| LedgerError::Refused(Refusal::new(400, "INVALID_SITE", err.to_string())))?;
    let secret = auth::mint_token()?;
    conn.execute(
        "INSERT INTO central_site_secrets (site_id, secret, added_at) VALUES (?1, ?2, ?3)",
        params![site_id, secret, now.0],
    )
    .map_err(|err| match crate::ledger::unique_violation(&err) {
        Some(_) => LedgerError::Refused(Refusal::new(
            409,
            SITE_EXISTS,
            format!("site {site_id:?} has its own secret already"),
        )),
        None => LedgerError::Sqlite(err),
    })?;
    Ok(secret)
}

/// What a central verifies a batch for `site_id` with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SiteKey {
    /// The site's own secret.
    Own(String),
    /// No secret of its own: the shared one, if the central has one.
    Shared,
}

/// The key to verify a batch for `site_id` with.
pub fn key_of(conn: &Connection, site_id: &str) -> Result<SiteKey, LedgerError> {
    let own: Option<String> = conn
        .prepare_cached("SELECT secret FROM central_site_secrets WHERE site_id = ?1")?
        .query_row(params![site_id], |row| row.get(0))
        .optional()?;
    Ok(own.map_or(SiteKey::Shared, SiteKey::Own))
}

/// Whether any site has a secret here: a server with one is a central
/// even without a shared secret.
pub fn any(conn: &Connection) -> Result<bool, LedgerError> {
    let any: Option<i64> = conn
        .query_row("SELECT 1 FROM central_site_secrets LIMIT 1", [], |row| {
            row.get(0)
        })
        .optional()?;
    Ok(any.is_some())
}
