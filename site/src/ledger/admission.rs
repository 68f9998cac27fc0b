//! Admission control in front of the ledger's single writer
//! (docs/design.md §4.1): sync requests take turns at the database, live
//! ones first, backlog ones paced while operators scan.
//!
//! A request is **live** when its newest item was captured within
//! [`LIVE_WINDOW`] of the request's `sent_at` (both the device's clock, so
//! skew does not move a request between classes), else **backlog**: what
//! a handheld back from an outage drains. [`WRITER_SLOTS`] requests
//! hold turns at a time (the one committing and the next, already waiting
//! on the database); when one finishes its turn goes to the oldest live
//! request waiting, else to the oldest backlog one. While live requests
//! are arriving (one within [`PACE_WHILE_LIVE_WITHIN`]) the backlog holds
//! one turn at most, so the other is free for a live request, which waits
//! for one backlog turn at most; and a backlog turn that took `t` is
//! followed by a rest of `t × (1 − s) / s`, [`BACKLOG_SHARE`] `s`, during
//! which only live requests run: the backlog keeps that share of the
//! writer (and of the machine: parsing, answers). With no live traffic the
//! backlog runs back to back. Backlog requests are queued, not refused:
//! only past [`BACKLOG_WAITING_MAX`] waiting or after waiting
//! [`BACKLOG_WAIT_MAX`] is one answered 503 with Retry-After (and a live
//! one past [`LIVE_WAITING_MAX`]), since a refusal puts a handheld into its
//! backoff.
//!
//! The gate also remembers the device of each token it has seen checked,
//! so a known device's request goes to the writer once, in its turn (where
//! the token is checked again), rather than once more before the gate for
//! its token, outside the gate's order.
//!
//! [`Turns`] is the ordering, sans-IO; [`Gate`] wakes the waiting tasks
//! and keeps the time.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use stockhop::time::{Millis, UnixMs};
use tokio::sync::oneshot;

use super::devices::Device;
pub use crate::limits::{BACKLOG_WAITING_MAX, BACKLOG_WAIT_MAX, LIVE_WAITING_MAX};

/// A request whose newest item was captured this recently (before its
/// `sent_at`) is live: an operator is scanning now, a few retries of the
/// drain's backoff included.
pub const LIVE_WINDOW: Millis = Millis::from_secs(60);
/// The backlog's share of the writer's time while live requests arrive:
/// most of the ledger's rate for the backlog, with a rest after each of
/// its turns in which live scans find the writer free.
pub const BACKLOG_SHARE: f64 = 0.8;
/// Requests admitted to the writer at once: the one committing and the
/// next, already waiting on the database, so no scheduling hop is lost
/// between two turns; a live request waits for at most these.
pub const WRITER_SLOTS: usize = 2;
/// The backlog is paced while a live request arrived this recently: an
/// operator scans every few seconds.
pub const PACE_WHILE_LIVE_WITHIN: Duration = Duration::from_secs(10);

/// Tokens the gate remembers the device of, so a known device's request
/// reaches its turn without a trip to the writer for its token; past this
/// many (a site's devices, several times over) the memory starts again.
pub const KNOWN_TOKENS_MAX: usize = 4_096;

/// Which queue a request waits in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    Live,
    Backlog,
}

/// A request's class by its items' capture times and its `sent_at`.
pub fn classify(sent_at: UnixMs, captured: impl IntoIterator<Item = UnixMs>) -> Class {
    match captured.into_iter().max() {
        Some(newest) if sent_at.since(newest) > LIVE_WINDOW.0 as i64 => Class::Backlog,
        _ => Class::Live,
    }
}

/// The rest after a backlog turn that took `ran`, while live requests
/// arrive: the backlog keeps [`BACKLOG_SHARE`] of the writer.
pub fn rest_after(ran: Duration) -> Duration {
    ran.mul_f64((1.0 - BACKLOG_SHARE) / BACKLOG_SHARE)
}

/// A waiting request's place.
pub type Ticket = u64;

/// What [`Turns::arrive`] decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    /// The writer is free: this request runs now.
    Run(Ticket),
    /// Queued: it runs when [`Turns::finish`] or [`Turns::rested`] names it.
    Wait(Ticket),
    /// Too many waiting in its class: answer 503.
    Refused,
}

