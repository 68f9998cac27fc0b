//! Reading what came back from `POST /v1/sync` into one verdict per item.
//!
//! The transport reports only what it saw (no answer, a timeout, or a
//! status and a body); everything after that (parsing the body, matching
//! results to the items sent, the classification of DESIGN.md §3.7) is
//! here, so it is tested natively and the same in every runtime.

use crate::classify::{classify, Attempt, ResultKind};
use crate::time::UnixMs;
use crate::wire::{ErrorBody, SyncResponse};

use super::item::Item;

/// What the transport saw of one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransportOutcome {
    /// Offline, or fetch failed before any response.
    Offline,
    /// No response within the request timeout.
    Timeout,
    /// A response with its status and body text.
    Http { status: u16, body: String },
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
        let error = serde_json::from_str::<ErrorBody>(body).ok();
        let code = error.as_ref().map(|e| e.code.as_str());
        let kind = classify(Attempt::Response {
            status,
            code,
            outcome: None,
        });
        return whole(kind, Some(describe(status, code)));
    }
    let unreadable = |why: &str| whole(ResultKind::Unknown, Some(why.to_owned()));
    let Ok(response) = serde_json::from_str::<SyncResponse>(body) else {
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
