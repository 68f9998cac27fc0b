//! The drain's state machine natively: order, batching, classification,
//! backoff, restarts and operator actions, with the server's answers built
//! as the JSON docs/design.md §4 specifies.
#![cfg(not(target_arch = "wasm32"))]

use serde_json::json;
use stockhop::backoff::Backoff;
use stockhop::key::IdempotencyKey;
use stockhop::queue::capture::{Group, GROUP_COMMIT_MAX_ITEMS};
use stockhop::queue::{
    acknowledge, discard, Blockers, Capture, CaptureError, Drain, Item, ItemState, Lease, Session,
    TransportOutcome,
};
use stockhop::time::UnixMs;
use stockhop::wire::{Command, Mode, OpenSessionBody, MAX_ITEMS_PER_REQUEST};
use uuid::Uuid;

const T0: UnixMs = UnixMs(1_795_940_000_000);

/// A handheld with deterministic keys and a store the test can inspect.
struct Handheld {
    next_key: u64,
    sessions: Vec<Session>,
    store: Vec<Item>,
    drain: Drain,
}

impl Handheld {
    fn new() -> Handheld {
        Handheld {
            next_key: 0,
            sessions: Vec::new(),
            store: Vec::new(),
            drain: Drain::default(),
        }
    }

    fn key(&mut self) -> IdempotencyKey {
        self.next_key += 1;
        let mut bytes = [0u8; 16];
        bytes[8..].copy_from_slice(&self.next_key.to_be_bytes());
        IdempotencyKey::from_random_bytes(bytes)
    }

    fn open(&mut self, n: u128, now: UnixMs) -> usize {
        let body = OpenSessionBody {
            operator_id: format!("op-{n}"),
            mode: Mode::PutAway,
            context: Default::default(),
        };
        let key = self.key();
        let (session, item) = Session::open(Uuid::from_u128(n), body, key, now);
        self.sessions.push(session);
        self.write(vec![item], true);
        self.sessions.len() - 1
    }

    fn scan(&mut self, session: usize, epc: &str, now: UnixMs) -> u64 {
        let key = self.key();
        let capture = Capture {
            command: Command::Scan,
            body: json!({"mode": "put_away", "epc": epc}),
        };
        let item = self.sessions[session].capture(capture, key, now).unwrap();
        let seq = item.client_seq;
        self.write(vec![item], true);
        seq
    }

    fn write(&mut self, items: Vec<Item>, captured: bool) {
        for item in &items {
            self.put(item.clone());
        }
        if captured {
            self.drain.handle_captured(items);
        } else {
            self.drain.handle_stored(items);
        }
    }

    fn put(&mut self, item: Item) {
        match self.store.iter_mut().find(|i| i.key == item.key) {
            Some(slot) => *slot = item,
            None => self.store.push(item),
        }
    }

    fn lease(&mut self, now: UnixMs) -> Option<Lease> {
        let lease = self.drain.poll_transmit(now)?;
        for item in &lease.items {
            self.put(item.clone());
        }
        Some(lease)
    }

    /// Answers a lease item by item and records the outcome.
    fn answer(
        &mut self,
        lease: &Lease,
        now: UnixMs,
        per_item: impl Fn(&Item) -> serde_json::Value,
    ) {
        let outcome = answer(lease, per_item);
        self.record(lease, now, &outcome);
    }

    fn record(&mut self, lease: &Lease, now: UnixMs, outcome: &TransportOutcome) {
        let recorded = self
            .drain
            .handle_outcome(now, lease.batch_id, outcome)
            .unwrap();
        for item in recorded.items {
            self.put(item);
        }
    }

    fn restart(&mut self) {
        let backoff = self.drain.backoff();
        self.drain = Drain::restore(&self.sessions, self.store.clone(), backoff);
    }

    fn state_of(&self, session: usize, seq: u64) -> ItemState {
        let id = self.sessions[session].session_id;
        self.store
            .iter()
            .find(|i| i.session_id == id && i.client_seq == seq)
            .unwrap()
            .state
    }
}

fn applied(item: &Item) -> serde_json::Value {
    json!({"key": item.key, "client_seq": item.client_seq, "status": 200,
           "outcome": "applied", "replayed": false, "recorded_at": "2026-11-29T10:15:02.401Z"})
}

fn status(code: u16, error: &str) -> impl Fn(&Item) -> serde_json::Value + '_ {
    move |item| json!({"key": item.key, "client_seq": item.client_seq, "status": code, "code": error})
}

