//! The simulated world: handhelds, operators, a network and the ledger,
//! driven by one event queue in simulated time and one seeded random
//! source. Nothing here reads a wall clock or the OS's randomness, so a
//! seed replays exactly.
//!
//! Faults, all drawn from the seed: requests lost before the ledger,
//! responses lost after the ledger committed, requests duplicated and
//! delayed, partitions of minutes (fetch fails at once) and of silence
//! (requests time out), worker kills that keep only part of the relaxed
//! writes, ledger restarts, device clocks off by minutes. Operators open,
//! scan, undo (in and out of the 120 s window), close sessions with items
//! still queued, discard blocked items and acknowledge rejected ones.
//! Fixed terminals push what they read to the terminal listener
//! (`terminal.rs`), whose forwarder drains its queue into the same ledger:
//! pushes and their acks lost, terminal clocks off by minutes, the listener
//! killed or dying at a commit (it keeps only what its queue durably
//! holds), batches to the ledger lost, duplicated and answered after a
//! commit whose answer never comes back, and records the ledger refuses
//! for good (a remote ledger stricter than the listener), dead-lettered.
//!
//! After the last operator action the faults stop and the world runs on
//! until every queue is idle (or a deadline says it never will); then the
//! invariants (`check.rs`) are checked.
//!
//! This file is the world's loop: its state, the event queue and what each
//! event sets going. The parts it drives, each an `impl World` of its own:
//! [`faults`] (the seed's odds, and every kill, crash and restart),
//! [`network`] (what the network does to a handheld's request and its
//! answer), [`operator`] (the people at the handhelds, and the stock they
//! handle) and [`terminals`] (fixed terminals, the listener and its
//! forwarder).

mod faults;
mod network;
mod operator;
mod retire;
mod terminals;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::path::Path;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use stockhop::key::IdempotencyKey;
use stockhop::time::UnixMs;
use stockhop_site::listener::queue::NewRecord;
use stockhop_site::net::delivery::DeliveryError;
use stockhop_site::terminal_wire::{TerminalBatch, TerminalBatchResponse};

use crate::check::{self, Answer, TerminalAnswer, Violation};
use crate::device::Device;
use crate::ledger::Ledger;
use crate::terminal::{Listener, Terminal};

use faults::Shape;
use network::Delivered;

/// How long the world runs on after the last operator action, at most,
/// for every queue to drain: the backoff tops out at 30 s, so an hour is
/// well over a hundred attempts.
const HEAL_DEADLINE_MS: i64 = 60 * 60 * 1000;
/// How often, after the heal, a person looks at a device's queue screen.
const PERSON_EVERY_MS: i64 = 30_000;
/// The ledger's SQLite file in a seed's directory.
pub const LEDGER_FILE: &str = "ledger.sqlite";
/// The terminal listener's SQLite file (a listener on its own machine).
pub const LISTENER_FILE: &str = "listener.sqlite";
/// Shift start: 2026-11-30T08:00:00Z.
const START: UnixMs = UnixMs(1_796_025_600_000);

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// An operator does something on device `d`.
    Operator(usize),
    /// Device `d`'s worker wakes for its backoff (generation).
    Wake(usize, u64),
    /// The worker of device `d` starts again after a kill.
    WorkerStart(usize),
    /// The worker of device `d` is killed.
    Kill(usize),
    /// A request reaches the ledger.
    Arrive {
        device: usize,
        generation: u64,
        request_id: u64,
        /// Whether the device will see the answer.
        answer_lost: bool,
        /// A duplicate the network made: its answer reaches nobody.
        duplicate: bool,
    },
    /// The transport's outcome reaches the worker.
    Outcome {
        device: usize,
        generation: u64,
        request_id: u64,
        outcome: Delivered,
    },
    LedgerBack,
    PartitionOver,
    /// After the heal: a person at device `d` decides about everything
    /// that waits for one (the queue screen's discard and acknowledge).
    Person(usize),
    /// Device `d` breaks for good ([`retire`]).
    Retire(usize),
    /// Device `d`'s rescue file is imported at the site.
    Rescue(usize),
    /// Terminal `t` reads a record.
    TerminalRead(usize),
    /// Terminal `t` gave up waiting for push `id`'s ack; it pushes again.
    TerminalRetry(usize, u64),
    /// Push `id` reaches the listener.
    PushArrive {
        push_id: u64,
        answer_lost: bool,
    },
    /// The listener's ack of push `id` reaches its terminal.
    PushAcked(usize, u64),
    /// The forwarder of listener generation `g` takes its next step.
    ForwarderStep(u64),
    /// A forwarded batch reaches the ledger.
    ForwardArrive {
        generation: u64,
        forward_id: u64,
        answer_lost: bool,
        duplicate: bool,
    },
    /// What became of a forwarded batch reaches the forwarder.
    ForwardOutcome {
        generation: u64,
        forward_id: u64,
    },
    ListenerBack,
}

