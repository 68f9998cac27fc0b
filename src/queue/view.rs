//! What the queue screen shows: counts by state, the age of the oldest
//! queued item, and why an item waits.

use std::collections::BTreeMap;

use serde::Serialize;
use uuid::Uuid;

use crate::time::UnixMs;

use super::item::{Item, ItemState};

/// Items by state, and the oldest item still waiting to go out.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub queued: u64,
    pub sending: u64,
    pub done: u64,
    pub rejected: u64,
    pub blocked: u64,
    pub voided: u64,
    pub oldest_queued_at: Option<UnixMs>,
    pub oldest_queued_age_ms: Option<i64>,
}

impl Counts {
    pub fn add(&mut self, state: ItemState, n: u64) {
        let slot = match state {
            ItemState::Queued => &mut self.queued,
            ItemState::Sending => &mut self.sending,
            ItemState::Done => &mut self.done,
            ItemState::Rejected => &mut self.rejected,
            ItemState::Blocked => &mut self.blocked,
            ItemState::Voided => &mut self.voided,
        };
        *slot += n;
    }

    /// Sets the oldest queued (or sending) item's queue-write time and its age at `now`.
    pub fn with_oldest(mut self, oldest_queued_at: Option<UnixMs>, now: UnixMs) -> Counts {
        self.oldest_queued_at = oldest_queued_at;
        self.oldest_queued_age_ms = oldest_queued_at.map(|at| now.since(at).max(0));
        self
    }
}

/// The blocked items that hold back their sessions: session → lowest
/// blocked seq.
#[derive(Debug, Clone, Default)]
pub struct Blockers(BTreeMap<Uuid, u64>);

impl Blockers {
    pub fn from_blocked<'a>(blocked: impl IntoIterator<Item = &'a Item>) -> Blockers {
        let mut lowest = BTreeMap::new();
        for item in blocked {
            if item.state == ItemState::Blocked {
                lowest
                    .entry(item.session_id)
                    .and_modify(|seq: &mut u64| *seq = (*seq).min(item.client_seq))
                    .or_insert(item.client_seq);
            }
        }
        Blockers(lowest)
    }

    /// Why `item` is where it is, for the screen: its own reason, or the
    /// blocked item it waits behind.
    pub fn reason(&self, item: &Item) -> Option<String> {
        if item.state.is_pending() && item.state != ItemState::Blocked {
            if let Some(&seq) = self.0.get(&item.session_id) {
                if item.position().0 > seq {
                    return Some(format!("waiting behind blocked item #{seq}"));
                }
            }
        }
        item.reason.clone()
    }
}
