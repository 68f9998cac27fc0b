//! The HTTP surface: health, the PWA's static files, and (as the ledger
//! grows) the `/v1` API.
//!
//! The static files are served only from inside `www/`: a path with a
//! dotfile component, a component longer than a file name can be, or one
//! that resolves (through a symlink) outside the folder is 404.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::extract::Request;
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
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
    let root = Arc::new(state.www_dir.clone());
    let static_files = Router::new()
        .fallback_service(www)
        .layer(axum::middleware::from_fn_with_state(
            root.clone(),
            crate::release::content_etag,
        ))
        .layer(axum::middleware::from_fn_with_state(root, inside_www))
        .layer(axum::middleware::from_fn(
            crate::security_headers::set_pwa_security_headers,
        ))
        .layer(SetResponseHeaderLayer::overriding(
            header::CACHE_CONTROL,
            HeaderValue::from_static("no-cache"),
        ));
    Router::new()
        .route("/healthz", get(healthz))
        .merge(crate::ledger::api::routes())
        .merge(crate::central::api::routes())
        .merge(crate::view::sign_in::guarded(
            crate::view::api::routes()
                .merge(crate::view::printers::routes())
                .merge(crate::data_api::routes()),
            &state,
        ))
        .merge(crate::commands::routes())
        // The page and the worker script are served here, with the build id
        // in them: the same security headers as every other shell file.
        .merge(crate::release::routes().layer(axum::middleware::from_fn(
            crate::security_headers::set_pwa_security_headers,
        )))
        .with_state(state.clone())
        .merge(static_files)
        .layer(axum::middleware::from_fn_with_state(
            state.ledger.storage.clone(),
            crate::storage::watch,
        ))
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

/// Longest path component a file name can be (`NAME_MAX` on Linux).
pub const MAX_PATH_COMPONENT_BYTES: usize = 255;

/// Lets a static-file request through only when it names something inside
/// `www/`: no dotfile component, no component over
/// [`MAX_PATH_COMPONENT_BYTES`], and nothing a symlink leads out of the
/// folder. Anything else is 404, as a missing file is.
async fn inside_www(
    axum::extract::State(root): axum::extract::State<Arc<PathBuf>>,
    request: Request,
    next: Next,
) -> Response {
    if serves_inside(&root, request.uri().path()) {
        next.run(request).await
    } else {
        StatusCode::NOT_FOUND.into_response()
    }
}

pub(crate) fn serves_inside(root: &Path, uri_path: &str) -> bool {
    let mut path = root.to_path_buf();
    for raw in uri_path.split('/').filter(|c| !c.is_empty()) {
        let component = percent_encoding::percent_decode_str(raw).collect::<Vec<u8>>();
        if component.len() > MAX_PATH_COMPONENT_BYTES
            || component.first() == Some(&b'.')
            || component.contains(&b'/')
            || component.contains(&b'\\')
            || component.contains(&0)
        {
            return false;
        }
        path.push(String::from_utf8_lossy(&component).as_ref());
    }
    // A name that does not exist is ServeDir's 404; one that does must
    // resolve inside the root, whatever symlinks it passes.
    match (path.canonicalize(), root.canonicalize()) {
        (Ok(target), Ok(root)) => target.starts_with(root),
        _ => true,
    }
}
