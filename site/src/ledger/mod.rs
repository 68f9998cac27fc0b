//! The site ledger: the server side of the sync protocol (docs/design.md §4).
//!
//! A handheld's items arrive in `POST /v1/sync`; each item's idempotency key
//! is claimed in the same SQLite transaction as the work it causes, so an
//! item applies exactly once however often it is sent. Items apply in
//! `client_seq` order within their session; scans and undos append hops to
//! an append-only ledger. The terminal listener's records come in through
//! [`terminal`] and are claimed the same way.
//!
//! One module per noun: [`auth`] (bearer tokens), [`devices`], [`receipts`]
//! (claims and stored answers), [`sessions`], [`units`], [`hops`],
//! [`periods`], [`sync`] (one request's items, in order) and [`terminal`].
//! Its HTTP handlers are a room above, [`crate::api::ledger`] and
//! [`crate::api::reference`]: nothing here sees a request. The modes'
//! rules are [`modes`]; the reference data they read are [`bins`],
//! [`grns`], [`manifests`], [`counts`] and [`operators`], loaded by
//! [`import`] and cached by handhelds through [`reference`].
//!
//! Architecture invariant: everything here takes the connection and `now`
//! as arguments (the handlers above read the clock); none of it touches a
//! socket or imports the HTTP surfaces ([`crate::api`], [`crate::view`],
//! [`crate::data_api`]).

pub mod admission;
pub mod attendance;
pub mod auth;
pub mod bins;
pub mod corrections;
pub mod counts;
pub mod decision_log;
pub mod devices;
pub mod grns;
pub mod heartbeat_log;
pub mod hop_feed;
pub mod hops;
pub mod import;
pub mod labels;
pub mod manifests;
pub mod metrics;
pub mod modes;
pub mod operators;
pub mod periods;
pub mod receipts;
pub mod reference;
pub mod rejections;
pub mod rescue;
pub mod session_close;
pub mod sessions;
pub mod skus;
pub mod sync;
pub mod terminal;
pub mod units;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use stockhop::key::IdempotencyKey;
use stockhop::time::UnixMs;

/// The undo window: an undo posts a compensating hop only when its capture
/// time is at most this long after the original's (docs/design.md §4 rule
/// 10); the core's [`stockhop::undo`] holds the rule the handheld reads too.
pub const UNDO_WINDOW_MS: i64 = stockhop::undo::UNDO_WINDOW.0 as i64;

/// The ledger's share of the server state.
#[derive(Clone)]
pub struct LedgerState {
    /// Keys held by requests in flight, per device scope.
    pub in_flight: InFlight,
    /// Sync requests' turns at the database, live ones first.
    pub admission: admission::Gate,
    /// The shared secret that signs terminal batches from a remote
    /// listener; with none, the terminal endpoint answers 404.
    pub terminal_secret: Option<Arc<[u8]>>,
    /// Sync items by outcome and their latency, for `GET /metrics`.
    pub metrics: metrics::SyncMetrics,
    /// The shared secret that signs site batches to a central
    /// (`--central-secret`); with none, the central endpoint answers 404.
    pub central_secret: Option<Arc<[u8]>>,
    /// Failed admin sign-ins per address (`crate::net::throttle`).
    pub sign_ins: Arc<std::sync::Mutex<crate::net::throttle::SignInThrottle>>,
    /// Whether the site is out of storage (`crate::store::storage`).
    pub storage: crate::store::storage::Storage,
}

impl Default for LedgerState {
    fn default() -> LedgerState {
        LedgerState::new(None)
    }
}

impl LedgerState {
    pub fn new(terminal_secret: Option<String>) -> LedgerState {
        LedgerState {
            in_flight: InFlight::default(),
            admission: admission::Gate::default(),
            terminal_secret: terminal_secret
                .filter(|secret| !secret.is_empty())
                .map(|secret| Arc::from(secret.into_bytes())),
            metrics: metrics::SyncMetrics::default(),
            central_secret: None,
            sign_ins: Arc::default(),
            storage: crate::store::storage::Storage::default(),
        }
        .with_storage(None, crate::store::storage::DEFAULT_MIN_FREE_BYTES)
    }

