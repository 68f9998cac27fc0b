//! The runtime natively, on a single-threaded pool, over an in-memory store
//! whose writes can be made to fail, a site that applies everything, and a
//! clock the test moves. (The simulation runs it under faults at scale.)

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::future::Future;
use std::rc::Rc;
use std::task::Poll;

use futures_executor::{LocalPool, LocalSpawner};
use futures_util::task::LocalSpawnExt;
use serde_json::json;
use uuid::Uuid;

use super::*;
use crate::backoff::Backoff;
use crate::key::IdempotencyKey;
use crate::queue::{acknowledge, discard, BeatOutcome, Capture, Counts, Item, Session};
use crate::queue::{ItemState, TransportOutcome};
use crate::reference::{PageHead, Pull, ReferenceMeta, RowKind};
use crate::time::{Millis, UnixMs};
use crate::wire::{Command, Heartbeat, Mode, OpenSessionBody, SyncRequest};

const T0: UnixMs = UnixMs(1_795_940_000_000);

#[derive(Default)]
struct Db {
    items: BTreeMap<u64, Item>,
    sessions: BTreeMap<Uuid, Session>,
    backoff: Backoff,
    /// Group writes, and how many of the next ones fail.
    group_writes: u32,
    failing_groups: u32,
    /// A group write fails whenever it trusts a remembered session.
    refuse_remembered: bool,
    /// Drain writes (a lease, an outcome) to let through before one fails.
    puts_before_failure: Option<u32>,
    drain_loads: u32,
}

#[derive(Clone, Default)]
struct MemStore(Rc<RefCell<Db>>);

fn storage() -> QueueError {
    QueueError::Storage("refused".into())
}

impl Store for MemStore {
    type Row = ();
    type Rows = ();
    type PageRows = ();

    async fn write_captures(
        &mut self,
        requests: &[(CaptureRequest, IdempotencyKey)],
        remembered: &BTreeMap<Uuid, Session>,
        now: UnixMs,
    ) -> Result<Written, QueueError> {
        let mut db = self.0.borrow_mut();
        db.group_writes += 1;
        if db.failing_groups > 0 {
            db.failing_groups -= 1;
            return Err(storage());
        }
        let mut touched = BTreeMap::new();
        let mut results = Vec::new();
        for (request, key) in requests {
            let id = request.session_id();
            if let std::collections::btree_map::Entry::Vacant(vacant) = touched.entry(id) {
                if let Some(session) = remembered.get(&id) {
                    if db.refuse_remembered {
                        return Err(storage());
                    }
                    vacant.insert(session.clone());
                } else if let Some(session) = db.sessions.get(&id) {
                    vacant.insert(session.clone());
                }
            }
            results.push(plan_capture(&mut touched, request, *key, now, None));
        }
        for item in results.iter_mut().flatten() {
            let id = db.items.len() as u64 + 1;
            item.id = Some(id);
            db.items.insert(id, item.clone());
        }
        db.sessions.extend(touched.clone());
        Ok(Written {
            results,
            sessions: touched,
        })
    }

    async fn discard(
        &mut self,
        id: u64,
        key: IdempotencyKey,
        now: UnixMs,
    ) -> Result<(Item, Item), QueueError> {
        let mut db = self.0.borrow_mut();
        let mut item = db.items[&id].clone();
        let mut session = db.sessions[&item.session_id].clone();
        let mut void = discard(&mut item, &mut session, key, now)?;
        void.id = Some(db.items.len() as u64 + 1);
        db.items.insert(id, item.clone());
        db.items.insert(void.id.unwrap(), void.clone());
        db.sessions.insert(session.session_id, session);
        Ok((item, void))
    }

    async fn acknowledge(
        &mut self,
        id: u64,
        rescan: Option<IdempotencyKey>,
        key: IdempotencyKey,
        now: UnixMs,
    ) -> Result<(Item, Item), QueueError> {
        let mut db = self.0.borrow_mut();
        let mut item = db.items[&id].clone();
        let mut session = db.sessions[&item.session_id].clone();
        let mut ack = acknowledge(&mut item, &mut session, rescan, key, now)?;
        ack.id = Some(db.items.len() as u64 + 1);
        db.items.insert(id, item.clone());
        db.items.insert(ack.id.unwrap(), ack.clone());
        db.sessions.insert(session.session_id, session);
        Ok((item, ack))
    }

