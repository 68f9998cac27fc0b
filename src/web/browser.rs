//! Hand-written bindings for the few browser APIs web-sys lacks or gates
//! behind unstable flags: Web Locks (`navigator.locks.request`), Background
//! Sync (`registration.sync.register`) and the storage estimate, reached
//! from whichever global this runs in.

use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use super::error::QueueError;

#[wasm_bindgen]
extern "C" {
    type LockManager;
    #[wasm_bindgen(method, catch)]
    fn request(this: &LockManager, name: &str, callback: &Function) -> Result<Promise, JsValue>;

    type SyncManager;
    #[wasm_bindgen(method, catch)]
    fn register(this: &SyncManager, tag: &str) -> Result<Promise, JsValue>;
}

fn navigator_field(name: &str) -> Option<JsValue> {
    let navigator = Reflect::get(&js_sys::global(), &"navigator".into()).ok()?;
    let value = Reflect::get(&navigator, &name.into()).ok()?;
    (!value.is_undefined() && !value.is_null()).then_some(value)
}

/// An exclusive Web Lock, held until dropped. Where the browser has no Web
/// Locks the guard is a no-op and the runtime's own in-worker flag is the
/// only guard.
pub struct LockGuard {
    release: Option<Function>,
}

impl Drop for LockGuard {
    fn drop(&mut self) {
        if let Some(release) = self.release.take() {
            let _ = release.call0(&JsValue::UNDEFINED);
        }
    }
}

/// Waits for the exclusive lock `name`, shared by the worker and its pages
/// (`None`: the browser refused the request).
pub async fn lock(name: &str) -> Option<LockGuard> {
    let Some(locks) = navigator_field("locks") else {
        return Some(LockGuard { release: None });
    };
    let locks: LockManager = locks.unchecked_into();
    let mut release: Option<Function> = None;
    let held = Promise::new(&mut |resolve, _reject| release = Some(resolve));
    let mut granted: Option<Function> = None;
    let acquired = Promise::new(&mut |resolve, _reject| granted = Some(resolve));
    let granted = granted.expect("promise executor runs synchronously");
    let callback = Closure::once_into_js(move |_lock: JsValue| -> JsValue {
        let _ = granted.call0(&JsValue::UNDEFINED);
        held.into()
    });
    // The request's own promise settles only when the lock is released.
    let _released = locks.request(name, callback.unchecked_ref()).ok()?;
    JsFuture::from(acquired).await.ok()?;
    Some(LockGuard { release })
}

/// Registers a Background Sync tag where the browser has it (service
/// worker with `registration.sync`); elsewhere the page's wake-ups drive
/// the drain. Returns whether a tag was registered.
pub async fn register_sync(tag: &str) -> bool {
    let global = js_sys::global();
    let Ok(registration) = Reflect::get(&global, &"registration".into()) else {
        return false;
    };
    let Ok(sync) = Reflect::get(&registration, &"sync".into()) else {
        return false;
    };
    if sync.is_undefined() || sync.is_null() {
        return false;
    }
    let sync: SyncManager = sync.unchecked_into();
    match sync.register(tag) {
        Ok(promise) => JsFuture::from(promise).await.is_ok(),
        Err(_) => false,
    }
}

/// The storage estimate: (usage bytes, quota bytes).
pub async fn storage_estimate() -> Result<Option<(f64, f64)>, QueueError> {
    let Some(storage) = navigator_field("storage") else {
        return Ok(None);
    };
    let estimate: Function = Reflect::get(&storage, &"estimate".into())
        .map_err(QueueError::browser)?
        .dyn_into()
        .map_err(QueueError::browser)?;
    let promise: Promise = estimate
        .call0(&storage)
        .map_err(QueueError::browser)?
        .unchecked_into();
    let estimate = JsFuture::from(promise).await.map_err(QueueError::browser)?;
    let number = |name: &str| {
        Reflect::get(&estimate, &name.into())
            .ok()
            .and_then(|v| v.as_f64())
            .unwrap_or(0.0)
    };
    Ok(Some((number("usage"), number("quota"))))
}