fn answer(lease: &Lease, per_item: impl Fn(&Item) -> serde_json::Value) -> TransportOutcome {
    let results: Vec<_> = lease.items.iter().map(per_item).collect();
    TransportOutcome::from_text(
        200,
        &json!({"server_time": "2026-11-29T10:15:02.480Z", "results": results}).to_string(),
    )
}

fn seqs(lease: &Lease) -> Vec<(u128, u64)> {
    lease
        .items
        .iter()
        .map(|i| (i.session_id.as_u128(), i.client_seq))
        .collect()
}

#[test]
fn interleaved_sessions_drain_oldest_session_first_in_seq_order() {
    let mut hh = Handheld::new();
    let b = hh.open(2, T0.plus(stockhop::time::Millis(5)));
    let a = hh.open(1, T0.plus(stockhop::time::Millis(9)));
    hh.scan(a, "A1", T0.plus(stockhop::time::Millis(10)));
    hh.scan(b, "B1", T0.plus(stockhop::time::Millis(11)));
    hh.scan(a, "A2", T0.plus(stockhop::time::Millis(12)));
    let lease = hh.lease(T0.plus(stockhop::time::Millis(20))).unwrap();
    assert_eq!(seqs(&lease), [(2, 1), (2, 2), (1, 1), (1, 2), (1, 3)]);
    assert!(lease.items.iter().all(|i| i.state == ItemState::Sending));
    let request = lease.request("HH-0042", T0);
    assert_eq!(request.items.len(), 5);
    assert_eq!(request.items[1].command, Command::Scan);
}

#[test]
fn a_request_carries_at_most_fifty_items_and_the_rest_follow() {
    let mut hh = Handheld::new();
    let s = hh.open(1, T0);
    for n in 0..120 {
        hh.scan(s, &format!("E{n}"), T0);
    }
    let mut sent = Vec::new();
    while let Some(lease) = hh.lease(T0) {
        assert!(lease.items.len() <= MAX_ITEMS_PER_REQUEST);
        assert!(hh.drain.poll_transmit(T0).is_none(), "one lease at a time");
        sent.extend(lease.items.iter().map(|i| i.client_seq));
        hh.answer(&lease, T0, applied);
    }
    assert_eq!(sent, (1..=121).collect::<Vec<_>>());
    assert_eq!(hh.drain.pending_len(), 0);
    assert_eq!(hh.drain.poll_timeout(T0), None);
}

#[test]
fn a_blocked_item_holds_back_only_its_own_session() {
    let mut hh = Handheld::new();
    let a = hh.open(1, T0);
    let b = hh.open(2, T0.plus(stockhop::time::Millis(1)));
    hh.scan(a, "A1", T0);
    hh.scan(a, "A2", T0);
    hh.scan(b, "B1", T0);
    let lease = hh.lease(T0).unwrap();
    hh.answer(&lease, T0, |item| {
        if item.session_id.as_u128() == 1 && item.client_seq == 2 {
            json!({"key": item.key, "client_seq": 2, "status": 422, "code": "INVALID_ITEM"})
        } else if item.session_id.as_u128() == 1 && item.client_seq == 3 {
            json!({"key": item.key, "client_seq": 3, "status": 202, "outcome": "buffered"})
        } else {
            applied(item)
        }
    });
    assert_eq!(hh.state_of(a, 2), ItemState::Blocked);
    assert_eq!(hh.state_of(a, 3), ItemState::Queued);
    assert_eq!(hh.state_of(b, 2), ItemState::Done);
    // Session B keeps draining; A's third item waits behind its blocked second.
    hh.scan(b, "B2", T0);
    let lease = hh.lease(T0).unwrap();
    assert_eq!(seqs(&lease), [(2, 3)]);
    hh.answer(&lease, T0, applied);
    assert!(hh.lease(T0).is_none());
    let blockers = Blockers::from_blocked(&hh.store);
    let waiting = hh
        .store
        .iter()
        .find(|i| i.session_id.as_u128() == 1 && i.client_seq == 3)
        .unwrap();
    assert_eq!(
        blockers.reason(waiting).as_deref(),
        Some("waiting behind blocked item #2")
    );
    let blocked = hh
        .store
        .iter()
        .find(|i| i.state == ItemState::Blocked)
        .unwrap();
    assert_eq!(blocked.reason.as_deref(), Some("INVALID_ITEM (HTTP 422)"));
}