    async fn load_drain(&self) -> Result<DrainSnapshot, QueueError> {
        let mut db = self.0.borrow_mut();
        db.drain_loads += 1;
        Ok(DrainSnapshot {
            sessions: db.sessions.values().cloned().collect(),
            pending: db
                .items
                .values()
                .filter(|item| item.state.is_pending())
                .cloned()
                .collect(),
            backoff: db.backoff,
        })
    }

    async fn put_items(&self, items: &[Item], backoff: Option<Backoff>) -> Result<(), QueueError> {
        let mut db = self.0.borrow_mut();
        match db.puts_before_failure {
            Some(0) => {
                db.puts_before_failure = None;
                return Err(storage());
            }
            Some(n) => db.puts_before_failure = Some(n - 1),
            None => {}
        }
        for item in items {
            db.items.insert(item.id.unwrap(), item.clone());
        }
        if let Some(backoff) = backoff {
            db.backoff = backoff;
        }
        Ok(())
    }

    async fn prune_done(&self, now: UnixMs, retention: Millis) -> Result<usize, QueueError> {
        let mut db = self.0.borrow_mut();
        let before = db.items.len();
        db.items.retain(|_, item| !item.is_prunable(now, retention));
        Ok(before - db.items.len())
    }

    async fn device(&self) -> Result<Option<DeviceConfig>, QueueError> {
        Ok(Some(DeviceConfig {
            site_url: "https://site.test".into(),
            device_token: "token".into(),
            device_id: "HH-1".into(),
            done_retention_days: None,
        }))
    }

    async fn set_device(&self, _: &DeviceConfig, _: bool) -> Result<(), QueueError> {
        Ok(())
    }

    async fn list(
        &self,
        _: Option<u64>,
        _: u32,
    ) -> Result<Vec<(Item, Option<String>)>, QueueError> {
        Ok(Vec::new())
    }

    async fn counts(&self, now: UnixMs) -> Result<Counts, QueueError> {
        Ok(Counts::default().with_oldest(None, now))
    }

    async fn reference_meta(&self) -> Result<Option<ReferenceMeta>, QueueError> {
        Ok(None)
    }

    async fn reference_counts(&self) -> Result<[u32; 4], QueueError> {
        Ok([0; 4])
    }

    async fn write_reference_page(
        &self,
        _: &Page<()>,
        _: &ReferenceMeta,
    ) -> Result<(), QueueError> {
        Ok(())
    }

    async fn put_unit(&self, _: &()) -> Result<(), QueueError> {
        Ok(())
    }

    async fn find_unit(&self, _: &str) -> Result<((), ()), QueueError> {
        Ok(((), ()))
    }

    async fn reference_row(&self, _: RowKind, _: &str) -> Result<(), QueueError> {
        Ok(())
    }

    async fn reference_rows(&self, _: RowKind, _: u32) -> Result<(), QueueError> {
        Ok(())
    }

    fn close(self) {}
}

/// A site that applies every item, and counts requests; while `down`,
/// nothing answers.
#[derive(Clone, Default)]
struct Site {
    requests: Rc<RefCell<Vec<SyncRequest>>>,
    down: Rc<Cell<bool>>,
}

impl Transport for Site {
    type PageRows = ();
    type Unit = ();

    async fn send(&self, _: &DeviceConfig, request: &SyncRequest) -> TransportOutcome {
        if self.down.get() {
            return TransportOutcome::Offline;
        }
        self.requests.borrow_mut().push(request.clone());
        let results: Vec<_> = request
            .items
            .iter()
            .map(|item| {
                json!({"key": item.key, "client_seq": item.client_seq, "status": 200,
                       "outcome": "applied", "replayed": false,
                       "recorded_at": "2026-11-29T10:15:02.401Z", "hop_ids": []})
            })
            .collect();
        let body = json!({"server_time": "2026-11-29T10:15:02.480Z", "results": results});
        TransportOutcome::from_text(200, &body.to_string())
    }

