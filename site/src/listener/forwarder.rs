//! The forwarder: drains the listener queue FIFO into the ledger.
//!
//! The ledger is reached through a [`LedgerSink`]: in-process (an adapter
//! over the ledger's ingest function) or remote ([`RemoteLedgerSink`], an
//! HMAC-signed POST of the same JSON). Batches hold up to
//! [`MAX_RECORDS_PER_BATCH`] records in queue order. Network errors,
//! timeouts, 408, 429, 5xx (and redirects, which are never followed) are
//! retried with [`crate::net::delivery::retry_delay`]: 2 s doubling to a 60 s cap, skipped when a
//! new record is written; so are 401 and 403, which refuse the listener's
//! signature rather than a record. Any other 4xx is permanent: a rejected batch is
//! re-sent one record at a time, so only the record the ledger refuses is
//! dead-lettered (with the answer's body) and the records behind it go on.
//!
//! A 5xx is the ledger failing, which one record can cause (a stored value
//! it trips over) as well as an outage. A record the ledger answers 5xx
//! (500, or any 5xx but 502, 503 and 504, which speak of the ledger or the
//! way to it, never of one record) gets an attempt counted with that
//! answer; a batch answered so is re-sent one record at a time to find
//! which. After [`SET_ASIDE_AFTER_ATTEMPTS`] such attempts the record is
//! set aside: kept in the queue with its attempts and last error, left out
//! of the FIFO drain so the records behind it flow, and tried alone again
//! every [`SET_ASIDE_RETRY`] until the ledger takes (or refuses) it.
//!
//! A delivered row is settled in one durable transaction: the served record
//! for the duplicate window, then the row marked done (never deleted here;
//! [`run_pruner`] removes old done rows on its own schedule). A crash
//! between delivery and that transaction re-sends the batch on restart,
//! and the ledger answers the repeated keys as replays.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use stockhop::time::{Millis, UnixMs};
use tokio::sync::watch;

use super::queue::{self, QueueError, Queued, Settled};
use super::unix_now;
use crate::net::delivery::{
    backoff, classify, fails_the_record, DeliveryError, Disposition, SignedEndpoint,
    DB_ERROR_DELAY, DEAD_BODY_BYTES_MAX, DELIVERY_TIMEOUT, RETRY_DELAY_FIRST, RETRY_DELAY_MAX,
};
use crate::net::outbound::{OutboundError, Trust};
use crate::store::db::Db;
use crate::store::writer::Caller;
pub use crate::terminal_wire::MAX_RECORDS_PER_BATCH;
use crate::terminal_wire::{
    TerminalBatch, TerminalBatchResponse, TerminalHeartbeat, TERMINAL_EVENTS_PATH,
};

/// Deliveries the ledger may fail (5xx) for one record before it is set
/// aside: at the retry cadence five attempts come within about a minute
/// (2, 4, 8, 16 s apart, and 32 s more when a whole batch failed first),
/// past a blip, and the records behind it wait no longer.
pub const SET_ASIDE_AFTER_ATTEMPTS: u32 = 5;
/// How often a set-aside record is tried again: a fix on the ledger's side
/// reaches it within ten minutes, and a record the ledger keeps failing
/// costs it six requests an hour.
pub const SET_ASIDE_RETRY: Millis = Millis::from_secs(10 * 60);

/// The future a [`LedgerSink`] returns.
pub type Delivery<'a> =
    Pin<Box<dyn Future<Output = Result<TerminalBatchResponse, DeliveryError>> + Send + 'a>>;

/// Where batches go. An in-process ledger implements this in a few lines:
///
/// ```text
/// impl LedgerSink for InProcess {
///     fn deliver(&self, batch: TerminalBatch) -> Delivery<'_> {
///         Box::pin(async move {
///             ledger::terminal::ingest(&self.db, batch).await.map_err(|err| DeliveryError::Status {
///                 status: err.status().as_u16(),
///                 body: err.to_string(),
///             })
///         })
///     }
/// }
/// ```
pub trait LedgerSink: Send + Sync {
    fn deliver(&self, batch: TerminalBatch) -> Delivery<'_>;
}

