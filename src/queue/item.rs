//! One queued item as the handheld stores it: the wire item plus its
//! place in the queue's life cycle (docs/design.md §3.6).
//!
//! `done` items stay for the queue screen for [`DONE_RETENTION`] and are
//! then pruned ([`Item::is_prunable`]); no other item is ever deleted:
//! `rejected` and `blocked` items wait for an operator, `voided` items
//! record what the operator discarded.

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::body::{self, Body};
use crate::key::IdempotencyKey;
use crate::time::{Millis, UnixMs};
use crate::wire::{Command, SyncItem};

/// How long a `done` item stays on the device by default: a week of the
/// queue screen's history, after which the site's ledger is the record.
pub const DONE_RETENTION: Millis = Millis::from_secs(7 * 24 * 60 * 60);

/// Where an item is in its life: `queued → sending → done`, or one of the
/// states that wait for an operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemState {
    /// Written durably, waiting for the drain.
    Queued,
    /// Leased into a request that may or may not have reached the server;
    /// found in this state after a restart it is sent again (its key makes
    /// that safe).
    Sending,
    /// Applied (or simulated) by the server.
    Done,
    /// Refused by the server for a business reason; waits for an operator.
    Rejected,
    /// A request the server will never accept as sent; it and the later
    /// items of its session wait for an operator.
    Blocked,
    /// Discarded by an operator; a `void` item tells the server.
    Voided,
}

impl ItemState {
    pub const ALL: [ItemState; 6] = [
        ItemState::Queued,
        ItemState::Sending,
        ItemState::Done,
        ItemState::Rejected,
        ItemState::Blocked,
        ItemState::Voided,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ItemState::Queued => "queued",
            ItemState::Sending => "sending",
            ItemState::Done => "done",
            ItemState::Rejected => "rejected",
            ItemState::Blocked => "blocked",
            ItemState::Voided => "voided",
        }
    }

    /// Whether the drain still has work to do for an item in this state
    /// (a blocked item is pending too: it holds back its session).
    pub fn is_pending(self) -> bool {
        matches!(
            self,
            ItemState::Queued | ItemState::Sending | ItemState::Blocked
        )
    }
}

/// A stored item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Item {
    /// The permanent queue id (IndexedDB's auto-increment key), absent until
    /// the item is first written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<u64>,
    pub key: IdempotencyKey,
    pub session_id: Uuid,
    pub client_seq: u64,
    pub command: Command,
    pub occurred_at: UnixMs,
    pub queued_at: UnixMs,
    #[serde(default)]
    pub body: Body,
    pub state: ItemState,
    /// Why the item waits: the server's rejection reason or the code of a
    /// blocking answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Requests this item has been leased into.
    #[serde(default)]
    pub attempts: u32,
    /// The server's receipt clock for a done or rejected item.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded_at: Option<UnixMs>,
    /// The server's answer came from its stored receipt (an earlier send
    /// had reached it, but its answer had not reached the device).
    #[serde(default)]
    pub replayed: bool,
    /// The hops the server recorded for a done item.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hop_ids: Vec<i64>,
    /// When the item last changed state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<UnixMs>,
    /// An operator has seen the rejection and decided.
    #[serde(default)]
    pub acknowledged: bool,
}

impl Item {
    /// The item as it goes on the wire.
    pub fn to_wire(&self) -> SyncItem {
        SyncItem {
            key: self.key,
            session_id: self.session_id,
            client_seq: self.client_seq,
            command: self.command,
            occurred_at: self.occurred_at,
            queued_at: self.queued_at,
            body: self.body.clone(),
        }
    }

    /// Where the drain places the item in its session: its own `client_seq`,
    /// except a `void`, which goes where the item it discards stood, so the
    /// server hears of the void before the items that waited behind it.
    /// The void's body is a [`VoidBody`](crate::wire::VoidBody); a body
    /// without a whole `void_seq` places the void at its own seq.
    pub fn position(&self) -> (u64, u64) {
        let at = match self.command {
            Command::Void => body::void_seq(&self.body).unwrap_or(self.client_seq),
            _ => self.client_seq,
        };
        (at, self.client_seq)
    }

    /// Whether the item may be deleted at `now`: done, and done for at
    /// least `retention`. An item in any other state is never prunable.
    pub fn is_prunable(&self, now: UnixMs, retention: Millis) -> bool {
        let retention = i64::try_from(retention.0).unwrap_or(i64::MAX);
        self.state == ItemState::Done
            && self.updated_at.is_some_and(|at| now.since(at) >= retention)
    }

    /// Moves the item to `state` at `now`.
    pub fn set_state(&mut self, state: ItemState, now: UnixMs) {
        self.state = state;
        self.updated_at = Some(now);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::queue::Session;
    use crate::wire::{Mode, OpenSessionBody};

    fn void_with(body: serde_json::Value) -> Item {
        let open = OpenSessionBody {
            operator_id: "op-1".into(),
            mode: Mode::Receive,
            context: Default::default(),
        };
        let key = IdempotencyKey::from_random_bytes([7; 16]);
        let (mut session, _) = Session::open(Uuid::from_u128(1), open, key, UnixMs(0));
        let mut void = session.void(1, key, UnixMs(0));
        void.client_seq = 9;
        void.body = body;
        void
    }

    #[test]
    fn a_void_stands_where_the_item_it_discards_stood() {
        assert_eq!(void_with(json!({"void_seq": 4})).position(), (4, 9));
        assert_eq!(
            void_with(json!({"void_seq": 4, "note": "x"})).position(),
            (4, 9)
        );
    }

    #[test]
    fn a_void_without_a_whole_void_seq_stands_at_its_own_seq() {
        for body in [
            json!({}),
            json!(null),
            json!({"void_seq": -1}),
            json!({"void_seq": 4.5}),
            json!({"void_seq": "4"}),
        ] {
            assert_eq!(void_with(body.clone()).position(), (9, 9), "{body}");
        }
    }

    #[test]
    fn only_items_done_for_the_whole_retention_are_prunable() {
        let day = Millis::from_secs(24 * 60 * 60);
        let mut item = void_with(json!({}));
        let done_at = UnixMs(10 * day.0 as i64);
        for state in ItemState::ALL {
            item.set_state(state, done_at);
            let week_later = done_at.plus(DONE_RETENTION);
            assert_eq!(
                item.is_prunable(week_later, DONE_RETENTION),
                state == ItemState::Done,
                "{state:?}"
            );
            assert!(!item.is_prunable(UnixMs(week_later.0 - 1), DONE_RETENTION));
            assert!(!item.is_prunable(week_later.plus(day), Millis(u64::MAX)));
        }
    }

    #[test]
    fn other_items_stand_at_their_own_seq() {
        let mut item = void_with(json!({"void_seq": 4}));
        item.command = Command::Scan;
        assert_eq!(item.position(), (9, 9));
    }
}
