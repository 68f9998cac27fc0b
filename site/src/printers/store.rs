//! The printers' SQL, on both engines: printers and the stations they
//! serve, what each one's last host status said, and the print-job log
//! whose states make a job print once (`pending → sending → printed`, or
//! `refused` / `in_doubt` for a person). The ENCODE hop of a verified tag
//! is appended here, in the transaction that settles its job.

use serde::{Deserialize, Serialize};
use stockhop::time::UnixMs;
use stockhop::wire::Mode;

use super::codes;
use super::zpl::{HostStatus, ReadBack};
use crate::ledger::devices::{self, Profile};
use crate::ledger::hops::{self, kinds, NewHop, SourceMode};
use crate::ledger::modes::derived_key;
use crate::ledger::{periods, units, LedgerError, Refusal};
pub use crate::limits::{MAX_JOB_ID_CHARS, SETTLED_JOB_RETENTION_MS};
use crate::store::sql::{params, Connection, OptionalExtension, Row};

/// Where a printer's answers are recorded in the heartbeat view.
pub const SOURCE_PRINTER: &str = "printer";

/// The raw port a printer listens on unless its address names another.
pub const DEFAULT_RAW_PORT: u16 = 9100;

/// Jobs listed as decisions on the view (the oldest first).
pub const MAX_DECISIONS_LISTED: i64 = 100;

/// Job states.
pub mod states {
    pub const PENDING: &str = "pending";
    pub const SENDING: &str = "sending";
    pub const PRINTED: &str = "printed";
    pub const IN_DOUBT: &str = "in_doubt";
    pub const REFUSED: &str = "refused";
    pub const DISMISSED: &str = "dismissed";
}

/// Why a job waits for a person.
pub mod reasons {
    /// The tag read back other than the EPC written.
    pub const READ_BACK_MISMATCH: &str = "read_back_mismatch";
    /// The tag read back nothing (no tag, or a tag the printer voided).
    pub const VOID_TAG: &str = "void_tag";
    /// The format went out and the printer's answer did not come back:
    /// it may have printed, so it is not sent again on its own.
    pub const NO_ANSWER: &str = "no_answer";
    /// The site stopped while the job was being sent.
    pub const INTERRUPTED: &str = "interrupted";
}

fn refused(status: u16, code: &'static str, message: impl Into<String>) -> LedgerError {
    LedgerError::Refused(Refusal::new(status, code, message.into()))
}

/// A printer to poll.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Printer {
    pub printer_id: String,
    pub host: String,
    pub port: u16,
}

impl Printer {
    pub fn address(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// Reads `HOST[:PORT]` (an IPv6 host in brackets); the port is 9100 when
/// not given.
pub fn parse_address(address: &str) -> Result<(String, u16), LedgerError> {
    let bad = || {
        refused(
            400,
            codes::INVALID_PRINTER,
            format!("address {address:?} is not HOST:PORT"),
        )
    };
    let address = address.trim();
    let (host, port) = if let Some(rest) = address.strip_prefix('[') {
        let (host, tail) = rest.split_once(']').ok_or_else(bad)?;
        match tail.strip_prefix(':') {
            Some(port) => (host, Some(port)),
            None if tail.is_empty() => (host, None),
            None => return Err(bad()),
        }
    } else {
        match address.rsplit_once(':') {
            Some((host, port)) if !host.contains(':') => (host, Some(port)),
            Some(_) => return Err(bad()),
            None => (address, None),
        }
    };
    let port = match port {
        Some(port) => port
            .parse::<u16>()
            .ok()
            .filter(|p| *p > 0)
            .ok_or_else(bad)?,
        None => DEFAULT_RAW_PORT,
    };
    let host_ok = !host.is_empty()
        && host.len() <= 253
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | ':'));
    if !host_ok {
        return Err(bad());
    }
    Ok((host.to_owned(), port))
}