/// The forwarder's waits: [`RETRY_DELAY_FIRST`], [`RETRY_DELAY_MAX`] and
/// [`SET_ASIDE_RETRY`] unless a test needs its minutes in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cadence {
    pub retry_delay_first: Millis,
    pub retry_delay_max: Millis,
    pub set_aside_retry: Millis,
}

impl Default for Cadence {
    fn default() -> Cadence {
        Cadence {
            retry_delay_first: RETRY_DELAY_FIRST,
            retry_delay_max: RETRY_DELAY_MAX,
            set_aside_retry: SET_ASIDE_RETRY,
        }
    }
}

impl Cadence {
    /// The wait after `failures` failed deliveries in a row, doubling from
    /// the first delay to the cap; none before the first failure.
    pub fn retry_delay(&self, failures: u32) -> Millis {
        backoff(self.retry_delay_first, self.retry_delay_max, failures)
    }
}

/// A ledger on another machine, reached over HTTP with a shared secret.
pub struct RemoteLedgerSink(SignedEndpoint);

impl RemoteLedgerSink {
    /// `base_url` is the ledger's origin (`http://host:port`, or
    /// `https://` checked against `trust`).
    pub fn new(
        base_url: &str,
        secret: &str,
        trust: &Trust,
    ) -> Result<RemoteLedgerSink, OutboundError> {
        SignedEndpoint::new(base_url, TERMINAL_EVENTS_PATH, secret, trust).map(RemoteLedgerSink)
    }
}

impl LedgerSink for RemoteLedgerSink {
    fn deliver(&self, batch: TerminalBatch) -> Delivery<'_> {
        Box::pin(async move { self.0.post(&batch).await })
    }
}

/// The drain loop's state between attempts, sans-IO: [`run`] reads what
/// [`Drain::read`] asks for, delivers it, and settles and waits as
/// [`Drain::handle`] decides; the simulation drives the same steps.
#[derive(Debug, Default)]
pub struct Drain {
    failures: u32,
    /// Records still to send one at a time after a batch was rejected or
    /// failed.
    isolating: usize,
    cadence: Cadence,
}

/// What one delivery attempt decided for its rows.
#[derive(Debug, PartialEq)]
struct Plan<'a> {
    settle: Vec<(&'a Queued, Settled)>,
    /// Something must be retried later.
    retry: bool,
}

/// What the next attempt reads from the queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Read {
    /// The most pending rows to send.
    pub limit: usize,
    /// Whether the terminals' last-seen times go with them.
    pub with_heartbeats: bool,
    /// Whether a set-aside record whose next attempt is due goes first,
    /// alone (never while a batch's records are being sent one at a time).
    pub set_aside: bool,
}

/// What [`read_batch`] found: rows to send (one set-aside row alone, or
/// the oldest pending rows) with the heartbeats to send beside them, and
/// when the next set-aside row falls due, so an idle forwarder wakes then.
#[derive(Debug, Clone, PartialEq)]
pub struct Batch {
    pub rows: Vec<Queued>,
    pub heartbeats: Vec<TerminalHeartbeat>,
    pub next_set_aside_at: Option<UnixMs>,
}

/// Reads what [`Drain::read`] asked for at `now`: a due set-aside row
/// alone when one is due and asked for, else the oldest pending rows.
pub fn read_batch(
    conn: &mut rusqlite::Connection,
    read: Read,
    now: UnixMs,
) -> Result<Batch, QueueError> {
    let next_set_aside_at = queue::next_set_aside_at(conn)?;
    if read.set_aside && next_set_aside_at.is_some_and(|at| at <= now) {
        return Ok(Batch {
            rows: queue::due_set_aside(conn, now, 1)?,
            heartbeats: Vec::new(),
            next_set_aside_at,
        });
    }
    let heartbeats = if read.with_heartbeats {
        queue::pending_heartbeats(conn)?
    } else {
        Vec::new()
    };
    Ok(Batch {
        rows: queue::pending_batch(conn, read.limit)?,
        heartbeats,
        next_set_aside_at,
    })
}

/// What one delivery decided: the rows to settle in one transaction (with
/// the heartbeats the ledger took), and the wait before the next attempt
/// (`None`: at once).
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub settle: Vec<(Queued, Settled)>,
    pub heartbeats: Vec<TerminalHeartbeat>,
    pub wait: Option<Millis>,
}

