//! `ServiceWorker`, the one type `sw.js` sees: it opens the queue and
//! takes the worker's events (message, sync, activate, fetch, page
//! wake-ups). Page messages and replies cross here, through serde.

use std::rc::Rc;

use js_sys::Promise;
use serde::Serialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;
use web_sys::MessagePort;

use crate::queue::Capture;
use crate::wire::OpenSessionBody;

use super::browser;
use super::clock::{Clock, SystemClock};
use super::convert::to_js;
use super::error::QueueError;
use super::export::export_queue;
use super::label::local_offset_ms;
use super::message::{
    Captured, CapturedOrError, DeviceReply, ErrorReply, ItemRow, PageRequest, StorageReply,
    CAPTURE_MANY_MAX, LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX,
};
use super::runtime::{Browser, Found, Options, Queue, APP_VERSION};
use super::schema::DB_NAME;
use super::store::{DeviceConfig, Store};
use super::transport::{FetchTransport, SiteWord};
use crate::reference::{ReferenceMeta, REFERENCE_LIST_MAX};

/// The queue as the service worker script drives it.
#[wasm_bindgen]
pub struct ServiceWorker {
    queue: Queue,
    /// What the site said of this device, from the queue's transport.
    word: Rc<SiteWord>,
    /// The queue's store, for reading labels and exporting the queue:
    /// reads beside the runtime's turns, as the page's other reads are.
    store: Store,
    /// The build the worker was served with: a rescue file's `build`.
    build: Rc<str>,
}

#[wasm_bindgen]
impl ServiceWorker {
    /// Opens the queue on `db_name` (default `stockhop`), upgrading its
    /// schema if needed, and starts its runtime. `build` is the build id
    /// `sw.js` was served with; the heartbeat carries it.
    pub async fn open(
        db_name: Option<String>,
        build: Option<String>,
    ) -> Result<ServiceWorker, JsValue> {
        let name = db_name.unwrap_or_else(|| DB_NAME.to_owned());
        let app_version = build.unwrap_or_else(|| APP_VERSION.to_owned());
        let options = Options::default();
        let transport = FetchTransport::default();
        let word = transport.word();
        let store = Store::open(&name).await?;
        let build = Rc::from(app_version.as_str());
        let queue = Queue::start(
            store.clone(),
            transport,
            SystemClock,
            Browser,
            options,
            app_version,
        );
        Ok(ServiceWorker {
            queue,
            word,
            store,
            build,
        })
    }

    /// A page's message; the reply goes to `port` (and resolves the promise,
    /// for `event.waitUntil`).
    #[wasm_bindgen(js_name = handleMessage)]
    pub fn handle_message(&self, data: JsValue, port: Option<MessagePort>) -> Promise {
        let queue = self.queue.clone();
        let word = self.word.clone();
        let store = self.store.clone();
        let build = self.build.clone();
        future_to_promise(async move {
            let reply = match PageRequest::read(&data) {
                Ok(request) => handle(&queue, &store, &word, &build, request).await,
                Err(err) => Err(err),
            };
            let reply = match reply {
                Ok(body) => {
                    js_sys::Reflect::set(&body, &"ok".into(), &JsValue::TRUE)?;
                    body
                }
                Err(err) => plain(&Failed {
                    ok: false,
                    error: ErrorReply::from(&err),
                })?,
            };
            if let Some(port) = port {
                port.post_message(&reply)?;
            }
            Ok(reply)
        })
    }

    /// A wake-up (install, activate, fetch, online): drain on schedule.
    pub fn wake(&self) -> Promise {
        let queue = self.queue.clone();
        future_to_promise(async move { Ok(plain(&queue.drain(false).await?)?) })
    }

    /// The Background Sync `sync` event: drain now; reject while items are
    /// still waiting to go out, so the browser schedules another sync.
    /// `last_chance` is the event's own.
    #[wasm_bindgen(js_name = handleSync)]
    pub fn handle_sync(&self, last_chance: Option<bool>) -> Promise {
        let queue = self.queue.clone();
        future_to_promise(async move {
            let report = queue.sync(last_chance.unwrap_or(false)).await?;
            if report.still_waiting() {
                return Err(JsValue::from_str("items are still waiting"));
            }
            Ok(plain(&report)?)
        })
    }
}

