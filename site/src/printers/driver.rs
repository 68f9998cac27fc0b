//! The task that talks to the printers: one owner for every printer's
//! polling and sending. Each round it visits the printers that are due (a
//! host status every [`Config::poll_interval`], sooner for a printer that
//! answered last time and has jobs waiting: at once when a job is accepted
//! over HTTP, within [`JOB_CHECK_INTERVAL`] for one a receive queued),
//! records what each status says, and sends the jobs waiting for a printer
//! that answered without a fault, oldest first, each settled in the job
//! log before the next goes out.
//!
//! A job leaves `pending` once: it is marked `sending` (durably) before
//! its first byte is written; a format that did not go out whole goes back
//! to `pending`; one that went out is `printed` on the printer's answer
//! (the host status asked after it, or for a tag the read-back), and
//! `in_doubt` without one, for a person, since it may have printed.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

use super::link::{Link, LinkError};
use super::store::{self, JobToSend, Printer};
use super::zpl::{self, HostStatus, ReadBack};
use crate::ledger::{wall_clock, LedgerError};
use crate::store::db::Db;

/// How often a printer's host status is asked: the printer profile's
/// period is 300 s, so ten polls go unanswered before it is offline.
pub const POLL_INTERVAL: Duration = Duration::from_secs(30);

/// A printer that does not accept the connection within this is not heard
/// this round.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The longest wait for a host status or for a format to be taken in; a
/// printer answers `~HS` in milliseconds.
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(5);

/// The longest wait for a tag's read-back: the printer answers once it
/// has encoded and printed the label, which can take seconds with retries
/// on a weak tag.
pub const VERIFY_TIMEOUT: Duration = Duration::from_secs(30);

/// How often the job log is looked at for jobs a wake did not announce
/// (one a receive scan queued inside the ledger's transaction): a label
/// asked for at a ready printer goes out within this.
pub const JOB_CHECK_INTERVAL: Duration = Duration::from_secs(1);

/// Jobs sent to one printer in one visit, so a long queue at one printer
/// does not hold the others' polls back.
pub const MAX_JOBS_PER_VISIT: usize = 100;

/// The driver's timings (the constants above unless a test shortens them).
#[derive(Debug, Clone)]
pub struct Config {
    pub poll_interval: Duration,
    pub connect_timeout: Duration,
    pub answer_timeout: Duration,
    pub verify_timeout: Duration,
    pub job_check_interval: Duration,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            poll_interval: POLL_INTERVAL,
            connect_timeout: CONNECT_TIMEOUT,
            answer_timeout: ANSWER_TIMEOUT,
            verify_timeout: VERIFY_TIMEOUT,
            job_check_interval: JOB_CHECK_INTERVAL,
        }
    }
}

/// Tells the driver a job was accepted, so it does not wait for the next
/// poll to send it. Cloned into the HTTP state; a wake while the driver is
/// busy is kept until it next waits.
#[derive(Debug, Clone, Default)]
pub struct Wake(Arc<Notify>);

impl Wake {
    pub fn wake(&self) {
        self.0.notify_one();
    }
}

/// What the last visit of a printer found.
#[derive(Debug, Clone, Copy)]
struct Visited {
    at: Instant,
    /// It answered with no fault that holds jobs.
    ready: bool,
}

/// Runs until `shutdown` resolves.
pub async fn run(db: Db, wake: Wake, config: Config, shutdown: impl Future<Output = ()>) {
    tokio::pin!(shutdown);
    match db
        .call(|conn| -> Result<_, LedgerError> { Ok(store::recover(conn, wall_clock())?) })
        .await
    {
        Ok(0) => {}
        Ok(jobs) => tracing::warn!(
            jobs,
            "print jobs were being sent when the site stopped: they wait for a person"
        ),
        Err(err) => tracing::warn!(%err, "reading the print jobs left sending"),
    }
    let mut visited: HashMap<String, Visited> = HashMap::new();
    loop {
        let next = round(&db, &config, &mut visited).await;
        tokio::select! {
            () = &mut shutdown => return,
            () = wake.0.notified() => {}
            () = tokio::time::sleep_until(next) => {}
        }
    }
}

