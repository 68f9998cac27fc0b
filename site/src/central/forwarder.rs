//! The site's forwarder to its central: reads pending outbox rows in seq
//! order, sends them as one signed batch, and settles what the central
//! answered in one durable transaction.
//!
//! The rules are the terminal forwarder's ([`crate::listener::forwarder`],
//! whose backoff, status classes and signature it uses): network errors,
//! timeouts, 408, 429, 5xx, redirects, 401 and 403 are retried forever,
//! 2 s doubling to 60 s; a hop the central answers with another 4xx is
//! dead-lettered and the hops behind it go on; a batch refused as a whole
//! with a 4xx is sent again one hop at a time, so only the hop the central
//! refuses is dead-lettered. A crash between the central's commit and the
//! settling transaction sends the rows again; the central answers them
//! replayed.
//!
//! At start, and whenever the central refuses a hop for its seq (409
//! `SEQ_OUT_OF_ORDER` or `SEQ_GAP`: the site was restored from a backup
//! and its outbox gives again seqs the central holds, or a PostgreSQL
//! sequence skipped seqs), the forwarder asks the central where the
//! site's stream stands (a batch without hops) and numbers its pending
//! rows again after it ([`outbox::continue_after`]): a hop is never
//! dead-lettered for its seq. A batch carries the site's outbox epoch, new
//! at each restore; a central that holds a later one (this copy of the
//! site is from before a restore) refuses it, and it is retried, never
//! dead-lettered.
//!
//! Every [`SUMMARY_EVERY_MS`] the next batch carries the site's summary
//! (read by the function `serve` passes, the site's view's), or, with no
//! hop to send, goes alone without hops, so the central's view of a quiet
//! site stays current. A batch sent one hop at a time after a refusal
//! carries none, so a central too old to read summaries still takes every
//! hop.

use std::time::Duration;

use stockhop::time::Millis;
use tokio::sync::watch;

use super::outbox::{self, Pending, Settled};
use super::wire::{
    CentralBatch, CentralBatchResponse, SiteSummary, CENTRAL_HOPS_PATH, EPOCH_STALE, SEQ_GAP,
    SEQ_OUT_OF_ORDER, SUMMARY_EVERY_MS,
};
use crate::limits::{CENTRAL_BATCH_BYTES_MAX, CENTRAL_BATCH_HOPS_MAX, CENTRAL_POLL_INTERVAL};
use crate::listener::unix_now;
use crate::net::delivery::{
    classify, retry_delay, DeliveryError, Disposition, SignedEndpoint, DB_ERROR_DELAY,
    DELIVERY_TIMEOUT, PRUNE_INTERVAL,
};
use crate::net::outbound::{OutboundError, Trust};
use crate::store::db::{Db, DbError};
use crate::store::sql::Connection;
use stockhop::time::UnixMs;

/// Reads the site's summary at `now` (the site's view's
/// [`crate::view::summary::summary`]).
pub type Summarize = fn(&mut Connection, UnixMs) -> crate::store::sql::Result<SiteSummary>;

/// The central, reached over HTTPS (or plain HTTP) with the shared secret.
pub struct CentralClient(SignedEndpoint);

impl CentralClient {
    /// `base_url` is the central's origin (`https://host:port`, or
    /// `http://`), `trust` whom its certificate must chain to.
    pub fn new(
        base_url: &str,
        secret: &str,
        trust: &Trust,
    ) -> Result<CentralClient, OutboundError> {
        SignedEndpoint::new(base_url, CENTRAL_HOPS_PATH, secret, trust).map(CentralClient)
    }

    /// POSTs `batch` signed; a 200 must be a batch response.
    pub async fn deliver(
        &self,
        batch: &CentralBatch,
    ) -> Result<CentralBatchResponse, DeliveryError> {
        self.0.post(batch).await
    }
}

/// The drain's state between attempts, sans-IO: [`run`] reads as many rows
/// as [`Drain::limit`] says, sends them, and settles and waits as
/// [`Drain::handle`] decides.
#[derive(Debug)]
pub struct Drain {
    failures: u32,
    /// Rows still to send one at a time after a batch was refused.
    isolating: usize,
    /// Whether to ask the central where the stream stands before the next
    /// batch: at start, and after a hop was refused for its seq.
    resync: bool,
    /// Seq refusals in a row: a second one right after asking waits, so a
    /// central that keeps refusing is not asked in a loop.
    seq_refusals: u32,
    /// The seqs the central refused for their seq, to number again after
    /// where it says the stream stands.
    refused: Vec<i64>,
}

