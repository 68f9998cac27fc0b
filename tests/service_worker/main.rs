//! The browser tests that run inside a real service worker, one test
//! binary (a binary runs either in a page or in a worker, so these are
//! apart from `tests/browser/`): each suite a module.
//!
//! The suites share one worker and run one test after another in it:
//! each test opens its own IndexedDB database under a fresh name
//! (`support::db_name`), and the one global a test sets, `queue`'s `sync`
//! listener, drains only the database of its own test.
#![cfg(target_arch = "wasm32")]

wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_service_worker);

// Helpers shared by the suites.
#[path = "../common/web_queue_support.rs"]
mod support;

// The suites.
mod indexed_db;
mod queue;
