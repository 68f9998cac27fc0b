//! SQLite's one writer connection, taken in turn: handhelds first.
//!
//! Every piece of work on the site's SQLite file runs on one connection
//! (SQLite has one writer at a time), and a caller waits for its turn.
//! Callers are not equal: a handheld's sync or heartbeat, and the site's
//! view, are answered while a person waits, whereas the terminal
//! listener's writes (a portal's report of 700 reads, the forwarder's
//! batches into the ledger, the prune pass) come many a second, are
//! acknowledged or retried in their own time, and would otherwise take
//! most turns. So each caller names its [`Caller`], whose [`Lane`] orders
//! the turns: whenever the connection is free, a [`Lane::First`] caller
//! waiting takes it before any [`Lane::Background`] one. Nothing is
//! preempted: a handheld waits at most for the one piece of work already
//! running, and background work goes on whenever no handheld waits, so
//! it is delayed, never dropped.
//!
//! The writer counts, per caller, the turns taken, the time waited for
//! them, the time held (work, commit and `fsync`) and, of that, the time
//! spent committing ([`commit_timed`], [`note_commit`]), and its longest
//! wait and hold: what `GET /metrics` exposes as `stockhop_db_writer_*`.

use std::cell::Cell;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Who takes the writer: the counts are kept by it, and its lane orders
/// the turns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Caller {
    /// `POST /v1/sync`: a handheld's items into the ledger.
    HandheldSync,
    /// `POST /v1/devices/{id}/heartbeat`.
    Heartbeat,
    /// Anything else a person waits on: the site's view, the admin and
    /// data APIs, commands.
    Other,
    /// The terminal listener writing what a terminal sent to its queue.
    ListenerWrite,
    /// The listener's forwarder: reading its queue, handing records to the
    /// ledger and settling them.
    ListenerForward,
    /// The listener's prune pass and its other upkeep.
    ListenerUpkeep,
    /// Starting SQLite's write-ahead log again when it has grown long
    /// ([`crate::store::checkpoint`]).
    Checkpoint,
}

impl Caller {
    pub const ALL: [Caller; 7] = [
        Caller::HandheldSync,
        Caller::Heartbeat,
        Caller::Other,
        Caller::ListenerWrite,
        Caller::ListenerForward,
        Caller::ListenerUpkeep,
        Caller::Checkpoint,
    ];

    pub fn lane(self) -> Lane {
        match self {
            Caller::HandheldSync | Caller::Heartbeat | Caller::Other => Lane::First,
            Caller::ListenerWrite
            | Caller::ListenerForward
            | Caller::ListenerUpkeep
            | Caller::Checkpoint => Lane::Background,
        }
    }

    /// The `caller` label in `GET /metrics`.
    pub fn name(self) -> &'static str {
        match self {
            Caller::HandheldSync => "handheld_sync",
            Caller::Heartbeat => "heartbeat",
            Caller::Other => "other",
            Caller::ListenerWrite => "listener_write",
            Caller::ListenerForward => "listener_forward",
            Caller::ListenerUpkeep => "listener_upkeep",
            Caller::Checkpoint => "checkpoint",
        }
    }

    fn index(self) -> usize {
        Caller::ALL.iter().position(|c| *c == self).unwrap_or(0)
    }
}

/// The order of turns: a free writer goes to a waiting `First` caller
/// before any `Background` one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lane {
    First,
    Background,
}

/// One caller's use of the writer since the process started.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Use {
    pub turns: u64,
    pub waited: Duration,
    pub held: Duration,
    /// Of `held`, the time spent in `COMMIT` (the log's write and its
    /// `fsync`).
    pub committing: Duration,
    /// The longest single wait and hold: what a tail is made of, where the
    /// sums give only the mean.
    pub longest_wait: Duration,
    pub longest_hold: Duration,
}

#[derive(Default)]
struct State {
    held: bool,
    /// Callers waiting now, by lane (`First`, `Background`).
    waiting: [usize; 2],
    uses: [Use; Caller::ALL.len()],
    /// The longest hold since [`Writer::take_longest_hold`].
    longest: Duration,
}

/// The turns at SQLite's one writer, in lane order.
#[derive(Default)]
pub struct Writer {
    state: Mutex<State>,
    first: Condvar,
    background: Condvar,
}

/// A turn at the writer; the next caller's turn comes when it drops.
pub struct Turn<'w> {
    writer: &'w Writer,
    caller: Caller,
    waited: Duration,
    began: Instant,
    committed_before: Duration,
}

