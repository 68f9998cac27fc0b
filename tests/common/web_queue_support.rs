//! Shared by the browser queue suites: a substitute network that records
//! every request and heartbeat and answers per item, and a clock the test
//! moves. Both let a test wait for what the runtime does (a request sent,
//! a timer armed) instead of sleeping for it.
#![cfg(target_arch = "wasm32")]
#![allow(dead_code)]

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use indexed_db_futures::database::Database;
use indexed_db_futures::transaction::{Transaction, TransactionMode};
use indexed_db_futures::Build;
use serde_json::json;
use stockhop::key::IdempotencyKey;
use stockhop::queue::{BeatOutcome, TransportOutcome};
use stockhop::reference::Pull;
#[allow(unused_imports)]
pub use stockhop::runtime::Store as _;
use stockhop::time::UnixMs;
use stockhop::web::cache::FetchedPage;
use stockhop::web::clock::Clock;
use stockhop::web::error::QueueError;
use stockhop::web::runtime::{Options, Queue};
use stockhop::web::schema;
use stockhop::web::store::{DeviceConfig, Store};
use stockhop::web::transport::Transport;
use stockhop::wire::{Heartbeat, SyncItem, SyncRequest};
use uuid::Uuid;

pub const T0: UnixMs = UnixMs(1_795_940_000_000);

/// Any `Serialize` value as a page (or an older build) would hand it
/// over: plain objects and numbers, `null` for `None`.
pub fn to_js<T: serde::Serialize + ?Sized>(
    value: &T,
) -> Result<wasm_bindgen::JsValue, serde_wasm_bindgen::Error> {
    value.serialize(&serde_wasm_bindgen::Serializer::json_compatible())
}

/// A second connection to the queue's database, as a fresh worker would
/// open it: what it reads is what IndexedDB holds.
pub async fn fresh(name: &str) -> Store {
    Store::open(name).await.unwrap()
}

/// Tasks waiting for something the runtime does: woken each time it
/// happens, each checks whether what it waits for is there yet.
#[derive(Clone, Default)]
pub struct Signal {
    waiting: Rc<RefCell<Vec<Waker>>>,
}

impl Signal {
    /// Something happened: every waiting task looks again.
    pub fn notify(&self) {
        for waker in self.waiting.borrow_mut().drain(..) {
            waker.wake();
        }
    }
    /// Ready once `done` holds, looked at now and after each notice.
    pub async fn until(&self, done: impl Fn() -> bool) {
        std::future::poll_fn(|cx| {
            if done() {
                return Poll::Ready(());
            }
            self.waiting.borrow_mut().push(cx.waker().clone());
            Poll::Pending
        })
        .await
    }
}

/// A clock that only moves when the test moves it; a runtime's timer on
/// it fires when the test moves it past the timer's instant.
#[derive(Clone, Default)]
pub struct TestClock {
    now: Rc<Cell<i64>>,
    sleepers: Rc<RefCell<Vec<Waker>>>,
    /// Every instant a timer was armed for, in order.
    armed: Rc<RefCell<Vec<UnixMs>>>,
    arming: Signal,
}

impl TestClock {
    pub fn at(now: UnixMs) -> TestClock {
        let clock = TestClock::default();
        clock.now.set(now.0);
        clock
    }
    /// Moves the clock to `now`; timers due by then fire.
    pub fn set(&self, now: UnixMs) {
        self.now.set(now.0);
        for waker in self.sleepers.borrow_mut().drain(..) {
            waker.wake();
        }
    }
    /// Timers armed on this clock and not yet fired.
    pub fn sleeping(&self) -> usize {
        self.sleepers.borrow().len()
    }
    /// Every instant a timer was armed for on this clock, in order.
    pub fn armed(&self) -> Vec<UnixMs> {
        self.armed.borrow().clone()
    }
    /// Ready once a timer has been armed for `at`.
    pub async fn timer_armed_for(&self, at: UnixMs) {
        self.arming
            .until(|| self.armed.borrow().contains(&at))
            .await
    }
}