/// One round: visits the printers due, returns when the next is due.
async fn round(db: &Db, config: &Config, visited: &mut HashMap<String, Visited>) -> Instant {
    let now = Instant::now();
    let printers = match db
        .call(|conn| -> Result<_, LedgerError> {
            let pending = store::printers_with_pending(conn)?;
            let printers = store::list(conn)?
                .into_iter()
                .map(|printer| {
                    let waiting = pending.contains(&printer.printer_id);
                    (printer, waiting)
                })
                .collect::<Vec<_>>();
            store::prune(conn, wall_clock())?;
            Ok(printers)
        })
        .await
    {
        Ok(printers) => printers,
        Err(err) => {
            tracing::warn!(%err, "reading the printers");
            return now + config.poll_interval;
        }
    };
    visited.retain(|id, _| printers.iter().any(|(p, _)| &p.printer_id == id));
    let mut visits = tokio::task::JoinSet::new();
    for (printer, pending) in printers {
        let due = match visited.get(&printer.printer_id) {
            None => true,
            Some(last) => now >= last.at + config.poll_interval || (pending && last.ready),
        };
        if due {
            let (db, config) = (db.clone(), config.clone());
            visits.spawn(async move {
                let ready = visit(&db, &printer, &config).await;
                (printer.printer_id, ready)
            });
        }
    }
    while let Some(done) = visits.join_next().await {
        match done {
            Ok((printer_id, ready)) => {
                visited.insert(printer_id, Visited { at: now, ready });
            }
            Err(err) => tracing::warn!(%err, "a printer visit failed"),
        }
    }
    let next_poll = visited
        .values()
        .map(|last| last.at + config.poll_interval)
        .min()
        .unwrap_or(now + config.poll_interval);
    next_poll.min(Instant::now() + config.job_check_interval)
}

/// Polls one printer and, if it is ready, sends what waits for it.
/// Returns whether it ended ready for more.
async fn visit(db: &Db, printer: &Printer, config: &Config) -> bool {
    let id = printer.printer_id.clone();
    let unheard = |err: LinkError| {
        let (db, id) = (db.clone(), id.clone());
        async move {
            tracing::debug!(printer = %id, %err, "printer not heard");
            let text = err.to_string();
            let _ = db
                .call(move |conn| -> Result<_, LedgerError> {
                    Ok(store::record_unheard(conn, &id, &text)?)
                })
                .await;
        }
    };
    let mut link = match Link::connect(&printer.address(), config.connect_timeout).await {
        Ok(link) => link,
        Err(err) => {
            unheard(err).await;
            return false;
        }
    };
    let status = match link.host_status(config.answer_timeout).await {
        Ok(status) => status,
        Err(err) => {
            unheard(err).await;
            return false;
        }
    };
    if !heard(db, &id, status).await || status.holds_jobs() {
        return false;
    }
    for _ in 0..MAX_JOBS_PER_VISIT {
        let job = {
            let id = id.clone();
            db.call(move |conn| -> Result<_, LedgerError> {
                let Some(job) = store::next_pending(conn, &id)? else {
                    return Ok(None);
                };
                let taken = store::mark_sending(conn, &job.job_id, wall_clock())?;
                Ok(taken.then_some(job))
            })
            .await
        };
        let job = match job {
            Ok(Some(job)) => job,
            Ok(None) => return true,
            Err(err) => {
                tracing::warn!(printer = %id, %err, "reading the next print job");
                return false;
            }
        };
        match send(&mut link, &job, config).await {
            Delivery::Printed(status) => {
                // The answer settles the job and is the printer's latest
                // status: one transaction, one commit.
                let (printer_id, job_id) = (id.clone(), job.job_id.clone());
                settle(db, &id, &job.job_id, move |conn| {
                    let now = wall_clock();
                    let tx = conn.transaction_with_behavior(
                        crate::store::sql::TransactionBehavior::Immediate,
                    )?;
                    store::settle_printed(&tx, &job_id, now)?;
                    store::record_heard(&tx, &printer_id, &status, now)?;
                    Ok(tx.commit()?)
                })
                .await;
                if status.holds_jobs() {
                    return false;
                }
            }
            Delivery::ReadBack(read) => {
                let (printer_id, job) = (id.clone(), job.clone());
                let job_id = job.job_id.clone();
                settle(db, &id, &job_id, move |conn| {
                    match store::settle_encoded(conn, &printer_id, &job, &read, wall_clock())? {
                        ReadBack::Matches => {}
                        verdict => tracing::warn!(
                            printer = %printer_id, job = %job.job_id, ?verdict,
                            "the tag did not read back as written: the job waits for a person"
                        ),
                    }
                    Ok(())
                })
                .await;
            }
            Delivery::NotSent(err) => {
                tracing::info!(printer = %id, job = %job.job_id, %err, "print job not sent whole: it waits");
                let job_id = job.job_id.clone();
                settle(db, &id, &job.job_id, move |conn| {
                    Ok(store::unsend(conn, &job_id)?)
                })
                .await;
                unheard(err).await;
                return false;
            }
            Delivery::NoAnswer(err) => {
                tracing::warn!(printer = %id, job = %job.job_id, %err, "print job sent without an answer: it waits for a person");
                let job_id = job.job_id.clone();
                settle(db, &id, &job.job_id, move |conn| {
                    Ok(store::mark_in_doubt(
                        conn,
                        &job_id,
                        store::reasons::NO_ANSWER,
                        wall_clock(),
                    )?)
                })
                .await;
                unheard(err).await;
                return false;
            }
        }
    }
    true
}

