//! A handheld dies for good and its queue is rescued by file: at an
//! operator step, at the seed's odds, device `d` breaks (its worker killed
//! as by a crash, never to start again); the site revokes it; the file its
//! queue screen exports from what its storage still holds
//! ([`stockhop::rescue::write`], every item not yet acknowledged) is
//! imported at the site some minutes later through the ledger's rescue
//! import, which the ledger may die in the middle of (the import is then
//! run again, as an operator would), and sometimes imported a second time.
//! The checks then hold the rescued items to exactly once as they hold a
//! drained queue.
//!
//! The retirements are drawn from their own generator, seeded from the
//! seed, so every other draw of a seed's world stays as it was.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use stockhop::rescue::{self, Header};

use super::{Event, World};
use crate::check::Answer;

/// The most a seed's world retires at an operator step, as odds: about a
/// third of the seeds retire a device.
const RETIRE_ODDS_MAX: f64 = 0.02;
/// From the break to the import: the file is exported, carried to the
/// site's machine and imported, in one to ten minutes.
const RESCUE_AFTER_MS: std::ops::Range<i64> = 60_000..600_000;
/// A ledger that died in an import is back within 30 s: try again then.
const RESCUE_RETRY_MS: i64 = 35_000;
/// The odds a rescued file is imported a second time.
const IMPORT_AGAIN: f64 = 0.3;
/// Added to the seed for the retirements' own generator.
const RETIRE_STREAM: u64 = 0x5245_5343_5545;

/// A retired device's file, on its way to the site.
pub(crate) struct Rescue {
    file: Vec<u8>,
    /// Imports still to run (a second one at [`IMPORT_AGAIN`]'s odds).
    imports_left: u8,
}

/// The retirements of a seed's world.
pub(crate) struct Retirements {
    rng: ChaCha8Rng,
    odds: f64,
    /// Per device: `None` while it works, else its rescue (`None` inside
    /// once every import of its file has run).
    pub(crate) retired: Vec<Option<Option<Rescue>>>,
    /// A device's own file the site refused: never expected.
    pub(crate) refused: Vec<String>,
}

impl Retirements {
    pub(crate) fn new(seed: u64, devices: usize) -> Retirements {
        let mut rng = ChaCha8Rng::seed_from_u64(seed.wrapping_add(RETIRE_STREAM));
        let odds = rng.random_range(0.0..RETIRE_ODDS_MAX);
        Retirements {
            rng,
            odds,
            retired: (0..devices).map(|_| None).collect(),
            refused: Vec::new(),
        }
    }

    pub(crate) fn is_retired(&self, d: usize) -> bool {
        self.retired[d].is_some()
    }

    /// Whether every retired device's file has been imported.
    pub(crate) fn all_rescued(&self) -> bool {
        self.retired.iter().all(|r| matches!(r, None | Some(None)))
    }
}

impl World {
    /// Drawn at each operator step of a working device, before the others.
    pub(super) fn maybe_retire(&mut self, d: usize) {
        if !self.healed && self.retirements.rng.random_bool(self.retirements.odds) {
            self.schedule(0, Event::Retire(d));
        }
    }

    /// Device `d` breaks for good: its worker dies as in a crash; the site
    /// revokes it; its file is written from what its storage kept.
    pub(super) fn retire(&mut self, d: usize) {
        if self.retirements.is_retired(d) {
            return;
        }
        let lost = self.devices[d].kill_worker(&mut self.rng);
        let device = &self.devices[d];
        let mut items: Vec<_> = device
            .items_by_key()
            .into_values()
            .filter(|item| item.state.is_pending())
            .collect();
        // The queue screen exports in its own order; the site sorts.
        items.sort_by_key(|item| std::cmp::Reverse(item.position()));
        let wire: Vec<_> = items.iter().map(|item| item.to_wire()).collect();
        let header = Header {
            device_id: device.device_id.clone(),
            build: "sim".into(),
            exported_at: device.clock(self.now),
        };
        let file = rescue::write(&header, &wire, &rescue::token_digest(&device.token));
        self.ledger
            .revoke(&device.device_id, self.now)
            .expect("the ledger revokes a device it has");
        let imports_left = if self.retirements.rng.random_bool(IMPORT_AGAIN) {
            2
        } else {
            1
        };
        self.note(format!(
            "HH-{d} breaks for good ({lost} relaxed writes lost): revoked, {} items in its rescue file",
            wire.len()
        ));
        self.retirements.retired[d] = Some(Some(Rescue { file, imports_left }));
        let after = self.retirements.rng.random_range(RESCUE_AFTER_MS);
        self.schedule(after, Event::Rescue(d));
    }

    /// Imports device `d`'s file at the site; again later if the ledger is
    /// down or dies in it, or if the file is to be imported twice.
    pub(super) fn rescue(&mut self, d: usize) {
        let Some(Some(rescue)) = &self.retirements.retired[d] else {
            return;
        };
        if !self.ledger_up {
            self.schedule(RESCUE_RETRY_MS, Event::Rescue(d));
            return;
        }
        let file = rescue.file.clone();
        // One commit a request of fifty and one for the record, at least.
        let commits = u32::try_from(file.len() / 8_000 + 2).unwrap_or(u32::MAX);
        let imported = self.at_ledger(format!("HH-{d} rescue import"), commits, |ledger, now| {
            ledger.rescue(&file, now)
        });
        match imported {
            None => self.schedule(RESCUE_RETRY_MS, Event::Rescue(d)),
            Some(Ok(imported)) => {
                self.note(format!(
                    "HH-{d} rescue file imported: {:?}",
                    imported.counts
                ));
                // The import's answers are held to what the device's own
                // would be: the same checks read them.
                for result in imported.results {
                    let request_id = self.next_request;
                    self.next_request += 1;
                    self.answers.push(Answer {
                        device: d,
                        request_id,
                        result,
                    });
                }
                if let Some(Some(rescue)) = &mut self.retirements.retired[d] {
                    rescue.imports_left -= 1;
                    if rescue.imports_left > 0 {
                        self.schedule(RESCUE_RETRY_MS, Event::Rescue(d));
                    } else {
                        self.retirements.retired[d] = Some(None);
                    }
                }
            }
            Some(Err(err)) => {
                self.note(format!("HH-{d} rescue file refused: {err}"));
                self.retirements
                    .refused
                    .push(format!("HH-{d}: its own rescue file was refused: {err}"));
                self.retirements.retired[d] = Some(None);
            }
        }
    }
}
