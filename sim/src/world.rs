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
//! invariants are checked.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::path::Path;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use stockhop::key::IdempotencyKey;
use stockhop::queue::item::ItemState;
use stockhop::queue::outcome::TransportOutcome;
use stockhop::queue::session::Capture;
use stockhop::time::UnixMs;
use stockhop::wire::{Command, ItemOutcome, Mode, OpenSessionBody, SyncResponse};
use stockhop_site::delivery::{DeliveryError, DELIVERY_TIMEOUT};
use stockhop_site::ident::IDENT_MAX_CHARS as MAX_FIELD_CHARS;
use stockhop_site::ledger::import::Kind;
use stockhop_site::listener::queue::{NewRecord, Write};
use stockhop_site::terminal_wire::{
    TerminalBatch, TerminalBatchResponse, TerminalEventKind, TerminalSource,
};
use uuid::Uuid;

use crate::check::{self, Answer, TerminalAnswer, Violation};
use crate::device::Device;
use crate::ledger::Ledger;
use crate::terminal::{Forward, Listener, Reading, Terminal};

/// The fetch timeout the worker's transport applies.
const REQUEST_TIMEOUT_MS: i64 = 10_000;
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
/// How long a terminal waits for the listener's ack before it counts the
/// push as failed, and waits again before the next push.
const TERMINAL_RETRY_MS: i64 = 10_000;
/// How long after an operator step a worker kill drawn at it may come: a
/// kill within the strict commit time loses the step's transaction.
const KILL_WITHIN_MS: i64 = 2 * crate::store::COMMIT_MS;
/// Most records one terminal push carries.
const TERMINAL_PUSH_MAX: usize = 20;

/// How one seed's world is shaped, drawn from the seed.
#[derive(Debug, Clone)]
struct Shape {
    devices: usize,
    operations: usize,
    drop_request: f64,
    drop_response: f64,
    duplicate: f64,
    kill_worker: f64,
    restart_ledger: f64,
    /// A request during which the ledger dies at one of its commits.
    crash_in_request: f64,
    partition: f64,
    terminals: usize,
    /// The listener process killed, at an operator step.
    kill_listener: f64,
    /// A listener commit (a queue write, a settle) it dies at.
    crash_listener_commit: f64,
    /// A terminal record the ledger refuses for good.
    refused_record: f64,
}

impl Shape {
    fn draw(rng: &mut ChaCha8Rng) -> Shape {
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

/// A transport outcome in a form the event queue can order.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Delivered {
    Offline,
    Timeout,
    Http { status: u16, body: String },
}

impl Delivered {
    fn outcome(&self) -> TransportOutcome {
        match self {
            Delivered::Offline => TransportOutcome::Offline,
            Delivered::Timeout => TransportOutcome::Timeout,
            Delivered::Http { status, body } => TransportOutcome::from_text(*status, body),
        }
    }
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
        stock(&mut ledger)?;
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
        let acknowledged: Vec<Vec<IdempotencyKey>> = self
            .devices
            .iter()
            .map(|device| device.acknowledged.borrow().clone())
            .collect();
        let mut violations = check::all(&self.devices, &acknowledged, &self.ledger, &self.answers)?;
        violations.extend(check::terminals(
            &self.terminals,
            &self.accepted,
            &self.listener,
            &self.ledger,
            &self.terminal_answers,
        )?);
        Ok(Run {
            violations,
            trace: self.trace,
            stats: self.stats,
        })
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
        let handhelds = self
            .devices
            .iter()
            .all(|device| device.in_flight.is_none() && device.pending() == 0);
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
                    self.faults(d);
                    self.operate(d);
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
            Event::WorkerStart(d) => {
                if !self.devices[d].worker_running() {
                    self.devices[d].start_worker(self.now);
                    self.note(format!("HH-{d} worker starts"));
                    self.turn(d);
                }
            }
            Event::Kill(d) => {
                if self.devices[d].worker_running() {
                    let lost = self.devices[d].kill_worker(&mut self.rng);
                    self.note(format!("HH-{d} worker killed ({lost} relaxed writes lost)"));
                    let back = self.rng.random_range(1_000..60_000);
                    self.schedule(back, Event::WorkerStart(d));
                }
            }
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
            } => {
                let current = &self.devices[device];
                let live = current.generation == generation
                    && current
                        .in_flight
                        .as_ref()
                        .is_some_and(|(id, _)| *id == request_id);
                if live {
                    self.note(format!(
                        "HH-{device} request {request_id}: {}",
                        describe(&outcome)
                    ));
                    if let Some((_, answer)) = self.devices[device].in_flight.take() {
                        let _ = answer.send(outcome.outcome());
                    }
                    self.turn(device);
                }
            }
            Event::LedgerBack => {
                if !self.ledger_up {
                    self.restart_ledger();
                }
            }
            Event::PartitionOver => {
                self.partitioned = false;
                self.note("partition over".into());
            }
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

