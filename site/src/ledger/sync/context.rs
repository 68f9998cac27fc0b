//! What every stage of one transaction shares: its connection, the device,
//! the clock read once at the edge, and the sessions it has read
//! ([`Cursor`]), moved here and written back once before the commit.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;

use stockhop::time::UnixMs;

use super::isolation::Isolation;
use crate::ledger::devices::Device;
use crate::ledger::periods;
use crate::ledger::sessions::{self, Session};
use crate::ledger::{savepoint, LedgerError};
use crate::limits::{DRAIN_CHUNK_ITEMS, MAX_CLOCK_SKEW_MS};
use crate::store::sql::Connection;

/// What every item of one transaction shares.
pub(super) struct Context<'a> {
    /// The transaction's connection (an item's savepoint runs on it too).
    pub conn: &'a Connection,
    pub device: &'a Device,
    /// Server clock when the request arrived; `recorded_at` of what applies.
    pub now: UnixMs,
    /// Server receive time − the device's `sent_at`.
    pub skew_ms: i64,
    /// The end of the last closed period, read once in the transaction.
    pub closed_until: Option<UnixMs>,
    /// Buffered items this transaction may still apply
    /// ([`DRAIN_CHUNK_ITEMS`]); a drain that runs out parks the session's
    /// cursor on the next buffered slot for [`super::drain_parked`] to go
    /// on from.
    pub drain_budget: Cell<usize>,
    /// Sessions whose drain ran out of the budget in this transaction.
    parked: RefCell<Vec<String>>,
    /// How one item's writes are kept apart from the others'.
    isolation: Isolation,
    /// The sessions this transaction has read, by id.
    cursors: RefCell<HashMap<String, Cursor>>,
}

/// A session as one transaction sees it: read once, its cursor moved here
/// and written back once, before the commit ([`Context::finish`]).
/// Only the ledger's transaction, which holds the write lock, moves it.
#[derive(Debug, Clone)]
pub(super) struct Cursor {
    session: Session,
    /// `next_seq` as stored.
    stored_next_seq: u64,
    /// Whether a slot at or past the cursor may be taken: read with the
    /// session, and set by this transaction when it buffers or voids.
    /// While it is false every slot from the cursor on is empty, so an
    /// item in its turn moves the cursor on without reading a slot.
    ahead: bool,
}

impl<'a> Context<'a> {
    pub fn new(
        conn: &'a Connection,
        device: &'a Device,
        now: UnixMs,
        skew_ms: i64,
        isolation: Isolation,
    ) -> Result<Context<'a>, LedgerError> {
        Ok(Context {
            conn,
            device,
            now,
            skew_ms: skew_ms.clamp(-MAX_CLOCK_SKEW_MS, MAX_CLOCK_SKEW_MS),
            closed_until: periods::closed_until(conn)?,
            drain_budget: Cell::new(DRAIN_CHUNK_ITEMS),
            parked: RefCell::new(Vec::new()),
            isolation,
            cursors: RefCell::new(HashMap::new()),
        })
    }
}

impl Context<'_> {
    /// The session, from this transaction's copy or else the database.
    pub fn session(&self, session_id: &str) -> Result<Option<Session>, LedgerError> {
        if let Some(cursor) = self.cursors.borrow().get(session_id) {
            return Ok(Some(cursor.session.clone()));
        }
        let Some((session, ahead)) = sessions::find_with_ahead(self.conn, session_id)? else {
            return Ok(None);
        };
        let cursor = Cursor {
            stored_next_seq: session.next_seq,
            session: session.clone(),
            ahead,
        };
        self.cursors
            .borrow_mut()
            .insert(session_id.to_owned(), cursor);
        Ok(Some(session))
    }

    /// Reads a session's row again after this transaction changed it
    /// (opened, closed), keeping the cursor this transaction moved.
    pub fn reread_session(&self, session_id: &str) -> Result<(), LedgerError> {
        let session = sessions::find(self.conn, session_id)?
            .ok_or_else(|| LedgerError::Corrupt(format!("session {session_id} vanished")))?;
        if let Some(cursor) = self.cursors.borrow_mut().get_mut(session_id) {
            cursor.session = Session {
                next_seq: cursor.session.next_seq,
                ..session
            };
        }
        Ok(())
    }

    /// Whether slots at or past the session's cursor may be taken.
    pub fn ahead(&self, session_id: &str) -> bool {
        self.cursors
            .borrow()
            .get(session_id)
            .is_none_or(|cursor| cursor.ahead)
    }

    /// Notes that this transaction takes a slot ahead of the cursor.
    pub fn take_ahead(&self, session_id: &str) {
        if let Some(cursor) = self.cursors.borrow_mut().get_mut(session_id) {
            cursor.ahead = true;
        }
    }

    /// Moves the cursor of a session this transaction has read.
    pub fn move_cursor(&self, session_id: &str, next_seq: u64) -> Result<(), LedgerError> {
        let mut cursors = self.cursors.borrow_mut();
        let cursor = cursors.get_mut(session_id).ok_or_else(|| {
            LedgerError::Corrupt(format!("session {session_id} moved before it was read"))
        })?;
        cursor.session.next_seq = next_seq;
        Ok(())
    }

    /// Runs one item's `work` so that a refusal leaves no trace: in a
    /// savepoint, or without one, rewinding the transaction when the refused
    /// item had written (the count of changed rows moved) or the refusal
    /// aborted it (PostgreSQL).
    pub fn isolate<T>(
        &self,
        work: impl FnOnce() -> Result<T, LedgerError>,
    ) -> Result<T, LedgerError> {
        let conn = self.conn;
        match self.isolation {
            Isolation::PerItem => {
                // The sessions' copies roll back with the savepoint.
                let cursors = self.cursors.borrow().clone();
                // The savepoint runs on the transaction's own connection,
                // the one this context carries.
                let result = savepoint(conn, |_| work());
                if result.is_err() {
                    *self.cursors.borrow_mut() = cursors;
                }
                result
            }
            Isolation::Optimistic => {
                let before = conn.total_changes();
                match work() {
                    Err(LedgerError::Refused(_))
                        if conn.total_changes() != before || conn.transaction_aborted() =>
                    {
                        Err(LedgerError::Rewind)
                    }
                    other => other,
                }
            }
        }
    }

    /// Notes a session whose drain ran out of this transaction's budget.
    pub fn park(&self, session_id: &str) {
        let mut parked = self.parked.borrow_mut();
        if !parked.iter().any(|s| s == session_id) {
            parked.push(session_id.to_owned());
        }
    }

    /// Writes back every cursor this transaction moved, and names the
    /// sessions it left parked: the end of the transaction's work.
    pub fn finish(self) -> Result<Vec<String>, LedgerError> {
        for (session_id, cursor) in self.cursors.borrow().iter() {
            if cursor.session.next_seq != cursor.stored_next_seq {
                sessions::set_next_seq(self.conn, session_id, cursor.session.next_seq)?;
            }
        }
        Ok(self.parked.into_inner())
    }
}
