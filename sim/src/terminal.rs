//! Fixed terminals and the terminal listener inside the simulation.
//!
//! A terminal keeps what it read until the listener acknowledges it and
//! pushes it again after a timeout (what iclock and framed terminals do).
//! The listener is the real listener code on its own SQLite file (a
//! listener on another machine than the ledger, `--ledger-url`): its
//! durable queue ([`queue::write_keyed`], keys drawn from the seed), its
//! time rules, and its forwarder's sans-IO [`Drain`], whose every step the
//! world delivers to the real ledger ingest. A listener crash (the process
//! killed, or dying at the instant of a commit) loses everything it held
//! in memory (the rules' windows, the forwarder's backoff, the batch in
//! flight) and starts again from what its queue durably holds.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use rusqlite::Connection;
use stockhop::key::IdempotencyKey;
use stockhop::time::UnixMs;
use stockhop_site::listener::forwarder::{self, Batch, Drain, Step};
use stockhop_site::listener::queue::{self, NewRecord, Queued, Write};
use stockhop_site::listener::rules::{Capture, ReaderRates, Rules};
use stockhop_site::terminal_wire::{TerminalEventKind, TerminalHeartbeat, TerminalSource};

use crate::ledger::crashable;

/// One record as a terminal read it: the terminal's own event id, who or
/// what, and when by the terminal's clock.
#[derive(Debug, Clone)]
pub struct Reading {
    pub event_id: String,
    pub kind: TerminalEventKind,
    pub subject: String,
    pub occurred_at: UnixMs,
}

/// One simulated fixed terminal.
pub struct Terminal {
    pub serial: String,
    /// Terminal clock minus the world's clock.
    pub skew_ms: i64,
    /// Everything it read, in order.
    pub read: Vec<Reading>,
    /// What the listener has not acknowledged yet, oldest first.
    pub unacked: Vec<Reading>,
    /// The push in flight: its id and how many of `unacked` it carries.
    pub pushing: Option<(u64, usize)>,
}

impl Terminal {
    pub fn new(serial: String, skew_ms: i64) -> Terminal {
        Terminal {
            serial,
            skew_ms,
            read: Vec::new(),
            unacked: Vec::new(),
            pushing: None,
        }
    }

    pub fn reads(&mut self, reading: Reading) {
        self.read.push(reading.clone());
        self.unacked.push(reading);
    }

    /// The listener acknowledged push `id`: what it carried is off the
    /// terminal's hands.
    pub fn acked(&mut self, id: u64) {
        if let Some((pushing, carried)) = self.pushing {
            if pushing == id {
                self.unacked.drain(..carried);
                self.pushing = None;
            }
        }
    }

    /// Push `id` got no answer: it will be sent again.
    pub fn failed(&mut self, id: u64) {
        if self.pushing.is_some_and(|(pushing, _)| pushing == id) {
            self.pushing = None;
        }
    }

    /// The records one push carries, as the listener's parser hands them
    /// to the queue.
    pub fn records(&self, carried: usize) -> Vec<NewRecord> {
        self.unacked[..carried]
            .iter()
            .map(|reading| NewRecord {
                source: TerminalSource::Framed,
                kind: reading.kind,
                capture: Capture {
                    device: self.serial.clone(),
                    subject: reading.subject.clone(),
                    event_id: reading.event_id.clone(),
                    occurred_at: reading.occurred_at,
                },
                raw: format!(
                    r#"{{"id":"{}","subject":"{}"}}"#,
                    reading.event_id, reading.subject
                )
                .into_bytes(),
            })
            .collect()
    }
}

/// A batch the forwarder sent and waits on.
#[derive(Debug, Clone)]
pub struct Forward {
    pub id: u64,
    pub rows: Vec<Queued>,
    pub heartbeats: Vec<TerminalHeartbeat>,
}

/// The terminal listener: its queue on a real SQLite file, its rules and
/// its forwarder's drain.
pub struct Listener {
    path: PathBuf,
    conn: Connection,
    crash_countdown: Arc<AtomicU32>,
    rules: Rules,
    pub drain: Drain,
    pub up: bool,
    /// Bumped at every start: answers to an earlier process's batches
    /// reach nobody.
    pub generation: u64,
    pub in_flight: Option<Forward>,
}