/// A failed request's reply.
#[derive(Serialize)]
struct Failed {
    ok: bool,
    error: ErrorReply,
}

/// A reply as a plain JS object.
fn plain<T: Serialize>(value: &T) -> Result<JsValue, QueueError> {
    to_js(value).map_err(QueueError::Browser)
}

/// `list`'s reply.
#[derive(Serialize)]
struct Page {
    items: Vec<ItemRow>,
    next_after: Option<u64>,
}

/// `setup`'s reply.
#[derive(Serialize)]
struct SetUp {
    device_id: String,
}

/// `capture_many`'s reply.
#[derive(Serialize)]
struct Burst {
    items: Vec<CapturedOrError>,
}

/// `discard`'s reply.
#[derive(Serialize)]
struct Discarded {
    void: Captured,
}

/// `acknowledge`'s reply.
#[derive(Serialize)]
struct Acknowledged {
    id: Option<u64>,
    acknowledged: bool,
}

/// `find_unit`'s reply: the unit and its bin as the site sent them, and how
/// old the cache is.
#[derive(Serialize)]
struct UnitFound {
    #[serde(with = "serde_wasm_bindgen::preserve")]
    unit: JsValue,
    #[serde(with = "serde_wasm_bindgen::preserve")]
    bin: JsValue,
    refreshed_at: Option<i64>,
    age_ms: Option<i64>,
}

/// `reference_get`'s reply.
#[derive(Serialize)]
struct RowFound {
    #[serde(with = "serde_wasm_bindgen::preserve")]
    row: JsValue,
    refreshed_at: Option<i64>,
    age_ms: Option<i64>,
}

/// `reference_list`'s reply.
#[derive(Serialize)]
struct Rows {
    #[serde(with = "serde_wasm_bindgen::preserve")]
    rows: JsValue,
}

/// `refresh_unit`'s reply.
#[derive(Serialize)]
struct UnitRead {
    #[serde(with = "serde_wasm_bindgen::preserve")]
    unit: JsValue,
}

/// When the cache last reached the site's end, and how long ago (Unix ms).
fn freshness(meta: &ReferenceMeta) -> (Option<i64>, Option<i64>) {
    let now = SystemClock.now();
    (meta.refreshed_at.map(|at| at.0), meta.age_ms(now))
}

/// `read_label`: the scan read as a label at the device's now and date.
async fn read_label(store: &Store, text: &str) -> Result<JsValue, QueueError> {
    let now = SystemClock.now();
    plain(&store.read_label(text, now, local_offset_ms(now)).await?)
}

