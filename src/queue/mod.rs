//! The handheld queue, sans-IO: capture into sessions, the drain's state
//! machine, the reading of sync answers, operator actions, the queue
//! screen's figures and when the heartbeat is due (docs/design.md §2–§4).
//!
//! The service-worker runtime (`crate::web`) does the IndexedDB
//! transactions, timers, fetch and messaging around these types; nothing
//! here touches a clock, storage or the network.
//!
//! Architecture invariant: the queue is unbounded (docs/design.md §3.4). There
//! is no cap on queued items and no eviction anywhere in this module; the
//! page warns from the storage estimate instead.

pub mod action;
pub mod capture;
pub mod drain;
pub mod heartbeat;
pub mod item;
pub mod outcome;
pub mod session;
pub mod view;

pub use action::{acknowledge, discard, ActionError};
pub use drain::{Drain, DrainError, Lease, Recorded};
pub use heartbeat::{BeatOutcome, Heartbeats};
pub use item::{Item, ItemState};
pub use outcome::{verdicts, Reply, TransportOutcome, Verdict};
pub use session::{Capture, CaptureError, Session};
pub use view::{Blockers, Counts};
