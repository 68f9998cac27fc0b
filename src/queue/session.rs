//! A capture session: a client-minted id and the contiguous `client_seq`
//! its items take, starting at 1 (docs/design.md §3.3).
//!
//! The open and the close are themselves queued items with their own keys
//! and seqs, so a session is opened, used and closed offline. The runtime
//! reads the session, calls these methods and writes the session and the
//! new items back in the same transaction, so a seq is never handed out
//! twice and never skipped.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use uuid::Uuid;

use crate::body::{self, Body};
use crate::key::IdempotencyKey;
use crate::time::UnixMs;
use crate::wire::{AcknowledgeBody, Command, Mode, OpenSessionBody, VoidBody};

use super::item::{Item, ItemState};

/// A stored session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Session {
    pub session_id: Uuid,
    pub operator_id: String,
    pub mode: Mode,
    /// The device clock when the session was opened; the drain sends the
    /// oldest session first.
    pub opened_at: UnixMs,
    /// The `client_seq` the next item of this session takes.
    pub next_seq: u64,
    /// Set when the close was queued; a closed session takes no captures
    /// but its queue keeps draining.
    #[serde(default)]
    pub closed: bool,
}

/// What a capture asks for; the session adds the seq and the clocks.
#[derive(Debug, Clone, PartialEq)]
pub struct Capture {
    pub command: Command,
    pub body: Body,
}

/// Why a capture was refused before anything was written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CaptureError {
    #[error("session {0} is closed")]
    SessionClosed(Uuid),
    #[error("session {0} is already open")]
    SessionExists(Uuid),
    #[error("session {0} is not open on this device")]
    UnknownSession(Uuid),
    #[error("{0} items are queued through the session's own open, close and discard")]
    ReservedCommand(&'static str),
}

impl Session {
    /// Opens a session at `now`: the session and its `open_session` item (seq 1).
    pub fn open(
        session_id: Uuid,
        body: OpenSessionBody,
        key: IdempotencyKey,
        now: UnixMs,
    ) -> (Session, Item) {
        let mut session = Session {
            session_id,
            operator_id: body.operator_id.clone(),
            mode: body.mode,
            opened_at: now,
            next_seq: 1,
            closed: false,
        };
        let body = open_body(&body);
        let item = session.next_item(Command::OpenSession, body, key, now);
        (session, item)
    }

    /// Queues a scan or an undo as the session's next item, captured and
    /// written at `now`.
    pub fn capture(
        &mut self,
        capture: Capture,
        key: IdempotencyKey,
        now: UnixMs,
    ) -> Result<Item, CaptureError> {
        self.capture_at(capture, key, now, now)
    }

    /// Queues a scan or an undo read at `occurred_at` (the page's input
    /// event) and written at `now`.
    pub fn capture_at(
        &mut self,
        capture: Capture,
        key: IdempotencyKey,
        occurred_at: UnixMs,
        now: UnixMs,
    ) -> Result<Item, CaptureError> {
        match capture.command {
            Command::Scan | Command::Undo => {}
            other => return Err(CaptureError::ReservedCommand(other.as_str())),
        }
        if self.closed {
            return Err(CaptureError::SessionClosed(self.session_id));
        }
        let mut item = self.next_item(capture.command, capture.body, key, now);
        item.occurred_at = occurred_at;
        Ok(item)
    }

    /// Queues the `close_session` item and closes the session to captures.
    /// Queued items are kept: closing discards nothing.
    pub fn close(&mut self, key: IdempotencyKey, now: UnixMs) -> Result<Item, CaptureError> {
        if self.closed {
            return Err(CaptureError::SessionClosed(self.session_id));
        }
        let item = self.next_item(Command::CloseSession, body::empty_object(), key, now);
        self.closed = true;
        Ok(item)
    }

