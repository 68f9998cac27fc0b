//! The queue runtime: group-committed captures and the drain loop, around
//! the sans-IO core. It owns the I/O only: the store, the transport, the
//! clock, timers and the Web Lock.
//!
//! A worker's first drain restores a [`Drain`] from what IndexedDB says
//! (items found `sending` go out again), so a killed and restarted worker
//! resumes where storage left it. Later drains in the same worker life
//! keep that drain in memory, fed with every item this runtime writes,
//! so a capture during a long outage does not re-read the backlog; any
//! failed write drops it and the next drain reads storage again.
//!
//! Architecture invariant: only one runtime writes a queue database (the
//! service worker's; pages reach it by message), and every drain runs
//! under the `stockhop-drain` Web Lock.

use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};

use uuid::Uuid;

use crate::key::IdempotencyKey;
use crate::oneshot;
use crate::queue::capture::Group;
use crate::queue::{Capture, Counts, Drain, Item, ItemState};
use crate::time::UnixMs;
use crate::wire::OpenSessionBody;

use super::browser;
use super::clock::Clock;
use super::error::QueueError;
use super::store::{CaptureRequest, DeviceConfig, Store};
use super::transport::Transport;
use super::write::{Record, ToJs};

/// The Web Lock every drain holds, across the worker and its pages.
pub const DRAIN_LOCK: &str = "stockhop-drain";
/// The Background Sync tag registered on every enqueue.
pub const SYNC_TAG: &str = "stockhop-drain";

/// How the runtime wakes itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Drain at once after every committed capture (off in tests that
    /// drive the drain step by step).
    pub drain_after_capture: bool,
    /// Arm a timer for the next attempt after a drain stops.
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

/// What a drain did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DrainReport {
    /// Requests sent and items in them.
    pub requests: u32,
    pub items_sent: u32,
    /// Pending items left (queued, sending or blocked).
    pub pending: u64,
    /// When the next attempt is due, if anything is left to send.
    pub next_attempt_at: Option<UnixMs>,
    /// Another drain was already running in this context: it ran once
    /// more for this call, and this is how it ended.
    pub joined: bool,
    /// Nothing was sent because the device is not set up.
    pub not_configured: bool,
}

impl ToJs for DrainReport {
    fn to_js(&self) -> wasm_bindgen::JsValue {
        Record::new()
            .set("requests", &self.requests)
            .set("items_sent", &self.items_sent)
            .set("pending", &self.pending)
            .set("next_attempt_at", &self.next_attempt_at)
            .set("joined", &self.joined)
            .set("not_configured", &self.not_configured)
            .build()
    }
}

type Waiter = oneshot::Sender<Result<Item, QueueError>>;

struct Inner<T, C> {
    store: Store,
    transport: T,
    clock: C,
    options: Options,
    group: RefCell<Group<(CaptureRequest, Waiter)>>,
    flushing: Cell<bool>,
    draining: Cell<bool>,
    drain_again: Cell<bool>,
    skip_wait: Cell<bool>,
    /// The drain as of its last run, kept between runs of this worker life
    /// so a capture does not re-read the whole backlog; `None` until the
    /// first run restores it from IndexedDB, and again after any failed
    /// write, so the next run re-reads what storage says.
    mirror: RefCell<Option<Drain>>,
    /// Items this runtime wrote (captures, discards) since the drain last
    /// looked; merged into it before its next lease.
    written: RefCell<Vec<Item>>,
    /// The highest queue id the last restore read. A capture's commit can
    /// land in that read before its own notice reaches `written`; such a
    /// late notice must not put back an item the drain has moved on since.
    /// Ids rise in commit order, so an item at or below this id was
    /// committed before the read and the restored drain already has its
    /// state (pending, or moved on).
    restored_up_to: Cell<Option<u64>>,
    timer: RefCell<Option<gloo_timers::callback::Timeout>>,
    /// A Background Sync registration for [`SYNC_TAG`] is pending: asked
    /// for in this worker life and not spent since (see
    /// [`Queue::sync_settled`]).
    sync_pending: Rc<Cell<bool>>,
    /// Drain steps waiting for the capture writer to finish its groups.
    writer_idle: RefCell<Vec<oneshot::Sender<()>>>,
    /// Callers that found a drain running: they hear how it ended,
    /// including the run their call added.
    drain_joiners: RefCell<Vec<oneshot::Sender<Result<DrainReport, QueueError>>>>,
}

