//! Reading what came back from `POST /v1/sync` into one verdict per item.
//!
//! The transport reports only what it saw (no answer, a timeout, or a
//! status and the body it read into a [`Reply`]); everything after that
//! (matching results to the items sent, the classification of docs/design.md
//! §3.7) is here, so it is tested natively and the same in every runtime.
//! The browser reads the body with its own JSON parser and hands over
//! typed values, so the module links no JSON text parser; [`Reply::from_text`]
//! reads JSON text for native runtimes and tests.

use serde::{Deserialize, Deserializer};

use crate::classify::{classify, Attempt, ResultKind};
use crate::time::UnixMs;
use crate::wire::{ErrorBody, SyncResponse};

use super::item::Item;

/// What the transport saw of one request.
#[derive(Debug, Clone, PartialEq)]
pub enum TransportOutcome {
    /// Offline, or fetch failed before any response.
    Offline,
    /// No response within the request timeout.
    Timeout,
    /// A response with its status and what its body held.
    Http { status: u16, body: Reply },
}

impl TransportOutcome {
    /// A response whose body is JSON text (see [`Reply::from_text`]).
    pub fn from_text(status: u16, body: &str) -> TransportOutcome {
        TransportOutcome::Http {
            status,
            body: Reply::from_text(status, body),
        }
    }
}

/// What a response's body held, read as the status says it should be:
/// per-item results from a 200, `{code, message}` from anything else.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    Sync(SyncResponse),
    Error(ErrorBody),
    /// Empty, not JSON, or not of the expected shape.
    Unreadable,
}

impl Reply {
    /// Reads a body from any serde data format (a parsed `serde_json::Value`,
    /// or in the browser the parsed JS value).
    pub fn read<'de, D: Deserializer<'de>>(status: u16, body: D) -> Reply {
        let read = if status == 200 {
            SyncResponse::deserialize(body).map(Reply::Sync)
        } else {
            ErrorBody::deserialize(body).map(Reply::Error)
        };
        read.unwrap_or(Reply::Unreadable)
    }

    /// Reads a body of JSON text.
    pub fn from_text(status: u16, body: &str) -> Reply {
        let read = if status == 200 {
            serde_json::from_str(body).map(Reply::Sync)
        } else {
            serde_json::from_str(body).map(Reply::Error)
        };
        read.unwrap_or(Reply::Unreadable)
    }
}

/// The verdict on one item of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub kind: ResultKind,
    /// The rejection reason or the code of a blocking answer, for the screen.
    pub reason: Option<String>,
    pub recorded_at: Option<UnixMs>,
    /// The server answered from its stored receipt: an earlier send of
    /// this key had already reached it.
    pub replayed: bool,
    /// The hops the server recorded for the item.
    pub hop_ids: Vec<i64>,
}

/// Reads a request's outcome into one verdict per item sent, in order.
pub fn verdicts(items: &[Item], outcome: &TransportOutcome) -> Vec<Verdict> {
    let whole = |kind: ResultKind, reason: Option<String>| {
        items
            .iter()
            .map(|_| Verdict {
                kind,
                reason: reason.clone(),
                recorded_at: None,
                replayed: false,
                hop_ids: Vec::new(),
            })
            .collect()
    };
    let (status, body) = match outcome {
        TransportOutcome::Offline => return whole(classify(Attempt::Offline), None),
        TransportOutcome::Timeout => {
            return whole(classify(Attempt::Timeout), Some("timeout".to_owned()))
        }
        TransportOutcome::Http { status, body } => (*status, body),
    };
    if status != 200 {
        let code = match body {
            Reply::Error(error) => Some(error.code.as_str()),
            _ => None,
        };
        let kind = classify(Attempt::Response {
            status,
            code,
            outcome: None,
        });
        return whole(kind, Some(describe(status, code)));
    }
    let unreadable = |why: &str| whole(ResultKind::Unknown, Some(why.to_owned()));
    let Reply::Sync(response) = body else {
        return unreadable("unreadable answer");
    };
    let matches =
        response.results.len() == items.len()
            && response.results.iter().zip(items).all(|(result, item)| {
                result.key == item.key && result.client_seq == item.client_seq
            });
    if !matches {
        return unreadable("answer does not match the items sent");
    }
    response
        .results
        .iter()
        .map(|result| {
            let kind = classify(Attempt::Response {
                status: result.status,
                code: result.code.as_deref(),
                outcome: result.outcome,
            });
            let reason = match kind {
                ResultKind::Rejected => result.reason.clone(),
                ResultKind::Done | ResultKind::Buffered => None,
                _ => Some(describe(result.status, result.code.as_deref())),
            };
            Verdict {
                kind,
                reason,
                recorded_at: result.recorded_at,
                replayed: result.replayed,
                hop_ids: result.hop_ids.clone(),
            }
        })
        .collect()
}

fn describe(status: u16, code: Option<&str>) -> String {
    match code {
        Some(code) => format!("{code} (HTTP {status})"),
        None => format!("HTTP {status}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RESULTS: &str = r#"{"server_time":"2026-11-29T10:15:02.480Z","results":[
        {"key":"8a0c5e2e-4b1f-4c3d-9e8f-0123456789ab","client_seq":3,"status":200,"outcome":"applied"}]}"#;

    #[test]
    fn a_body_reads_as_results_from_a_200_and_as_an_error_otherwise() {
        let Reply::Sync(response) = Reply::from_text(200, RESULTS) else {
            panic!("a 200 carries results");
        };
        assert_eq!(response.results[0].client_seq, 3);
        let error = Reply::from_text(503, r#"{"code":"OVERLOADED","message":"busy"}"#);
        assert!(matches!(error, Reply::Error(body) if body.code == "OVERLOADED"));
        assert_eq!(Reply::from_text(200, "not json"), Reply::Unreadable);
        assert_eq!(Reply::from_text(503, ""), Reply::Unreadable);
        assert_eq!(Reply::from_text(401, RESULTS), Reply::Unreadable);
    }

    #[test]
    fn any_data_format_reads_the_same_reply_as_json_text() {
        let value: serde_json::Value = serde_json::from_str(RESULTS).unwrap();
        assert_eq!(Reply::read(200, &value), Reply::from_text(200, RESULTS));
        assert_eq!(Reply::read(409, &value), Reply::Unreadable);
    }
}
