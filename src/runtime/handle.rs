//! The handheld queue as its callers see it: [`Queue`], a handle on the
//! runtime's actor ([`super::actor`]). Every call is a command on the
//! actor's channel with a one-shot reply; a capture's reply comes only
//! once the transaction holding it has committed.

use futures_channel::mpsc;
use uuid::Uuid;

use crate::key::IdempotencyKey;
use crate::queue::{Capture, Counts, Item};
use crate::reference::RowKind;
use crate::wire::OpenSessionBody;

use super::actor::Runtime;
use super::command::{reply, Command, DrainReport, Found, Options, Reply};
use super::error::QueueError;
use super::records::{CaptureRequest, DeviceConfig, ReferenceStatus};
use super::traits::{Clock, Platform, Store, Transport};

/// The handheld queue as its callers see it: a handle on the runtime.
pub struct Queue<S: Store> {
    commands: mpsc::UnboundedSender<Command<S>>,
}

impl<S: Store> Clone for Queue<S> {
    fn clone(&self) -> Queue<S> {
        Queue {
            commands: self.commands.clone(),
        }
    }
}

impl<S: Store + 'static> Queue<S> {
    /// Starts the runtime on `store` (opened, upgraded) beside the caller,
    /// through `platform`; its heartbeat names `app_version`.
    pub fn start<T, C, P>(
        store: S,
        transport: T,
        clock: C,
        platform: P,
        options: Options,
        app_version: String,
    ) -> Queue<S>
    where
        T: Transport<PageRows = S::PageRows, Unit = S::Row> + Clone + 'static,
        C: Clock + 'static,
        P: Platform + Clone + 'static,
    {
        let (commands, inbox) = mpsc::unbounded();
        let runtime = Runtime::new(
            store,
            transport,
            clock,
            platform.clone(),
            options,
            app_version,
        );
        platform.spawn(runtime.run(inbox));
        Queue { commands }
    }

    async fn ask<T: 'static>(
        &self,
        command: impl FnOnce(Reply<T>) -> Command<S>,
    ) -> Result<T, QueueError> {
        let (reply, answer) = reply();
        self.commands
            .unbounded_send(command(reply))
            .map_err(|_| QueueError::Stopped)?;
        answer.recv().await
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
                let (reply, answer) = reply();
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
            results.push(answer.recv().await);
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
    pub async fn find_unit(&self, code: String) -> Result<Found<S::Row>, QueueError> {
        self.ask(|reply| Command::FindUnit(code, reply)).await
    }

    /// One cached row by kind and key.
    pub async fn reference_get(
        &self,
        kind: RowKind,
        id: String,
    ) -> Result<Found<S::Row>, QueueError> {
        self.ask(|reply| Command::ReferenceGet(kind, id, reply))
            .await
    }

    /// Every cached row of a kind, at most `limit`.
    pub async fn reference_list(&self, kind: RowKind, limit: u32) -> Result<S::Rows, QueueError> {
        self.ask(|reply| Command::ReferenceList(kind, limit, reply))
            .await
    }

    /// Reads a unit live from the site and keeps it in the cache; `None`
    /// when the site has none.
    pub async fn refresh_unit(&self, epc: String) -> Result<Option<S::Row>, QueueError> {
        self.ask(|reply| Command::RefreshUnit(epc, reply)).await
    }

    /// Stops the runtime and closes its database connection.
    pub async fn close(self) -> Result<(), QueueError> {
        self.ask(Command::Close).await
    }
}
