//! Stockhop's offline capture core.
//!
//! Everything outside [`web`] is sans-IO: plain Rust that takes `now` and
//! data and returns decisions. It compiles natively, where it is unit-tested
//! and shared with the site server (`stockhop-site`) for the wire types, and
//! for `wasm32`, where the [`web`] module wraps it for the service worker.
//!
//! Architecture invariant: no module here but [`web`] touches `JsValue`,
//! `web_sys`, IndexedDB, a socket or a clock. (On `wasm32` an item's
//! [`body::Body`] is [`web`]'s JS value; the core only passes it along and
//! builds and reads it through [`body`]'s functions.)

pub mod backoff;
pub mod body;
pub mod classify;
pub mod heap;
pub mod key;
pub mod oneshot;
pub mod queue;
pub mod time;
pub mod wire;

#[cfg(target_arch = "wasm32")]
pub mod web;
