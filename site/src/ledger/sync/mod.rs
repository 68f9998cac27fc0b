//! One `POST /v1/sync` request, item by item, in one SQLite transaction.
//!
//! For each item, in request order: a claimed key answers from its receipt
//! (replayed, or 409 when the body differs); a new key is claimed together
//! with the work it causes, so a refused item leaves no trace and the
//! others still commit (without a savepoint per item unless one is needed:
//! [`Isolation`]). The request reads its keys' claims in one query and
//! each of its sessions once ([`Cursor`]). Items apply in `client_seq` order
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

use std::collections::HashMap;

use crate::sql::{Connection, Transaction, TransactionBehavior};
use serde::Deserialize;
use stockhop::time::UnixMs;
use stockhop::undo;
use stockhop::wire::{
    codes as wire_codes, AcknowledgeBody, Command, ItemOutcome, ItemResult, Mode, OpenSessionBody,
    ScanBody, SyncItem, UndoBody, VoidBody, MAX_ITEMS_PER_REQUEST,
};

use super::devices::Device;
use super::hops::{self, NewHop, SourceMode};
use super::modes::{self, Scanned};
use super::receipts::{self, Claim, Receipt, ReceiptState};
use super::sessions::{self, Session, SessionState};
use super::{operators, periods};
use super::{savepoint, LedgerError, Refusal};
use crate::sql::retry_conflicts;

use crate::limits::{
    DRAIN_CHUNK_ITEMS, MAX_BODY_DEPTH, MAX_BODY_STRING_CHARS, MAX_CLOCK_SKEW_MS,
    MAX_ITEM_BODY_BYTES,
};
/// The largest `client_seq` (and `void_seq`): SQLite stores integers as
/// signed 64-bit. There is no lower cap: the ledger takes any backlog.
pub const MAX_CLIENT_SEQ: u64 = i64::MAX as u64;

// Rejection reasons: business refusals, stored and replayed like any
// answer. Every one the ledger gives is in the core's leaf module, which
// the handheld and the modes read too.
use stockhop::reason as reasons;

/// One item as received: its typed form, the hash of its canonical JSON,
/// and that canonical JSON (kept while the item is buffered).
#[derive(Debug, Clone)]
pub struct Incoming {
    pub item: SyncItem,
    pub hash: String,
    pub canonical: String,
}

impl Incoming {
    pub fn from_value(value: &serde_json::Value) -> Result<Incoming, serde_json::Error> {
        let item = SyncItem::deserialize(value)?;
        let mut canonical = String::new();
        receipts::write_canonical(value, &mut canonical);
        Ok(Incoming {
            item,
            hash: receipts::canonical_hash(&canonical),
            canonical,
        })
    }
}

/// A parsed request: who says they sent it, when, and its items.
#[derive(Debug, Clone)]
pub struct ParsedRequest {
    pub device_id: String,
    pub sent_at: UnixMs,
    pub items: Vec<Incoming>,
}

/// Parses a request body (already within the size limit). Every failure is
/// a 400 for the request as a whole.
pub fn parse_request(body: &[u8]) -> Result<ParsedRequest, Refusal> {
    let malformed = |message: String| Refusal::new(400, wire_codes::MALFORMED_REQUEST, message);
    let value: serde_json::Value =
        serde_json::from_slice(body).map_err(|err| malformed(format!("not JSON: {err}")))?;
    let items = value
        .get("items")
        .and_then(serde_json::Value::as_array)
        .ok_or_else(|| malformed("missing items array".into()))?;
    if items.len() > MAX_ITEMS_PER_REQUEST {
        return Err(Refusal::new(
            400,
            wire_codes::TOO_MANY_ITEMS,
            format!(
                "{} items; at most {MAX_ITEMS_PER_REQUEST} a request",
                items.len()
            ),
        ));
    }
    #[derive(Deserialize)]
    struct Envelope {
        device_id: String,
        sent_at: UnixMs,
    }
    let envelope = Envelope::deserialize(&value).map_err(|err| malformed(err.to_string()))?;
    let items = items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            Incoming::from_value(item).map_err(|err| malformed(format!("item {i}: {err}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ParsedRequest {
        device_id: envelope.device_id,
        sent_at: envelope.sent_at,
        items,
    })
}

/// What every item of one request shares.
struct Context<'a> {
    device: &'a Device,
    /// Server clock when the request arrived; `recorded_at` of what applies.
    now: UnixMs,
    /// Server receive time − the device's `sent_at`.
    skew_ms: i64,
    /// The end of the last closed period, read once in the transaction.
    closed_until: Option<UnixMs>,
    /// Buffered items this transaction may still apply
    /// ([`DRAIN_CHUNK_ITEMS`]); a drain that runs out parks the session's
    /// cursor on the next buffered slot for [`drain_parked`] to go on from.
    drain_budget: std::cell::Cell<usize>,
    /// Sessions whose drain ran out of the budget in this transaction.
    parked: std::cell::RefCell<Vec<String>>,
    /// How one item's writes are kept apart from the others'.
    isolation: Isolation,
    /// The sessions this transaction has read, by id.
    cursors: std::cell::RefCell<HashMap<String, Cursor>>,
}

