//! One `POST /v1/sync` request, item by item, in one SQLite transaction.
//!
//! For each item, in request order: a claimed key answers from its receipt
//! (replayed, or 409 when the body differs); a new key is claimed together
//! with the work it causes, so a refused item leaves no trace and the
//! others still commit (without a savepoint per item unless one is needed:
//! [`isolation::Isolation`]). The request reads its keys' claims in one query and
//! each of its sessions once ([`context::Cursor`]). Items apply in `client_seq` order
//! per session: an item ahead of a gap is stored and answered `buffered`,
//! and whenever the gap fills (by the missing item or a `void`) the
//! buffered items behind it apply, in order: up to [`DRAIN_CHUNK_ITEMS`]
//! in the same transaction, the rest in further transactions of that many
//! ([`drain_parked`]), each durable, so a long backlog never holds the
//! write lock for long. Until then they answer `buffered`.
//!
//! Decisions the protocol leaves open, made here:
//!
//! * A `void` takes effect at once, whatever its place: it occupies its
//!   own `client_seq` and passes over `body.void_seq` (the same slot when
//!   the device sends it there). A slot that is applied or buffered cannot
//!   be voided (409 `SEQ_ALREADY_USED`).
//! * An item refused with a 4xx when it arrives in its turn is not stored:
//!   its slot stays open, so the device can resend it once the conflict is
//!   gone, or void it. An item refused when it applies from the buffer was
//!   already accepted (202), so the refusal is its stored final answer and
//!   the session moves on.
//! * A scan or undo in a session that was never opened is rejected
//!   (`session_not_open`); a closed session's later items apply.
//! * What a scan checks and changes is its mode's business
//!   ([`super::modes`]); so is what `open_session` needs and what
//!   `close_session` computes, and how an undo compensates a scan
//!   ([`modes::undo`]); which scans can be undone, and until when, is the
//!   core's rule ([`stockhop::undo`]), which the handheld reads too.
//! * An `acknowledge` applies in any state of its session, like a `void`:
//!   it settles the decision its rejected target waits as on the site's
//!   view ([`super::decision_log`]). A rejected item keeps its body in its
//!   receipt, so that decision can say what was scanned where.
//!
//! The stages, one file each, share one [`context::Context`] (the
//! transaction's connection, the device, the clock read once, the
//! sessions read): [`parse`] (the request and each item's shape),
//! [`claim`] (a known key's answer, a new key's slot and claim),
//! [`apply`] (an item in its turn), [`drain`] (the buffered items behind
//! a gap), [`answer`] (the answers' shapes) and [`isolation`] (how a
//! refused item leaves no trace).

mod answer;
mod apply;
mod claim;
mod context;
mod drain;
mod isolation;
mod parse;

use stockhop::time::UnixMs;
use stockhop::wire::{codes as wire_codes, ItemOutcome, ItemResult};

use self::answer::refused;
use self::claim::{process, Known};
use self::context::Context;
use self::drain::drain_sessions;
use self::isolation::{conclude, with_isolation, Isolation};
use super::devices::Device;
use super::receipts::{self, ReceiptState};
use super::{LedgerError, Refusal};
use crate::store::sql::{Connection, TransactionBehavior};

pub use self::parse::{parse_request, Incoming, ParsedRequest, MAX_CLIENT_SEQ};

/// A request's answers, and the sessions whose backlog is left to
/// [`drain_parked`].
#[derive(Debug)]
pub struct Ran {
    pub results: Vec<ItemResult>,
    pub parked: Vec<String>,
}

/// Runs a request's items in one transaction and returns one result per
/// item, in request order. `held[i]` says another request holds item i's
/// key; that item is answered `OPERATION_IN_PROGRESS` and not touched.
pub fn run(
    conn: &mut Connection,
    device: &Device,
    sent_at: UnixMs,
    items: &[Incoming],
    held: &[bool],
    now: UnixMs,
) -> Result<Vec<ItemResult>, LedgerError> {
    run_parked(conn, device, sent_at, items, held, now).map(|ran| ran.results)
}

/// [`run`], also naming the sessions whose backlog it left parked.
pub fn run_parked(
    conn: &mut Connection,
    device: &Device,
    sent_at: UnixMs,
    items: &[Incoming],
    held: &[bool],
    now: UnixMs,
) -> Result<Ran, LedgerError> {
    let request = Request {
        device,
        sent_at,
        items,
        held,
        now,
    };
    with_isolation(|isolation| run_once(conn, request, isolation))
}