    fn start_listener(&mut self) {
        self.listener
            .start(self.now)
            .expect("the listener reopens its file");
        self.note("listener back".into());
        let generation = self.listener.generation;
        self.schedule(0, Event::ForwarderStep(generation));
    }

    fn listener_dies(&mut self, why: &str) {
        self.listener.kill();
        let back = self.rng.random_range(1_000..30_000);
        self.note(format!("listener {why}, back in {back} ms"));
        self.schedule(back, Event::ListenerBack);
    }

    /// Terminal `t` reads a person, a tag or a code; now and then one the
    /// ledger will refuse (a subject past its limit).
    fn terminal_reads(&mut self, t: usize) {
        self.stats.reads += 1;
        let n = self.terminals[t].read.len();
        let roll: f64 = self.rng.random();
        let (kind, subject) = if roll < 0.4 {
            let person = self.rng.random_range(0..12u8);
            (TerminalEventKind::Attendance, format!("{person}"))
        } else if roll < 0.9 {
            // Some tags are units the site does not know.
            let tag = self.rng.random_range(0..UNITS + 4);
            (TerminalEventKind::TagRead, epc(tag))
        } else {
            let tag = self.rng.random_range(0..UNITS);
            (TerminalEventKind::CodeRead, format!("C-{tag}"))
        };
        let subject = if self.rng.random_bool(self.shape.refused_record) {
            "X".repeat(MAX_FIELD_CHARS + 1)
        } else {
            subject
        };
        let terminal = &self.terminals[t];
        let reading = Reading {
            event_id: format!("{}-{n}", terminal.serial),
            kind,
            occurred_at: UnixMs(self.now.0 + terminal.skew_ms),
            subject,
        };
        self.note(format!(
            "T-{t} reads {} {:?} {}",
            reading.event_id,
            kind,
            if reading.subject.len() > MAX_FIELD_CHARS {
                "(a subject the ledger refuses)"
            } else {
                &reading.subject
            }
        ));
        self.terminals[t].reads(reading);
        self.push(t);
    }

    /// Terminal `t` pushes what is unacknowledged, if nothing is in flight.
    fn push(&mut self, t: usize) {
        let terminal = &self.terminals[t];
        if terminal.pushing.is_some() || terminal.unacked.is_empty() {
            return;
        }
        let carried = terminal.unacked.len().min(TERMINAL_PUSH_MAX);
        let records = terminal.records(carried);
        self.next_push += 1;
        let push_id = self.next_push;
        self.terminals[t].pushing = Some((push_id, carried));
        self.pushes.insert(push_id, (t, records));
        let faults = !self.healed;
        if faults && (self.partitioned || self.rng.random_bool(self.shape.drop_request)) {
            self.note(format!("T-{t} push {push_id} ({carried} records) lost"));
            self.schedule(TERMINAL_RETRY_MS, Event::TerminalRetry(t, push_id));
            return;
        }
        let answer_lost = faults && self.rng.random_bool(self.shape.drop_response);
        let delay = self.rng.random_range(2..200);
        self.schedule(
            delay,
            Event::PushArrive {
                push_id,
                answer_lost,
            },
        );
        self.schedule(TERMINAL_RETRY_MS, Event::TerminalRetry(t, push_id));
    }