/// Registers a printer: a device of profile `profile` (commissioned: a
/// printer has no practice mode) and its address, and the handhelds whose
/// station prints at it. Its device token is never shown: a printer does
/// not sync.
pub fn add(
    conn: &mut Connection,
    printer_id: &str,
    address: &str,
    profile: Profile,
    stations: &[String],
    now: UnixMs,
) -> Result<Printer, LedgerError> {
    if profile != Profile::Zt411r {
        return Err(refused(
            400,
            codes::INVALID_PRINTER,
            format!("profile {} is not a printer's", profile.as_str()),
        ));
    }
    let (host, port) = parse_address(address)?;
    let tx = conn.transaction_with_behavior(crate::store::sql::TransactionBehavior::Immediate)?;
    devices::add(&tx, printer_id, profile, true, now)?;
    tx.execute(
        "INSERT INTO printers (printer_id, host, port, added_at) VALUES (?1, ?2, ?3, ?4)",
        params![printer_id, host, i64::from(port), now.0],
    )?;
    assign_stations(&tx, printer_id, stations)?;
    tx.commit()?;
    Ok(Printer {
        printer_id: printer_id.to_owned(),
        host,
        port,
    })
}

/// Moves a registered printer to another address and, with `stations`,
/// has those handhelds' stations print at it (a station moved from
/// another printer leaves that one). A revoked printer is not found.
pub fn update(
    conn: &mut Connection,
    printer_id: &str,
    address: Option<&str>,
    stations: &[String],
) -> Result<Printer, LedgerError> {
    let parsed = address.map(parse_address).transpose()?;
    let tx = conn.transaction_with_behavior(crate::store::sql::TransactionBehavior::Immediate)?;
    let Some(mut printer) = find(&tx, printer_id)? else {
        return Err(refused(
            404,
            crate::ledger::codes::DEVICE_NOT_FOUND,
            format!("no printer {printer_id:?} (revoked, or never added)"),
        ));
    };
    if let Some((host, port)) = parsed {
        tx.execute(
            "UPDATE printers SET host = ?2, port = ?3 WHERE printer_id = ?1",
            params![printer_id, host, i64::from(port)],
        )?;
        (printer.host, printer.port) = (host, port);
    }
    assign_stations(&tx, printer_id, stations)?;
    tx.commit()?;
    Ok(printer)
}

/// Has each handheld of `stations` print at `printer_id`.
fn assign_stations(
    conn: &Connection,
    printer_id: &str,
    stations: &[String],
) -> Result<(), LedgerError> {
    for station in stations {
        let known: Option<String> = conn
            .query_row(
                "SELECT profile FROM devices WHERE device_id = ?1",
                [station.as_str()],
                |row| row.get(0),
            )
            .optional()?;
        if known
            .as_deref()
            .and_then(Profile::parse)
            .map(Profile::runs_handheld_modes)
            != Some(true)
        {
            return Err(refused(
                404,
                crate::ledger::codes::DEVICE_NOT_FOUND,
                format!("no handheld {station:?} to print for"),
            ));
        }
        conn.execute(
            "INSERT INTO printer_stations (device_id, printer_id) VALUES (?1, ?2)
             ON CONFLICT (device_id) DO UPDATE SET printer_id = excluded.printer_id",
            params![station, printer_id],
        )?;
    }
    Ok(())
}

/// The printers that are not revoked, as a query's WHERE clause.
const IN_SERVICE: &str =
    "NOT EXISTS (SELECT 1 FROM device_revocations r WHERE r.device_id = p.printer_id)";

/// Every printer that is not revoked.
pub fn list(conn: &Connection) -> crate::store::sql::Result<Vec<Printer>> {
    conn.prepare_cached(&format!(
        "SELECT p.printer_id, p.host, p.port FROM printers p WHERE {IN_SERVICE}
         ORDER BY p.printer_id"
    ))?
    .query_map([], printer_row)?
    .collect()
}

/// The printer `printer_id`, unless it is revoked.
fn find(conn: &Connection, printer_id: &str) -> crate::store::sql::Result<Option<Printer>> {
    conn.prepare_cached(&format!(
        "SELECT p.printer_id, p.host, p.port FROM printers p
         WHERE p.printer_id = ?1 AND {IN_SERVICE}"
    ))?
    .query_row([printer_id], printer_row)
    .optional()
}

fn printer_row(row: &Row<'_>) -> crate::store::sql::Result<Printer> {
    Ok(Printer {
        printer_id: row.get(0)?,
        host: row.get(1)?,
        port: u16::try_from(row.get::<_, i64>(2)?).unwrap_or(DEFAULT_RAW_PORT),
    })
}