    /// Watches `dir`'s file system for free space below `min_free_bytes`
    /// (none: only the database's own refusals count).
    pub fn with_storage(
        mut self,
        dir: Option<std::path::PathBuf>,
        min_free_bytes: u64,
    ) -> LedgerState {
        self.storage = crate::store::storage::Storage::new(
            dir,
            min_free_bytes,
            self.metrics.storage_full.clone(),
            self.metrics.storage_free_bytes.clone(),
        );
        self
    }

    /// This site as a central: it takes site batches signed with `secret`.
    pub fn with_central_secret(mut self, secret: Option<String>) -> LedgerState {
        self.central_secret = secret
            .filter(|secret| !secret.is_empty())
            .map(|secret| Arc::from(secret.into_bytes()));
        self
    }
}

/// Idempotency keys that a request is working on right now.
///
/// One process owns the database file (the site server; the CLI only adds
/// devices and closes periods), so an in-memory set sees every request in
/// flight. A second request carrying a held key is answered
/// `OPERATION_IN_PROGRESS` for that item at once instead of queueing behind
/// the write lock; exactly-once itself rests on the receipt claimed in the
/// transaction, not on this set.
#[derive(Clone, Default)]
pub struct InFlight {
    keys: Arc<Mutex<HashSet<(String, IdempotencyKey)>>>,
}

impl InFlight {
    /// Claims `keys` for `scope`. Returns the guard that releases what it
    /// claimed, and for each key whether another request holds it. A key
    /// repeated within `keys` is this request's own and is not "held".
    pub fn claim(&self, scope: &str, keys: &[IdempotencyKey]) -> (InFlightGuard, Vec<bool>) {
        let mut set = self.keys.lock().unwrap_or_else(|p| p.into_inner());
        let mut mine = Vec::new();
        let held = keys
            .iter()
            .map(|key| {
                let entry = (scope.to_owned(), *key);
                if mine.contains(&entry) {
                    false
                } else if set.insert(entry.clone()) {
                    mine.push(entry);
                    false
                } else {
                    true
                }
            })
            .collect();
        (
            InFlightGuard {
                set: Arc::clone(&self.keys),
                mine,
            },
            held,
        )
    }
}

/// Releases a request's keys when it is done, whether it succeeded or not.
pub struct InFlightGuard {
    set: Arc<Mutex<HashSet<(String, IdempotencyKey)>>>,
    mine: Vec<(String, IdempotencyKey)>,
}

impl Drop for InFlightGuard {
    fn drop(&mut self) {
        let mut set = self.set.lock().unwrap_or_else(|p| p.into_inner());
        for entry in &self.mine {
            set.remove(entry);
        }
    }
}

/// The wall clock, read once per request at the edge ([`api`], the CLI).
pub fn wall_clock() -> UnixMs {
    let since_epoch = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    UnixMs(i64::try_from(since_epoch.as_millis()).unwrap_or(i64::MAX))
}

/// A 4xx answer: the request (or item) will never be taken as sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub status: u16,
    pub code: &'static str,
    pub message: String,
}

impl Refusal {
    pub fn new(status: u16, code: &'static str, message: impl Into<String>) -> Refusal {
        Refusal {
            status,
            code,
            message: message.into(),
        }
    }
}

/// Why a piece of ledger work did not complete.
#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    /// Refused with a 4xx code; nothing was written.
    #[error("{}: {}", .0.code, .0.message)]
    Refused(Refusal),
    /// The database failed (busy → 503, anything else → 500).
    #[error("{0}")]
    Sqlite(crate::store::sql::Error),
    /// A stored value could not be read back.
    #[error("corrupt ledger data: {0}")]
    Corrupt(String),
    /// No randomness for a new token.
    #[error(transparent)]
    Entropy(#[from] auth::EntropyError),
    /// The database could not run the work at all.
    #[error(transparent)]
    Db(#[from] crate::store::db::DbError),
    /// An item was refused after it had written, in a transaction that
    /// runs its items without savepoints: the transaction is rolled back
    /// and runs again with one per item. Never leaves [`sync`].
    #[error(
        "an item was refused after it wrote; its request runs again with a savepoint per item"
    )]
    Rewind,
}

