//! The drain as a sans-IO state machine (quinn-proto style).
//!
//! The runtime restores a [`Drain`] from what storage says, tells it about
//! new items with [`Drain::handle_stored`], asks [`Drain::poll_transmit`]
//! for the next lease (≤ 50 items, one while the site is not answering,
//! `client_seq` order within a session, oldest session first), persists
//! the lease, sends it, and hands the transport's outcome to
//! [`Drain::handle_outcome`], which returns the item records and the
//! backoff to persist. [`Drain::poll_timeout`] says when the runtime
//! should wake it next. The drain never reads a clock, storage or the
//! network itself.
//!
//! Architecture invariant: at most one lease is in flight, and an item is
//! in a lease only while it is pending (`queued`, or `sending` found after a
//! restart); a `done`, `rejected` or `voided` item is never leased again.

use std::collections::BTreeMap;

use uuid::Uuid;

use crate::backoff::Backoff;
use crate::classify::ResultKind;
use crate::time::UnixMs;
use crate::wire::{SyncRequest, MAX_ITEMS_PER_REQUEST};

use super::item::{Item, ItemState};
use super::outcome::{verdicts, TransportOutcome};
use super::session::Session;

/// Items in a request that follows one the site did not answer item by
/// item (offline, a timeout, a 5xx, a refused token): one, a probe. While
/// the site is unreachable every new capture still starts an attempt at
/// once (docs/design.md §3.5), and each attempt writes its lease and its
/// outcome; probing keeps that to one item each way instead of
/// [`MAX_ITEMS_PER_REQUEST`], so an operator scanning through an outage
/// never waits behind the drain's bookkeeping. The first answer the site
/// gives item by item returns the drain to full batches.
pub const PROBE_ITEMS: usize = 1;

/// Items of one request leased by the drain: they are `sending` until the
/// outcome is handled. Persist them before sending.
#[derive(Debug, Clone, PartialEq)]
pub struct Lease {
    pub batch_id: u64,
    pub items: Vec<Item>,
}

impl Lease {
    /// The request body for this lease, stamped with the device clock.
    pub fn request(&self, device_id: &str, sent_at: UnixMs) -> SyncRequest {
        SyncRequest {
            device_id: device_id.to_owned(),
            sent_at,
            items: self.items.iter().map(Item::to_wire).collect(),
        }
    }
}

/// What to persist after an outcome: every item of the lease in its new
/// state, and the backoff.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    pub items: Vec<Item>,
    pub backoff: Backoff,
    /// Whether the run stopped (deferred, unknown, retryable or buffered
    /// results); the next attempt waits for the backoff.
    pub stopped: bool,
}

/// An outcome the drain cannot place.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DrainError {
    #[error("no lease {0} is in flight")]
    UnknownLease(u64),
}

/// The drain's state: pending items per session and the backoff.
///
/// The queue is unbounded by design (docs/design.md §3.4): there is no cap on
/// pending items here, and nothing is evicted.
#[derive(Debug, Clone, Default)]
pub struct Drain {
    /// When each known session started (its opened_at, or its oldest
    /// item's queued_at): the oldest session goes first.
    sessions: BTreeMap<Uuid, UnixMs>,
    /// Sessions with pending items, each keyed by position (see
    /// [`Item::position`]).
    pending: BTreeMap<Uuid, BTreeMap<(u64, u64), Item>>,
    backoff: Backoff,
    in_flight: Option<Lease>,
    next_batch_id: u64,
    /// The last request went unanswered: send [`PROBE_ITEMS`] at a time.
    probing: bool,
}

