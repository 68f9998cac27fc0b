//! A handheld inside the simulation: the shipped queue runtime
//! (`stockhop::runtime`) on a single-threaded pool, over the device's
//! database model (`store.rs`), a transport whose requests the world
//! carries, a clock the world moves and a platform drawing keys from the
//! seed.
//!
//! The world drives a device by turns: it moves the device's clock, fires
//! the timers due, and runs the pool until every task waits again. A sync
//! request the runtime sent is then in the outbox for the world to carry;
//! its outcome comes back through the request's one-shot in a later turn.
//! A killed worker is its pool dropped (the runtime, its requests and any
//! transaction not yet committed with it) and the database crashed; the
//! next worker restarts from what the database kept.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::future::Future;
use std::rc::Rc;

use futures_channel::oneshot;
use futures_executor::{LocalPool, LocalSpawner};
use futures_util::task::LocalSpawnExt;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use stockhop::key::IdempotencyKey;
use stockhop::queue::item::{Item, ItemState};
use stockhop::queue::session::Session;
use stockhop::queue::{BeatOutcome, TransportOutcome};
use stockhop::reference::{PageHead, Pull};
use stockhop::runtime::{DeviceConfig, Options, Page, Platform, Queue, QueueError, Transport};
use stockhop::time::UnixMs;
use stockhop::wire::{Heartbeat, SyncRequest};
use uuid::Uuid;

use crate::clock::SimClock;
use crate::store::{Database, SimStore};

/// Sync requests the runtime sent, each with the one-shot its outcome goes
/// back on.
type Outbox = Rc<RefCell<Vec<(SyncRequest, oneshot::Sender<TransportOutcome>)>>>;

/// The runtime's transport: a sync request goes to the outbox for the
/// world to carry. The heartbeat and the reference reads do not travel
/// the simulated network: the heartbeat is taken, and the site's reference
/// data never changes (every page is empty and the last).
#[derive(Clone)]
struct SimTransport {
    outbox: Outbox,
}

impl Transport for SimTransport {
    type PageRows = ();
    type Unit = ();

    async fn send(&self, _device: &DeviceConfig, request: &SyncRequest) -> TransportOutcome {
        let (answer, outcome) = oneshot::channel();
        self.outbox.borrow_mut().push((request.clone(), answer));
        // A request the world drops (its worker killed) never answers.
        outcome.await.unwrap_or(TransportOutcome::Offline)
    }

    async fn heartbeat(&self, _device: &DeviceConfig, _beat: &Heartbeat) -> BeatOutcome {
        BeatOutcome::Acknowledged { period: None }
    }

    async fn reference(&self, device: &DeviceConfig, pull: &Pull) -> Result<Page<()>, QueueError> {
        Ok(Page {
            head: PageHead {
                cursor: pull.after.clone().unwrap_or_else(|| "0".into()),
                more: false,
                device: None,
                operators: serde_json::Value::Null,
            },
            rows: (),
            site: device.site_url.clone(),
        })
    }

    async fn unit(&self, _device: &DeviceConfig, _epc: &str) -> Result<Option<()>, QueueError> {
        Ok(None)
    }
}

/// The runtime's platform: no lock to share (one worker a device), no
/// Background Sync (the world restarts workers), keys from the seed.
#[derive(Clone)]
struct SimPlatform {
    spawner: LocalSpawner,
    keys: Rc<RefCell<ChaCha8Rng>>,
}

impl Platform for SimPlatform {
    type Lock = ();

    async fn lock(&self) -> Option<()> {
        Some(())
    }

    async fn register_sync(&self) -> bool {
        false
    }

    fn spawn(&self, task: impl Future<Output = ()> + 'static) {
        self.spawner
            .spawn_local(task)
            .expect("the pool outlives its runtime");
    }

    fn mint_key(&self) -> Result<IdempotencyKey, QueueError> {
        Ok(IdempotencyKey::from_random_bytes(
            self.keys.borrow_mut().random(),
        ))
    }
}

/// A running worker: the pool its runtime runs on, and the handle.
struct Worker {
    pool: LocalPool,
    queue: Queue<SimStore>,
}

/// One simulated handheld.
pub struct Device {
    pub device_id: String,
    pub token: String,
    /// Device clock minus the world's clock.
    pub skew_ms: i64,
    pub db: Rc<RefCell<Database>>,
    clock: SimClock,
    outbox: Outbox,
    keys: Rc<RefCell<ChaCha8Rng>>,
    worker: Option<Worker>,
    /// Bumped at every worker start: answers to an earlier worker's
    /// requests reach nobody.
    pub generation: u64,
    /// The request in flight: its id and the one-shot its outcome goes on.
    pub in_flight: Option<(u64, oneshot::Sender<TransportOutcome>)>,
    /// The world time of the wake the world has scheduled for the timers.
    pub wake_at: Option<UnixMs>,
    /// The session scans go into, if one is open.
    pub open_session: Option<Uuid>,
    /// Every capture whose "kept" reached the operator.
    pub acknowledged: Rc<RefCell<Vec<IdempotencyKey>>>,
}