impl Writer {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits for `caller`'s turn: while the writer is held, or, for a
    /// background caller, while any first-lane caller waits.
    pub fn take(&self, caller: Caller) -> Turn<'_> {
        let asked = Instant::now();
        let lane = caller.lane();
        let mut state = self.lock();
        let must_wait =
            |state: &State| state.held || (lane == Lane::Background && state.waiting[0] > 0);
        if must_wait(&state) {
            let slot = lane as usize;
            state.waiting[slot] += 1;
            let condvar = match lane {
                Lane::First => &self.first,
                Lane::Background => &self.background,
            };
            while must_wait(&state) {
                state = condvar.wait(state).unwrap_or_else(|p| p.into_inner());
            }
            state.waiting[slot] -= 1;
        }
        state.held = true;
        drop(state);
        Turn {
            writer: self,
            caller,
            waited: asked.elapsed(),
            began: Instant::now(),
            committed_before: COMMITTING.get(),
        }
    }

    /// Whether any caller waits for the writer now.
    pub fn wanted(&self) -> bool {
        let state = self.lock();
        state.waiting[0] + state.waiting[1] > 0
    }

    /// Each caller's use so far, in [`Caller::ALL`]'s order.
    pub fn uses(&self) -> Vec<(Caller, Use)> {
        let state = self.lock();
        Caller::ALL
            .iter()
            .map(|caller| (*caller, state.uses[caller.index()]))
            .collect()
    }

    /// The longest hold since the last call, which starts the count again.
    pub fn take_longest_hold(&self) -> Duration {
        std::mem::take(&mut self.lock().longest)
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        let held = self.began.elapsed();
        let committing = COMMITTING.get().saturating_sub(self.committed_before);
        let mut state = self.writer.lock();
        state.held = false;
        state.longest = state.longest.max(held);
        let used = &mut state.uses[self.caller.index()];
        used.turns += 1;
        used.waited += self.waited;
        used.held += held;
        used.committing += committing;
        used.longest_wait = used.longest_wait.max(self.waited);
        used.longest_hold = used.longest_hold.max(held);
        // A first-lane caller waiting goes next; else a background one.
        if state.waiting[0] > 0 {
            self.writer.first.notify_one();
        } else if state.waiting[1] > 0 {
            self.writer.background.notify_one();
        }
    }
}

thread_local! {
    /// Time this thread has spent in `COMMIT`, for the turn it holds.
    static COMMITTING: Cell<Duration> = const { Cell::new(Duration::ZERO) };
}

/// Counts `took` as time spent committing on this thread (in the turn it
/// holds at the writer, if any).
pub fn note_commit(took: Duration) {
    COMMITTING.set(COMMITTING.get() + took);
}

/// Commits `tx`, counting the time it takes ([`note_commit`]).
pub fn commit_timed(tx: rusqlite::Transaction<'_>) -> rusqlite::Result<()> {
    let started = Instant::now();
    let committed = tx.commit();
    note_commit(started.elapsed());
    committed
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::sync::Arc;

    /// Waits until `n` callers of `lane` wait for the writer.
    fn until_waiting(writer: &Writer, lane: Lane, n: usize) {
        while writer.lock().waiting[lane as usize] < n {
            std::thread::yield_now();
        }
    }

    #[test]
    fn a_handheld_is_served_before_a_queue_of_listener_writes_that_waited_longer() {
        let writer = Arc::new(Writer::default());
        let (order, served) = mpsc::channel();
        let held = writer.take(Caller::ListenerWrite);
        let mut threads = Vec::new();
        let queued = 20;
        for n in 0..queued {
            let (waiter, order) = (Arc::clone(&writer), order.clone());
            threads.push(std::thread::spawn(move || {
                let _turn = waiter.take(Caller::ListenerForward);
                order.send(format!("listener {n}")).unwrap();
            }));
            until_waiting(&writer, Lane::Background, n + 1);
        }
        let (sync_writer, sync_order) = (Arc::clone(&writer), order.clone());
        threads.push(std::thread::spawn(move || {
            let _turn = sync_writer.take(Caller::HandheldSync);
            sync_order.send("sync".to_owned()).unwrap();
        }));
        until_waiting(&writer, Lane::First, 1);
        drop(held);
        for thread in threads {
            thread.join().unwrap();
        }
        drop(order);
        let order: Vec<String> = served.iter().collect();
        assert_eq!(order.len(), queued + 1);
        assert_eq!(order[0], "sync", "the sync went first: {order:?}");
        let uses = writer.uses();
        let turns = |caller| uses.iter().find(|(c, _)| *c == caller).unwrap().1.turns;
        assert_eq!(turns(Caller::ListenerForward), queued as u64, "none lost");
        assert_eq!(turns(Caller::HandheldSync), 1);
        assert_eq!(turns(Caller::ListenerWrite), 1);
        assert!(!writer.wanted());
    }

    #[test]
    fn background_work_goes_on_whenever_no_handheld_waits() {
        let writer = Arc::new(Writer::default());
        let held = writer.take(Caller::HandheldSync);
        let background = {
            let writer = Arc::clone(&writer);
            std::thread::spawn(move || drop(writer.take(Caller::ListenerUpkeep)))
        };
        until_waiting(&writer, Lane::Background, 1);
        assert!(writer.wanted());
        drop(held);
        background.join().unwrap();
        // Free and nobody waiting: any lane takes it at once.
        drop(writer.take(Caller::ListenerWrite));
        drop(writer.take(Caller::Other));
        let turns: u64 = writer.uses().iter().map(|(_, used)| used.turns).sum();
        assert_eq!(turns, 4);
    }

    #[test]
    fn commits_timed_on_a_turn_count_toward_its_caller() {
        let writer = Writer::default();
        let mut conn = rusqlite::Connection::open_in_memory().unwrap();
        {
            let _turn = writer.take(Caller::ListenerWrite);
            let tx = conn.transaction().unwrap();
            tx.execute_batch("CREATE TABLE t (x)").unwrap();
            commit_timed(tx).unwrap();
        }
        drop(writer.take(Caller::HandheldSync));
        let uses = writer.uses();
        let of = |caller| uses.iter().find(|(c, _)| *c == caller).unwrap().1;
        assert!(of(Caller::ListenerWrite).committing > Duration::ZERO);
        assert!(of(Caller::ListenerWrite).held >= of(Caller::ListenerWrite).committing);
        assert_eq!(of(Caller::HandheldSync).committing, Duration::ZERO);
    }
}
