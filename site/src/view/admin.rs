//! Admin tokens and the dashboard's sessions.
//!
//! `stockhop-site admin add NAME` mints a token (shown once, kept as its
//! SHA-256 like a device token). The dashboard trades it for a session
//! cookie (HttpOnly, SameSite=Strict) and a CSRF token that every
//! state-changing request must echo in [`CSRF_HEADER`]. Admin tokens live in
//! their own table, so they never authenticate a sync, and device tokens
//! never open the view.

use crate::store::sql::{params, Connection, OptionalExtension};
use stockhop::time::UnixMs;

use crate::ledger::{auth, LedgerError, Refusal};

/// The session cookie's name.
pub const SESSION_COOKIE: &str = "stockhop_admin";

/// The header a signed-in page echoes its CSRF token in on every POST.
pub const CSRF_HEADER: &str = "x-csrf-token";

/// How long a dashboard session lasts: one 12-hour shift, then sign in again.
pub const SESSION_LIFETIME_MS: i64 = 12 * 60 * 60 * 1000;

/// Longest admin name: it is shown on the dashboard and in logs.
pub const MAX_ADMIN_NAME_CHARS: usize = 64;

/// A row of `admin list`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Admin {
    pub name: String,
    pub added_at: UnixMs,
}

/// A signed-in dashboard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    pub admin: String,
    pub csrf_token: String,
}

fn refused(status: u16, code: &'static str, message: impl Into<String>) -> LedgerError {
    LedgerError::Refused(Refusal::new(status, code, message))
}

/// Adds an admin and returns its token, which is stored only hashed.
pub fn add(conn: &Connection, name: &str, now: UnixMs) -> Result<String, LedgerError> {
    let valid = !name.is_empty()
        && name.chars().count() <= MAX_ADMIN_NAME_CHARS
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '@'));
    if !valid {
        return Err(refused(
            400,
            super::codes::INVALID_ADMIN,
            format!(
                "an admin name is 1 to {MAX_ADMIN_NAME_CHARS} letters, digits, '-', '_', '.' or '@'"
            ),
        ));
    }
    let token = auth::mint_token()?;
    conn.execute(
        "INSERT INTO admins (name, token_sha256, added_at) VALUES (?1, ?2, ?3)",
        params![name, auth::token_hash(&token), now.0],
    )
    .map_err(|err| match err.unique_violation() {
        Some(_) => refused(
            409,
            super::codes::ADMIN_EXISTS,
            format!("admin {name:?} exists"),
        ),
        None => LedgerError::Sqlite(err),
    })?;
    Ok(token)
}

/// Every admin, by name.
pub fn list(conn: &Connection) -> crate::store::sql::Result<Vec<Admin>> {
    let mut select = conn.prepare("SELECT name, added_at FROM admins ORDER BY name")?;
    let rows = select.query_map([], |row| {
        Ok(Admin {
            name: row.get(0)?,
            added_at: UnixMs(row.get(1)?),
        })
    })?;
    rows.collect()
}

/// Removes an admin; its token and its dashboard sessions stop working.
pub fn revoke(conn: &Connection, name: &str) -> Result<(), LedgerError> {
    conn.execute("DELETE FROM admin_sessions WHERE admin = ?1", [name])?;
    if conn.execute("DELETE FROM admins WHERE name = ?1", [name])? == 0 {
        return Err(refused(
            404,
            super::codes::ADMIN_NOT_FOUND,
            format!("no admin {name:?}"),
        ));
    }
    Ok(())
}

/// The admin a token belongs to, if any.
pub fn authenticate(conn: &Connection, token: &str) -> crate::store::sql::Result<Option<String>> {
    conn.prepare_cached("SELECT name FROM admins WHERE token_sha256 = ?1")?
        .query_row([auth::token_hash(token)], |row| row.get(0))
        .optional()
}