/// A session as one transaction sees it: read once, its cursor moved here
/// and written back once, before the commit ([`Context::write_cursors`]).
/// Only the ledger's transaction, which holds the write lock, moves it.
#[derive(Debug, Clone)]
struct Cursor {
    session: Session,
    /// `next_seq` as stored.
    stored_next_seq: u64,
    /// Whether a slot at or past the cursor may be taken: read with the
    /// session, and set by this transaction when it buffers or voids.
    /// While it is false every slot from the cursor on is empty, so an
    /// item in its turn moves the cursor on without reading a slot.
    ahead: bool,
}

impl Context<'_> {
    /// The session, from this transaction's copy or else the database.
    fn session(&self, conn: &Connection, session_id: &str) -> Result<Option<Session>, LedgerError> {
        if let Some(cursor) = self.cursors.borrow().get(session_id) {
            return Ok(Some(cursor.session.clone()));
        }
        let Some((session, ahead)) = sessions::find_with_ahead(conn, session_id)? else {
            return Ok(None);
        };
        let cursor = Cursor {
            stored_next_seq: session.next_seq,
            session: session.clone(),
            ahead,
        };
        self.cursors
            .borrow_mut()
            .insert(session_id.to_owned(), cursor);
        Ok(Some(session))
    }

    /// Reads a session's row again after this transaction changed it
    /// (opened, closed), keeping the cursor this transaction moved.
    fn reread_session(&self, conn: &Connection, session_id: &str) -> Result<(), LedgerError> {
        let session = sessions::find(conn, session_id)?
            .ok_or_else(|| LedgerError::Corrupt(format!("session {session_id} vanished")))?;
        if let Some(cursor) = self.cursors.borrow_mut().get_mut(session_id) {
            cursor.session = Session {
                next_seq: cursor.session.next_seq,
                ..session
            };
        }
        Ok(())
    }

    /// Whether slots at or past the session's cursor may be taken.
    fn ahead(&self, session_id: &str) -> bool {
        self.cursors
            .borrow()
            .get(session_id)
            .is_none_or(|cursor| cursor.ahead)
    }

    /// Notes that this transaction takes a slot ahead of the cursor.
    fn take_ahead(&self, session_id: &str) {
        if let Some(cursor) = self.cursors.borrow_mut().get_mut(session_id) {
            cursor.ahead = true;
        }
    }

    /// Moves the cursor of a session this transaction has read.
    fn move_cursor(&self, session_id: &str, next_seq: u64) -> Result<(), LedgerError> {
        let mut cursors = self.cursors.borrow_mut();
        let cursor = cursors.get_mut(session_id).ok_or_else(|| {
            LedgerError::Corrupt(format!("session {session_id} moved before it was read"))
        })?;
        cursor.session.next_seq = next_seq;
        Ok(())
    }

    /// Writes back every cursor this transaction moved.
    fn write_cursors(&self, conn: &Connection) -> Result<(), LedgerError> {
        for (session_id, cursor) in self.cursors.borrow().iter() {
            if cursor.session.next_seq != cursor.stored_next_seq {
                sessions::set_next_seq(conn, session_id, cursor.session.next_seq)?;
            }
        }
        Ok(())
    }
}

