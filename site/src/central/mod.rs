//! Past one site: each site forwards every applied hop to a central
//! `stockhop-site` (usually on PostgreSQL), exactly once by the hop's key
//! and in order per site.
//!
//! * `outbox.rs` — the site's outbox: rows written by a trigger in the
//!   transaction that appends the hop, while forwarding is configured, and
//!   for the hops appended before, when it is turned on.
//! * `forwarder.rs` — the site's task that drains the outbox to the
//!   central (over HTTPS through [`crate::net::outbound`]), with the terminal
//!   forwarder's backoff and dead-letter rules.
//! * `wire.rs` — the signed batch and its per-hop answer.
//! * `ingest.rs` — the central's side: batches in, each hop held once.
//! * The central's endpoint is [`crate::api::central`].
//! * `secrets.rs` — each site's own secret at the central, and which key
//!   a batch is verified with.
//! * `feed.rs` — the hop feed over every site's hops.

pub mod feed;
pub mod forwarder;
pub mod ingest;
pub mod outbox;
pub mod secrets;
pub mod wire;