/// Handles one request; the reply is a plain object (`ok` is added after).
async fn handle(
    queue: &Queue,
    store: &Store,
    word: &SiteWord,
    build: &str,
    request: PageRequest,
) -> Result<JsValue, QueueError> {
    match request {
        PageRequest::Setup {
            site_url,
            device_token,
            device_id,
            done_retention_days,
        } => {
            if site_url.is_empty() || device_token.is_empty() || device_id.is_empty() {
                return Err(QueueError::BadMessage(
                    "site_url, device_token and device_id are required".into(),
                ));
            }
            let config = DeviceConfig {
                site_url,
                device_token,
                device_id,
                done_retention_days,
            };
            let device_id = config.device_id.clone();
            // The reply does not wait for the network: the drain runs on.
            queue.setup(config).await?;
            word.clear();
            plain(&SetUp { device_id })
        }
        PageRequest::Device {} => plain(&DeviceReply::new(queue.device().await?.as_ref(), word)),
        PageRequest::OpenSession {
            session_id,
            operator_id,
            mode,
            context,
        } => {
            let body = OpenSessionBody {
                operator_id,
                mode,
                context,
            };
            plain(&Captured::from(
                &queue.open_session(session_id, body).await?,
            ))
        }
        PageRequest::Capture {
            session_id,
            command,
            body,
            occurred_at,
        } => plain(&Captured::from(
            &queue
                .capture_at(session_id, Capture { command, body }, occurred_at)
                .await?,
        )),
        PageRequest::CaptureMany {
            session_id,
            command,
            bodies,
            occurred_at,
        } => {
            if bodies.len() > CAPTURE_MANY_MAX {
                return Err(QueueError::BadMessage(format!(
                    "{} captures in one message, at most {CAPTURE_MANY_MAX}",
                    bodies.len()
                )));
            }
            let instants = match occurred_at {
                Some(instants) if instants.len() != bodies.len() => {
                    return Err(QueueError::BadMessage(format!(
                        "capture_many.occurred_at: {} instants for {} bodies",
                        instants.len(),
                        bodies.len()
                    )));
                }
                Some(instants) => instants.into_iter().map(Some).collect(),
                None => vec![None; bodies.len()],
            };
            let captures = bodies
                .into_iter()
                .zip(instants)
                .map(|(body, at)| (Capture { command, body }, at))
                .collect();
            let items: Vec<CapturedOrError> = queue
                .capture_many_at(session_id, captures)
                .await
                .into_iter()
                .map(|result| match result {
                    Ok(item) => CapturedOrError::Captured(Captured::from(&item)),
                    Err(err) => CapturedOrError::Error {
                        error: ErrorReply::from(&err),
                    },
                })
                .collect();
            plain(&Burst { items })
        }
        PageRequest::CloseSession { session_id } => {
            plain(&Captured::from(&queue.close_session(session_id).await?))
        }
        PageRequest::List { after, limit } => {
            let limit = limit.unwrap_or(LIST_LIMIT_DEFAULT).clamp(1, LIST_LIMIT_MAX);
            let rows = queue.list(after, limit).await?;
            let next_after = rows.last().and_then(|(item, _)| item.id);
            let items = rows
                .into_iter()
                .map(|(item, why)| ItemRow::new(item, why))
                .collect();
            plain(&Page { items, next_after })
        }
        PageRequest::Counts {} => plain(&queue.counts().await?),
        PageRequest::RetryNow {} => plain(&queue.retry_now().await?),
        PageRequest::Wake {} => plain(&queue.drain(false).await?),
        PageRequest::Discard { id } => {
            let (_, void) = queue.discard(id).await?;
            plain(&Discarded {
                void: Captured::from(&void),
            })
        }
        PageRequest::Acknowledge { id, rescan_key } => {
            let (item, _) = queue.acknowledge(id, rescan_key).await?;
            plain(&Acknowledged {
                id: item.id,
                acknowledged: item.acknowledged,
            })
        }
        PageRequest::Storage {} => plain(&StorageReply::from(browser::storage_estimate().await?)),
        PageRequest::ReferenceStatus {} => plain(&queue.reference_status().await?),
        PageRequest::ReferenceRefresh {} => plain(&queue.reference_refresh().await?),
        PageRequest::FindUnit { code } => {
            let Found { row, bin, meta } = queue.find_unit(code).await?;
            let (refreshed_at, age_ms) = freshness(&meta);
            plain(&UnitFound {
                unit: row,
                bin: bin.unwrap_or(JsValue::NULL),
                refreshed_at,
                age_ms,
            })
        }
        PageRequest::ReferenceGet { kind, id } => {
            let Found { row, meta, .. } = queue.reference_get(kind, id).await?;
            let (refreshed_at, age_ms) = freshness(&meta);
            plain(&RowFound {
                row,
                refreshed_at,
                age_ms,
            })
        }
        PageRequest::ReferenceList { kind } => {
            let rows = queue
                .reference_list(kind.row_kind(), REFERENCE_LIST_MAX)
                .await?;
            plain(&Rows { rows: rows.into() })
        }
        PageRequest::RefreshUnit { epc } => plain(&UnitRead {
            unit: queue.refresh_unit(epc).await?.unwrap_or(JsValue::NULL),
        }),
        PageRequest::ReadLabel { text } => read_label(store, &text).await,
        PageRequest::ExportQueue {} => export_queue(store, build).await,
    }
}