/// How a transaction keeps a refused item from leaving a trace.
///
/// A savepoint per item is what makes a refusal leave nothing behind, but
/// it costs: SQLite copies every page an item touches into the savepoint's
/// journal, and on PostgreSQL `SAVEPOINT` and `RELEASE` are two more round
/// trips an item. Most items are never refused, or are refused before they
/// write. So a request first runs without savepoints
/// ([`Isolation::Optimistic`]): an item refused before any write has left
/// nothing to undo, and one refused after it wrote rewinds the whole
/// transaction, which runs again item by item in savepoints
/// ([`Isolation::PerItem`]) and gives every item the answer it would have
/// had. The work is a function of the database and the request (the clock
/// is read once, at the edge), so the second run repeats the first up to
/// the refused item, and nothing of the first run was kept or answered.
///
/// On PostgreSQL a refusal can also come from the database (a unique
/// constraint), and a failed statement aborts the whole transaction, so
/// it cannot be stepped past: such a refusal rewinds too, wherever it is
/// met ([`Connection::transaction_aborted`]). That includes a write put off
/// to travel with the next statement ([`crate::sql::Statement::execute_later`]),
/// whose failure the next item's statement, or the commit, reports; in
/// the second run each item's savepoint sends its writes before it ends,
/// so a failure is its own item's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Isolation {
    Optimistic,
    PerItem,
}

/// Runs one item's `work` so that a refusal leaves no trace: in a
/// savepoint, or without one, rewinding the transaction when the refused
/// item had written (the count of changed rows moved) or the refusal
/// aborted it (PostgreSQL).
fn isolate<T>(
    conn: &Connection,
    ctx: &Context<'_>,
    work: impl FnOnce(&Connection) -> Result<T, LedgerError>,
) -> Result<T, LedgerError> {
    match ctx.isolation {
        Isolation::PerItem => {
            // The sessions' copies roll back with the savepoint.
            let cursors = ctx.cursors.borrow().clone();
            let result = savepoint(conn, work);
            if result.is_err() {
                *ctx.cursors.borrow_mut() = cursors;
            }
            result
        }
        Isolation::Optimistic => {
            let before = conn.total_changes();
            match work(conn) {
                Err(LedgerError::Refused(_))
                    if conn.total_changes() != before || conn.transaction_aborted() =>
                {
                    Err(LedgerError::Rewind)
                }
                other => other,
            }
        }
    }
}

/// Runs `attempt` optimistically, and once more with a savepoint per item
/// when it asks to be rewound, on either engine. A serialization conflict
/// runs it all again ([`retry_conflicts`]).
fn with_isolation<T>(
    mut attempt: impl FnMut(Isolation) -> Result<T, LedgerError>,
) -> Result<T, LedgerError> {
    retry_conflicts(|| match attempt(Isolation::Optimistic) {
        Err(LedgerError::Rewind) => attempt(Isolation::PerItem),
        other => other,
    })
}

/// Ends an attempt's transaction with what its work came to: sends the
/// writes it put off and commits. A refusal met while the transaction is
/// aborted (PostgreSQL: a statement, or a write put off, violated a
/// constraint) rewinds an optimistic attempt.
fn conclude<T>(
    tx: Transaction<'_>,
    isolation: Isolation,
    work: Result<T, LedgerError>,
) -> Result<T, LedgerError> {
    let work = work.and_then(|value| {
        tx.flush()?;
        Ok(value)
    });
    match work {
        Ok(value) => {
            tx.commit().map_err(LedgerError::Sqlite)?;
            Ok(value)
        }
        Err(LedgerError::Refused(_))
            if isolation == Isolation::Optimistic && tx.transaction_aborted() =>
        {
            Err(LedgerError::Rewind)
        }
        Err(err) => Err(err),
    }
}

