//! Why a queue operation failed: the runtime's one error type, the same
//! on every target (the browser glue turns it into `{code, message}`).

use crate::key::KeyError;
use crate::queue::{ActionError, CaptureError};

/// Why a queue operation failed. A capture that fails is never acknowledged.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum QueueError {
    /// The store refused or aborted (IndexedDB: quota, a constraint, a
    /// closed database), or a stored record could not be read.
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
    /// The platform refused (a browser API that threw).
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
}