/// The handheld queue in a browser context.
pub struct Queue<T: Transport + 'static, C: Clock + 'static> {
    inner: Rc<Inner<T, C>>,
}

impl<T: Transport + 'static, C: Clock + 'static> Clone for Queue<T, C> {
    fn clone(&self) -> Self {
        Queue {
            inner: self.inner.clone(),
        }
    }
}

impl<T: Transport + 'static, C: Clock + 'static> Queue<T, C> {
    /// Opens the queue on database `name`.
    pub async fn open(
        name: &str,
        transport: T,
        clock: C,
        options: Options,
    ) -> Result<Queue<T, C>, QueueError> {
        let store = Store::open(name).await?;
        Ok(Queue {
            inner: Rc::new(Inner {
                store,
                transport,
                clock,
                options,
                group: RefCell::default(),
                flushing: Cell::new(false),
                draining: Cell::new(false),
                drain_again: Cell::new(false),
                skip_wait: Cell::new(false),
                mirror: RefCell::new(None),
                written: RefCell::default(),
                restored_up_to: Cell::new(None),
                timer: RefCell::new(None),
                sync_pending: Rc::new(Cell::new(false)),
                writer_idle: RefCell::default(),
                drain_joiners: RefCell::default(),
            }),
        })
    }

    pub fn store(&self) -> &Store {
        &self.inner.store
    }

    pub fn now(&self) -> UnixMs {
        self.inner.clock.now()
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
        self.submit(CaptureRequest::Open { session_id, body }).await
    }

    /// Captures into a session; resolves only after the strict transaction
    /// holding the item has completed.
    pub async fn capture(&self, session_id: Uuid, capture: Capture) -> Result<Item, QueueError> {
        self.submit(CaptureRequest::Capture {
            session_id,
            capture,
        })
        .await
    }

    /// Queues the session's `close_session`; its queued items stay.
    pub async fn close_session(&self, session_id: Uuid) -> Result<Item, QueueError> {
        self.submit(CaptureRequest::Close { session_id }).await
    }

    /// Captures a burst (an RFID sled's read) into a session: all of it
    /// joins the waiting group at once, and each result comes back once its
    /// transaction has completed (or with the error that kept it out).
    pub async fn capture_many(
        &self,
        session_id: Uuid,
        captures: Vec<Capture>,
    ) -> Vec<Result<Item, QueueError>> {
        let waiting: Vec<_> = captures
            .into_iter()
            .map(|capture| {
                self.enqueue(CaptureRequest::Capture {
                    session_id,
                    capture,
                })
            })
            .collect();
        let mut results = Vec::with_capacity(waiting.len());
        for rx in waiting {
            results.push(Self::written(rx).await);
        }
        results
    }

    async fn submit(&self, request: CaptureRequest) -> Result<Item, QueueError> {
        Self::written(self.enqueue(request)).await
    }

    fn enqueue(&self, request: CaptureRequest) -> oneshot::Receiver<Result<Item, QueueError>> {
        let (tx, rx) = oneshot::channel();
        self.inner.group.borrow_mut().push((request, tx));
        if !self.inner.flushing.replace(true) {
            wasm_bindgen_futures::spawn_local(self.clone().flush());
        }
        rx
    }

    async fn written(rx: oneshot::Receiver<Result<Item, QueueError>>) -> Result<Item, QueueError> {
        rx.await
            .map_err(|_| QueueError::storage("the capture was dropped unwritten"))?
    }

    /// Writes groups until none is left: whatever waited while the last
    /// transaction committed goes in the next one.
    async fn flush(self) {
        loop {
            let batch = self.inner.group.borrow_mut().take();
            let Some(batch) = batch else { break };
            let (requests, waiters): (Vec<_>, Vec<_>) = batch.into_iter().unzip();
            let written = self
                .inner
                .store
                .write_captures(&requests, self.inner.clock.now())
                .await;
            let any_written = match written {
                Ok(results) => {
                    let any = results.iter().any(Result::is_ok);
                    self.note_written(results.iter().flatten());
                    for (result, waiter) in results.into_iter().zip(waiters) {
                        waiter.send(result);
                    }
                    any
                }
                Err(err) => {
                    for waiter in waiters {
                        waiter.send(Err(err.clone()));
                    }
                    false
                }
            };
            if any_written {
                self.register_sync();
                self.kick();
            }
        }
        self.inner.flushing.set(false);
        for waiter in self.inner.writer_idle.borrow_mut().drain(..) {
            waiter.send(());
        }
    }