/// The turn order, sans-IO: at most `slots` requests at a time, live
/// first, and no backlog while the writer rests.
#[derive(Debug)]
pub struct Turns {
    slots: usize,
    /// Running requests, and whether each is a backlog one.
    running: Vec<(Ticket, bool)>,
    /// While live requests arrive: the backlog holds one turn at most, so
    /// a live request waits for one backlog turn at most.
    paced: bool,
    /// After a paced backlog turn: live requests only.
    resting: bool,
    live: VecDeque<Ticket>,
    backlog: VecDeque<Ticket>,
    next: Ticket,
}

impl Default for Turns {
    fn default() -> Turns {
        Turns::with_slots(WRITER_SLOTS)
    }
}

impl Turns {
    pub fn with_slots(slots: usize) -> Turns {
        Turns {
            slots: slots.max(1),
            running: Vec::new(),
            paced: false,
            resting: false,
            live: VecDeque::new(),
            backlog: VecDeque::new(),
            next: 0,
        }
    }

    /// Sets whether live requests are arriving: the backlog then holds
    /// one turn at most.
    pub fn set_paced(&mut self, paced: bool) {
        self.paced = paced;
    }

    /// Whether a backlog request may take a free turn.
    fn backlog_may_run(&self) -> bool {
        let backlog_running = self.running.iter().any(|(_, backlog)| *backlog);
        let held_back = self.resting || (self.paced && backlog_running);
        !held_back
    }

    pub fn arrive(&mut self, class: Class) -> Arrival {
        let ticket = self.next;
        self.next += 1;
        let free =
            self.running.len() < self.slots && (class == Class::Live || self.backlog_may_run());
        if free {
            self.running.push((ticket, class == Class::Backlog));
            return Arrival::Run(ticket);
        }
        match class {
            Class::Live if self.live.len() >= LIVE_WAITING_MAX => return Arrival::Refused,
            Class::Backlog if self.backlog.len() >= BACKLOG_WAITING_MAX => return Arrival::Refused,
            Class::Live => self.live.push_back(ticket),
            Class::Backlog => self.backlog.push_back(ticket),
        }
        Arrival::Wait(ticket)
    }

    /// Running request `done` is done: the next one to run, if any waits
    /// and may.
    pub fn finish(&mut self, done: Ticket) -> Option<Ticket> {
        self.running.retain(|(t, _)| *t != done);
        self.start_next()
    }

    /// The oldest live request waiting, else the oldest backlog one if the
    /// backlog may run, takes a free turn.
    fn start_next(&mut self) -> Option<Ticket> {
        if self.running.len() >= self.slots {
            return None;
        }
        let next = match self.live.pop_front() {
            Some(live) => (live, false),
            None if self.backlog_may_run() => (self.backlog.pop_front()?, true),
            None => return None,
        };
        self.running.push(next);
        Some(next.0)
    }

    /// Running backlog request `done` is done and the writer rests: the
    /// next live request to run, if any waits.
    pub fn finish_and_rest(&mut self, done: Ticket) -> Option<Ticket> {
        self.resting = true;
        self.finish(done)
    }

    /// The rest is over: the requests that run now in the free turns, if
    /// any wait.
    pub fn rested(&mut self) -> Vec<Ticket> {
        self.resting = false;
        std::iter::from_fn(|| self.start_next()).collect()
    }

    /// `ticket` stops waiting (its client went away, or it waited too
    /// long). Returns `true` when it had already been given a turn, which
    /// it must then pass on with [`Turns::finish`].
    pub fn leave(&mut self, ticket: Ticket) -> bool {
        if self.running.iter().any(|(t, _)| *t == ticket) {
            return true;
        }
        self.live.retain(|t| *t != ticket);
        self.backlog.retain(|t| *t != ticket);
        false
    }

    /// Requests waiting, live and backlog.
    pub fn waiting(&self) -> (usize, usize) {
        (self.live.len(), self.backlog.len())
    }
}

/// Why a request was not admitted: answer 503 with Retry-After.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error("more than {0} {1} sync requests waiting")]
    Full(usize, &'static str),
    #[error("waited {} s for the ledger", BACKLOG_WAIT_MAX.as_secs())]
    Waited,
}