/// Records a host status read at `now`: the printer is heard (the
/// heartbeat view's row, which the site's view reads for liveness) and
/// its flags are kept.
pub fn record_heard(
    conn: &Connection,
    printer_id: &str,
    status: &HostStatus,
    now: UnixMs,
) -> crate::store::sql::Result<()> {
    conn.prepare_cached(
        "INSERT INTO device_heartbeats (device_id, source, last_seen_at)
         VALUES (?1, ?2, ?3)
         ON CONFLICT (device_id) DO UPDATE SET
             source = excluded.source, last_seen_at = excluded.last_seen_at",
    )?
    .execute(params![printer_id, SOURCE_PRINTER, now.0])?;
    conn.prepare_cached(
        "UPDATE printers SET status_at = ?2, paper_out = ?3, paused = ?4, head_open = ?5,
                             ribbon_out = ?6, last_error = NULL
         WHERE printer_id = ?1",
    )?
    .execute(params![
        printer_id,
        now.0,
        status.paper_out,
        status.paused,
        status.head_open,
        status.ribbon_out
    ])?;
    Ok(())
}

/// Records why a poll got no status. The printer is not heard; past its
/// profile's period the view has it offline.
pub fn record_unheard(
    conn: &Connection,
    printer_id: &str,
    error: &str,
) -> crate::store::sql::Result<()> {
    conn.prepare_cached("UPDATE printers SET last_error = ?2 WHERE printer_id = ?1")?
        .execute(params![printer_id, error])?;
    Ok(())
}

/// What a print request asks for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LabelKind {
    Bin,
    Unit,
}

impl LabelKind {
    pub fn as_str(&self) -> &'static str {
        match self {
            LabelKind::Bin => "bin",
            LabelKind::Unit => "unit",
        }
    }
}

/// A job to add to the log.
pub struct NewJob<'a> {
    pub job_id: &'a str,
    pub printer_id: &'a str,
    /// The request's canonical JSON, compared on a retry.
    pub request: &'a str,
    pub label: LabelKind,
    pub subject: &'a str,
    pub encode: bool,
    pub copies: u32,
    pub zpl: &'a str,
    pub requested_by: &'a str,
}

/// A job as the API and the view show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct JobView {
    pub job_id: String,
    pub printer_id: String,
    pub label: String,
    pub subject: String,
    pub encode: bool,
    pub copies: u32,
    pub state: String,
    pub attempts: u32,
    pub reason: Option<String>,
    pub read_back: Option<String>,
    pub hop_id: Option<i64>,
    pub requested_by: String,
    #[schema(value_type = String, format = DateTime)]
    pub accepted_at: UnixMs,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub settled_at: Option<UnixMs>,
}

const JOB_COLUMNS: &str = "job_id, printer_id, label, subject, encode, copies, state, attempts,
                           reason, read_back, hop_id, requested_by, accepted_at, settled_at";

fn job_from_row(row: &Row<'_>) -> crate::store::sql::Result<JobView> {
    Ok(JobView {
        job_id: row.get(0)?,
        printer_id: row.get(1)?,
        label: row.get(2)?,
        subject: row.get(3)?,
        encode: row.get(4)?,
        copies: row.get::<_, i64>(5)? as u32,
        state: row.get(6)?,
        attempts: row.get::<_, i64>(7)? as u32,
        reason: row.get(8)?,
        read_back: row.get(9)?,
        hop_id: row.get(10)?,
        requested_by: row.get(11)?,
        accepted_at: UnixMs(row.get(12)?),
        settled_at: row.get::<_, Option<i64>>(13)?.map(UnixMs),
    })
}

/// One job by id.
pub fn job(conn: &Connection, job_id: &str) -> crate::store::sql::Result<Option<JobView>> {
    conn.prepare_cached(&format!(
        "SELECT {JOB_COLUMNS} FROM print_jobs WHERE job_id = ?1"
    ))?
    .query_row([job_id], job_from_row)
    .optional()
}

/// Whether `printer_id` is a printer the site polls.
pub fn exists(conn: &Connection, printer_id: &str) -> crate::store::sql::Result<bool> {
    conn.prepare_cached(
        "SELECT 1 FROM printers p WHERE p.printer_id = ?1
           AND NOT EXISTS (SELECT 1 FROM device_revocations r WHERE r.device_id = p.printer_id)",
    )?
    .exists([printer_id])
}

