//! The queue runtime: one task, the [`Runtime`] actor, owns the store and
//! the drain state machine. Everything else ([`Queue`], the handle
//! `worker.rs` and the tests hold) sends it commands on a channel and
//! awaits the reply on a one-shot.
//!
//! A turn of the actor takes one event: a command (captures are gathered
//! from the channel and written in one strict transaction, at most
//! [`GROUP_COMMIT_MAX_ITEMS`] a turn), the answer to the request in
//! flight, or the backoff timer. After each turn it steps the drain:
//! restore it from IndexedDB on the first step of a worker life (items
//! found `sending` go out again), lease and send when [`Drain::poll_transmit`]
//! says so, or, once idle, arm the timer from [`Drain::poll_timeout`] and
//! answer whoever asked for the drain. The request itself is awaited
//! beside the channel, never inside a transaction, so captures are
//! written while a request is out.
//!
//! The heartbeat goes out only while the drain is idle: after a drain run
//! that sent something, and whenever a wake (the timer, a page's `wake`)
//! finds one due by [`Heartbeats`]. Its figures are read in their own
//! transaction, it is sent without the drain lock and awaited beside the
//! channel like a sync request, so it never waits behind scans and never
//! holds them up.
//!
//! Architecture invariant: only one runtime writes a queue database (the
//! service worker's; pages reach it by message), and every request is sent
//! under the `stockhop-drain` Web Lock.

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

use futures_channel::{mpsc, oneshot};
use futures_util::future::LocalBoxFuture;
use futures_util::StreamExt;
use gloo_timers::future::TimeoutFuture;
use serde::Serialize;
use uuid::Uuid;

use crate::key::IdempotencyKey;
use crate::queue::capture::{Group, GROUP_COMMIT_MAX_ITEMS};
use crate::queue::heartbeat::beat;
use crate::queue::{BeatOutcome, Capture, Counts, Drain, Heartbeats, Item, TransportOutcome};
use crate::reference::{Pulls, ReferenceMeta, RowKind};
use crate::time::{Millis, UnixMs};
use crate::wire::OpenSessionBody;
use js_sys::Array;
use wasm_bindgen::JsValue;

use super::browser::{self, LockGuard};
use super::cache::FetchedPage;
use super::clock::Clock;
use super::error::QueueError;
use super::message::ReferenceStatus;
use super::store::{CaptureRequest, DeviceConfig, Store};
use super::transport::Transport;

/// The Web Lock every request is sent under, across the worker and its pages.
pub const DRAIN_LOCK: &str = "stockhop-drain";
/// The Background Sync tag registered once captures are waiting.
pub const SYNC_TAG: &str = "stockhop-drain";
/// How often an idle runtime prunes done items: hourly is plenty for a
/// retention counted in days, and each prune is one short transaction.
pub const PRUNE_EVERY: Millis = Millis::from_secs(60 * 60);
/// The version the heartbeat reports when the worker names no build (a
/// queue opened by tests, or by a shell served without a build id): this
/// crate's.
pub const APP_VERSION: &str = env!("CARGO_PKG_VERSION");

/// How the runtime wakes itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Drain whenever there is something to send (off in tests that drive
    /// the drain step by step: then it runs only when asked).
    pub drain_after_capture: bool,
    /// Arm a timer for the next attempt (or heartbeat) after a drain stops.
    pub wake_on_timer: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            drain_after_capture: true,
            wake_on_timer: true,
        }
    }
}

/// How a drain ended: what it sent since it was asked for, and what is left.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DrainReport {
    /// Requests sent and items in them.
    pub requests: u32,
    pub items_sent: u32,
    /// Pending items left (queued, sending or blocked).
    pub pending: u64,
    /// When the next attempt is due, if anything is left to send.
    pub next_attempt_at: Option<UnixMs>,
    /// Nothing was sent because the device is not set up.
    pub not_configured: bool,
}

impl DrainReport {
    /// Items are still waiting to go out (a `sync` event's failure).
    pub fn still_waiting(&self) -> bool {
        self.next_attempt_at.is_some() && !self.not_configured
    }
}

type Reply<T> = oneshot::Sender<Result<T, QueueError>>;

/// What the actor is asked to do.
enum Command {
    Write(CaptureRequest, Reply<Item>),
    /// Drain now (`skip_wait`) or on schedule; the reply comes when the
    /// drain is idle. `sync` is a Background Sync event's `lastChance`.
    Drain {
        skip_wait: bool,
        sync: Option<bool>,
        reply: Reply<DrainReport>,
    },
    Setup(DeviceConfig, Reply<()>),
    Device(Reply<Option<DeviceConfig>>),
    List {
        after: Option<u64>,
        limit: u32,
        reply: Reply<Vec<(Item, Option<String>)>>,
    },
    Counts(Reply<Counts>),
    Discard(u64, Reply<(Item, Item)>),
    Acknowledge(u64, Option<IdempotencyKey>, Reply<(Item, Item)>),
    /// The reference cache's status; with `refresh`, once a pull has read
    /// to the site's end.
    ReferenceStatus {
        refresh: bool,
        reply: Reply<ReferenceStatus>,
    },
    FindUnit(String, Reply<Found>),
    ReferenceGet(RowKind, String, Reply<Found>),
    ReferenceList(RowKind, u32, Reply<Array>),
    RefreshUnit(String, Reply<JsValue>),
    Close(Reply<()>),
}

