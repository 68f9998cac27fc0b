//! A full disk is an answer, not a failure: below a free-space watermark
//! (`--min-free`, [`DEFAULT_MIN_FREE_BYTES`]) on the data directory's file
//! system, or after the database said it is full (SQLite's `SQLITE_FULL`,
//! PostgreSQL's `disk_full`), the site answers sync and heartbeats `503
//! STORAGE_FULL` with Retry-After before it writes anything, `/healthz`
//! answers 503 with `"storage":"full"`, and the site's view and `/metrics`
//! show it. Nothing acknowledged is touched: a handheld keeps its items and
//! resends them, and the site takes them again by itself once space
//! returns (the next reading above the watermark, or [`FULL_HOLD`] after
//! the database's last refusal).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use prometheus_client::metrics::gauge::Gauge;

use crate::error::{AppError, DatabaseFull};
pub use crate::limits::DEFAULT_MIN_FREE_BYTES;

/// How long a free-space reading stands: one `statvfs` a second at most,
/// however many requests arrive.
pub const CHECK_INTERVAL: Duration = Duration::from_secs(1);
/// How long the site answers "full" after the database refused a write for
/// lack of space, when the free space it reads is above the watermark (a
/// quota, or space taken back for a moment): then it tries again.
pub const FULL_HOLD: Duration = Duration::from_secs(10);
/// The site's view of its storage, shared by every request.
#[derive(Clone, Debug)]
pub struct Storage {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    /// The directory whose file system is watched; none watches only the
    /// database's own refusals.
    dir: Option<PathBuf>,
    min_free_bytes: u64,
    reading: Mutex<Reading>,
    full: Gauge,
    free_bytes: Gauge,
}

#[derive(Debug, Default)]
struct Reading {
    checked_at: Option<Instant>,
    free_bytes: Option<u64>,
    database_full_at: Option<Instant>,
    was_full: bool,
}

impl Default for Storage {
    fn default() -> Storage {
        Storage::new(
            None,
            DEFAULT_MIN_FREE_BYTES,
            Gauge::default(),
            Gauge::default(),
        )
    }
}

impl Storage {
    /// Watches `dir`'s file system against `min_free_bytes`, setting the
    /// `full` (0/1) and `free_bytes` gauges as it reads.
    pub fn new(
        dir: Option<PathBuf>,
        min_free_bytes: u64,
        full: Gauge,
        free_bytes: Gauge,
    ) -> Storage {
        Storage {
            inner: Arc::new(Inner {
                dir,
                min_free_bytes,
                reading: Mutex::new(Reading::default()),
                full,
                free_bytes,
            }),
        }
    }

    /// Whether the site is out of space now.
    pub fn is_full(&self) -> bool {
        self.is_full_at(Instant::now())
    }

    fn is_full_at(&self, now: Instant) -> bool {
        let inner = &self.inner;
        let mut reading = inner
            .reading
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let stale = reading
            .checked_at
            .is_none_or(|at| now.saturating_duration_since(at) >= CHECK_INTERVAL);
        if stale {
            reading.checked_at = Some(now);
            reading.free_bytes = inner.dir.as_ref().and_then(|dir| {
                match rustix::fs::statvfs(dir) {
                    Ok(stat) => Some(stat.f_bavail.saturating_mul(stat.f_frsize)),
                    Err(err) => {
                        crate::warn_sampled!(dir = %dir.display(), %err, "cannot read the free space");
                        None
                    }
                }
            });
        }
        let low = reading
            .free_bytes
            .is_some_and(|free| free < inner.min_free_bytes);
        let refused = reading
            .database_full_at
            .is_some_and(|at| now.saturating_duration_since(at) < FULL_HOLD);
        let full = low || refused;
        if full != reading.was_full {
            reading.was_full = full;
            if full {
                tracing::error!(
                    free_bytes = reading.free_bytes,
                    min_free_bytes = inner.min_free_bytes,
                    database_refused = refused,
                    "storage full: sync and heartbeats are answered 503 STORAGE_FULL until space returns"
                );
            } else {
                tracing::info!(
                    free_bytes = reading.free_bytes,
                    "storage has room again: taking writes"
                );
            }
        }
        inner.full.set(i64::from(full));
        if let Some(free) = reading.free_bytes {
            inner
                .free_bytes
                .set(i64::try_from(free).unwrap_or(i64::MAX));
        }
        full
    }

    /// The database refused a write for lack of space at `now`.
    pub fn database_full(&self) {
        let mut reading = self
            .inner
            .reading
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        reading.database_full_at = Some(Instant::now());
    }

    /// The answer to a write refused because the site is full.
    pub fn refusal() -> AppError {
        AppError::storage_full()
    }
}

/// Whether a request writes what a full disk cannot take: a sync or a
/// heartbeat (the handhelds' writes) or a signed terminal batch.
fn writes(request: &Request) -> bool {
    let path = request.uri().path();
    request.method() == axum::http::Method::POST
        && (path == stockhop::wire::SYNC_PATH
            || path == crate::terminal_wire::TERMINAL_EVENTS_PATH
            || (path.starts_with("/v1/devices/") && path.ends_with("/heartbeat")))
}

/// Middleware over the whole site: refuses writes while full, and hears
/// of the database's refusals in any response.
pub async fn watch(State(storage): State<Storage>, request: Request, next: Next) -> Response {
    if writes(&request) && storage.is_full() {
        return Storage::refusal().into_response();
    }
    let response = next.run(request).await;
    if response.extensions().get::<DatabaseFull>().is_some() {
        storage.database_full();
        // Read again now, so the change is logged and shown at once.
        storage.is_full();
    }
    response
}

/// Reads a byte count: a number with an optional unit, `B`, `KiB`, `MiB`,
/// `GiB`, `TiB` (powers of 1024; `K`, `M`, `G`, `T` alike), e.g. `256MiB`.
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: u64 = number.parse().map_err(|_| {
        format!("{text:?}: a byte count is a number with an optional unit (256MiB)")
    })?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kib" => 10,
        "m" | "mib" => 20,
        "g" | "gib" => 30,
        "t" | "tib" => 40,
        other => return Err(format!("{other:?}: units are B, KiB, MiB, GiB or TiB")),
    };
    number
        .checked_mul(1_u64 << shift)
        .ok_or_else(|| format!("{text:?} is too large"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_counts_read_with_binary_units() {
        assert_eq!(parse_bytes("256MiB"), Ok(256 << 20));
        assert_eq!(parse_bytes("0"), Ok(0));
        assert_eq!(parse_bytes("4 k"), Ok(4096));
        assert_eq!(parse_bytes("1GiB"), Ok(1 << 30));
        assert!(parse_bytes("MiB").is_err());
        assert!(parse_bytes("5 parsecs").is_err());
        assert!(parse_bytes("99999999999TiB").is_err());
    }

    #[test]
    fn a_database_refusal_holds_full_for_a_while_then_lets_writes_try_again() {
        let storage = Storage::new(None, 0, Gauge::default(), Gauge::default());
        let now = Instant::now();
        assert!(!storage.is_full_at(now));
        storage.database_full();
        assert!(storage.is_full_at(Instant::now()));
        assert!(!storage.is_full_at(Instant::now() + FULL_HOLD));
    }
}
