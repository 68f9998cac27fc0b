//! The network edge: how bytes reach the site and leave it.
//!
//! [`accept`] takes connections and survives running out of descriptors;
//! [`per_address`] bounds the connections one address holds open and
//! waiting for a request head; [`handshakes`] caps TLS handshakes in
//! progress, keeping a share for addresses that have finished one; [`tls`] is the
//! certificate and the rustls configuration; [`server`] serves a router on
//! the plain and TLS ports (HTTP/2 where TLS agrees on it);
//! [`compression`] compresses responses, each encoding with its own `ETag`;
//! [`throttle`] slows failed sign-ins;
//! [`security_headers`] and [`shell_path`] are what every file served from
//! `www/` carries and which paths may name one; [`body`] refuses a body
//! whose declared length is over its limit before reading it. Going out, [`outbound`] is
//! the HTTP client that reaches another server and [`delivery`] the signed
//! machine-to-machine posts every forwarder drains its queue with.
//!
//! Architecture invariant: the edge moves bytes and enforces limits; it
//! decides nothing about scans. It imports only the base files (`limits`,
//! `log_sample`, `terminal_wire`) and never storage, the ledger, the
//! listener, the central or a page.

pub mod accept;
pub mod body;
pub mod compression;
pub mod delivery;
pub mod handshakes;
pub mod outbound;
pub mod per_address;
pub mod security_headers;
pub mod server;
pub mod shell_path;
pub mod throttle;
pub mod tls;
