//! The HTTP surface: health, the PWA's static files, and (as the ledger
//! grows) the `/v1` API.
//!
//! The static files are served only from inside `www/` ([`crate::net::shell_path`]).

use std::sync::Arc;

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::{Json, Router};
use tower_http::services::ServeDir;
use tower_http::set_header::SetResponseHeaderLayer;

use crate::error::AppError;
use crate::net::shell_path::inside_www;
use crate::state::AppState;

/// The site's router.
pub fn app(state: AppState) -> Router {
    // The service worker script and the page must be revalidated on every
    // load so an update reaches the handhelds; the worker caches the shell
    // for offline use itself.
    let www = ServeDir::new(&state.www_dir).append_index_html_on_directories(true);
    let root = Arc::new(state.www_dir.clone());
    let static_files = Router::new()
        .fallback_service(www)
        .layer(axum::middleware::from_fn_with_state(
            root.clone(),
            crate::shell::release::content_etag,
        ))
        .layer(axum::middleware::from_fn_with_state(root, inside_www))
        .layer(axum::middleware::from_fn(
            crate::net::security_headers::set_pwa_security_headers,
        ))
        .layer(SetResponseHeaderLayer::overriding(
            header::CACHE_CONTROL,
            HeaderValue::from_static("no-cache"),
        ));
    Router::new()
        .route("/healthz", get(healthz))
        .merge(crate::api::ledger::routes())
        .merge(crate::api::central::routes())
        .merge(crate::view::sign_in::guarded(
            crate::view::api::routes()
                .merge(crate::view::printers::routes())
                .merge(crate::data_api::routes()),
            &state,
        ))
        .merge(crate::shell::commands::routes())
        .merge(crate::shell::handheld_constants::routes())
        // The page and the worker script are served here, with the build id
        // in them: the same security headers as every other shell file.
        .merge(
            crate::shell::release::routes().layer(axum::middleware::from_fn(
                crate::net::security_headers::set_pwa_security_headers,
            )),
        )
        // Any other `/v1` path: 404 in the API's error body. A route of
        // its own, so the routes above, being more specific, still win.
        .route("/v1/{*rest}", axum::routing::any(no_such_endpoint))
        // Last, so it reaches every route above: a method a path does not
        // take is 405 with `Allow` and the API's error body, not an empty one.
        .method_not_allowed_fallback(crate::error::method_not_allowed)
        .with_state(state.clone())
        .merge(static_files)
        .layer(axum::middleware::from_fn_with_state(
            state.ledger.storage.clone(),
            crate::store::storage::watch,
        ))
        // Outermost: every response compressed as the client accepts, and
        // conditional requests answered on the encoded representation.
        .layer(crate::net::compression::layer())
        .layer(axum::middleware::from_fn(
            crate::net::compression::encoded_etag,
        ))
}

/// The answer to a `/v1` path the API does not have (a misspelt endpoint):
/// 404 `NOT_FOUND` in the API's error body, pointing at the document that
/// lists the paths it has, rather than an empty 404.
async fn no_such_endpoint(uri: axum::http::Uri) -> AppError {
    AppError::client(
        StatusCode::NOT_FOUND,
        crate::ledger::codes::NOT_FOUND,
        format!(
            "no endpoint {}: GET /v1/openapi.json lists every /v1 path",
            uri.path()
        ),
    )
}

async fn healthz(
    axum::extract::State(state): axum::extract::State<AppState>,
) -> Result<impl IntoResponse, AppError> {
    let db = state.db.clone();
    let schema_version = tokio::task::spawn_blocking(move || db.schema_version())
        .await
        .map_err(|err| AppError::Internal(err.to_string()))??;
    // Out of storage the site is up but takes no writes: 503, so a load
    // balancer or monitor sees it.
    let full = state.ledger.storage.is_full();
    let status = if full {
        StatusCode::SERVICE_UNAVAILABLE
    } else {
        StatusCode::OK
    };
    Ok((
        status,
        Json(serde_json::json!({
            "status": if full { "unavailable" } else { "ok" },
            "storage": if full { "full" } else { "ok" },
            "schema_version": schema_version,
            "version": env!("CARGO_PKG_VERSION"),
        })),
    ))
}