/// What one seed's run found.
pub struct Run {
    pub violations: Vec<Violation>,
    pub trace: Vec<String>,
    pub stats: Stats,
}

#[derive(Debug, Default, Clone, Copy)]
pub struct Stats {
    /// Operator actions the seed's world takes (before any cap).
    pub operations: usize,
    pub captures: u64,
    pub requests: u64,
    /// Records terminals read.
    pub reads: u64,
    /// Batches the forwarder sent.
    pub forwards: u64,
}

pub struct World {
    rng: ChaCha8Rng,
    shape: Shape,
    now: UnixMs,
    seq: u64,
    events: BinaryHeap<Reverse<(UnixMs, u64, Event)>>,
    ledger: Ledger,
    ledger_up: bool,
    partitioned: bool,
    devices: Vec<Device>,
    /// The request bodies in flight, by request id.
    requests: HashMap<u64, (usize, u64, Vec<u8>)>,
    next_request: u64,
    operations_left: usize,
    healed: bool,
    answers: Vec<Answer>,
    terminals: Vec<Terminal>,
    listener: Listener,
    /// Each terminal push in flight: its terminal and the records it carries.
    pushes: HashMap<u64, (usize, Vec<NewRecord>)>,
    next_push: u64,
    /// Every batch the forwarder sent, by id: what the network delivers
    /// (again, for a duplicate).
    batches: HashMap<u64, TerminalBatch>,
    /// The ledger's answer to each forwarded batch, until the forwarder hears it.
    forwards: HashMap<u64, Result<TerminalBatchResponse, DeliveryError>>,
    next_forward: u64,
    /// Every (terminal, event id) the listener's queue committed.
    accepted: Vec<(String, String)>,
    terminal_answers: Vec<TerminalAnswer>,
    retirements: retire::Retirements,
    trace: Vec<String>,
    stats: Stats,
}

