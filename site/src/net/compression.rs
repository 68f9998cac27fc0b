//! Compressed responses, each encoding with its own strong `ETag`.
//!
//! Every response the client accepts it for is compressed (`br`, else
//! `gzip`) by tower-http's [`CompressionLayer`]: the shell and its wasm
//! module, the site's view and the API. What is compressed already (an
//! image other than SVG, a response with its own `Content-Encoding`) and
//! bodies too small to gain are sent as they are, by the layer's own
//! predicate, which also adds `Vary: Accept-Encoding` to whatever it may
//! compress.
//!
//! Conditional requests are answered here, outside the compression, on the
//! representation the client would get: a response's content `ETag` (set
//! by the handler from the bytes it serves, `"<hash>"`) gets the suffix of
//! the encoding the layer chose (`"<hash>-br"`, `"<hash>-gzip"`; identity
//! keeps `"<hash>"`), and `304` is answered only when `If-None-Match` names
//! that very tag. So a client never holds one encoding's bytes under
//! another's tag, a cache never mixes encodings, and files rolled back to
//! older bytes (another hash) are never `304`. A handler sees no
//! `If-None-Match`.

use axum::extract::Request;
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tower_http::compression::{CompressionLayer, CompressionLevel};

/// The level of `br` and `gzip` alike. Responses are compressed as they
/// are sent, so it is a cost on every request: the 390 KB wasm module
/// takes milliseconds at 5 and most of a second at brotli's best (11),
/// which saves a few KB more; at 5 a release to hundreds of handhelds
/// costs seconds of CPU in all.
pub const COMPRESSION_LEVEL: i32 = 5;

/// The layer that compresses every response the client accepts it for:
/// `br` and `gzip`, the two this crate is built with, `br` on a tie.
pub fn layer() -> CompressionLayer {
    CompressionLayer::new().quality(CompressionLevel::Precise(COMPRESSION_LEVEL))
}

/// The middleware outside [`layer`]: holds the request's `If-None-Match`
/// back, lets the response be made and its encoding chosen, then names
/// that encoding in the response's `ETag` and answers `304` when the
/// client holds exactly that representation.
pub async fn encoded_etag(mut request: Request, next: Next) -> Response {
    let conditional = matches!(*request.method(), Method::GET | Method::HEAD);
    let held = request.headers_mut().remove(header::IF_NONE_MATCH);
    let mut response = next.run(request).await;
    let Some(content) = response.headers().get(header::ETAG) else {
        return response;
    };
    let etag = encoded(content, response.headers().get(header::CONTENT_ENCODING));
    response.headers_mut().insert(header::ETAG, etag.clone());
    let holds = held
        .as_ref()
        .and_then(|value| value.to_str().ok())
        .is_some_and(|list| names(list, &etag));
    if conditional && holds && response.status() == StatusCode::OK {
        return not_modified(response.headers(), etag);
    }
    response
}

/// `content`, a strong `"<hash>"`, with the suffix of `encoding` (none for
/// identity); any other tag as it is.
fn encoded(content: &HeaderValue, encoding: Option<&HeaderValue>) -> HeaderValue {
    let encoding = encoding
        .and_then(|value| value.to_str().ok())
        .filter(|encoding| *encoding != "identity");
    let hash = content
        .to_str()
        .ok()
        .and_then(|tag| tag.strip_prefix('"')?.strip_suffix('"'));
    match (hash, encoding) {
        (Some(hash), Some(encoding)) => HeaderValue::from_str(&format!("\"{hash}-{encoding}\""))
            .unwrap_or_else(|_| content.clone()),
        _ => content.clone(),
    }
}

/// `If-None-Match`'s `list` names `etag` (or is `*`); a weak tag is
/// compared by its opaque part, as the header's weak comparison says.
fn names(list: &str, etag: &HeaderValue) -> bool {
    let Ok(wanted) = etag.to_str() else {
        return false;
    };
    list.split(',')
        .map(str::trim)
        .any(|tag| tag == "*" || tag.strip_prefix("W/").unwrap_or(tag) == wanted)
}

/// `304` for a representation the client holds: its `ETag`, and the
/// caching headers a `200` would have carried.
fn not_modified(served: &HeaderMap, etag: HeaderValue) -> Response {
    let mut response = StatusCode::NOT_MODIFIED.into_response();
    let headers = response.headers_mut();
    headers.insert(header::ETAG, etag);
    for name in [header::CACHE_CONTROL, header::VARY] {
        for value in served.get_all(&name) {
            headers.append(&name, value.clone());
        }
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_encoding_has_its_own_tag_and_identity_keeps_the_content_tag() {
        let content = HeaderValue::from_static("\"abc\"");
        let with = |encoding: Option<&'static str>| {
            encoded(&content, encoding.map(HeaderValue::from_static).as_ref())
        };
        assert_eq!(with(None), "\"abc\"");
        assert_eq!(with(Some("identity")), "\"abc\"");
        assert_eq!(with(Some("br")), "\"abc-br\"");
        assert_eq!(with(Some("gzip")), "\"abc-gzip\"");
        let weak = HeaderValue::from_static("W/\"abc\"");
        assert_eq!(
            encoded(&weak, Some(&HeaderValue::from_static("br"))),
            weak,
            "only a strong tag is the content's"
        );
    }

    #[test]
    fn if_none_match_reads_lists_and_weak_tags_and_names_one_encoding() {
        let br = HeaderValue::from_static("\"abc-br\"");
        assert!(names("\"abc-br\"", &br));
        assert!(names("\"x\", W/\"abc-br\"", &br));
        assert!(names("*", &br));
        assert!(!names("\"abc\"", &br), "identity's tag is not br's");
        assert!(!names("\"abc-gzip\"", &br), "gzip's tag is not br's");
        assert!(!names("\"abd-br\"", &br));
    }
}
