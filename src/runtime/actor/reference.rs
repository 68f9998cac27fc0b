//! The actor's turns for the reference cache: when a pull is due, each
//! page fetched beside the channel and written in a turn of its own, the
//! cache's meta record, a unit read live, and the callers of
//! `reference_refresh`.

use futures_channel::oneshot;

use crate::reference::{Pull, Pulls, ReferenceMeta};
use crate::time::UnixMs;

use super::super::error::QueueError;
use super::super::records::{DeviceConfig, ReferenceStatus};
use super::super::traits::{Clock, Page, Platform, Store, Transport};
use super::Runtime;

impl<S, T, C, P> Runtime<S, T, C, P>
where
    S: Store + 'static,
    T: Transport<PageRows = S::PageRows, Unit = S::Row> + Clone + 'static,
    C: Clock + 'static,
    P: Platform + Clone + 'static,
{
    /// When the reference cache's next pull is due by itself; `None` while
    /// the timer should not wake for it (one is out, or paging goes on by
    /// itself).
    pub(super) fn pull_timeout(&self) -> Option<UnixMs> {
        if self.page_in_flight.is_some() || self.pulls.is_loading() {
            return None;
        }
        self.pulls.poll_timeout()
    }

    /// The cache's meta record, read from storage the first time it is
    /// needed (an empty cache of the device's site when there is none).
    pub(super) async fn reference_meta(&mut self) -> Result<ReferenceMeta, QueueError> {
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

    pub(super) async fn reference_status(&mut self) -> Result<ReferenceStatus, QueueError> {
        let meta = self.reference_meta().await?;
        let rows = self.store.reference_counts().await?;
        let loading = self.page_in_flight.is_some() || self.pulls.is_loading();
        Ok(ReferenceStatus::new(&meta, loading, rows, self.clock.now()))
    }

    /// Starts the reference pull that is due, if none is out: fetched and
    /// parsed beside the channel, written in the turn its answer comes.
    pub(super) async fn step_reference(&mut self) {
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
        self.fetch_page(device, pull);
    }

    /// Sends a pull for its page.
    pub(super) fn fetch_page(&mut self, device: DeviceConfig, pull: Pull) {
        let transport = self.transport.clone();
        // The fetch and its body's read run as a task of their own: the
        // page's timeout covers the site and the network only, never a
        // turn of this loop that is busy with captures or the drain (a
        // page the site answered in milliseconds was once abandoned
        // because its body was read only after the timeout).
        let (sent, page) = oneshot::channel();
        self.platform.spawn(async move {
            let _ = sent.send(transport.reference(&device, &pull).await);
        });
        self.page_in_flight = Some(Box::pin(async move {
            page.await.unwrap_or(Err(QueueError::Offline))
        }));
    }

    /// Writes a page that came back, with the meta record after it, in one
    /// transaction; a failed pull waits its retry. Once the cache is at the
    /// site's end (or the pull failed), `reference_refresh` callers hear.
    pub(super) async fn write_page(&mut self, page: Result<Page<S::PageRows>, QueueError>) {
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
        if let Ok(Some(device)) = self.device().await {
            if let Some(pull) = self.pulls.poll_ahead(&page.head) {
                self.fetch_page(device, pull);
            }
        }
        let after = meta.after_page(&page.head, now);
        let written = self.store.write_reference_page(&page, &after).await;
        if let Err(err) = written {
            // The page read ahead would follow a page that is not there.
            self.page_in_flight = None;
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
    pub(super) async fn keep_unit(
        &mut self,
        unit: Result<Option<S::Row>, QueueError>,
    ) -> Result<Option<S::Row>, QueueError> {
        let unit = unit?;
        if let Some(unit) = &unit {
            self.store.put_unit(unit).await?;
        }
        Ok(unit)
    }

    /// Answers every `reference_refresh` caller (a failure, or the end).
    pub(super) fn answer_refresh(&mut self, answer: Result<ReferenceStatus, QueueError>) {
        let riding = std::mem::take(&mut self.refresh_riding);
        for reply in riding
            .into_iter()
            .chain(std::mem::take(&mut self.refresh_waiting))
        {
            let _ = reply.send(answer.clone());
        }
    }
}
