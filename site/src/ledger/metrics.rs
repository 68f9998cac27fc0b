//! What the ledger counts as it works, for `GET /metrics`: sync items by
//! outcome and the capture → recorded latency of the items it recorded.
//! Counters live for the process (Prometheus reads their rate).

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use stockhop::time::UnixMs;
use stockhop::wire::ItemResult;

/// Latency buckets: 50 ms doubling 20 times, to about 7 h (an outage
/// drained after a shift).
const LATENCY_BUCKET_START_SECS: f64 = 0.05;
const LATENCY_BUCKET_COUNT: u16 = 20;

/// Sync items by `outcome`, and the capture → recorded latency histogram.
#[derive(Clone, Debug)]
pub struct SyncMetrics {
    pub items: Family<Vec<(String, String)>, Counter>,
    pub latency_seconds: Histogram,
    /// Failed admin sign-ins (a wrong token at sign-in or as a bearer).
    pub sign_in_failures: Counter,
    /// Sign-in attempts answered 429 before they were checked.
    pub sign_ins_throttled: Counter,
    /// 1 while the site is out of storage ([`crate::store::storage`]).
    pub storage_full: Gauge,
    /// Free bytes on the data directory's file system, as last read.
    pub storage_free_bytes: Gauge,
}

impl Default for SyncMetrics {
    fn default() -> SyncMetrics {
        SyncMetrics {
            items: Family::default(),
            latency_seconds: Histogram::new(exponential_buckets(
                LATENCY_BUCKET_START_SECS,
                2.0,
                LATENCY_BUCKET_COUNT,
            )),
            sign_in_failures: Counter::default(),
            sign_ins_throttled: Counter::default(),
            storage_full: Gauge::default(),
            storage_free_bytes: Gauge::default(),
        }
    }
}

impl SyncMetrics {
    /// Counts one request's answers (replays are not counted again);
    /// `occurred_at` holds each item's capture time, in request order.
    pub fn observe(&self, results: &[ItemResult], occurred_at: &[UnixMs]) {
        for (result, occurred) in results.iter().zip(occurred_at) {
            if result.replayed {
                continue;
            }
            let outcome = match (result.outcome, &result.code) {
                (Some(outcome), _) => outcome.as_str(),
                (None, Some(_)) => "refused",
                (None, None) => "unknown",
            };
            self.items
                .get_or_create(&vec![("outcome".to_owned(), outcome.to_owned())])
                .inc();
            if let Some(recorded) = result.recorded_at {
                let hop_recorded = !result.hop_ids.is_empty();
                if hop_recorded {
                    let millis = recorded.0.saturating_sub(occurred.0).max(0);
                    self.latency_seconds.observe(millis as f64 / 1000.0);
                }
            }
        }
    }
}