/// Adds a job to the log, durably, before it is sent. A retry of the same
/// request under the same job id gets the job as it stands; another
/// request under that id is refused.
pub fn accept(conn: &Connection, new: &NewJob<'_>, now: UnixMs) -> Result<JobView, LedgerError> {
    if !exists(conn, new.printer_id)? {
        return Err(refused(
            404,
            codes::PRINTER_NOT_FOUND,
            format!("no printer {:?}", new.printer_id),
        ));
    }
    let stored: Option<String> = conn
        .query_row(
            "SELECT request FROM print_jobs WHERE job_id = ?1",
            [new.job_id],
            |row| row.get(0),
        )
        .optional()?;
    if let Some(stored) = stored {
        if stored != new.request {
            return Err(refused(
                409,
                stockhop::wire::codes::IDEMPOTENCY_KEY_REUSED,
                format!("job {} was accepted with another request", new.job_id),
            ));
        }
    } else {
        conn.execute(
            "INSERT INTO print_jobs (job_id, printer_id, request, label, subject, encode, copies,
                                     zpl, state, requested_by, accepted_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            params![
                new.job_id,
                new.printer_id,
                new.request,
                new.label.as_str(),
                new.subject,
                new.encode,
                i64::from(new.copies),
                new.zpl,
                states::PENDING,
                new.requested_by,
                now.0
            ],
        )?;
    }
    job(conn, new.job_id)?.ok_or_else(|| LedgerError::Corrupt("a job just stored is gone".into()))
}

/// The next job a printer should print, oldest first.
#[derive(Debug, Clone)]
pub struct JobToSend {
    pub job_id: String,
    pub subject: String,
    pub encode: bool,
    pub zpl: String,
}

pub fn next_pending(
    conn: &Connection,
    printer_id: &str,
) -> crate::store::sql::Result<Option<JobToSend>> {
    conn.prepare_cached(
        "SELECT job_id, subject, encode, zpl FROM print_jobs
         WHERE printer_id = ?1 AND state = 'pending' ORDER BY job_no LIMIT 1",
    )?
    .query_row([printer_id], |row| {
        Ok(JobToSend {
            job_id: row.get(0)?,
            subject: row.get(1)?,
            encode: row.get(2)?,
            zpl: row.get(3)?,
        })
    })
    .optional()
}

/// The printers with a job waiting.
pub fn printers_with_pending(
    conn: &Connection,
) -> crate::store::sql::Result<std::collections::HashSet<String>> {
    conn.prepare_cached("SELECT DISTINCT printer_id FROM print_jobs WHERE state = 'pending'")?
        .query_map([], |row| row.get(0))?
        .collect()
}

/// Takes a pending job for sending (durable before its first byte goes
/// out): false when it is no longer pending.
pub fn mark_sending(
    conn: &Connection,
    job_id: &str,
    now: UnixMs,
) -> crate::store::sql::Result<bool> {
    Ok(conn.execute(
        "UPDATE print_jobs SET state = 'sending', attempts = attempts + 1, sent_at = ?2
         WHERE job_id = ?1 AND state = 'pending'",
        params![job_id, now.0],
    )? == 1)
}

/// The format did not go out whole (no `^XZ` reached the printer): the
/// job waits again.
pub fn unsend(conn: &Connection, job_id: &str) -> crate::store::sql::Result<()> {
    conn.execute(
        "UPDATE print_jobs SET state = 'pending' WHERE job_id = ?1 AND state = 'sending'",
        [job_id],
    )?;
    Ok(())
}

/// The format went out and no answer came: a person decides.
pub fn mark_in_doubt(
    conn: &Connection,
    job_id: &str,
    reason: &str,
    now: UnixMs,
) -> crate::store::sql::Result<()> {
    conn.execute(
        "UPDATE print_jobs SET state = 'in_doubt', reason = ?2, settled_at = ?3
         WHERE job_id = ?1 AND state = 'sending'",
        params![job_id, reason, now.0],
    )?;
    Ok(())
}

/// At start: a job left `sending` by a site that stopped mid-send may have
/// printed, so it waits for a person rather than going out again.
pub fn recover(conn: &Connection, now: UnixMs) -> crate::store::sql::Result<usize> {
    conn.execute(
        "UPDATE print_jobs SET state = 'in_doubt', reason = ?1, settled_at = ?2
         WHERE state = 'sending'",
        params![reasons::INTERRUPTED, now.0],
    )
}

/// The printer answered a job without a tag: printed.
pub fn settle_printed(
    conn: &Connection,
    job_id: &str,
    now: UnixMs,
) -> crate::store::sql::Result<()> {
    conn.execute(
        "UPDATE print_jobs SET state = 'printed', reason = NULL, settled_at = ?2
         WHERE job_id = ?1 AND state = 'sending'",
        params![job_id, now.0],
    )?;
    Ok(())
}