impl LedgerError {
    /// Whether the same work may succeed later unchanged: the database was
    /// busy or failed, rather than the work being refused.
    pub fn is_retryable(&self) -> bool {
        !matches!(self, LedgerError::Refused(_))
    }

    /// The HTTP status a request failing this way is answered with: the
    /// refusal's 4xx, 503 for a busy database, else 500.
    pub fn status(&self) -> axum::http::StatusCode {
        use axum::http::StatusCode;
        match self {
            LedgerError::Refused(refusal) => {
                StatusCode::from_u16(refusal.status).unwrap_or(StatusCode::CONFLICT)
            }
            LedgerError::Sqlite(err) if err.is_busy() => StatusCode::SERVICE_UNAVAILABLE,
            LedgerError::Db(err) if err.is_busy() => StatusCode::SERVICE_UNAVAILABLE,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

impl From<crate::store::sql::Error> for LedgerError {
    /// Every unique-constraint violation becomes a 4xx refusal, never a 500.
    fn from(err: crate::store::sql::Error) -> LedgerError {
        match unique_violation(&err) {
            Some(refusal) => LedgerError::Refused(refusal),
            None => LedgerError::Sqlite(err),
        }
    }
}

impl From<LedgerError> for crate::error::AppError {
    fn from(err: LedgerError) -> crate::error::AppError {
        use axum::http::StatusCode;
        match err {
            LedgerError::Refused(refusal) => crate::error::AppError::client(
                StatusCode::from_u16(refusal.status).unwrap_or(StatusCode::CONFLICT),
                refusal.code,
                refusal.message,
            ),
            LedgerError::Sqlite(err) => crate::error::AppError::from(err),
            LedgerError::Corrupt(detail) => crate::error::AppError::Internal(detail),
            LedgerError::Entropy(err) => crate::error::AppError::Internal(err.to_string()),
            LedgerError::Db(err) => crate::error::AppError::from(err),
            LedgerError::Rewind => {
                crate::error::AppError::Internal(LedgerError::Rewind.to_string())
            }
        }
    }
}

/// Extra codes the ledger answers beside those in [`stockhop::wire::codes`].
pub mod codes {
    pub const UNIT_CONFLICT: &str = "UNIT_CONFLICT";
    pub const ALREADY_UNDONE: &str = "ALREADY_UNDONE";
    pub const DEVICE_EXISTS: &str = "DEVICE_EXISTS";
    pub const DEVICE_MISMATCH: &str = "DEVICE_MISMATCH";
    pub const SESSION_NOT_FOUND: &str = "SESSION_NOT_FOUND";
    /// A supervisor asked to close a device's session and it has none open.
    pub const NO_OPEN_SESSION: &str = "NO_OPEN_SESSION";
    pub const DEVICE_NOT_FOUND: &str = "DEVICE_NOT_FOUND";
    pub const NOT_FOUND: &str = "NOT_FOUND";
    pub const PERIOD_NOT_LATER: &str = "PERIOD_NOT_LATER";
    pub const PERIOD_NOT_ENDED: &str = "PERIOD_NOT_ENDED";
    pub const CONSTRAINT_CONFLICT: &str = "CONSTRAINT_CONFLICT";
    pub const NOTHING_TO_RESOLVE: &str = "NOTHING_TO_RESOLVE";
    /// A decision settled already (by a person or its handheld).
    pub const ALREADY_SETTLED: &str = "ALREADY_SETTLED";
    /// A correction the ledger's state does not allow: nothing was posted.
    pub const NOT_CORRECTABLE: &str = "NOT_CORRECTABLE";
    pub const COUNT_ALREADY_OPEN: &str = "COUNT_ALREADY_OPEN";
    pub const COUNT_NOT_CLOSED: &str = "COUNT_NOT_CLOSED";
    pub const COUNT_APPROVED: &str = "COUNT_APPROVED";
    pub const INVALID_CURSOR: &str = "INVALID_CURSOR";
    /// A hop feed cursor past the last hop: the ledger was restored from
    /// a backup older than the reader's place, so ids after its last hop
    /// will be given out again.
    pub const CURSOR_AHEAD: &str = "CURSOR_AHEAD";
}

/// Each unique constraint of the ledger's schema, as SQLite names it in
/// its error message (PostgreSQL's constraint names spell the same
/// columns), the 4xx answer it maps to, and what that answer says: the
/// product's own words, never the schema's.
pub const UNIQUE_CONSTRAINTS: &[(&str, u16, &str, &str)] = &[
    (
        "receipts.scope, receipts.key",
        409,
        stockhop::wire::codes::IDEMPOTENCY_KEY_REUSED,
        "this idempotency key was already used for a different request",
    ),
    (
        "receipts.session_id, receipts.client_seq",
        409,
        stockhop::wire::codes::SEQ_ALREADY_USED,
        "the session already has an item at this client_seq",
    ),
    (
        "seq_voids.session_id, seq_voids.seq",
        409,
        stockhop::wire::codes::SEQ_ALREADY_USED,
        "the session already has an item at this client_seq",
    ),
    (
        "sessions.session_id",
        403,
        stockhop::wire::codes::SESSION_NOT_YOURS,
        "the session belongs to another device",
    ),
    (
        "sessions.device_id",
        409,
        stockhop::wire::codes::SESSION_CONFLICT,
        "this device already has a session open: close it first (a handheld that lost it: a supervisor closes it, Devices, Close session)",
    ),
    (
        "sessions.operator_id",
        409,
        stockhop::wire::codes::SESSION_CONFLICT,
        "this operator already has a session open (on this device or another): sign out there first, or a supervisor closes it (Devices, Close session)",
    ),
    (
        "units.epc",
        409,
        codes::UNIT_CONFLICT,
        "another unit has this EPC",
    ),
    (
        "units.code",
        409,
        codes::UNIT_CONFLICT,
        "another unit has this code",
    ),
    (
        "hops.compensates",
        409,
        codes::ALREADY_UNDONE,
        "that hop is undone already",
    ),
    (
        "hops.device_id, hops.key",
        409,
        stockhop::wire::codes::IDEMPOTENCY_KEY_REUSED,
        "the device already recorded a hop under this idempotency key",
    ),
    (
        "terminal_events.key",
        409,
        stockhop::wire::codes::IDEMPOTENCY_KEY_REUSED,
        "the site already took a terminal event under this key",
    ),
    (
        "devices.device_id",
        409,
        codes::DEVICE_EXISTS,
        "a device with this id exists already",
    ),
    (
        "decision_log.decision_id",
        409,
        codes::ALREADY_SETTLED,
        "the decision is settled already",
    ),
    (
        "devices.token_sha256",
        409,
        codes::DEVICE_EXISTS,
        "another device was given the same token: add the device again",
    ),
    (
        "periods.closed_until",
        409,
        codes::PERIOD_NOT_LATER,
        "a period closes only after the last one closed",
    ),
    // One open count per place (an expression index: SQLite names it,
    // PostgreSQL's name spells its columns).
    (
        "index 'counts_one_open_per_place'",
        409,
        codes::COUNT_ALREADY_OPEN,
        "a count is open already for this place",
    ),
    (
        "counts.location, counts.zone, counts.bin",
        409,
        codes::COUNT_ALREADY_OPEN,
        "a count is open already for this place",
    ),
];

/// What a violation of a unique constraint [`UNIQUE_CONSTRAINTS`] does not
/// list says.
pub const CONSTRAINT_CONFLICT_MESSAGE: &str = "the site has a record that conflicts with this one";

/// The 4xx answer for a unique-constraint violation, if `err` is one.
pub fn unique_violation(err: &crate::store::sql::Error) -> Option<Refusal> {
    let columns = err.unique_violation()?;
    let columns = columns.as_str();
    let (status, code, message) = UNIQUE_CONSTRAINTS
        .iter()
        .find(|(name, ..)| *name == columns)
        .map_or_else(
            || {
                tracing::warn!(
                    constraint = columns,
                    "a unique constraint the ledger's answers do not name"
                );
                (409, codes::CONSTRAINT_CONFLICT, CONSTRAINT_CONFLICT_MESSAGE)
            },
            |(_, status, code, message)| (*status, *code, *message),
        );
    Some(Refusal::new(status, code, message))
}

impl crate::store::sql::Conflicting for LedgerError {
    fn is_conflict(&self) -> bool {
        matches!(self, LedgerError::Sqlite(err) if err.is_conflict())
    }
}

/// Runs `work` inside a savepoint: kept when it succeeds, rolled back when
/// it fails, so one item's failure leaves the rest of the request intact.
/// Outside a transaction it runs in a write transaction of its own. The
/// writes `work` put off are sent before the savepoint ends, so their
/// failure is `work`'s ([`crate::store::sql::Connection::flush`]).
pub fn savepoint<T>(
    conn: &crate::store::sql::Connection,
    work: impl FnOnce(&crate::store::sql::Connection) -> Result<T, LedgerError>,
) -> Result<T, LedgerError> {
    let run = |sql: &str| -> Result<(), LedgerError> {
        conn.execute_batch(sql).map_err(LedgerError::Sqlite)
    };
    let work = |conn: &crate::store::sql::Connection| {
        let value = work(conn)?;
        conn.flush()?;
        Ok(value)
    };
    if !conn.in_transaction() {
        // A conflict here is answered busy: the caller (a supervisor's
        // command) runs it again.
        run(conn.begin_write())?;
        return match work(conn) {
            Ok(value) => run("COMMIT").map(|()| value),
            Err(err) => {
                // Ends the transaction, whatever state the error left.
                let _ = run("ROLLBACK");
                Err(err)
            }
        };
    }
    run("SAVEPOINT ledger_item")?;
    match work(conn) {
        Ok(value) => {
            run("RELEASE ledger_item")?;
            Ok(value)
        }
        Err(err) => {
            run("ROLLBACK TO ledger_item")?;
            run("RELEASE ledger_item")?;
            Err(err)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_keep_their_status_and_a_busy_database_is_503() {
        let refused = LedgerError::Refused(Refusal::new(422, "INVALID_ITEM", "bad"));
        assert_eq!(refused.status().as_u16(), 422);
        assert!(!refused.is_retryable());
        let busy = LedgerError::Sqlite(crate::store::sql::Error::from(
            rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
                None,
            ),
        ));
        assert_eq!(busy.status().as_u16(), 503);
        assert!(busy.is_retryable());
        assert_eq!(LedgerError::Corrupt("x".into()).status().as_u16(), 500);
    }

    #[test]
    fn a_key_held_by_one_request_is_in_progress_for_another_until_released() {
        let in_flight = InFlight::default();
        let a = IdempotencyKey::from_random_bytes([1; 16]);
        let b = IdempotencyKey::from_random_bytes([2; 16]);
        let (first, held) = in_flight.claim("HH-1", &[a, a]);
        assert_eq!(
            held,
            vec![false, false],
            "a repeat within a request is its own"
        );
        let (_second, held) = in_flight.claim("HH-1", &[a, b]);
        assert_eq!(held, vec![true, false]);
        let (_other_device, held) = in_flight.claim("HH-2", &[a]);
        assert_eq!(held, vec![false]);
        drop(first);
        let (_third, held) = in_flight.claim("HH-1", &[a]);
        assert_eq!(held, vec![false]);
    }
}