/// A cached row (`null` when there is none), the bin a unit is in, and the
/// cache's meta record (how old it is).
pub struct Found {
    pub row: JsValue,
    pub bin: JsValue,
    pub meta: ReferenceMeta,
}

/// The handheld queue as its callers see it: a handle on the runtime.
#[derive(Clone)]
pub struct Queue {
    commands: mpsc::UnboundedSender<Command>,
}

impl Queue {
    /// Opens the queue on database `name` and starts its runtime; its
    /// heartbeat names [`APP_VERSION`].
    pub async fn open<T, C>(
        name: &str,
        transport: T,
        clock: C,
        options: Options,
    ) -> Result<Queue, QueueError>
    where
        T: Transport + Clone + 'static,
        C: Clock + 'static,
    {
        Queue::open_as(name, transport, clock, options, APP_VERSION.to_owned()).await
    }

    /// [`Queue::open`] for the build `app_version` (the id the site serves
    /// in `sw.js`), which its heartbeat carries.
    pub async fn open_as<T, C>(
        name: &str,
        transport: T,
        clock: C,
        options: Options,
        app_version: String,
    ) -> Result<Queue, QueueError>
    where
        T: Transport + Clone + 'static,
        C: Clock + 'static,
    {
        let store = Store::open(name).await?;
        let (commands, inbox) = mpsc::unbounded();
        let runtime = Runtime {
            store,
            transport,
            clock,
            options,
            app_version,
            device: None,
            drain: None,
            group: Group::default(),
            skip_wait: false,
            in_flight: None,
            lock: None,
            timer: None,
            timer_at: None,
            waiting: Vec::new(),
            report: DrainReport::default(),
            sync_registered: false,
            pruned_at: None,
            beats: Heartbeats::default(),
            beat_in_flight: None,
            reference: None,
            pulls: Pulls::default(),
            page_in_flight: None,
            refresh_waiting: Vec::new(),
            refresh_riding: Vec::new(),
            unit_reads: Vec::new(),
        };
        wasm_bindgen_futures::spawn_local(runtime.run(inbox));
        Ok(Queue { commands })
    }

    async fn ask<T>(&self, command: impl FnOnce(Reply<T>) -> Command) -> Result<T, QueueError> {
        let (reply, answer) = oneshot::channel();
        self.commands
            .unbounded_send(command(reply))
            .map_err(|_| QueueError::Stopped)?;
        answer.await.map_err(|_| QueueError::Stopped)?
    }

    /// Stores the device setup; the drain starts at once.
    pub async fn setup(&self, config: DeviceConfig) -> Result<(), QueueError> {
        self.ask(|reply| Command::Setup(config, reply)).await
    }

    pub async fn device(&self) -> Result<Option<DeviceConfig>, QueueError> {
        self.ask(Command::Device).await
    }

    /// Opens a session (a fresh UUID unless the page minted one); resolves
    /// with its `open_session` item once that is durably written.
    pub async fn open_session(
        &self,
        session_id: Option<Uuid>,
        body: OpenSessionBody,
    ) -> Result<Item, QueueError> {
        let session_id = match session_id {
            Some(id) => id,
            None => *IdempotencyKey::mint()?.as_uuid(),
        };
        self.write(CaptureRequest::Open { session_id, body }).await
    }

    /// Captures into a session; resolves only after the strict transaction
    /// holding the item has completed.
    pub async fn capture(&self, session_id: Uuid, capture: Capture) -> Result<Item, QueueError> {
        self.capture_at(session_id, capture, None).await
    }

    /// Captures into a session a scan the page read at `occurred_at` (Unix
    /// ms; `None`: when it is written).
    pub async fn capture_at(
        &self,
        session_id: Uuid,
        capture: Capture,
        occurred_at: Option<f64>,
    ) -> Result<Item, QueueError> {
        self.write(CaptureRequest::Capture {
            session_id,
            capture,
            occurred_at,
        })
        .await
    }

    /// Queues the session's `close_session`; its queued items stay.
    pub async fn close_session(&self, session_id: Uuid) -> Result<Item, QueueError> {
        self.write(CaptureRequest::Close { session_id }).await
    }

