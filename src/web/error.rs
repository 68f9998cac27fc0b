//! The runtime's errors, and their one conversion to a `JsValue` at the
//! edge: `{code, message}`, the shape the page shows.

use wasm_bindgen::JsValue;

use crate::key::KeyError;
use crate::queue::{ActionError, CaptureError};

/// Why a queue operation failed. A capture that fails is never acknowledged.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum QueueError {
    /// IndexedDB refused or aborted (quota, a constraint, a closed
    /// database), or a stored record could not be read.
    #[error("storage: {0}")]
    Storage(String),
    #[error(transparent)]
    Capture(#[from] CaptureError),
    #[error(transparent)]
    Action(#[from] ActionError),
    #[error(transparent)]
    Key(#[from] KeyError),
    #[error("no item with queue id {0}")]
    NoItem(u64),
    #[error("bad message: {0}")]
    BadMessage(String),
    #[error("browser: {0}")]
    Browser(String),
    /// The site could not be reached (no network, no answer in time).
    #[error("offline: the site did not answer")]
    Offline,
    /// The site answered a read with an error, or with something unreadable.
    #[error("site: {0}")]
    Site(String),
    /// The queue's runtime has stopped (its database closed under it).
    #[error("the queue has stopped")]
    Stopped,
}

impl QueueError {
    /// A stable code for the page.
    pub fn code(&self) -> &'static str {
        match self {
            QueueError::Storage(_) => "STORAGE",
            QueueError::Capture(CaptureError::SessionClosed(_)) => "SESSION_CLOSED",
            QueueError::Capture(CaptureError::UnknownSession(_)) => "UNKNOWN_SESSION",
            QueueError::Capture(CaptureError::SessionExists(_)) => "SESSION_EXISTS",
            QueueError::Capture(CaptureError::ReservedCommand(_)) => "RESERVED_COMMAND",
            QueueError::Action(_) => "NOT_ALLOWED",
            QueueError::Key(_) => "KEY",
            QueueError::NoItem(_) => "NO_ITEM",
            QueueError::BadMessage(_) => "BAD_MESSAGE",
            QueueError::Browser(_) => "BROWSER",
            QueueError::Offline => "OFFLINE",
            QueueError::Site(_) => "SITE",
            QueueError::Stopped => "STOPPED",
        }
    }

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