/// A timer on a [`TestClock`].
pub struct TestSleep {
    clock: TestClock,
    at: UnixMs,
}

impl Future for TestSleep {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.clock.now() >= self.at {
            return Poll::Ready(());
        }
        self.clock.sleepers.borrow_mut().push(cx.waker().clone());
        Poll::Pending
    }
}

impl Clock for TestClock {
    type Sleep = TestSleep;
    fn now(&self) -> UnixMs {
        UnixMs(self.now.get())
    }
    fn sleep_until(&self, at: UnixMs) -> TestSleep {
        self.armed.borrow_mut().push(at);
        self.arming.notify();
        TestSleep {
            clock: self.clone(),
            at,
        }
    }
}

type PerItem = Rc<dyn Fn(&SyncItem) -> serde_json::Value>;
/// A reference row as the site keeps it: (change number, page array, row).
pub type RefRow = (u64, &'static str, serde_json::Value);
/// A reference pull: (after, limit).
pub type PullAsked = (Option<String>, usize);

/// The network as the test wants it: per-item answers, or one outcome for
/// the whole request; every request is recorded. Heartbeats are recorded
/// and acknowledged, except while the whole request fails without an
/// answer (an outage).
#[derive(Clone)]
pub struct FakeSite {
    pub requests: Rc<RefCell<Vec<SyncRequest>>>,
    pub heartbeats: Rc<RefCell<Vec<Heartbeat>>>,
    per_item: Rc<RefCell<PerItem>>,
    whole: Rc<RefCell<Option<TransportOutcome>>>,
    /// The site's reference rows: (change number, page array, row), as
    /// the site keeps them; a change takes the next number.
    pub reference: Rc<RefCell<Vec<RefRow>>>,
    /// The `device` every reference page carries.
    pub profile: Rc<RefCell<serde_json::Value>>,
    /// Every reference pull: (after, limit).
    pub pulls: Rc<RefCell<Vec<PullAsked>>>,
    /// How long a reference page takes to come back, in ms.
    pub page_delay_ms: Rc<Cell<u32>>,
    /// Reference pulls after this many answer offline (a link lost part
    /// way through a load).
    pub pages_before_offline: Rc<Cell<Option<usize>>>,
    /// Notified at each sync request and heartbeat that reaches the site.
    arrivals: Signal,
}

pub fn applied(item: &SyncItem) -> serde_json::Value {
    json!({"key": item.key, "client_seq": item.client_seq, "status": 200, "outcome": "applied",
           "replayed": false, "recorded_at": "2026-11-29T10:15:02.401Z", "hop_ids": []})
}

impl Default for FakeSite {
    fn default() -> FakeSite {
        FakeSite {
            requests: Rc::default(),
            heartbeats: Rc::default(),
            per_item: Rc::new(RefCell::new(Rc::new(applied))),
            whole: Rc::default(),
            reference: Rc::default(),
            profile: Rc::new(RefCell::new(
                json!({"device_id": "HH-0042", "profile": "mc3390xr",
                "modes": ["cycle_count", "receive", "dispatch_verify", "put_away", "find_unit"],
                "encode": true}),
            )),
            pulls: Rc::default(),
            page_delay_ms: Rc::default(),
            pages_before_offline: Rc::default(),
            arrivals: Signal::default(),
        }
    }
}

impl FakeSite {
    pub fn new() -> FakeSite {
        FakeSite::default()
    }

    pub fn answer_each(&self, per_item: impl Fn(&SyncItem) -> serde_json::Value + 'static) {
        *self.per_item.borrow_mut() = Rc::new(per_item);
        *self.whole.borrow_mut() = None;
    }

    pub fn answer_whole(&self, outcome: TransportOutcome) {
        *self.whole.borrow_mut() = Some(outcome);
    }

    /// Adds or changes a reference row (`units`, `bins`, `grns`, `counts`):
    /// it takes the next change number, as the site's triggers do.
    pub fn change(&self, table: &'static str, row: serde_json::Value) {
        let mut rows = self.reference.borrow_mut();
        let seq = rows.iter().map(|(seq, ..)| *seq).max().unwrap_or(0) + 1;
        let key = |row: &serde_json::Value| {
            ["epc", "bin", "grn", "count_id"]
                .iter()
                .find_map(|k| row.get(*k).cloned())
        };
        rows.retain(|(_, t, old)| !(*t == table && key(old) == key(&row)));
        rows.push((seq, table, row));
    }

    /// Whether requests reach the site (heartbeats, syncs and reads).
    fn offline(&self) -> bool {
        matches!(
            *self.whole.borrow(),
            Some(TransportOutcome::Offline | TransportOutcome::Timeout)
        )
    }

    /// Ready once `n` sync requests have reached the site.
    pub async fn requests_reach(&self, n: usize) {
        self.arrivals
            .until(|| self.requests.borrow().len() >= n)
            .await
    }

    /// Ready once `n` heartbeats have reached the site. This site answers
    /// a heartbeat at once and the runtime takes that answer before it
    /// next awaits anything, so by the time the waiting test runs the
    /// runtime has taken it too.
    pub async fn heartbeats_reach(&self, n: usize) {
        self.arrivals
            .until(|| self.heartbeats.borrow().len() >= n)
            .await
    }

    /// (session id, client_seq) of every item sent, request by request.
    pub fn sent(&self) -> Vec<Vec<(String, u64)>> {
        self.requests
            .borrow()
            .iter()
            .map(|r| {
                r.items
                    .iter()
                    .map(|i| (i.session_id.to_string(), i.client_seq))
                    .collect()
            })
            .collect()
    }
}

impl Transport for FakeSite {
    type PageRows = stockhop::web::cache::PageRows;
    type Unit = wasm_bindgen::JsValue;

    async fn send(&self, _device: &DeviceConfig, request: &SyncRequest) -> TransportOutcome {
        self.requests.borrow_mut().push(request.clone());
        self.arrivals.notify();
        if let Some(outcome) = self.whole.borrow().clone() {
            return outcome;
        }
        let per_item = self.per_item.borrow().clone();
        let results: Vec<_> = request.items.iter().map(|i| per_item(i)).collect();
        TransportOutcome::from_text(
            200,
            &json!({"server_time": "2026-11-29T10:15:02.480Z", "results": results}).to_string(),
        )
    }

    async fn heartbeat(&self, _device: &DeviceConfig, beat: &Heartbeat) -> BeatOutcome {
        self.heartbeats.borrow_mut().push(beat.clone());
        self.arrivals.notify();
        match *self.whole.borrow() {
            Some(TransportOutcome::Offline | TransportOutcome::Timeout) => BeatOutcome::Failed,
            _ => BeatOutcome::Acknowledged { period: None },
        }
    }

    /// Pages as `GET /v1/reference` answers them: the rows changed after
    /// the cursor, in change order, `limit` at a time.
    async fn reference(
        &self,
        device: &DeviceConfig,
        pull: &Pull,
    ) -> Result<FetchedPage, QueueError> {
        self.pulls
            .borrow_mut()
            .push((pull.after.clone(), pull.limit));
        // The answer comes back on a later task, as fetch's does.
        gloo_timers::future::TimeoutFuture::new(self.page_delay_ms.get()).await;
        let lost = self
            .pages_before_offline
            .get()
            .is_some_and(|pages| self.pulls.borrow().len() > pages);
        if self.offline() || lost {
            return Err(QueueError::Offline);
        }
        let after: u64 = pull.after.as_deref().unwrap_or("0").parse().unwrap();
        let mut rows: Vec<_> = self
            .reference
            .borrow()
            .iter()
            .filter(|(seq, ..)| *seq > after)
            .cloned()
            .collect();
        rows.sort_by_key(|(seq, ..)| *seq);
        let more = rows.len() > pull.limit;
        rows.truncate(pull.limit);
        let cursor = rows.last().map_or(after, |(seq, ..)| *seq);
        let mut page = json!({"cursor": cursor.to_string(), "more": more, "bins": [],
            "units": [], "grns": [], "counts": [], "device": self.profile.borrow().clone()});
        for (_, table, row) in rows {
            page[table].as_array_mut().unwrap().push(row);
        }
        FetchedPage::read(to_js(&page).unwrap(), &device.site_url).map_err(QueueError::Site)
    }

    async fn unit(
        &self,
        _device: &DeviceConfig,
        epc: &str,
    ) -> Result<Option<wasm_bindgen::JsValue>, QueueError> {
        if self.offline() {
            return Err(QueueError::Offline);
        }
        let unit = self
            .reference
            .borrow()
            .iter()
            .find(|(_, table, row)| *table == "units" && row["epc"] == epc)
            .map(|(_, _, row)| to_js(row).unwrap());
        Ok(unit)
    }
}

/// A readwrite transaction on one object store, for tests that write
/// records themselves (as an older build or another writer would).
pub fn write_tx<'a>(db: &'a Database, store: &str) -> Transaction<'a> {
    db.transaction(store)
        .with_mode(TransactionMode::Readwrite)
        .build()
        .unwrap()
}

