//! The site ledger inside the simulation: the real ledger code
//! (`stockhop_site::ledger::sync`) on a real SQLite file, called the way the
//! `POST /v1/sync` handler calls it, with the simulation's clock as the
//! server clock. A restart drops the connection (what a crash leaves is
//! what SQLite committed) and opens the file again.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use stockhop::time::UnixMs;
use stockhop::wire::{ErrorBody, SyncResponse};
use stockhop_site::ledger::devices::{self, Device, Profile};
use stockhop_site::ledger::rescue;
use stockhop_site::ledger::{import, sync, terminal, LedgerError};
use stockhop_site::net::delivery::DeliveryError;
use stockhop_site::store::db;
use stockhop_site::store::sql::Connection;
use stockhop_site::terminal_wire::{TerminalBatch, TerminalBatchResponse};

pub struct Ledger {
    path: PathBuf,
    conn: Connection,
    /// Commits left before the armed crash; 0 when none is armed.
    crash_countdown: Arc<AtomicU32>,
}

/// Opens (and migrates) the site database at `path` with a crash at a
/// commit: while `countdown` is armed, the commit it counts down to rolls
/// back instead, and the process is treated as dead from that instant (the
/// caller restarts it), so nothing after it runs.
pub fn crashable(
    path: &std::path::Path,
    countdown: &Arc<AtomicU32>,
) -> anyhow::Result<rusqlite::Connection> {
    let mut conn = db::open_connection(path)?;
    db::migrate(&mut conn)?;
    let countdown = Arc::clone(countdown);
    conn.commit_hook(Some(move || match countdown.load(Ordering::SeqCst) {
        0 => false,
        1 => {
            countdown.store(0, Ordering::SeqCst);
            true
        }
        n => {
            countdown.store(n - 1, Ordering::SeqCst);
            false
        }
    }));
    Ok(conn)
}

/// The ledger's answer to one request: a status and a JSON body.
pub struct Answer {
    pub status: u16,
    pub body: String,
}

impl Ledger {
    pub fn open(path: PathBuf) -> anyhow::Result<Ledger> {
        let crash_countdown = Arc::new(AtomicU32::new(0));
        let conn = Self::connect(&path, &crash_countdown)?;
        Ok(Ledger {
            path,
            conn,
            crash_countdown,
        })
    }

    fn connect(path: &std::path::Path, countdown: &Arc<AtomicU32>) -> anyhow::Result<Connection> {
        Ok(Connection::Sqlite(crashable(path, countdown)?))
    }

    /// Arms a crash at the `nth` commit from now (1 = the next one).
    pub fn crash_at_commit(&self, nth: u32) {
        self.crash_countdown.store(nth, Ordering::SeqCst);
    }

    /// Whether the armed crash happened (and so the process is dead).
    pub fn crashed(&self) -> bool {
        self.crash_countdown.load(Ordering::SeqCst) == 0
    }

    /// Disarms a crash that did not happen within the request.
    pub fn disarm(&self) {
        self.crash_countdown.store(0, Ordering::SeqCst);
    }

    /// Adds a commissioned handheld; returns its bearer token.
    pub fn add_device(&self, device_id: &str, now: UnixMs) -> anyhow::Result<String> {
        Ok(devices::add(
            &self.conn,
            device_id,
            Profile::Mc3390xr,
            true,
            now,
        )?)
    }

    /// Imports `csv` as `kind` the way `stockhop-site import` does: from a
    /// file beside the ledger's, in one transaction.
    pub fn import(&mut self, kind: import::Kind, csv: &str, now: UnixMs) -> anyhow::Result<()> {
        let file = self
            .path
            .with_file_name(format!("{kind:?}.csv").to_lowercase());
        std::fs::write(&file, csv)?;
        import::import(&mut self.conn, kind, &file, now)?;
        Ok(())
    }

    /// A crash and a start: the connection goes, the file stays.
    pub fn restart(&mut self) -> anyhow::Result<()> {
        self.disarm();
        let fresh = Self::connect(&self.path, &self.crash_countdown)?;
        self.conn = fresh;
        Ok(())
    }

    /// `POST /v1/sync` with `token` and `body`, handled at server time `now`.
    pub fn sync(&mut self, token: &str, body: &[u8], now: UnixMs) -> Answer {
        let device = match devices::authenticate(&self.conn, token) {
            Ok(Some(device)) => device,
            Ok(None) => return error(401, "UNAUTHORIZED", "unknown device token"),
            Err(err) => return error(500, "INTERNAL", &err.to_string()),
        };
        let parsed = match sync::parse_request(body) {
            Ok(parsed) => parsed,
            Err(refusal) => return error(refusal.status, refusal.code, &refusal.message),
        };
        if parsed.device_id != device.device_id {
            return error(403, "DEVICE_MISMATCH", "device_id does not match the token");
        }
        // One request at a time reaches the ledger here, so no key is ever
        // held by another request in flight.
        let held = vec![false; parsed.items.len()];
        match run(&mut self.conn, &device, &parsed, &held, now) {
            Ok(results) => Answer {
                status: 200,
                body: serde_json::to_string(&SyncResponse {
                    server_time: now,
                    results,
                })
                .expect("a response serialises"),
            },
            Err(LedgerError::Refused(refusal)) => {
                error(refusal.status, refusal.code, &refusal.message)
            }
            Err(err) => error(500, "INTERNAL", &err.to_string()),
        }
    }

    /// A terminal batch from the listener's forwarder, handled at `now` the
    /// way this site's in-process sink hands it over: a refusal comes back
    /// as the status the HTTP endpoint would have answered.
    pub fn terminal(
        &mut self,
        batch: &TerminalBatch,
        now: UnixMs,
    ) -> Result<TerminalBatchResponse, DeliveryError> {
        terminal::ingest(&mut self.conn, batch, now).map_err(|err| DeliveryError::Status {
            status: err.status().as_u16(),
            body: err.to_string(),
        })
    }

    /// Revokes a device, as `stockhop-site device revoke` does.
    pub fn revoke(&self, device_id: &str, now: UnixMs) -> Result<(), LedgerError> {
        devices::revoke(&self.conn, device_id, now)
    }

    /// Imports a rescue file, as `stockhop-site rescue import` does.
    pub fn rescue(&mut self, file: &[u8], now: UnixMs) -> Result<rescue::Imported, LedgerError> {
        rescue::import(&mut self.conn, file, now)
    }

    /// Read access for the invariant checks.
    pub fn conn(&self) -> &Connection {
        &self.conn
    }
}

/// The handler's work: the request's transaction, then (after the answer,
/// in the handler) any backlog it left parked, chunk by chunk, each chunk
/// a commit the simulation may crash at.
fn run(
    conn: &mut Connection,
    device: &Device,
    parsed: &sync::ParsedRequest,
    held: &[bool],
    now: UnixMs,
) -> Result<Vec<stockhop::wire::ItemResult>, LedgerError> {
    let ran = sync::run_parked(conn, device, parsed.sent_at, &parsed.items, held, now)?;
    let mut parked = ran.parked;
    while !parked.is_empty() {
        parked = sync::drain_parked(conn, device, &parked, now)?;
    }
    Ok(ran.results)
}

fn error(status: u16, code: &str, message: &str) -> Answer {
    Answer {
        status,
        body: serde_json::to_string(&ErrorBody {
            code: code.to_owned(),
            message: message.to_owned(),
        })
        .expect("an error body serialises"),
    }
}