impl<'a> Context<'a> {
    fn new(
        tx: &Connection,
        device: &'a Device,
        now: UnixMs,
        skew_ms: i64,
        isolation: Isolation,
    ) -> Result<Context<'a>, LedgerError> {
        Ok(Context {
            device,
            now,
            skew_ms: skew_ms.clamp(-MAX_CLOCK_SKEW_MS, MAX_CLOCK_SKEW_MS),
            closed_until: periods::closed_until(tx)?,
            drain_budget: std::cell::Cell::new(DRAIN_CHUNK_ITEMS),
            parked: std::cell::RefCell::new(Vec::new()),
            isolation,
            cursors: std::cell::RefCell::new(HashMap::new()),
        })
    }
}

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
    with_isolation(|isolation| run_once(conn, device, sent_at, items, held, now, isolation))
}

/// [`run_parked`] in one transaction, isolating items as `isolation` says.
fn run_once(
    conn: &mut Connection,
    device: &Device,
    sent_at: UnixMs,
    items: &[Incoming],
    held: &[bool],
    now: UnixMs,
    isolation: Isolation,
) -> Result<Ran, LedgerError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(LedgerError::Sqlite)?;
    let work = run_items(&tx, device, sent_at, items, held, now, isolation);
    conclude(tx, isolation, work)
}

/// [`run_once`]'s work inside its transaction.
fn run_items(
    tx: &Connection,
    device: &Device,
    sent_at: UnixMs,
    items: &[Incoming],
    held: &[bool],
    now: UnixMs,
    isolation: Isolation,
) -> Result<Ran, LedgerError> {
    let ctx = Context::new(tx, device, now, now.since(sent_at), isolation)?;
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
    drain_sessions(tx, &ctx, &touched)?;
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
            match process(tx, &ctx, incoming, known) {
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
    ctx.write_cursors(tx)?;
    Ok(Ran {
        results,
        parked: ctx.parked.into_inner(),
    })
}

/// What the request's one read of its keys' claims says of an item's key.
enum Known<'r> {
    /// Not claimed, and nothing in this request claimed it since.
    Unclaimed,
    /// Claimed with its final answer, which never changes.
    Claimed(&'r Receipt),
    /// Read it again: claimed since by this request, or buffered.
    ReadAgain,
}

fn process(
    conn: &Connection,
    ctx: &Context<'_>,
    incoming: &Incoming,
    known: Known<'_>,
) -> Result<ItemResult, LedgerError> {
    let receipt = match known {
        Known::Unclaimed => None,
        Known::Claimed(receipt) => return Ok(replay(receipt, incoming)),
        Known::ReadAgain => receipts::find(conn, &ctx.device.device_id, &incoming.item.key)?,
    };
    if let Some(receipt) = receipt {
        return Ok(replay(&receipt, incoming));
    }
    isolate(conn, ctx, |conn| take_new(conn, ctx, incoming))
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

fn take_new(
    conn: &Connection,
    ctx: &Context<'_>,
    incoming: &Incoming,
) -> Result<ItemResult, LedgerError> {
    let item = &incoming.item;
    validate(item).map_err(LedgerError::Refused)?;
    let session_id = item.session_id.to_string();
    let session = match ctx.session(conn, &session_id)? {
        Some(session) if session.device_id != ctx.device.device_id => {
            return Err(LedgerError::Refused(Refusal::new(
                403,
                wire_codes::SESSION_NOT_YOURS,
                "this session belongs to another device",
            )));
        }
        Some(session) => session,
        None => {
            sessions::insert_pending(conn, &session_id, &ctx.device.device_id)?;
            ctx.session(conn, &session_id)?
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
        || (ahead && seq > session.next_seq && sessions::is_voided(conn, &session_id, seq)?)
        || (ahead
            && seq == session.next_seq
            && sessions::slot(conn, &session_id, seq)? == sessions::Slot::Buffered)
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
                || receipts::at_seq(conn, &session_id, body.void_seq)?.is_some()
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
            sessions::void_seq(conn, &session_id, body.void_seq, &item.key.to_string())?;
        }
        let answer = done(item, outcome_for(ctx.device), ctx.now, vec![]);
        claim_answered(conn, claim, &answer, &incoming.canonical)?;
        drain(conn, ctx, &session_id, session.next_seq)?;
        return Ok(answer);
    }
    if seq > session.next_seq {
        ctx.take_ahead(&session_id);
        receipts::claim(
            conn,
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
    let answer = apply(conn, ctx, &session, item, ctx.skew_ms)?;
    claim_answered(conn, claim, &answer, &incoming.canonical)?;
    drain(conn, ctx, &session_id, seq + 1)?;
    Ok(answer)
}

/// Claims the item's key with its final answer, after the work: both sit
/// in the item's savepoint, so a claim that collides undoes the work. A
/// rejected item keeps its `canonical` body for the site's view.
fn claim_answered(
    conn: &Connection,
    claim: Claim<'_>,
    answer: &ItemResult,
    canonical: &str,
) -> crate::sql::Result<()> {
    let response = receipts::to_json(answer)?;
    let rejected = answer.outcome == Some(ItemOutcome::Rejected);
    receipts::claim(
        conn,
        &Claim {
            response: Some(&response),
            item: rejected.then_some(canonical),
            ..claim
        },
    )
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
            drain_sessions(&tx, &ctx, sessions)?;
            ctx.write_cursors(&tx)?;
            Ok(ctx.parked.into_inner())
        })();
        conclude(tx, isolation, work)
    })
}