    /// Queues the `void` that tells the server an operator discarded the
    /// item at `void_seq`. Allowed in a closed session too: the void only
    /// lets the server move past a seq, it captures nothing new.
    pub fn void(&mut self, void_seq: u64, key: IdempotencyKey, now: UnixMs) -> Item {
        let body = void_body(VoidBody { void_seq });
        self.next_item(Command::Void, body, key, now)
    }

    /// Queues the `acknowledge` that tells the site an operator dealt with
    /// the rejected item `target` (by scanning again as `rescan`, if so),
    /// so the decision it waits as on the site is settled. Allowed in a
    /// closed session too: it captures nothing new.
    pub fn acknowledgement(
        &mut self,
        target: IdempotencyKey,
        rescan: Option<IdempotencyKey>,
        key: IdempotencyKey,
        now: UnixMs,
    ) -> Item {
        let body = acknowledge_body(AcknowledgeBody {
            target_key: target,
            rescan_key: rescan,
        });
        self.next_item(Command::Acknowledge, body, key, now)
    }

    fn next_item(
        &mut self,
        command: Command,
        body: Body,
        key: IdempotencyKey,
        now: UnixMs,
    ) -> Item {
        let client_seq = self.next_seq;
        self.next_seq += 1;
        Item {
            id: None,
            key,
            session_id: self.session_id,
            client_seq,
            command,
            occurred_at: now,
            queued_at: now,
            body,
            state: ItemState::Queued,
            reason: None,
            attempts: 0,
            recorded_at: None,
            replayed: false,
            hop_ids: Vec::new(),
            updated_at: Some(now),
            acknowledged: false,
        }
    }
}

/// An `open_session`'s body: the [`OpenSessionBody`] as JSON, built as a
/// value (the service-worker module then links no JSON serializer; the
/// test below holds it to serde's output).
fn open_body(open: &OpenSessionBody) -> Body {
    let mut context = Map::new();
    for (name, value) in &open.context {
        context.insert(name.clone(), value.clone());
    }
    let mut body = Map::new();
    body.insert("operator_id".into(), open.operator_id.as_str().into());
    body.insert("mode".into(), open.mode.as_str().into());
    body.insert("context".into(), Value::Object(context));
    Value::Object(body)
}

/// A `void`'s body: the [`VoidBody`] as JSON.
fn void_body(void: VoidBody) -> Body {
    let mut body = Map::new();
    body.insert("void_seq".into(), void.void_seq.into());
    Value::Object(body)
}

/// An `acknowledge`'s body: the [`AcknowledgeBody`] as JSON. Built by
/// hand, as the others are: `serde_json::to_value` and its `expect` linked
/// serde_json's error messages into the handheld's module for a failure
/// that cannot happen.
fn acknowledge_body(ack: AcknowledgeBody) -> Body {
    let mut body = Map::new();
    body.insert("target_key".into(), ack.target_key.to_string().into());
    if let Some(rescan) = ack.rescan_key {
        body.insert("rescan_key".into(), rescan.to_string().into());
    }
    Value::Object(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bodies_the_queue_builds_are_what_serde_writes() {
        let open = OpenSessionBody {
            operator_id: "op-17".into(),
            mode: Mode::DispatchVerify,
            context: serde_json::from_value(serde_json::json!({"manifest": "M-1", "dock": [4, 5]}))
                .unwrap(),
        };
        assert_eq!(open_body(&open), serde_json::to_value(&open).unwrap());
        let void = VoidBody { void_seq: 9 };
        assert_eq!(void_body(void.clone()), serde_json::to_value(void).unwrap());
        let target = IdempotencyKey::from_random_bytes([1; 16]);
        let rescan = IdempotencyKey::from_random_bytes([2; 16]);
        for rescan_key in [None, Some(rescan)] {
            let ack = AcknowledgeBody {
                target_key: target,
                rescan_key,
            };
            assert_eq!(
                acknowledge_body(ack.clone()),
                serde_json::to_value(ack).unwrap()
            );
        }
    }
}
