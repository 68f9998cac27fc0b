//! Group commit: captures that arrive within a short window share one
//! strict IndexedDB transaction and are acknowledged together after it
//! commits. The runtime owns the timer; the limits and the grouping rule
//! live here.

use crate::time::{Millis, UnixMs};

/// Most captures in one transaction: an RFID sled reads a few hundred tags
/// a second, so one group holds about a second of the fastest reads and a
/// transaction stays short.
pub const GROUP_COMMIT_MAX_ITEMS: usize = 256;
/// How long the first capture of a group waits for others: short against
/// the 10 ms acknowledgement target, long enough to gather a burst.
pub const GROUP_COMMIT_WINDOW: Millis = Millis(2);

/// A group of captures being gathered for one transaction.
#[derive(Debug)]
pub struct Group<T> {
    opened_at: Option<UnixMs>,
    members: Vec<T>,
}

impl<T> Default for Group<T> {
    fn default() -> Group<T> {
        Group {
            opened_at: None,
            members: Vec::new(),
        }
    }
}

impl<T> Group<T> {
    /// Adds a capture at `now`; the group opens with its first member.
    pub fn push(&mut self, member: T, now: UnixMs) {
        self.opened_at.get_or_insert(now);
        self.members.push(member);
    }

    /// When the group must be written: at once when full, else when the
    /// window of its first member ends. `None` when empty.
    pub fn poll_timeout(&self) -> Option<UnixMs> {
        let opened_at = self.opened_at?;
        if self.members.len() >= GROUP_COMMIT_MAX_ITEMS {
            Some(opened_at)
        } else {
            Some(opened_at.plus(GROUP_COMMIT_WINDOW))
        }
    }

    /// Takes up to [`GROUP_COMMIT_MAX_ITEMS`] members for one transaction
    /// if the group is due at `now`; the rest open the next group.
    pub fn poll_commit(&mut self, now: UnixMs) -> Option<Vec<T>> {
        if self.poll_timeout()? > now {
            return None;
        }
        let take = self.members.len().min(GROUP_COMMIT_MAX_ITEMS);
        let batch: Vec<T> = self.members.drain(..take).collect();
        self.opened_at = if self.members.is_empty() {
            None
        } else {
            Some(now)
        };
        Some(batch)
    }

    pub fn len(&self) -> usize {
        self.members.len()
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }
}