impl Default for Drain {
    fn default() -> Drain {
        Drain {
            failures: 0,
            isolating: 0,
            resync: true,
            seq_refusals: 0,
            refused: Vec::new(),
        }
    }
}

/// What asking where the stream stands decided: the seq to go on after
/// (none: the central did not say, as one of an older release), or the
/// wait before asking again.
#[derive(Debug, Clone, PartialEq)]
pub enum Position {
    ContinueAfter(Option<i64>),
    Retry(Millis),
}

/// The code of a refusal's JSON body, if it has one.
fn code_of(body: &str) -> Option<String> {
    serde_json::from_str::<stockhop::wire::ErrorBody>(body)
        .ok()
        .map(|body| body.code)
}

/// What one delivery decided: rows to settle, and the wait before the next
/// attempt (`None`: at once).
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub settle: Vec<(i64, Settled)>,
    pub wait: Option<Millis>,
}

impl Drain {
    /// The most rows the next batch holds.
    pub fn limit(&self) -> usize {
        if self.isolating > 0 {
            1
        } else {
            CENTRAL_BATCH_HOPS_MAX
        }
    }

    /// Whether the next thing to send is the question where the stream
    /// stands ([`Drain::handle_position`] takes its answer).
    pub fn resync_due(&self) -> bool {
        self.resync
    }

    /// The seqs refused for their seq since the central was last asked.
    pub fn take_refused(&mut self) -> Vec<i64> {
        std::mem::take(&mut self.refused)
    }

    /// Decides what the central's answer to where the stream stands means.
    pub fn handle_position(
        &mut self,
        result: Result<CentralBatchResponse, DeliveryError>,
    ) -> Position {
        match result {
            Ok(response) => {
                self.resync = false;
                self.failures = 0;
                Position::ContinueAfter(response.stream.map(|stream| stream.last_seq))
            }
            Err(err) => {
                tracing::warn!(%err, failures = self.failures + 1, "hops not delivered to central: cannot ask it where this site's stream stands; will retry");
                self.failures = self.failures.saturating_add(1);
                Position::Retry(retry_delay(self.failures))
            }
        }
    }

    /// Decides what the central's `result` for `seqs` means.
    pub fn handle(
        &mut self,
        seqs: &[(i64, &str)],
        result: Result<CentralBatchResponse, DeliveryError>,
    ) -> Step {
        let mut settle = Vec::new();
        let mut retry = false;
        let mut seq_refused = false;
        match result {
            Ok(response) => {
                let matches = response.results.len() == seqs.len()
                    && response
                        .results
                        .iter()
                        .zip(seqs)
                        .all(|(result, (seq, key))| result.seq == *seq && result.key == *key);
                if !matches {
                    tracing::warn!(
                        sent = seqs.len(),
                        answered = response.results.len(),
                        "central's answer does not match the batch; retrying"
                    );
                    retry = true;
                } else {
                    for (result, (seq, key)) in response.results.iter().zip(seqs) {
                        if matches!(result.code.as_deref(), Some(SEQ_OUT_OF_ORDER | SEQ_GAP)) {
                            // Never the hop's fault: it goes again after
                            // where the central says the stream stands.
                            seq_refused = true;
                            self.refused.push(*seq);
                            continue;
                        }
                        match classify(result.status) {
                            Disposition::Delivered => settle.push((*seq, Settled::Done)),
                            Disposition::Reject => {
                                let reason = serde_json::json!({
                                    "code": result.code,
                                    "message": result.message,
                                })
                                .to_string();
                                tracing::warn!(seq, key, status = result.status, %reason, "central refused a hop; dead-lettered");
                                settle.push((
                                    *seq,
                                    Settled::Dead {
                                        status: result.status,
                                        reason,
                                    },
                                ));
                            }
                            Disposition::Retry => retry = true,
                        }
                    }
                }
            }
            Err(DeliveryError::Status { status, body })
                if classify(status) == Disposition::Reject
                    && code_of(&body).as_deref() != Some(EPOCH_STALE) =>
            {
                if seqs.len() > 1 {
                    tracing::warn!(
                        status,
                        hops = seqs.len(),
                        "central refused a batch; sending its hops one at a time"
                    );
                    self.isolating = seqs.len();
                    self.failures = 0;
                    return Step { settle, wait: None };
                }
                tracing::warn!(seq = ?seqs.first(), status, %body, "central refused a hop; dead-lettered");
                settle.extend(seqs.iter().map(|(seq, _)| {
                    (
                        *seq,
                        Settled::Dead {
                            status,
                            reason: body.clone(),
                        },
                    )
                }));
            }
            Err(err) => {
                tracing::warn!(%err, failures = self.failures + 1, "hops not delivered to central; will retry");
                retry = true;
            }
        }
        if seq_refused && !retry {
            tracing::info!(
                hops = seqs.len(),
                "the central refused hops for their seq; asking where this site's stream stands"
            );
            self.resync = true;
            self.seq_refusals = self.seq_refusals.saturating_add(1);
            self.isolating = 0;
            // Asked once at once; a refusal again right after waits.
            let wait = (self.seq_refusals > 1).then(|| retry_delay(self.seq_refusals - 1));
            return Step { settle, wait };
        }
        if retry {
            self.failures = self.failures.saturating_add(1);
        } else {
            self.failures = 0;
            self.seq_refusals = 0;
            self.isolating = self.isolating.saturating_sub(seqs.len().max(1));
        }
        Step {
            settle,
            wait: retry.then(|| retry_delay(self.failures)),
        }
    }
}