/// The command a printer's ENCODE hop records.
pub const ENCODE_COMMAND: &str = "print";

/// The key of the ENCODE hop a job posts: derived from the job, so a job
/// posts its hop once however often it is settled.
pub fn encode_key(job_id: &str) -> String {
    derived_key(&[ENCODE_COMMAND, job_id, kinds::ENCODE])
}

/// Settles an encoding job by its read-back, in one transaction: a match
/// posts the ENCODE hop (under the job's own key, booked as the ledger
/// books every hop) and the job is printed; a mismatch or a void tag is
/// refused, for a person.
pub fn settle_encoded(
    conn: &mut Connection,
    printer_id: &str,
    job: &JobToSend,
    read: &str,
    now: UnixMs,
) -> Result<ReadBack, LedgerError> {
    let verdict = ReadBack::judge(&job.subject, read);
    crate::store::sql::retry_conflicts(|| -> Result<(), LedgerError> {
        let tx =
            conn.transaction_with_behavior(crate::store::sql::TransactionBehavior::Immediate)?;
        match &verdict {
            ReadBack::Matches => {
                let key = encode_key(&job.job_id);
                let hop_id = match hops::by_key(&tx, printer_id, &key)? {
                    Some(hop) => hop.hop_id,
                    None => {
                        let unit = units::find(&tx, Some(job.subject.as_str()), None)?;
                        let facts = serde_json::json!({
                            "job_id": job.job_id,
                            "printer_id": printer_id,
                            "epc": job.subject,
                        });
                        hops::append(
                            &tx,
                            &NewHop {
                                device_id: printer_id,
                                session_id: None,
                                key: &key,
                                client_seq: None,
                                command: ENCODE_COMMAND,
                                kind: kinds::ENCODE,
                                mode: Some(Mode::Receive),
                                unit_id: unit.as_ref().map(|u| u.unit_id),
                                from_bin: unit.as_ref().and_then(|u| u.bin.as_deref()),
                                to_bin: unit.as_ref().and_then(|u| u.bin.as_deref()),
                                unit_version: unit.as_ref().map(|u| u.version),
                                facts: &facts,
                                occurred_at: now,
                                recorded_at: now,
                                device_clock_skew_ms: 0,
                                source_mode: SourceMode::Live,
                                compensates: None,
                                closed_until: periods::closed_until(&tx)?,
                            },
                        )?
                    }
                };
                tx.execute(
                    "UPDATE print_jobs SET state = 'printed', reason = NULL, read_back = ?2,
                                           hop_id = ?3, settled_at = ?4
                     WHERE job_id = ?1 AND state = 'sending'",
                    params![job.job_id, read, hop_id, now.0],
                )?;
            }
            ReadBack::Mismatch(_) | ReadBack::Void => {
                let reason = if verdict == ReadBack::Void {
                    reasons::VOID_TAG
                } else {
                    reasons::READ_BACK_MISMATCH
                };
                tx.execute(
                    "UPDATE print_jobs SET state = 'refused', reason = ?2, read_back = ?3,
                                           settled_at = ?4
                     WHERE job_id = ?1 AND state = 'sending'",
                    params![job.job_id, reason, read, now.0],
                )?;
            }
        }
        tx.commit()?;
        Ok(())
    })?;
    Ok(verdict)
}

/// What a person decides about a refused or doubtful job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Send it again (a new label; for an encoding job, a new tag).
    Reprint,
    /// Leave it: nothing more is printed.
    Dismiss,
}

/// Applies a person's decision to a job waiting for one.
pub fn decide(
    conn: &Connection,
    job_id: &str,
    decision: Decision,
    now: UnixMs,
) -> Result<JobView, LedgerError> {
    let changed = match decision {
        Decision::Reprint => conn.execute(
            "UPDATE print_jobs SET state = 'pending', settled_at = NULL
             WHERE job_id = ?1 AND state IN ('in_doubt', 'refused')",
            [job_id],
        )?,
        Decision::Dismiss => conn.execute(
            "UPDATE print_jobs SET state = 'dismissed', settled_at = ?2
             WHERE job_id = ?1 AND state IN ('in_doubt', 'refused')",
            params![job_id, now.0],
        )?,
    };
    let found = job(conn, job_id)?.ok_or_else(|| {
        refused(
            404,
            codes::JOB_NOT_FOUND,
            format!("no print job {job_id:?}"),
        )
    })?;
    if changed == 0 {
        return Err(refused(
            409,
            crate::ledger::codes::NOTHING_TO_RESOLVE,
            format!(
                "print job {job_id} is {}, not waiting for a decision",
                found.state
            ),
        ));
    }
    Ok(found)
}

