//! `ServiceWorker`, the one type `sw.js` sees: it opens the queue and
//! takes the worker's events (message, sync, activate, fetch, page
//! wake-ups). Page messages and replies cross here, through serde.

use js_sys::Promise;
use serde::Serialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;
use web_sys::MessagePort;

use crate::queue::Capture;
use crate::wire::OpenSessionBody;

use super::browser;
use super::clock::SystemClock;
use super::convert::to_js;
use super::error::QueueError;
use super::message::{
    Captured, CapturedOrError, DeviceReply, ErrorReply, ItemRow, PageRequest, StorageReply,
    CAPTURE_MANY_MAX, LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX,
};
use super::runtime::{Options, Queue};
use super::schema::DB_NAME;
use super::store::DeviceConfig;
use super::transport::FetchTransport;

/// The queue as the service worker script drives it.
#[wasm_bindgen]
pub struct ServiceWorker {
    queue: Queue,
}

#[wasm_bindgen]
impl ServiceWorker {
    /// Opens the queue on `db_name` (default `stockhop`), upgrading its
    /// schema if needed, and starts its runtime.
    pub async fn open(db_name: Option<String>) -> Result<ServiceWorker, JsValue> {
        let name = db_name.unwrap_or_else(|| DB_NAME.to_owned());
        let queue = Queue::open(&name, FetchTransport, SystemClock, Options::default()).await?;
        Ok(ServiceWorker { queue })
    }

    /// A page's message; the reply goes to `port` (and resolves the promise,
    /// for `event.waitUntil`).
    #[wasm_bindgen(js_name = handleMessage)]
    pub fn handle_message(&self, data: JsValue, port: Option<MessagePort>) -> Promise {
        let queue = self.queue.clone();
        future_to_promise(async move {
            let reply = match PageRequest::read(&data) {
                Ok(request) => handle(&queue, request).await,
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

/// Handles one request; the reply is a plain object (`ok` is added after).
async fn handle(queue: &Queue, request: PageRequest) -> Result<JsValue, QueueError> {
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
            plain(&SetUp { device_id })
        }
        PageRequest::Device {} => plain(&DeviceReply::from(queue.device().await?.as_ref())),
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
        } => plain(&Captured::from(
            &queue.capture(session_id, Capture { command, body }).await?,
        )),
        PageRequest::CaptureMany {
            session_id,
            command,
            bodies,
        } => {
            if bodies.len() > CAPTURE_MANY_MAX {
                return Err(QueueError::BadMessage(format!(
                    "{} captures in one message, at most {CAPTURE_MANY_MAX}",
                    bodies.len()
                )));
            }
            let captures = bodies
                .into_iter()
                .map(|body| Capture { command, body })
                .collect();
            let items: Vec<CapturedOrError> = queue
                .capture_many(session_id, captures)
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
                .map(|(item, why)| ItemRow { item, why })
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
        PageRequest::Acknowledge { id } => {
            let item = queue.acknowledge(id).await?;
            plain(&Acknowledged {
                id: item.id,
                acknowledged: item.acknowledged,
            })
        }
        PageRequest::Storage {} => plain(&StorageReply::from(browser::storage_estimate().await?)),
    }
}