impl Drain {
    /// Rebuilds the drain from storage. Items found `sending` were in a
    /// request whose outcome was never recorded: they go out again.
    pub fn restore<'a>(
        sessions: impl IntoIterator<Item = &'a Session>,
        items: impl IntoIterator<Item = Item>,
        backoff: Backoff,
    ) -> Drain {
        let mut drain = Drain {
            backoff,
            ..Drain::default()
        };
        for session in sessions {
            drain.note_session(session.session_id, session.opened_at);
        }
        for mut item in items {
            if item.state == ItemState::Sending {
                item.state = ItemState::Queued;
            }
            drain.upsert(item);
        }
        drain
    }

    /// Items were written (captured, voided, acknowledged): track them.
    pub fn handle_stored(&mut self, items: impl IntoIterator<Item = Item>) {
        for item in items {
            self.upsert(item);
        }
    }

    /// A new capture was written: it drains at once, skipping the wait.
    pub fn handle_captured(&mut self, items: impl IntoIterator<Item = Item>) {
        self.handle_stored(items);
        self.backoff.on_capture();
    }

    /// The operator asked to retry now.
    pub fn handle_retry_now(&mut self) {
        self.backoff.on_capture();
    }

    /// The next lease, if one is due at `now`. The returned items are
    /// `sending`; persist them before the request leaves.
    pub fn poll_transmit(&mut self, now: UnixMs) -> Option<Lease> {
        if self.in_flight.is_some() || !self.backoff.is_due(now) {
            return None;
        }
        let limit = self.batch_limit();
        let mut items = Vec::new();
        for session_id in self.session_order() {
            let Some(queue) = self.pending.get_mut(&session_id) else {
                continue;
            };
            for item in queue.values_mut() {
                if items.len() == limit || item.state != ItemState::Queued {
                    break;
                }
                item.set_state(ItemState::Sending, now);
                item.attempts = item.attempts.saturating_add(1);
                items.push(item.clone());
            }
            if items.len() == limit {
                break;
            }
        }
        if items.is_empty() {
            return None;
        }
        self.next_batch_id += 1;
        let lease = Lease {
            batch_id: self.next_batch_id,
            items,
        };
        self.in_flight = Some(lease.clone());
        Some(lease)
    }

    /// The lease could not be persisted, so it was never sent: its items
    /// are queued again.
    pub fn handle_lease_failed(&mut self, batch_id: u64) -> Result<(), DrainError> {
        let lease = self.take_lease(batch_id)?;
        for mut item in lease.items {
            item.state = ItemState::Queued;
            item.attempts = item.attempts.saturating_sub(1);
            self.upsert(item);
        }
        Ok(())
    }

    /// The transport's outcome for a lease: every item gets its verdict.
    pub fn handle_outcome(
        &mut self,
        now: UnixMs,
        batch_id: u64,
        outcome: &TransportOutcome,
    ) -> Result<Recorded, DrainError> {
        let lease = self.take_lease(batch_id)?;
        let verdicts = verdicts(&lease.items, outcome);
        let mut stopped = false;
        let mut answered = false;
        let mut items = Vec::with_capacity(lease.items.len());
        for (mut item, verdict) in lease.items.into_iter().zip(verdicts) {
            answered |= matches!(
                verdict.kind,
                ResultKind::Done
                    | ResultKind::Rejected
                    | ResultKind::Blocked
                    | ResultKind::Buffered
            );
            let state = match verdict.kind {
                ResultKind::Done => ItemState::Done,
                ResultKind::Rejected => ItemState::Rejected,
                ResultKind::Blocked => ItemState::Blocked,
                ResultKind::Buffered
                | ResultKind::Retryable
                | ResultKind::Deferred
                | ResultKind::Unknown => {
                    stopped = true;
                    ItemState::Queued
                }
            };
            item.set_state(state, now);
            item.reason = match verdict.kind {
                ResultKind::Buffered => {
                    Some("held by the server behind an earlier item".to_owned())
                }
                _ => verdict.reason,
            };
            if verdict.recorded_at.is_some() {
                item.recorded_at = verdict.recorded_at;
                item.replayed = verdict.replayed;
                item.hop_ids = verdict.hop_ids;
            }
            self.upsert(item.clone());
            items.push(item);
        }
        self.probing = !answered;
        if stopped {
            self.backoff.on_failure(now);
        } else {
            self.backoff.on_success();
        }
        Ok(Recorded {
            items,
            backoff: self.backoff,
            stopped,
        })
    }

    /// When the runtime should wake the drain: at `now` or later, or `None`
    /// when there is nothing to send (idle, or only blocked sessions) or a
    /// lease is in flight.
    pub fn poll_timeout(&self, now: UnixMs) -> Option<UnixMs> {
        if self.in_flight.is_some() || !self.has_sendable() {
            return None;
        }
        Some(self.backoff.next_attempt_at.map_or(now, |at| at.max(now)))
    }

    pub fn backoff(&self) -> Backoff {
        self.backoff
    }

    /// Pending items (queued, sending or blocked).
    pub fn pending_len(&self) -> usize {
        self.pending.values().map(BTreeMap::len).sum()
    }

    /// Items the next lease may carry: [`PROBE_ITEMS`] after a request
    /// the site did not answer, else [`MAX_ITEMS_PER_REQUEST`].
    pub fn batch_limit(&self) -> usize {
        if self.probing {
            PROBE_ITEMS
        } else {
            MAX_ITEMS_PER_REQUEST
        }
    }

    fn has_sendable(&self) -> bool {
        self.pending.values().any(|queue| {
            queue
                .values()
                .next()
                .is_some_and(|item| item.state == ItemState::Queued)
        })
    }

    /// Sessions with pending items, oldest first (then by id).
    fn session_order(&self) -> Vec<Uuid> {
        // A handful of sessions: each goes in at its place, which links no
        // general sort into the wasm module.
        let mut order: Vec<(UnixMs, Uuid)> = Vec::with_capacity(self.pending.len());
        for id in self.pending.keys() {
            let entry = (self.sessions.get(id).copied().unwrap_or_default(), *id);
            let at = order.partition_point(|earlier| *earlier < entry);
            order.insert(at, entry);
        }
        order.into_iter().map(|(_, id)| id).collect()
    }

    /// Records that session `id` started no later than `at`.
    fn note_session(&mut self, id: Uuid, at: UnixMs) {
        self.sessions
            .entry(id)
            .and_modify(|started| *started = (*started).min(at))
            .or_insert(at);
    }

    fn take_lease(&mut self, batch_id: u64) -> Result<Lease, DrainError> {
        match self.in_flight.take() {
            Some(lease) if lease.batch_id == batch_id => Ok(lease),
            other => {
                self.in_flight = other;
                Err(DrainError::UnknownLease(batch_id))
            }
        }
    }

    fn upsert(&mut self, item: Item) {
        let session_id = item.session_id;
        self.note_session(session_id, item.queued_at);
        let position = item.position();
        if item.state.is_pending() {
            self.pending
                .entry(session_id)
                .or_default()
                .insert(position, item);
        } else if let Some(queue) = self.pending.get_mut(&session_id) {
            queue.remove(&position);
            if queue.is_empty() {
                self.pending.remove(&session_id);
            }
        }
    }
}
