//! An item in its turn: what its command does to its session and the
//! ledger (open, close, scan through its mode, undo, void, acknowledge).

use stockhop::undo;
use stockhop::wire::{
    AcknowledgeBody, Command, ItemOutcome, ItemResult, Mode, OpenSessionBody, SyncItem, UndoBody,
};

use super::answer::{done, invalid, outcome_for, rejected};
use super::context::Context;
use crate::ledger::hops::{self, NewHop, SourceMode};
use crate::ledger::modes::{self, Scanned};
use crate::ledger::receipts::{self, Receipt, ReceiptState};
use crate::ledger::sessions::{self, Session, SessionState};
use crate::ledger::{operators, LedgerError};
use stockhop::reason as reasons;

/// Does what an item says, in its turn.
pub(super) fn apply(
    ctx: &Context<'_>,
    session: &Session,
    item: &SyncItem,
    skew_ms: i64,
) -> Result<ItemResult, LedgerError> {
    let ok = outcome_for(ctx.device);
    let reject = |reason: &str| Ok(rejected(item, reason, ctx.now));
    if let Some(reason) = modes::gate(ctx.device, item) {
        return reject(reason);
    }
    match item.command {
        Command::OpenSession => {
            if session.state != SessionState::Pending {
                return reject(reasons::SESSION_ALREADY_OPENED);
            }
            let body: OpenSessionBody = item.body_as().map_err(invalid)?;
            if !operators::admits(ctx.conn, &body.operator_id)? {
                return reject(reasons::UNKNOWN_OPERATOR);
            }
            if let Some(reason) = modes::open_refusal(ctx.conn, ctx.device, &body)? {
                return reject(reason);
            }
            sessions::open(ctx.conn, &session.session_id, &body, item.occurred_at)?;
            ctx.reread_session(&session.session_id)?;
            Ok(done(item, ok, ctx.now, vec![]))
        }
        Command::CloseSession => match session.state {
            SessionState::Open => {
                sessions::close(ctx.conn, &session.session_id, item.occurred_at)?;
                ctx.reread_session(&session.session_id)?;
                modes::close(ctx.conn, ctx.device, session, item.occurred_at)?;
                Ok(done(item, ok, ctx.now, vec![]))
            }
            SessionState::Pending => reject(reasons::SESSION_NOT_OPEN),
            SessionState::Closed => reject(reasons::SESSION_ALREADY_CLOSED),
        },
        Command::Scan | Command::Undo if session.state == SessionState::Pending => {
            reject(reasons::SESSION_NOT_OPEN)
        }
        Command::Scan | Command::Undo if captured_after_site_close(session, item, skew_ms) => {
            reject(reasons::SESSION_CLOSED)
        }
        Command::Scan => scan(ctx, session, item, skew_ms),
        Command::Undo => undo(ctx, item, skew_ms),
        Command::Void => Ok(done(item, ok, ctx.now, vec![])),
        Command::Acknowledge => acknowledge(ctx, item),
    }
}

/// Whether the site closed `session` before `item` was captured. The
/// capture is put on the site's clock with the request's measured skew
/// (the site's clock minus the device's at sending), so a device whose
/// clock runs behind is not let in after the close, nor one ahead kept out
/// of work it did before it.
fn captured_after_site_close(session: &Session, item: &SyncItem, skew_ms: i64) -> bool {
    session.state == SessionState::Closed
        && session
            .site_closed_at
            .is_some_and(|closed| item.occurred_at.0.saturating_add(skew_ms) > closed.0)
}

/// An operator dealt with a rejected item on the handheld: the decision
/// it waits as is settled (unless a person settled it first).
fn acknowledge(ctx: &Context<'_>, item: &SyncItem) -> Result<ItemResult, LedgerError> {
    use crate::ledger::decision_log::{self, actions, kinds};
    let body: AcknowledgeBody = item.body_as().map_err(invalid)?;
    let device_id = &ctx.device.device_id;
    let target = receipts::find(ctx.conn, device_id, &body.target_key)?;
    let answer = target.as_ref().and_then(Receipt::stored_answer);
    let (Some(target), Some(answer)) = (target, answer) else {
        return Ok(rejected(item, reasons::UNKNOWN_TARGET, ctx.now));
    };
    if answer.outcome != Some(ItemOutcome::Rejected) {
        return Ok(rejected(item, reasons::TARGET_NOT_REJECTED, ctx.now));
    }
    let id = decision_log::item_id(device_id, &target.key);
    if !decision_log::is_settled(ctx.conn, &id)? {
        let reason = answer.reason.unwrap_or_default();
        let (action, note) = match body.rescan_key {
            Some(rescan) => (actions::RESCAN, format!("scanned again as {rescan}")),
            None => (
                actions::ACKNOWLEDGE,
                "acknowledged on the handheld".to_owned(),
            ),
        };
        let kind = if target.command == Command::Undo.as_str() {
            kinds::LATE_UNDO
        } else {
            kinds::REJECTED_ITEM
        };
        decision_log::record(
            ctx.conn,
            &decision_log::Entry {
                decision_id: id,
                kind: kind.to_owned(),
                action: action.to_owned(),
                settled_by: format!("device:{device_id}"),
                note,
                settled_at: ctx.now,
                hop_ids: Vec::new(),
                summary: format!(
                    "{} #{} rejected: {reason}",
                    target.command,
                    item_seq(&target)
                ),
            },
        )?;
    }
    Ok(done(item, outcome_for(ctx.device), ctx.now, vec![]))
}