    /// A push reaches the listener: written durably, then acknowledged.
    fn push_arrives(&mut self, push_id: u64, answer_lost: bool) -> anyhow::Result<()> {
        let Some((t, records)) = self.pushes.remove(&push_id) else {
            return Ok(());
        };
        if !self.listener.up {
            return Ok(());
        }
        let serial = self.terminals[t].serial.clone();
        let keys: Vec<(String, String)> = records
            .iter()
            .map(|r| (serial.clone(), r.capture.event_id.clone()))
            .collect();
        let crash = !self.healed && self.rng.random_bool(self.shape.crash_listener_commit);
        let write = Write {
            records,
            raw: Vec::new(),
            seen: vec![(serial, TerminalSource::Framed)],
        };
        let rng = &mut self.rng;
        let written = self.listener.write(self.now, write, crash, &mut || {
            IdempotencyKey::from_random_bytes(rng.random())
        })?;
        if !written {
            self.listener_dies(&format!("dies at the commit of T-{t}'s push {push_id}"));
            return Ok(());
        }
        self.accepted.extend(keys);
        if self.listener.in_flight.is_none() {
            let generation = self.listener.generation;
            self.schedule(0, Event::ForwarderStep(generation));
        }
        if answer_lost {
            self.note(format!("T-{t} push {push_id} queued, ack lost"));
        } else {
            let delay = self.rng.random_range(2..200);
            self.schedule(delay, Event::PushAcked(t, push_id));
        }
        Ok(())
    }

    /// The forwarder's next batch, sent to the ledger over the network.
    fn forwarder_step(&mut self, generation: u64) -> anyhow::Result<()> {
        let listener = &self.listener;
        if !listener.up || listener.generation != generation || listener.in_flight.is_some() {
            return Ok(());
        }
        let batch = self.listener.next_batch(self.now)?;
        let (rows, heartbeats) = (batch.rows, batch.heartbeats);
        if rows.is_empty() && heartbeats.is_empty() {
            // An idle forwarder wakes when a set-aside record falls due.
            if let Some(at) = batch.next_set_aside_at {
                self.schedule(
                    at.0.saturating_sub(self.now.0).max(1),
                    Event::ForwarderStep(generation),
                );
            }
            return Ok(());
        }
        self.next_forward += 1;
        let forward_id = self.next_forward;
        self.stats.forwards += 1;
        let seqs: Vec<i64> = rows.iter().map(|r| r.seq).collect();
        self.note(format!(
            "forwarder sends batch {forward_id}: rows {seqs:?}, {} heartbeats",
            heartbeats.len()
        ));
        self.batches.insert(
            forward_id,
            TerminalBatch {
                records: rows.iter().map(|row| row.record.clone()).collect(),
                heartbeats: heartbeats.clone(),
            },
        );
        self.listener.in_flight = Some(Forward {
            id: forward_id,
            rows,
            heartbeats,
        });
        let timeout = i64::try_from(DELIVERY_TIMEOUT.as_millis()).unwrap_or(i64::MAX);
        let faults = !self.healed;
        if faults && self.partitioned {
            self.forwards.insert(
                forward_id,
                Err(DeliveryError::Unreachable("partitioned".into())),
            );
            let after = self.rng.random_range(1..50);
            self.schedule(
                after,
                Event::ForwardOutcome {
                    generation,
                    forward_id,
                },
            );
            return Ok(());
        }
        if faults && self.rng.random_bool(self.shape.drop_request) {
            self.forwards.insert(
                forward_id,
                Err(DeliveryError::Unreachable("no answer".into())),
            );
            self.schedule(
                timeout,
                Event::ForwardOutcome {
                    generation,
                    forward_id,
                },
            );
            return Ok(());
        }
        self.deliver(faults, |answer_lost, duplicate| Event::ForwardArrive {
            generation,
            forward_id,
            answer_lost,
            duplicate,
        });
        Ok(())
    }

