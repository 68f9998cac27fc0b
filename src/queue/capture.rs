//! Group commit: captures share strict IndexedDB transactions and are
//! acknowledged together after each commits.
//!
//! The window is the commit itself: the first capture after a quiet spell
//! is written at once (no timer, so a single scan is acknowledged as fast
//! as the disk allows), and every capture that arrives while a transaction
//! is committing (a few milliseconds; an RFID sled's burst) waits for it
//! and goes in the next one, at most [`GROUP_COMMIT_MAX_ITEMS`] at a time.
//! Under load the groups grow by themselves; when idle they shrink to one.
//! The runtime is the single writer and calls [`Group::take`] whenever it
//! is free.

/// Most captures in one transaction: an RFID sled reads a few hundred tags
/// a second, so one group holds about a second of the fastest reads and a
/// transaction stays short.
pub const GROUP_COMMIT_MAX_ITEMS: usize = 256;

/// Captures waiting for the writer, in arrival order.
#[derive(Debug)]
pub struct Group<T> {
    members: Vec<T>,
}

impl<T> Default for Group<T> {
    fn default() -> Group<T> {
        Group {
            members: Vec::new(),
        }
    }
}

impl<T> Group<T> {
    /// A capture arrived.
    pub fn push(&mut self, member: T) {
        self.members.push(member);
    }

    /// The writer is free: the next transaction's captures, oldest first,
    /// at most [`GROUP_COMMIT_MAX_ITEMS`]; `None` when nothing waits.
    pub fn take(&mut self) -> Option<Vec<T>> {
        if self.members.is_empty() {
            return None;
        }
        let take = self.members.len().min(GROUP_COMMIT_MAX_ITEMS);
        Some(self.members.drain(..take).collect())
    }

    pub fn len(&self) -> usize {
        self.members.len()
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }
}
