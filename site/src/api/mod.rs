//! The handhelds' and the sites' HTTP API over the ledger: who is calling
//! ([`caller`], the credential checks as axum extractors), the handhelds'
//! sync, heartbeat, session hops and the terminal listener's batches
//! ([`ledger`]), the read side of reference data ([`reference`]) and the
//! central's endpoint for a site's signed batches ([`central`]).
//!
//! Architecture invariant: a handler reads the request, checks the caller
//! and limits, and hands the work to the domain rooms below it (`ledger`,
//! `central`) on the database's thread; the rules live there, not here.
//! Nothing below this room imports it.

pub mod caller;
pub mod central;
pub mod ledger;
pub mod reference;
