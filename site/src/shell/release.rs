//! Releases of the PWA: the shell's build id, `GET /version.json`, the two
//! shell files served with the id written in (`sw.js`, `index.html`), and
//! strong content `ETag`s on every file served from `www/`.
//!
//! The build id hashes the bytes of every shell file as `www/` holds them
//! now, so it is whatever the site serves: a deploy (new files, a new
//! `--www`, a rollback to older files) changes it without a build step,
//! and any byte changed in any shell file changes it. `sw.js` is served
//! with the id in place of [`BUILD_MARKER`], so the browser's byte check
//! of the worker script sees a new worker whenever the shell changed, and
//! the worker knows its own build; `index.html` likewise, so a page knows
//! its own.
//!
//! Caching: every static file carries an `ETag` from its content (SHA-256)
//! and no `Last-Modified`; a request's `If-Modified-Since` is ignored, so
//! files rolled back to older ones (older dates) are never answered `304`.
//! The `ETag` is the content's; [`crate::net::compression`] adds the
//! response's encoding to it and answers `If-None-Match` (`304`) on that.
//! Everything from `www/` is `Cache-Control: no-cache` (revalidated on
//! each load); `/version.json` is `no-store`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex, OnceLock};
use std::time::SystemTime;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use sha2::{Digest, Sha256};

use crate::error::AppError;
use crate::state::AppState;

/// The shell's list, `www/shell.json`: the one list of the files the
/// service worker caches for offline use (it reads the same file), the
/// list itself among them.
const SHELL_LIST: &str = include_str!("../../../www/shell.json");

/// The shell: every file the service worker caches for offline use, under
/// `www/`, in `www/shell.json`'s order. Their bytes make the build id.
pub fn shell_files() -> &'static [String] {
    static FILES: LazyLock<Vec<String>> = LazyLock::new(|| {
        serde_json::from_str(SHELL_LIST).expect("www/shell.json is a JSON array of paths")
    });
    &FILES
}

/// What `sw.js` and `index.html` hold in place of the build id on disk.
pub const BUILD_MARKER: &str = "__STOCKHOP_BUILD__";

/// Hex digits of the SHA-256 kept as the build id: 64 bits, so two builds
/// of one site never share an id, short enough for the site's view and
/// the heartbeat's `app_version` (64 characters).
pub const BUILD_ID_HEX_CHARS: usize = 16;

/// Hex digits of the SHA-256 in a file's `ETag`: 128 bits.
pub const ETAG_HEX_CHARS: usize = 32;

/// Largest file the `ETag` layer reads and hashes per request: the shell
/// is under 1 MiB (the wasm's ceiling is 430 KiB); a larger file in `www/`
/// is served as it is, without an `ETag`.
pub const MAX_ETAG_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// The release routes, merged into the site router ahead of the static
/// files.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/version.json", get(version))
        .route("/sw.js", get(service_worker))
        .route("/", get(index))
        .route("/index.html", get(index))
}

/// `GET /version.json`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Version {
    /// The build id of the shell this site serves.
    pub build: String,
    /// The IndexedDB schema that build's worker writes.
    pub schema: u32,
}

async fn version(State(state): State<AppState>) -> Result<Response, AppError> {
    let build = served_build(&state.www_dir).await?;
    let mut response = Json(Version {
        build,
        schema: stockhop::release::SCHEMA_VERSION,
    })
    .into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}

async fn service_worker(State(state): State<AppState>) -> Response {
    with_build(&state.www_dir, "sw.js", "text/javascript").await
}

async fn index(State(state): State<AppState>) -> Response {
    with_build(&state.www_dir, "index.html", "text/html; charset=utf-8").await
}

/// `file` with the build id in place of the marker, as a static file is
/// served (ETag, `no-cache`); 404 when `www/` has no such file.
async fn with_build(root: &Path, file: &str, content_type: &'static str) -> Response {
    let path = root.join(file);
    if !crate::net::shell_path::serves_inside(root, file) {
        return StatusCode::NOT_FOUND.into_response();
    }
    let (text, build) = match (tokio::fs::read(&path).await, served_build(root).await) {
        (Ok(bytes), Ok(build)) => (bytes, build),
        (Err(err), _) if err.kind() == std::io::ErrorKind::NotFound => {
            return StatusCode::NOT_FOUND.into_response()
        }
        (Err(err), _) => return AppError::Internal(format!("{file}: {err}")).into_response(),
        (_, Err(err)) => return err.into_response(),
    };
    let served = String::from_utf8_lossy(&text).replace(BUILD_MARKER, &build);
    let bytes = served.into_bytes();
    let etag = etag_of(&bytes);
    let mut response = Response::new(Body::from(bytes));
    let out = response.headers_mut();
    out.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    out.insert(header::ETAG, etag);
    out.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// The build id of the shell `www` holds now.
pub async fn served_build(www: &Path) -> Result<String, AppError> {
    let www = www.to_path_buf();
    tokio::task::spawn_blocking(move || build_id(&www))
        .await
        .map_err(|err| AppError::Internal(err.to_string()))?
        .map_err(|err| AppError::Internal(format!("the shell's build id: {err}")))
}

/// A shell file's size and modification time, or its absence: when none
/// changed, the id is not computed again.
type Fingerprint = Vec<Option<(u64, SystemTime)>>;

/// The last id computed for each `www/` this process serves.
fn memo() -> &'static Mutex<HashMap<PathBuf, (Fingerprint, String)>> {
    static MEMO: OnceLock<Mutex<HashMap<PathBuf, (Fingerprint, String)>>> = OnceLock::new();
    MEMO.get_or_init(Mutex::default)
}

