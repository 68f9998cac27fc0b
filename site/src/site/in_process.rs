//! The terminal listener's forwarder delivering to this site's own ledger,
//! without HTTP: the default when no remote ledger URL is configured.
//!
//! The ledger claims each record's key exactly as it does over HTTP, so the
//! forwarder's retry and dead-letter rules hold unchanged: a refused batch
//! comes back as the status the HTTP endpoint would have answered.

use crate::ledger;
use crate::listener::forwarder::{Delivery, LedgerSink};
use crate::net::delivery::DeliveryError;
use crate::store::db::Db;
use crate::terminal_wire::TerminalBatch;

pub struct InProcessLedger {
    db: Db,
}

impl InProcessLedger {
    pub fn new(db: Db) -> InProcessLedger {
        InProcessLedger { db }
    }
}

impl LedgerSink for InProcessLedger {
    fn deliver(&self, batch: TerminalBatch) -> Delivery<'_> {
        Box::pin(async move {
            ledger::terminal::ingest_into(&self.db, batch, ledger::wall_clock())
                .await
                .map_err(|err| DeliveryError::Status {
                    status: err.status().as_u16(),
                    body: err.to_string(),
                })
        })
    }
}
