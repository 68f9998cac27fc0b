//! The site's integration tests, one test binary: each suite a module, so
//! touching the site crate relinks one binary instead of one a suite.
//!
//! `cargo test -p stockhop-site --test site` runs every suite; a module
//! path as the filter runs one (`cargo test -p stockhop-site --test site
//! -- ledger_sync::`), as `cargo xtask test` does for the ledger suites on
//! PostgreSQL. The suites share one process and run in parallel threads of
//! it, so none of them changes what the process shares: no environment
//! variable set, no current directory changed, no signal handler or
//! subscriber installed, no resource limit lowered (a test that needs one
//! gives it to a child process, as `hostile_clients` does with `ulimit`).
//! Ports for child processes come from one counter (`ports/`), never the
//! same twice in the process.

// Helpers shared by the suites.
mod backend;
mod ledger_common;
mod listener_support;
mod listening;
mod ports;
mod printer_support;

// The suites.
mod alerts;
mod central;
mod data_api;
mod fuzz_corpus;
mod hostile_clients;
mod hostile_terminals;
mod https;
mod layering;
mod ledger_admission;
mod ledger_backend;
mod ledger_cli;
mod ledger_crash;
mod ledger_decisions;
mod ledger_labels;
mod ledger_modes;
mod ledger_reference;
mod ledger_rejections;
mod ledger_rules;
mod ledger_sync;
mod ledger_terminal;
mod listener_access;
mod listener_crash;
mod listener_forwarder;
mod listener_framed;
mod listener_https;
mod listener_iclock;
mod listener_restart;
mod listener_set_aside;
mod listener_zebra;
mod postgres_connections;
mod printers;
mod release;
mod rescue;
mod serve;
mod site_view;
mod trust_bounds;