/// The build id of the shell in `www`: SHA-256 over each shell file's
/// name, length and bytes (or that it is absent), in [`shell_files`]'
/// order; the first [`BUILD_ID_HEX_CHARS`] hex digits. Blocking.
pub fn build_id(www: &Path) -> std::io::Result<String> {
    let fingerprint: Fingerprint = shell_files()
        .iter()
        .map(|file| {
            std::fs::metadata(www.join(file)).ok().map(|meta| {
                (
                    meta.len(),
                    meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                )
            })
        })
        .collect();
    if let Some((seen, id)) = memo().lock().expect("memo lock").get(www) {
        if *seen == fingerprint {
            return Ok(id.clone());
        }
    }
    let mut hash = Sha256::new();
    for file in shell_files() {
        hash.update(file.as_bytes());
        match std::fs::read(www.join(file)) {
            Ok(bytes) => {
                hash.update([1]);
                hash.update((bytes.len() as u64).to_le_bytes());
                hash.update(&bytes);
            }
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => hash.update([0]),
            Err(err) => return Err(err),
        }
    }
    let id = hex::encode(hash.finalize())[..BUILD_ID_HEX_CHARS].to_owned();
    memo()
        .lock()
        .expect("memo lock")
        .insert(www.to_path_buf(), (fingerprint, id.clone()));
    Ok(id)
}

/// A strong `ETag` for `bytes`.
pub fn etag_of(bytes: &[u8]) -> HeaderValue {
    let hex = hex::encode(Sha256::digest(bytes));
    HeaderValue::from_str(&format!("\"{}\"", &hex[..ETAG_HEX_CHARS]))
        .expect("hex is a valid header")
}

/// The layer over the static files: serves the very bytes it hashed, with
/// their `ETag` and without `Last-Modified` (a date says nothing of a
/// rollback), and keeps the file server's own conditions and ranges out
/// (`If-None-Match` is answered outside, on the encoded representation).
/// Only a file inside `www/` reaches it (`http::inside_www` runs first).
pub async fn content_etag(
    State(root): State<Arc<PathBuf>>,
    mut request: Request,
    next: Next,
) -> Response {
    if !matches!(*request.method(), Method::GET | Method::HEAD) {
        return next.run(request).await;
    }
    let Some(bytes) = read_static(&root, request.uri().path()).await else {
        return next.run(request).await;
    };
    let etag = etag_of(&bytes);
    let head = request.method() == Method::HEAD;
    for name in [
        header::IF_NONE_MATCH,
        header::IF_MODIFIED_SINCE,
        header::IF_MATCH,
        header::IF_UNMODIFIED_SINCE,
        header::IF_RANGE,
        header::RANGE,
    ] {
        request.headers_mut().remove(name);
    }
    let response = next.run(request).await;
    if response.status() != StatusCode::OK {
        return response;
    }
    let (mut parts, _) = response.into_parts();
    parts.headers.remove(header::LAST_MODIFIED);
    parts.headers.insert(header::ETAG, etag);
    parts
        .headers
        .insert(header::CONTENT_LENGTH, HeaderValue::from(bytes.len()));
    let body = if head {
        Body::empty()
    } else {
        Body::from(bytes)
    };
    Response::from_parts(parts, body)
}

/// The file a static request names, read whole (a directory's
/// `index.html`); `None` when there is none or it is over
/// [`MAX_ETAG_FILE_BYTES`].
async fn read_static(root: &Path, uri_path: &str) -> Option<Vec<u8>> {
    let mut path = root.to_path_buf();
    for raw in uri_path.split('/').filter(|c| !c.is_empty()) {
        let component = percent_encoding::percent_decode_str(raw)
            .decode_utf8()
            .ok()?;
        path.push(component.as_ref());
    }
    let mut meta = tokio::fs::metadata(&path).await.ok()?;
    if meta.is_dir() {
        path.push("index.html");
        meta = tokio::fs::metadata(&path).await.ok()?;
    }
    if !meta.is_file() || meta.len() > MAX_ETAG_FILE_BYTES {
        return None;
    }
    tokio::fs::read(&path).await.ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shell(dir: &Path) {
        for file in shell_files() {
            let path = dir.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, format!("{file} v1")).unwrap();
        }
    }

    #[test]
    fn any_byte_of_any_shell_file_changes_the_build_id() {
        let dir = tempfile::tempdir().unwrap();
        shell(dir.path());
        let first = build_id(dir.path()).unwrap();
        assert_eq!(first.len(), BUILD_ID_HEX_CHARS);
        assert!(first
            .chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        let mut seen = vec![first.clone()];
        for file in shell_files() {
            std::fs::write(dir.path().join(file), format!("{file} v2")).unwrap();
            let id = build_id(dir.path()).unwrap();
            assert!(!seen.contains(&id), "{file} changed the id");
            seen.push(id);
        }
        shell(dir.path());
        assert_eq!(
            build_id(dir.path()).unwrap(),
            first,
            "the same bytes, the same id"
        );
    }

    #[test]
    fn the_shell_list_names_the_page_the_worker_its_module_and_itself() {
        let files = shell_files();
        for needed in [
            "index.html",
            "app.js",
            "sw.js",
            "shell.json",
            "pkg/stockhop.js",
            "pkg/stockhop_bg.wasm",
        ] {
            assert!(files.iter().any(|file| file == needed), "{needed}");
        }
        let unique: std::collections::HashSet<_> = files.iter().collect();
        assert_eq!(unique.len(), files.len(), "each file once");
    }
}
