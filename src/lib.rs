//! Stockhop's offline capture core.
//!
//! Everything outside [`web`] and [`runtime`] is sans-IO: plain Rust that
//! takes `now` and data and returns decisions; [`runtime`] drives it
//! through traits for storage, network, time and platform. It compiles
//! natively, where it is unit-tested, run by the simulation and shared
//! with the site server (`stockhop-site`) for the wire types, and for
//! `wasm32`, where the [`web`] module implements the runtime's traits for
//! the service worker.
//!
//! Architecture invariant: no module here but [`web`] touches `JsValue`,
//! `web_sys`, IndexedDB, a socket or a clock, and every type here is the
//! same on every target: the native tests run the code that ships.

pub mod backoff;
pub mod body;
pub mod classify;
pub mod gs1;
pub mod key;
#[cfg(feature = "openapi")]
mod openapi;
pub mod queue;
pub mod reason;
pub mod reference;
pub mod release;
pub mod rescue;
pub mod runtime;
pub mod time;
pub mod undo;
pub mod wire;

#[cfg(target_arch = "wasm32")]
pub mod web;