#[derive(Default)]
struct Shared {
    turns: Turns,
    wakers: HashMap<Ticket, oneshot::Sender<()>>,
    /// When the last live request arrived.
    live_seen: Option<Instant>,
}

impl Shared {
    /// Paces the backlog while live requests arrive.
    fn pace(&mut self) -> bool {
        let live_arriving = self
            .live_seen
            .is_some_and(|seen| seen.elapsed() < PACE_WHILE_LIVE_WITHIN);
        self.turns.set_paced(live_arriving);
        live_arriving
    }

    /// Wakes `next`, or passes its turn on while its waiter is gone.
    fn wake(&mut self, mut next: Option<Ticket>) {
        while let Some(ticket) = next {
            if let Some(waker) = self.wakers.remove(&ticket) {
                if waker.send(()).is_ok() {
                    return;
                }
            }
            next = self.turns.finish(ticket);
        }
    }
}

/// The gate the sync handler passes before its transaction.
#[derive(Clone, Default)]
pub struct Gate {
    shared: Arc<Mutex<Shared>>,
    /// The device of each token checked before, by the token's SHA-256.
    /// Only a hint for what happens before the turn: the turn checks the
    /// token again, so a revoked one is refused there.
    known: Arc<Mutex<HashMap<String, Device>>>,
}

impl Gate {
    fn lock(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits for a turn at the writer; the turn lasts as long as the
    /// returned [`Turn`]. A backlog request gives up after
    /// [`BACKLOG_WAIT_MAX`].
    pub async fn admit(&self, class: Class) -> Result<Turn, Refused> {
        let turn = |ticket| Turn {
            gate: self.clone(),
            ticket,
            class,
            started: Instant::now(),
            runtime: tokio::runtime::Handle::current(),
        };
        let (ticket, woken) = {
            let mut shared = self.lock();
            if class == Class::Live {
                shared.live_seen = Some(Instant::now());
            }
            shared.pace();
            match shared.turns.arrive(class) {
                Arrival::Run(ticket) => return Ok(turn(ticket)),
                Arrival::Refused => {
                    return Err(match class {
                        Class::Live => Refused::Full(LIVE_WAITING_MAX, "live"),
                        Class::Backlog => Refused::Full(BACKLOG_WAITING_MAX, "backlog"),
                    })
                }
                Arrival::Wait(ticket) => {
                    let (waker, woken) = oneshot::channel();
                    shared.wakers.insert(ticket, waker);
                    (ticket, woken)
                }
            }
        };
        // If this future is dropped (the client went away) or gives up,
        // the ticket leaves the queue, or passes on a turn it was given.
        let mut waiting = Waiting {
            gate: self,
            ticket,
            done: false,
        };
        let woken = match class {
            Class::Live => woken.await.is_ok(),
            Class::Backlog => matches!(
                tokio::time::timeout(BACKLOG_WAIT_MAX, woken).await,
                Ok(Ok(()))
            ),
        };
        if !woken {
            return Err(Refused::Waited);
        }
        waiting.done = true;
        Ok(turn(ticket))
    }

    /// Requests waiting, live and backlog.
    pub fn waiting(&self) -> (usize, usize) {
        self.lock().turns.waiting()
    }

    fn known(&self) -> std::sync::MutexGuard<'_, HashMap<String, Device>> {
        self.known.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The device the token with SHA-256 `token_hash` was last checked to
    /// belong to.
    pub fn known_device(&self, token_hash: &str) -> Option<Device> {
        self.known().get(token_hash).cloned()
    }

    /// Remembers the device a token was checked to belong to, or forgets
    /// the token (`None`: it no longer belongs to a device).
    pub fn remember(&self, token_hash: String, device: Option<Device>) {
        let mut known = self.known();
        match device {
            Some(device) => {
                if known.len() >= KNOWN_TOKENS_MAX && !known.contains_key(&token_hash) {
                    known.clear();
                }
                known.insert(token_hash, device);
            }
            None => {
                known.remove(&token_hash);
            }
        }
    }
}

struct Waiting<'a> {
    gate: &'a Gate,
    ticket: Ticket,
    done: bool,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let mut shared = self.gate.lock();
        shared.wakers.remove(&self.ticket);
        if shared.turns.leave(self.ticket) {
            let next = shared.turns.finish(self.ticket);
            shared.wake(next);
        }
    }
}

