//! The people at the handhelds and the stock they handle: an operator's
//! step (open a session, scan, undo, close), a person's decisions on the
//! queue screen, and the site's bins and units, imported before the shift.

use rand::Rng;
use stockhop::queue::item::ItemState;
use stockhop::queue::session::Capture;
use stockhop::wire::{Command, Mode, OpenSessionBody};
use stockhop_site::ledger::import::Kind;
use uuid::Uuid;

use crate::ledger::Ledger;

use super::{World, START};

/// The units operators scan and the bins they put them in: the site knows
/// them all (put-away refuses unknown units and bins).
pub(super) const UNITS: u16 = 24;
const BINS: u8 = 6;

pub(super) fn epc(n: u16) -> String {
    format!("E2800000000000000000{n:04X}")
}

fn bin(n: u8) -> String {
    format!("B-{n:02}")
}

/// Imports the site's bins and units through the importer the `import`
/// command uses, before any device syncs.
pub(super) fn stock(ledger: &mut Ledger) -> anyhow::Result<()> {
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

impl World {
    /// One operator action on device `d` (the page's message wakes a
    /// stopped worker first, as it does in the browser), through the
    /// worker's queue as the page's messages go.
    pub(super) fn operate(&mut self, d: usize) {
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
    pub(super) fn decide(&mut self, d: usize) {
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
}