    /// Captures a burst (an RFID sled's read) into a session: all of it is
    /// queued for the runtime at once, and each result comes back once its
    /// transaction has completed (or with the error that kept it out).
    pub async fn capture_many(
        &self,
        session_id: Uuid,
        captures: Vec<Capture>,
    ) -> Vec<Result<Item, QueueError>> {
        let captures = captures.into_iter().map(|c| (c, None)).collect();
        self.capture_many_at(session_id, captures).await
    }

    /// [`Queue::capture_many`] with each scan's capture instant (Unix ms;
    /// `None`: when it is written).
    pub async fn capture_many_at(
        &self,
        session_id: Uuid,
        captures: Vec<(Capture, Option<f64>)>,
    ) -> Vec<Result<Item, QueueError>> {
        let answers: Vec<_> = captures
            .into_iter()
            .map(|(capture, occurred_at)| {
                let (reply, answer) = oneshot::channel();
                let request = CaptureRequest::Capture {
                    session_id,
                    capture,
                    occurred_at,
                };
                let _ = self.commands.unbounded_send(Command::Write(request, reply));
                answer
            })
            .collect();
        let mut results = Vec::with_capacity(answers.len());
        for answer in answers {
            results.push(answer.await.unwrap_or(Err(QueueError::Stopped)));
        }
        results
    }

    async fn write(&self, request: CaptureRequest) -> Result<Item, QueueError> {
        self.ask(|reply| Command::Write(request, reply)).await
    }

    /// Drains what IndexedDB holds and answers once the drain is idle.
    /// `skip_wait` (a new capture, "retry now") skips the backoff wait.
    pub async fn drain(&self, skip_wait: bool) -> Result<DrainReport, QueueError> {
        self.ask(|reply| Command::Drain {
            skip_wait,
            sync: None,
            reply,
        })
        .await
    }

    /// The Background Sync `sync` event: drain now. `last_chance` is the
    /// event's own: the browser will not fire this registration again.
    pub async fn sync(&self, last_chance: bool) -> Result<DrainReport, QueueError> {
        self.ask(|reply| Command::Drain {
            skip_wait: true,
            sync: Some(last_chance),
            reply,
        })
        .await
    }

    /// "Retry now": skip the wait and drain.
    pub async fn retry_now(&self) -> Result<DrainReport, QueueError> {
        self.drain(true).await
    }

    /// A page of the queue screen (see [`Store::list`]).
    pub async fn list(
        &self,
        after: Option<u64>,
        limit: u32,
    ) -> Result<Vec<(Item, Option<String>)>, QueueError> {
        self.ask(|reply| Command::List {
            after,
            limit,
            reply,
        })
        .await
    }

    pub async fn counts(&self) -> Result<Counts, QueueError> {
        self.ask(Command::Counts).await
    }

    /// Discards a blocked item; its `void` drains at once.
    pub async fn discard(&self, id: u64) -> Result<(Item, Item), QueueError> {
        self.ask(|reply| Command::Discard(id, reply)).await
    }

    /// Acknowledges a rejected item (re-scanned as `rescan`, if so); its
    /// `acknowledge` drains at once.
    pub async fn acknowledge(
        &self,
        id: u64,
        rescan: Option<IdempotencyKey>,
    ) -> Result<(Item, Item), QueueError> {
        self.ask(|reply| Command::Acknowledge(id, rescan, reply))
            .await
    }

    /// The reference cache's status.
    pub async fn reference_status(&self) -> Result<ReferenceStatus, QueueError> {
        self.ask(|reply| Command::ReferenceStatus {
            refresh: false,
            reply,
        })
        .await
    }

    /// Pulls the site's changes now until the site says there are no more;
    /// then the cache's status. [`QueueError::Offline`] when the site does
    /// not answer.
    pub async fn reference_refresh(&self) -> Result<ReferenceStatus, QueueError> {
        self.ask(|reply| Command::ReferenceStatus {
            refresh: true,
            reply,
        })
        .await
    }

    /// A unit by EPC, else by code, with its bin, from the cache.
    pub async fn find_unit(&self, code: String) -> Result<Found, QueueError> {
        self.ask(|reply| Command::FindUnit(code, reply)).await
    }

    /// One cached row by kind and key.
    pub async fn reference_get(&self, kind: RowKind, id: String) -> Result<Found, QueueError> {
        self.ask(|reply| Command::ReferenceGet(kind, id, reply))
            .await
    }

    /// Every cached row of a kind, at most `limit`.
    pub async fn reference_list(&self, kind: RowKind, limit: u32) -> Result<Array, QueueError> {
        self.ask(|reply| Command::ReferenceList(kind, limit, reply))
            .await
    }

    /// Reads a unit live from the site and keeps it in the cache; `null`
    /// when the site has none.
    pub async fn refresh_unit(&self, epc: String) -> Result<JsValue, QueueError> {
        self.ask(|reply| Command::RefreshUnit(epc, reply)).await
    }

