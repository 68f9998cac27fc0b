//! Operator actions on items that wait for a decision: discard a blocked
//! item (its `void` is queued so the server can move past its seq) and
//! acknowledge a rejected one.

use crate::key::IdempotencyKey;
use crate::time::UnixMs;

use super::item::{Item, ItemState};
use super::session::Session;

/// Why an action was refused; nothing was changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ActionError {
    #[error("only a blocked item can be discarded; item {seq} is {state}")]
    NotBlocked { seq: u64, state: &'static str },
    #[error("only a rejected item can be acknowledged; item {seq} is {state}")]
    NotRejected { seq: u64, state: &'static str },
    #[error("item {seq} belongs to another session")]
    WrongSession { seq: u64 },
}

/// Discards a blocked item: it becomes `voided` and the session queues a
/// `void` for its seq. Returns the void item; write both in one transaction.
pub fn discard(
    item: &mut Item,
    session: &mut Session,
    void_key: IdempotencyKey,
    now: UnixMs,
) -> Result<Item, ActionError> {
    if item.state != ItemState::Blocked {
        return Err(ActionError::NotBlocked {
            seq: item.client_seq,
            state: item.state.as_str(),
        });
    }
    if item.session_id != session.session_id {
        return Err(ActionError::WrongSession {
            seq: item.client_seq,
        });
    }
    item.set_state(ItemState::Voided, now);
    Ok(session.void(item.client_seq, void_key, now))
}

/// Records that an operator has decided about a rejected item, and
/// queues the `acknowledge` that tells the site (with the key of the scan
/// that replaced it, for a re-scan). Returns that item; write both in one
/// transaction.
pub fn acknowledge(
    item: &mut Item,
    session: &mut Session,
    rescan: Option<IdempotencyKey>,
    ack_key: IdempotencyKey,
    now: UnixMs,
) -> Result<Item, ActionError> {
    if item.state != ItemState::Rejected {
        return Err(ActionError::NotRejected {
            seq: item.client_seq,
            state: item.state.as_str(),
        });
    }
    if item.session_id != session.session_id {
        return Err(ActionError::WrongSession {
            seq: item.client_seq,
        });
    }
    item.acknowledged = true;
    item.updated_at = Some(now);
    Ok(session.acknowledgement(item.key, rescan, ack_key, now))
}