/// Drains each of `session_ids` of this device whose cursor rests on a
/// buffered slot, within the transaction's budget.
fn drain_sessions(
    conn: &Connection,
    ctx: &Context<'_>,
    session_ids: &[String],
) -> Result<(), LedgerError> {
    for session_id in session_ids {
        let Some(session) = ctx.session(conn, session_id)? else {
            continue;
        };
        if session.device_id != ctx.device.device_id
            || !ctx.ahead(session_id)
            || sessions::slot(conn, session_id, session.next_seq)? != sessions::Slot::Buffered
        {
            continue;
        }
        if ctx.drain_budget.get() == 0 {
            park(ctx, session_id);
            continue;
        }
        drain(conn, ctx, session_id, session.next_seq)?;
    }
    Ok(())
}

fn park(ctx: &Context<'_>, session_id: &str) {
    let mut parked = ctx.parked.borrow_mut();
    if !parked.iter().any(|s| s == session_id) {
        parked.push(session_id.to_owned());
    }
}

/// Moves the session's cursor from `from_seq` past every slot that is
/// filled, applying buffered items on the way, as many as the
/// transaction's budget allows: the cursor parks on the next buffered
/// slot when it runs out.
fn drain(
    conn: &Connection,
    ctx: &Context<'_>,
    session_id: &str,
    from_seq: u64,
) -> Result<(), LedgerError> {
    let mut next = from_seq;
    while ctx.ahead(session_id) {
        match sessions::slot(conn, session_id, next)? {
            sessions::Slot::Empty => break,
            sessions::Slot::Buffered if ctx.drain_budget.get() == 0 => {
                park(ctx, session_id);
                break;
            }
            sessions::Slot::Buffered => {
                ctx.drain_budget.set(ctx.drain_budget.get() - 1);
                let receipt = receipts::at_seq(conn, session_id, next)?.ok_or_else(|| {
                    LedgerError::Corrupt(format!("slot {next} of {session_id} vanished"))
                })?;
                apply_buffered(conn, ctx, session_id, &receipt)?;
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
    conn: &Connection,
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
        .session(conn, session_id)?
        .ok_or_else(|| LedgerError::Corrupt(format!("session {session_id} vanished")))?;
    let answer = match isolate(conn, ctx, |conn| {
        apply(conn, ctx, &session, &item, receipt.skew_ms)
    }) {
        Ok(answer) => answer,
        Err(LedgerError::Refused(refusal)) => refused(&item, &refusal),
        Err(err) => return Err(err),
    };
    receipts::finish(conn, &ctx.device.device_id, &item.key, &answer)?;
    Ok(())
}

/// Does what an item says, in its turn.
fn apply(
    conn: &Connection,
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
            if !operators::admits(conn, &body.operator_id)? {
                return reject(reasons::UNKNOWN_OPERATOR);
            }
            if let Some(reason) = modes::open_refusal(conn, ctx.device, &body)? {
                return reject(reason);
            }
            sessions::open(conn, &session.session_id, &body, item.occurred_at)?;
            ctx.reread_session(conn, &session.session_id)?;
            Ok(done(item, ok, ctx.now, vec![]))
        }
        Command::CloseSession => match session.state {
            SessionState::Open => {
                sessions::close(conn, &session.session_id, item.occurred_at)?;
                ctx.reread_session(conn, &session.session_id)?;
                modes::close(conn, ctx.device, session, item.occurred_at)?;
                Ok(done(item, ok, ctx.now, vec![]))
            }
            SessionState::Pending => reject(reasons::SESSION_NOT_OPEN),
            SessionState::Closed => reject(reasons::SESSION_ALREADY_CLOSED),
        },
        Command::Scan | Command::Undo if session.state == SessionState::Pending => {
            reject(reasons::SESSION_NOT_OPEN)
        }
        Command::Scan => scan(conn, ctx, session, item, skew_ms),
        Command::Undo => undo(conn, ctx, item, skew_ms),
        Command::Void => Ok(done(item, ok, ctx.now, vec![])),
        Command::Acknowledge => acknowledge(conn, ctx, item),
    }
}

/// An operator dealt with a rejected item on the handheld: the decision
/// it waits as is settled (unless a person settled it first).
fn acknowledge(
    conn: &Connection,
    ctx: &Context<'_>,
    item: &SyncItem,
) -> Result<ItemResult, LedgerError> {
    use super::decision_log::{self, actions, kinds};
    let body: AcknowledgeBody = item.body_as().map_err(invalid)?;
    let device_id = &ctx.device.device_id;
    let target = receipts::find(conn, device_id, &body.target_key)?;
    let answer = target.as_ref().and_then(Receipt::stored_answer);
    let (Some(target), Some(answer)) = (target, answer) else {
        return Ok(rejected(item, reasons::UNKNOWN_TARGET, ctx.now));
    };
    if answer.outcome != Some(ItemOutcome::Rejected) {
        return Ok(rejected(item, reasons::TARGET_NOT_REJECTED, ctx.now));
    }
    let id = decision_log::item_id(device_id, &target.key);
    if !decision_log::is_settled(conn, &id)? {
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
            conn,
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
    conn: &Connection,
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
        match modes::scan(conn, ctx.device, session, item, hop, ctx.now)? {
            Scanned::Applied(hop_ids) => done(item, ItemOutcome::Applied, ctx.now, hop_ids),
            Scanned::Simulated(hop_ids) => done(item, ItemOutcome::Simulated, ctx.now, hop_ids),
            Scanned::Rejected(reason) => rejected(item, reason, ctx.now),
        },
    )
}

fn undo(
    conn: &Connection,
    ctx: &Context<'_>,
    item: &SyncItem,
    skew_ms: i64,
) -> Result<ItemResult, LedgerError> {
    let body: UndoBody = item.body_as().map_err(invalid)?;
    let reject = |reason: &str| Ok(rejected(item, reason, ctx.now));
    let Some(target) = receipts::find(conn, &ctx.device.device_id, &body.target_key)? else {
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
        Command::Scan => hops::by_key(conn, &ctx.device.device_id, &target_key)?,
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
        let hop_id = hops::append(conn, &hop)?;
        return Ok(done(item, ItemOutcome::Simulated, ctx.now, vec![hop_id]));
    }
    hop.source_mode = SourceMode::Live;
    Ok(match modes::undo(conn, &original, hop)? {
        Scanned::Applied(hop_ids) => done(item, ItemOutcome::Applied, ctx.now, hop_ids),
        Scanned::Simulated(hop_ids) => done(item, ItemOutcome::Simulated, ctx.now, hop_ids),
        Scanned::Rejected(reason) => rejected(item, reason, ctx.now),
    })
}

/// Checks what serde could not: sequence numbers, body sizes and shapes,
/// identifiers.
fn validate(item: &SyncItem) -> Result<(), Refusal> {
    let bad = |message: String| Refusal::new(422, wire_codes::INVALID_ITEM, message);
    if item.client_seq == 0 || item.client_seq > MAX_CLIENT_SEQ {
        return Err(bad(format!("client_seq runs from 1 to {MAX_CLIENT_SEQ}")));
    }
    check_body(&item.body).map_err(bad)?;
    let field = |name: &'static str, value: Option<&str>| match value {
        Some(text) => crate::ident::check(name, text).map_err(|err| bad(err.to_string())),
        None => Ok(()),
    };
    let shape = |err: serde_json::Error| bad(format!("{} body: {err}", item.command.as_str()));
    match item.command {
        Command::OpenSession => {
            let body: OpenSessionBody = item.body_as().map_err(shape)?;
            field("operator_id", Some(&body.operator_id))
        }
        Command::Scan => {
            let body: ScanBody = item.body_as().map_err(shape)?;
            if body.epc.is_none() && body.code.is_none() {
                return Err(bad("a scan names an epc or a code".into()));
            }
            field("epc", body.epc.as_deref())?;
            field("code", body.code.as_deref())?;
            field("bin", body.bin.as_deref())?;
            modes::validate_scan(item)
        }
        Command::Undo => item.body_as::<UndoBody>().map(drop).map_err(shape),
        Command::Void => {
            let body: VoidBody = item.body_as().map_err(shape)?;
            if body.void_seq == 0 || body.void_seq > MAX_CLIENT_SEQ {
                return Err(bad(format!("void_seq runs from 1 to {MAX_CLIENT_SEQ}")));
            }
            Ok(())
        }
        Command::CloseSession => Ok(()),
        Command::Acknowledge => item.body_as::<AcknowledgeBody>().map(drop).map_err(shape),
    }
}

