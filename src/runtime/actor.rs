//! The runtime's actor: one task, [`Runtime`], owns the store and the
//! drain state machine. Everything else ([`super::Queue`], the handle
//! callers hold) sends it commands on a channel and awaits the reply on a
//! one-shot.
//!
//! A turn of the actor takes one event: a command (captures are gathered
//! from the channel and written in one strict transaction, at most
//! [`GROUP_COMMIT_MAX_ITEMS`] a turn), the answer to the request in
//! flight, or the timer. After each turn it steps the drain: restore it
//! from storage on the first step of a worker life (items found `sending`
//! go out again), lease and send when [`Drain::poll_transmit`] says so,
//! or, once idle, arm the timer from [`Drain::poll_timeout`] and answer
//! whoever asked for the drain. The request itself is awaited beside the
//! channel, never inside a transaction, so captures are written while a
//! request is out.
//!
//! The heartbeat goes out only while the drain is idle: after a drain run
//! that sent something, and whenever a wake (the timer, a page's `wake`)
//! finds one due by [`Heartbeats`]. Its figures are read in their own
//! transaction, it is sent without the drain lock and awaited beside the
//! channel like a sync request, so it never waits behind scans and never
//! holds them up.
//!
//! The turns for the reference cache (pulls, pages, unit reads) are in
//! [`reference`].
//!
//! Architecture invariant: only one runtime writes a queue's store, and
//! every sync request is sent under the platform's drain lock.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

use futures_channel::mpsc;
use futures_util::future::LocalBoxFuture;
use futures_util::StreamExt;
use uuid::Uuid;

use crate::key::IdempotencyKey;
use crate::queue::capture::{Group, GROUP_COMMIT_MAX_ITEMS};
use crate::queue::heartbeat::beat;
use crate::queue::{BeatOutcome, Drain, Heartbeats, Item, ItemState, Session, TransportOutcome};
use crate::reference::{Pulls, ReferenceMeta};
use crate::time::UnixMs;

use super::command::{Command, DrainReport, Found, Options, Reply, PRUNE_EVERY};
use super::error::QueueError;
use super::plant::{planted, Bug};
use super::records::{plan_capture, CaptureRequest, DeviceConfig, ReferenceStatus};
use super::traits::{Clock, Page, Platform, Store, Transport};

mod reference;

/// What woke the actor.
enum Event<S: Store, L> {
    Command(Command<S>),
    /// The request in flight was answered (or failed, or timed out).
    Answered(Answered<L>),
    /// The heartbeat sent at this instant was answered (or failed).
    Beat(UnixMs, BeatOutcome),
    /// The reference page out came back (or failed).
    Page(Result<Page<S::PageRows>, QueueError>),
    /// A unit read live for `refresh_unit` came back.
    Unit(Reply<Option<S::Row>>, Result<Option<S::Row>, QueueError>),
    Timer,
}

/// A lease's request, its outcome and the lock it was sent under.
struct Answered<L> {
    batch_id: u64,
    outcome: TransportOutcome,
    lock: Option<L>,
}

/// Someone waiting for the drain to go idle.
struct Waiter {
    reply: Reply<DrainReport>,
    /// A Background Sync event's `lastChance`.
    sync: Option<bool>,
}

/// The actor: the one owner of the store and the drain.
pub(super) struct Runtime<S: Store, T, C: Clock, P: Platform> {
    store: S,
    transport: T,
    clock: C,
    platform: P,
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
    /// Every session this runtime has read or written, as last committed.
    /// The runtime is the queue's only writer, so what it committed is
    /// what storage holds, and a capture need not read its session back.
    /// Cleared after any failed write, so the next one reads storage.
    sessions: BTreeMap<Uuid, Session>,
    /// Captures taken from the channel and not yet written.
    group: Group<(CaptureRequest, Reply<Item>)>,
    /// The next step skips the backoff wait (a capture, "retry now", the
    /// site answering again).
    skip_wait: bool,
    /// The site did not answer the last request sent to it (a sync, a
    /// heartbeat or a reference page): the next answer it gives ends the
    /// drain's wait (docs/design.md §10).
    site_silent: bool,
    in_flight: Option<LocalBoxFuture<'static, Answered<P::Lock>>>,
    /// The drain lock, held from the first request of a run until it is idle.
    lock: Option<P::Lock>,
    timer: Option<C::Sleep>,
    timer_at: Option<UnixMs>,
    waiting: Vec<Waiter>,
    /// What the drain sent since the waiting callers asked.
    report: DrainReport,
    /// A wake-up registration (the browser's Background Sync) is pending: asked
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
    page_in_flight: Option<LocalBoxFuture<'static, Result<Page<S::PageRows>, QueueError>>>,
    /// The last turn wrote a reference page: the commands waiting go
    /// before the next, so a load and the captures take turns.
    page_turn: bool,
    /// Callers of `reference_refresh` waiting for a pull to start: a run
    /// of pages already under way may have begun before they asked.
    refresh_waiting: Vec<Reply<ReferenceStatus>>,
    /// Callers of `reference_refresh` whose run of pages began after they
    /// asked: answered once it reaches the site's end (or fails).
    refresh_riding: Vec<Reply<ReferenceStatus>>,
    /// Items a planted bug holds back from the restored drain.
    held_back: Vec<Item>,
    /// Units read live for `refresh_unit`, each with its caller.
    unit_reads: Vec<LocalBoxFuture<'static, Event<S, P::Lock>>>,
}

