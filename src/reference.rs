//! The handheld's copy of the site's reference data, sans-IO: when to pull
//! `GET /v1/reference` and from which cursor, what a page changes in the
//! cache's meta record, how old the cache is, and what a scan takes from
//! it (`unit_version`). The service worker's runtime (`crate::web`) does
//! the fetches and the IndexedDB transactions around these decisions.
//!
//! The cache fills in pages ([`REFERENCE_PAGE_ROWS`] rows each, one
//! IndexedDB transaction a page, the cursor in the same transaction), then
//! follows the site's changes after its cursor: after every drain run that
//! sent something, on a page's `wake`, and every [`REFERENCE_REFRESH_EVERY`]
//! while the worker is awake. A pull that fails waits
//! [`REFERENCE_RETRY_AFTER`]; a pull the page asks for (`reference_refresh`)
//! goes at once.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::body::Body;
use crate::time::{Millis, UnixMs};

/// Rows the handheld asks for in one page. One page is one IndexedDB
/// transaction, and a capture that reads the unit store waits behind the
/// one being written, so this bounds a capture's wait while the cache
/// fills. `bench/reference.mjs`, 100,000 units with captures running on a
/// 2-core machine: at 250 rows the p99 capture during the load was 85 ms
/// (load 19.3 s), at 100 rows 43–47 ms (load 23.6–26.1 s; the page read
/// ahead hides most of the extra requests); 100,000 units are 1,000
/// pages, a few hundred bytes of request each.
pub const REFERENCE_PAGE_ROWS: usize = 100;
/// How often an awake worker follows the site's changes without being
/// asked: a put-away or count elsewhere on the site reaches this device's
/// cache within five minutes even when it scans nothing, and an idle
/// handheld costs the site one small request per five minutes.
pub const REFERENCE_REFRESH_EVERY: Millis = Millis::from_secs(5 * 60);
/// The least time between two pulls the runtime starts by itself (after a
/// drain run or a wake): a burst of scans drains in many short runs and
/// one pull every few seconds keeps the cache as fresh as an operator can
/// notice, without a reference request per scan.
pub const REFERENCE_PULL_MIN_GAP: Millis = Millis::from_secs(5);
/// How long after a failed pull (offline, an error answer) the runtime
/// tries again by itself; a page's `reference_refresh` does not wait.
pub const REFERENCE_RETRY_AFTER: Millis = Millis::from_secs(30);
/// The most rows one `reference_list` answers: every bin, GRN or count a
/// site runs at once fits many times over, and a reply stays a few hundred
/// kilobytes.
pub const REFERENCE_LIST_MAX: u32 = 5_000;

/// What the site says about the device that reads its reference data
/// (`device` in the `GET /v1/reference` answer).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceProfile {
    pub device_id: String,
    pub profile: String,
    /// The modes the profile can open (`put_away`, `receive`, …).
    pub modes: Vec<String>,
    /// Whether it can write (encode) a tag.
    pub encode: bool,
    /// Whether its items post for real; `false` is training (its items land
    /// as simulation, and every screen says TRAINING). A site older than
    /// the field sends none: the device shows what it showed before,
    /// commissioned.
    #[serde(default = "DeviceProfile::unsaid_commissioned")]
    pub commissioned: bool,
}

impl DeviceProfile {
    fn unsaid_commissioned() -> bool {
        true
    }
}

/// The head of a `GET /v1/reference` answer: where the next page starts,
/// whether there is one, and the device's profile. The rows themselves are
/// kept as the site sent them.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PageHead {
    pub cursor: String,
    pub more: bool,
    #[serde(default)]
    pub device: Option<DeviceProfile>,
    /// The operators changed after the cursor: `[{"badge","name"}]`, with
    /// `"language"` (BCP 47) for those the site gave one.
    #[serde(default)]
    pub operators: Value,
}

/// The cache's one meta record: which site it is a copy of, how far it has
/// read, and when it last read everything there was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReferenceMeta {
    /// The site URL the rows came from; a setup naming another clears them.
    pub site: String,
    /// The cursor of the last page written; `None` before the first.
    #[serde(default)]
    pub cursor: Option<String>,
    /// Every row up to `cursor` is here and the last page said `more: false`.
    #[serde(default)]
    pub complete: bool,
    /// When the cache last reached the site's end (`more: false`).
    #[serde(default)]
    pub refreshed_at: Option<UnixMs>,
    #[serde(default)]
    pub device: Option<DeviceProfile>,
    /// Every operator the pages so far listed, by badge
    /// (`{"op-17": {"badge","name"}}`). A site has tens or hundreds, not
    /// thousands: they live in this record, not in a store of their own,
    /// and as the site's JSON (a type of their own would cost the module
    /// its serde code over again).
    #[serde(default)]
    pub operators: Value,
}