    /// A forwarded batch reaches the ledger (the forwarder's copy of it:
    /// the batch stays the same however often the network delivers it).
    fn forward_arrives(
        &mut self,
        generation: u64,
        forward_id: u64,
        answer_lost: bool,
        duplicate: bool,
    ) {
        let timeout = i64::try_from(DELIVERY_TIMEOUT.as_millis()).unwrap_or(i64::MAX);
        let outcome = Event::ForwardOutcome {
            generation,
            forward_id,
        };
        let batch = self.batches.get(&forward_id).cloned();
        let Some(batch) = batch else {
            return;
        };
        if !self.ledger_up {
            if !duplicate {
                self.forwards.insert(
                    forward_id,
                    Err(DeliveryError::Unreachable("connection refused".into())),
                );
                self.schedule(1, outcome);
            }
            return;
        }
        let crash = !self.healed && self.rng.random_bool(self.shape.crash_in_request);
        if crash {
            self.ledger.crash_at_commit(1);
        }
        let result = self.ledger.terminal(&batch, self.now);
        if crash {
            if self.ledger.crashed() {
                self.ledger_up = false;
                let back = self.rng.random_range(1_000..30_000);
                self.note(format!(
                    "batch {forward_id}: the ledger dies at its commit, back in {back} ms"
                ));
                self.schedule(back, Event::LedgerBack);
                if !duplicate {
                    self.forwards.insert(
                        forward_id,
                        Err(DeliveryError::Unreachable("no answer".into())),
                    );
                    self.schedule(timeout, outcome);
                }
                return;
            }
            self.ledger.disarm();
        }
        if let Ok(response) = &result {
            self.terminal_answers
                .extend(response.results.iter().map(|result| TerminalAnswer {
                    forward_id,
                    result: result.clone(),
                }));
        }
        if duplicate {
            self.note(format!("batch {forward_id} arrives again (duplicate)"));
            return;
        }
        if answer_lost {
            self.note(format!("batch {forward_id} recorded, answer lost"));
            self.forwards.insert(
                forward_id,
                Err(DeliveryError::Unreachable("no answer".into())),
            );
            self.schedule(timeout, outcome);
        } else {
            self.forwards.insert(forward_id, result);
            let delay = self.rng.random_range(2..200);
            self.schedule(delay, outcome);
        }
    }

    /// The forwarder hears what became of its batch: the real drain
    /// decides what to settle and how long to wait.
    fn forward_outcome(&mut self, generation: u64, forward_id: u64) -> anyhow::Result<()> {
        let Some(result) = self.forwards.remove(&forward_id) else {
            return Ok(());
        };
        let listener = &mut self.listener;
        let current = listener.up
            && listener.generation == generation
            && listener
                .in_flight
                .as_ref()
                .is_some_and(|f| f.id == forward_id);
        if !current {
            return Ok(());
        }
        let forward = listener.in_flight.take().expect("checked above");
        let what = match &result {
            Ok(response) => format!(
                "statuses {:?}",
                response
                    .results
                    .iter()
                    .map(|r| r.status)
                    .collect::<Vec<_>>()
            ),
            Err(err) => err.to_string(),
        };
        let step = listener
            .drain
            .handle(&forward.rows, forward.heartbeats, result);
        let crash = !self.healed && self.rng.random_bool(self.shape.crash_listener_commit);
        let settled = self.listener.settle(self.now, &step, crash)?;
        self.note(format!(
            "batch {forward_id}: {what}; {} rows settled, wait {:?}",
            step.settle.len(),
            step.wait
        ));
        if !settled {
            self.listener_dies(&format!("dies at the settle of batch {forward_id}"));
            return Ok(());
        }
        let wait = step
            .wait
            .map_or(0, |w| i64::try_from(w.0).unwrap_or(i64::MAX));
        self.schedule(wait, Event::ForwarderStep(generation));
        Ok(())
    }

    fn restart_ledger(&mut self) {
        self.ledger.restart().expect("the ledger reopens its file");
        self.ledger_up = true;
        self.note("ledger back".into());
    }

