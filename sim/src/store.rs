//! A handheld's IndexedDB inside the simulation, as far as durability
//! goes, and the runtime's [`Store`] over it.
//!
//! What a committed transaction holds is kept by durability:
//!
//! * **strict** writes (a capture group, a discard, an acknowledgement,
//!   the setup: what only the device knows) take [`COMMIT_MS`] to commit;
//!   a worker killed before then loses them whole. Once committed they are
//!   durable, and so is every write committed before them;
//! * **relaxed** writes (the drain's lease and outcomes, a prune, the
//!   reference cache) commit at once but are durable only once a later
//!   strict write commits. A kill keeps a prefix of them, drawn from the
//!   seed: IndexedDB commits in order, so what survives is never a later
//!   write without the earlier ones.

use std::cell::RefCell;
use std::collections::btree_map::Entry;
use std::collections::BTreeMap;
use std::rc::Rc;

use stockhop::backoff::Backoff;
use stockhop::key::IdempotencyKey;
use stockhop::queue::{acknowledge, discard, Blockers, Counts, Item, ItemState, Session};
use stockhop::reference::{ReferenceMeta, RowKind};
use stockhop::runtime::{
    plan_capture, CaptureRequest, Clock, DeviceConfig, DrainSnapshot, Page, QueueError, Store,
    Written,
};
use stockhop::time::{Millis, UnixMs};
use uuid::Uuid;

use crate::clock::SimClock;

/// How long a strict transaction takes to commit, in device ms: the window
/// in which a kill loses it.
pub const COMMIT_MS: i64 = 8;
/// Most done items one prune deletes, as the browser's store.
const PRUNE_MAX_ITEMS: usize = 1_000;

/// What the database holds.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub items: BTreeMap<u64, Item>,
    pub sessions: BTreeMap<Uuid, Session>,
    pub backoff: Backoff,
    pub device: Option<DeviceConfig>,
    pub reference: Option<ReferenceMeta>,
    /// The next queue id (IndexedDB's key generator never reuses one).
    next_id: u64,
}

/// One committed transaction.
#[derive(Debug, Clone)]
enum Write {
    Put {
        items: Vec<Item>,
        sessions: Vec<Session>,
        backoff: Option<Backoff>,
    },
    Delete(Vec<u64>),
    Device(DeviceConfig),
    Reference(ReferenceMeta),
}

impl Snapshot {
    fn apply(&mut self, write: &Write) {
        match write {
            Write::Put {
                items,
                sessions,
                backoff,
            } => {
                for item in items {
                    let id = item.id.expect("a stored item has its queue id");
                    self.next_id = self.next_id.max(id + 1);
                    self.items.insert(id, item.clone());
                }
                for session in sessions {
                    self.sessions.insert(session.session_id, session.clone());
                }
                if let Some(backoff) = backoff {
                    self.backoff = *backoff;
                }
            }
            Write::Delete(ids) => {
                for id in ids {
                    self.items.remove(id);
                }
            }
            Write::Device(config) => self.device = Some(config.clone()),
            Write::Reference(meta) => self.reference = Some(meta.clone()),
        }
    }

    fn add(&mut self, mut item: Item) -> Item {
        self.next_id = self.next_id.max(1);
        item.id = Some(self.next_id);
        self.next_id += 1;
        item
    }
}

/// The database: what a live worker reads, what survives a kill.
#[derive(Debug, Default)]
pub struct Database {
    /// Everything committed, durable or not: what a live worker reads.
    live: Snapshot,
    durable: Snapshot,
    relaxed: Vec<Write>,
}

impl Database {
    pub fn live(&self) -> &Snapshot {
        &self.live
    }

    fn strict(&mut self, write: Write) {
        for earlier in std::mem::take(&mut self.relaxed) {
            self.durable.apply(&earlier);
        }
        self.durable.apply(&write);
        self.live.apply(&write);
    }

    fn relaxed(&mut self, write: Write) {
        self.live.apply(&write);
        self.relaxed.push(write);
    }

