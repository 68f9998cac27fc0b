//! Data in and out for the systems around a site (a WMS, an ERP) and its
//! administrators' scripts: reference data put as CSV or JSON
//! ([`reference`]), the commands the command line runs ([`commands`]),
//! the hop feed ([`hops`]) and the OpenAPI document of every `/v1`
//! endpoint ([`openapi`]).
//!
//! Every endpoint here takes an admin's bearer token (`stockhop-site admin
//! add`), as scripts use the site's view; a device's token is refused.
//! The work is the same library functions the command line calls.

pub mod commands;
pub mod hops;
pub mod openapi;
pub mod reference;

use axum::http::{header, HeaderMap, StatusCode};
use axum::routing::{get, post, put};
use axum::Router;

use crate::error::AppError;
use crate::ledger::{auth, devices};
use crate::state::AppState;
use crate::view::{admin, codes};

/// The routes, merged into the site router.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/admin/reference/{kind}", put(reference::put_reference))
        .route("/v1/admin/counts", post(commands::open_count))
        .route(
            "/v1/admin/counts/{count_id}/cancel",
            post(commands::cancel_count),
        )
        .route("/v1/admin/periods/close", post(commands::close_period))
        .route(
            "/v1/admin/devices",
            get(commands::list_devices).post(commands::add_device),
        )
        .route(
            "/v1/admin/devices/{device_id}/commission",
            post(commands::commission_device),
        )
        .route(
            "/v1/admin/devices/{device_id}/revoke",
            post(commands::revoke_device),
        )
        .route(
            "/v1/admin/devices/{device_id}/link",
            post(commands::link_device),
        )
        .route("/v1/hops", get(hops::feed))
        .route("/v1/hops.csv", get(hops::csv))
        .route("/v1/openapi.json", get(openapi::document))
}

/// The admin whose bearer token the request carries. No token or an
/// unknown one is 401, a device's token 403.
pub async fn admin_bearer(state: &AppState, headers: &HeaderMap) -> Result<String, AppError> {
    let token = auth::bearer(
        headers
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok()),
    )
    .map(str::to_owned)
    .ok_or_else(|| {
        AppError::client(
            StatusCode::UNAUTHORIZED,
            codes::ADMIN_REQUIRED,
            "an admin's bearer token is required",
        )
    })?;
    state
        .db
        .call(move |conn| -> Result<String, AppError> {
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
