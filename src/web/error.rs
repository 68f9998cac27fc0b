//! The runtime's error ([`QueueError`]) at the browser's edge: made from
//! IndexedDB's errors and thrown JS values, and turned into a `JsValue`
//! once: `{code, message}`, the shape the page shows.

use wasm_bindgen::JsValue;

pub use crate::runtime::QueueError;

impl QueueError {
    pub(crate) fn browser(value: JsValue) -> QueueError {
        QueueError::Browser(describe(&value))
    }
}

impl From<indexed_db_futures::error::Error> for QueueError {
    fn from(err: indexed_db_futures::error::Error) -> QueueError {
        QueueError::Storage(err.to_string())
    }
}

impl From<indexed_db_futures::error::OpenDbError> for QueueError {
    fn from(err: indexed_db_futures::error::OpenDbError) -> QueueError {
        QueueError::Storage(err.to_string())
    }
}

/// A readable line for a thrown JS value (an `Error`, a `DOMException`, a string).
pub(crate) fn describe(value: &JsValue) -> String {
    if let Some(text) = value.as_string() {
        return text;
    }
    let field = |name: &str| {
        js_sys::Reflect::get(value, &JsValue::from_str(name))
            .ok()
            .and_then(|v| v.as_string())
    };
    match (field("name"), field("message")) {
        (Some(name), Some(message)) => format!("{name}: {message}"),
        (None, Some(message)) => message,
        (Some(name), None) => name,
        (None, None) => format!("{value:?}"),
    }
}

impl From<QueueError> for JsValue {
    /// `{code, message}`.
    fn from(err: QueueError) -> JsValue {
        let object = js_sys::Object::new();
        let _ = js_sys::Reflect::set(&object, &"code".into(), &err.code().into());
        let _ = js_sys::Reflect::set(&object, &"message".into(), &err.to_string().into());
        object.into()
    }
}