/// The jobs waiting for a person, oldest first.
pub fn waiting(conn: &Connection) -> crate::store::sql::Result<Vec<JobView>> {
    conn.prepare_cached(&format!(
        "SELECT {JOB_COLUMNS} FROM print_jobs WHERE state IN ('in_doubt', 'refused')
         ORDER BY job_no LIMIT ?1"
    ))?
    .query_map([MAX_DECISIONS_LISTED], job_from_row)?
    .collect()
}

/// Deletes printed and dismissed jobs settled before the retention window.
pub fn prune(conn: &Connection, now: UnixMs) -> crate::store::sql::Result<usize> {
    conn.execute(
        "DELETE FROM print_jobs WHERE state IN ('printed', 'dismissed') AND settled_at < ?1",
        [now.0 - SETTLED_JOB_RETENTION_MS],
    )
}

/// A printer as the site's view shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct PrinterStatus {
    pub printer_id: String,
    pub address: String,
    /// When its last host status was read; null before one was.
    #[schema(value_type = Option<String>, format = DateTime)]
    pub status_at: Option<UnixMs>,
    pub paper_out: bool,
    pub paused: bool,
    pub head_open: bool,
    pub ribbon_out: bool,
    /// Why the last poll got no status, if it did not.
    pub last_error: Option<String>,
    /// Jobs accepted and not yet sent.
    pub jobs_pending: i64,
    /// The faults its status shows, by name (`paper_out`, `head_open`,
    /// `ribbon_out`, `paused`): each raised on the view at the profile's
    /// priority.
    pub faults: Vec<String>,
}

/// Every printer's status and queue.
pub fn statuses(conn: &Connection) -> crate::store::sql::Result<Vec<PrinterStatus>> {
    conn.prepare_cached(
        "SELECT p.printer_id, p.host, p.port, p.status_at, p.paper_out, p.paused, p.head_open,
                p.ribbon_out, p.last_error,
                (SELECT count(*) FROM print_jobs j
                 WHERE j.printer_id = p.printer_id AND j.state = 'pending')
         FROM printers p
         WHERE NOT EXISTS (SELECT 1 FROM device_revocations r WHERE r.device_id = p.printer_id)
         ORDER BY p.printer_id",
    )?
    .query_map([], |row| {
        let printer = Printer {
            printer_id: row.get(0)?,
            host: row.get(1)?,
            port: u16::try_from(row.get::<_, i64>(2)?).unwrap_or(DEFAULT_RAW_PORT),
        };
        let flags: [(bool, &str); 4] = [
            (row.get(4)?, "paper_out"),
            (row.get(6)?, "head_open"),
            (row.get(7)?, "ribbon_out"),
            (row.get(5)?, "paused"),
        ];
        Ok(PrinterStatus {
            address: printer.address(),
            printer_id: printer.printer_id,
            status_at: row.get::<_, Option<i64>>(3)?.map(UnixMs),
            paper_out: flags[0].0,
            head_open: flags[1].0,
            ribbon_out: flags[2].0,
            paused: flags[3].0,
            last_error: row.get(8)?,
            jobs_pending: row.get(9)?,
            faults: flags
                .iter()
                .filter(|(on, _)| *on)
                .map(|(_, name)| (*name).to_owned())
                .collect(),
        })
    })?
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_is_host_and_port_with_9100_by_default() {
        assert_eq!(
            parse_address("10.0.0.7:9100").unwrap(),
            ("10.0.0.7".into(), 9100)
        );
        assert_eq!(
            parse_address("zt-dock-1").unwrap(),
            ("zt-dock-1".into(), 9100)
        );
        assert_eq!(parse_address("[::1]:6101").unwrap(), ("::1".into(), 6101));
        for bad in [
            "",
            ":9100",
            "host:0",
            "host:99999",
            "a b:1",
            "::1:9100",
            "[::1]x",
        ] {
            assert!(parse_address(bad).is_err(), "{bad:?}");
        }
    }
}
