//! The answers an item gets, built in one place: done (applied or
//! simulated), rejected (a business refusal, stored like any answer),
//! buffered (accepted ahead of a gap) and refused (a 4xx, not stored).

use stockhop::time::UnixMs;
use stockhop::wire::{codes as wire_codes, ItemOutcome, ItemResult, SyncItem};

use crate::ledger::devices::Device;
use crate::ledger::{LedgerError, Refusal};

pub(super) fn invalid(err: serde_json::Error) -> LedgerError {
    LedgerError::Refused(Refusal::new(422, wire_codes::INVALID_ITEM, err.to_string()))
}

pub(super) fn outcome_for(device: &Device) -> ItemOutcome {
    if device.commissioned {
        ItemOutcome::Applied
    } else {
        ItemOutcome::Simulated
    }
}

pub(super) fn done(
    item: &SyncItem,
    outcome: ItemOutcome,
    now: UnixMs,
    hop_ids: Vec<i64>,
) -> ItemResult {
    ItemResult {
        key: item.key,
        client_seq: item.client_seq,
        status: 200,
        outcome: Some(outcome),
        reason: None,
        code: None,
        message: None,
        replayed: false,
        recorded_at: Some(now),
        hop_ids,
    }
}

pub(super) fn rejected(item: &SyncItem, reason: &str, now: UnixMs) -> ItemResult {
    ItemResult {
        outcome: Some(ItemOutcome::Rejected),
        reason: Some(reason.to_owned()),
        ..done(item, ItemOutcome::Rejected, now, vec![])
    }
}

pub(super) fn buffered(item: &SyncItem, now: Option<UnixMs>) -> ItemResult {
    ItemResult {
        status: 202,
        recorded_at: now,
        ..done(item, ItemOutcome::Buffered, UnixMs::default(), vec![])
    }
}

pub(super) fn refused(item: &SyncItem, refusal: &Refusal) -> ItemResult {
    ItemResult {
        key: item.key,
        client_seq: item.client_seq,
        status: refusal.status,
        outcome: None,
        reason: None,
        code: Some(refusal.code.to_owned()),
        message: Some(refusal.message.clone()),
        replayed: false,
        recorded_at: None,
        hop_ids: vec![],
    }
}
