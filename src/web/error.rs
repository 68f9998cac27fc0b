//! The runtime's errors, and their one conversion to a `JsValue` at the
//! edge: `{code, message}`, the shape the page shows.

use std::rc::Rc;

use wasm_bindgen::JsValue;

use crate::key::KeyError;
use crate::queue::{ActionError, CaptureError};

/// Why a queue operation failed. A capture that fails is never acknowledged.
///
/// Behind one pointer: a `Result` carrying it is no larger than its
/// success value, and each `?` on the way out moves one pointer (with the
/// kind inline, every result and every `?` in the worker's async steps
/// carried 32 bytes; the pointer took ~7 KB off the release module). An
/// `Rc`, so the one failure of a capture group reaches each of its waiters
/// without copying its text. Failures are rare and the allocation is only
/// made on one.
#[derive(Debug, Clone, PartialEq)]
pub struct QueueError(Rc<QueueErrorKind>);

/// What [`QueueError`] is about.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum QueueErrorKind {
    /// IndexedDB refused or aborted (quota, a constraint, a closed database).
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
    #[error("the device is not set up: {0}")]
    NotConfigured(&'static str),
    #[error("bad message: {0}")]
    BadMessage(String),
    #[error("browser: {0}")]
    Browser(String),
}

impl<E: Into<QueueErrorKind>> From<E> for QueueError {
    fn from(kind: E) -> QueueError {
        QueueError(Rc::new(kind.into()))
    }
}

impl std::fmt::Display for QueueError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&*self.0, f)
    }
}

impl std::error::Error for QueueError {}

impl QueueError {
    pub fn new(kind: QueueErrorKind) -> QueueError {
        QueueError(Rc::new(kind))
    }

    pub fn kind(&self) -> &QueueErrorKind {
        &self.0
    }

    /// A stable code for the page.
    pub fn code(&self) -> &'static str {
        use QueueErrorKind as Kind;
        match self.kind() {
            Kind::Storage(_) => "STORAGE",
            Kind::Capture(CaptureError::SessionClosed(_)) => "SESSION_CLOSED",
            Kind::Capture(CaptureError::UnknownSession(_)) => "UNKNOWN_SESSION",
            Kind::Capture(CaptureError::SessionExists(_)) => "SESSION_EXISTS",
            Kind::Capture(CaptureError::ReservedCommand(_)) => "RESERVED_COMMAND",
            Kind::Action(_) => "NOT_ALLOWED",
            Kind::Key(_) => "KEY",
            Kind::NoItem(_) => "NO_ITEM",
            Kind::NotConfigured(_) => "NOT_CONFIGURED",
            Kind::BadMessage(_) => "BAD_MESSAGE",
            Kind::Browser(_) => "BROWSER",
        }
    }

    /// IndexedDB refused or aborted, in these words.
    pub(crate) fn storage(why: impl Into<String>) -> QueueError {
        QueueError::new(QueueErrorKind::Storage(why.into()))
    }

    /// A page's message could not be read, in these words.
    pub(crate) fn bad_message(why: impl Into<String>) -> QueueError {
        QueueError::new(QueueErrorKind::BadMessage(why.into()))
    }

    pub(crate) fn no_item(id: u64) -> QueueError {
        QueueError::new(QueueErrorKind::NoItem(id))
    }

    pub(crate) fn browser(value: JsValue) -> QueueError {
        QueueError::new(QueueErrorKind::Browser(describe(&value)))
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
    fn from(err: QueueError) -> JsValue {
        let object = js_sys::Object::new();
        let _ = js_sys::Reflect::set(&object, &"code".into(), &err.code().into());
        let _ = js_sys::Reflect::set(&object, &"message".into(), &err.to_string().into());
        object.into()
    }
}

impl From<indexed_db_futures::error::Error> for QueueErrorKind {
    fn from(err: indexed_db_futures::error::Error) -> QueueErrorKind {
        QueueErrorKind::Storage(describe_idb(&err))
    }
}

impl From<indexed_db_futures::error::OpenDbError> for QueueErrorKind {
    fn from(err: indexed_db_futures::error::OpenDbError) -> QueueErrorKind {
        use indexed_db_futures::error::OpenDbError;
        QueueErrorKind::Storage(match &err {
            OpenDbError::VersionZero => "Version cannot be zero".into(),
            OpenDbError::UnsupportedEnvironment => "Unsupported environment".into(),
            OpenDbError::NullFactory => {
                "The `indexedDB` getter returned `null` or `undefined`".into()
            }
            OpenDbError::Base(base) => describe_idb(base),
        })
    }
}

/// An `indexed_db_futures` error in that crate's own words. It is spelled
/// out here rather than taken from its `Display` because that `Display`
/// prints the numbers of value errors with Rust's float formatting, about
/// 14 KB of the module for errors that carry a float in no path the queue
/// takes. Those numbers, and the parts of a `Switch`, are left out: the
/// queue only opens the database through that crate, and an open can fail
/// with no value error but a failed cast.
fn describe_idb(err: &indexed_db_futures::error::Error) -> String {
    use indexed_db_futures::error::{Error, SerialisationError};
    match err {
        Error::DomException(err) => err.to_string(),
        Error::Serialisation(SerialisationError::SimpleValue(err)) => {
            format!("Simple value parse error: {}", describe_value(err))
        }
        Error::Serialisation(SerialisationError::Serde(err)) => err.to_string(),
        Error::MissingData(err) => format!("Missing data: {err}"),
        Error::Unknown(err) => format!("Generic JS error: {err}"),
    }
}

fn describe_value(err: &indexed_db_futures::error::SimpleValueError) -> String {
    use indexed_db_futures::error::SimpleValueError;
    match err {
        SimpleValueError::NotAString(_) => "Not a string".into(),
        SimpleValueError::NotANumber(_) => "Not a number".into(),
        SimpleValueError::NotABoolean(_) => "Not a boolean".into(),
        SimpleValueError::DynCast(_) => "Dynamic cast failed".into(),
        SimpleValueError::TooLarge(_) => "The value is too large".into(),
        SimpleValueError::TooSmall(_) => "The value is too small".into(),
        SimpleValueError::Signed(_) => "The value is signed".into(),
        SimpleValueError::Switch(_) => "Errors performing `TryFromJs` on `Switch`".into(),
        SimpleValueError::Other(err) => err.to_string(),
    }
}
