//! The handheld queue's runtime, the same on every target: the actor that
//! owns the store and the drain (capture groups written in one
//! transaction, the drain loop and its backoff, pruning, the heartbeat and
//! the reference pulls), generic over where it runs ([`traits`]). The
//! service worker runs it over IndexedDB, `fetch`, timers and Web Locks
//! (`crate::web`); the simulation runs it over its own models of those,
//! so what the simulation checks is the code that ships.
//!
//! * [`handle`]: [`Queue`], the handle callers hold;
//! * [`command`]: what passes between the handle and the actor;
//! * [`actor`]: the actor's turns;
//! * [`traits`]: [`Store`], [`Transport`], [`Clock`], [`Platform`], and
//!   the durability every store keeps;
//! * [`records`]: what the runtime and its store exchange;
//! * [`plant`]: bugs the simulation plants to show it catches them;
//! * [`error`]: the one error type, [`QueueError`].

mod actor;
pub mod command;
pub mod error;
pub mod handle;
pub mod plant;
pub mod records;
pub mod traits;

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;

pub use command::{DrainReport, Found, Options, APP_VERSION, PRUNE_EVERY};
pub use error::QueueError;
pub use handle::Queue;
pub use records::{
    plan_capture, CaptureRequest, DeviceConfig, DrainSnapshot, ReferenceStatus, Written,
};
pub use traits::{Clock, Page, Platform, Store, Transport};