impl Drain {
    /// A drain that waits as `cadence` says.
    pub fn new(cadence: Cadence) -> Drain {
        Drain {
            cadence,
            ..Drain::default()
        }
    }

    /// What the next attempt reads. Records sent one at a time go alone,
    /// so a refused heartbeat cannot get a good record dead-lettered.
    pub fn read(&self) -> Read {
        Read {
            limit: self.batch_limit(),
            with_heartbeats: self.isolating == 0,
            set_aside: self.isolating == 0,
        }
    }

    /// Decides what the ledger's `result` for `rows` and `heartbeats` (as
    /// [`Drain::read`] had them read) means: what to settle, what to wait.
    pub fn handle(
        &mut self,
        rows: &[Queued],
        heartbeats: Vec<TerminalHeartbeat>,
        result: Result<TerminalBatchResponse, DeliveryError>,
    ) -> Step {
        // Heartbeats are settled when the ledger took them, or when it
        // refused a batch of nothing else (they would be refused forever).
        let heartbeats_settled = match &result {
            Ok(_) => true,
            Err(DeliveryError::Status { status, .. }) => {
                rows.is_empty() && classify(*status) == Disposition::Reject
            }
            Err(_) => false,
        };
        let had_heartbeats = !heartbeats.is_empty();
        let plan = self.plan(rows, had_heartbeats, result);
        Step {
            settle: plan
                .settle
                .into_iter()
                .map(|(row, settled)| (row.clone(), settled))
                .collect(),
            heartbeats: if heartbeats_settled {
                heartbeats
            } else {
                Vec::new()
            },
            wait: plan.retry.then(|| self.cadence.retry_delay(self.failures)),
        }
    }

    /// `row` failed by the ledger once more with `error`: set aside (again)
    /// when that makes [`SET_ASIDE_AFTER_ATTEMPTS`] or it already was.
    fn failed(&self, row: &Queued, error: String) -> Settled {
        let attempts = row.attempts.saturating_add(1);
        let set_aside = row.set_aside || attempts >= SET_ASIDE_AFTER_ATTEMPTS;
        if set_aside && !row.set_aside {
            tracing::warn!(key = %row.record.key, attempts, %error, "the ledger keeps failing a terminal record; set aside so the records behind it flow");
        }
        let mut end = error.len().min(DEAD_BODY_BYTES_MAX);
        while !error.is_char_boundary(end) {
            end -= 1;
        }
        Settled::Failed {
            error: error[..end].to_owned(),
            set_aside_for: set_aside.then_some(self.cadence.set_aside_retry),
        }
    }

    fn batch_limit(&self) -> usize {
        if self.isolating > 0 {
            1
        } else {
            MAX_RECORDS_PER_BATCH
        }
    }