    /// Stops the runtime and closes its database connection.
    pub async fn close(self) -> Result<(), QueueError> {
        self.ask(Command::Close).await
    }
}

/// What woke the actor.
enum Event {
    Command(Command),
    /// The request in flight was answered (or failed, or timed out).
    Answered(Answered),
    /// The heartbeat sent at this instant was answered (or failed).
    Beat(UnixMs, BeatOutcome),
    /// The reference page out came back (or failed).
    Page(Result<FetchedPage, QueueError>),
    /// A unit read live for `refresh_unit` came back.
    Unit(Reply<JsValue>, Result<Option<JsValue>, QueueError>),
    Timer,
}

/// A lease's request, its outcome and the lock it was sent under.
struct Answered {
    batch_id: u64,
    outcome: TransportOutcome,
    lock: Option<LockGuard>,
}

/// Someone waiting for the drain to go idle.
struct Waiter {
    reply: Reply<DrainReport>,
    /// A Background Sync event's `lastChance`.
    sync: Option<bool>,
}

/// The actor: the one owner of the store and the drain.
struct Runtime<T, C> {
    store: Store,
    transport: T,
    clock: C,
    options: Options,
    /// What the heartbeat names as this worker's build.
    app_version: String,
    /// The setup as last committed (the runtime is its only writer); read
    /// from storage on first need (`None` until then), so a worker started
    /// for a capture acknowledges it first.
    device: Option<Option<DeviceConfig>>,
    /// The drain as of its last step; `None` until the first step restores
    /// it from IndexedDB, and again after any failed write, so the next
    /// step reads storage again.
    drain: Option<Drain>,
    /// Captures taken from the channel and not yet written.
    group: Group<(CaptureRequest, Reply<Item>)>,
    /// The next step skips the backoff wait (a capture, "retry now").
    skip_wait: bool,
    in_flight: Option<LocalBoxFuture<'static, Answered>>,
    /// The drain lock, held from the first request of a run until it is idle.
    lock: Option<LockGuard>,
    timer: Option<TimeoutFuture>,
    timer_at: Option<UnixMs>,
    waiting: Vec<Waiter>,
    /// What the drain sent since the waiting callers asked.
    report: DrainReport,
    /// A Background Sync registration for [`SYNC_TAG`] is pending: asked
    /// for in this worker life and not spent since. One registration
    /// covers every later write (its `sync` event drains whatever
    /// IndexedDB holds), and each registration costs a write to the
    /// browser's own store, so it is not repeated per scan.
    sync_registered: bool,
    pruned_at: Option<UnixMs>,
    beats: Heartbeats,
    /// The heartbeat out, with the instant it was sent.
    beat_in_flight: Option<LocalBoxFuture<'static, (UnixMs, BeatOutcome)>>,
    /// The reference cache's meta record as last committed; read from
    /// storage on first need.
    reference: Option<ReferenceMeta>,
    pulls: Pulls,
    /// The reference page out: fetched and parsed beside the channel, so
    /// captures are written while it is out; written in its own turn.
    page_in_flight: Option<LocalBoxFuture<'static, Result<FetchedPage, QueueError>>>,
    /// Callers of `reference_refresh` waiting for a pull to start: a run
    /// of pages already under way may have begun before they asked.
    refresh_waiting: Vec<Reply<ReferenceStatus>>,
    /// Callers of `reference_refresh` whose run of pages began after they
    /// asked: answered once it reaches the site's end (or fails).
    refresh_riding: Vec<Reply<ReferenceStatus>>,
    /// Units read live for `refresh_unit`, each with its caller.
    unit_reads: Vec<LocalBoxFuture<'static, Event>>,
}

