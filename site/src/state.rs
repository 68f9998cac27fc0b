//! The state every HTTP handler shares, in a module of its own so the
//! handlers and the router that mounts them both depend on it and not on
//! each other. A handler that needs only a part takes that part as its
//! state ([`Db`], [`LedgerState`]) through axum's `FromRef`.

use std::path::PathBuf;

use axum::extract::FromRef;

use crate::ledger::LedgerState;
use crate::store::db::Db;

#[derive(Clone)]
pub struct AppState {
    pub db: Db,
    /// The PWA shell: index.html, sw.js, manifest, icons and `pkg/` (the
    /// built wasm package).
    pub www_dir: PathBuf,
    /// The ledger's in-memory state (keys in flight, terminal secret).
    pub ledger: LedgerState,
}

impl FromRef<AppState> for Db {
    fn from_ref(state: &AppState) -> Db {
        state.db.clone()
    }
}

impl FromRef<AppState> for LedgerState {
    fn from_ref(state: &AppState) -> LedgerState {
        state.ledger.clone()
    }
}
