//! The alert task: every [`EVALUATE_INTERVAL`] it reads the site's status
//! and the data directory's free space, records which conditions hold
//! (queueing a `firing` or `resolved` for each that started or ended) and
//! delivers the queue to the webhook, oldest first, in POSTs of
//! `{"alerts":[…]}`, signed like terminal batches when a secret is set.
//! A failed delivery waits as the forwarders wait (2 s doubling to 60 s),
//! and a receiver's 4xx other than 408/429 sets the alerts aside as
//! refused; nothing is dropped while it retries, and nothing sent is sent
//! again after a restart.

use std::path::PathBuf;
use std::time::Duration;

use tokio::sync::watch;

use super::conditions::{self, Storage};
use super::outbox::{self, Delivered, WebhookAlert};
use crate::ledger::{savepoint, wall_clock, LedgerError};
use crate::net::delivery::{
    classify, retry_delay, DeliveryError, Disposition, SignedEndpoint, DELIVERY_TIMEOUT,
};
use crate::net::outbound::{OutboundError, Trust};
use crate::site_clock::SiteZone;
use crate::store::db::{Db, DbError};
use crate::view::status;

/// How often conditions are evaluated: the longest an alert waits after
/// its condition starts, before delivery.
pub const EVALUATE_INTERVAL: Duration = Duration::from_secs(5);

/// How often delivered alerts are pruned.
pub const PRUNE_INTERVAL: Duration = Duration::from_secs(600);

/// Where alerts go.
pub struct Webhook {
    endpoint: SignedEndpoint,
}

impl Webhook {
    /// `url` (`https://…` checked against `trust`, or `http://`), signed
    /// with `secret` when given.
    pub fn new(url: &str, secret: Option<&str>, trust: &Trust) -> Result<Webhook, OutboundError> {
        Ok(Webhook {
            endpoint: SignedEndpoint::to_url(url, secret, trust)?,
        })
    }
}

#[derive(serde::Serialize)]
struct Post<'a> {
    alerts: &'a [WebhookAlert],
}

/// The alert task's settings.
pub struct Settings {
    pub site_id: String,
    /// Whose free space is watched.
    pub data_dir: PathBuf,
    /// Without one, conditions are still recorded (for `/metrics`) but no
    /// alert is queued.
    pub webhook: Option<Webhook>,
    pub evaluate_every: Duration,
}

/// The data directory's free space; `None` when it cannot be read. Kept a
/// function of its own: the storage watermark check can take its place.
pub fn storage(data_dir: &std::path::Path) -> Option<Storage> {
    fs4::available_space(data_dir)
        .ok()
        .map(|free_bytes| Storage { free_bytes })
}

/// Evaluates once at `now`: records the conditions that hold and queues
/// their transitions. Returns how many alerts it queued.
pub async fn evaluate(db: &Db, settings: &Settings) -> Result<usize, LedgerError> {
    let listener = db
        .read_local(|conn| {
            status::listener_status(conn).map_err(|err| LedgerError::Corrupt(err.to_string()))
        })
        .await?;
    let storage = storage(&settings.data_dir);
    let site_id = settings.site_id.clone();
    let deliver = settings.webhook.is_some();
    // The status is read beside the writer (under a portal's load it takes
    // a tenth of a second or more, which a turn at the writer would take
    // from the handhelds); only the transitions take a turn. A change
    // between the two is seen by the next evaluation.
    let now = wall_clock();
    let (status, zone) = db
        .read(move |conn| -> Result<_, LedgerError> {
            Ok((
                status::status(conn, listener, now)?,
                SiteZone::remembered(conn)?,
            ))
        })
        .await?;
    let holding = conditions::evaluate(&status, storage, &zone, now);
    db.call(move |conn| {
        crate::store::sql::retry_conflicts(|| {
            savepoint(conn, |conn| {
                Ok(outbox::transition(conn, &holding, &site_id, deliver, now)?)
            })
        })
    })
    .await
}

/// Delivers the queue until it is empty or a delivery fails; returns the
/// wait before the next try after a failure.
async fn deliver(db: &Db, webhook: &Webhook, failures: &mut u32) -> Option<Duration> {
    loop {
        let pending = match db
            .read(|conn| outbox::pending(conn).map_err(DbError::from))
            .await
        {
            Ok(pending) => pending,
            Err(err) => {
                tracing::error!(%err, "cannot read the alert outbox");
                return Some(EVALUATE_INTERVAL);
            }
        };
        if pending.is_empty() {
            return None;
        }
        let (seqs, alerts): (Vec<i64>, Vec<WebhookAlert>) = pending.into_iter().unzip();
        let result = match tokio::time::timeout(
            DELIVERY_TIMEOUT,
            webhook.endpoint.post_accepted(&Post { alerts: &alerts }),
        )
        .await
        {
            Ok(result) => result,
            Err(_) => Err(DeliveryError::Unreachable(format!(
                "no answer within {} s",
                DELIVERY_TIMEOUT.as_secs()
            ))),
        };
        let delivered = match &result {
            Ok(()) => Delivered::Sent,
            Err(DeliveryError::Status { status, .. })
                if classify(*status) == Disposition::Reject =>
            {
                Delivered::Refused(result.as_ref().unwrap_err().to_string())
            }
            Err(err) => Delivered::Failed(err.to_string()),
        };
        let settled = delivered.clone();
        let now = wall_clock();
        if let Err(err) = db
            .call(move |conn| outbox::settle(conn, &seqs, &settled, now).map_err(DbError::from))
            .await
        {
            tracing::error!(%err, "cannot mark alerts delivered; they will be sent again");
            return Some(EVALUATE_INTERVAL);
        }
        match delivered {
            Delivered::Sent => {
                *failures = 0;
                tracing::info!(alerts = alerts.len(), "alerts delivered to the webhook");
            }
            Delivered::Refused(error) => {
                *failures = 0;
                tracing::error!(%error, alerts = alerts.len(), "the webhook refused alerts for good");
            }
            Delivered::Failed(error) => {
                *failures += 1;
                let wait = retry_delay(*failures);
                tracing::warn!(%error, retry_in_ms = wait.0, "alert delivery failed");
                return Some(Duration::from_millis(wait.0));
            }
        }
    }
}

/// Evaluates and delivers until `shutdown` turns true.
pub async fn run(db: Db, settings: Settings, mut shutdown: watch::Receiver<bool>) {
    let mut failures = 0;
    let mut retry_at: Option<tokio::time::Instant> = None;
    let mut pruned_at = tokio::time::Instant::now();
    while !*shutdown.borrow() {
        if let Err(err) = evaluate(&db, &settings).await {
            tracing::error!(%err, "cannot evaluate the alert conditions");
        }
        let now = tokio::time::Instant::now();
        if let Some(webhook) = &settings.webhook {
            if retry_at.is_none_or(|at| at <= now) {
                retry_at = deliver(&db, webhook, &mut failures)
                    .await
                    .map(|wait| now + wait);
            }
        }
        if pruned_at.elapsed() >= PRUNE_INTERVAL {
            pruned_at = tokio::time::Instant::now();
            let pruned = db
                .call(|conn| outbox::prune(conn, wall_clock()).map_err(DbError::from))
                .await;
            if let Err(err) = pruned {
                tracing::error!(%err, "cannot prune the alert outbox");
            }
        }
        let next = now + settings.evaluate_every;
        let wake = retry_at.map_or(next, |at| at.min(next).max(now));
        tokio::select! {
            _ = shutdown.changed() => {}
            () = tokio::time::sleep_until(wake) => {}
        }
    }
}
