//! The drain under any interleaving of captures, answers and crashes: a
//! property test over random operation sequences. Whatever happens, it
//! keeps per-session order, never loses an acknowledged item, and never
//! sends an item after it is done; once the network heals, everything
//! drains. A failing case prints its operations and replays from its seed.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeMap;

use proptest::prelude::*;
use serde_json::json;
use stockhop::key::IdempotencyKey;
use stockhop::queue::{discard, Capture, Drain, Item, ItemState, Lease, Session, TransportOutcome};
use stockhop::time::{Millis, UnixMs};
use stockhop::wire::{Command, Mode, OpenSessionBody};
use uuid::Uuid;

/// A bound on the healing phase: every round either finishes items or
/// discards blocked ones, so a few rounds per 50 items is plenty.
const HEAL_ROUNDS_MAX: usize = 1_000;

#[derive(Debug, Clone, Copy)]
enum Answer {
    Applied,
    Rejected,
    Blocked,
    Buffered,
    InProgress,
}

#[derive(Debug, Clone)]
enum Op {
    Open,
    Capture(usize),
    Close(usize),
    Transmit { persist_fails: bool },
    Respond(Vec<Answer>),
    Offline,
    Http(u16),
    Crash,
    Advance(u64),
    Discard(usize),
}

fn answer() -> impl Strategy<Value = Answer> {
    prop_oneof![
        6 => Just(Answer::Applied),
        1 => Just(Answer::Rejected),
        1 => Just(Answer::Blocked),
        1 => Just(Answer::Buffered),
        1 => Just(Answer::InProgress),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => Just(Op::Open),
        8 => (0usize..8).prop_map(Op::Capture),
        1 => (0usize..8).prop_map(Op::Close),
        5 => prop::bool::weighted(0.1).prop_map(|persist_fails| Op::Transmit { persist_fails }),
        4 => prop::collection::vec(answer(), 0..60).prop_map(Op::Respond),
        1 => Just(Op::Offline),
        1 => prop_oneof![Just(401u16), Just(413), Just(500), Just(503), Just(400)].prop_map(Op::Http),
        2 => Just(Op::Crash),
        2 => (0u64..40_000).prop_map(Op::Advance),
        1 => (0usize..8).prop_map(Op::Discard),
    ]
}

struct World {
    now: UnixMs,
    next_key: u64,
    sessions: Vec<Session>,
    /// Storage: what survives a crash.
    store: BTreeMap<IdempotencyKey, Item>,
    drain: Drain,
    backoff_store: stockhop::backoff::Backoff,
    /// The request on the network, if any.
    in_flight: Option<Lease>,
    /// Items whose capture was acknowledged: (key, session, seq).
    acked: Vec<(IdempotencyKey, Uuid, u64)>,
}

impl World {
    fn new() -> World {
        World {
            now: UnixMs(1_795_940_000_000),
            next_key: 0,
            sessions: Vec::new(),
            store: BTreeMap::new(),
            drain: Drain::default(),
            backoff_store: Default::default(),
            in_flight: None,
            acked: Vec::new(),
        }
    }

    fn key(&mut self) -> IdempotencyKey {
        self.next_key += 1;
        let mut bytes = [0u8; 16];
        bytes[8..].copy_from_slice(&self.next_key.to_be_bytes());
        IdempotencyKey::from_random_bytes(bytes)
    }

    fn commit(&mut self, items: Vec<Item>) {
        for item in &items {
            self.store.insert(item.key, item.clone());
            self.acked
                .push((item.key, item.session_id, item.client_seq));
        }
        self.drain.handle_captured(items);
    }