    /// Waits until no capture group is waiting or being written. The
    /// drain's writes share the items store with captures, and IndexedDB
    /// runs such transactions one after another in the order they were
    /// made: a lease made while a burst is arriving would put every later
    /// group (and the operator's acknowledgement) behind it. Captures go
    /// first; the drain takes the gaps, and a burst's end is one.
    async fn captures_first(&self) {
        if !self.inner.flushing.get() {
            return;
        }
        let (tx, rx) = oneshot::channel();
        self.inner.writer_idle.borrow_mut().push(tx);
        let _ = rx.await;
    }

    /// Makes sure a Background Sync registration covers what was just
    /// written, so a worker stopped before its drain ends is woken to
    /// finish it. One pending registration covers every later write: its
    /// `sync` event drains whatever IndexedDB holds when it fires. So the
    /// tag is registered again only once that registration is spent (see
    /// [`Queue::sync_settled`]). Each registration is a write to the
    /// browser's own store, which on every scan cost ~3 ms
    /// (`bench/capture.mjs`). A device that is not set up has nothing to
    /// sync and registers nothing; its setup registers.
    pub fn register_sync(&self) {
        if self.inner.sync_pending.replace(true) {
            return;
        }
        let pending = self.inner.sync_pending.clone();
        let store = self.inner.store.clone();
        wasm_bindgen_futures::spawn_local(async move {
            let set_up = !matches!(store.device().await, Ok(None));
            if !set_up || !browser::register_sync(SYNC_TAG).await {
                pending.set(false);
            }
        });
    }

    /// The `sync` event's drain has ended. The browser keeps a registration
    /// whose event failed and fires it again later, unless that was its
    /// last chance; a registration whose event succeeded is spent, and the
    /// next write registers again.
    pub fn sync_settled(&self, still_registered: bool) {
        self.inner.sync_pending.set(still_registered);
    }

    /// Drains what IndexedDB holds. `skip_wait` (a new capture, "retry
    /// now") skips the backoff wait. One drain runs at a time: a call that
    /// finds one running in this context makes it run once more and waits
    /// for its end (so a `sync` event's answer, or "retry now"'s, says
    /// whether items are still waiting).
    pub async fn drain(&self, skip_wait: bool) -> Result<DrainReport, QueueError> {
        let inner = &self.inner;
        if skip_wait {
            inner.skip_wait.set(true);
        }
        if inner.draining.replace(true) {
            inner.drain_again.set(true);
            let (tx, rx) = oneshot::channel();
            inner.drain_joiners.borrow_mut().push(tx);
            let ended = rx
                .await
                .map_err(|_| QueueError::storage("the running drain was dropped"))?;
            return ended.map(|report| DrainReport {
                joined: true,
                ..report
            });
        }
        let result = loop {
            inner.drain_again.set(false);
            let run = self.drain_once().await;
            if run.is_err() || !inner.drain_again.get() {
                break run;
            }
        };
        inner.draining.set(false);
        if let Ok(report) = &result {
            self.arm_timer(report.next_attempt_at);
        }
        for joiner in inner.drain_joiners.borrow_mut().drain(..) {
            joiner.send(result.clone());
        }
        result
    }

    async fn drain_once(&self) -> Result<DrainReport, QueueError> {
        let inner = &self.inner;
        // Nothing can leave before the device is set up; the setup message
        // drains at once, so there is nothing to wake for until then.
        let Some(device) = inner.store.device().await? else {
            return Ok(DrainReport {
                not_configured: true,
                ..DrainReport::default()
            });
        };
        let _lock = browser::lock(DRAIN_LOCK).await?;
        let cached = inner.mirror.borrow_mut().take();
        let mut drain = match cached {
            Some(drain) => drain,
            None => {
                let snapshot = inner.store.load_drain().await?;
                inner
                    .restored_up_to
                    .set(snapshot.pending.iter().filter_map(|item| item.id).max());
                Drain::restore(&snapshot.sessions, snapshot.pending, snapshot.backoff)
            }
        };
        let backoff_before = drain.backoff();
        let mut report = DrainReport::default();
        self.run(&mut drain, &device, &mut report).await?;
        if drain.backoff() != backoff_before && report.requests == 0 {
            inner.store.put_items(&[], Some(drain.backoff())).await?;
        }
        report.pending = drain.pending_len() as u64;
        report.next_attempt_at = drain.poll_timeout();
        *inner.mirror.borrow_mut() = Some(drain);
        Ok(report)
    }