fn item_seq(receipt: &Receipt) -> String {
    receipt
        .client_seq
        .map_or_else(|| "?".to_owned(), |seq| seq.to_string())
}

/// The hop of `kind` a handheld item records: simulated, without unit,
/// bins or mode until its command fills them in.
fn item_hop<'a>(
    ctx: &'a Context<'_>,
    item: &'a SyncItem,
    session_id: &'a str,
    key: &'a str,
    skew_ms: i64,
    kind: &'static str,
) -> NewHop<'a> {
    NewHop {
        device_id: &ctx.device.device_id,
        session_id: Some(session_id),
        key,
        client_seq: Some(item.client_seq),
        command: item.command.as_str(),
        kind,
        mode: None,
        unit_id: None,
        from_bin: None,
        to_bin: None,
        unit_version: None,
        facts: &item.body,
        occurred_at: item.occurred_at,
        recorded_at: ctx.now,
        device_clock_skew_ms: skew_ms,
        source_mode: SourceMode::Sim,
        compensates: None,
        closed_until: ctx.closed_until,
    }
}

fn scan(
    ctx: &Context<'_>,
    session: &Session,
    item: &SyncItem,
    skew_ms: i64,
) -> Result<ItemResult, LedgerError> {
    let session_id = item.session_id.to_string();
    let key = item.key.to_string();
    // The mode fills in the kind, the unit and its places.
    let hop = item_hop(ctx, item, &session_id, &key, skew_ms, "");
    Ok(
        match modes::scan(ctx.conn, ctx.device, session, item, hop, ctx.now)? {
            Scanned::Applied(hop_ids) => done(item, ItemOutcome::Applied, ctx.now, hop_ids),
            Scanned::Simulated(hop_ids) => done(item, ItemOutcome::Simulated, ctx.now, hop_ids),
            Scanned::Rejected(reason) => rejected(item, reason, ctx.now),
        },
    )
}

fn undo(ctx: &Context<'_>, item: &SyncItem, skew_ms: i64) -> Result<ItemResult, LedgerError> {
    let body: UndoBody = item.body_as().map_err(invalid)?;
    let reject = |reason: &str| Ok(rejected(item, reason, ctx.now));
    let Some(target) = receipts::find(ctx.conn, &ctx.device.device_id, &body.target_key)? else {
        return reject(reasons::UNKNOWN_TARGET);
    };
    let command = Command::ALL
        .into_iter()
        .find(|command| command.as_str() == target.command)
        .ok_or_else(|| LedgerError::Corrupt(format!("receipt command {:?}", target.command)))?;
    let outcome = match target.state {
        ReceiptState::Buffered => None,
        _ => target.stored_answer().and_then(|answer| answer.outcome),
    };
    let answered = matches!(
        outcome,
        Some(ItemOutcome::Applied | ItemOutcome::Simulated | ItemOutcome::Rejected)
    );
    if command == Command::Scan && !answered {
        return reject(reasons::TARGET_NOT_APPLIED);
    }
    let target_key = body.target_key.to_string();
    let original = match command {
        Command::Scan => hops::by_key(ctx.conn, &ctx.device.device_id, &target_key)?,
        _ => None,
    };
    let mode: Option<Mode> = original
        .as_ref()
        .and_then(|hop| hop.mode.as_deref())
        .and_then(|m| serde_json::from_value(serde_json::Value::String(m.into())).ok());
    // The rule the handheld reads to offer Undo (stockhop::undo).
    let rule = undo::Target {
        command,
        mode,
        outcome,
        hop_count: usize::from(original.is_some()),
        occurred_at: original
            .as_ref()
            .map_or(item.occurred_at, |hop| hop.occurred_at),
    };
    if let Err(reason) = rule.check(item.occurred_at) {
        return reject(reason);
    }
    let Some(original) = original else {
        return reject(reasons::TARGET_NOT_UNDOABLE);
    };
    let session_id = item.session_id.to_string();
    let key = item.key.to_string();
    let mut hop = item_hop(ctx, item, &session_id, &key, skew_ms, hops::kinds::UNDO);
    hop.mode = mode;
    hop.unit_id = original.unit_id;
    hop.compensates = Some(original.hop_id);
    let live = ctx.device.commissioned && original.source_mode == SourceMode::Live.as_str();
    if !live {
        let hop_id = hops::append(ctx.conn, &hop)?;
        return Ok(done(item, ItemOutcome::Simulated, ctx.now, vec![hop_id]));
    }
    hop.source_mode = SourceMode::Live;
    Ok(match modes::undo(ctx.conn, &original, hop)? {
        Scanned::Applied(hop_ids) => done(item, ItemOutcome::Applied, ctx.now, hop_ids),
        Scanned::Simulated(hop_ids) => done(item, ItemOutcome::Simulated, ctx.now, hop_ids),
        Scanned::Rejected(reason) => rejected(item, reason, ctx.now),
    })
}
