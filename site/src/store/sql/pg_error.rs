//! PostgreSQL's errors in words, for the driver and the pool alike.

use std::error::Error as _;

/// The server's own words for an error: severity, SQLSTATE, message and,
/// where there is one, the constraint.
pub(crate) fn describe(err: &tokio_postgres::Error) -> String {
    match err.as_db_error() {
        Some(db) => {
            let mut text = format!("{} {}: {}", db.severity(), db.code().code(), db.message());
            if let Some(constraint) = db.constraint() {
                text.push_str(&format!(" (constraint {constraint})"));
            }
            if let Some(detail) = db.detail() {
                text.push_str(&format!("; {detail}"));
            }
            text
        }
        None => {
            let mut text = err.to_string();
            let mut source = err.source();
            while let Some(cause) = source {
                text.push_str(&format!(": {cause}"));
                source = cause.source();
            }
            text
        }
    }
}
