//! How a sync request reaches the site: a trait, so tests about the logic
//! above it can substitute the network, and [`FetchTransport`], the real
//! one, with a 10 s `AbortController` timeout.

use std::cell::Cell;
use std::rc::Rc;

use js_sys::Promise;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortController, Headers, Request, RequestInit, Response};

use crate::queue::{Reply, TransportOutcome};
use crate::time::Millis;
use crate::wire::{SyncRequest, SYNC_PATH};

use super::convert::to_js;
use super::store::DeviceConfig;

/// A request that has not answered in this long is abandoned as a timeout
/// (docs/design.md §3.5), so a dead link does not hold the drain lock.
pub const SYNC_TIMEOUT: Millis = Millis::from_secs(10);

/// Sends one sync request and reports what came back.
#[allow(async_fn_in_trait)]
pub trait Transport {
    async fn send(&self, device: &DeviceConfig, request: &SyncRequest) -> TransportOutcome;
}

#[wasm_bindgen]
extern "C" {
    /// `fetch` of whichever global this runs in (window or worker).
    #[wasm_bindgen(js_name = fetch)]
    fn global_fetch(request: &Request) -> Promise;
}

/// The real transport: `fetch` to `{site}/v1/sync`.
#[derive(Debug, Clone, Copy, Default)]
pub struct FetchTransport;

impl Transport for FetchTransport {
    async fn send(&self, device: &DeviceConfig, request: &SyncRequest) -> TransportOutcome {
        let Some(body) = request_body(request) else {
            return TransportOutcome::Http {
                status: 400,
                body: Reply::Unreadable,
            };
        };
        let url = device.site_url.trim_end_matches('/').to_owned() + SYNC_PATH;
        match fetch_with_timeout(&url, &device.device_token, &body).await {
            Ok(outcome) => outcome,
            Err(_) => TransportOutcome::Offline,
        }
    }
}

/// The request as JSON text: serde writes the JS object, the browser's
/// `JSON.stringify` the text (the module carries no JSON printer).
fn request_body(request: &SyncRequest) -> Option<JsValue> {
    let value = to_js(request).ok()?;
    js_sys::JSON::stringify(&value).ok().map(JsValue::from)
}

async fn fetch_with_timeout(
    url: &str,
    token: &str,
    body: &JsValue,
) -> Result<TransportOutcome, JsValue> {
    let controller = AbortController::new()?;
    let headers = Headers::new()?;
    headers.set("content-type", "application/json")?;
    headers.set("authorization", &("Bearer ".to_owned() + token))?;
    let init = RequestInit::new();
    init.set_method("POST");
    init.set_headers(&headers);
    init.set_body(body);
    init.set_signal(Some(&controller.signal()));
    let request = Request::new_with_str_and_init(url, &init)?;

    let timed_out = Rc::new(Cell::new(false));
    let timer = {
        let timed_out = timed_out.clone();
        let controller = controller.clone();
        gloo_timers::callback::Timeout::new(SYNC_TIMEOUT.0 as u32, move || {
            timed_out.set(true);
            controller.abort();
        })
    };
    let answered = JsFuture::from(global_fetch(&request)).await;
    let result = match answered {
        Ok(response) => read_response(response.unchecked_into()).await,
        Err(_) if timed_out.get() => Ok(TransportOutcome::Timeout),
        Err(_) => Ok(TransportOutcome::Offline),
    };
    drop(timer);
    match result {
        Err(_) if timed_out.get() => Ok(TransportOutcome::Timeout),
        other => other,
    }
}

/// Reads a `Response` into what the core classifies: its status and the
/// body, parsed by the browser's `JSON.parse` and read as the status says
/// it should be ([`Reply::read`]; a body that is not JSON, or not of the
/// expected shape, is [`Reply::Unreadable`]). A body that cannot be read
/// at all is an error.
pub async fn read_response(response: Response) -> Result<TransportOutcome, JsValue> {
    let status = response.status();
    let text = JsFuture::from(response.text()?).await?;
    let body = match text.as_string().map(|text| js_sys::JSON::parse(&text)) {
        Some(Ok(value)) => Reply::read(status, serde_wasm_bindgen::Deserializer::from(value)),
        _ => Reply::Unreadable,
    };
    Ok(TransportOutcome::Http { status, body })
}