#[test]
fn discarding_a_blocked_item_queues_a_void_ahead_of_the_items_behind_it() {
    let mut hh = Handheld::new();
    let a = hh.open(1, T0);
    hh.scan(a, "A1", T0);
    hh.scan(a, "A2", T0);
    let lease = hh.lease(T0).unwrap();
    hh.answer(&lease, T0, |item| match item.client_seq {
        2 => status(409, "IDEMPOTENCY_KEY_REUSED")(item),
        3 => json!({"key": item.key, "client_seq": 3, "status": 202, "outcome": "buffered"}),
        _ => applied(item),
    });
    let mut blocked = hh.store.iter().find(|i| i.client_seq == 2).unwrap().clone();
    let void_key = hh.key();
    let void = discard(&mut blocked, &mut hh.sessions[a], void_key, T0).unwrap();
    assert_eq!(void.command, Command::Void);
    assert_eq!(void.client_seq, 4);
    assert_eq!(void.body, json!({"void_seq": 2}));
    hh.write(vec![blocked, void], true);
    let lease = hh.lease(T0).unwrap();
    assert_eq!(seqs(&lease), [(1, 4), (1, 3)]);
    hh.answer(&lease, T0, applied);
    assert_eq!(hh.state_of(a, 2), ItemState::Voided);
    assert_eq!(hh.state_of(a, 3), ItemState::Done);
    let mut done = hh.store[0].clone();
    assert!(discard(&mut done, &mut hh.sessions[a], void_key, T0).is_err());
}

#[test]
fn a_rejected_item_is_recorded_with_its_reason_and_waits_for_acknowledgement() {
    let mut hh = Handheld::new();
    let a = hh.open(1, T0);
    hh.scan(a, "A1", T0);
    let lease = hh.lease(T0).unwrap();
    hh.answer(&lease, T0, |item| match item.client_seq {
        2 => json!({"key": item.key, "client_seq": 2, "status": 200, "outcome": "rejected", "reason": "stale_state"}),
        _ => applied(item),
    });
    let mut rejected = hh.store[1].clone();
    assert_eq!(rejected.state, ItemState::Rejected);
    assert_eq!(rejected.reason.as_deref(), Some("stale_state"));
    assert!(hh.lease(T0).is_none(), "a rejected item is not sent again");
    let mut session = hh.sessions[0].clone();
    let rescan = IdempotencyKey::mint().unwrap();
    let ack = acknowledge(
        &mut rejected,
        &mut session,
        Some(rescan),
        IdempotencyKey::mint().unwrap(),
        T0,
    )
    .unwrap();
    assert!(rejected.acknowledged);
    assert_eq!(ack.command, Command::Acknowledge);
    assert_eq!(ack.client_seq, session.next_seq - 1);
    assert_eq!(
        ack.body,
        json!({"target_key": rejected.key, "rescan_key": rescan})
    );
    let mut done = hh.store[0].clone();
    assert!(acknowledge(
        &mut done,
        &mut session,
        None,
        IdempotencyKey::mint().unwrap(),
        T0
    )
    .is_err());
}