    /// Decides what a delivery's result means for `rows` (sent with
    /// heartbeats when `with_heartbeats`).
    fn plan<'a>(
        &mut self,
        rows: &'a [Queued],
        with_heartbeats: bool,
        result: Result<TerminalBatchResponse, DeliveryError>,
    ) -> Plan<'a> {
        let plan = match result {
            Ok(response) => {
                let matches = response.results.len() == rows.len()
                    && response
                        .results
                        .iter()
                        .zip(rows)
                        .all(|(result, row)| result.key == row.record.key);
                if !matches {
                    tracing::warn!(
                        sent = rows.len(),
                        answered = response.results.len(),
                        "ledger answer does not match the batch; retrying"
                    );
                    Plan {
                        settle: Vec::new(),
                        retry: true,
                    }
                } else {
                    let mut plan = Plan {
                        settle: Vec::new(),
                        retry: false,
                    };
                    for (result, row) in response.results.iter().zip(rows) {
                        match classify(result.status) {
                            Disposition::Delivered => plan.settle.push((row, Settled::Done)),
                            Disposition::Reject => {
                                let body = serde_json::json!({
                                    "code": result.code,
                                    "message": result.message,
                                })
                                .to_string();
                                tracing::warn!(key = %row.record.key, status = result.status, %body, "ledger refused a terminal record; dead-lettered");
                                plan.settle.push((
                                    row,
                                    Settled::Dead {
                                        status: result.status,
                                        body,
                                    },
                                ));
                            }
                            Disposition::Retry if fails_the_record(result.status) => {
                                let error = failure_text(
                                    result.status,
                                    result.code.as_deref(),
                                    result.message.as_deref(),
                                );
                                let failed = self.failed(row, error);
                                if matches!(
                                    failed,
                                    Settled::Failed {
                                        set_aside_for: None,
                                        ..
                                    }
                                ) {
                                    plan.retry = true;
                                }
                                plan.settle.push((row, failed));
                            }
                            Disposition::Retry => plan.retry = true,
                        }
                    }
                    plan
                }
            }
            Err(DeliveryError::Status { status, body })
                if classify(status) == Disposition::Reject =>
            {
                // The refusal may be any record's, or a heartbeat's.
                if rows.len() > 1 || (with_heartbeats && !rows.is_empty()) {
                    tracing::warn!(
                        status,
                        rows = rows.len(),
                        "ledger refused a batch; sending its records one at a time"
                    );
                    self.isolating = rows.len();
                    return Plan {
                        settle: Vec::new(),
                        retry: false,
                    };
                }
                tracing::warn!(key = ?rows.first().map(|r| r.record.key), status, %body, "ledger refused a terminal record; dead-lettered");
                Plan {
                    settle: rows
                        .iter()
                        .map(|row| {
                            (
                                row,
                                Settled::Dead {
                                    status,
                                    body: body.clone(),
                                },
                            )
                        })
                        .collect(),
                    retry: false,
                }
            }
            Err(DeliveryError::Status { status, body })
                if fails_the_record(status) && !rows.is_empty() =>
            {
                if rows.len() > 1 || with_heartbeats {
                    // Which record (or heartbeat) the ledger fails on is
                    // unknown: after the usual wait, each goes alone.
                    tracing::warn!(
                        status,
                        rows = rows.len(),
                        "ledger failed a batch; sending its records one at a time"
                    );
                    self.isolating = rows.len();
                    Plan {
                        settle: Vec::new(),
                        retry: true,
                    }
                } else {
                    let row = &rows[0];
                    let failed = self.failed(row, format!("{status} {body}"));
                    tracing::warn!(key = %row.record.key, status, attempts = row.attempts + 1, "ledger failed a terminal record; will retry");
                    let retry = matches!(
                        failed,
                        Settled::Failed {
                            set_aside_for: None,
                            ..
                        }
                    );
                    Plan {
                        settle: vec![(row, failed)],
                        retry,
                    }
                }
            }
            Err(err) => {
                tracing::warn!(%err, failures = self.failures + 1, "terminal batch not delivered; will retry");
                Plan {
                    settle: Vec::new(),
                    retry: true,
                }
            }
        };
        if plan.retry {
            self.failures = self.failures.saturating_add(1);
        } else {
            // Setting a record aside is no sign the ledger is well again:
            // the waits keep growing until it takes something.
            let only_failed = !plan.settle.is_empty()
                && plan
                    .settle
                    .iter()
                    .all(|(_, settled)| matches!(settled, Settled::Failed { .. }));
            if !only_failed {
                self.failures = 0;
            }
            self.isolating = self.isolating.saturating_sub(rows.len().max(1));
        }
        plan
    }
}

/// A record's failure as the dashboard shows it: `500 CODE: message`.
fn failure_text(status: u16, code: Option<&str>, message: Option<&str>) -> String {
    match (code, message) {
        (Some(code), Some(message)) => format!("{status} {code}: {message}"),
        (Some(text), None) | (None, Some(text)) => format!("{status} {text}"),
        (None, None) => status.to_string(),
    }
}