impl<T, C> Runtime<T, C>
where
    T: Transport + Clone + 'static,
    C: Clock + 'static,
{
    async fn run(mut self, mut inbox: mpsc::UnboundedReceiver<Command>) {
        while let Some(event) = self.next_event(&mut inbox).await {
            let closing = match event {
                Event::Command(command) => self.take_commands(command, &mut inbox).await,
                Event::Answered(answered) => {
                    self.record(answered).await;
                    None
                }
                Event::Beat(sent_at, outcome) => {
                    let now = self.clock.now();
                    self.beats.handle_outcome(sent_at, now, outcome);
                    None
                }
                Event::Page(page) => {
                    self.write_page(page).await;
                    None
                }
                Event::Unit(reply, unit) => {
                    let _ = reply.send(self.keep_unit(unit).await);
                    None
                }
                Event::Timer => {
                    self.timer_at = None;
                    None
                }
            };
            if let Some(reply) = closing {
                self.fail_waiting(&QueueError::Stopped);
                self.answer_refresh(Err(QueueError::Stopped));
                self.store.close();
                let _ = reply.send(Ok(()));
                return;
            }
            self.step().await;
            self.step_reference().await;
        }
        self.fail_waiting(&QueueError::Stopped);
        self.answer_refresh(Err(QueueError::Stopped));
        self.store.close();
    }

    /// The next command, answer or timer, whichever is ready first.
    async fn next_event(&mut self, inbox: &mut mpsc::UnboundedReceiver<Command>) -> Option<Event> {
        std::future::poll_fn(|cx| {
            if let Poll::Ready(command) = inbox.poll_next_unpin(cx) {
                return Poll::Ready(command.map(Event::Command));
            }
            if let Some(request) = self.in_flight.as_mut() {
                if let Poll::Ready(answered) = request.as_mut().poll(cx) {
                    self.in_flight = None;
                    return Poll::Ready(Some(Event::Answered(answered)));
                }
            }
            if let Some(beat) = self.beat_in_flight.as_mut() {
                if let Poll::Ready((sent_at, outcome)) = beat.as_mut().poll(cx) {
                    self.beat_in_flight = None;
                    return Poll::Ready(Some(Event::Beat(sent_at, outcome)));
                }
            }
            if let Some(page) = self.page_in_flight.as_mut() {
                if let Poll::Ready(page) = page.as_mut().poll(cx) {
                    self.page_in_flight = None;
                    return Poll::Ready(Some(Event::Page(page)));
                }
            }
            for index in 0..self.unit_reads.len() {
                if let Poll::Ready(event) = self.unit_reads[index].as_mut().poll(cx) {
                    drop(self.unit_reads.swap_remove(index));
                    return Poll::Ready(Some(event));
                }
            }
            if let Some(timer) = self.timer.as_mut() {
                if Pin::new(timer).poll(cx).is_ready() {
                    self.timer = None;
                    return Poll::Ready(Some(Event::Timer));
                }
            }
            Poll::Pending
        })
        .await
    }

    /// Handles `first` and whatever else is already waiting: captures join
    /// the group (up to [`GROUP_COMMIT_MAX_ITEMS`], written in one
    /// transaction), other commands are handled in their turn, after the
    /// captures that came before them. A `Close` ends the turn, after what
    /// came before it; its reply is returned for `run` to send once closed.
    async fn take_commands(
        &mut self,
        first: Command,
        inbox: &mut mpsc::UnboundedReceiver<Command>,
    ) -> Option<Reply<()>> {
        let mut next = Some(first);
        while let Some(command) = next.take() {
            match command {
                Command::Write(request, reply) => self.group.push((request, reply)),
                Command::Close(reply) => {
                    self.group_write_all().await;
                    return Some(reply);
                }
                other => {
                    self.group_write_all().await;
                    self.handle(other).await;
                }
            }
            if self.group.len() < GROUP_COMMIT_MAX_ITEMS {
                next = inbox.try_recv().ok();
            }
        }
        if let Some(batch) = self.group.take() {
            self.write_group(batch).await;
        }
        None
    }

    async fn group_write_all(&mut self) {
        while let Some(batch) = self.group.take() {
            self.write_group(batch).await;
        }
    }

    /// Writes one group of captures in one strict transaction and answers
    /// each capture once it has committed.
    async fn write_group(&mut self, batch: Vec<(CaptureRequest, Reply<Item>)>) {
        let (requests, replies): (Vec<_>, Vec<_>) = batch.into_iter().unzip();
        let now = self.clock.now();
        match self.store.write_captures(&requests, now).await {
            Ok(results) => {
                let written: Vec<Item> = results.iter().flatten().cloned().collect();
                for (result, reply) in results.into_iter().zip(replies) {
                    let _ = reply.send(result);
                }
                // The captures are acknowledged first: the registration is
                // the browser's own write and need not hold up the page.
                if !written.is_empty() {
                    if let Some(drain) = self.drain.as_mut() {
                        drain.handle_captured(written);
                    }
                    self.skip_wait = true;
                    self.register_sync().await;
                }
            }
            Err(err) => {
                for reply in replies {
                    let _ = reply.send(Err(err.clone()));
                }
            }
        }
    }

    async fn handle(&mut self, command: Command) {
        let now = self.clock.now();
        match command {
            Command::Write(..) | Command::Close(_) => {}
            Command::Drain {
                skip_wait,
                sync,
                reply,
            } => {
                self.skip_wait |= skip_wait;
                self.waiting.push(Waiter { reply, sync });
            }
            Command::Setup(config, reply) => {
                // Another site's rows are no copy of this one's: a setup
                // naming another site empties the cache with it.
                let stored = match self.reference_meta().await {
                    Ok(meta) => {
                        let other_site = meta.site != config.site_url;
                        let stored = self.store.set_device_and_cache(&config, other_site).await;
                        if other_site && stored.is_ok() {
                            self.reference = Some(ReferenceMeta::empty(&config.site_url));
                            self.pulls.handle_cleared();
                            // A page from the old site still out is dropped
                            // when it lands (it names its site).
                        }
                        stored
                    }
                    Err(err) => Err(err),
                };
                if stored.is_ok() {
                    self.device = Some(Some(config));
                    self.skip_wait = true;
                    self.register_sync().await;
                } else {
                    self.reference = None;
                }
                let _ = reply.send(stored);
            }
            Command::ReferenceStatus { refresh, reply } => {
                if refresh {
                    self.pulls.handle_refresh();
                    self.refresh_waiting.push(reply);
                } else {
                    let _ = reply.send(self.reference_status().await);
                }
            }
            Command::FindUnit(code, reply) => {
                let found = match self.reference_meta().await {
                    Ok(meta) => {
                        self.store
                            .find_unit(&code)
                            .await
                            .map(|(row, bin)| Found { row, bin, meta })
                    }
                    Err(err) => Err(err),
                };
                let _ = reply.send(found);
            }
            Command::ReferenceGet(kind, id, reply) => {
                let found = match self.reference_meta().await {
                    Ok(meta) => self.store.reference_row(kind, &id).await.map(|row| Found {
                        row,
                        bin: JsValue::NULL,
                        meta,
                    }),
                    Err(err) => Err(err),
                };
                let _ = reply.send(found);
            }
            Command::ReferenceList(kind, limit, reply) => {
                let _ = reply.send(self.store.reference_rows(kind, limit).await);
            }
            Command::RefreshUnit(epc, reply) => match self.device().await {
                Ok(Some(device)) => {
                    let transport = self.transport.clone();
                    self.unit_reads.push(Box::pin(async move {
                        let unit = transport.unit(&device, &epc).await;
                        Event::Unit(reply, unit)
                    }));
                }
                Ok(None) => {
                    let _ = reply.send(Err(QueueError::BadMessage(
                        "the device is not set up".into(),
                    )));
                }
                Err(err) => {
                    let _ = reply.send(Err(err));
                }
            },
            Command::Device(reply) => {
                let _ = reply.send(self.device().await);
            }
            Command::List {
                after,
                limit,
                reply,
            } => {
                let _ = reply.send(self.store.list(after, limit).await);
            }
            Command::Counts(reply) => {
                let _ = reply.send(self.store.counts(now).await);
            }
            Command::Discard(id, reply) => {
                let discarded = self.store.discard(id, now).await;
                if let (Ok((item, void)), Some(drain)) = (&discarded, self.drain.as_mut()) {
                    drain.handle_captured([item.clone(), void.clone()]);
                }
                self.skip_wait |= discarded.is_ok();
                let _ = reply.send(discarded);
            }
            Command::Acknowledge(id, rescan, reply) => {
                let acknowledged = self.store.acknowledge(id, rescan, now).await;
                if let (Ok((item, ack)), Some(drain)) = (&acknowledged, self.drain.as_mut()) {
                    drain.handle_captured([item.clone(), ack.clone()]);
                }
                self.skip_wait |= acknowledged.is_ok();
                let _ = reply.send(acknowledged);
            }
        }
    }

    /// The device setup, read from storage the first time it is needed.
    async fn device(&mut self) -> Result<Option<DeviceConfig>, QueueError> {
        if let Some(device) = &self.device {
            return Ok(device.clone());
        }
        let device = self.store.device().await?;
        self.device = Some(device.clone());
        Ok(device)
    }

    /// Makes sure a Background Sync registration covers what was just
    /// written, so a worker stopped before its drain ends is woken to
    /// finish it. A device that is not set up has nothing to sync; its
    /// setup registers.
    async fn register_sync(&mut self) {
        if self.sync_registered || !matches!(self.device().await, Ok(Some(_))) {
            return;
        }
        self.sync_registered = browser::register_sync(SYNC_TAG).await;
    }

    /// Moves the drain on: restores it if needed, sends the next lease, or,
    /// once idle, arms the timer, prunes and answers the waiting callers.
    async fn step(&mut self) {
        if self.in_flight.is_some() {
            return;
        }
        if !self.options.drain_after_capture && self.waiting.is_empty() {
            return;
        }
        let device = match self.device().await {
            Ok(device) => device,
            Err(err) => return self.fail_waiting(&err),
        };
        let Some(device) = device else {
            self.answer_waiting(DrainReport {
                not_configured: true,
                ..DrainReport::default()
            });
            return;
        };
        let drain = match self.drain.take() {
            Some(drain) => drain,
            None => match self.store.load_drain().await {
                Ok(snapshot) => {
                    Drain::restore(&snapshot.sessions, snapshot.pending, snapshot.backoff)
                }
                Err(err) => return self.fail_waiting(&err),
            },
        };
        let drain = self.drain.insert(drain);
        if std::mem::take(&mut self.skip_wait) {
            drain.handle_retry_now();
        }
        let now = self.clock.now();
        let Some(lease) = drain.poll_transmit(now) else {
            let pending = drain.pending_len() as u64;
            let next = drain.poll_timeout(now);
            self.idle(now, pending, next, &device).await;
            return;
        };
        // Lease in one transaction; send outside any; record in another.
        if let Err(err) = self.store.put_items(&lease.items, None).await {
            let _ = drain.handle_lease_failed(lease.batch_id);
            return self.fail_waiting(&err);
        }
        self.report.requests += 1;
        self.report.items_sent += lease.items.len() as u32;
        let request = lease.request(&device.device_id, now);
        let transport = self.transport.clone();
        let held = self.lock.take();
        let batch_id = lease.batch_id;
        self.in_flight = Some(Box::pin(async move {
            let lock = match held {
                Some(lock) => Some(lock),
                None => browser::lock(DRAIN_LOCK).await.ok(),
            };
            let outcome = transport.send(&device, &request).await;
            Answered {
                batch_id,
                outcome,
                lock,
            }
        }));
    }

    /// Records a request's outcome: every item of its lease and the backoff.
    async fn record(&mut self, answered: Answered) {
        self.lock = answered.lock;
        let Some(drain) = self.drain.as_mut() else {
            return;
        };
        let now = self.clock.now();
        let Ok(recorded) = drain.handle_outcome(now, answered.batch_id, &answered.outcome) else {
            return;
        };
        if let Err(err) = self
            .store
            .put_items(&recorded.items, Some(recorded.backoff))
            .await
        {
            self.drain = None;
            self.fail_waiting(&err);
        }
    }

    /// Nothing to send now: release the lock, send the heartbeat if due,
    /// wake at `next` (or when the next heartbeat is due), prune done
    /// items now and then, and answer the waiting callers.
    async fn idle(
        &mut self,
        now: UnixMs,
        pending: u64,
        next: Option<UnixMs>,
        device: &DeviceConfig,
    ) {
        self.lock = None;
        if self.report.requests > 0 {
            self.beats.handle_drained();
        }
        if self.report.requests > 0 || !self.waiting.is_empty() {
            // A drain run, or a wake: follow the site's changes too.
            self.pulls.handle_trigger(now);
        }
        self.send_beat(now, device).await;
        let wake = [next, self.beats.poll_timeout(), self.pull_timeout()]
            .into_iter()
            .flatten()
            .min();
        if self.options.wake_on_timer && wake != self.timer_at {
            self.timer_at = wake;
            self.timer = wake.map(|at| {
                let wait = at.since(now).clamp(0, i64::from(u32::MAX)) as u32;
                TimeoutFuture::new(wait)
            });
        }
        let due = self
            .pruned_at
            .is_none_or(|at| now.since(at) >= PRUNE_EVERY.0 as i64);
        if due {
            self.pruned_at = Some(now);
            // A failed prune only leaves done items a while longer.
            let _ = self.store.prune_done(now, device.done_retention()).await;
        }
        self.answer_waiting(DrainReport {
            pending,
            next_attempt_at: next,
            ..DrainReport::default()
        });
    }

    /// Sends the heartbeat if one is due: the figures are read in their own
    /// transaction first, then the request goes out beside the channel.
    async fn send_beat(&mut self, now: UnixMs, device: &DeviceConfig) {
        if !self.beats.poll_transmit(now) {
            return;
        }
        let counts = match self.store.counts(now).await {
            Ok(counts) => counts,
            Err(_) => {
                // Nothing to report this time: try again on the schedule.
                self.beats.handle_outcome(now, now, BeatOutcome::Failed);
                return;
            }
        };
        let beat = beat(&counts, now, &self.app_version);
        let transport = self.transport.clone();
        let device = device.clone();
        self.beat_in_flight = Some(Box::pin(async move {
            (now, transport.heartbeat(&device, &beat).await)
        }));
    }

    /// When the reference cache's next pull is due by itself; `None` while
    /// the timer should not wake for it (one is out, or paging goes on by
    /// itself).
    fn pull_timeout(&self) -> Option<UnixMs> {
        if self.page_in_flight.is_some() || self.pulls.is_loading() {
            return None;
        }
        self.pulls.poll_timeout()
    }

    /// The cache's meta record, read from storage the first time it is
    /// needed (an empty cache of the device's site when there is none).
    async fn reference_meta(&mut self) -> Result<ReferenceMeta, QueueError> {
        if let Some(meta) = &self.reference {
            return Ok(meta.clone());
        }
        let stored = self.store.reference_meta().await?;
        let meta = match stored {
            Some(meta) => meta,
            None => {
                let site = self.device().await?.map(|d| d.site_url).unwrap_or_default();
                ReferenceMeta::empty(&site)
            }
        };
        self.pulls = Pulls::restore(meta.refreshed_at);
        self.reference = Some(meta.clone());
        Ok(meta)
    }

    async fn reference_status(&mut self) -> Result<ReferenceStatus, QueueError> {
        let meta = self.reference_meta().await?;
        let rows = self.store.reference_counts().await?;
        let loading = self.page_in_flight.is_some() || self.pulls.is_loading();
        Ok(ReferenceStatus::new(&meta, loading, rows, self.clock.now()))
    }

    /// Starts the reference pull that is due, if none is out: fetched and
    /// parsed beside the channel, written in the turn its answer comes.
    async fn step_reference(&mut self) {
        if self.page_in_flight.is_some() {
            return;
        }
        let Ok(Some(device)) = self.device().await else {
            // Nothing to pull from: whoever asked hears so.
            if !self.refresh_waiting.is_empty() {
                let err = QueueError::BadMessage("the device is not set up".into());
                self.answer_refresh(Err(err));
            }
            return;
        };
        let meta = match self.reference_meta().await {
            Ok(meta) => meta,
            Err(err) => return self.answer_refresh(Err(err)),
        };
        let now = self.clock.now();
        let new_run = !self.pulls.is_loading();
        let Some(pull) = self.pulls.poll_transmit(now, &meta) else {
            return;
        };
        if new_run {
            let asked = std::mem::take(&mut self.refresh_waiting);
            self.refresh_riding.extend(asked);
        }
        let transport = self.transport.clone();
        // The fetch and its body's read run as a task of their own: the
        // page's timeout covers the site and the network only, never a
        // turn of this loop that is busy with captures or the drain (a
        // page the site answered in milliseconds was once abandoned
        // because its body was read only after the timeout).
        let (sent, page) = oneshot::channel();
        wasm_bindgen_futures::spawn_local(async move {
            let _ = sent.send(transport.reference(&device, &pull).await);
        });
        self.page_in_flight = Some(Box::pin(async move {
            page.await.unwrap_or(Err(QueueError::Offline))
        }));
    }

    /// Writes a page that came back, with the meta record after it, in one
    /// transaction; a failed pull waits its retry. Once the cache is at the
    /// site's end (or the pull failed), `reference_refresh` callers hear.
    async fn write_page(&mut self, page: Result<FetchedPage, QueueError>) {
        let now = self.clock.now();
        let meta = match self.reference_meta().await {
            Ok(meta) => meta,
            Err(err) => {
                self.pulls.handle_failed(now);
                return self.answer_refresh(Err(err));
            }
        };
        let page = match page {
            Ok(page) if page.site == meta.site => page,
            // Read from the site the device was set up with before: dropped.
            Ok(_) => return,
            Err(err) => {
                self.pulls.handle_failed(now);
                return self.answer_refresh(Err(err));
            }
        };
        let after = meta.after_page(&page.head, now);
        if let Err(err) = self.store.write_reference_page(&page, &after).await {
            self.reference = None;
            self.pulls.handle_failed(now);
            return self.answer_refresh(Err(err));
        }
        self.reference = Some(after);
        if self.pulls.handle_page(now, &page.head) && !self.refresh_riding.is_empty() {
            let status = self.reference_status().await;
            for reply in std::mem::take(&mut self.refresh_riding) {
                let _ = reply.send(status.clone());
            }
        }
    }

    /// Keeps a unit read live in the cache; the caller hears the unit.
    async fn keep_unit(
        &mut self,
        unit: Result<Option<JsValue>, QueueError>,
    ) -> Result<JsValue, QueueError> {
        match unit? {
            Some(unit) => {
                self.store.put_unit(&unit).await?;
                Ok(unit)
            }
            None => Ok(JsValue::NULL),
        }
    }

    /// Answers every `reference_refresh` caller (a failure, or the end).
    fn answer_refresh(&mut self, answer: Result<ReferenceStatus, QueueError>) {
        let riding = std::mem::take(&mut self.refresh_riding);
        for reply in riding
            .into_iter()
            .chain(std::mem::take(&mut self.refresh_waiting))
        {
            let _ = reply.send(answer.clone());
        }
    }

    /// The drain is idle: everyone waiting hears how it ended.
    fn answer_waiting(&mut self, left: DrainReport) {
        let report = DrainReport {
            requests: self.report.requests,
            items_sent: self.report.items_sent,
            ..left
        };
        if self.waiting.is_empty() {
            self.report = DrainReport::default();
            return;
        }
        self.report = DrainReport::default();
        for waiter in std::mem::take(&mut self.waiting) {
            if let Some(last_chance) = waiter.sync {
                // The browser keeps a registration whose event failed and
                // fires it again, unless that was its last chance; one
                // whose event succeeded is spent.
                self.sync_registered = report.still_waiting() && !last_chance;
            }
            let _ = waiter.reply.send(Ok(report.clone()));
        }
    }

    fn fail_waiting(&mut self, err: &QueueError) {
        self.report = DrainReport::default();
        for waiter in std::mem::take(&mut self.waiting) {
            let _ = waiter.reply.send(Err(err.clone()));
        }
    }
}