    async fn run(
        &self,
        drain: &mut Drain,
        device: &DeviceConfig,
        report: &mut DrainReport,
    ) -> Result<(), QueueError> {
        let inner = &self.inner;
        loop {
            self.captures_first().await;
            self.merge_written(drain);
            if inner.skip_wait.replace(false) {
                drain.handle_retry_now();
            }
            let now = inner.clock.now();
            let Some(lease) = drain.poll_transmit(now) else {
                return Ok(());
            };
            // Lease in one transaction; fetch outside any; record in another.
            if let Err(err) = inner.store.put_items(&lease.items, None).await {
                let _ = drain.handle_lease_failed(lease.batch_id);
                return Err(err);
            }
            let request = lease.request(&device.device_id, now);
            let outcome = inner.transport.send(device, &request).await;
            let recorded = drain
                .handle_outcome(inner.clock.now(), lease.batch_id, &outcome)
                .map_err(|e| QueueError::storage(e.to_string()))?;
            self.captures_first().await;
            inner
                .store
                .put_items(&recorded.items, Some(recorded.backoff))
                .await?;
            report.requests += 1;
            report.items_sent += lease.items.len() as u32;
        }
    }

    /// Keeps what was just written for the drain held in memory, if there
    /// is one (running, or kept from its last run). Without one the next
    /// drain restores from storage, which already holds these items, so
    /// nothing piles up here while no drain runs (a device not set up).
    fn note_written<'a>(&self, items: impl IntoIterator<Item = &'a Item>) {
        let inner = &self.inner;
        if inner.draining.get() || inner.mirror.borrow().is_some() {
            inner
                .written
                .borrow_mut()
                .extend(items.into_iter().cloned());
        }
    }

    /// Feeds the drain what this runtime wrote since it last looked.
    fn merge_written(&self, drain: &mut Drain) {
        let written: Vec<Item> = self.inner.written.borrow_mut().drain(..).collect();
        let restored_up_to = self.inner.restored_up_to.get();
        let restored = |item: &Item| match (item.id, restored_up_to) {
            (Some(id), Some(up_to)) => id <= up_to,
            _ => false,
        };
        drain.handle_stored(
            written
                .into_iter()
                .filter(|item| !(item.state == ItemState::Queued && restored(item))),
        );
    }

    fn arm_timer(&self, at: Option<UnixMs>) {
        if !self.inner.options.wake_on_timer {
            return;
        }
        let Some(at) = at else {
            self.inner.timer.borrow_mut().take();
            return;
        };
        let wait = at
            .since(self.inner.clock.now())
            .clamp(0, i64::from(u32::MAX)) as u32;
        let weak: Weak<Inner<T, C>> = Rc::downgrade(&self.inner);
        let timer = gloo_timers::callback::Timeout::new(wait, move || {
            if let Some(inner) = weak.upgrade() {
                Queue { inner }.spawn_drain(false);
            }
        });
        *self.inner.timer.borrow_mut() = Some(timer);
    }

    /// "Retry now": skip the wait and drain.
    pub async fn retry_now(&self) -> Result<DrainReport, QueueError> {
        self.drain(true).await
    }

    /// Discards a blocked item; its `void` drains at once.
    pub async fn discard(&self, id: u64) -> Result<(Item, Item), QueueError> {
        let result = self.inner.store.discard(id, self.now()).await?;
        self.note_written([&result.0, &result.1]);
        self.kick();
        Ok(result)
    }

    pub async fn acknowledge(&self, id: u64) -> Result<Item, QueueError> {
        self.inner.store.acknowledge(id, self.now()).await
    }

    pub async fn counts(&self) -> Result<Counts, QueueError> {
        self.inner.store.counts(self.now()).await
    }

    /// Starts a drain that skips the wait, without waiting for it.
    pub fn kick(&self) {
        if self.inner.options.drain_after_capture {
            self.clone().spawn_drain(true);
        }
    }

    /// Starts a drain without waiting for it: every wake-up the runtime
    /// gives itself goes through here, one task type for all of them.
    fn spawn_drain(self, skip_wait: bool) {
        wasm_bindgen_futures::spawn_local(async move {
            let _ = self.drain(skip_wait).await;
        });
    }
}