/// Drains the queue until `shutdown` turns true, waiting as `cadence`
/// says. `writes` changes on every committed queue write: a write after
/// the queue was last read starts a drain at once and cuts a retry wait
/// short. An idle forwarder also wakes when a set-aside row falls due.
pub async fn run(
    db: Db,
    sink: Arc<dyn LedgerSink>,
    cadence: Cadence,
    mut writes: watch::Receiver<u64>,
    mut shutdown: watch::Receiver<bool>,
) {
    let mut drain = Drain::new(cadence);
    while !*shutdown.borrow() {
        let read = drain.read();
        // Everything written up to here is in the read below.
        writes.borrow_and_update();
        let batch = db
            .call_local_as(Caller::ListenerForward, move |conn| {
                read_batch(conn, read, unix_now())
            })
            .await;
        let Batch {
            rows,
            heartbeats,
            next_set_aside_at,
        } = match batch {
            Ok(batch) => batch,
            Err(err) => {
                tracing::error!(%err, "cannot read the terminal queue");
                pause(DB_ERROR_DELAY, &mut writes, &mut shutdown).await;
                continue;
            }
        };
        if rows.is_empty() && heartbeats.is_empty() {
            match next_set_aside_at {
                Some(at) => {
                    let wait = Millis(u64::try_from(at.0 - unix_now().0).unwrap_or(0));
                    pause(Duration::from_millis(wait.0), &mut writes, &mut shutdown).await;
                }
                None => {
                    tokio::select! {
                        _ = writes.changed() => {}
                        _ = shutdown.changed() => {}
                    }
                }
            }
            continue;
        }
        let batch = TerminalBatch {
            records: rows.iter().map(|row| row.record.clone()).collect(),
            heartbeats: heartbeats.clone(),
        };
        let result = match tokio::time::timeout(DELIVERY_TIMEOUT, sink.deliver(batch)).await {
            Ok(result) => result,
            Err(_) => Err(DeliveryError::Unreachable(format!(
                "no answer within {} s",
                DELIVERY_TIMEOUT.as_secs()
            ))),
        };
        let Step {
            settle,
            heartbeats,
            wait,
        } = drain.handle(&rows, heartbeats, result);
        if !settle.is_empty() || !heartbeats.is_empty() {
            let settled = db
                .call_local_as(Caller::ListenerForward, move |conn| {
                    let pairs: Vec<(&Queued, Settled)> =
                        settle.iter().map(|(row, s)| (row, s.clone())).collect();
                    queue::settle(conn, unix_now(), &pairs, &heartbeats)
                })
                .await;
            if let Err(err) = settled {
                tracing::error!(%err, "cannot mark delivered terminal records; they will be re-sent");
                pause(DB_ERROR_DELAY, &mut writes, &mut shutdown).await;
                continue;
            }
        }
        if let Some(delay) = wait {
            pause(Duration::from_millis(delay.0), &mut writes, &mut shutdown).await;
        }
    }
}

/// Waits `delay`, or less when a new record is written or on shutdown.
async fn pause(
    delay: Duration,
    writes: &mut watch::Receiver<u64>,
    shutdown: &mut watch::Receiver<bool>,
) {
    tokio::select! {
        () = tokio::time::sleep(delay) => {}
        _ = writes.changed() => {}
        _ = shutdown.changed() => {}
    }
}

/// How often the listener's queue is pruned: forwarded rows leave it
/// within this of [`queue::ROW_RETENTION`], so at 700 reads a second a
/// portal holds at most about five minutes of them whole.
pub const QUEUE_PRUNE_INTERVAL: Duration = Duration::from_secs(60);