/// Bounds what any body may store, whatever its command reads from it:
/// its size, its depth, every string and key in it.
fn check_body(body: &serde_json::Value) -> Result<(), String> {
    fn walk(value: &serde_json::Value, depth: usize) -> Result<(), String> {
        use serde_json::Value;
        let string = |text: &str| {
            if text.chars().count() > MAX_BODY_STRING_CHARS {
                Err(format!(
                    "body strings are limited to {MAX_BODY_STRING_CHARS} characters"
                ))
            } else {
                Ok(())
            }
        };
        if depth > MAX_BODY_DEPTH {
            return Err(format!("body nested deeper than {MAX_BODY_DEPTH} levels"));
        }
        match value {
            Value::String(text) => string(text),
            Value::Array(items) => items.iter().try_for_each(|v| walk(v, depth + 1)),
            Value::Object(fields) => fields.iter().try_for_each(|(key, v)| {
                string(key)?;
                walk(v, depth + 1)
            }),
            Value::Null | Value::Bool(_) | Value::Number(_) => Ok(()),
        }
    }
    walk(body, 0)?;
    let bytes = serde_json::to_vec(body).map_or(usize::MAX, |json| json.len());
    if bytes > MAX_ITEM_BODY_BYTES {
        return Err(format!(
            "body of {bytes} bytes; at most {MAX_ITEM_BODY_BYTES}"
        ));
    }
    Ok(())
}

fn invalid(err: serde_json::Error) -> LedgerError {
    LedgerError::Refused(Refusal::new(422, wire_codes::INVALID_ITEM, err.to_string()))
}

fn outcome_for(device: &Device) -> ItemOutcome {
    if device.commissioned {
        ItemOutcome::Applied
    } else {
        ItemOutcome::Simulated
    }
}

fn done(item: &SyncItem, outcome: ItemOutcome, now: UnixMs, hop_ids: Vec<i64>) -> ItemResult {
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

fn rejected(item: &SyncItem, reason: &str, now: UnixMs) -> ItemResult {
    ItemResult {
        outcome: Some(ItemOutcome::Rejected),
        reason: Some(reason.to_owned()),
        ..done(item, ItemOutcome::Rejected, now, vec![])
    }
}

fn buffered(item: &SyncItem, now: Option<UnixMs>) -> ItemResult {
    ItemResult {
        status: 202,
        recorded_at: now,
        ..done(item, ItemOutcome::Buffered, UnixMs::default(), vec![])
    }
}

fn refused(item: &SyncItem, refusal: &Refusal) -> ItemResult {
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