/// Takes rows from the front of `rows` while the batch stays under
/// [`CENTRAL_BATCH_BYTES_MAX`] (always at least one).
fn fit(site_id: &str, epoch: i64, rows: Vec<Pending>) -> CentralBatch {
    let mut bytes = site_id.len() + 64;
    let mut hops = Vec::with_capacity(rows.len());
    for row in rows {
        let size = serde_json::to_vec(&row.hop).map_or(0, |v| v.len()) + 1;
        if !hops.is_empty() && bytes + size > CENTRAL_BATCH_BYTES_MAX {
            break;
        }
        bytes += size;
        hops.push(row.hop);
    }
    CentralBatch {
        site_id: site_id.to_owned(),
        epoch,
        hops,
        summary: None,
    }
}

/// Forwards the outbox until `shutdown` turns true, and prunes its old done
/// rows every [`PRUNE_INTERVAL`].
pub async fn run(
    db: Db,
    site_id: String,
    client: CentralClient,
    summarize: Summarize,
    mut shutdown: watch::Receiver<bool>,
) {
    let mut drain = Drain::default();
    let mut pruned_at = tokio::time::Instant::now();
    let summary_every = Duration::from_millis(SUMMARY_EVERY_MS as u64);
    // When a summary last went out; none yet, so the first batch has one.
    let mut summarized_at: Option<tokio::time::Instant> = None;
    let epoch = loop {
        match db
            .call(|conn| outbox::epoch(conn).map_err(DbError::from))
            .await
        {
            Ok(epoch) => break epoch,
            Err(err) => {
                tracing::error!(%err, "cannot read the central outbox's epoch");
                pause(DB_ERROR_DELAY, &mut shutdown).await;
                if *shutdown.borrow() {
                    return;
                }
            }
        }
    };
    while !*shutdown.borrow() {
        if drain.resync_due() {
            let ask = CentralBatch {
                site_id: site_id.clone(),
                epoch,
                hops: Vec::new(),
                summary: None,
            };
            let result = deliver(&client, &ask).await;
            let error = result.as_ref().err().map(ToString::to_string);
            let failure = match drain.handle_position(result) {
                Position::ContinueAfter(None) => None,
                Position::ContinueAfter(Some(last_seq)) => {
                    let refused = drain.take_refused();
                    let moved = db
                        .call(move |conn| -> Result<_, DbError> {
                            Ok(outbox::continue_after(conn, last_seq, &refused))
                        })
                        .await;
                    match moved {
                        Ok(Ok(0)) => None,
                        Ok(Ok(moved)) => {
                            tracing::info!(moved, after = last_seq, "numbered the pending hops again after where the central holds this site's stream");
                            None
                        }
                        Ok(Err(err)) => {
                            tracing::error!(%err, "cannot go on after where the central holds this site's stream");
                            drain.resync = true;
                            Some(err.to_string())
                        }
                        Err(err) => {
                            tracing::error!(%err, "cannot number the central outbox again");
                            drain.resync = true;
                            Some(err.to_string())
                        }
                    }
                }
                Position::Retry(_) => error,
            };
            let recorded = failure.clone();
            let _ = db
                .call(move |conn| {
                    outbox::settle(conn, &[], &[], recorded.as_deref(), unix_now())
                        .map_err(DbError::from)
                })
                .await;
            if failure.is_some() {
                pause(
                    Duration::from_millis(retry_delay(drain.failures.max(1)).0),
                    &mut shutdown,
                )
                .await;
            }
            continue;
        }
        if pruned_at.elapsed() >= PRUNE_INTERVAL {
            pruned_at = tokio::time::Instant::now();
            match db
                .call(|conn| outbox::prune(conn, unix_now()).map_err(DbError::from))
                .await
            {
                Ok(0) => {}
                Ok(removed) => tracing::info!(removed, "pruned the central outbox"),
                Err(err) => tracing::error!(%err, "cannot prune the central outbox"),
            }
        }
        let limit = drain.limit();
        let rows = match db
            .call(move |conn| outbox::pending(conn, limit).map_err(DbError::from))
            .await
        {
            Ok(rows) => rows,
            Err(err) => {
                tracing::error!(%err, "cannot read the central outbox");
                pause(DB_ERROR_DELAY, &mut shutdown).await;
                continue;
            }
        };
        let summary_due =
            drain.limit() > 1 && summarized_at.is_none_or(|at| at.elapsed() >= summary_every);
        if rows.is_empty() && !summary_due {
            pause(CENTRAL_POLL_INTERVAL, &mut shutdown).await;
            continue;
        }
        let mut batch = fit(&site_id, epoch, rows);
        if summary_due {
            summarized_at = Some(tokio::time::Instant::now());
            match db
                .call(move |conn| summarize(conn, unix_now()).map_err(DbError::from))
                .await
            {
                Ok(summary) => batch.summary = Some(summary),
                Err(err) => tracing::error!(%err, "cannot read the site's summary for the central"),
            }
            if batch.hops.is_empty() && batch.summary.is_none() {
                continue;
            }
        }
        let result = deliver(&client, &batch).await;
        let seqs: Vec<(i64, &str)> = batch
            .hops
            .iter()
            .map(|hop| (hop.seq, hop.key.as_str()))
            .collect();
        let error = result.as_ref().err().map(ToString::to_string);
        let Step { settle, wait } = drain.handle(&seqs, result);
        // A retry is a failure to show; a batch refused as a whole (sent
        // again one hop at a time at once) is not yet.
        let failure = wait.map(|_| {
            error.unwrap_or_else(|| "the central's answer does not match the batch".to_owned())
        });
        let attempted: Vec<i64> = seqs.iter().map(|(seq, _)| *seq).collect();
        let settled = db
            .call(move |conn| {
                outbox::settle(conn, &attempted, &settle, failure.as_deref(), unix_now())
                    .map_err(DbError::from)
            })
            .await;
        if let Err(err) = settled {
            tracing::error!(%err, "cannot mark hops sent to central; they will be sent again");
            pause(DB_ERROR_DELAY, &mut shutdown).await;
            continue;
        }
        if let Some(delay) = wait {
            pause(Duration::from_millis(delay.0), &mut shutdown).await;
        }
    }
}

