//! How a transaction keeps a refused item from leaving a trace: without
//! savepoints first, and again with one per item when a refusal needs it.

use crate::ledger::LedgerError;
use crate::store::sql::{retry_conflicts, Transaction};

/// How a transaction keeps a refused item from leaving a trace.
///
/// A savepoint per item is what makes a refusal leave nothing behind, but
/// it costs: SQLite copies every page an item touches into the savepoint's
/// journal, and on PostgreSQL `SAVEPOINT` and `RELEASE` are two more round
/// trips an item. Most items are never refused, or are refused before they
/// write. So a request first runs without savepoints
/// ([`Isolation::Optimistic`]): an item refused before any write has left
/// nothing to undo, and one refused after it wrote rewinds the whole
/// transaction, which runs again item by item in savepoints
/// ([`Isolation::PerItem`]) and gives every item the answer it would have
/// had. The work is a function of the database and the request (the clock
/// is read once, at the edge), so the second run repeats the first up to
/// the refused item, and nothing of the first run was kept or answered.
///
/// On PostgreSQL a refusal can also come from the database (a unique
/// constraint), and a failed statement aborts the whole transaction, so
/// it cannot be stepped past: such a refusal rewinds too, wherever it is
/// met ([`crate::store::sql::Connection::transaction_aborted`]). That includes a
/// write put off to travel with the next statement
/// ([`crate::store::sql::Statement::execute_later`]), whose failure the next
/// item's statement, or the commit, reports; in the second run each item's
/// savepoint sends its writes before it ends, so a failure is its own
/// item's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Isolation {
    Optimistic,
    PerItem,
}

/// Runs `attempt` optimistically, and once more with a savepoint per item
/// when it asks to be rewound, on either engine. A serialization conflict
/// runs it all again ([`retry_conflicts`]).
pub(super) fn with_isolation<T>(
    mut attempt: impl FnMut(Isolation) -> Result<T, LedgerError>,
) -> Result<T, LedgerError> {
    retry_conflicts(|| match attempt(Isolation::Optimistic) {
        Err(LedgerError::Rewind) => attempt(Isolation::PerItem),
        other => other,
    })
}

/// Ends an attempt's transaction with what its work came to: sends the
/// writes it put off and commits. A refusal met while the transaction is
/// aborted (PostgreSQL: a statement, or a write put off, violated a
/// constraint) rewinds an optimistic attempt.
pub(super) fn conclude<T>(
    tx: Transaction<'_>,
    isolation: Isolation,
    work: Result<T, LedgerError>,
) -> Result<T, LedgerError> {
    let work = work.and_then(|value| {
        tx.flush()?;
        Ok(value)
    });
    match work {
        Ok(value) => {
            tx.commit().map_err(LedgerError::Sqlite)?;
            Ok(value)
        }
        Err(LedgerError::Refused(_))
            if isolation == Isolation::Optimistic && tx.transaction_aborted() =>
        {
            Err(LedgerError::Rewind)
        }
        Err(err) => Err(err),
    }
}
