//! How a sync request, a heartbeat and the reference reads reach the site:
//! a trait, so tests about the logic above it can substitute the network,
//! and [`FetchTransport`], the real one, with a 10 s `AbortController`
//! timeout.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use js_sys::Promise;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortController, Headers, Request, RequestInit, Response};

use serde::Serialize;

use crate::queue::{BeatOutcome, Reply, TransportOutcome};
use crate::time::Millis;
use crate::wire::{Heartbeat, SyncRequest, SYNC_PATH};

use crate::reference::Pull;

use super::cache::FetchedPage;
use super::convert::to_js;
use super::error::QueueError;
use super::store::DeviceConfig;

/// A request that has not answered in this long is abandoned as a timeout
/// (docs/design.md §3.5), so a dead link does not hold the drain lock.
pub const SYNC_TIMEOUT: Millis = Millis::from_secs(10);

pub use crate::runtime::Transport;

#[wasm_bindgen]
extern "C" {
    /// `fetch` of whichever global this runs in (window or worker).
    #[wasm_bindgen(js_name = fetch)]
    fn global_fetch(request: &Request) -> Promise;
}

/// The real transport: `fetch` to `{site}/v1/sync`. Every answer also
/// tells [`SiteWord`] what the site said of the device itself.
#[derive(Debug, Clone, Default)]
pub struct FetchTransport {
    word: Rc<SiteWord>,
}

impl FetchTransport {
    /// The site's word on this device, as this transport's answers tell it.
    pub fn word(&self) -> Rc<SiteWord> {
        self.word.clone()
    }
}

/// What the site last said of this device (docs/design.md §10): whether
/// it still takes its token, and which of its sessions it closed.
#[derive(Debug, Default)]
pub struct SiteWord {
    /// The last answer to a request under the device token was `401`: the
    /// device was revoked, or a new token issued.
    refused: Cell<bool>,
    /// `closed_sessions` of the last heartbeat answer, as the site sent it
    /// (`[{session_id, closed_at}]`, or undefined).
    closed_sessions: RefCell<JsValue>,
}

impl SiteWord {
    /// Whether the site refused the device's token on its last answer.
    pub fn refused(&self) -> bool {
        self.refused.get()
    }

    /// The sessions of this device the site closed, as its last heartbeat
    /// answer listed them (undefined before one lists any).
    pub fn closed_sessions(&self) -> JsValue {
        self.closed_sessions.borrow().clone()
    }

    /// A new setup: nothing the site said of the old one holds.
    pub fn clear(&self) {
        self.refused.set(false);
        *self.closed_sessions.borrow_mut() = JsValue::UNDEFINED;
    }

    /// An answer's status: a `401` says the token is refused, a 2xx that
    /// it is taken; anything else says nothing of the token.
    fn heard(&self, status: u16) {
        if status == 401 {
            self.refused.set(true);
        } else if (200..300).contains(&status) {
            self.refused.set(false);
        }
    }
}

impl Transport for FetchTransport {
    type PageRows = super::cache::PageRows;
    type Unit = JsValue;

    async fn send(&self, device: &DeviceConfig, request: &SyncRequest) -> TransportOutcome {
        let Some(body) = request_body(request) else {
            return TransportOutcome::Http {
                status: 400,
                body: Reply::Unreadable,
            };
        };
        let url = device.site_url.trim_end_matches('/').to_owned() + SYNC_PATH;
        match post(&url, &device.device_token, &body).await {
            Ok(answer) => {
                self.word.heard(answer.status);
                answer.outcome()
            }
            Err(Unanswered::TimedOut) => TransportOutcome::Timeout,
            Err(Unanswered::Offline) => TransportOutcome::Offline,
        }
    }

    /// `POST {site}/v1/devices/{device_id}/heartbeat`.
    async fn heartbeat(&self, device: &DeviceConfig, beat: &Heartbeat) -> BeatOutcome {
        let Some(body) = request_body(beat) else {
            return BeatOutcome::Failed;
        };
        let url = format!(
            "{}/v1/devices/{}/heartbeat",
            device.site_url.trim_end_matches('/'),
            js_sys::encode_uri_component(&device.device_id)
        );
        match post(&url, &device.device_token, &body).await {
            Ok(answer) => {
                self.word.heard(answer.status);
                // Undefined unless the site lists some (a refusal's body never does).
                if let Some(ack) = &answer.json {
                    let closed = js_sys::Reflect::get(ack, &"closed_sessions".into());
                    *self.word.closed_sessions.borrow_mut() = closed.unwrap_or_default();
                }
                answer.ack()
            }
            Err(_) => BeatOutcome::Failed,
        }
    }

    /// `GET {site}/v1/reference?after=CURSOR&limit=N`.
    async fn reference(
        &self,
        device: &DeviceConfig,
        pull: &Pull,
    ) -> Result<FetchedPage, QueueError> {
        let mut url = format!(
            "{}/v1/reference?limit={}",
            device.site_url.trim_end_matches('/'),
            pull.limit
        );
        if let Some(after) = &pull.after {
            url = url + "&after=" + &String::from(js_sys::encode_uri_component(after));
        }
        let json = read(&url, &device.device_token, &self.word)
            .await?
            .ok_or_else(|| QueueError::Site("GET /v1/reference answered 404".into()))?;
        FetchedPage::read(json, &device.site_url).map_err(QueueError::Site)
    }

