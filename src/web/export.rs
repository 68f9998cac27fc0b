//! The queue screen's Export (`export_queue`): every item the site has not
//! acknowledged, written as one signed rescue file ([`crate::rescue`]) for
//! a device that can no longer reach the site.
//!
//! The items are read in one read-only transaction beside the runtime's
//! turns, as the page's other reads are, so an export runs while the drain
//! is sending and changes nothing: the items stay queued and still drain
//! if the device reconnects. The file is written from the items in memory
//! once the transaction is over, and only then are the browser's digests
//! awaited, so no transaction waits on anything but its own requests.
//!
//! The layout is the core's ([`rescue::signed_lines`], [`rescue::seal`]);
//! the JSON text of each line is the browser's `JSON.stringify` of what
//! serde makes of the value, and the SHA-256 and HMAC-SHA256 are the
//! browser's WebCrypto (`crypto.subtle`): with serde_json's text writer
//! and sha2/hmac instead, the module was 15.4 KiB larger (7.7 KiB
//! gzipped; `wasm-pack.toml`'s budget has the figures).

use serde::Serialize;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{CryptoKey, SubtleCrypto};

use crate::queue::Item;
use crate::rescue::{self, Header, Lines, MAX_FILE_BYTES, MAX_ITEMS};
use crate::wire::SyncItem;

use super::clock::{Clock, SystemClock};
use super::convert::to_js;
use super::error::QueueError;
use super::store::Store;

/// `export_queue`'s reply: how many items the file holds, its name and
/// its bytes (a `Uint8Array` the page makes a `Blob` of); with no item to
/// export, `items: 0` and neither name nor file.
#[derive(Serialize)]
struct Exported {
    items: u64,
    name: Option<String>,
    bytes: u64,
    #[serde(with = "serde_wasm_bindgen::preserve")]
    file: JsValue,
}

/// Writes the rescue file of every unacknowledged item, signed with the
/// device's token; `build` is the worker's build, the header's `build`.
pub(super) async fn export_queue(store: &Store, build: &str) -> Result<JsValue, QueueError> {
    let (device, items) = store.unacknowledged().await?;
    if items.is_empty() {
        return reply(Exported {
            items: 0,
            name: None,
            bytes: 0,
            file: JsValue::NULL,
        });
    }
    let device = device.ok_or_else(|| {
        QueueError::BadMessage(
            "export_queue: this device is not set up, so it holds no token to sign the file with"
                .into(),
        )
    })?;
    if items.len() > MAX_ITEMS {
        return Err(too_large(format!(
            "{} items waiting; a rescue file holds at most {MAX_ITEMS}",
            items.len()
        )));
    }
    let exported_at = SystemClock.now();
    let header = Header {
        device_id: device.device_id.clone(),
        build: build.to_owned(),
        exported_at,
    };
    let wire: Vec<SyncItem> = items.iter().map(Item::to_wire).collect();
    let signed = rescue::signed_lines(&mut Stringify, &header, &wire)?;
    let crypto = Subtle::new()?;
    let token_digest = crypto.sha256(device.device_token.as_bytes()).await?;
    let sha256 = crypto.sha256(&signed).await?;
    let hmac = crypto.hmac_sha256(&token_digest, &signed).await?;
    let file = rescue::seal(&mut Stringify, signed, &rescue::trailer(&sha256, &hmac))?;
    if file.len() > MAX_FILE_BYTES {
        return Err(too_large(format!(
            "the file would be {} bytes; the site reads at most {MAX_FILE_BYTES}",
            file.len()
        )));
    }
    reply(Exported {
        items: wire.len() as u64,
        name: Some(rescue::file_name(&device.device_id, exported_at)),
        bytes: file.len() as u64,
        file: js_sys::Uint8Array::from(file.as_slice()).into(),
    })
}

/// A queue too large for one file: the site would refuse it whole, so
/// none is written (nothing is lost: the items stay queued).
fn too_large(why: String) -> QueueError {
    QueueError::Storage(format!("export_queue: {why}"))
}

/// [`Lines`] through the browser's `JSON.stringify` of the plain value
/// serde makes ([`to_js`]).
struct Stringify;

impl Lines for Stringify {
    type Error = QueueError;

    fn push<T: Serialize>(&mut self, out: &mut Vec<u8>, value: &T) -> Result<(), QueueError> {
        let value = to_js(value).map_err(QueueError::Browser)?;
        let text: String = js_sys::JSON::stringify(&value)
            .map_err(QueueError::browser)?
            .into();
        out.extend_from_slice(text.as_bytes());
        out.push(b'\n');
        Ok(())
    }
}

/// The browser's WebCrypto, in a worker or a page.
struct Subtle(SubtleCrypto);

impl Subtle {
    fn new() -> Result<Subtle, QueueError> {
        let crypto = js_sys::Reflect::get(&js_sys::global(), &"crypto".into())
            .map_err(QueueError::browser)?;
        if crypto.is_undefined() {
            return Err(QueueError::Browser("no crypto in this context".into()));
        }
        Ok(Subtle(crypto.unchecked_into::<web_sys::Crypto>().subtle()))
    }

    async fn sha256(&self, data: &[u8]) -> Result<[u8; 32], QueueError> {
        let promise = self
            .0
            .digest_with_str_and_u8_array("SHA-256", data)
            .map_err(QueueError::browser)?;
        digest(promise).await
    }

    /// HMAC-SHA256 of `data` keyed by `key`.
    async fn hmac_sha256(&self, key: &[u8; 32], data: &[u8]) -> Result<[u8; 32], QueueError> {
        let algorithm = js_sys::Object::new();
        let _ = js_sys::Reflect::set(&algorithm, &"name".into(), &"HMAC".into());
        let _ = js_sys::Reflect::set(&algorithm, &"hash".into(), &"SHA-256".into());
        let usages = js_sys::Array::of1(&"sign".into());
        let key_data = js_sys::Uint8Array::from(&key[..]);
        let promise = self
            .0
            .import_key_with_object("raw", &key_data, &algorithm, false, &usages)
            .map_err(QueueError::browser)?;
        let key: CryptoKey = JsFuture::from(promise)
            .await
            .map_err(QueueError::browser)?
            .unchecked_into();
        let promise = self
            .0
            .sign_with_str_and_u8_array("HMAC", &key, data)
            .map_err(QueueError::browser)?;
        digest(promise).await
    }
}

/// A 32-byte digest a WebCrypto promise resolves to, as an `ArrayBuffer`.
async fn digest(promise: js_sys::Promise) -> Result<[u8; 32], QueueError> {
    let buffer = JsFuture::from(promise).await.map_err(QueueError::browser)?;
    let bytes = js_sys::Uint8Array::new(&buffer).to_vec();
    bytes
        .try_into()
        .map_err(|_| QueueError::Browser("a SHA-256 digest is not 32 bytes".into()))
}

fn reply(exported: Exported) -> Result<JsValue, QueueError> {
    to_js(&exported).map_err(QueueError::Browser)
}