    async fn heartbeat(&self, _: &DeviceConfig, _: &Heartbeat) -> BeatOutcome {
        if self.down.get() {
            return BeatOutcome::Failed;
        }
        BeatOutcome::Acknowledged { period: None }
    }

    async fn reference(&self, device: &DeviceConfig, _: &Pull) -> Result<Page<()>, QueueError> {
        if self.down.get() {
            return Err(QueueError::Offline);
        }
        Ok(Page {
            head: PageHead {
                cursor: "0".into(),
                more: false,
                device: None,
                operators: serde_json::Value::Null,
            },
            rows: (),
            site: device.site_url.clone(),
        })
    }

    async fn unit(&self, _: &DeviceConfig, _: &str) -> Result<Option<()>, QueueError> {
        Ok(None)
    }
}

/// A clock that stands still; its sleeps never end (the tests drain by
/// asking).
#[derive(Clone)]
struct Still;

impl Clock for Still {
    type Sleep = std::future::Pending<()>;
    fn now(&self) -> UnixMs {
        T0
    }
    fn sleep_until(&self, _: UnixMs) -> Self::Sleep {
        std::future::pending()
    }
}

#[derive(Clone)]
struct Local {
    spawner: LocalSpawner,
    keys: Rc<Cell<u128>>,
}

impl Platform for Local {
    type Lock = ();
    async fn lock(&self) -> Option<()> {
        Some(())
    }
    async fn register_sync(&self) -> bool {
        false
    }
    fn spawn(&self, task: impl Future<Output = ()> + 'static) {
        self.spawner.spawn_local(task).unwrap();
    }
    fn mint_key(&self) -> Result<IdempotencyKey, QueueError> {
        self.keys.set(self.keys.get() + 1);
        Ok(IdempotencyKey::from_random_bytes(
            self.keys.get().to_le_bytes(),
        ))
    }
}

fn start(store: &MemStore, site: &Site) -> (LocalPool, Queue<MemStore>) {
    let pool = LocalPool::new();
    let platform = Local {
        spawner: pool.spawner(),
        keys: Rc::default(),
    };
    let options = Options {
        drain_after_capture: false,
        wake_on_timer: false,
    };
    let queue = Queue::start(
        store.clone(),
        site.clone(),
        Still,
        platform,
        options,
        "test".into(),
    );
    (pool, queue)
}

/// A runtime over a fresh store and site, with session `n` opened.
fn opened(n: u128) -> (MemStore, Site, LocalPool, Queue<MemStore>, Uuid) {
    let (store, site) = (MemStore::default(), Site::default());
    let (mut pool, queue) = start(&store, &site);
    let session = Uuid::from_u128(n);
    block_on(&mut pool, queue.open_session(Some(session), open_body())).unwrap();
    (store, site, pool, queue, session)
}

fn scan(epc: &str) -> Capture {
    Capture {
        command: Command::Scan,
        body: json!({"mode": "put_away", "epc": epc, "bin": "B-1"}),
    }
}

fn open_body() -> OpenSessionBody {
    OpenSessionBody {
        operator_id: "op-1".into(),
        mode: Mode::PutAway,
        context: Default::default(),
    }
}

/// Runs `future` on `pool` beside the runtime.
fn block_on<T>(pool: &mut LocalPool, future: impl Future<Output = T>) -> T {
    let mut future = std::pin::pin!(future);
    loop {
        pool.run_until_stalled();
        let waker = futures_util::task::noop_waker();
        let mut cx = std::task::Context::from_waker(&waker);
        if let Poll::Ready(value) = future.as_mut().poll(&mut cx) {
            return value;
        }
    }
}

