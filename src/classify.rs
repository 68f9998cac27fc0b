//! What the queue does with the result of sending an item: the status
//! codes are the retry policy (docs/design.md §3).
//!
//! | kind | from | the queue |
//! |---|---|---|
//! | deferred | offline, fetch failed before a response, 401, device awaiting approval | stops the run, retries on the schedule |
//! | retryable | timeout, 408, 429, 500, 502, 503, 504, `OPERATION_IN_PROGRESS` | keeps the item, backs off |
//! | blocked | 400, 403, 404, 409 (but `OPERATION_IN_PROGRESS`), 410, 412, 422, 501 | stops that item, shows it for review |
//! | unknown | anything else | stops the run, retries later |
//! | done / rejected | 200 with an outcome | records the server's answer |
//!
//! One addition the table leaves open: `202` with outcome `buffered` is
//! [`ResultKind::Buffered`]: the server holds the item durably behind a gap
//! in `client_seq`, so it stays queued and its replay is sent after the gap.

use crate::wire::{codes, ItemOutcome};

/// What happened to an attempt, as the transport saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attempt<'a> {
    /// The device is offline, or fetch failed before any response.
    Offline,
    /// No response within the request timeout.
    Timeout,
    /// A response: its HTTP status (per item, or of the whole request),
    /// the error `code` if one came, and the item's `outcome` if one came.
    Response {
        status: u16,
        code: Option<&'a str>,
        outcome: Option<ItemOutcome>,
    },
}

/// The queue's reading of an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ResultKind {
    Deferred,
    Retryable,
    Blocked,
    Unknown,
    Done,
    Rejected,
    Buffered,
}

impl ResultKind {
    /// Whether the drain stops its whole run (not just this item).
    pub fn stops_the_run(self) -> bool {
        matches!(self, ResultKind::Deferred | ResultKind::Unknown)
    }
}

/// Classifies one attempt.
pub fn classify(attempt: Attempt<'_>) -> ResultKind {
    let (status, code, outcome) = match attempt {
        Attempt::Offline => return ResultKind::Deferred,
        Attempt::Timeout => return ResultKind::Retryable,
        Attempt::Response {
            status,
            code,
            outcome,
        } => (status, code, outcome),
    };
    match code {
        Some(codes::OPERATION_IN_PROGRESS) => return ResultKind::Retryable,
        Some(codes::DEVICE_AWAITING_APPROVAL) => return ResultKind::Deferred,
        _ => {}
    }
    match (status, outcome) {
        (200, Some(ItemOutcome::Applied | ItemOutcome::Simulated)) => ResultKind::Done,
        (200, Some(ItemOutcome::Rejected)) => ResultKind::Rejected,
        (202, Some(ItemOutcome::Buffered)) => ResultKind::Buffered,
        (401, _) => ResultKind::Deferred,
        (408 | 429 | 500 | 502 | 503 | 504, _) => ResultKind::Retryable,
        (400 | 403 | 404 | 409 | 410 | 412 | 422 | 501, _) => ResultKind::Blocked,
        _ => ResultKind::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::ResultKind::*;
    use super::*;

    fn check(attempt: Attempt<'_>, expected: ResultKind) {
        assert_eq!(classify(attempt), expected, "{attempt:?}");
    }

    fn status(status: u16, code: Option<&str>) -> Attempt<'_> {
        Attempt::Response {
            status,
            code,
            outcome: None,
        }
    }

    #[test]
    fn every_status_the_table_names() {
        check(Attempt::Offline, Deferred);
        check(Attempt::Timeout, Retryable);
        check(status(401, None), Deferred);
        check(status(403, Some(codes::DEVICE_AWAITING_APPROVAL)), Deferred);
        for code in [408, 429, 500, 502, 503, 504] {
            check(status(code, None), Retryable);
        }
        for code in [400, 403, 404, 409, 410, 412, 422, 501] {
            check(status(code, None), Blocked);
        }
        for code in [
            100, 201, 204, 301, 302, 304, 402, 405, 411, 413, 418, 451, 505, 599,
        ] {
            check(status(code, None), Unknown);
        }
    }

    #[test]
    fn conflict_codes_split_retryable_from_blocked() {
        check(status(409, Some(codes::OPERATION_IN_PROGRESS)), Retryable);
        check(status(409, Some(codes::IDEMPOTENCY_KEY_REUSED)), Blocked);
        check(
            status(409, Some(codes::IDEMPOTENCY_RECEIPT_UNAVAILABLE)),
            Blocked,
        );
        check(status(409, Some(codes::SEQ_ALREADY_USED)), Blocked);
        check(status(409, Some(codes::SESSION_CONFLICT)), Blocked);
        check(status(403, Some(codes::SESSION_NOT_YOURS)), Blocked);
        check(status(422, Some(codes::INVALID_ITEM)), Blocked);
    }

    #[test]
    fn outcomes_of_a_200() {
        let with = |status, outcome| Attempt::Response {
            status,
            code: None,
            outcome: Some(outcome),
        };
        check(with(200, ItemOutcome::Applied), Done);
        check(with(200, ItemOutcome::Simulated), Done);
        check(with(200, ItemOutcome::Rejected), Rejected);
        check(with(202, ItemOutcome::Buffered), Buffered);
        check(status(200, None), Unknown);
        check(with(200, ItemOutcome::Buffered), Unknown);
    }

    #[test]
    fn only_deferred_and_unknown_stop_the_run() {
        let stops: Vec<_> = [
            Deferred, Retryable, Blocked, Unknown, Done, Rejected, Buffered,
        ]
        .into_iter()
        .filter(|k| k.stops_the_run())
        .collect();
        assert_eq!(stops, [Deferred, Unknown]);
    }
}