    /// Faults drawn at each operator step, before it.
    fn faults(&mut self, d: usize) {
        if self.rng.random_bool(self.shape.kill_worker) && self.devices[d].worker_running() {
            // At the step or a moment after it: while the step's
            // transaction may still be committing.
            let at = self.rng.random_range(0..=KILL_WITHIN_MS);
            self.schedule(at, Event::Kill(d));
        }
        if self.ledger_up && self.rng.random_bool(self.shape.restart_ledger) {
            self.ledger_up = false;
            let back = self.rng.random_range(1_000..30_000);
            self.note(format!("ledger down for {back} ms"));
            self.schedule(back, Event::LedgerBack);
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

    /// One operator action on device `d` (the page's message wakes a
    /// stopped worker first, as it does in the browser), through the
    /// worker's queue as the page's messages go.
    fn operate(&mut self, d: usize) {
        if !self.devices[d].worker_running() {
            self.devices[d].start_worker(self.now);
            self.note(format!("HH-{d} worker woken by the page"));
        }
        let session = self.devices[d]
            .open_session
            .and_then(|id| self.devices[d].session(id))
            .filter(|s| !s.closed);
        let Some(session) = session else {
            let session_id = Uuid::from_bytes(self.rng.random());
            let body = OpenSessionBody {
                operator_id: format!("op-{d}"),
                mode: Mode::PutAway,
                context: Default::default(),
            };
            self.note(format!("HH-{d} opens session {session_id}"));
            self.devices[d].open_session = Some(session_id);
            self.stats.captures += 1;
            self.devices[d]
                .kept(move |queue| async move { queue.open_session(Some(session_id), body).await });
            self.turn(d);
            return;
        };
        let session_id = session.session_id;
        let roll: f64 = self.rng.random();
        if roll < 0.06 {
            self.note(format!(
                "HH-{d} closes session {session_id} with {} pending",
                self.devices[d].pending()
            ));
            self.stats.captures += 1;
            self.devices[d].kept(move |queue| async move { queue.close_session(session_id).await });
        } else if roll < 0.14 {
            self.undo(d, session_id);
        } else if roll < 0.20 {
            self.decide(d);
        } else {
            let epc = epc(self.rng.random_range(0..UNITS));
            let bin = bin(self.rng.random_range(0..BINS));
            let mut body = serde_json::json!({"mode": "put_away", "epc": epc, "bin": bin});
            if self.rng.random_bool(0.2) {
                body["unit_version"] = serde_json::json!(self.rng.random_range(0..4u64));
            }
            self.note(format!("HH-{d} scans {epc} → {bin}"));
            let capture = Capture {
                command: Command::Scan,
                body,
            };
            self.stats.captures += 1;
            self.devices[d]
                .kept(move |queue| async move { queue.capture(session_id, capture).await });
        }
        self.turn(d);
    }

    /// Undo of a recent scan of the open session: sometimes within the
    /// 120 s window, sometimes after it (the ledger decides).
    fn undo(&mut self, d: usize, session_id: Uuid) {
        let scans: Vec<_> = self.devices[d]
            .session_items(session_id)
            .into_iter()
            .filter(|item| item.command == Command::Scan)
            .collect();
        if scans.is_empty() {
            return;
        }
        let target = &scans[self.rng.random_range(0..scans.len())];
        let body = serde_json::json!({ "target_key": target.key.to_string() });
        self.note(format!("HH-{d} undoes #{}", target.client_seq));
        let capture = Capture {
            command: Command::Undo,
            body,
        };
        self.stats.captures += 1;
        self.devices[d].kept(move |queue| async move { queue.capture(session_id, capture).await });
    }

    /// A person's decisions: discard every blocked item and acknowledge
    /// every rejected one, through the queue screen.
    fn decide(&mut self, d: usize) {
        for item in self.devices[d].waiting_for_a_person(ItemState::Blocked) {
            let Some(id) = item.id else { continue };
            self.note(format!(
                "HH-{d} discards blocked #{} ({:?})",
                item.client_seq, item.reason
            ));
            self.devices[d]
                .kept(move |queue| async move { queue.discard(id).await.map(|(_, void)| void) });
        }
        for item in self.devices[d].waiting_for_a_person(ItemState::Rejected) {
            let Some(id) = item.id else { continue };
            self.note(format!(
                "HH-{d} acknowledges rejected #{} ({:?})",
                item.client_seq, item.reason
            ));
            self.devices[d].kept(move |queue| async move {
                queue.acknowledge(id, None).await.map(|(_, ack)| ack)
            });
        }
    }

    /// One turn of device `d`'s worker: then the request it sent goes on
    /// the network, and a wake is set for its next timer.
    fn turn(&mut self, d: usize) {
        self.devices[d].run(self.now);
        for (request, answer) in self.devices[d].take_requests() {
            let device = &self.devices[d];
            let body = serde_json::to_vec(&request).expect("a request serialises");
            self.next_request += 1;
            let request_id = self.next_request;
            self.stats.requests += 1;
            let generation = device.generation;
            self.devices[d].in_flight = Some((request_id, answer));
            let seqs: Vec<u64> = request.items.iter().map(|i| i.client_seq).collect();
            self.note(format!("HH-{d} sends request {request_id}: seqs {seqs:?}"));
            self.requests.insert(request_id, (d, generation, body));
            self.transmit(d, generation, request_id);
        }
        if let Some(at) = self.devices[d].next_timer() {
            if self.devices[d].wake_at.is_none_or(|w| at < w) {
                self.devices[d].wake_at = Some(at);
                let generation = self.devices[d].generation;
                self.schedule(at.0 - self.now.0, Event::Wake(d, generation));
            }
        }
    }

    /// The network's share of one request.
    fn transmit(&mut self, d: usize, generation: u64, request_id: u64) {
        let faults = !self.healed;
        if faults && self.partitioned {
            let outcome = if self.rng.random_bool(0.5) {
                (Delivered::Offline, self.rng.random_range(1..50))
            } else {
                (Delivered::Timeout, REQUEST_TIMEOUT_MS)
            };
            self.answer(d, generation, request_id, outcome.1, outcome.0);
            return;
        }
        if faults && self.rng.random_bool(self.shape.drop_request) {
            self.answer(
                d,
                generation,
                request_id,
                REQUEST_TIMEOUT_MS,
                Delivered::Timeout,
            );
            return;
        }
        self.deliver(faults, |answer_lost, duplicate| Event::Arrive {
            device: d,
            generation,
            request_id,
            answer_lost,
            duplicate,
        });
    }

    /// A message the network carries: it arrives 2–200 ms later, its answer
    /// lost at the shape's odds; with faults on, a second copy may arrive up
    /// to 3 s after it, whose answer reaches nobody.
    fn deliver(&mut self, faults: bool, arrival: impl Fn(bool, bool) -> Event) {
        let answer_lost = faults && self.rng.random_bool(self.shape.drop_response);
        let delay = self.rng.random_range(2..200);
        self.schedule(delay, arrival(answer_lost, false));
        if faults && self.rng.random_bool(self.shape.duplicate) {
            let later = delay + self.rng.random_range(0..3_000);
            self.schedule(later, arrival(true, true));
        }
    }

    fn arrive(
        &mut self,
        d: usize,
        generation: u64,
        request_id: u64,
        answer_lost: bool,
        duplicate: bool,
    ) {
        if !self.ledger_up {
            self.answer(d, generation, request_id, 1, Delivered::Offline);
            return;
        }
        let body = self.requests[&request_id].2.clone();
        let token = self.devices[d].token.clone();
        let crash = !self.healed && self.rng.random_bool(self.shape.crash_in_request);
        if crash {
            self.ledger.crash_at_commit(self.rng.random_range(1..=2));
        }
        let answer = self.ledger.sync(&token, &body, self.now);
        if crash {
            if self.ledger.crashed() {
                // The process died at that commit: no answer leaves it.
                self.ledger_up = false;
                let back = self.rng.random_range(1_000..30_000);
                self.note(format!(
                    "HH-{d} request {request_id}: the ledger dies at a commit, back in {back} ms"
                ));
                self.schedule(back, Event::LedgerBack);
                if !duplicate {
                    self.answer(
                        d,
                        generation,
                        request_id,
                        REQUEST_TIMEOUT_MS,
                        Delivered::Timeout,
                    );
                }
                return;
            }
            self.ledger.disarm();
        }
        self.record_answers(d, request_id, answer.status, &answer.body);
        if duplicate {
            self.note(format!(
                "HH-{d} request {request_id} arrives again (duplicate): {}",
                answer.status
            ));
            return;
        }
        let (after, outcome) = if answer_lost {
            self.note(format!("HH-{d} request {request_id} applied, answer lost"));
            (REQUEST_TIMEOUT_MS, Delivered::Timeout)
        } else {
            (
                self.rng.random_range(2..200),
                Delivered::Http {
                    status: answer.status,
                    body: answer.body,
                },
            )
        };
        self.schedule(
            after,
            Event::Outcome {
                device: d,
                generation,
                request_id,
                outcome,
            },
        );
    }

    /// Keeps every per-item answer the ledger gave, for the replay check.
    fn record_answers(&mut self, d: usize, request_id: u64, status: u16, body: &str) {
        if status != 200 {
            return;
        }
        let response: SyncResponse = serde_json::from_str(body).expect("the ledger answers JSON");
        for result in response.results {
            if result.outcome == Some(ItemOutcome::Buffered) {
                continue;
            }
            self.answers.push(Answer {
                device: d,
                request_id,
                result,
            });
        }
    }

    /// The transport's outcome reaches device `d`'s worker `after` ms from now.
    fn answer(
        &mut self,
        d: usize,
        generation: u64,
        request_id: u64,
        after: i64,
        outcome: Delivered,
    ) {
        self.schedule(
            after,
            Event::Outcome {
                device: d,
                generation,
                request_id,
                outcome,
            },
        );
    }
}

fn describe(outcome: &Delivered) -> String {
    match outcome {
        Delivered::Offline => "offline".into(),
        Delivered::Timeout => "timed out".into(),
        Delivered::Http { status, body } if *status == 200 => {
            let response: SyncResponse = serde_json::from_str(body).expect("JSON");
            let parts: Vec<String> = response
                .results
                .iter()
                .map(|r| {
                    let what = r
                        .outcome
                        .map(|o| format!("{o:?}").to_lowercase())
                        .or_else(|| r.code.clone())
                        .unwrap_or_default();
                    match &r.reason {
                        Some(reason) => format!("#{} {} {what} ({reason})", r.client_seq, r.status),
                        None => format!("#{} {} {what}", r.client_seq, r.status),
                    }
                })
                .collect();
            format!("200 [{}]", parts.join(", "))
        }
        Delivered::Http { status, body } => format!("{status} {body}"),
    }
}

/// The units operators scan and the bins they put them in: the site knows
/// them all (put-away refuses unknown units and bins).
const UNITS: u16 = 24;
const BINS: u8 = 6;

fn epc(n: u16) -> String {
    format!("E2800000000000000000{n:04X}")
}

fn bin(n: u8) -> String {
    format!("B-{n:02}")
}

/// Imports the site's bins and units through the importer the `import`
/// command uses, before any device syncs.
fn stock(ledger: &mut Ledger) -> anyhow::Result<()> {
    let bins: String = (0..BINS).map(|n| format!("{},Z-1,L-1\n", bin(n))).collect();
    let units: String = (0..UNITS)
        .map(|n| format!("{},,SKU-1,new,\n", epc(n)))
        .collect();
    ledger.import(Kind::Bins, &format!("bin,zone,location\n{bins}"), START)?;
    ledger.import(
        Kind::Units,
        &format!("epc,code,sku,state,bin\n{units}"),
        START,
    )?;
    Ok(())
}