/// Puts a record for `session` at `client_seq` the queue does not know of,
/// as another writer would: the unique (session, seq) index then refuses
/// the queue's own item at that seq.
pub async fn occupy_seq(name: &str, session: Uuid, client_seq: u64) {
    let db = schema::open(name).await.unwrap();
    let tx = write_tx(&db, schema::ITEMS);
    let row = json!({"key": IdempotencyKey::mint().unwrap(), "session_id": session,
        "client_seq": client_seq, "command": "scan", "occurred_at": "2026-11-29T09:01:00.000Z",
        "queued_at": "2026-11-29T09:01:00.000Z", "body": {}, "state": "done"});
    tx.object_store(schema::ITEMS)
        .unwrap()
        .add(to_js(&row).unwrap())
        .build()
        .unwrap()
        .await
        .unwrap();
    tx.commit().await.unwrap();
    db.close();
}

pub fn db_name(what: &str) -> String {
    format!(
        "stockhop-test-{what}-{}",
        stockhop::key::IdempotencyKey::mint().unwrap()
    )
}

/// A queue driven step by step: no drain after capture, no timers.
pub async fn manual_queue(name: &str, site: &FakeSite, clock: &TestClock) -> Queue {
    let options = Options {
        drain_after_capture: false,
        wake_on_timer: false,
    };
    set_up_queue(name, site, clock.clone(), options).await
}

/// A queue on `name` talking to `site`, its device set up.
pub async fn set_up_queue<C: Clock + 'static>(
    name: &str,
    site: &FakeSite,
    clock: C,
    options: Options,
) -> Queue {
    let queue = Queue::open(name, site.clone(), clock, options)
        .await
        .unwrap();
    queue.setup(device()).await.unwrap();
    queue
}

/// The setup the test queues run with.
pub fn device() -> DeviceConfig {
    DeviceConfig {
        site_url: "http://127.0.0.1:9".into(),
        device_token: "token".into(),
        device_id: "HH-0042".into(),
        done_retention_days: None,
    }
}

/// One page message through the worker's entry point, as `sw.js` hands it
/// over, and its reply.
pub async fn ask(
    worker: &stockhop::web::ServiceWorker,
    message: serde_json::Value,
) -> serde_json::Value {
    let data = to_js(&message).unwrap();
    let reply = wasm_bindgen_futures::JsFuture::from(worker.handle_message(data, None))
        .await
        .unwrap();
    serde_wasm_bindgen::from_value(reply).unwrap()
}
