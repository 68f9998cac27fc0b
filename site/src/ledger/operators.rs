//! Operators: the people who scan, named by the badge an `open_session`
//! carries as its `operator_id`. Loaded from reference data
//! (`stockhop-site import operators`, `badge,name`, optionally
//! `language`) and cached by handhelds, which show the name of the
//! session's operator and their screens in the operator's language. Until the
//! first is imported any badge opens a session; from then on a badge the
//! site does not know is rejected `unknown_operator`.

use crate::store::sql::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Operator {
    pub badge: String,
    pub name: String,
    /// The language the operator reads (a BCP 47 tag, `de`, `pl-PL`), as
    /// the import checked it; absent when none was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(required = false, nullable, example = "de")]
    pub language: Option<String>,
}

pub fn find(conn: &Connection, badge: &str) -> crate::store::sql::Result<Option<Operator>> {
    conn.prepare_cached("SELECT badge, name, language FROM operators WHERE badge = ?1")?
        .query_row([badge], |row| {
            Ok(Operator {
                badge: row.get(0)?,
                name: row.get(1)?,
                language: row.get(2)?,
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
                "UPDATE operators SET name = ?2, language = ?3 WHERE badge = ?1",
                params![operator.badge, operator.name, operator.language],
            )?;
            Ok(true)
        }
        None => {
            conn.execute(
                "INSERT INTO operators (badge, name, language) VALUES (?1, ?2, ?3)",
                params![operator.badge, operator.name, operator.language],
            )?;
            Ok(true)
        }
    }
}
