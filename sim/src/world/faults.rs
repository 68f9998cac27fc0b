//! The faults: the seed's odds for each of them ([`Shape`]), what is drawn
//! at each operator step, and every kill, crash and restart: a handheld's
//! worker, the ledger (restarted, or dying at a commit inside a request)
//! and the terminal listener.

use std::fmt::Display;

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use stockhop::time::UnixMs;

use crate::ledger::Ledger;

use super::{Event, World};

/// How long after an operator step a worker kill drawn at it may come: a
/// kill within the strict commit time loses the step's transaction.
const KILL_WITHIN_MS: i64 = 2 * crate::store::COMMIT_MS;

/// How one seed's world is shaped, drawn from the seed.
#[derive(Debug, Clone)]
pub(super) struct Shape {
    pub(super) devices: usize,
    pub(super) operations: usize,
    pub(super) drop_request: f64,
    pub(super) drop_response: f64,
    pub(super) duplicate: f64,
    kill_worker: f64,
    restart_ledger: f64,
    /// A request during which the ledger dies at one of its commits.
    crash_in_request: f64,
    partition: f64,
    pub(super) terminals: usize,
    /// The listener process killed, at an operator step.
    kill_listener: f64,
    /// A listener commit (a queue write, a settle) it dies at.
    crash_listener_commit: f64,
    /// A terminal record the ledger refuses for good.
    pub(super) refused_record: f64,
}

impl Shape {
    pub(super) fn draw(rng: &mut ChaCha8Rng) -> Shape {
        Shape {
            devices: rng.random_range(1..=4),
            operations: rng.random_range(20..=160),
            drop_request: rng.random_range(0.0..0.15),
            drop_response: rng.random_range(0.0..0.15),
            duplicate: rng.random_range(0.0..0.1),
            kill_worker: rng.random_range(0.0..0.08),
            restart_ledger: rng.random_range(0.0..0.03),
            crash_in_request: rng.random_range(0.0..0.05),
            partition: rng.random_range(0.0..0.03),
            terminals: rng.random_range(0..=3),
            kill_listener: rng.random_range(0.0..0.03),
            crash_listener_commit: rng.random_range(0.0..0.05),
            refused_record: rng.random_range(0.0..0.05),
        }
    }
}

impl World {
    /// Faults drawn at each operator step, before it.
    pub(super) fn faults(&mut self, d: usize) {
        if self.rng.random_bool(self.shape.kill_worker) && self.devices[d].worker_running() {
            // At the step or a moment after it: while the step's
            // transaction may still be committing.
            let at = self.rng.random_range(0..=KILL_WITHIN_MS);
            self.schedule(at, Event::Kill(d));
        }
        if self.ledger_up && self.rng.random_bool(self.shape.restart_ledger) {
            self.ledger_dies("ledger goes down");
        }
        if self.listener.up && self.rng.random_bool(self.shape.kill_listener) {
            self.listener_dies("killed");
        }
        if !self.partitioned && self.rng.random_bool(self.shape.partition) {
            self.partitioned = true;
            let minutes = self.rng.random_range(60_000..8 * 60_000);
            self.note(format!("partition for {minutes} ms"));
            self.schedule(minutes, Event::PartitionOver);
        }
    }

    /// Device `d`'s worker is killed (if it runs): it keeps only part of
    /// its relaxed writes, and starts again up to a minute later.
    pub(super) fn kill_worker(&mut self, d: usize) {
        if self.devices[d].worker_running() {
            let lost = self.devices[d].kill_worker(&mut self.rng);
            self.note(format!("HH-{d} worker killed ({lost} relaxed writes lost)"));
            let back = self.rng.random_range(1_000..60_000);
            self.schedule(back, Event::WorkerStart(d));
        }
    }

    pub(super) fn worker_starts(&mut self, d: usize) {
        if !self.devices[d].worker_running() {
            self.devices[d].start_worker(self.now);
            self.note(format!("HH-{d} worker starts"));
            self.turn(d);
        }
    }

    /// Runs one request on the ledger (`what` names it in the trace).
    /// While the faults last, at the shape's odds, the ledger dies at one
    /// of the request's first `commits` commits: that commit rolls back and
    /// no answer leaves the process, which is down until its restart
    /// (`None`). Every request the ledger takes goes through here.
    pub(super) fn at_ledger<R>(
        &mut self,
        what: impl Display,
        commits: u32,
        request: impl FnOnce(&mut Ledger, UnixMs) -> R,
    ) -> Option<R> {
        let crash = !self.healed && self.rng.random_bool(self.shape.crash_in_request);
        if crash {
            // A request of one commit has only that one to die at.
            let nth = if commits > 1 {
                self.rng.random_range(1..=commits)
            } else {
                1
            };
            self.ledger.crash_at_commit(nth);
        }
        let answer = request(&mut self.ledger, self.now);
        if crash {
            if self.ledger.crashed() {
                self.ledger_dies(format!("{what}: the ledger dies at a commit"));
                return None;
            }
            self.ledger.disarm();
        }
        Some(answer)
    }

    /// Whether the listener dies at the commit it is about to make (a
    /// queue write, a settle): while the faults last, at the shape's odds.
    pub(super) fn listener_crashes_at_commit(&mut self) -> bool {
        !self.healed && self.rng.random_bool(self.shape.crash_listener_commit)
    }

    /// The ledger's process is down (`why` says how) until its restart,
    /// up to 30 s later.
    fn ledger_dies(&mut self, why: impl Display) {
        self.ledger_up = false;
        let back = self.rng.random_range(1_000..30_000);
        self.note(format!("{why}, back in {back} ms"));
        self.schedule(back, Event::LedgerBack);
    }

    pub(super) fn restart_ledger(&mut self) {
        self.ledger.restart().expect("the ledger reopens its file");
        self.ledger_up = true;
        self.note("ledger back".into());
    }

    /// The listener's process is down (`why` says how) until its restart,
    /// up to 30 s later: it keeps what its queue durably holds.
    pub(super) fn listener_dies(&mut self, why: &str) {
        self.listener.kill();
        let back = self.rng.random_range(1_000..30_000);
        self.note(format!("listener {why}, back in {back} ms"));
        self.schedule(back, Event::ListenerBack);
    }

    pub(super) fn start_listener(&mut self) {
        self.listener
            .start(self.now)
            .expect("the listener reopens its file");
        self.note("listener back".into());
        let generation = self.listener.generation;
        self.schedule(0, Event::ForwarderStep(generation));
    }
}