/// A turn at the writer; dropping it gives the turn to the next request
/// (after a backlog turn while live requests arrive, to live ones only
/// until the rest is over).
pub struct Turn {
    gate: Gate,
    ticket: Ticket,
    class: Class,
    started: Instant,
    runtime: tokio::runtime::Handle,
}

impl Drop for Turn {
    fn drop(&mut self) {
        let mut shared = self.gate.lock();
        let live_arriving = shared.pace();
        if self.class == Class::Live || !live_arriving {
            let next = shared.turns.finish(self.ticket);
            shared.wake(next);
            return;
        }
        let next = shared.turns.finish_and_rest(self.ticket);
        shared.wake(next);
        let rest = rest_after(self.started.elapsed());
        let gate = self.gate.clone();
        self.runtime.spawn(async move {
            tokio::time::sleep(rest).await;
            let mut shared = gate.lock();
            shared.pace();
            for next in shared.turns.rested() {
                shared.wake(Some(next));
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SENT: UnixMs = UnixMs(1_800_000_000_000);

    #[test]
    fn a_request_is_live_when_its_newest_item_is_inside_the_window() {
        let ago = |ms: u64| UnixMs(SENT.0 - ms as i64);
        assert_eq!(classify(SENT, [ago(40 * 60_000), ago(1_000)]), Class::Live);
        assert_eq!(classify(SENT, [ago(LIVE_WINDOW.0)]), Class::Live);
        assert_eq!(
            classify(SENT, [ago(40 * 60_000), ago(LIVE_WINDOW.0 + 1)]),
            Class::Backlog
        );
        assert_eq!(classify(SENT, []), Class::Live, "nothing to wait for");
        assert_eq!(
            classify(SENT, [UnixMs(SENT.0 + 5_000)]),
            Class::Live,
            "a clock that stepped back"
        );
    }

    /// Finishes the running `ticket` and each one after it, `n` times:
    /// the order they ran in.
    fn run_out(turns: &mut Turns, mut ticket: Ticket, n: usize) -> Vec<Ticket> {
        let mut order = Vec::new();
        for _ in 0..n {
            let Some(next) = turns.finish(ticket) else {
                break;
            };
            order.push(next);
            ticket = next;
        }
        order
    }

    fn waits(arrival: Arrival) -> Ticket {
        match arrival {
            Arrival::Wait(ticket) => ticket,
            other => panic!("expected to wait, got {other:?}"),
        }
    }

    fn runs(arrival: Arrival) -> Ticket {
        match arrival {
            Arrival::Run(ticket) => ticket,
            other => panic!("expected to run, got {other:?}"),
        }
    }

    #[test]
    fn live_requests_run_before_backlog_ones_that_came_first() {
        let mut turns = Turns::with_slots(1);
        let first = runs(turns.arrive(Class::Backlog));
        let b1 = waits(turns.arrive(Class::Backlog));
        let b2 = waits(turns.arrive(Class::Backlog));
        let l1 = waits(turns.arrive(Class::Live));
        let l2 = waits(turns.arrive(Class::Live));
        assert_eq!(run_out(&mut turns, first, 5), [l1, l2, b1, b2]);
        assert_eq!(turns.waiting(), (0, 0));
    }

    #[test]
    fn two_slots_admit_the_next_request_while_one_commits() {
        let mut turns = Turns::default();
        let a = runs(turns.arrive(Class::Backlog));
        let b = runs(turns.arrive(Class::Backlog));
        let c = waits(turns.arrive(Class::Backlog));
        let live = waits(turns.arrive(Class::Live));
        assert_eq!(turns.finish(a), Some(live));
        assert_eq!(turns.finish(b), Some(c));
    }

    #[test]
    fn while_the_writer_rests_after_a_backlog_turn_only_live_requests_run() {
        let mut turns = Turns::with_slots(1);
        let first = runs(turns.arrive(Class::Backlog));
        let next_backlog = waits(turns.arrive(Class::Backlog));
        assert_eq!(turns.finish_and_rest(first), None, "no live request waits");
        waits(turns.arrive(Class::Backlog));
        let live = runs(turns.arrive(Class::Live));
        assert_eq!(
            turns.rested(),
            Vec::<Ticket>::new(),
            "the live request still runs"
        );
        assert_eq!(turns.finish(live), Some(next_backlog));
        let mut turns = Turns::with_slots(1);
        let first = runs(turns.arrive(Class::Backlog));
        let waiting = waits(turns.arrive(Class::Backlog));
        turns.finish_and_rest(first);
        assert_eq!(
            turns.rested(),
            [waiting],
            "the rest over, the backlog goes on"
        );
    }

    #[test]
    fn while_live_requests_arrive_the_backlog_holds_one_turn_and_the_other_stays_free_for_live_ones(
    ) {
        let mut turns = Turns::default();
        turns.set_paced(true);
        let backlog = runs(turns.arrive(Class::Backlog));
        let next_backlog = waits(turns.arrive(Class::Backlog));
        let live = runs(turns.arrive(Class::Live));
        assert_eq!(
            turns.finish(live),
            None,
            "a backlog turn runs: the next one waits"
        );
        assert_eq!(turns.finish(backlog), Some(next_backlog));
        turns.set_paced(false);
        runs(turns.arrive(Class::Backlog));
    }

    #[test]
    fn a_backlog_turn_rests_a_quarter_of_its_length_for_an_eighty_percent_share() {
        assert_eq!(BACKLOG_SHARE, 0.8);
        let rest = rest_after(Duration::from_millis(40));
        assert!((rest.as_secs_f64() - 0.010).abs() < 1e-9, "{rest:?}");
    }

    #[test]
    fn a_full_queue_refuses_its_class_only() {
        let mut turns = Turns::with_slots(1);
        turns.arrive(Class::Live);
        for _ in 0..BACKLOG_WAITING_MAX {
            waits(turns.arrive(Class::Backlog));
        }
        assert_eq!(turns.arrive(Class::Backlog), Arrival::Refused);
        waits(turns.arrive(Class::Live));
    }

    #[test]
    fn a_waiter_that_leaves_is_skipped_and_a_turn_it_was_given_passes_on() {
        let mut turns = Turns::with_slots(1);
        let first = runs(turns.arrive(Class::Live));
        let gone = waits(turns.arrive(Class::Backlog));
        let given = waits(turns.arrive(Class::Backlog));
        let last = waits(turns.arrive(Class::Backlog));
        assert!(!turns.leave(gone), "it was only waiting");
        assert_eq!(turns.finish(first), Some(given));
        assert!(turns.leave(given), "it held the turn: it must pass it on");
        assert_eq!(turns.finish(given), Some(last));
    }

    /// Every slot of the writer taken by backlog turns.
    async fn writer_busy(gate: &Gate) -> Vec<Turn> {
        let mut busy = Vec::new();
        for _ in 0..WRITER_SLOTS {
            busy.push(gate.admit(Class::Backlog).await.unwrap());
        }
        busy
    }

    #[tokio::test]
    async fn the_gate_wakes_live_waiters_first_and_skips_those_that_went_away() {
        let gate = Gate::default();
        let busy: Vec<Turn> = writer_busy(&gate).await;
        let order = Arc::new(Mutex::new(Vec::new()));
        let enter = |name: &'static str, class: Class| {
            let (gate, order) = (gate.clone(), Arc::clone(&order));
            tokio::spawn(async move {
                let _turn = gate.admit(class).await.unwrap();
                order.lock().unwrap().push(name);
            })
        };
        let backlog = enter("backlog", Class::Backlog);
        while gate.waiting() != (0, 1) {
            tokio::task::yield_now().await;
        }
        let gone = enter("gone", Class::Live);
        let live = enter("live", Class::Live);
        while gate.waiting() != (2, 1) {
            tokio::task::yield_now().await;
        }
        gone.abort();
        let _ = gone.await;
        assert_eq!(gate.waiting(), (1, 1));
        drop(busy);
        live.await.unwrap();
        backlog.await.unwrap();
        assert_eq!(*order.lock().unwrap(), ["live", "backlog"]);
        let _free = gate.admit(Class::Backlog).await.unwrap();
    }
}