/// Every reader at the simulated site reads at the listener's default rate.
fn readers() -> ReaderRates {
    ReaderRates {
        per_reader: HashMap::new(),
        default_reads_per_sec: 700,
    }
}

impl Listener {
    pub fn open(path: PathBuf) -> anyhow::Result<Listener> {
        let crash_countdown = Arc::new(AtomicU32::new(0));
        let conn = crashable(&path, &crash_countdown)?;
        Ok(Listener {
            path,
            conn,
            crash_countdown,
            rules: Rules::new(readers()),
            drain: Drain::default(),
            up: true,
            generation: 0,
            in_flight: None,
        })
    }

    /// The process dies: everything in memory goes.
    pub fn kill(&mut self) {
        self.up = false;
        self.in_flight = None;
        self.generation += 1;
    }

    /// The process starts again from what its file holds.
    pub fn start(&mut self, now: UnixMs) -> anyhow::Result<()> {
        self.crash_countdown.store(0, Ordering::SeqCst);
        self.conn = crashable(&self.path, &self.crash_countdown)?;
        self.rules = queue::load_rules(&mut self.conn, now, readers())?;
        self.drain = Drain::default();
        self.in_flight = None;
        self.generation += 1;
        self.up = true;
        Ok(())
    }

    /// Arms (or not) a crash at the commit about to run.
    fn arm(&self, crash: bool) {
        self.crash_countdown
            .store(u32::from(crash), Ordering::SeqCst);
    }

    /// Whether the armed crash happened (the commit rolled back).
    fn crashed(&self, armed: bool) -> bool {
        armed && self.crash_countdown.load(Ordering::SeqCst) == 0
    }

    /// One terminal request's records written durably at `now`, keys from
    /// `mint`; with `crash` the process dies at that commit. `Ok(false)`:
    /// it died, nothing is kept.
    pub fn write(
        &mut self,
        now: UnixMs,
        write: Write,
        crash: bool,
        mint: &mut dyn FnMut() -> IdempotencyKey,
    ) -> anyhow::Result<bool> {
        self.arm(crash);
        let written =
            queue::write_keyed(&mut self.conn, &mut self.rules, now, &[write], &mut || {
                Ok(mint())
            });
        match written {
            Ok(_) => {
                self.arm(false);
                Ok(true)
            }
            Err(_) if self.crashed(crash) => {
                self.kill();
                Ok(false)
            }
            Err(err) => Err(err.into()),
        }
    }

    /// What the forwarder's next attempt reads at `now`.
    pub fn next_batch(&mut self, now: UnixMs) -> anyhow::Result<Batch> {
        Ok(forwarder::read_batch(
            &mut self.conn,
            self.drain.read(),
            now,
        )?)
    }

    /// Settles a step's rows at `now`; with `crash` the process dies at
    /// that commit. `Ok(false)`: it died; the rows stay pending and go
    /// again after the restart.
    pub fn settle(&mut self, now: UnixMs, step: &Step, crash: bool) -> anyhow::Result<bool> {
        if step.settle.is_empty() && step.heartbeats.is_empty() {
            return Ok(true);
        }
        self.arm(crash);
        let pairs: Vec<_> = step
            .settle
            .iter()
            .map(|(row, settled)| (row, settled.clone()))
            .collect();
        match queue::settle(&mut self.conn, now, &pairs, &step.heartbeats) {
            Ok(()) => {
                self.arm(false);
                Ok(true)
            }
            Err(_) if self.crashed(crash) => {
                self.kill();
                Ok(false)
            }
            Err(err) => Err(err.into()),
        }
    }

    /// Rows still pending, for the world's idle test.
    pub fn pending(&mut self) -> anyhow::Result<usize> {
        Ok(queue::counts(&mut self.conn)?.pending)
    }

    /// Read access for the invariant checks.
    pub fn conn(&self) -> &Connection {
        &self.conn
    }
}