impl World {
    /// A world for `seed`, its ledger in `dir`, stopping operator actions
    /// after `max_operations` (the shrinker's knob) or the seed's own count.
    pub fn new(seed: u64, dir: &Path, max_operations: Option<usize>) -> anyhow::Result<World> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let shape = Shape::draw(&mut rng);
        let mut ledger = Ledger::open(dir.join(LEDGER_FILE))?;
        operator::stock(&mut ledger)?;
        let listener = Listener::open(dir.join(LISTENER_FILE))?;
        let mut terminals = Vec::new();
        for t in 0..shape.terminals {
            let skew_ms = if rng.random_bool(0.6) {
                0
            } else {
                rng.random_range(-10 * 60_000..=10 * 60_000)
            };
            terminals.push(Terminal::new(format!("T-{t}"), skew_ms));
        }
        let mut devices = Vec::new();
        for d in 0..shape.devices {
            let device_id = format!("HH-{d}");
            let token = ledger.add_device(&device_id, START)?;
            let skew_ms = if rng.random_bool(0.5) {
                0
            } else {
                rng.random_range(-10 * 60_000..=10 * 60_000)
            };
            let mut device = Device::new(device_id, token, skew_ms, rng.random());
            device.start_worker(START);
            devices.push(device);
        }
        let shape_devices = shape.devices;
        let operations_left =
            max_operations.map_or(shape.operations, |max| max.min(shape.operations));
        let mut world = World {
            rng,
            shape,
            now: START,
            seq: 0,
            events: BinaryHeap::new(),
            ledger,
            ledger_up: true,
            partitioned: false,
            devices,
            requests: HashMap::new(),
            next_request: 0,
            operations_left,
            healed: false,
            answers: Vec::new(),
            terminals,
            listener,
            pushes: HashMap::new(),
            next_push: 0,
            batches: HashMap::new(),
            forwards: HashMap::new(),
            next_forward: 0,
            accepted: Vec::new(),
            terminal_answers: Vec::new(),
            retirements: retire::Retirements::new(seed, shape_devices),
            trace: Vec::new(),
            stats: Stats::default(),
        };
        world.stats.operations = world.shape.operations;
        world.note(format!("shape {:?}", world.shape));
        for d in 0..world.devices.len() {
            world.turn(d);
            let skew = world.devices[d].skew_ms;
            world.note(format!("HH-{d} clock skew {skew} ms"));
            let first = world.rng.random_range(0..5_000);
            world.schedule(first, Event::Operator(d));
        }
        for t in 0..world.terminals.len() {
            let skew = world.terminals[t].skew_ms;
            world.note(format!("T-{t} clock skew {skew} ms"));
            let first = world.rng.random_range(0..5_000);
            world.schedule(first, Event::TerminalRead(t));
        }
        Ok(world)
    }

    fn schedule(&mut self, after_ms: i64, event: Event) {
        self.seq += 1;
        self.events.push(Reverse((
            UnixMs(self.now.0 + after_ms.max(0)),
            self.seq,
            event,
        )));
    }

    fn note(&mut self, line: String) {
        let at = self.now.0 - START.0;
        self.trace
            .push(format!("{:>9.3}s {line}", at as f64 / 1000.0));
    }

    /// Runs the world to its end and checks the invariants.
    pub fn run(mut self) -> anyhow::Result<Run> {
        let mut heal_deadline = None;
        while let Some(Reverse((at, _, event))) = self.events.pop() {
            self.now = at;
            if heal_deadline.is_some_and(|deadline: UnixMs| at > deadline) {
                self.note("heal deadline passed".into());
                break;
            }
            self.handle(event)?;
            if self.operations_left == 0 && !self.healed {
                self.heal();
                heal_deadline = Some(UnixMs(self.now.0 + HEAL_DEADLINE_MS));
            }
            if self.healed && self.idle()? {
                break;
            }
        }
        let violations = self.check()?;
        Ok(Run {
            violations,
            trace: self.trace,
            stats: self.stats,
        })
    }

    /// The invariants, over what the handhelds, the listener and the
    /// ledger hold at the end and every answer the ledger gave.
    fn check(&self) -> anyhow::Result<Vec<Violation>> {
        let acknowledged: Vec<Vec<IdempotencyKey>> = self
            .devices
            .iter()
            .map(|device| device.acknowledged.borrow().clone())
            .collect();
        let rescued: Vec<bool> = (0..self.devices.len())
            .map(|d| self.retirements.is_retired(d))
            .collect();
        let mut violations = check::all(
            &self.devices,
            &acknowledged,
            &rescued,
            &self.ledger,
            &self.answers,
        )?;
        violations.extend(self.retirements.refused.iter().map(|detail| Violation {
            invariant: "rescued",
            detail: detail.clone(),
        }));
        violations.extend(check::terminals(
            &self.terminals,
            &self.accepted,
            &self.listener,
            &self.ledger,
            &self.terminal_answers,
        )?);
        Ok(violations)
    }

    /// The faults stop: the ledger is up, the network whole, every worker
    /// running and told to drain.
    fn heal(&mut self) {
        self.healed = true;
        self.note("heal: no more faults".into());
        if !self.ledger_up {
            self.restart_ledger();
        }
        self.partitioned = false;
        for d in 0..self.devices.len() {
            if self.retirements.is_retired(d) {
                continue;
            }
            if !self.devices[d].worker_running() {
                self.devices[d].start_worker(self.now);
            }
            self.devices[d].spawn(|queue| async move {
                let _ = queue.retry_now().await;
            });
            self.turn(d);
            self.schedule(PERSON_EVERY_MS, Event::Person(d));
        }
        if !self.listener.up {
            self.start_listener();
        }
        for t in 0..self.terminals.len() {
            self.push(t);
        }
        let generation = self.listener.generation;
        self.schedule(0, Event::ForwarderStep(generation));
    }

    fn idle(&mut self) -> anyhow::Result<bool> {
        let handhelds = self.devices.iter().enumerate().all(|(d, device)| {
            self.retirements.is_retired(d) || (device.in_flight.is_none() && device.pending() == 0)
        }) && self.retirements.all_rescued();
        let terminals = self
            .terminals
            .iter()
            .all(|t| t.unacked.is_empty() && t.pushing.is_none());
        Ok(handhelds
            && terminals
            && self.listener.in_flight.is_none()
            && (!self.listener.up || self.listener.pending()? == 0))
    }

    fn handle(&mut self, event: Event) -> anyhow::Result<()> {
        match event {
            Event::Operator(d) => {
                if self.operations_left > 0 {
                    self.operations_left -= 1;
                    if !self.retirements.is_retired(d) {
                        self.maybe_retire(d);
                        self.faults(d);
                        self.operate(d);
                    }
                    let next = self.rng.random_range(200..20_000);
                    self.schedule(next, Event::Operator(d));
                }
            }
            Event::Wake(d, generation) => {
                if self.devices[d].generation == generation {
                    self.devices[d].wake_at = None;
                    self.turn(d);
                }
            }
            Event::WorkerStart(d) if self.retirements.is_retired(d) => {}
            Event::WorkerStart(d) => self.worker_starts(d),
            Event::Retire(d) => self.retire(d),
            Event::Rescue(d) => self.rescue(d),
            Event::Kill(d) => self.kill_worker(d),
            Event::Arrive {
                device,
                generation,
                request_id,
                answer_lost,
                duplicate,
            } => self.arrive(device, generation, request_id, answer_lost, duplicate),
            Event::Outcome {
                device,
                generation,
                request_id,
                outcome,
            } => self.outcome(device, generation, request_id, outcome),
            Event::LedgerBack => {
                if !self.ledger_up {
                    self.restart_ledger();
                }
            }
            Event::PartitionOver => {
                self.partitioned = false;
                self.note("partition over".into());
            }
            Event::Person(d) if self.retirements.is_retired(d) => {}
            Event::Person(d) => {
                if !self.devices[d].worker_running() {
                    self.devices[d].start_worker(self.now);
                }
                self.decide(d);
                self.turn(d);
                self.schedule(PERSON_EVERY_MS, Event::Person(d));
            }
            Event::TerminalRead(t) => {
                if !self.healed {
                    self.terminal_reads(t);
                    let next = self.rng.random_range(2_000..40_000);
                    self.schedule(next, Event::TerminalRead(t));
                }
            }
            Event::TerminalRetry(t, push_id) => {
                self.terminals[t].failed(push_id);
                self.push(t);
            }
            Event::PushArrive {
                push_id,
                answer_lost,
            } => self.push_arrives(push_id, answer_lost)?,
            Event::PushAcked(t, push_id) => {
                self.terminals[t].acked(push_id);
                self.push(t);
            }
            Event::ForwarderStep(generation) => self.forwarder_step(generation)?,
            Event::ForwardArrive {
                generation,
                forward_id,
                answer_lost,
                duplicate,
            } => self.forward_arrives(generation, forward_id, answer_lost, duplicate),
            Event::ForwardOutcome {
                generation,
                forward_id,
            } => self.forward_outcome(generation, forward_id)?,
            Event::ListenerBack => {
                if !self.listener.up {
                    self.start_listener();
                }
            }
        }
        Ok(())
    }
}
