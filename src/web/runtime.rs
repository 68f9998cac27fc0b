//! The queue runtime in the browser: [`crate::runtime`]'s actor over
//! IndexedDB ([`Store`]), `fetch` ([`super::transport`]), `Date.now()`
//! and timers ([`super::clock`]), Web Locks and Background Sync
//! ([`Browser`]).
//!
//! Architecture invariant: only one runtime writes a queue database (the
//! service worker's; pages reach it by message), and every request is sent
//! under the `stockhop-drain` Web Lock.

use std::future::Future;

use crate::key::IdempotencyKey;
use crate::runtime::{Clock, Platform, Transport};

use super::browser::{self, LockGuard};
use super::error::QueueError;
use super::store::Store;

pub use crate::runtime::{DrainReport, Found, Options, APP_VERSION, PRUNE_EVERY};

/// The Web Lock every request is sent under, across the worker and its pages.
pub const DRAIN_LOCK: &str = "stockhop-drain";
/// The Background Sync tag registered once captures are waiting.
pub const SYNC_TAG: &str = "stockhop-drain";

/// The handheld queue on IndexedDB.
pub type Queue = crate::runtime::Queue<Store>;

/// The browser as the runtime's platform.
#[derive(Debug, Clone, Copy, Default)]
pub struct Browser;

impl Platform for Browser {
    type Lock = LockGuard;

    fn lock(&self) -> impl Future<Output = Option<LockGuard>> {
        browser::lock(DRAIN_LOCK)
    }

    fn register_sync(&self) -> impl Future<Output = bool> {
        browser::register_sync(SYNC_TAG)
    }

    fn spawn(&self, task: impl Future<Output = ()> + 'static) {
        wasm_bindgen_futures::spawn_local(task);
    }

    fn mint_key(&self) -> Result<IdempotencyKey, QueueError> {
        Ok(IdempotencyKey::mint()?)
    }
}

impl Queue {
    /// Opens the queue on database `name` and starts its runtime; its
    /// heartbeat names [`APP_VERSION`]. (The service worker starts its
    /// own on a store it keeps a clone of: `super::worker`.)
    pub async fn open<T, C>(
        name: &str,
        transport: T,
        clock: C,
        options: Options,
    ) -> Result<Queue, QueueError>
    where
        T: Transport<PageRows = super::cache::PageRows, Unit = wasm_bindgen::JsValue>
            + Clone
            + 'static,
        C: Clock + 'static,
    {
        let store = Store::open(name).await?;
        Ok(Queue::start(
            store,
            transport,
            clock,
            Browser,
            options,
            APP_VERSION.to_owned(),
        ))
    }
}
