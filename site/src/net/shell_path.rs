//! Which request paths name a file inside `www/`: a path with a dotfile
//! component, a component longer than a file name can be, or one that
//! resolves (through a symlink) outside the folder is 404.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// Longest path component a file name can be (`NAME_MAX` on Linux).
pub const MAX_PATH_COMPONENT_BYTES: usize = 255;

/// Lets a static-file request through only when it names something inside
/// `www/`: no dotfile component, no component over
/// [`MAX_PATH_COMPONENT_BYTES`], and nothing a symlink leads out of the
/// folder. Anything else is 404, as a missing file is.
pub(crate) async fn inside_www(
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