    /// `GET {site}/v1/units/{epc}`.
    async fn unit(&self, device: &DeviceConfig, epc: &str) -> Result<Option<JsValue>, QueueError> {
        let url = format!(
            "{}/v1/units/{}",
            device.site_url.trim_end_matches('/'),
            js_sys::encode_uri_component(epc)
        );
        read(&url, &device.device_token, &self.word).await
    }
}

/// GETs `url` under the device token: the answer's JSON for a 200, `None`
/// for a 404, [`QueueError::Offline`] when nothing came back, and
/// [`QueueError::Site`] with the status and the site's code otherwise.
async fn read(url: &str, token: &str, word: &SiteWord) -> Result<Option<JsValue>, QueueError> {
    let answer = match send_request(url, token, None).await {
        Ok(answer) => answer,
        Err(_) => return Err(QueueError::Offline),
    };
    word.heard(answer.status);
    match (answer.status, answer.json) {
        (200, Some(json)) => Ok(Some(json)),
        (404, _) => Ok(None),
        (status, json) => {
            let code = json
                .and_then(|json| js_sys::Reflect::get(&json, &"code".into()).ok())
                .and_then(|code| code.as_string())
                .unwrap_or_else(|| "an unreadable answer".into());
            Err(QueueError::Site(format!("{url} answered {status} {code}")))
        }
    }
}

/// The body as JSON text: serde writes the JS object, the browser's
/// `JSON.stringify` the text (the module carries no JSON printer).
fn request_body<T: Serialize>(request: &T) -> Option<JsValue> {
    let value = to_js(request).ok()?;
    js_sys::JSON::stringify(&value).ok().map(JsValue::from)
}

/// Why a request brought nothing back.
enum Unanswered {
    /// No answer (and its body read) within [`SYNC_TIMEOUT`].
    TimedOut,
    /// The network failed, or the answer could not be read.
    Offline,
}

/// POSTs `body` as JSON under the device token and reads the answer, all
/// within [`SYNC_TIMEOUT`].
async fn post(url: &str, token: &str, body: &JsValue) -> Result<Answer, Unanswered> {
    send_request(url, token, Some(body)).await
}

/// POSTs `body` (GETs without one) under the device token and reads the
/// answer, all within [`SYNC_TIMEOUT`].
async fn send_request(
    url: &str,
    token: &str,
    body: Option<&JsValue>,
) -> Result<Answer, Unanswered> {
    let controller = AbortController::new().map_err(|_| Unanswered::Offline)?;
    let request = build_request(url, token, body, &controller).map_err(|_| Unanswered::Offline)?;
    let timed_out = Rc::new(Cell::new(false));
    let timer = {
        let timed_out = timed_out.clone();
        let controller = controller.clone();
        gloo_timers::callback::Timeout::new(SYNC_TIMEOUT.0 as u32, move || {
            timed_out.set(true);
            controller.abort();
        })
    };
    let result = match JsFuture::from(global_fetch(&request)).await {
        Ok(response) => Answer::read(response.unchecked_into()).await,
        Err(err) => Err(err),
    };
    drop(timer);
    result.map_err(|_| match timed_out.get() {
        true => Unanswered::TimedOut,
        false => Unanswered::Offline,
    })
}

fn build_request(
    url: &str,
    token: &str,
    body: Option<&JsValue>,
    controller: &AbortController,
) -> Result<Request, JsValue> {
    let headers = Headers::new()?;
    headers.set("authorization", &("Bearer ".to_owned() + token))?;
    let init = RequestInit::new();
    if let Some(body) = body {
        headers.set("content-type", "application/json")?;
        init.set_method("POST");
        init.set_body(body);
    }
    init.set_headers(&headers);
    init.set_signal(Some(&controller.signal()));
    Request::new_with_str_and_init(url, &init)
}

/// An answer: its status and its body as the browser's `JSON.parse` reads
/// it (`None` when it is not JSON).
struct Answer {
    status: u16,
    json: Option<JsValue>,
}

impl Answer {
    /// Reads a `Response`; a body that cannot be read at all is an error.
    async fn read(response: Response) -> Result<Answer, JsValue> {
        let status = response.status();
        let text = JsFuture::from(response.text()?).await?;
        let json = text
            .as_string()
            .and_then(|text| js_sys::JSON::parse(&text).ok());
        Ok(Answer { status, json })
    }

    /// A sync answer as the core classifies it: the body read as the status
    /// says it should be ([`Reply::read`]; a body that is not JSON, or not
    /// of the expected shape, is [`Reply::Unreadable`]).
    fn outcome(self) -> TransportOutcome {
        let body = match self.json {
            Some(value) => Reply::read(self.status, serde_wasm_bindgen::Deserializer::from(value)),
            None => Reply::Unreadable,
        };
        TransportOutcome::Http {
            status: self.status,
            body,
        }
    }

    /// A heartbeat's answer: a 2xx is taken, with the period it carries
    /// (`heartbeat_period_ms`) if the site sends one; anything else failed.
    fn ack(self) -> BeatOutcome {
        if !(200..300).contains(&self.status) {
            return BeatOutcome::Failed;
        }
        let period = self
            .json
            .and_then(|ack| js_sys::Reflect::get(&ack, &"heartbeat_period_ms".into()).ok())
            .and_then(|period| period.as_f64())
            .filter(|period| period.is_finite() && *period >= 0.0)
            .map(|period| Millis(period as u64));
        BeatOutcome::Acknowledged { period }
    }
}

/// Reads a `Response` into what the core classifies (see [`Answer::outcome`]).
pub async fn read_response(response: Response) -> Result<TransportOutcome, JsValue> {
    Ok(Answer::read(response).await?.outcome())
}
