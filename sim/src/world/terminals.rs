//! Fixed terminals and the terminal listener: a terminal reads and pushes
//! what is unacknowledged to the listener, which writes it durably and
//! acks; the listener's forwarder sends batches over the network to the
//! ledger and lets the real drain (`stockhop_site::listener`) decide what
//! to settle and how long to wait.

use rand::Rng;
use stockhop::key::IdempotencyKey;
use stockhop::time::UnixMs;
use stockhop_site::ident::IDENT_MAX_CHARS as MAX_FIELD_CHARS;
use stockhop_site::listener::queue::Write;
use stockhop_site::net::delivery::{DeliveryError, DELIVERY_TIMEOUT};
use stockhop_site::terminal_wire::{TerminalBatch, TerminalEventKind, TerminalSource};

use crate::check::TerminalAnswer;
use crate::terminal::{Forward, Reading};

use super::operator::{epc, UNITS};
use super::{Event, World};

/// How long a terminal waits for the listener's ack before it counts the
/// push as failed, and waits again before the next push.
const TERMINAL_RETRY_MS: i64 = 10_000;
/// Most records one terminal push carries.
const TERMINAL_PUSH_MAX: usize = 20;
/// Commits one terminal batch makes that the ledger may die at.
const BATCH_COMMITS: u32 = 1;

impl World {
    /// Terminal `t` reads a person, a tag or a code; now and then one the
    /// ledger will refuse (a subject past its limit).
    pub(super) fn terminal_reads(&mut self, t: usize) {
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
    pub(super) fn push(&mut self, t: usize) {
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
    pub(super) fn push_arrives(&mut self, push_id: u64, answer_lost: bool) -> anyhow::Result<()> {
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
        let crash = self.listener_crashes_at_commit();
        let write = Write {
            records,
            raw: Vec::new(),
            seen: vec![(serial, TerminalSource::Framed)],
            ..Write::default()
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
    pub(super) fn forwarder_step(&mut self, generation: u64) -> anyhow::Result<()> {
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
        let timeout = delivery_timeout_ms();
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
    pub(super) fn forward_arrives(
        &mut self,
        generation: u64,
        forward_id: u64,
        answer_lost: bool,
        duplicate: bool,
    ) {
        let timeout = delivery_timeout_ms();
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
        let what = format!("batch {forward_id}");
        let result = self.at_ledger(what, BATCH_COMMITS, |ledger, now| {
            ledger.terminal(&batch, now)
        });
        let Some(result) = result else {
            if !duplicate {
                self.forwards.insert(
                    forward_id,
                    Err(DeliveryError::Unreachable("no answer".into())),
                );
                self.schedule(timeout, outcome);
            }
            return;
        };
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
    pub(super) fn forward_outcome(
        &mut self,
        generation: u64,
        forward_id: u64,
    ) -> anyhow::Result<()> {
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
        let crash = self.listener_crashes_at_commit();
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
}

/// How long the forwarder waits for the ledger's answer, in ms.
fn delivery_timeout_ms() -> i64 {
    i64::try_from(DELIVERY_TIMEOUT.as_millis()).unwrap_or(i64::MAX)
}
