//! The HTTP surface: health, the PWA's static files, and (as the ledger
//! grows) the `/v1` API.

use std::path::PathBuf;

use axum::http::{header, HeaderValue};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::{Json, Router};
use tower_http::services::ServeDir;
use tower_http::set_header::SetResponseHeaderLayer;

use crate::db::Db;
use crate::error::AppError;

#[derive(Clone)]
pub struct AppState {
    pub db: Db,
    /// The PWA shell: index.html, sw.js, manifest, icons and `pkg/` (the
    /// built wasm package).
    pub www_dir: PathBuf,
    /// The ledger's in-memory state (keys in flight, terminal secret).
    pub ledger: crate::ledger::LedgerState,
}

/// The site's router.
pub fn app(state: AppState) -> Router {
    // The service worker script and the page must be revalidated on every
    // load so an update reaches the handhelds; the worker caches the shell
    // for offline use itself.
    let www = ServeDir::new(&state.www_dir).append_index_html_on_directories(true);
    let static_files =
        Router::new()
            .fallback_service(www)
            .layer(SetResponseHeaderLayer::overriding(
                header::CACHE_CONTROL,
                HeaderValue::from_static("no-cache"),
            ));
    Router::new()
        .route("/healthz", get(healthz))
        .merge(crate::ledger::api::routes())
        .merge(crate::view::api::routes())
        .with_state(state)
        .merge(static_files)
}

async fn healthz(
    axum::extract::State(state): axum::extract::State<AppState>,
) -> Result<impl IntoResponse, AppError> {
    let db = state.db.clone();
    let schema_version = db
        .call(|conn| -> Result<i64, AppError> {
            Ok(conn.query_row("PRAGMA user_version", [], |row| row.get(0))?)
        })
        .await?;
    Ok(Json(serde_json::json!({
        "status": "ok",
        "schema_version": schema_version,
        "version": env!("CARGO_PKG_VERSION"),
    })))
}