/// Delivers `batch`, or says the central did not answer in time.
async fn deliver(
    client: &CentralClient,
    batch: &CentralBatch,
) -> Result<CentralBatchResponse, DeliveryError> {
    match tokio::time::timeout(DELIVERY_TIMEOUT, client.deliver(batch)).await {
        Ok(result) => result,
        Err(_) => Err(DeliveryError::Unreachable(format!(
            "no answer within {} s",
            DELIVERY_TIMEOUT.as_secs()
        ))),
    }
}

async fn pause(delay: Duration, shutdown: &mut watch::Receiver<bool>) {
    tokio::select! {
        () = tokio::time::sleep(delay) => {}
        _ = shutdown.changed() => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::central::wire::CentralResult;

    fn answer(seqs: &[(i64, &str)], statuses: &[u16]) -> CentralBatchResponse {
        CentralBatchResponse {
            stream: None,
            results: seqs
                .iter()
                .zip(statuses)
                .map(|((seq, key), &status)| CentralResult {
                    seq: *seq,
                    key: (*key).to_owned(),
                    status,
                    replayed: false,
                    code: (status != 200).then(|| "IDEMPOTENCY_KEY_REUSED".to_owned()),
                    message: None,
                })
                .collect(),
        }
    }

    #[test]
    fn a_hop_refused_in_an_answer_is_dead_and_the_rest_are_done() {
        let seqs = [(1, "a"), (2, "b"), (3, "c")];
        let mut drain = Drain::default();
        let step = drain.handle(&seqs, Ok(answer(&seqs, &[200, 409, 200])));
        assert_eq!(step.wait, None);
        assert_eq!(step.settle[0], (1, Settled::Done));
        assert!(matches!(
            step.settle[1],
            (2, Settled::Dead { status: 409, .. })
        ));
        assert_eq!(step.settle[2], (3, Settled::Done));
    }

    #[test]
    fn a_refused_batch_is_resent_one_hop_at_a_time_and_only_the_refused_one_dies() {
        let seqs = [(1, "a"), (2, "b")];
        let refused = || {
            Err(DeliveryError::Status {
                status: 400,
                body: "no".to_owned(),
            })
        };
        let mut drain = Drain::default();
        let step = drain.handle(&seqs, refused());
        assert_eq!(
            step,
            Step {
                settle: Vec::new(),
                wait: None
            }
        );
        assert_eq!(drain.limit(), 1);
        let step = drain.handle(&seqs[..1], refused());
        assert!(matches!(
            step.settle[0],
            (1, Settled::Dead { status: 400, .. })
        ));
        assert_eq!(drain.limit(), 1);
        let step = drain.handle(&seqs[1..], Ok(answer(&seqs[1..], &[200])));
        assert_eq!(step.settle, vec![(2, Settled::Done)]);
        assert_eq!(drain.limit(), CENTRAL_BATCH_HOPS_MAX);
    }

    #[test]
    fn a_hop_refused_for_its_seq_is_never_dead_the_forwarder_asks_where_the_stream_stands() {
        let seqs = [(11, "a"), (12, "b")];
        let mut drain = Drain::default();
        assert!(drain.resync_due(), "asked at start");
        let stream = |last_seq| CentralBatchResponse {
            results: Vec::new(),
            stream: Some(crate::central::wire::StreamPosition { epoch: 0, last_seq }),
        };
        assert_eq!(
            drain.handle_position(Ok(stream(10))),
            Position::ContinueAfter(Some(10))
        );
        assert!(!drain.resync_due());
        let mut refused = answer(&seqs, &[409, 409]);
        for result in &mut refused.results {
            result.code = Some(SEQ_OUT_OF_ORDER.to_owned());
        }
        let step = drain.handle(&seqs, Ok(refused.clone()));
        assert_eq!(
            step,
            Step {
                settle: Vec::new(),
                wait: None
            },
            "none dead, asked at once"
        );
        assert!(drain.resync_due());
        drain.handle_position(Ok(stream(15)));
        let step = drain.handle(&seqs, Ok(refused));
        assert!(
            step.settle.is_empty() && step.wait.is_some(),
            "again right after: waits"
        );
        // A copy of the site from before a restore is retried, never dead.
        let stale = drain.handle(
            &seqs,
            Err(DeliveryError::Status {
                status: 409,
                body: serde_json::json!({"code": EPOCH_STALE, "message": "old"}).to_string(),
            }),
        );
        assert!(stale.settle.is_empty() && stale.wait.is_some());
        assert_eq!(
            drain.limit(),
            CENTRAL_BATCH_HOPS_MAX,
            "not sent one at a time"
        );
    }

    #[test]
    fn refused_credentials_server_errors_and_mismatched_answers_are_retried_with_backoff() {
        let seqs = [(1, "a")];
        let mut drain = Drain::default();
        for (n, status) in [401_u16, 403, 503, 429].into_iter().enumerate() {
            let step = drain.handle(
                &seqs,
                Err(DeliveryError::Status {
                    status,
                    body: String::new(),
                }),
            );
            assert!(step.settle.is_empty(), "{status}");
            assert_eq!(step.wait, Some(retry_delay(n as u32 + 1)), "{status}");
        }
        let step = drain.handle(&seqs, Ok(answer(&[(9, "z")], &[200])));
        assert!(step.settle.is_empty() && step.wait.is_some());
        let step = drain.handle(&seqs, Ok(answer(&seqs, &[200])));
        assert_eq!(
            step,
            Step {
                settle: vec![(1, Settled::Done)],
                wait: None
            }
        );
    }
}