/// Records a host status; false when the database would not take it.
async fn heard(db: &Db, printer_id: &str, status: HostStatus) -> bool {
    let id = printer_id.to_owned();
    match db
        .call(move |conn| -> Result<_, LedgerError> {
            Ok(store::record_heard(conn, &id, &status, wall_clock())?)
        })
        .await
    {
        Ok(()) => true,
        Err(err) => {
            tracing::warn!(printer = %printer_id, %err, "recording a printer's status");
            false
        }
    }
}

async fn settle(
    db: &Db,
    printer_id: &str,
    job_id: &str,
    work: impl FnOnce(&mut crate::store::sql::Connection) -> Result<(), LedgerError> + Send + 'static,
) {
    if let Err(err) = db.call(work).await {
        // The job stays `sending`; the next start puts it before a person.
        tracing::error!(printer = %printer_id, job = %job_id, %err, "settling a print job");
    }
}

/// How sending one job went.
enum Delivery {
    /// The format went out and the host status asked after it came back.
    Printed(HostStatus),
    /// The format went out and the tag read back as this.
    ReadBack(String),
    /// The format did not go out whole: nothing was printed.
    NotSent(LinkError),
    /// The format went out and no answer came.
    NoAnswer(LinkError),
}

async fn send(link: &mut Link, job: &JobToSend, config: &Config) -> Delivery {
    if let Err(err) = link.send(job.zpl.as_bytes(), config.answer_timeout).await {
        return Delivery::NotSent(err);
    }
    if job.encode {
        return match link
            .read_verification(&job.job_id, config.verify_timeout)
            .await
        {
            Ok(read) => Delivery::ReadBack(read),
            Err(err) => Delivery::NoAnswer(err),
        };
    }
    if let Err(err) = link
        .send(zpl::HOST_STATUS_QUERY, config.answer_timeout)
        .await
    {
        return Delivery::NoAnswer(err);
    }
    match link.read_host_status(config.answer_timeout).await {
        Ok(status) => Delivery::Printed(status),
        Err(err) => Delivery::NoAnswer(err),
    }
}
