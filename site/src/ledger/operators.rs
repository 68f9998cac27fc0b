//! Operators: the people who scan, named by the badge an `open_session`
//! carries as its `operator_id`. Loaded from reference data
//! (`stockhop-site import operators`, `badge,name`) and cached by
//! handhelds, which show the name of the session's operator. Until the
//! first is imported any badge opens a session; from then on a badge the
//! site does not know is rejected `unknown_operator`.

use crate::store::sql::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Operator {
    pub badge: String,
    pub name: String,
}

pub fn find(conn: &Connection, badge: &str) -> crate::store::sql::Result<Option<Operator>> {
    conn.prepare_cached("SELECT badge, name FROM operators WHERE badge = ?1")?
        .query_row([badge], |row| {
            Ok(Operator {
                badge: row.get(0)?,
                name: row.get(1)?,
            })
        })
        .optional()
}

/// Whether `badge` may open a session: any badge while the site lists no
/// operator, else only a listed one. One statement (one round trip on
/// PostgreSQL), on the `open_session` path.
pub fn admits(conn: &Connection, badge: &str) -> crate::store::sql::Result<bool> {
    conn.prepare_cached(
        "SELECT EXISTS (SELECT 1 FROM operators WHERE badge = ?1)
                OR NOT EXISTS (SELECT 1 FROM operators)",
    )?
    .query_row([badge], |row| row.get(0))
}

/// Writes an operator; returns whether anything changed.
pub fn upsert(conn: &Connection, operator: &Operator) -> crate::store::sql::Result<bool> {
    match find(conn, &operator.badge)? {
        Some(existing) if existing == *operator => Ok(false),
        Some(_) => {
            conn.execute(
                "UPDATE operators SET name = ?2 WHERE badge = ?1",
                params![operator.badge, operator.name],
            )?;
            Ok(true)
        }
        None => {
            conn.execute(
                "INSERT INTO operators (badge, name) VALUES (?1, ?2)",
                params![operator.badge, operator.name],
            )?;
            Ok(true)
        }
    }
}
