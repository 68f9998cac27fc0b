//! A handheld inside the simulation: the real sans-IO session and drain
//! (`stockhop::queue`) around a model of the service worker's IndexedDB.
//!
//! The store keeps what a committed transaction holds, by durability:
//!
//! * **strict** writes (a capture, a close, a discard, an acknowledgement:
//!   what only the device knows) are durable when they complete, and so is
//!   every write committed before them;
//! * **relaxed** writes (the drain's lease and its outcomes, which a resend
//!   under the same keys recovers) complete at once but are durable only
//!   once a later strict write commits. A worker kill keeps a prefix of
//!   them, drawn from the seed: IndexedDB commits in order, so what
//!   survives is never a later write without the earlier ones.
//!
//! The runtime steps mirror the service worker's: a capture is written
//! strictly, then drains at once; the drain leases (relaxed), sends,
//! records the outcome (relaxed) and either goes on or waits for the
//! backoff. A killed worker loses its memory (the drain, the request in
//! flight) and restarts from what the store kept.

use std::collections::BTreeMap;

use rand::Rng;
use stockhop::backoff::Backoff;
use stockhop::key::IdempotencyKey;
use stockhop::queue::drain::{Drain, Lease};
use stockhop::queue::item::{Item, ItemState};
use stockhop::queue::outcome::TransportOutcome;
use stockhop::queue::session::Session;
use stockhop::time::UnixMs;
use uuid::Uuid;

/// What the store holds: items by key, sessions by id, the backoff.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub items: BTreeMap<IdempotencyKey, Item>,
    pub sessions: BTreeMap<Uuid, Session>,
    pub backoff: Backoff,
}

/// One relaxed write: items and, for an outcome, the backoff.
#[derive(Debug, Clone)]
struct Write {
    items: Vec<Item>,
    backoff: Option<Backoff>,
}

impl Snapshot {
    fn apply(&mut self, write: &Write) {
        for item in &write.items {
            self.items.insert(item.key, item.clone());
        }
        if let Some(backoff) = write.backoff {
            self.backoff = backoff;
        }
    }
}

/// The device's IndexedDB, as far as durability goes.
#[derive(Debug, Default)]
pub struct Store {
    durable: Snapshot,
    relaxed: Vec<Write>,
}

impl Store {
    /// What a live worker reads: everything committed, durable or not.
    pub fn visible(&self) -> Snapshot {
        let mut view = self.durable.clone();
        for write in &self.relaxed {
            view.apply(write);
        }
        view
    }

    /// A strict write: durable with everything before it.
    fn strict(&mut self, items: Vec<Item>, session: Option<Session>) {
        for write in std::mem::take(&mut self.relaxed) {
            self.durable.apply(&write);
        }
        self.durable.apply(&Write {
            items,
            backoff: None,
        });
        if let Some(session) = session {
            self.durable.sessions.insert(session.session_id, session);
        }
    }

    fn relaxed(&mut self, items: Vec<Item>, backoff: Option<Backoff>) {
        self.relaxed.push(Write { items, backoff });
    }

    /// A kill: the first `kept` relaxed writes survive, the rest are lost.
    fn crash(&mut self, kept: usize) -> usize {
        let writes = std::mem::take(&mut self.relaxed);
        let lost = writes.len().saturating_sub(kept);
        for write in writes.into_iter().take(kept) {
            self.durable.apply(&write);
        }
        lost
    }
}

/// A request the worker has sent and waits on.
#[derive(Debug, Clone)]
pub struct InFlight {
    pub batch_id: u64,
    pub request_id: u64,
}

/// One simulated handheld.
pub struct Device {
    pub device_id: String,
    pub token: String,
    /// Device clock minus the world's clock.
    pub skew_ms: i64,
    pub store: Store,
    /// The running worker's drain; `None` while the worker is down.
    pub drain: Option<Drain>,
    pub in_flight: Option<InFlight>,
    /// Bumped at every worker start: answers to an earlier worker's
    /// requests reach nobody.
    pub generation: u64,
    /// The session scans go into, if one is open.
    pub open_session: Option<Uuid>,
}

impl Device {
    pub fn new(device_id: String, token: String, skew_ms: i64) -> Device {
        Device {
            device_id,
            token,
            skew_ms,
            store: Store::default(),
            drain: None,
            in_flight: None,
            generation: 0,
            open_session: None,
        }
    }

    pub fn clock(&self, world_now: UnixMs) -> UnixMs {
        UnixMs(world_now.0 + self.skew_ms)
    }

    /// Starts the worker from what the store holds (the service worker's
    /// restore on every wake-up).
    pub fn start_worker(&mut self) {
        let view = self.store.visible();
        let pending = view
            .items
            .values()
            .filter(|item| item.state.is_pending())
            .cloned();
        self.drain = Some(Drain::restore(
            view.sessions.values(),
            pending,
            view.backoff,
        ));
        self.generation += 1;
        self.in_flight = None;
    }

    /// Kills the worker; returns how many relaxed writes were lost.
    pub fn kill_worker(&mut self, rng: &mut impl Rng) -> usize {
        let kept = rng.random_range(0..=self.store.relaxed.len());
        self.drain = None;
        self.in_flight = None;
        self.store.crash(kept)
    }

    pub fn worker_running(&self) -> bool {
        self.drain.is_some()
    }

    /// Writes captured items (and their session) strictly, then tells the
    /// drain, which skips its wait.
    pub fn captured(&mut self, items: Vec<Item>, session: Option<Session>) {
        self.store.strict(items.clone(), session.clone());
        if let Some(drain) = self.drain.as_mut() {
            drain.handle_captured(items);
        }
    }

    /// The next lease if one is due: written relaxed, ready to send.
    pub fn next_lease(&mut self, world_now: UnixMs) -> Option<Lease> {
        let now = self.clock(world_now);
        let lease = self.drain.as_mut()?.poll_transmit(now)?;
        self.store.relaxed(lease.items.clone(), None);
        Some(lease)
    }

    /// The transport's outcome for the request in flight. Returns whether
    /// the drain goes on at once (`false`: it waits for its backoff).
    pub fn outcome(&mut self, world_now: UnixMs, outcome: &TransportOutcome) -> bool {
        let now = self.clock(world_now);
        let Some(in_flight) = self.in_flight.take() else {
            return false;
        };
        let Some(drain) = self.drain.as_mut() else {
            return false;
        };
        let recorded = drain
            .handle_outcome(now, in_flight.batch_id, outcome)
            .expect("the outcome is for the lease in flight");
        self.store
            .relaxed(recorded.items.clone(), Some(recorded.backoff));
        !recorded.stopped
    }

    /// When the drain wants to be woken, in world time.
    pub fn wake_at(&self, world_now: UnixMs) -> Option<UnixMs> {
        let at = self.drain.as_ref()?.poll_timeout(self.clock(world_now))?;
        Some(UnixMs(at.0.saturating_sub(self.skew_ms)))
    }

    /// Items not yet done or decided, by the live view.
    pub fn pending(&self) -> usize {
        self.store
            .visible()
            .items
            .values()
            .filter(|item| item.state.is_pending())
            .count()
    }

    /// The open session, as the store holds it.
    pub fn session(&self, id: Uuid) -> Option<Session> {
        self.store.visible().sessions.get(&id).cloned()
    }

    /// Items waiting for a person in the live view.
    pub fn waiting_for_a_person(&self, state: ItemState) -> Vec<Item> {
        self.store
            .visible()
            .items
            .values()
            .filter(|item| item.state == state && !item.acknowledged)
            .cloned()
            .collect()
    }
}