    /// The setup made before the simulated shift: durable.
    pub fn set_up(&mut self, config: DeviceConfig) {
        self.strict(Write::Device(config));
    }

    /// Relaxed writes not yet durable.
    pub fn at_risk(&self) -> usize {
        self.relaxed.len()
    }

    /// A kill: the first `kept` relaxed writes survive, the rest are
    /// lost; returns how many were.
    pub fn crash(&mut self, kept: usize) -> usize {
        let writes = std::mem::take(&mut self.relaxed);
        let lost = writes.len().saturating_sub(kept);
        for write in writes.into_iter().take(kept) {
            self.durable.apply(&write);
        }
        self.live = self.durable.clone();
        lost
    }
}

/// The runtime's store on a device's [`Database`].
#[derive(Clone)]
pub struct SimStore {
    pub db: Rc<RefCell<Database>>,
    pub clock: SimClock,
}

impl SimStore {
    /// A strict transaction's commit: `write` is made of what the store
    /// held when it began and lands [`COMMIT_MS`] later, unless the worker
    /// is killed first.
    async fn commit(&self, write: Write) {
        let at = self.clock.now().plus(Millis(COMMIT_MS as u64));
        self.clock.sleep_until(at).await;
        self.db.borrow_mut().strict(write);
    }

    fn session(&self, id: Uuid) -> Result<Session, QueueError> {
        self.db
            .borrow()
            .live
            .sessions
            .get(&id)
            .cloned()
            .ok_or(QueueError::Capture(
                stockhop::queue::CaptureError::UnknownSession(id),
            ))
    }

    fn item(&self, id: u64) -> Result<Item, QueueError> {
        self.db
            .borrow()
            .live
            .items
            .get(&id)
            .cloned()
            .ok_or(QueueError::NoItem(id))
    }

    /// Writes an item change and the item it adds, strictly.
    async fn add_beside(
        &self,
        item: Item,
        added: Item,
        session: Session,
    ) -> Result<(Item, Item), QueueError> {
        let added = self.db.borrow_mut().live.add(added);
        let write = Write::Put {
            items: vec![item.clone(), added.clone()],
            sessions: vec![session],
            backoff: None,
        };
        self.commit(write).await;
        Ok((item, added))
    }
}

impl Store for SimStore {
    /// The simulation keeps no reference rows: every lookup finds none.
    type Row = ();
    type Rows = ();
    type PageRows = ();

    async fn write_captures(
        &mut self,
        requests: &[(CaptureRequest, IdempotencyKey)],
        remembered: &BTreeMap<Uuid, Session>,
        now: UnixMs,
    ) -> Result<Written, QueueError> {
        let mut touched: BTreeMap<Uuid, Session> = BTreeMap::new();
        let mut results = Vec::with_capacity(requests.len());
        let mut items = Vec::new();
        {
            let mut db = self.db.borrow_mut();
            for (request, key) in requests {
                let id = request.session_id();
                if let Entry::Vacant(vacant) = touched.entry(id) {
                    let session = remembered.get(&id).or_else(|| db.live.sessions.get(&id));
                    if let Some(session) = session {
                        vacant.insert(session.clone());
                    }
                }
                let item = plan_capture(&mut touched, request, *key, now, None)
                    .map(|item| db.live.add(item));
                if let Ok(item) = &item {
                    items.push(item.clone());
                }
                results.push(item);
            }
        }
        if !items.is_empty() {
            let write = Write::Put {
                items,
                sessions: touched.values().cloned().collect(),
                backoff: None,
            };
            self.commit(write).await;
        }
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
        let mut item = self.item(id)?;
        let mut session = self.session(item.session_id)?;
        let void = discard(&mut item, &mut session, key, now)?;
        self.add_beside(item, void, session).await
    }