impl<S, T, C, P> Runtime<S, T, C, P>
where
    S: Store + 'static,
    T: Transport<PageRows = S::PageRows, Unit = S::Row> + Clone + 'static,
    C: Clock + 'static,
    P: Platform + Clone + 'static,
{
    pub(super) fn new(
        store: S,
        transport: T,
        clock: C,
        platform: P,
        options: Options,
        app_version: String,
    ) -> Self {
        Runtime {
            store,
            transport,
            clock,
            platform,
            options,
            app_version,
            device: None,
            drain: None,
            sessions: BTreeMap::new(),
            group: Group::default(),
            skip_wait: false,
            // A backoff restored from storage may be an outage's: the
            // first answer of this worker life ends its wait.
            site_silent: true,
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
            page_turn: false,
            refresh_waiting: Vec::new(),
            refresh_riding: Vec::new(),
            unit_reads: Vec::new(),
            held_back: Vec::new(),
        }
    }

    pub(super) async fn run(mut self, mut inbox: mpsc::UnboundedReceiver<Command<S>>) {
        while let Some(event) = self.next_event(&mut inbox).await {
            self.page_turn = matches!(event, Event::Page(_));
            let closing = match event {
                Event::Command(command) => self.take_commands(command, &mut inbox).await,
                Event::Answered(answered) => {
                    self.record(answered).await;
                    None
                }
                Event::Beat(sent_at, outcome) => {
                    let now = self.clock.now();
                    self.heard(matches!(outcome, BeatOutcome::Acknowledged { .. }));
                    self.beats.handle_outcome(sent_at, now, outcome);
                    None
                }
                Event::Page(page) => {
                    self.heard(!matches!(page, Err(QueueError::Offline)));
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

    /// The next answer, timer or command. What came back from the network
    /// or the timer goes before the commands waiting: a page that scans
    /// back to back keeps the inbox from ever being empty, and an answer
    /// polled only then waited seconds (a reference page read in 50 ms
    /// was written 2 s later, and a sync answer held the next drain
    /// request as long). Each of those is one event per request out, so
    /// the commands never wait behind more than a few; and a reference
    /// page never follows a page's turn while commands wait (a load read
    /// ahead has its next page ready at once, and captures would wait for
    /// page after page).
    async fn next_event(
        &mut self,
        inbox: &mut mpsc::UnboundedReceiver<Command<S>>,
    ) -> Option<Event<S, P::Lock>> {
        std::future::poll_fn(|cx| {
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
            if !self.page_turn {
                if let Some(page) = self.poll_page(cx) {
                    return Poll::Ready(Some(page));
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
            if let Poll::Ready(command) = inbox.poll_next_unpin(cx) {
                return Poll::Ready(command.map(Event::Command));
            }
            if let Some(page) = self.poll_page(cx) {
                return Poll::Ready(Some(page));
            }
            Poll::Pending
        })
        .await
    }

    /// The reference page out, if it came back.
    fn poll_page(&mut self, cx: &mut std::task::Context<'_>) -> Option<Event<S, P::Lock>> {
        let page = self.page_in_flight.as_mut()?;
        let Poll::Ready(page) = page.as_mut().poll(cx) else {
            return None;
        };
        self.page_in_flight = None;
        Some(Event::Page(page))
    }

    /// Handles `first` and whatever else is already waiting: captures join
    /// the group (up to [`GROUP_COMMIT_MAX_ITEMS`], written in one
    /// transaction), other commands are handled in their turn, after the
    /// captures that came before them. A `Close` ends the turn, after what
    /// came before it; its reply is returned for `run` to send once closed.
    async fn take_commands(
        &mut self,
        first: Command<S>,
        inbox: &mut mpsc::UnboundedReceiver<Command<S>>,
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
        let mut requests = Vec::with_capacity(batch.len());
        let mut replies = Vec::with_capacity(batch.len());
        for (request, reply) in batch {
            match self.platform.mint_key() {
                Ok(key) => {
                    requests.push((request, key));
                    replies.push(Some(reply));
                }
                Err(err) => {
                    let _ = reply.send(Err(err));
                }
            }
        }
        let now = self.clock.now();
        if planted(Bug::AckBeforeCommit) {
            // The bug: each capture hears "kept" as planned, before its
            // transaction has committed.
            let mut sessions = self.sessions.clone();
            for ((request, key), reply) in requests.iter().zip(&mut replies) {
                let planned = plan_capture(&mut sessions, request, *key, now, None);
                if let (Ok(item), Some(reply)) = (planned, reply.take()) {
                    let _ = reply.send(Ok(item));
                }
            }
        }
        match self.write_captures(&requests, now).await {
            Ok(results) => {
                let written: Vec<Item> = results.iter().flatten().cloned().collect();
                for (result, reply) in results.into_iter().zip(replies) {
                    if let Some(reply) = reply {
                        let _ = reply.send(result);
                    }
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
                for reply in replies.into_iter().flatten() {
                    let _ = reply.send(Err(err.clone()));
                }
            }
        }
    }

    /// Writes a group through the store from the sessions this runtime
    /// remembers; should that fail, once more from what storage says.
    async fn write_captures(
        &mut self,
        requests: &[(CaptureRequest, IdempotencyKey)],
        now: UnixMs,
    ) -> Result<Vec<Result<Item, QueueError>>, QueueError> {
        let remembered = requests
            .iter()
            .any(|(request, _)| self.sessions.contains_key(&request.session_id()));
        let mut written = self
            .store
            .write_captures(requests, &self.sessions, now)
            .await;
        if written.is_err() && remembered {
            // What this runtime remembered may be behind storage: a worker
            // being replaced by a newer one can write for a moment beside
            // it, and the store then refuses a reused (session_id,
            // client_seq). Nothing of the group was written; write it once
            // more from what storage says.
            self.sessions.clear();
            written = self
                .store
                .write_captures(requests, &self.sessions, now)
                .await;
        }
        match written {
            Ok(written) => {
                self.sessions.extend(written.sessions);
                Ok(written.results)
            }
            Err(err) => {
                self.sessions.clear();
                Err(err)
            }
        }
    }

    /// After a write that changed an item and added one beside it (a
    /// discard's void, an acknowledge): remembers the session seq the added
    /// item took and hands both to the drain, asking it to send at once;
    /// after a failed write, forgets every session.
    fn wrote_beside(&mut self, written: &Result<(Item, Item), QueueError>) {
        let Ok((item, added)) = written else {
            self.sessions.clear();
            return;
        };
        if let Some(session) = self.sessions.get_mut(&added.session_id) {
            session.next_seq = session.next_seq.max(added.client_seq + 1);
        }
        if let Some(drain) = self.drain.as_mut() {
            drain.handle_captured([item.clone(), added.clone()]);
        }
        self.skip_wait = true;
    }

    async fn handle(&mut self, command: Command<S>) {
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
                        let stored = self.store.set_device(&config, other_site).await;
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
                    // Its row counts are read beside the loop too: a count
                    // walks its whole store (100,000 units), and the page
                    // asks every refresh.
                    let meta = self.reference_meta().await;
                    let loading = self.page_in_flight.is_some() || self.pulls.is_loading();
                    let store = self.store.clone();
                    self.platform.spawn(async move {
                        let status = match meta {
                            Ok(meta) => store
                                .reference_counts()
                                .await
                                .map(|rows| ReferenceStatus::new(&meta, loading, rows, now)),
                            Err(err) => Err(err),
                        };
                        let _ = reply.send(status);
                    });
                }
            }
            Command::FindUnit(code, reply) => {
                let found = match self.reference_meta().await {
                    Ok(meta) => self.store.find_unit(&code).await.map(|(row, bin)| Found {
                        row,
                        bin: Some(bin),
                        meta,
                    }),
                    Err(err) => Err(err),
                };
                let _ = reply.send(found);
            }
            Command::ReferenceGet(kind, id, reply) => {
                let found = match self.reference_meta().await {
                    Ok(meta) => self.store.reference_row(kind, &id).await.map(|row| Found {
                        row,
                        bin: None,
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
            // The page's reads of the queue are answered beside the loop:
            // the page walks the whole queue in pages every refresh (and
            // while answers are awaited), and each read held the captures,
            // the drain and the reference pages behind it, for seconds once
            // a few thousand items were kept.
            Command::List {
                after,
                limit,
                reply,
            } => {
                let store = self.store.clone();
                self.platform.spawn(async move {
                    let _ = reply.send(store.list(after, limit).await);
                });
            }
            Command::Counts(reply) => {
                let store = self.store.clone();
                self.platform.spawn(async move {
                    let _ = reply.send(store.counts(now).await);
                });
            }
            Command::Discard(id, reply) => {
                let discarded = match self.platform.mint_key() {
                    Ok(key) => self.store.discard(id, key, now).await,
                    Err(err) => Err(err),
                };
                self.wrote_beside(&discarded);
                let _ = reply.send(discarded);
            }
            Command::Acknowledge(id, rescan, reply) => {
                let acknowledged = match self.platform.mint_key() {
                    Ok(key) => self.store.acknowledge(id, rescan, key, now).await,
                    Err(err) => Err(err),
                };
                self.wrote_beside(&acknowledged);
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
        self.sync_registered = self.platform.register_sync().await;
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
                Ok(mut snapshot) => {
                    if planted(Bug::LaterSeqFirstAfterRestart) {
                        // The bug: items found sending wait behind the
                        // first request of this life.
                        let (held, rest) = std::mem::take(&mut snapshot.pending)
                            .into_iter()
                            .partition(|item| item.state == ItemState::Sending);
                        snapshot.pending = rest;
                        self.held_back = held;
                    }
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
        if planted(Bug::LaterSeqFirstAfterRestart) && !self.held_back.is_empty() {
            let held = std::mem::take(&mut self.held_back);
            drain.handle_stored(held.into_iter().map(|mut item| {
                item.state = ItemState::Queued;
                item
            }));
        }
        self.report.requests += 1;
        self.report.items_sent += lease.items.len() as u32;
        let request = lease.request(&device.device_id, now);
        let transport = self.transport.clone();
        let held = self.lock.take();
        let platform = self.platform.clone();
        let batch_id = lease.batch_id;
        self.in_flight = Some(Box::pin(async move {
            let lock = match held {
                Some(lock) => Some(lock),
                None => platform.lock().await,
            };
            let outcome = transport.send(&device, &request).await;
            Answered {
                batch_id,
                outcome,
                lock,
            }
        }));
    }

    /// A heartbeat came back acknowledged or not, a reference page with
    /// any answer or none. The first answer after a request the site did
    /// not answer ends the drain's wait: the site is back
    /// (docs/design.md §10; the page says so with `retry_now` when its own
    /// requests see it). A drain that backs off because the site answered
    /// it with a failure (a 503) keeps its schedule, and nothing changes
    /// while a request is out: its own answer decides.
    fn heard(&mut self, answered: bool) {
        if !answered {
            self.site_silent = true;
            return;
        }
        if !std::mem::take(&mut self.site_silent) || self.in_flight.is_some() {
            return;
        }
        match self.drain.as_mut() {
            Some(drain) if drain.backoff().next_attempt_at.is_some() => drain.handle_retry_now(),
            Some(_) => {}
            // Restored at the next step, with whatever backoff storage holds.
            None => self.skip_wait = true,
        }
    }

    /// Records a request's outcome: every item of its lease and the backoff.
    async fn record(&mut self, answered: Answered<P::Lock>) {
        self.lock = answered.lock;
        self.site_silent = matches!(
            answered.outcome,
            TransportOutcome::Offline | TransportOutcome::Timeout
        );
        let Some(drain) = self.drain.as_mut() else {
            return;
        };
        let now = self.clock.now();
        let Ok(mut recorded) = drain.handle_outcome(now, answered.batch_id, &answered.outcome)
        else {
            return;
        };
        let delete = planted(Bug::DeleteOn4xx)
            && recorded
                .items
                .iter()
                .any(|item| item.state == ItemState::Rejected);
        if delete {
            // The bug: a refused item is deleted (done long ago, pruned).
            for item in &mut recorded.items {
                if item.state == ItemState::Rejected {
                    item.set_state(ItemState::Done, UnixMs(0));
                }
            }
        }
        if let Err(err) = self
            .store
            .put_items(&recorded.items, Some(recorded.backoff))
            .await
        {
            self.drain = None;
            self.fail_waiting(&err);
        } else if delete {
            let _ = self.store.prune_done(now, crate::time::Millis(0)).await;
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
            self.timer = wake.map(|at| self.clock.sleep_until(at));
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
