//! The buffered items behind a gap, applied in `client_seq` order once it
//! fills, as many as the transaction's budget allows; a session whose
//! drain runs out is parked for [`super::drain_parked`] to go on with.

use stockhop::wire::SyncItem;

use super::answer::refused;
use super::apply::apply;
use super::context::Context;
use crate::ledger::receipts::{self, Receipt};
use crate::ledger::sessions;
use crate::ledger::LedgerError;

/// Drains each of `session_ids` of this device whose cursor rests on a
/// buffered slot, within the transaction's budget.
pub(super) fn drain_sessions(ctx: &Context<'_>, session_ids: &[String]) -> Result<(), LedgerError> {
    for session_id in session_ids {
        let Some(session) = ctx.session(session_id)? else {
            continue;
        };
        if session.device_id != ctx.device.device_id
            || !ctx.ahead(session_id)
            || sessions::slot(ctx.conn, session_id, session.next_seq)? != sessions::Slot::Buffered
        {
            continue;
        }
        if ctx.drain_budget.get() == 0 {
            ctx.park(session_id);
            continue;
        }
        drain(ctx, session_id, session.next_seq)?;
    }
    Ok(())
}

/// Moves the session's cursor from `from_seq` past every slot that is
/// filled, applying buffered items on the way, as many as the
/// transaction's budget allows: the cursor parks on the next buffered
/// slot when it runs out.
pub(super) fn drain(ctx: &Context<'_>, session_id: &str, from_seq: u64) -> Result<(), LedgerError> {
    let mut next = from_seq;
    while ctx.ahead(session_id) {
        match sessions::slot(ctx.conn, session_id, next)? {
            sessions::Slot::Empty => break,
            sessions::Slot::Buffered if ctx.drain_budget.get() == 0 => {
                ctx.park(session_id);
                break;
            }
            sessions::Slot::Buffered => {
                ctx.drain_budget.set(ctx.drain_budget.get() - 1);
                let receipt = receipts::at_seq(ctx.conn, session_id, next)?.ok_or_else(|| {
                    LedgerError::Corrupt(format!("slot {next} of {session_id} vanished"))
                })?;
                apply_buffered(ctx, session_id, &receipt)?;
            }
            sessions::Slot::Done | sessions::Slot::Voided => {}
        }
        next += 1;
    }
    ctx.move_cursor(session_id, next)
}

/// Applies a buffered item whose turn came. It was accepted with 202, so
/// even a refusal now is its final, stored answer and the session moves on.
fn apply_buffered(
    ctx: &Context<'_>,
    session_id: &str,
    receipt: &Receipt,
) -> Result<(), LedgerError> {
    let text = receipt.item.as_deref().ok_or_else(|| {
        LedgerError::Corrupt(format!("buffered item {} has no body", receipt.key))
    })?;
    let item: SyncItem = serde_json::from_str(text)
        .map_err(|err| LedgerError::Corrupt(format!("buffered item {}: {err}", receipt.key)))?;
    let session = ctx
        .session(session_id)?
        .ok_or_else(|| LedgerError::Corrupt(format!("session {session_id} vanished")))?;
    let answer = match ctx.isolate(|| apply(ctx, &session, &item, receipt.skew_ms)) {
        Ok(answer) => answer,
        Err(LedgerError::Refused(refusal)) => refused(&item, &refusal),
        Err(err) => return Err(err),
    };
    receipts::finish(ctx.conn, &ctx.device.device_id, &item.key, &answer)?;
    Ok(())
}