impl ReferenceMeta {
    /// An empty cache of `site`.
    pub fn empty(site: &str) -> ReferenceMeta {
        ReferenceMeta {
            site: site.to_owned(),
            cursor: None,
            complete: false,
            refreshed_at: None,
            device: None,
            operators: Value::Null,
        }
    }

    /// The record after a page fetched at `now` is written: its cursor, its
    /// device, and, when it was the last, complete and refreshed.
    pub fn after_page(&self, head: &PageHead, now: UnixMs) -> ReferenceMeta {
        ReferenceMeta {
            site: self.site.clone(),
            cursor: Some(head.cursor.clone()),
            complete: self.complete || !head.more,
            refreshed_at: if head.more {
                self.refreshed_at
            } else {
                Some(now)
            },
            device: head.device.clone().or_else(|| self.device.clone()),
            operators: merged(&self.operators, &head.operators),
        }
    }

    /// How old the cache is at `now`: since it last reached the site's end.
    pub fn age_ms(&self, now: UnixMs) -> Option<i64> {
        self.refreshed_at.map(|at| now.since(at).max(0))
    }
}

/// The operators `known` (an object by badge) with those `changed` (an
/// array) written over them; a row without a badge is left out.
fn merged(known: &Value, changed: &Value) -> Value {
    let mut all = known.as_object().cloned().unwrap_or_default();
    for operator in changed.as_array().into_iter().flatten() {
        if let Some(badge) = operator.get("badge").and_then(Value::as_str) {
            all.insert(badge.to_owned(), operator.clone());
        }
    }
    Value::Object(all)
}

/// The four kinds of cached rows, and the field each is keyed by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RowKind {
    Unit,
    Bin,
    Grn,
    Count,
}

impl RowKind {
    pub const ALL: [RowKind; 4] = [RowKind::Unit, RowKind::Bin, RowKind::Grn, RowKind::Count];

    /// The field that keys a row of this kind (its IndexedDB key path).
    pub fn key_field(self) -> &'static str {
        match self {
            RowKind::Unit => "epc",
            RowKind::Bin => "bin",
            RowKind::Grn => "grn",
            RowKind::Count => "count_id",
        }
    }

    /// The array of a `GET /v1/reference` answer that holds this kind.
    pub fn page_field(self) -> &'static str {
        match self {
            RowKind::Unit => "units",
            RowKind::Bin => "bins",
            RowKind::Grn => "grns",
            RowKind::Count => "counts",
        }
    }
}

/// The kinds `reference_list` answers whole (units are looked up one by
/// one: a site has too many to list).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ListKind {
    Bins,
    Grns,
    Counts,
}

impl ListKind {
    pub fn row_kind(self) -> RowKind {
        match self {
            ListKind::Bins => RowKind::Bin,
            ListKind::Grns => RowKind::Grn,
            ListKind::Counts => RowKind::Count,
        }
    }
}

/// Whether a row's key is one IndexedDB and a lookup can use: a non-empty
/// string. A row without one (the site's units without an EPC) is left
/// out of the cache, never written half-keyed.
pub fn usable_key(key: Option<&str>) -> bool {
    key.is_some_and(|key| !key.is_empty())
}

/// The EPC of a scan body that names a unit but not the version the device
/// saw (`{epc, …}` without `unit_version`): the cache fills it in.
pub fn wants_unit_version(body: &Body) -> Option<&str> {
    let object = body.as_object()?;
    if object.contains_key("unit_version") {
        return None;
    }
    object
        .get("epc")
        .and_then(Value::as_str)
        .filter(|epc| !epc.is_empty())
}

/// Sets a scan body's `unit_version` (a body that is not an object is left
/// as it is).
pub fn set_unit_version(body: &mut Body, version: u64) {
    if let Some(object) = body.as_object_mut() {
        object.insert("unit_version".into(), version.into());
    }
}

/// A pull the runtime should start: `after` the cache's cursor (`None`:
/// from the start), at most `limit` rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pull {
    pub after: Option<String>,
    pub limit: usize,
}

