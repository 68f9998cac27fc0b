//! What passes between [`super::handle::Queue`] and the actor
//! ([`super::actor`]): the commands and their replies, the options the
//! runtime is opened with and what a drain or a lookup reports. Both
//! sides import this; neither imports the other's internals.

use std::any::Any;
use std::marker::PhantomData;

use futures_channel::oneshot;
use serde::Serialize;

use crate::key::IdempotencyKey;
use crate::queue::{Counts, Item};
use crate::reference::{ReferenceMeta, RowKind};
use crate::time::{Millis, UnixMs};

use super::error::QueueError;
use super::records::{CaptureRequest, DeviceConfig, ReferenceStatus};
use super::traits::Store;

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

/// Where the actor sends a command's answer. Every command's answer goes
/// through the same one-shot channel, boxed: futures' channel, generic
/// over what it carries, was compiled once per answer type (a dozen copies
/// of its send, receive and drop in the handheld's module), and one box a
/// command costs nothing beside the IndexedDB transaction or fetch that
/// answers it.
pub(super) struct Reply<T> {
    sender: oneshot::Sender<Box<dyn Any>>,
    answer: PhantomData<fn(T)>,
}

/// The caller's end of a [`Reply`].
pub(super) struct Answer<T> {
    receiver: oneshot::Receiver<Box<dyn Any>>,
    answer: PhantomData<fn() -> T>,
}

/// A command's reply channel: the actor's end and the caller's.
pub(super) fn reply<T: 'static>() -> (Reply<T>, Answer<T>) {
    let (sender, receiver) = oneshot::channel();
    let reply = Reply {
        sender,
        answer: PhantomData,
    };
    let answer = Answer {
        receiver,
        answer: PhantomData,
    };
    (reply, answer)
}

impl<T: 'static> Reply<T> {
    /// Answers the command; fails only when the caller has gone.
    pub(super) fn send(self, answer: Result<T, QueueError>) -> Result<(), Gone> {
        self.sender.send(Box::new(answer)).map_err(|_| Gone)
    }
}

/// The caller stopped waiting for its answer.
#[derive(Debug)]
pub(super) struct Gone;

impl<T: 'static> Answer<T> {
    /// The command's answer; [`QueueError::Stopped`] when the runtime
    /// stopped before answering.
    pub(super) async fn recv(self) -> Result<T, QueueError> {
        match self.receiver.await {
            Ok(answer) => answer
                .downcast::<Result<T, QueueError>>()
                .map_or(Err(QueueError::Stopped), |answer| *answer),
            Err(_) => Err(QueueError::Stopped),
        }
    }
}

/// What the actor is asked to do.
pub(super) enum Command<S: Store> {
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
    FindUnit(String, Reply<Found<S::Row>>),
    ReferenceGet(RowKind, String, Reply<Found<S::Row>>),
    ReferenceList(RowKind, u32, Reply<S::Rows>),
    RefreshUnit(String, Reply<Option<S::Row>>),
    Close(Reply<()>),
}

/// A cached row (the store's "none" when there is none), the bin a unit
/// is in (only for a unit found by code), and the cache's meta record
/// (how old it is).
pub struct Found<R> {
    pub row: R,
    pub bin: Option<R>,
    pub meta: ReferenceMeta,
}
