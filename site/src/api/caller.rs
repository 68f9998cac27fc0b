//! Who is calling: the credential checks every handler shares, as axum
//! extractors. A handler names the caller it needs among its arguments
//! ([`AdminCaller`], [`ChangingAdminCaller`], [`DeviceCaller`]) and runs
//! only for that caller; a request without one is answered here with the
//! status and JSON error body the whole site gives for it.
//!
//! The checks read only the database, which the extractors take from the
//! router's state through `FromRef`.

use axum::extract::{FromRef, FromRequestParts};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, StatusCode};
use cookie::Cookie;
use stockhop::wire::codes as wire_codes;

use crate::error::AppError;
use crate::ledger::devices::{self, Device};
use crate::ledger::{auth, wall_clock};
use crate::store::db::Db;
use crate::view::{admin, codes};

/// The token in the request's `Authorization: Bearer` header, if any.
pub fn bearer_of(headers: &HeaderMap) -> Option<&str> {
    auth::bearer(
        headers
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok()),
    )
}

// --- Devices -----------------------------------------------------------------

/// The device whose bearer token the request carries; 401 without one or
/// for a token no device holds.
pub struct DeviceCaller(pub Device);

impl<S> FromRequestParts<S> for DeviceCaller
where
    Db: FromRef<S>,
    S: Send + Sync,
{
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        device_of(&Db::from_ref(state), &parts.headers)
            .await
            .map(DeviceCaller)
    }
}

/// The bearer token the request carries, or 401.
pub fn device_token(headers: &HeaderMap) -> Result<&str, AppError> {
    bearer_of(headers).ok_or_else(|| {
        AppError::client(
            StatusCode::UNAUTHORIZED,
            wire_codes::UNAUTHORIZED,
            "a device bearer token is required",
        )
    })
}

/// The device whose bearer token the request carries, or 401.
pub async fn device_of(db: &Db, headers: &HeaderMap) -> Result<Device, AppError> {
    let token = device_token(headers)?.to_owned();
    db.lookup(move |conn| -> Result<_, AppError> { Ok(devices::authenticate(conn, &token)?) })
        .await?
        .ok_or_else(unknown_device_token)
}

/// The 401 for a bearer token no device holds (or no longer holds).
pub fn unknown_device_token() -> AppError {
    AppError::client(
        StatusCode::UNAUTHORIZED,
        wire_codes::UNAUTHORIZED,
        "unknown device token",
    )
}

// --- Admins ------------------------------------------------------------------

/// An admin, and how they proved it.
pub enum Caller {
    /// An admin token in `Authorization: Bearer` (scripts, Prometheus):
    /// never sent by a browser on its own, so no CSRF token is needed.
    Token { admin: String },
    /// The dashboard's session cookie.
    Session {
        cookie: String,
        session: admin::Session,
    },
}

impl Caller {
    pub fn admin(&self) -> &str {
        match self {
            Caller::Token { admin } => admin,
            Caller::Session { session, .. } => &session.admin,
        }
    }
}

/// The admin behind a request that reads: its bearer token or its session
/// cookie. 401 without either or for one that opens nothing; 403 for a
/// device's token, which never opens the view.
pub struct AdminCaller(pub Caller);

impl<S> FromRequestParts<S> for AdminCaller
where
    Db: FromRef<S>,
    S: Send + Sync,
{
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        admin_caller(&Db::from_ref(state), &parts.headers)
            .await
            .map(AdminCaller)
    }
}

/// [`AdminCaller`] for a request that changes something: a session must
/// also echo its CSRF token in [`admin::CSRF_HEADER`] (403 if not).
pub struct ChangingAdminCaller(pub Caller);

impl<S> FromRequestParts<S> for ChangingAdminCaller
where
    Db: FromRef<S>,
    S: Send + Sync,
{
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        changing_admin_caller(&Db::from_ref(state), &parts.headers)
            .await
            .map(ChangingAdminCaller)
    }
}

fn session_cookie(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(Cookie::split_parse)
        .filter_map(Result::ok)
        .find(|cookie| cookie.name() == admin::SESSION_COOKIE)
        .map(|cookie| cookie.value().to_owned())
}

fn admin_required(message: &str) -> AppError {
    AppError::client(StatusCode::UNAUTHORIZED, codes::ADMIN_REQUIRED, message)
}

/// The admin behind the request, as [`AdminCaller`] finds them.
pub async fn admin_caller(db: &Db, headers: &HeaderMap) -> Result<Caller, AppError> {
    let bearer = bearer_of(headers).map(str::to_owned);
    let cookie = session_cookie(headers);
    let now = wall_clock();
    db.lookup(move |conn| -> Result<Caller, AppError> {
        if let Some(token) = bearer {
            if let Some(admin) = admin::authenticate(conn, &token)? {
                return Ok(Caller::Token { admin });
            }
            if devices::authenticate(conn, &token)?.is_some() {
                return Err(AppError::client(
                    StatusCode::FORBIDDEN,
                    codes::ADMIN_REQUIRED,
                    "a device token does not open the site's view",
                ));
            }
            return Err(admin_required("unknown admin token"));
        }
        if let Some(cookie) = cookie {
            if let Some(session) = admin::session(conn, &cookie, now)? {
                return Ok(Caller::Session { cookie, session });
            }
            return Err(admin_required("the session has ended: sign in again"));
        }
        Err(admin_required(
            "an admin token or a signed-in session is required",
        ))
    })
    .await
}

/// The admin behind a changing request, as [`ChangingAdminCaller`] finds
/// them.
pub async fn changing_admin_caller(db: &Db, headers: &HeaderMap) -> Result<Caller, AppError> {
    let caller = admin_caller(db, headers).await?;
    if let Caller::Session { session, .. } = &caller {
        let presented = headers
            .get(admin::CSRF_HEADER)
            .and_then(|value| value.to_str().ok());
        if !admin::csrf_matches(session, presented) {
            return Err(AppError::client(
                StatusCode::FORBIDDEN,
                codes::CSRF_REJECTED,
                format!(
                    "a signed-in change needs the session's {} header",
                    admin::CSRF_HEADER
                ),
            ));
        }
    }
    Ok(caller)
}

/// The admin whose bearer token the request carries, for the admin API
/// that scripts call (no session there). No token or an unknown one is
/// 401, a device's token 403.
pub struct AdminTokenCaller(pub String);

impl<S> FromRequestParts<S> for AdminTokenCaller
where
    Db: FromRef<S>,
    S: Send + Sync,
{
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        admin_token_caller(&Db::from_ref(state), &parts.headers)
            .await
            .map(AdminTokenCaller)
    }
}

/// The admin whose bearer token the request carries. No token or an
/// unknown one is 401, a device's token 403.
pub async fn admin_token_caller(db: &Db, headers: &HeaderMap) -> Result<String, AppError> {
    let token = bearer_of(headers).map(str::to_owned).ok_or_else(|| {
        AppError::client(
            StatusCode::UNAUTHORIZED,
            codes::ADMIN_REQUIRED,
            "an admin's bearer token is required",
        )
    })?;
    db.lookup(move |conn| -> Result<String, AppError> {
        if let Some(name) = admin::authenticate(conn, &token)? {
            return Ok(name);
        }
        if devices::authenticate(conn, &token)?.is_some() {
            return Err(AppError::client(
                StatusCode::FORBIDDEN,
                codes::ADMIN_REQUIRED,
                "a device's token does not open the admin API",
            ));
        }
        Err(AppError::client(
            StatusCode::UNAUTHORIZED,
            codes::ADMIN_REQUIRED,
            "unknown admin token",
        ))
    })
    .await
}