/// When the cache pulls: one request out at a time, paging on at once
/// while the site says `more` (the next page read while one is written),
/// then at the next trigger.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pulls {
    /// A pull should start as soon as none is out.
    due: bool,
    in_flight: bool,
    /// The page after the one being written is out (read ahead).
    ahead: bool,
    /// The site said `more`: the next page goes at once.
    paging: bool,
    /// When the last pull (a page or a failure) finished.
    last_finished: Option<UnixMs>,
    /// The last pull failed at this instant.
    failed_at: Option<UnixMs>,
    /// A trigger came within [`REFERENCE_PULL_MIN_GAP`] of the last pull:
    /// it pulls when the gap ends, so the last drain run's changes are not
    /// left for the next timer.
    deferred_to: Option<UnixMs>,
    /// When the cache last reached the site's end.
    refreshed_at: Option<UnixMs>,
}

impl Pulls {
    /// The schedule of a cache last refreshed at `refreshed_at` (from its
    /// meta record), at a worker's start.
    pub fn restore(refreshed_at: Option<UnixMs>) -> Pulls {
        Pulls {
            refreshed_at,
            due: true,
            ..Pulls::default()
        }
    }

    /// A drain run or a page's wake: pull, unless one finished less than
    /// [`REFERENCE_PULL_MIN_GAP`] ago or one failed less than
    /// [`REFERENCE_RETRY_AFTER`] ago.
    pub fn handle_trigger(&mut self, now: UnixMs) {
        if self
            .failed_at
            .is_some_and(|at| now < at.plus(REFERENCE_RETRY_AFTER))
        {
            // The retry is already on the schedule.
            return;
        }
        match self.last_finished.map(|at| at.plus(REFERENCE_PULL_MIN_GAP)) {
            Some(gap_ends) if now < gap_ends => self.deferred_to = Some(gap_ends),
            _ => self.due = true,
        }
    }

    /// The page asked for a refresh: pull now, whatever the schedule.
    pub fn handle_refresh(&mut self) {
        self.due = true;
    }

    /// Whether a pull is out or pages remain.
    pub fn is_loading(&self) -> bool {
        self.in_flight || self.paging
    }

    /// When the next pull is due by itself: at once while paging or when
    /// triggered, after a failure at [`REFERENCE_RETRY_AFTER`], else when a
    /// deferred trigger's gap ends or [`REFERENCE_REFRESH_EVERY`] after the
    /// last refresh, whichever is first. None while one is out.
    pub fn poll_timeout(&self) -> Option<UnixMs> {
        if self.in_flight {
            return None;
        }
        if self.due || self.paging {
            return Some(UnixMs(i64::MIN));
        }
        if let Some(failed) = self.failed_at {
            return Some(failed.plus(REFERENCE_RETRY_AFTER));
        }
        let every = self
            .refreshed_at
            .map_or(UnixMs(i64::MIN), |at| at.plus(REFERENCE_REFRESH_EVERY));
        Some(self.deferred_to.map_or(every, |at| at.min(every)))
    }

    /// The pull to start at `now` from the cache's `meta`, if one is due;
    /// it is then out until [`Pulls::handle_page`] or [`Pulls::handle_failed`].
    pub fn poll_transmit(&mut self, now: UnixMs, meta: &ReferenceMeta) -> Option<Pull> {
        if self.poll_timeout().is_none_or(|at| now < at) {
            return None;
        }
        // A page that continues a run leaves a trigger for after it: what
        // changed before the trigger may be behind the run's cursor.
        if !self.paging {
            self.due = false;
            self.deferred_to = None;
        }
        self.in_flight = true;
        Some(Pull {
            after: meta.cursor.clone(),
            limit: REFERENCE_PAGE_ROWS,
        })
    }

    /// A page came back and is about to be written: while the site says
    /// `more`, the next one (after this page's cursor) is read during the
    /// write, so a load waits for the site and for IndexedDB at once
    /// rather than one after the other. That pull is out from here on;
    /// [`Pulls::handle_page`] of the page being written keeps it out.
    pub fn poll_ahead(&mut self, head: &PageHead) -> Option<Pull> {
        if !head.more || self.ahead {
            return None;
        }
        self.ahead = true;
        Some(Pull {
            after: Some(head.cursor.clone()),
            limit: REFERENCE_PAGE_ROWS,
        })
    }

    /// A page was written at `now`: page on at once while the site says
    /// `more` (the next page may be out already, read ahead). Returns
    /// whether this was the last page (the cache is at the site's end).
    pub fn handle_page(&mut self, now: UnixMs, head: &PageHead) -> bool {
        self.in_flight = std::mem::take(&mut self.ahead);
        self.paging = head.more;
        self.failed_at = None;
        self.last_finished = Some(now);
        if !head.more {
            self.refreshed_at = Some(now);
        }
        !head.more
    }

