//! The dashboard's files, compiled into the binary so the view does not
//! depend on `--www` (which is the handhelds' PWA).

use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};

pub const INDEX_HTML: &str = include_str!("index.html");
pub const DASHBOARD_JS: &str = include_str!("dashboard.js");
pub const DASHBOARD_CSS: &str = include_str!("dashboard.css");

/// A file of the page, revalidated on every load (a new binary, a new page).
pub fn file(content_type: &'static str, body: &'static str) -> Response {
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'",
        ),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}