/// Opens a dashboard session for `admin`: returns the cookie value (kept
/// only hashed) and the session with its CSRF token. Expired sessions are
/// swept on the way.
pub fn open_session(
    conn: &Connection,
    admin: &str,
    now: UnixMs,
) -> Result<(String, Session), LedgerError> {
    conn.execute("DELETE FROM admin_sessions WHERE expires_at <= ?1", [now.0])?;
    let cookie = auth::mint_token()?;
    let csrf_token = auth::mint_token()?;
    conn.execute(
        "INSERT INTO admin_sessions (session_sha256, admin, csrf_token, created_at, expires_at)
         VALUES (?1, ?2, ?3, ?4, ?5)",
        params![
            auth::token_hash(&cookie),
            admin,
            csrf_token,
            now.0,
            now.0.saturating_add(SESSION_LIFETIME_MS)
        ],
    )?;
    Ok((
        cookie,
        Session {
            admin: admin.to_owned(),
            csrf_token,
        },
    ))
}

/// The live session a cookie value names, if any.
pub fn session(
    conn: &Connection,
    cookie: &str,
    now: UnixMs,
) -> crate::store::sql::Result<Option<Session>> {
    conn.prepare_cached(
        "SELECT admin, csrf_token FROM admin_sessions
         WHERE session_sha256 = ?1 AND expires_at > ?2",
    )?
    .query_row(params![auth::token_hash(cookie), now.0], |row| {
        Ok(Session {
            admin: row.get(0)?,
            csrf_token: row.get(1)?,
        })
    })
    .optional()
}

/// Ends the session a cookie value names.
pub fn close_session(conn: &Connection, cookie: &str) -> crate::store::sql::Result<()> {
    conn.execute(
        "DELETE FROM admin_sessions WHERE session_sha256 = ?1",
        [auth::token_hash(cookie)],
    )?;
    Ok(())
}

/// Whether `presented` is the session's CSRF token, compared in constant
/// time.
pub fn csrf_matches(session: &Session, presented: Option<&str>) -> bool {
    use sha2::{Digest, Sha256};
    let Some(presented) = presented else {
        return false;
    };
    // Comparing digests keeps the time independent of where they differ.
    let a = Sha256::digest(session.csrf_token.as_bytes());
    let b = Sha256::digest(presented.as_bytes());
    a.iter()
        .zip(b.iter())
        .fold(0u8, |acc, (x, y)| acc | (x ^ y))
        == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db() -> (tempfile::TempDir, crate::store::db::Db) {
        let dir = tempfile::tempdir().unwrap();
        let db = crate::store::db::Db::open(dir.path()).unwrap();
        (dir, db)
    }

    #[test]
    fn an_admin_token_opens_a_session_until_revoked() {
        let (_dir, db) = db();
        db.call_blocking(|conn| {
            let token = add(conn, "ops", UnixMs(0)).unwrap();
            assert_eq!(authenticate(conn, &token).unwrap().as_deref(), Some("ops"));
            let (cookie, opened) = open_session(conn, "ops", UnixMs(1)).unwrap();
            assert_eq!(
                session(conn, &cookie, UnixMs(2)).unwrap().as_ref(),
                Some(&opened)
            );
            assert!(session(conn, &cookie, UnixMs(1 + SESSION_LIFETIME_MS))
                .unwrap()
                .is_none());
            revoke(conn, "ops").unwrap();
            assert!(authenticate(conn, &token).unwrap().is_none());
            assert!(session(conn, &cookie, UnixMs(2)).unwrap().is_none());
            assert!(revoke(conn, "ops").is_err());
        });
    }

    #[test]
    fn names_are_checked_and_unique() {
        let (_dir, db) = db();
        db.call_blocking(|conn| {
            assert!(add(conn, "", UnixMs(0)).is_err());
            assert!(add(conn, "a b", UnixMs(0)).is_err());
            add(conn, "ops", UnixMs(0)).unwrap();
            let again = add(conn, "ops", UnixMs(0)).unwrap_err();
            assert_eq!(again.status().as_u16(), 409);
        });
    }

    #[test]
    fn csrf_needs_the_sessions_own_token() {
        let session = Session {
            admin: "ops".into(),
            csrf_token: "abc".into(),
        };
        assert!(csrf_matches(&session, Some("abc")));
        assert!(!csrf_matches(&session, Some("abd")));
        assert!(!csrf_matches(&session, None));
    }
}
