//! `ServiceWorker`, the one type `sw.js` sees: it opens the queue and
//! takes the worker's events (message, sync, activate, fetch, page
//! wake-ups). `JsValue` appears here and nowhere deeper.

use js_sys::Promise;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;
use web_sys::MessagePort;

use crate::queue::Capture;
use crate::wire::OpenSessionBody;

use super::browser;
use super::clock::SystemClock;
use super::error::QueueError;
use super::message::{
    Captured, CapturedOrError, DeviceReply, ErrorReply, ItemRow, PageRequest, StorageReply,
    CAPTURE_MANY_MAX, LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX,
};
use super::runtime::{Options, Queue};
use super::schema::DB_NAME;
use super::store::DeviceConfig;
use super::transport::FetchTransport;
use super::write::{Record, ToJs};

type LiveQueue = Queue<FetchTransport, SystemClock>;

/// The queue as the service worker script drives it.
#[wasm_bindgen]
pub struct ServiceWorker {
    queue: LiveQueue,
}

#[wasm_bindgen]
impl ServiceWorker {
    /// Opens the queue on `db_name` (default `stockhop`), upgrading its
    /// schema if needed.
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
                Err(err) => Record::new()
                    .set("ok", &false)
                    .set("error", &ErrorReply::from(&err))
                    .build(),
            };
            if let Some(port) = port {
                port.post_message(&reply)?;
            }
            Ok(reply)
        })
    }

    /// A wake-up (install, activate, fetch, online): drain on schedule.
    pub fn wake(&self) -> Promise {
        future_to_promise(drain_for(self.queue.clone(), None))
    }

    /// The Background Sync `sync` event: drain now; reject while items are
    /// still waiting to go out, so the browser schedules another sync.
    /// `last_chance` is the event's own: the browser will not fire this
    /// registration again.
    #[wasm_bindgen(js_name = handleSync)]
    pub fn handle_sync(&self, last_chance: Option<bool>) -> Promise {
        future_to_promise(drain_for(
            self.queue.clone(),
            Some(last_chance.unwrap_or(false)),
        ))
    }
}

/// The drain a wake-up (`sync: None`) or a `sync` event (`Some(last_chance)`)
/// asks for, as the promise the event waits on: one future type for both.
async fn drain_for(queue: LiveQueue, sync: Option<bool>) -> Result<JsValue, JsValue> {
    let Some(last_chance) = sync else {
        return Ok(queue.drain(false).await?.to_js());
    };
    let report = queue.drain(true).await;
    let waiting = match &report {
        Ok(report) => report.next_attempt_at.is_some() && !report.not_configured,
        Err(_) => true,
    };
    queue.sync_settled(waiting && !last_chance);
    let report = report?;
    if waiting {
        return Err(JsValue::from_str("items are still waiting"));
    }
    Ok(report.to_js())
}

/// Handles one request; the reply is a plain object (`ok` is added after).
async fn handle(queue: &LiveQueue, request: PageRequest) -> Result<JsValue, QueueError> {
    match request {
        PageRequest::Setup {
            site_url,
            device_token,
            device_id,
        } => {
            if site_url.is_empty() || device_token.is_empty() || device_id.is_empty() {
                return Err(QueueError::bad_message(
                    "site_url, device_token and device_id are required",
                ));
            }
            let config = DeviceConfig {
                site_url,
                device_token,
                device_id,
            };
            queue.store().set_device(&config).await?;
            // The reply does not wait for the network: the drain runs on.
            queue.register_sync();
            queue.kick();
            Ok(Record::new().set("device_id", &config.device_id).build())
        }
        PageRequest::Device {} => {
            let device = queue.store().device().await?;
            Ok(DeviceReply::from(device.as_deref()).to_js())
        }
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
            let item = queue.open_session(session_id, body).await?;
            Ok(Captured::from(&item).to_js())
        }
        PageRequest::Capture {
            session_id,
            command,
            body,
        } => {
            let item = queue.capture(session_id, Capture { command, body }).await?;
            Ok(Captured::from(&item).to_js())
        }
        PageRequest::CaptureMany {
            session_id,
            command,
            bodies,
        } => {
            if bodies.len() > CAPTURE_MANY_MAX {
                return Err(QueueError::bad_message(format!(
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
            Ok(Record::new().set("items", &items).build())
        }
        PageRequest::CloseSession { session_id } => {
            let item = queue.close_session(session_id).await?;
            Ok(Captured::from(&item).to_js())
        }
        PageRequest::List { after, limit } => {
            let limit = limit.unwrap_or(LIST_LIMIT_DEFAULT).clamp(1, LIST_LIMIT_MAX);
            let rows = queue.store().list(after, limit).await?;
            let next = rows.last().and_then(|(item, _)| item.id);
            let items = js_sys::Array::new();
            for (item, why) in rows {
                items.push(&ItemRow { item, why }.to_js());
            }
            Ok(Record::new()
                .set("items", &JsValue::from(items))
                .set("next_after", &next)
                .build())
        }
        PageRequest::Counts {} => Ok(queue.counts().await?.to_js()),
        PageRequest::RetryNow {} => Ok(queue.retry_now().await?.to_js()),
        PageRequest::Wake {} => Ok(queue.drain(false).await?.to_js()),
        PageRequest::Discard { id } => {
            let (_, void) = queue.discard(id).await?;
            Ok(Record::new().set("void", &Captured::from(&void)).build())
        }
        PageRequest::Acknowledge { id } => {
            let item = queue.acknowledge(id).await?;
            Ok(Record::new()
                .set("id", &item.id)
                .set("acknowledged", &item.acknowledged)
                .build())
        }
        PageRequest::Storage {} => {
            Ok(StorageReply::from(browser::storage_estimate().await?).to_js())
        }
    }
}
