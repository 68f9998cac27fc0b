//! The one error type HTTP handlers return. Client errors carry their own
//! code and message; internal failures are logged here and reach the client
//! only as a code, never with their details. [`ApiQuery`] reads a query
//! string so that a bad one is answered as such an error too, and
//! [`method_not_allowed`] answers a method a path does not take so.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{header, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Json;
use stockhop::wire::{codes, ErrorBody};

use crate::store::db::DbError;

/// How long a client is told to wait after an overload answer.
pub const RETRY_AFTER_SECS: u32 = 2;
/// What a handheld or terminal is told to wait before it retries a write
/// refused because the site is out of storage.
pub const STORAGE_FULL_RETRY_AFTER_SECS: u64 = 30;
/// The error code of a write refused for lack of space.
pub const STORAGE_FULL: &str = "STORAGE_FULL";

/// The error code of a request whose method its path does not take (405).
pub const METHOD_NOT_ALLOWED: &str = "METHOD_NOT_ALLOWED";

/// The answer to a method a routed path does not take (`GET` of an
/// endpoint that is `PUT` only, `DELETE /v1/sync`): 405 in the API's error
/// body rather than an empty one. The router adds the `Allow` header with
/// the methods the path takes; the message points at it.
pub async fn method_not_allowed(method: Method, uri: Uri) -> AppError {
    AppError::client(
        StatusCode::METHOD_NOT_ALLOWED,
        METHOD_NOT_ALLOWED,
        format!(
            "{} does not take {method}: the Allow header lists the methods it takes",
            uri.path()
        ),
    )
}

/// A query string read into `T`, like axum's `Query`, except that a value
/// that does not parse (`?hours=abc`, a repeated parameter) is answered
/// `400 MALFORMED_REQUEST` in the JSON error body, naming the parameter,
/// rather than in plain text: every `/v1` handler reads its query with it.
#[derive(Debug, Clone, Copy, Default)]
pub struct ApiQuery<T>(pub T);

impl<T, S> FromRequestParts<S> for ApiQuery<T>
where
    T: serde::de::DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, AppError> {
        let query = parts.uri.query().unwrap_or_default();
        let params = serde_urlencoded::Deserializer::new(form_urlencoded::parse(query.as_bytes()));
        serde_path_to_error::deserialize(params)
            .map(ApiQuery)
            .map_err(|err| {
                let message = match err.path().to_string().as_str() {
                    "." => format!("query string: {}", err.inner()),
                    name => format!("query parameter {name}: {}", err.inner()),
                };
                AppError::client(StatusCode::BAD_REQUEST, codes::MALFORMED_REQUEST, message)
            })
    }
}

/// Marks a response the database refused for lack of space
/// (`AppError` sets it), so the storage watch hears of it.
#[derive(Debug, Clone, Copy)]
pub struct DatabaseFull;

#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// The client's fault: answered as given, not logged as a failure.
    #[error("{code}: {message}")]
    Client {
        status: StatusCode,
        code: &'static str,
        message: String,
    },
    /// The server is busy (SQLite lock timeout, queue full): 503 with Retry-After.
    #[error("overloaded: {0}")]
    Overloaded(String),
    /// Not now, the client's request is fine: `status` (429, 503) with
    /// `Retry-After`, not logged as a failure.
    #[error("{code}: {message}")]
    Later {
        status: StatusCode,
        code: &'static str,
        message: String,
        retry_after_secs: u64,
    },
    /// The database refused a write for lack of space: 503
    /// `STORAGE_FULL` with Retry-After (see [`AppError::storage_full`]).
    #[error("storage full: {0}")]
    StorageFull(String),
    /// Anything else: logged, answered 500 without details.
    #[error("internal: {0}")]
    Internal(String),
}

impl AppError {
    /// The answer to a write refused because the site is out of storage:
    /// 503 `STORAGE_FULL` with Retry-After.
    pub fn storage_full() -> AppError {
        AppError::Later {
            status: StatusCode::SERVICE_UNAVAILABLE,
            code: STORAGE_FULL,
            message: "the site is out of storage: keep the items and send them again later".into(),
            retry_after_secs: STORAGE_FULL_RETRY_AFTER_SECS,
        }
    }

    pub fn client(status: StatusCode, code: &'static str, message: impl Into<String>) -> AppError {
        AppError::Client {
            status,
            code,
            message: message.into(),
        }
    }
}

impl From<DbError> for AppError {
    fn from(err: DbError) -> AppError {
        match &err {
            err if err.is_busy() => AppError::Overloaded(err.to_string()),
            err if err.is_storage_full() => AppError::StorageFull(err.to_string()),
            _ => AppError::Internal(err.to_string()),
        }
    }
}

impl From<rusqlite::Error> for AppError {
    fn from(err: rusqlite::Error) -> AppError {
        AppError::from(DbError::Sqlite(err))
    }
}

impl From<crate::store::sql::Error> for AppError {
    fn from(err: crate::store::sql::Error) -> AppError {
        AppError::from(DbError::Sql(err))
    }
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        let (status, code, message) = match self {
            AppError::Client {
                status,
                code,
                message,
            } => (status, code, message),
            AppError::Overloaded(detail) => {
                tracing::warn!(%detail, "overloaded");
                let body = ErrorBody {
                    code: codes::OVERLOADED.into(),
                    message: "the site is busy; retry shortly".into(),
                };
                let mut response = (StatusCode::SERVICE_UNAVAILABLE, Json(body)).into_response();
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECS));
                return response;
            }
            AppError::Later {
                status,
                code,
                message,
                retry_after_secs,
            } => {
                let body = ErrorBody {
                    code: code.into(),
                    message,
                };
                let mut response = (status, Json(body)).into_response();
                response.headers_mut().insert(
                    header::RETRY_AFTER,
                    HeaderValue::from(retry_after_secs.max(1)),
                );
                return response;
            }
            AppError::StorageFull(detail) => {
                crate::warn_sampled!(%detail, "the database is out of space");
                let mut response = AppError::storage_full().into_response();
                response.extensions_mut().insert(DatabaseFull);
                return response;
            }
            AppError::Internal(detail) => {
                tracing::error!(%detail, "internal error");
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "INTERNAL",
                    "internal error".to_owned(),
                )
            }
        };
        let body = ErrorBody {
            code: code.into(),
            message,
        };
        (status, Json(body)).into_response()
    }
}
