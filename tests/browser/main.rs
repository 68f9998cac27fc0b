//! The browser tests that run in a page, one test binary: each suite a
//! module, so touching the core relinks one binary and `wasm-pack test`
//! starts one headless Chromium for them instead of one a suite.
//!
//! The suites share one page and run one test after another in it, so
//! none of them leaves what the next could meet: each test opens its
//! own IndexedDB database under a fresh name (`support::db_name`), and
//! none sets a global of the page. `cargo test --target
//! wasm32-unknown-unknown --test browser -- queue::` runs one suite.
#![cfg(target_arch = "wasm32")]

wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

// Helpers shared by the suites.
#[path = "../common/key_vectors.rs"]
mod key_vectors;
#[path = "../common/web_queue_support.rs"]
mod support;

// The suites.
mod heartbeat;
mod labels;
mod page;
mod queue;
mod records;
mod reference;
mod rescue;
