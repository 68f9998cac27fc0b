//! `stockhop-site`: the native companion that runs on the site machine.
//!
//! It serves the PWA (`www/` with the built wasm package), answers the
//! handhelds' sync protocol against the site ledger, and keeps everything in
//! one embedded SQLite database ([`store::db`]). [`app`] builds the HTTP router
//! from a state so tests drive it without a socket; [`serve`] runs it on a
//! listener until a shutdown future resolves; [`Site::start`] starts the
//! whole site (every port and task `stockhop-site serve` runs) and hands
//! back its bound addresses, so tests start it in-process on port 0.

pub mod api;
pub mod central;
pub mod data_api;
pub mod error;
pub mod fuzz;
pub mod ident;
pub mod ledger;
pub mod limits;
pub mod listener;
pub mod log_sample;
pub mod net;
pub mod printers;
pub mod shell;
pub mod site;
pub mod site_clock;
pub mod state;
pub mod store;
pub mod terminal_wire;
pub mod view;

use std::future::Future;
use std::path::PathBuf;

pub use site::http::app;
pub use site::{Site, SiteConfig};
pub use state::AppState;

/// Serves `state` over plain HTTP on `listener` until `shutdown` resolves,
/// then finishes the requests in flight and returns. Connections are capped
/// and their heads bounded in time by [`net::server::serve_connections`]. (The
/// whole site also serves HTTPS and guards the plain port; see [`Site`].)
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let addr = listener.local_addr()?;
    tracing::info!(%addr, www = %state.www_dir.display(), "site server listening");
    net::server::serve_connections(listener, None, app(state), shutdown).await
}

/// Where the PWA lives when `--www` is not given: `./www` when the server
/// runs from a checkout, else the `www/` beside the crate it was built from.
pub fn default_www_dir() -> PathBuf {
    let local = PathBuf::from("www");
    if local.join("index.html").exists() {
        local
    } else {
        PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../www"))
    }
}