#[test]
fn a_burst_is_written_in_one_group_with_contiguous_seqs() {
    let (store, _, mut pool, queue, session) = opened(7);
    let writes = store.0.borrow().group_writes;
    let scans = (0..5).map(|n| scan(&format!("E{n}"))).collect();
    let items = block_on(&mut pool, queue.capture_many(session, scans));
    let seqs: Vec<u64> = items
        .iter()
        .map(|i| i.as_ref().unwrap().client_seq)
        .collect();
    assert_eq!(seqs, [2, 3, 4, 5, 6]);
    assert_eq!(store.0.borrow().group_writes, writes + 1, "one transaction");
}

#[test]
fn a_group_refused_behind_a_remembered_session_is_written_from_storage() {
    let (store, _, mut pool, queue, session) = opened(8);
    // Another writer took seq 2 meanwhile: what the runtime remembers is
    // behind, and the store refuses a group that trusts it.
    store
        .0
        .borrow_mut()
        .sessions
        .get_mut(&session)
        .unwrap()
        .next_seq = 3;
    store.0.borrow_mut().refuse_remembered = true;
    let item = block_on(&mut pool, queue.capture(session, scan("E1"))).unwrap();
    assert_eq!(item.client_seq, 3, "the seq storage says is next");
}

#[test]
fn a_failed_group_is_reported_and_nothing_is_acknowledged() {
    let (store, _, mut pool, queue, session) = opened(9);
    store.0.borrow_mut().failing_groups = 2;
    let failed = block_on(&mut pool, queue.capture(session, scan("E1")));
    assert_eq!(failed, Err(storage()));
    let item = block_on(&mut pool, queue.capture(session, scan("E1"))).unwrap();
    assert_eq!(item.client_seq, 2, "the failed capture took no seq");
}

#[test]
fn a_drain_sends_in_seq_order_and_a_failed_record_restores_from_storage() {
    let (store, site, mut pool, queue, session) = opened(10);
    block_on(&mut pool, queue.capture(session, scan("E1"))).unwrap();
    let report = block_on(&mut pool, queue.drain(true)).unwrap();
    assert_eq!((report.requests, report.pending), (1, 0));
    let seqs: Vec<u64> = site.requests.borrow()[0]
        .items
        .iter()
        .map(|i| i.client_seq)
        .collect();
    assert_eq!(seqs, [1, 2]);
    assert!(store
        .0
        .borrow()
        .items
        .values()
        .all(|i| i.state == ItemState::Done));

    // The outcome's write fails: the drain is dropped and read again.
    block_on(&mut pool, queue.capture(session, scan("E2"))).unwrap();
    let loads = store.0.borrow().drain_loads;
    store.0.borrow_mut().puts_before_failure = Some(1);
    let failed = block_on(&mut pool, queue.drain(true));
    assert!(failed.is_err(), "{failed:?}");
    let report = block_on(&mut pool, queue.drain(true)).unwrap();
    assert_eq!(report.pending, 0);
    assert_eq!(store.0.borrow().drain_loads, loads + 1, "restored once");
}

#[test]
fn the_sites_first_answer_after_an_outage_ends_the_drains_wait() {
    let (store, site, mut pool, queue, session) = opened(11);
    site.down.set(true);
    block_on(&mut pool, queue.capture(session, scan("E1"))).unwrap();
    let report = block_on(&mut pool, queue.drain(true)).unwrap();
    assert_eq!(report.pending, 2, "kept");
    let waits = Some(T0.plus(crate::backoff::BACKOFF_STEPS[0]));
    assert_eq!(report.next_attempt_at, waits);
    let report = block_on(&mut pool, queue.drain(false)).unwrap();
    assert_eq!(
        (report.requests, report.next_attempt_at),
        (0, waits),
        "on schedule, nothing goes before the wait ends"
    );

    // The site is back: its answer to a reference read ends the wait.
    site.down.set(false);
    block_on(&mut pool, queue.reference_refresh()).unwrap();
    let report = block_on(&mut pool, queue.drain(false)).unwrap();
    assert_eq!(report.pending, 0, "drained without waiting out the backoff");
    assert_eq!(
        store.0.borrow().backoff,
        Backoff::default(),
        "the schedule starts over"
    );
}
