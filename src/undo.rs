//! Which scans can be undone, and until when (docs/design.md §4 rule 10,
//! §5.2): one definition that the ledger applies to an `undo` item and
//! the handheld reads to decide where to offer Undo, so the screen offers
//! it only where the ledger will honour it.
//!
//! A scan can be undone when its mode changes something (every mode but
//! find a unit), the ledger did not reject it, and it named a hop (a
//! second dispatch verify of a verified tag applies with none: there is
//! nothing to compensate); an undo captured within [`UNDO_WINDOW`] of the
//! scan's capture time, by the device's clock both, posts the compensating
//! hop. A scan whose answer has not come yet may be undone too: the undo
//! queues behind it in its session and applies after it.
//!
//! The ledger checks more than the handheld can know (the unit moved since,
//! `stale_state`; a count no longer open, `count_not_open`), so an undo
//! this module allows can still be rejected; one it refuses never applies.

use serde::Deserialize;

use crate::queue::{Item, ItemState};
use crate::reason;
use crate::time::{Millis, UnixMs};
use crate::wire::{Command, ItemOutcome, Mode};

/// How long after a scan's capture an undo of it is honoured, measured
/// between the two capture instants (so a backlog drained later keeps
/// its undos): long enough to notice a wrong scan, short enough that
/// nobody has acted on it since; later, a supervisor corrects it.
pub const UNDO_WINDOW: Millis = Millis::from_secs(120);

/// Whether scans in `mode` can be undone: every mode that changes
/// something. Find a unit is read only and never posts.
pub fn mode_undoable(mode: Mode) -> bool {
    mode != Mode::FindUnit
}

/// What is known of an item someone wants to undo.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Target {
    pub command: Command,
    /// The mode its body names (`scan` bodies name one).
    pub mode: Option<Mode>,
    /// The ledger's answer; `None` while none has come.
    pub outcome: Option<ItemOutcome>,
    /// The hops its answer named.
    pub hop_count: usize,
    /// Its capture time (device clock).
    pub occurred_at: UnixMs,
}

impl Target {
    /// A queued item as a target; `None` for one that will never apply as
    /// it stands (blocked, voided), which is not undone but decided.
    pub fn of_item(item: &Item) -> Option<Target> {
        let outcome = match item.state {
            ItemState::Queued | ItemState::Sending => None,
            ItemState::Done => Some(ItemOutcome::Applied),
            ItemState::Rejected => Some(ItemOutcome::Rejected),
            ItemState::Blocked | ItemState::Voided => return None,
        };
        Some(Target {
            command: item.command,
            mode: item
                .body
                .get("mode")
                .and_then(|mode| Mode::deserialize(mode).ok()),
            outcome,
            hop_count: item.hop_ids.len(),
            occurred_at: item.occurred_at,
        })
    }

    /// Why the target can never be undone, whenever the undo is captured;
    /// `None` when it can be (inside the window).
    pub fn refusal(&self) -> Option<&'static str> {
        match self.command {
            Command::Scan => {}
            Command::Undo => return Some(reason::CANNOT_UNDO_AN_UNDO),
            _ => return Some(reason::TARGET_NOT_UNDOABLE),
        }
        if self.outcome == Some(ItemOutcome::Rejected) {
            return Some(reason::TARGET_REJECTED);
        }
        if !self.mode.is_some_and(mode_undoable) {
            return Some(reason::TARGET_NOT_UNDOABLE);
        }
        match self.outcome {
            Some(ItemOutcome::Applied | ItemOutcome::Simulated) if self.hop_count == 0 => {
                Some(reason::TARGET_NOT_UNDOABLE)
            }
            _ => None,
        }
    }

    /// The last capture instant of an undo the ledger honours.
    pub fn deadline(&self) -> UnixMs {
        self.occurred_at.plus(UNDO_WINDOW)
    }

    /// Whether an undo captured at `undo_at` is inside the window. Both
    /// ways: an undo captured long before its target is no nearer to it.
    pub fn within_window(&self, undo_at: UnixMs) -> bool {
        undo_at.since(self.occurred_at).unsigned_abs() <= UNDO_WINDOW.0
    }

    /// Why an undo captured at `undo_at` is refused, if it is.
    pub fn check(&self, undo_at: UnixMs) -> Result<(), &'static str> {
        match self.refusal() {
            Some(reason) => Err(reason),
            None if !self.within_window(undo_at) => Err(reason::UNDO_WINDOW_EXPIRED),
            None => Ok(()),
        }
    }

    /// Where the handheld offers Undo at `now`: the deadline to show (and
    /// to stop offering at), or `None` when Undo is not offered.
    pub fn offer(&self, now: UnixMs) -> Option<UnixMs> {
        self.check(now).ok().map(|()| self.deadline())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: UnixMs = UnixMs(1_795_947_302_120);

    fn scan(mode: Mode, outcome: Option<ItemOutcome>, hop_count: usize) -> Target {
        Target {
            command: Command::Scan,
            mode: Some(mode),
            outcome,
            hop_count,
            occurred_at: T0,
        }
    }

    #[test]
    fn every_mode_that_changes_something_can_be_undone_within_the_window() {
        for mode in [
            Mode::PutAway,
            Mode::Receive,
            Mode::DispatchVerify,
            Mode::CycleCount,
        ] {
            let applied = scan(mode, Some(ItemOutcome::Applied), 1);
            assert_eq!(applied.check(T0.plus(UNDO_WINDOW)), Ok(()), "{mode:?}");
            assert_eq!(applied.offer(T0), Some(UnixMs(T0.0 + 120_000)));
            assert_eq!(
                applied.check(T0.plus(Millis(UNDO_WINDOW.0 + 1))),
                Err(reason::UNDO_WINDOW_EXPIRED)
            );
            assert_eq!(applied.offer(T0.plus(Millis(UNDO_WINDOW.0 + 1))), None);
            assert_eq!(
                applied.check(UnixMs(T0.0 - 120_001)),
                Err(reason::UNDO_WINDOW_EXPIRED),
                "an undo long before its target is no nearer to it"
            );
            assert_eq!(scan(mode, None, 0).check(T0), Ok(()), "not answered yet");
            assert_eq!(
                scan(mode, Some(ItemOutcome::Simulated), 1).check(T0),
                Ok(())
            );
        }
    }

    #[test]
    fn what_cannot_be_undone_says_why() {
        assert_eq!(
            scan(Mode::FindUnit, None, 0).check(T0),
            Err(reason::TARGET_NOT_UNDOABLE)
        );
        assert_eq!(
            scan(Mode::PutAway, Some(ItemOutcome::Rejected), 0).check(T0),
            Err(reason::TARGET_REJECTED)
        );
        assert_eq!(
            scan(Mode::DispatchVerify, Some(ItemOutcome::Applied), 0).check(T0),
            Err(reason::TARGET_NOT_UNDOABLE),
            "a repeated verify changed nothing"
        );
        for (command, why) in [
            (Command::Undo, reason::CANNOT_UNDO_AN_UNDO),
            (Command::OpenSession, reason::TARGET_NOT_UNDOABLE),
            (Command::CloseSession, reason::TARGET_NOT_UNDOABLE),
            (Command::Void, reason::TARGET_NOT_UNDOABLE),
        ] {
            let target = Target {
                command,
                ..scan(Mode::PutAway, None, 0)
            };
            assert_eq!(target.check(T0), Err(why));
        }
    }
}