    fn apply(&mut self, op: &Op) -> Result<(), TestCaseError> {
        self.now = self.now.plus(Millis(1));
        match op {
            Op::Open => {
                let id = Uuid::from_u128(self.sessions.len() as u128 + 1);
                let body = OpenSessionBody {
                    operator_id: "op".into(),
                    mode: Mode::CycleCount,
                    context: Default::default(),
                };
                let key = self.key();
                let (session, item) = Session::open(id, body, key, self.now);
                self.sessions.push(session);
                self.commit(vec![item]);
            }
            Op::Capture(n) | Op::Close(n) => {
                if self.sessions.is_empty() {
                    return Ok(());
                }
                let index = n % self.sessions.len();
                let key = self.key();
                let now = self.now;
                let session = &mut self.sessions[index];
                let item = match op {
                    Op::Capture(_) => session.capture(
                        Capture {
                            command: Command::Scan,
                            body: json!({"mode": "cycle_count", "epc": "E1"}),
                        },
                        key,
                        now,
                    ),
                    _ => session.close(key, now),
                };
                if let Ok(item) = item {
                    self.commit(vec![item]);
                }
            }
            Op::Transmit { persist_fails } => {
                let Some(lease) = self.drain.poll_transmit(self.now) else {
                    return Ok(());
                };
                self.check_lease(&lease)?;
                if *persist_fails {
                    self.drain.handle_lease_failed(lease.batch_id).unwrap();
                } else {
                    for item in &lease.items {
                        self.store.insert(item.key, item.clone());
                    }
                    self.in_flight = Some(lease);
                }
            }
            Op::Respond(answers) => {
                let Some(lease) = self.in_flight.take() else {
                    return Ok(());
                };
                let results: Vec<_> = lease
                    .items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| {
                        let (status, outcome, code) =
                            match answers.get(i).copied().unwrap_or(Answer::Applied) {
                                Answer::Applied => (200, Some("applied"), None),
                                Answer::Rejected => (200, Some("rejected"), None),
                                Answer::Blocked => (409, None, Some("SEQ_ALREADY_USED")),
                                Answer::Buffered => (202, Some("buffered"), None),
                                Answer::InProgress => (409, None, Some("OPERATION_IN_PROGRESS")),
                            };
                        json!({"key": item.key, "client_seq": item.client_seq, "status": status,
                               "outcome": outcome, "code": code, "reason": "stale_state"})
                    })
                    .collect();
                let body = json!({"server_time": "2026-11-29T10:15:02.480Z", "results": results})
                    .to_string();
                self.record(&lease, &TransportOutcome::from_text(200, &body));
            }
            Op::Offline => {
                if let Some(lease) = self.in_flight.take() {
                    self.record(&lease, &TransportOutcome::Offline);
                }
            }
            Op::Http(status) => {
                if let Some(lease) = self.in_flight.take() {
                    self.record(&lease, &TransportOutcome::from_text(*status, ""));
                }
            }
            Op::Crash => {
                self.in_flight = None;
                self.drain = Drain::restore(
                    &self.sessions,
                    self.store.values().cloned(),
                    self.backoff_store,
                );
            }
            Op::Advance(ms) => self.now = self.now.plus(Millis(*ms)),
            Op::Discard(n) => {
                let blocked: Vec<IdempotencyKey> = self
                    .store
                    .values()
                    .filter(|i| i.state == ItemState::Blocked)
                    .map(|i| i.key)
                    .collect();
                if blocked.is_empty() || self.in_flight.is_some() {
                    return Ok(());
                }
                let key = blocked[n % blocked.len()];
                self.discard(key);
            }
        }
        self.check_store()
    }

    fn discard(&mut self, key: IdempotencyKey) {
        let mut item = self.store[&key].clone();
        let void_key = self.key();
        let session = self
            .sessions
            .iter_mut()
            .find(|s| s.session_id == item.session_id)
            .unwrap();
        let void = discard(&mut item, session, void_key, self.now).unwrap();
        self.store.insert(item.key, item.clone());
        self.drain.handle_stored(vec![item]);
        self.commit(vec![void]);
    }

    fn record(&mut self, lease: &Lease, outcome: &TransportOutcome) {
        let recorded = self
            .drain
            .handle_outcome(self.now, lease.batch_id, outcome)
            .unwrap();
        for item in recorded.items {
            self.store.insert(item.key, item);
        }
        self.backoff_store = recorded.backoff;
    }

    /// Per-session order and never-after-done, for a lease about to go out.
    fn check_lease(&self, lease: &Lease) -> Result<(), TestCaseError> {
        prop_assert!(lease.items.len() <= 50);
        for (i, item) in lease.items.iter().enumerate() {
            let stored = &self.store[&item.key];
            prop_assert!(
                matches!(stored.state, ItemState::Queued | ItemState::Sending),
                "leased an item that is {:?}",
                stored.state
            );
            for earlier in self.store.values() {
                if earlier.session_id != item.session_id || earlier.position() >= item.position() {
                    continue;
                }
                let settled = matches!(
                    earlier.state,
                    ItemState::Done | ItemState::Rejected | ItemState::Voided
                );
                let ahead_in_lease = lease.items[..i].iter().any(|l| l.key == earlier.key);
                prop_assert!(
                    settled || ahead_in_lease,
                    "seq {} sent while seq {} is {:?} and not ahead of it",
                    item.client_seq,
                    earlier.client_seq,
                    earlier.state
                );
            }
        }
        Ok(())
    }

    /// Nothing acknowledged is lost, and seqs stay contiguous.
    fn check_store(&self) -> Result<(), TestCaseError> {
        for (key, session_id, seq) in &self.acked {
            let stored = self.store.get(key);
            prop_assert!(stored.is_some(), "acknowledged item {key} lost");
            let stored = stored.unwrap();
            prop_assert_eq!((stored.session_id, stored.client_seq), (*session_id, *seq));
        }
        for session in &self.sessions {
            let mut seqs: Vec<u64> = self
                .store
                .values()
                .filter(|i| i.session_id == session.session_id)
                .map(|i| i.client_seq)
                .collect();
            seqs.sort_unstable();
            prop_assert_eq!(seqs, (1..session.next_seq).collect::<Vec<_>>());
        }
        Ok(())
    }

    /// The network heals and the operator discards what is blocked: every
    /// item ends done, rejected or voided.
    fn heal(&mut self) -> Result<(), TestCaseError> {
        if let Some(lease) = self.in_flight.take() {
            self.record(&lease, &TransportOutcome::Offline);
        }
        for _ in 0..HEAL_ROUNDS_MAX {
            let blocked: Vec<_> = self
                .store
                .values()
                .filter(|i| i.state == ItemState::Blocked)
                .map(|i| i.key)
                .collect();
            for key in blocked {
                self.discard(key);
            }
            let Some(at) = self.drain.poll_timeout(self.now) else {
                break;
            };
            self.now = self.now.max(at);
            self.apply(&Op::Transmit {
                persist_fails: false,
            })?;
            self.apply(&Op::Respond(Vec::new()))?;
        }
        let unsettled: Vec<_> = self
            .store
            .values()
            .filter(|i| {
                !matches!(
                    i.state,
                    ItemState::Done | ItemState::Rejected | ItemState::Voided
                )
            })
            .map(|i| (i.client_seq, i.state))
            .collect();
        prop_assert!(unsettled.is_empty(), "left unsettled: {unsettled:?}");
        prop_assert_eq!(self.drain.pending_len(), 0);
        Ok(())
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn any_sequence_of_captures_answers_and_crashes_keeps_order_and_loses_nothing(
        ops in prop::collection::vec(op(), 1..200)
    ) {
        let mut world = World::new();
        for op in &ops {
            world.apply(op)?;
        }
        world.heal()?;
    }
}