    /// The pull failed at `now` (no answer, an error answer, a page that
    /// could not be written; a page read ahead of one that could not be
    /// written is dropped with it): try again after
    /// [`REFERENCE_RETRY_AFTER`], from the cursor of the last page written.
    /// A refresh or trigger that came during the run is spent: its caller
    /// hears the failure, and pulling again at once would only hammer a
    /// site that is not answering.
    pub fn handle_failed(&mut self, now: UnixMs) {
        self.in_flight = false;
        self.ahead = false;
        self.paging = false;
        self.due = false;
        self.deferred_to = None;
        self.failed_at = Some(now);
        self.last_finished = Some(now);
    }

    /// The cache was cleared (another site): start from nothing, now.
    pub fn handle_cleared(&mut self) {
        *self = Pulls::restore(None);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const T0: UnixMs = UnixMs(1_795_940_000_000);

    fn head(cursor: &str, more: bool) -> PageHead {
        PageHead {
            cursor: cursor.into(),
            more,
            device: None,
            operators: Value::Null,
        }
    }

    fn operator(badge: &str, name: &str) -> Value {
        json!({"badge": badge, "name": name})
    }

    #[test]
    fn operators_are_merged_page_by_page_by_badge_and_kept_until_another_site() {
        let meta = ReferenceMeta::empty("https://site");
        let first = PageHead {
            operators: json!([operator("op-2", "Bo"), operator("op-1", "Al"), {"name": "no badge"}]),
            ..head("3", true)
        };
        let meta = meta.after_page(&first, T0);
        let renamed = PageHead {
            operators: json!([operator("op-2", "Bob")]),
            ..head("4", false)
        };
        let meta = meta.after_page(&renamed, T0);
        assert_eq!(
            meta.operators,
            json!({"op-1": operator("op-1", "Al"), "op-2": operator("op-2", "Bob")})
        );
        let meta = meta.after_page(&head("5", false), T0);
        assert_eq!(
            meta.operators.as_object().map(|all| all.len()),
            Some(2),
            "a page without operators keeps them"
        );
        assert_eq!(ReferenceMeta::empty("https://other").operators, Value::Null);
    }

    #[test]
    fn a_new_cache_pages_from_the_start_then_follows_from_its_cursor() {
        let mut pulls = Pulls::restore(None);
        let mut meta = ReferenceMeta::empty("https://site");
        let first = pulls.poll_transmit(T0, &meta).unwrap();
        assert_eq!(first.after, None);
        assert_eq!(first.limit, REFERENCE_PAGE_ROWS);
        assert!(pulls.is_loading());
        assert_eq!(pulls.poll_transmit(T0, &meta), None, "one pull at a time");

        meta = meta.after_page(&head("500", true), T0);
        assert!(!pulls.handle_page(T0, &head("500", true)));
        assert!(!meta.complete && meta.refreshed_at.is_none());
        assert!(pulls.is_loading(), "more pages to come");
        let second = pulls.poll_transmit(T0, &meta).unwrap();
        assert_eq!(second.after.as_deref(), Some("500"));

        let t1 = T0.plus(Millis(40));
        meta = meta.after_page(&head("730", false), t1);
        assert!(pulls.handle_page(t1, &head("730", false)));
        assert!(meta.complete);
        assert_eq!(meta.refreshed_at, Some(t1));
        assert!(!pulls.is_loading());
        assert_eq!(pulls.poll_transmit(t1, &meta), None);
        assert_eq!(
            pulls.poll_timeout(),
            Some(t1.plus(REFERENCE_REFRESH_EVERY)),
            "the timer's next pull"
        );
        let later = pulls
            .poll_transmit(t1.plus(REFERENCE_REFRESH_EVERY), &meta)
            .unwrap();
        assert_eq!(later.after.as_deref(), Some("730"));
    }

    #[test]
    fn drain_runs_and_wakes_pull_at_most_once_per_gap_and_a_refresh_always() {
        let mut pulls = Pulls::restore(None);
        let meta = ReferenceMeta::empty("https://site");
        pulls.poll_transmit(T0, &meta).unwrap();
        pulls.handle_page(T0, &head("1", false));

        let within_gap = T0.plus(Millis(REFERENCE_PULL_MIN_GAP.0 - 1));
        pulls.handle_trigger(within_gap);
        assert_eq!(pulls.poll_transmit(within_gap, &meta), None);
        let after_gap = T0.plus(REFERENCE_PULL_MIN_GAP);
        assert_eq!(
            pulls.poll_timeout(),
            Some(after_gap),
            "a trigger within the gap pulls when it ends"
        );
        assert!(pulls.poll_transmit(after_gap, &meta).is_some());
        pulls.handle_page(after_gap, &head("1", false));
        assert_eq!(
            pulls.poll_timeout(),
            Some(after_gap.plus(REFERENCE_REFRESH_EVERY)),
            "and once"
        );
        let later = after_gap.plus(REFERENCE_PULL_MIN_GAP);
        pulls.handle_trigger(later);
        assert!(pulls.poll_transmit(later, &meta).is_some());
        pulls.handle_page(later, &head("1", false));

        pulls.handle_refresh();
        assert!(pulls.poll_transmit(later, &meta).is_some());
    }

    #[test]
    fn a_refresh_asked_while_paging_gets_a_run_of_its_own_after() {
        let mut pulls = Pulls::restore(None);
        let meta = ReferenceMeta::empty("https://site");
        pulls.poll_transmit(T0, &meta).unwrap();
        pulls.handle_refresh();
        pulls.handle_page(T0, &head("500", true));
        pulls.poll_transmit(T0, &meta).unwrap();
        assert!(pulls.handle_page(T0, &head("700", false)), "the run's end");
        assert!(!pulls.is_loading());
        assert!(
            pulls.poll_transmit(T0, &meta).is_some(),
            "the refresh's own run"
        );
        pulls.handle_page(T0, &head("700", false));
        assert_eq!(pulls.poll_transmit(T0, &meta), None);
    }

    #[test]
    fn a_failed_pull_waits_its_retry_unless_the_page_asks() {
        let mut pulls = Pulls::restore(None);
        let meta = ReferenceMeta::empty("https://site");
        pulls.poll_transmit(T0, &meta).unwrap();
        pulls.handle_failed(T0);
        assert!(!pulls.is_loading());
        pulls.handle_trigger(T0.plus(REFERENCE_PULL_MIN_GAP));
        assert_eq!(
            pulls.poll_transmit(T0.plus(REFERENCE_PULL_MIN_GAP), &meta),
            None
        );
        assert_eq!(pulls.poll_timeout(), Some(T0.plus(REFERENCE_RETRY_AFTER)));
        assert!(pulls
            .poll_transmit(T0.plus(REFERENCE_RETRY_AFTER), &meta)
            .is_some());
        pulls.handle_failed(T0.plus(REFERENCE_RETRY_AFTER));
        pulls.handle_refresh();
        assert!(pulls
            .poll_transmit(T0.plus(REFERENCE_RETRY_AFTER), &meta)
            .is_some());
    }

    #[test]
    fn a_load_that_fails_part_way_resumes_from_the_last_page_written() {
        let mut pulls = Pulls::restore(None);
        let mut meta = ReferenceMeta::empty("https://site");
        for cursor in ["250", "500"] {
            pulls.poll_transmit(T0, &meta).unwrap();
            meta = meta.after_page(&head(cursor, true), T0);
            pulls.handle_page(T0, &head(cursor, true));
        }
        let third = pulls.poll_transmit(T0, &meta).unwrap();
        assert_eq!(third.after.as_deref(), Some("500"));
        pulls.handle_refresh();
        pulls.handle_failed(T0);
        assert!(!pulls.is_loading(), "the run stops at the failure");
        assert_eq!(
            pulls.poll_transmit(T0, &meta),
            None,
            "a refresh asked during the run does not pull again at once"
        );
        assert!(!meta.complete && meta.refreshed_at.is_none());

        let retry = T0.plus(REFERENCE_RETRY_AFTER);
        let resumed = pulls.poll_transmit(retry, &meta).unwrap();
        assert_eq!(
            resumed.after.as_deref(),
            Some("500"),
            "the retry asks for the page that failed, not the first"
        );
        pulls.handle_failed(retry);
        pulls.handle_refresh();
        let asked = pulls.poll_transmit(retry, &meta).unwrap();
        assert_eq!(asked.after.as_deref(), Some("500"), "so does a refresh");
        meta = meta.after_page(&head("730", false), retry);
        assert!(pulls.handle_page(retry, &head("730", false)));
        assert!(meta.complete);
    }

    #[test]
    fn the_next_page_is_read_while_one_is_written_and_dropped_with_a_failed_write() {
        let mut pulls = Pulls::restore(None);
        let mut meta = ReferenceMeta::empty("https://site");
        pulls.poll_transmit(T0, &meta).unwrap();
        let first = head("250", true);
        let ahead = pulls.poll_ahead(&first).unwrap();
        assert_eq!(
            ahead.after.as_deref(),
            Some("250"),
            "after the page being written"
        );
        assert_eq!(ahead.limit, REFERENCE_PAGE_ROWS);
        assert_eq!(pulls.poll_ahead(&first), None, "one read ahead at a time");
        meta = meta.after_page(&first, T0);
        assert!(!pulls.handle_page(T0, &first));
        assert!(pulls.is_loading());
        assert_eq!(
            pulls.poll_transmit(T0, &meta),
            None,
            "the page read ahead is the one out"
        );

        let second = head("500", true);
        pulls.poll_ahead(&second).unwrap();
        // The second page's write fails: the third, read ahead, is dropped
        // and the retry starts after the first.
        pulls.handle_failed(T0);
        assert!(!pulls.is_loading());
        let retry = pulls
            .poll_transmit(T0.plus(REFERENCE_RETRY_AFTER), &meta)
            .unwrap();
        assert_eq!(retry.after.as_deref(), Some("250"));

        let last = head("730", false);
        assert_eq!(pulls.poll_ahead(&last), None, "nothing after the last page");
        assert!(pulls.handle_page(T0, &last));
        assert!(!pulls.is_loading());
    }

    #[test]
    fn a_device_record_without_commissioned_is_read_as_commissioned() {
        let said: DeviceProfile = serde_json::from_str(
            r#"{"device_id":"HH-1","profile":"mc3390xr","modes":[],"encode":true,"commissioned":false}"#,
        )
        .unwrap();
        assert!(!said.commissioned);
        let unsaid: DeviceProfile = serde_json::from_str(
            r#"{"device_id":"HH-1","profile":"mc3390xr","modes":[],"encode":true}"#,
        )
        .unwrap();
        assert!(unsaid.commissioned);
    }

    #[test]
    fn the_cache_is_as_old_as_its_last_complete_read_and_keeps_the_last_device_it_heard() {
        let device = DeviceProfile {
            device_id: "HH-1".into(),
            profile: "mc3390xr".into(),
            modes: vec!["put_away".into()],
            encode: true,
            commissioned: false,
        };
        let meta = ReferenceMeta::empty("https://site");
        assert_eq!(meta.age_ms(T0), None);
        let with_device = PageHead {
            device: Some(device.clone()),
            ..head("9", false)
        };
        let meta = meta.after_page(&with_device, T0);
        assert_eq!(meta.age_ms(T0.plus(Millis(1_500))), Some(1_500));
        let meta = meta.after_page(&head("10", true), T0.plus(Millis(9)));
        assert_eq!(
            meta.refreshed_at,
            Some(T0),
            "a page with more refreshes nothing"
        );
        assert!(meta.complete, "complete once, complete after");
        assert_eq!(meta.device, Some(device));
    }

    #[test]
    fn a_scan_naming_a_unit_without_its_version_takes_the_cached_one() {
        let mut scan = json!({"mode": "put_away", "epc": "E1", "bin": "B-1"});
        assert_eq!(wants_unit_version(&scan), Some("E1"));
        set_unit_version(&mut scan, 7);
        assert_eq!(scan["unit_version"], 7);
        assert_eq!(
            wants_unit_version(&scan),
            None,
            "a version is never overwritten"
        );
        for body in [
            json!({"mode": "put_away", "epc": "E1", "unit_version": null}),
            json!({"mode": "put_away", "code": "C-1"}),
            json!({"mode": "put_away", "epc": ""}),
            json!({"mode": "put_away", "epc": 7}),
            json!(null),
            json!("E1"),
        ] {
            assert_eq!(wants_unit_version(&body), None, "{body}");
        }
    }

    #[test]
    fn rows_are_keyed_by_their_natural_key_and_an_empty_key_is_left_out() {
        let keys: Vec<_> = RowKind::ALL.map(|kind| kind.key_field()).into();
        assert_eq!(keys, ["epc", "bin", "grn", "count_id"]);
        assert!(usable_key(Some("E1")));
        assert!(!usable_key(Some("")));
        assert!(!usable_key(None));
        assert_eq!(ListKind::Grns.row_kind().page_field(), "grns");
    }
}
