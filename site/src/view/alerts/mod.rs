//! Alerts that reach people: the conditions a site raises (a device
//! offline past its profile's period at its priority, the backlog
//! escalated, dead letters, storage nearly full, the central outbox
//! stuck, a device that keeps producing rejections), one `firing` when a
//! condition starts and one `resolved` when it ends, POSTed to `serve
//! --alert-webhook` from a durable outbox.
//!
//! [`conditions`] decides, sans-IO, which conditions hold in a status read
//! at `now`; [`outbox`] (the one place with its SQL) remembers which are
//! firing and queues the transitions in one transaction, so a restart
//! neither repeats nor loses one; [`webhook`] is the task that evaluates on
//! a timer and delivers the queue with the forwarders' signature, backoff
//! and classification (`crate::listener::forwarder`).

pub mod conditions;
pub mod outbox;
pub mod webhook;