#[test]
fn failures_back_off_two_four_eight_sixteen_then_thirty_seconds_forever() {
    let mut hh = Handheld::new();
    let a = hh.open(1, T0);
    hh.scan(a, "A1", T0);
    let mut now = T0;
    let mut waits = Vec::new();
    for attempt in 0..7 {
        let lease = hh.lease(now).expect("due");
        let outcome = if attempt % 2 == 0 {
            TransportOutcome::Offline
        } else {
            TransportOutcome::from_text(503, r#"{"code":"OVERLOADED","message":"busy"}"#)
        };
        hh.record(&lease, now, &outcome);
        let next = hh.drain.poll_timeout(now).unwrap();
        assert!(
            hh.lease(UnixMs(next.0 - 1)).is_none(),
            "nothing before the wait ends"
        );
        waits.push(next.since(now) / 1000);
        now = next;
    }
    assert_eq!(waits, [2, 4, 8, 16, 30, 30, 30]);
    assert_eq!(hh.state_of(a, 2), ItemState::Queued);
    assert_eq!(hh.drain.backoff().failures, 7);
}

#[test]
fn a_new_capture_skips_the_wait() {
    let mut hh = Handheld::new();
    let a = hh.open(1, T0);
    let lease = hh.lease(T0).unwrap();
    hh.record(&lease, T0, &TransportOutcome::Timeout);
    let soon = T0.plus(stockhop::time::Millis(100));
    assert!(hh.lease(soon).is_none());
    hh.scan(a, "A1", soon);
    // Due at once, oldest first; a probe, since the last request timed out.
    let lease = hh.lease(soon).unwrap();
    assert_eq!(seqs(&lease), [(1, 1)]);
    hh.answer(&lease, soon, applied);
    let lease = hh.lease(soon).unwrap();
    assert_eq!(seqs(&lease), [(1, 2)]);
}

#[test]
fn while_the_site_does_not_answer_each_attempt_probes_with_one_item() {
    let mut hh = Handheld::new();
    let a = hh.open(1, T0);
    for n in 0..120 {
        hh.scan(a, &format!("A{n}"), T0);
    }
    let mut now = T0;
    let first = hh.lease(now).unwrap();
    assert_eq!(first.items.len(), MAX_ITEMS_PER_REQUEST);
    let unanswered = [
        TransportOutcome::Offline,
        TransportOutcome::Timeout,
        TransportOutcome::from_text(503, r#"{"code":"OVERLOADED","message":"busy"}"#),
        TransportOutcome::from_text(401, r#"{"code":"UNAUTHORIZED","message":"no"}"#),
    ];
    hh.record(&first, now, &unanswered[0]);
    for outcome in &unanswered {
        // A capture skips the wait, and the attempt it starts carries one item.
        now = now.plus(stockhop::time::Millis(50));
        hh.scan(a, "during the outage", now);
        let probe = hh.lease(now).unwrap();
        assert_eq!(seqs(&probe), [(1, 1)], "the oldest item probes");
        assert_eq!(hh.drain.batch_limit(), stockhop::queue::drain::PROBE_ITEMS);
        hh.record(&probe, now, outcome);
        assert_eq!(hh.state_of(a, 1), ItemState::Queued);
    }
    // The site answers the probe item by item: full batches again, in order.
    now = now.plus(stockhop::time::Millis(50));
    hh.scan(a, "back online", now);
    let probe = hh.lease(now).unwrap();
    assert_eq!(seqs(&probe), [(1, 1)]);
    hh.answer(&probe, now, applied);
    let mut sent = vec![1];
    while let Some(lease) = hh.lease(now) {
        assert!(lease.items.len() <= MAX_ITEMS_PER_REQUEST);
        sent.extend(lease.items.iter().map(|i| i.client_seq));
        hh.answer(&lease, now, applied);
    }
    let total = 1 + 120 + unanswered.len() as u64 + 1;
    assert_eq!(sent, (1..=total).collect::<Vec<_>>());
    assert_eq!(hh.drain.pending_len(), 0);
}

#[test]
fn an_answer_item_by_item_ends_probing_even_when_items_wait() {
    let mut hh = Handheld::new();
    let a = hh.open(1, T0);
    for n in 0..60 {
        hh.scan(a, &format!("A{n}"), T0);
    }
    let lease = hh.lease(T0).unwrap();
    hh.record(&lease, T0, &TransportOutcome::Offline);
    let soon = T0.plus(stockhop::time::Millis(10));
    hh.scan(a, "again", soon);
    let probe = hh.lease(soon).unwrap();
    // The server holds the probe behind an earlier item (202): it answered.
    hh.answer(&probe, soon, |item| {
        json!({"key": item.key, "client_seq": item.client_seq, "status": 202,
               "outcome": "buffered", "recorded_at": "2026-11-29T10:15:02.401Z"})
    });
    assert_eq!(hh.state_of(a, 1), ItemState::Queued);
    assert_eq!(hh.drain.batch_limit(), MAX_ITEMS_PER_REQUEST);
}

#[test]
fn unauthorized_and_unknown_answers_stop_the_run_and_keep_everything() {
    for (code, body) in [
        (401, r#"{"code":"UNAUTHORIZED","message":"no"}"#),
        (413, "too big"),
        (200, "not json"),
    ] {
        let mut hh = Handheld::new();
        let a = hh.open(1, T0);
        hh.scan(a, "A1", T0);
        let lease = hh.lease(T0).unwrap();
        hh.record(&lease, T0, &TransportOutcome::from_text(code, body));
        assert_eq!(hh.state_of(a, 1), ItemState::Queued, "{code}");
        assert_eq!(hh.state_of(a, 2), ItemState::Queued, "{code}");
        assert!(hh.lease(T0).is_none(), "{code}: the run stopped");
        assert_eq!(
            hh.drain.poll_timeout(T0),
            Some(T0.plus(stockhop::time::Millis(2000)))
        );
    }
}

#[test]
fn an_answer_that_does_not_match_the_items_sent_changes_nothing_but_the_schedule() {
    let mut hh = Handheld::new();
    let a = hh.open(1, T0);
    hh.scan(a, "A1", T0);
    let lease = hh.lease(T0).unwrap();
    let short = Lease {
        batch_id: lease.batch_id,
        items: lease.items[..1].to_vec(),
    };
    let recorded = hh
        .drain
        .handle_outcome(T0, lease.batch_id, &answer(&short, applied))
        .unwrap();
    assert!(recorded.stopped);
    assert_eq!(recorded.backoff.failures, 1);
    for item in recorded.items {
        hh.put(item);
    }
    assert_eq!(hh.state_of(a, 1), ItemState::Queued);
    assert_eq!(
        hh.store[0].reason.as_deref(),
        Some("answer does not match the items sent")
    );
}

#[test]
fn items_found_sending_after_a_restart_are_sent_again_with_the_same_keys() {
    let mut hh = Handheld::new();
    let a = hh.open(1, T0);
    hh.scan(a, "A1", T0);
    let lease = hh.lease(T0).unwrap();
    hh.restart();
    assert_eq!(hh.state_of(a, 1), ItemState::Sending);
    let again = hh.lease(T0).unwrap();
    let keys = |l: &Lease| l.items.iter().map(|i| i.key).collect::<Vec<_>>();
    assert_eq!(keys(&again), keys(&lease));
    assert!(hh
        .drain
        .handle_outcome(T0, again.batch_id + 1, &TransportOutcome::Offline)
        .is_err());
    hh.answer(&again, T0, applied);
    assert_eq!(hh.state_of(a, 2), ItemState::Done);
}

#[test]
fn a_lease_that_could_not_be_written_is_queued_again() {
    let mut hh = Handheld::new();
    hh.open(1, T0);
    let lease = hh.drain.poll_transmit(T0).unwrap();
    hh.drain.handle_lease_failed(lease.batch_id).unwrap();
    let again = hh.drain.poll_transmit(T0).unwrap();
    assert_eq!(again.items[0].attempts, 1);
}

#[test]
fn a_closed_session_refuses_captures_but_keeps_draining() {
    let mut hh = Handheld::new();
    let a = hh.open(1, T0);
    hh.scan(a, "A1", T0);
    let key = hh.key();
    let close = hh.sessions[a].close(key, T0).unwrap();
    assert_eq!(
        (close.command, close.client_seq),
        (Command::CloseSession, 3)
    );
    hh.write(vec![close], true);
    let key = hh.key();
    let refused = hh.sessions[a].capture(
        Capture {
            command: Command::Scan,
            body: json!({}),
        },
        key,
        T0,
    );
    assert_eq!(
        refused,
        Err(CaptureError::SessionClosed(Uuid::from_u128(1)))
    );
    let reserved = hh.sessions[a].capture(
        Capture {
            command: Command::Void,
            body: json!({}),
        },
        key,
        T0,
    );
    assert!(matches!(
        reserved,
        Err(CaptureError::ReservedCommand("void"))
    ));
    let lease = hh.lease(T0).unwrap();
    assert_eq!(seqs(&lease), [(1, 1), (1, 2), (1, 3)]);
}

#[test]
fn backoff_survives_a_restart() {
    let mut hh = Handheld::new();
    hh.open(1, T0);
    let lease = hh.lease(T0).unwrap();
    hh.record(&lease, T0, &TransportOutcome::Offline);
    let persisted: Backoff =
        serde_json::from_str(&serde_json::to_string(&hh.drain.backoff()).unwrap()).unwrap();
    hh.drain = Drain::restore(&hh.sessions, hh.store.clone(), persisted);
    assert!(hh.lease(T0.plus(stockhop::time::Millis(1999))).is_none());
    assert!(hh.lease(T0.plus(stockhop::time::Millis(2000))).is_some());
}

#[test]
fn group_commit_takes_what_waited_in_arrival_order_up_to_the_cap() {
    let mut group = Group::default();
    assert_eq!(group.take(), None);
    group.push(0);
    assert_eq!(group.take(), Some(vec![0]), "a lone capture goes at once");
    for n in 0..600 {
        group.push(n);
    }
    let first = group.take().unwrap();
    assert_eq!(first.len(), GROUP_COMMIT_MAX_ITEMS);
    assert_eq!(first[0], 0);
    let second = group.take().unwrap();
    assert_eq!(second[0], 256);
    assert_eq!(group.len(), 600 - 512);
    assert_eq!(group.take().unwrap().len(), 88);
    assert!(group.is_empty());
}
