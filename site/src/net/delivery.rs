//! Delivery of signed machine-to-machine posts, shared by every sender
//! that drains a queue to another server (the terminal listener's
//! forwarder to its ledger, the site's forwarder to its central, the alert
//! webhook): the HMAC signature, the endpoint that signs and posts, how an
//! answer's status is classified, the retry backoff, and the timeouts.
//! How a post travels (TLS, whom to trust) is [`crate::net::outbound`]'s.

use std::time::{Duration, SystemTime};

use hmac::{Hmac, Mac};
use sha2::Sha256;
use stockhop::time::Millis;

use crate::net::outbound::{signed_post_client, OutboundError, Trust};
use crate::terminal_wire::{SIGNATURE_HEADER, TIMESTAMP_HEADER};

/// Longest wait for the ledger's answer to one batch.
pub const DELIVERY_TIMEOUT: Duration = Duration::from_secs(10);
/// First retry delay after a failed delivery; it doubles from here.
pub const RETRY_DELAY_FIRST: Millis = Millis::from_secs(2);
/// The retry delay's cap: an outage ends within a minute of the ledger's return.
pub const RETRY_DELAY_MAX: Millis = Millis::from_secs(60);
/// Most bytes of a rejecting answer kept with a dead letter.
pub const DEAD_BODY_BYTES_MAX: usize = 4096;
/// How often the prune pass runs.
pub const PRUNE_INTERVAL: Duration = Duration::from_secs(600);
/// Wait before re-reading the queue after a local database error.
pub const DB_ERROR_DELAY: Duration = Duration::from_secs(1);

/// Why a batch did not get a per-record answer (from the ledger, or a
/// site's central).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeliveryError {
    /// No answer: connection refused or reset, timeout, TLS, …
    #[error("unreachable: {0}")]
    Unreachable(String),
    /// An answer other than a batch response.
    #[error("answered {status}: {body}")]
    Status { status: u16, body: String },
    /// A 200 whose body is not a batch response for this batch.
    #[error("unreadable answer: {0}")]
    BadAnswer(String),
}

/// What to do after a status the ledger answered a batch or a record with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Disposition {
    Delivered,
    /// Network trouble, 408, 429, 5xx, a redirect (never followed), or
    /// 401/403 (the listener's credentials, not the record, are refused).
    Retry,
    /// Any other 4xx: the ledger will never take it.
    Reject,
}

pub fn classify(status: u16) -> Disposition {
    match status {
        200..=299 => Disposition::Delivered,
        408 | 429 => Disposition::Retry,
        // The ledger refusing this listener (a wrong or rotated secret), not
        // a record: dead-lettering would empty the queue one record at a time.
        401 | 403 => Disposition::Retry,
        400..=499 => Disposition::Reject,
        _ => Disposition::Retry,
    }
}

/// Whether a 5xx answer for a record counts as an attempt the ledger
/// failed that record with: 502, 503 and 504 say the ledger (or a proxy in
/// front of it) cannot take anything now, busy or out of storage among
/// them, so they are waited out like an outage and never set a record
/// aside.
pub fn fails_the_record(status: u16) -> bool {
    (500..=599).contains(&status) && !matches!(status, 502..=504)
}

/// The wait after `failures` failed deliveries in a row: 2 s, 4 s, 8 s, …
/// capped at 60 s; none before the first failure.
pub fn retry_delay(failures: u32) -> Millis {
    backoff(RETRY_DELAY_FIRST, RETRY_DELAY_MAX, failures)
}

/// The wait after `failures` failed deliveries in a row, doubling from
/// `first` to `max`; none before the first failure.
pub fn backoff(first: Millis, max: Millis, failures: u32) -> Millis {
    if failures == 0 {
        return Millis(0);
    }
    let doublings = (failures - 1).min(16);
    Millis(first.0.saturating_mul(1 << doublings).min(max.0))
}