    async fn acknowledge(
        &mut self,
        id: u64,
        rescan: Option<IdempotencyKey>,
        key: IdempotencyKey,
        now: UnixMs,
    ) -> Result<(Item, Item), QueueError> {
        let mut item = self.item(id)?;
        let mut session = self.session(item.session_id)?;
        let ack = acknowledge(&mut item, &mut session, rescan, key, now)?;
        self.add_beside(item, ack, session).await
    }

    async fn load_drain(&self) -> Result<DrainSnapshot, QueueError> {
        let db = self.db.borrow();
        Ok(DrainSnapshot {
            sessions: db.live.sessions.values().cloned().collect(),
            pending: db
                .live
                .items
                .values()
                .filter(|item| item.state.is_pending())
                .cloned()
                .collect(),
            backoff: db.live.backoff,
        })
    }

    async fn put_items(&self, items: &[Item], backoff: Option<Backoff>) -> Result<(), QueueError> {
        self.db.borrow_mut().relaxed(Write::Put {
            items: items.to_vec(),
            sessions: Vec::new(),
            backoff,
        });
        Ok(())
    }

    async fn prune_done(&self, now: UnixMs, retention: Millis) -> Result<usize, QueueError> {
        let mut db = self.db.borrow_mut();
        let ids: Vec<u64> = db
            .live
            .items
            .values()
            .filter(|item| item.is_prunable(now, retention))
            .filter_map(|item| item.id)
            .take(PRUNE_MAX_ITEMS)
            .collect();
        let pruned = ids.len();
        if pruned > 0 {
            db.relaxed(Write::Delete(ids));
        }
        Ok(pruned)
    }

    async fn device(&self) -> Result<Option<DeviceConfig>, QueueError> {
        Ok(self.db.borrow().live.device.clone())
    }

    async fn set_device(
        &self,
        config: &DeviceConfig,
        _clear_cache: bool,
    ) -> Result<(), QueueError> {
        self.commit(Write::Device(config.clone())).await;
        Ok(())
    }

    async fn list(
        &self,
        after: Option<u64>,
        limit: u32,
    ) -> Result<Vec<(Item, Option<String>)>, QueueError> {
        let db = self.db.borrow();
        let items = &db.live.items;
        let blocked: Vec<&Item> = items
            .values()
            .filter(|item| item.state == ItemState::Blocked)
            .collect();
        let blockers = Blockers::from_blocked(blocked);
        Ok(items
            .range(after.map_or(0, |id| id + 1)..)
            .take(limit as usize)
            .map(|(_, item)| (item.clone(), blockers.reason(item)))
            .collect())
    }

    async fn counts(&self, now: UnixMs) -> Result<Counts, QueueError> {
        let db = self.db.borrow();
        let mut counts = Counts::default();
        let mut oldest: Option<UnixMs> = None;
        for item in db.live.items.values() {
            counts.add(item.state, 1);
            if matches!(item.state, ItemState::Queued | ItemState::Sending) {
                oldest = Some(oldest.map_or(item.queued_at, |o| o.min(item.queued_at)));
            }
        }
        Ok(counts.with_oldest(oldest, now))
    }

    async fn reference_meta(&self) -> Result<Option<ReferenceMeta>, QueueError> {
        Ok(self.db.borrow().live.reference.clone())
    }

    async fn reference_counts(&self) -> Result<[u32; 4], QueueError> {
        Ok([0; 4])
    }

    async fn write_reference_page(
        &self,
        _page: &Page<()>,
        meta: &ReferenceMeta,
    ) -> Result<(), QueueError> {
        self.db.borrow_mut().relaxed(Write::Reference(meta.clone()));
        Ok(())
    }

    async fn put_unit(&self, _unit: &()) -> Result<(), QueueError> {
        Ok(())
    }

    async fn find_unit(&self, _code: &str) -> Result<((), ()), QueueError> {
        Ok(((), ()))
    }

    async fn reference_row(&self, _kind: RowKind, _id: &str) -> Result<(), QueueError> {
        Ok(())
    }

    async fn reference_rows(&self, _kind: RowKind, _limit: u32) -> Result<(), QueueError> {
        Ok(())
    }

    fn close(self) {}
}