/// One request's items and what they are run with: the arguments of
/// [`run_parked`], carried together through its attempts.
#[derive(Clone, Copy)]
struct Request<'a> {
    device: &'a Device,
    sent_at: UnixMs,
    items: &'a [Incoming],
    held: &'a [bool],
    now: UnixMs,
}

/// [`run_parked`] in one transaction, isolating items as `isolation` says.
fn run_once(
    conn: &mut Connection,
    request: Request<'_>,
    isolation: Isolation,
) -> Result<Ran, LedgerError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(LedgerError::Sqlite)?;
    let work = Context::new(
        &tx,
        request.device,
        request.now,
        request.now.since(request.sent_at),
        isolation,
    )
    .and_then(|ctx| run_items(ctx, request));
    conclude(tx, isolation, work)
}

/// [`run_once`]'s work inside its transaction.
fn run_items(ctx: Context<'_>, request: Request<'_>) -> Result<Ran, LedgerError> {
    let Request {
        device,
        items,
        held,
        ..
    } = request;
    let tx = ctx.conn;
    // A drain an earlier request left parked (a crash between chunks) goes
    // on first, so this request's items find their sessions where the
    // order has them; the device resends buffered items, so it comes back.
    let mut touched: Vec<String> = Vec::new();
    for incoming in items {
        let id = incoming.item.session_id.to_string();
        if !touched.contains(&id) {
            touched.push(id);
        }
    }
    drain_sessions(&ctx, &touched)?;
    // Every key's claim, read at once. Only this request claims keys of
    // this device while it holds the write lock, so a key it did not find
    // stays unclaimed until an item of this request claims it; an item
    // whose key came earlier in the request, or whose receipt was
    // buffered (a drain may finish it), reads its receipt again.
    let keys: Vec<_> = items.iter().map(|incoming| incoming.item.key).collect();
    let claimed = receipts::find_many(tx, &device.device_id, &keys)?;
    let mut results = Vec::with_capacity(items.len());
    for (i, incoming) in items.iter().enumerate() {
        let key = &incoming.item.key;
        let known = if keys[..i].contains(key) {
            Known::ReadAgain
        } else {
            match claimed.get(&key.to_string()) {
                None => Known::Unclaimed,
                Some(receipt) if receipt.state == ReceiptState::Final => Known::Claimed(receipt),
                Some(_) => Known::ReadAgain,
            }
        };
        let result = if held.get(i).copied().unwrap_or(false) {
            refused(
                &incoming.item,
                &Refusal::new(
                    409,
                    wire_codes::OPERATION_IN_PROGRESS,
                    "another request is working on this key",
                ),
            )
        } else {
            match process(&ctx, incoming, known) {
                Ok(result) => result,
                // A refusal that aborted the transaction is not this item's
                // alone: [`conclude`] rewinds.
                Err(LedgerError::Refused(refusal)) if !tx.transaction_aborted() => {
                    refused(&incoming.item, &refusal)
                }
                Err(err) => return Err(err),
            }
        };
        results.push(result);
    }
    // An item answered `buffered` above may have applied when a later item
    // of this request filled its gap: answer it with what it became.
    for result in &mut results {
        if result.outcome == Some(ItemOutcome::Buffered) {
            if let Some(receipt) = receipts::find(tx, &device.device_id, &result.key)? {
                if receipt.state == ReceiptState::Final {
                    if let Some(mut answer) = receipt.stored_answer() {
                        answer.replayed = result.replayed;
                        *result = answer;
                    }
                }
            }
        }
    }
    let parked = ctx.finish()?;
    Ok(Ran { results, parked })
}

/// Goes on with the drains of `sessions` (of `device`) that a request
/// left parked: one chunk of [`DRAIN_CHUNK_ITEMS`] in its own durable
/// transaction, at `now`. Returns the sessions still parked (call again).
pub fn drain_parked(
    conn: &mut Connection,
    device: &Device,
    sessions: &[String],
    now: UnixMs,
) -> Result<Vec<String>, LedgerError> {
    with_isolation(|isolation| {
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(LedgerError::Sqlite)?;
        let work = (|| {
            let ctx = Context::new(&tx, device, now, 0, isolation)?;
            drain_sessions(&ctx, sessions)?;
            ctx.finish()
        })();
        conclude(tx, isolation, work)
    })
}