/// `sha256=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>`.
pub fn signature(secret: &[u8], timestamp: i64, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes any key length");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

/// A server on another machine that takes signed POSTs at one URL with a
/// shared secret: the remote ledger a terminal listener forwards to, or a
/// site's central.
pub struct SignedEndpoint {
    client: reqwest::Client,
    url: String,
    /// Without one (an alert webhook given no secret) posts go unsigned.
    secret: Option<Vec<u8>>,
}

impl SignedEndpoint {
    /// `path` on `base_url`, the server's origin (`http://host:port`, or
    /// `https://` checked against `trust`).
    pub fn new(
        base_url: &str,
        path: &str,
        secret: &str,
        trust: &Trust,
    ) -> Result<SignedEndpoint, OutboundError> {
        Ok(SignedEndpoint {
            client: signed_post_client(base_url, trust, DELIVERY_TIMEOUT)?,
            url: format!("{}{path}", base_url.trim_end_matches('/')),
            secret: Some(secret.as_bytes().to_vec()),
        })
    }

    /// The whole `url` (an alert webhook), signed when `secret` is given.
    pub fn to_url(
        url: &str,
        secret: Option<&str>,
        trust: &Trust,
    ) -> Result<SignedEndpoint, OutboundError> {
        Ok(SignedEndpoint {
            client: signed_post_client(url, trust, DELIVERY_TIMEOUT)?,
            url: url.to_owned(),
            secret: secret.map(|secret| secret.as_bytes().to_vec()),
        })
    }

    /// POSTs `message` as [`SignedEndpoint::post`] does, for a receiver
    /// whose answer carries nothing: any 2xx is delivered.
    pub async fn post_accepted<M: serde::Serialize>(
        &self,
        message: &M,
    ) -> Result<(), DeliveryError> {
        let (status, bytes) = self.send(message).await?;
        if !(200..300).contains(&status) {
            let end = bytes.len().min(DEAD_BODY_BYTES_MAX);
            return Err(DeliveryError::Status {
                status,
                body: String::from_utf8_lossy(&bytes[..end]).into_owned(),
            });
        }
        Ok(())
    }

    async fn send<M: serde::Serialize>(
        &self,
        message: &M,
    ) -> Result<(u16, bytes::Bytes), DeliveryError> {
        let body =
            serde_json::to_vec(message).map_err(|err| DeliveryError::BadAnswer(err.to_string()))?;
        let mut request = self
            .client
            .post(&self.url)
            .header(reqwest::header::CONTENT_TYPE, "application/json");
        if let Some(secret) = &self.secret {
            let timestamp = unix_seconds();
            request = request
                .header(TIMESTAMP_HEADER, timestamp.to_string())
                .header(SIGNATURE_HEADER, signature(secret, timestamp, &body));
        }
        let response = request
            .body(body)
            .send()
            .await
            .map_err(|err| DeliveryError::Unreachable(with_causes(&err)))?;
        let status = response.status().as_u16();
        let bytes = response
            .bytes()
            .await
            .map_err(|err| DeliveryError::Unreachable(with_causes(&err)))?;
        Ok((status, bytes))
    }

    /// POSTs `message` as JSON, HMAC-signed over `"<timestamp>.<body>"`,
    /// and reads a 200's JSON answer; any other status is
    /// [`DeliveryError::Status`] with the first [`DEAD_BODY_BYTES_MAX`]
    /// bytes of its body.
    pub async fn post<M, A>(&self, message: &M) -> Result<A, DeliveryError>
    where
        M: serde::Serialize,
        A: serde::de::DeserializeOwned,
    {
        let (status, bytes) = self.send(message).await?;
        if status != 200 {
            let end = bytes.len().min(DEAD_BODY_BYTES_MAX);
            return Err(DeliveryError::Status {
                status,
                body: String::from_utf8_lossy(&bytes[..end]).into_owned(),
            });
        }
        serde_json::from_slice(&bytes).map_err(|err| DeliveryError::BadAnswer(err.to_string()))
    }
}

/// An error and its causes, `: `-joined: reqwest's own message names only
/// the request, and the reason (refused, a certificate that does not chain
/// to a trusted CA, a name it is not issued for) is in its sources.
fn with_causes(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let message = cause.to_string();
        if !text.ends_with(&message) {
            text.push_str(": ");
            text.push_str(&message);
        }
        source = cause.source();
    }
    text
}

/// Seconds since the Unix epoch by the wall clock, as a signature's
/// timestamp carries them.
fn unix_seconds() -> i64 {
    let since = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    i64::try_from(since.as_secs()).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_delay_doubles_from_two_seconds_to_a_minute() {
        let secs: Vec<u64> = (0..9).map(|n| retry_delay(n).0 / 1000).collect();
        assert_eq!(secs, [0, 2, 4, 8, 16, 32, 60, 60, 60]);
        assert_eq!(retry_delay(u32::MAX), RETRY_DELAY_MAX);
    }

    #[test]
    fn statuses_are_classified_as_the_design_says() {
        for (status, expected) in [
            (200, Disposition::Delivered),
            (301, Disposition::Retry),
            (400, Disposition::Reject),
            (401, Disposition::Retry),
            (403, Disposition::Retry),
            (404, Disposition::Reject),
            (408, Disposition::Retry),
            (422, Disposition::Reject),
            (429, Disposition::Retry),
            (500, Disposition::Retry),
            (503, Disposition::Retry),
        ] {
            assert_eq!(classify(status), expected, "{status}");
        }
    }

    #[test]
    fn the_signature_covers_timestamp_and_body() {
        let sig = signature(b"0123456789abcdef", 1_800_000_000, b"{}");
        assert!(sig.starts_with("sha256=") && sig.len() == 7 + 64);
        assert_ne!(sig, signature(b"0123456789abcdef", 1_800_000_001, b"{}"));
        assert_ne!(sig, signature(b"0123456789abcdef", 1_800_000_000, b"[]"));
    }
}