impl Device {
    /// A handheld set up for the site before the shift; `seed` draws its keys.
    pub fn new(device_id: String, token: String, skew_ms: i64, seed: u64) -> Device {
        let mut db = Database::default();
        db.set_up(DeviceConfig {
            site_url: "https://site.sim".into(),
            device_token: token.clone(),
            device_id: device_id.clone(),
            done_retention_days: None,
        });
        Device {
            device_id,
            token,
            skew_ms,
            db: Rc::new(RefCell::new(db)),
            clock: SimClock::default(),
            outbox: Outbox::default(),
            keys: Rc::new(RefCell::new(ChaCha8Rng::seed_from_u64(seed))),
            worker: None,
            generation: 0,
            in_flight: None,
            wake_at: None,
            open_session: None,
            acknowledged: Rc::default(),
        }
    }

    pub fn clock(&self, world_now: UnixMs) -> UnixMs {
        UnixMs(world_now.0 + self.skew_ms)
    }

    /// Starts a worker on what the database holds, woken to drain (the
    /// service worker's start for a page's message or a sync event).
    pub fn start_worker(&mut self, world_now: UnixMs) {
        self.clock.set(self.clock(world_now));
        let pool = LocalPool::new();
        let platform = SimPlatform {
            spawner: pool.spawner(),
            keys: Rc::clone(&self.keys),
        };
        let store = SimStore {
            db: Rc::clone(&self.db),
            clock: self.clock.clone(),
        };
        let transport = SimTransport {
            outbox: Rc::clone(&self.outbox),
        };
        let queue = Queue::start(
            store,
            transport,
            self.clock.clone(),
            platform,
            Options::default(),
            "sim".into(),
        );
        self.generation += 1;
        self.in_flight = None;
        self.wake_at = None;
        self.worker = Some(Worker { pool, queue });
        self.spawn(|queue| async move {
            let _ = queue.drain(false).await;
        });
    }

    /// Kills the worker; returns how many relaxed writes were lost.
    pub fn kill_worker(&mut self, rng: &mut impl Rng) -> usize {
        self.worker = None;
        self.in_flight = None;
        self.wake_at = None;
        self.outbox.borrow_mut().clear();
        self.clock.forget_timers();
        let mut db = self.db.borrow_mut();
        let kept = rng.random_range(0..=db.at_risk());
        db.crash(kept)
    }

    pub fn worker_running(&self) -> bool {
        self.worker.is_some()
    }

    /// Runs `task` on the worker's pool with a handle on its queue (the
    /// page's message to a running worker); the world runs the pool.
    pub fn spawn<F: Future<Output = ()> + 'static>(&self, task: impl FnOnce(Queue<SimStore>) -> F) {
        if let Some(worker) = &self.worker {
            let queue = worker.queue.clone();
            worker
                .pool
                .spawner()
                .spawn_local(task(queue))
                .expect("the pool is running");
        }
    }

    /// Captures on the worker; the key is acknowledged once the operator
    /// hears "kept".
    pub fn kept<F>(&self, task: impl FnOnce(Queue<SimStore>) -> F)
    where
        F: Future<Output = Result<Item, QueueError>> + 'static,
    {
        let acknowledged = Rc::clone(&self.acknowledged);
        self.spawn(|queue| {
            let kept = task(queue);
            async move {
                if let Ok(item) = kept.await {
                    acknowledged.borrow_mut().push(item.key);
                }
            }
        });
    }

    /// One turn: the clock moved to `world_now`, the timers due fired, and
    /// every task run until it waits again.
    pub fn run(&mut self, world_now: UnixMs) {
        self.clock.set(self.clock(world_now));
        if let Some(worker) = self.worker.as_mut() {
            worker.pool.run_until_stalled();
        }
    }

    /// The sync requests the runtime sent since the last turn.
    pub fn take_requests(&mut self) -> Vec<(SyncRequest, oneshot::Sender<TransportOutcome>)> {
        std::mem::take(&mut *self.outbox.borrow_mut())
    }

    /// When the earliest timer is due, in world time.
    pub fn next_timer(&self) -> Option<UnixMs> {
        self.worker.as_ref()?;
        let at = self.clock.next_timer()?;
        Some(UnixMs(at.0 - self.skew_ms))
    }

    /// Items not yet done or decided, as the database holds them.
    pub fn pending(&self) -> usize {
        self.db
            .borrow()
            .live()
            .items
            .values()
            .filter(|item| item.state.is_pending())
            .count()
    }

    /// A session as the database holds it.
    pub fn session(&self, id: Uuid) -> Option<Session> {
        self.db.borrow().live().sessions.get(&id).cloned()
    }

    /// Items of a session, as the database holds them.
    pub fn session_items(&self, id: Uuid) -> Vec<Item> {
        self.db
            .borrow()
            .live()
            .items
            .values()
            .filter(|item| item.session_id == id)
            .cloned()
            .collect()
    }

    /// Items waiting for a person.
    pub fn waiting_for_a_person(&self, state: ItemState) -> Vec<Item> {
        self.db
            .borrow()
            .live()
            .items
            .values()
            .filter(|item| item.state == state && !item.acknowledged)
            .cloned()
            .collect()
    }

    /// Every item the database holds, by key.
    pub fn items_by_key(&self) -> BTreeMap<IdempotencyKey, Item> {
        self.db
            .borrow()
            .live()
            .items
            .values()
            .map(|item| (item.key, item.clone()))
            .collect()
    }
}
