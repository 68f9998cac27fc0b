//! What the view's handlers share to read a request: a JSON body within
//! its limit, and the listener queue's errors as answers.

use axum::body::{Body, Bytes};
use axum::http::{header, HeaderMap, StatusCode};
use stockhop::wire::codes as wire_codes;

use crate::error::AppError;
use crate::listener::queue::QueueError;

/// Largest body a view request may carry: a sign-in or a device to add.
pub const MAX_VIEW_BODY_BYTES: usize = 16 * 1024;

pub(crate) fn from_queue(err: QueueError) -> AppError {
    match err {
        QueueError::Sqlite(err) => AppError::from(err),
        QueueError::Db(err) => AppError::from(err),
        other => AppError::Internal(other.to_string()),
    }
}

/// A JSON body of at most [`MAX_VIEW_BODY_BYTES`], sent as JSON (a form
/// post from another site cannot be).
pub(crate) async fn json_body<T: serde::de::DeserializeOwned>(
    headers: &HeaderMap,
    body: Body,
) -> Result<T, AppError> {
    let is_json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .is_some_and(|value| value.trim().eq_ignore_ascii_case("application/json"));
    if !is_json {
        return Err(AppError::client(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            wire_codes::MALFORMED_REQUEST,
            "send the body as application/json",
        ));
    }
    let too_large = || {
        AppError::client(
            StatusCode::PAYLOAD_TOO_LARGE,
            wire_codes::BODY_TOO_LARGE,
            format!("view requests are limited to {MAX_VIEW_BODY_BYTES} bytes"),
        )
    };
    if crate::net::body::declared_over(headers, MAX_VIEW_BODY_BYTES) {
        return Err(too_large());
    }
    let bytes: Bytes = axum::body::to_bytes(body, MAX_VIEW_BODY_BYTES)
        .await
        .map_err(|_| too_large())?;
    serde_json::from_slice(&bytes).map_err(|err| {
        AppError::client(
            StatusCode::BAD_REQUEST,
            wire_codes::MALFORMED_REQUEST,
            err.to_string(),
        )
    })
}