/// Prunes old done rows every [`QUEUE_PRUNE_INTERVAL`] until shutdown,
/// a bounded number a transaction ([`queue::PRUNE_ROWS_MAX`] a kind), as
/// many transactions as it takes: the queue writer takes its turn between
/// them. Identities are kept `seen_retention` of capture time.
pub async fn run_pruner(db: Db, seen_retention: Millis, mut shutdown: watch::Receiver<bool>) {
    loop {
        tokio::select! {
            () = tokio::time::sleep(QUEUE_PRUNE_INTERVAL) => {}
            _ = shutdown.changed() => return,
        }
        let mut removed_total = 0;
        loop {
            match db
                .call_local_as(Caller::ListenerUpkeep, move |conn| {
                    queue::prune_keeping(conn, unix_now(), seen_retention)
                })
                .await
            {
                Ok(removed) => {
                    removed_total += removed;
                    if removed < queue::PRUNE_ROWS_MAX || *shutdown.borrow() {
                        break;
                    }
                }
                Err(err) => {
                    tracing::error!(%err, "cannot prune the terminal queue");
                    break;
                }
            }
        }
        if removed_total > 0 {
            tracing::info!(removed = removed_total, "pruned the terminal queue");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::delivery::retry_delay;
    use crate::terminal_wire::{
        RuleOutcome, TerminalEventKind, TerminalRecord, TerminalResult, TerminalSource,
    };
    use stockhop::key::IdempotencyKey;
    use stockhop::time::UnixMs;

    fn row(seq: i64) -> Queued {
        Queued {
            seq,
            event_id: format!("e{seq}"),
            attempts: 0,
            set_aside: false,
            record: TerminalRecord {
                key: IdempotencyKey::mint().unwrap(),
                source: TerminalSource::Framed,
                device_serial: "D1".to_owned(),
                kind: TerminalEventKind::Attendance,
                subject: "7".to_owned(),
                occurred_at: UnixMs(0),
                queued_at: UnixMs(0),
                rule_outcome: RuleOutcome::Accepted,
                raw: "{}".to_owned(),
                repeat: None,
            },
        }
    }

    fn answer(rows: &[Queued], statuses: &[u16]) -> TerminalBatchResponse {
        TerminalBatchResponse {
            results: rows
                .iter()
                .zip(statuses)
                .map(|(row, &status)| TerminalResult {
                    key: row.record.key,
                    status,
                    replayed: false,
                    code: (status != 200).then(|| "bad_record".to_owned()),
                    message: None,
                    hop_ids: Vec::new(),
                })
                .collect(),
        }
    }

    fn server_error(status: u16) -> Result<TerminalBatchResponse, DeliveryError> {
        Err(DeliveryError::Status {
            status,
            body: "disk I/O error".to_owned(),
        })
    }

    /// `row` as the queue reads it after the settle `plan` decided.
    fn after(row: &Queued, settled: &Settled) -> Queued {
        let mut row = row.clone();
        if let Settled::Failed { set_aside_for, .. } = settled {
            row.attempts += 1;
            row.set_aside |= set_aside_for.is_some();
        }
        row
    }

    #[test]
    fn only_server_errors_about_the_record_count_as_its_attempts() {
        let counted: Vec<u16> = [400, 429, 500, 501, 502, 503, 504, 505, 507, 599]
            .into_iter()
            .filter(|&status| fails_the_record(status))
            .collect();
        assert_eq!(counted, [500, 501, 505, 507, 599]);
    }

    #[test]
    fn a_record_the_ledger_keeps_failing_is_set_aside_after_five_attempts() {
        let mut drain = Drain::default();
        let mut head = row(1);
        let mut waits = Vec::new();
        for attempt in 1..=SET_ASIDE_AFTER_ATTEMPTS {
            let rows = [head.clone()];
            let step = drain.handle(&rows, Vec::new(), server_error(500));
            let (_, settled) = &step.settle[0];
            let Settled::Failed {
                error,
                set_aside_for,
            } = settled
            else {
                panic!("{settled:?}");
            };
            assert_eq!(error, "500 disk I/O error");
            let last = attempt == SET_ASIDE_AFTER_ATTEMPTS;
            assert_eq!(set_aside_for.is_some(), last, "attempt {attempt}");
            head = after(&head, settled);
            waits.push(step.wait.map(|w| w.0 / 1000));
        }
        assert_eq!(
            waits,
            [Some(2), Some(4), Some(8), Some(16), None],
            "set aside: the records behind it go at once"
        );
        assert_eq!(head.attempts, SET_ASIDE_AFTER_ATTEMPTS);
        assert!(head.set_aside);
        let next = [row(2)];
        let step = drain.handle(&next, Vec::new(), server_error(500));
        assert_eq!(
            step.wait,
            Some(Millis::from_secs(32)),
            "setting a record aside is no sign the ledger is well: the waits keep growing"
        );
    }

    #[test]
    fn a_batch_the_ledger_fails_is_resent_one_record_at_a_time_after_a_wait() {
        let rows = vec![row(1), row(2), row(3)];
        let mut drain = Drain::default();
        let step = drain.handle(&rows, Vec::new(), server_error(500));
        assert_eq!(step.settle, Vec::new(), "which record fails is unknown");
        assert_eq!(step.wait, Some(RETRY_DELAY_FIRST));
        assert_eq!(
            drain.read(),
            Read {
                limit: 1,
                with_heartbeats: false,
                set_aside: false
            }
        );
        let step = drain.handle(&rows[..1], Vec::new(), server_error(500));
        assert!(matches!(
            step.settle[0].1,
            Settled::Failed {
                set_aside_for: None,
                ..
            }
        ));
        let mut head = after(&rows[0], &step.settle[0].1);
        head.attempts = SET_ASIDE_AFTER_ATTEMPTS - 1;
        let step = drain.handle(&[head], Vec::new(), server_error(500));
        assert!(matches!(
            step.settle[0].1,
            Settled::Failed {
                set_aside_for: Some(SET_ASIDE_RETRY),
                ..
            }
        ));
        assert_eq!(step.wait, None);
        assert_eq!(drain.read().limit, 1, "the two behind it still go alone");
        drain.handle(&rows[1..2], Vec::new(), Ok(answer(&rows[1..2], &[200])));
        drain.handle(&rows[2..], Vec::new(), Ok(answer(&rows[2..], &[200])));
        assert_eq!(
            drain.read(),
            Read {
                limit: MAX_RECORDS_PER_BATCH,
                with_heartbeats: true,
                set_aside: true
            }
        );
    }

    #[test]
    fn a_record_failed_in_a_batch_answer_counts_an_attempt_and_the_rest_are_done() {
        let rows = vec![row(1), row(2)];
        let mut drain = Drain::default();
        let mut answered = answer(&rows, &[500, 200]);
        answered.results[0].message = Some("database disk image is malformed".to_owned());
        let step = drain.handle(&rows, Vec::new(), Ok(answered));
        assert_eq!(
            step.settle[0].1,
            Settled::Failed {
                error: "500 bad_record: database disk image is malformed".to_owned(),
                set_aside_for: None
            }
        );
        assert_eq!(step.settle[1].1, Settled::Done);
        assert_eq!(step.wait, Some(RETRY_DELAY_FIRST));
    }

    #[test]
    fn busy_unavailable_and_gateway_answers_never_count_against_a_record() {
        for status in [502, 503, 504] {
            let mut drain = Drain::default();
            let step = drain.handle(&[row(1)], Vec::new(), server_error(status));
            assert_eq!(step.settle, Vec::new(), "{status}");
            assert_eq!(step.wait, Some(RETRY_DELAY_FIRST), "{status}");
            let rows = [row(1), row(2)];
            let step = drain.handle(&rows, Vec::new(), Ok(answer(&rows, &[status, 200])));
            assert_eq!(step.settle, vec![(rows[1].clone(), Settled::Done)]);
        }
    }

    #[test]
    fn a_set_aside_record_failed_again_waits_the_slower_cadence_and_holds_nothing() {
        let cadence = Cadence {
            set_aside_retry: Millis(1234),
            ..Cadence::default()
        };
        let mut drain = Drain::new(cadence);
        let mut aside = row(1);
        aside.attempts = 9;
        aside.set_aside = true;
        let step = drain.handle(&[aside.clone()], Vec::new(), server_error(500));
        assert!(matches!(
            step.settle[0].1,
            Settled::Failed {
                set_aside_for: Some(Millis(1234)),
                ..
            }
        ));
        assert_eq!(step.wait, None);
        let step = drain.handle(&[aside.clone()], Vec::new(), Ok(answer(&[aside], &[200])));
        assert_eq!(step.settle[0].1, Settled::Done);
    }

    #[test]
    fn the_cadence_scales_every_wait() {
        let quick = Cadence {
            retry_delay_first: Millis(10),
            retry_delay_max: Millis(50),
            set_aside_retry: Millis(100),
        };
        let waits: Vec<u64> = (0..6).map(|n| quick.retry_delay(n).0).collect();
        assert_eq!(waits, [0, 10, 20, 40, 50, 50]);
    }

    #[test]
    fn a_record_refused_in_a_batch_answer_is_dead_and_the_rest_are_done() {
        let rows = vec![row(1), row(2), row(3)];
        let mut drain = Drain::default();
        let plan = drain.plan(&rows, false, Ok(answer(&rows, &[200, 422, 200])));
        assert!(!plan.retry);
        assert_eq!(plan.settle.len(), 3);
        assert_eq!(plan.settle[0].1, Settled::Done);
        assert!(matches!(
            plan.settle[1].1,
            Settled::Dead { status: 422, .. }
        ));
        assert_eq!(plan.settle[2].1, Settled::Done);
    }

    #[test]
    fn a_refused_batch_is_resent_one_record_at_a_time() {
        let rows = vec![row(1), row(2)];
        let mut drain = Drain::default();
        let refused = Err(DeliveryError::Status {
            status: 400,
            body: "no".to_owned(),
        });
        let plan = drain.plan(&rows, false, refused.clone());
        assert_eq!(
            plan,
            Plan {
                settle: Vec::new(),
                retry: false
            }
        );
        assert_eq!(drain.batch_limit(), 1);
        let plan = drain.plan(&rows[..1], false, refused);
        assert!(matches!(
            plan.settle[0].1,
            Settled::Dead { status: 400, .. }
        ));
        assert_eq!(drain.batch_limit(), 1);
        let plan = drain.plan(&rows[1..], false, Ok(answer(&rows[1..], &[200])));
        assert_eq!(plan.settle[0].1, Settled::Done);
        assert_eq!(drain.batch_limit(), MAX_RECORDS_PER_BATCH);
    }

    #[test]
    fn a_single_record_refused_beside_heartbeats_is_resent_alone_before_it_is_dead() {
        let rows = vec![row(1)];
        let mut drain = Drain::default();
        let refused = Err(DeliveryError::Status {
            status: 422,
            body: "bad heartbeat".to_owned(),
        });
        let plan = drain.plan(&rows, true, refused);
        assert_eq!(
            plan,
            Plan {
                settle: Vec::new(),
                retry: false
            }
        );
        assert_eq!(drain.batch_limit(), 1);
        let plan = drain.plan(&rows, false, Ok(answer(&rows, &[200])));
        assert_eq!(plan.settle[0].1, Settled::Done);
        assert_eq!(drain.batch_limit(), MAX_RECORDS_PER_BATCH);
    }

    #[test]
    fn server_errors_and_mismatched_answers_are_retried_with_growing_waits() {
        let rows = vec![row(1)];
        let mut drain = Drain::default();
        let plan = drain.plan(
            &rows,
            false,
            Err(DeliveryError::Status {
                status: 503,
                body: String::new(),
            }),
        );
        assert!(plan.retry && plan.settle.is_empty());
        let plan = drain.plan(&rows, false, Ok(answer(&[row(9)], &[200])));
        assert!(plan.retry && plan.settle.is_empty());
        assert_eq!(retry_delay(drain.failures), Millis::from_secs(4));
        let plan = drain.plan(&rows, false, Ok(answer(&rows, &[200])));
        assert!(!plan.retry);
        assert_eq!(drain.failures, 0);
    }

    #[test]
    fn a_step_settles_heartbeats_the_ledger_took_and_waits_only_after_a_failure() {
        let rows = vec![row(1)];
        let beat = TerminalHeartbeat {
            device_serial: "D1".to_owned(),
            source: TerminalSource::Framed,
            seen_at: UnixMs(0),
        };
        let mut drain = Drain::default();
        assert_eq!(
            drain.read(),
            Read {
                limit: MAX_RECORDS_PER_BATCH,
                with_heartbeats: true,
                set_aside: true
            }
        );
        let step = drain.handle(
            &rows,
            vec![beat.clone()],
            Err(DeliveryError::Unreachable("reset".to_owned())),
        );
        assert_eq!(step.settle, Vec::new());
        assert_eq!(step.heartbeats, Vec::new(), "not taken: sent again");
        assert_eq!(step.wait, Some(RETRY_DELAY_FIRST));
        let step = drain.handle(&rows, vec![beat.clone()], Ok(answer(&rows, &[200])));
        assert_eq!(step.settle, vec![(rows[0].clone(), Settled::Done)]);
        assert_eq!(step.heartbeats, vec![beat.clone()]);
        assert_eq!(step.wait, None);
        let refused = Err(DeliveryError::Status {
            status: 422,
            body: "bad heartbeat".to_owned(),
        });
        let step = drain.handle(&[], vec![beat.clone()], refused);
        assert_eq!(
            step.heartbeats,
            vec![beat],
            "refused alone: settled, or it would be refused forever"
        );
        assert_eq!(step.wait, None);
    }
}
