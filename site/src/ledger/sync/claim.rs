//! A new or known key: a claimed key answers from its receipt (replayed,
//! or 409 when the body differs); a new one is checked, takes its slot in
//! its session and is claimed with the work it causes, in its turn or
//! buffered ahead of a gap.

use stockhop::wire::{codes as wire_codes, Command, ItemOutcome, ItemResult, VoidBody};

use super::answer::{buffered, done, invalid, outcome_for, refused};
use super::apply::apply;
use super::context::Context;
use super::drain::drain;
use super::parse::{validate, Incoming};
use crate::ledger::receipts::{self, Claim, Receipt, ReceiptState};
use crate::ledger::rejections;
use crate::ledger::sessions;
use crate::ledger::{LedgerError, Refusal};

/// What the request's one read of its keys' claims says of an item's key.
pub(super) enum Known<'r> {
    /// Not claimed, and nothing in this request claimed it since.
    Unclaimed,
    /// Claimed with its final answer, which never changes.
    Claimed(&'r Receipt),
    /// Read it again: claimed since by this request, or buffered.
    ReadAgain,
}

pub(super) fn process(
    ctx: &Context<'_>,
    incoming: &Incoming,
    known: Known<'_>,
) -> Result<ItemResult, LedgerError> {
    let receipt = match known {
        Known::Unclaimed => None,
        Known::Claimed(receipt) => return Ok(replay(receipt, incoming)),
        Known::ReadAgain => receipts::find(ctx.conn, &ctx.device.device_id, &incoming.item.key)?,
    };
    if let Some(receipt) = receipt {
        return Ok(replay(&receipt, incoming));
    }
    ctx.isolate(|| take_new(ctx, incoming))
}

/// The answer for a key that was claimed before.
fn replay(receipt: &Receipt, incoming: &Incoming) -> ItemResult {
    let item = &incoming.item;
    if receipt.request_hash != incoming.hash {
        return refused(
            item,
            &Refusal::new(
                409,
                wire_codes::IDEMPOTENCY_KEY_REUSED,
                "this key was used for a different item",
            ),
        );
    }
    match receipt.state {
        ReceiptState::Buffered => ItemResult {
            replayed: true,
            ..buffered(item, None)
        },
        ReceiptState::Final => receipt.stored_answer().unwrap_or_else(|| {
            tracing::error!(key = %item.key, "stored receipt cannot be read; failing closed");
            refused(
                item,
                &Refusal::new(
                    409,
                    wire_codes::IDEMPOTENCY_RECEIPT_UNAVAILABLE,
                    "the stored answer for this key cannot be read; it will not run again: a person must decide",
                ),
            )
        }),
    }
}

fn take_new(ctx: &Context<'_>, incoming: &Incoming) -> Result<ItemResult, LedgerError> {
    let item = &incoming.item;
    validate(item).map_err(LedgerError::Refused)?;
    let session_id = item.session_id.to_string();
    let session = match ctx.session(&session_id)? {
        Some(session) if session.device_id != ctx.device.device_id => {
            return Err(LedgerError::Refused(Refusal::new(
                403,
                wire_codes::SESSION_NOT_YOURS,
                "this session belongs to another device",
            )));
        }
        Some(session) => session,
        None => {
            sessions::insert_pending(ctx.conn, &session_id, &ctx.device.device_id)?;
            ctx.session(&session_id)?
                .ok_or_else(|| LedgerError::Corrupt("session vanished".into()))?
        }
    };
    let seq = item.client_seq;
    let slot_taken = || {
        LedgerError::Refused(Refusal::new(
            409,
            wire_codes::SEQ_ALREADY_USED,
            format!("client_seq {seq} of this session is already taken"),
        ))
    };
    // The cursor never rests on a voided slot, so only a slot ahead of it
    // can be one; with nothing taken ahead of the cursor, no slot is.
    let ahead = ctx.ahead(&session_id);
    if seq < session.next_seq
        || (ahead && seq > session.next_seq && sessions::is_voided(ctx.conn, &session_id, seq)?)
        || (ahead
            && seq == session.next_seq
            && sessions::slot(ctx.conn, &session_id, seq)? == sessions::Slot::Buffered)
    {
        return Err(slot_taken());
    }
    let claim = Claim {
        scope: &ctx.device.device_id,
        key: &item.key,
        session_id: Some(session_id.as_str()),
        client_seq: Some(seq),
        command: item.command.as_str(),
        request_hash: &incoming.hash,
        state: ReceiptState::Final,
        item: None,
        received_at: ctx.now,
        skew_ms: ctx.skew_ms,
        response: None,
    };
    if item.command == Command::Void {
        let body: VoidBody = item.body_as().map_err(invalid)?;
        ctx.take_ahead(&session_id);
        if body.void_seq != seq {
            if body.void_seq < session.next_seq
                || receipts::at_seq(ctx.conn, &session_id, body.void_seq)?.is_some()
            {
                return Err(LedgerError::Refused(Refusal::new(
                    409,
                    wire_codes::SEQ_ALREADY_USED,
                    format!(
                        "client_seq {} is already taken; it cannot be voided",
                        body.void_seq
                    ),
                )));
            }
            sessions::void_seq(ctx.conn, &session_id, body.void_seq, &item.key.to_string())?;
        }
        let answer = done(item, outcome_for(ctx.device), ctx.now, vec![]);
        claim_answered(ctx, claim, &answer, &incoming.canonical)?;
        drain(ctx, &session_id, session.next_seq)?;
        return Ok(answer);
    }
    if seq > session.next_seq {
        ctx.take_ahead(&session_id);
        receipts::claim(
            ctx.conn,
            &Claim {
                state: ReceiptState::Buffered,
                item: Some(&incoming.canonical),
                ..claim
            },
        )?;
        return Ok(buffered(item, Some(ctx.now)));
    }
    // The work first, then the claim with its answer: both sit in this
    // item's savepoint, so a claim that collides undoes the work.
    let answer = apply(ctx, &session, item, ctx.skew_ms)?;
    claim_answered(ctx, claim, &answer, &incoming.canonical)?;
    drain(ctx, &session_id, seq + 1)?;
    Ok(answer)
}

/// Claims the item's key with its final answer, after the work: both sit
/// in the item's savepoint, so a claim that collides undoes the work. A
/// rejected item keeps its `canonical` body for the site's view.
fn claim_answered(
    ctx: &Context<'_>,
    claim: Claim<'_>,
    answer: &ItemResult,
    canonical: &str,
) -> crate::store::sql::Result<()> {
    let response = receipts::to_json(answer)?;
    let rejected = answer.outcome == Some(ItemOutcome::Rejected);
    let (scope, key, received_at) = (claim.scope, claim.key, claim.received_at);
    receipts::claim(
        ctx.conn,
        &Claim {
            response: Some(&response),
            item: rejected.then_some(canonical),
            ..claim
        },
    )?;
    if rejected {
        rejections::rejected(
            ctx.conn,
            scope,
            &key.to_string(),
            answer.reason.as_deref(),
            received_at,
        )?;
    }
    Ok(())
}
