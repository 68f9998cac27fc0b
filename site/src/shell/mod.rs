//! The handheld's shell as the site serves it: releases of the PWA (the
//! build id, `version.json`, strong `ETag`s on every file of `www/`,
//! [`release`]), the printable page of command barcodes ([`commands`])
//! and the constants the page reads from the site ([`handheld_constants`]).
//!
//! Architecture invariant: this room serves files and constants the site
//! defines; it holds no ledger rule and imports nothing above the HTTP
//! surfaces' shared state.

pub mod commands;
pub mod handheld_constants;
pub mod release;
