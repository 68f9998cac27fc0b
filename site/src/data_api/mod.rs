//! Data in and out for the systems around a site (a WMS, an ERP) and its
//! administrators' scripts: reference data put as CSV or JSON
//! ([`reference`]), the commands the command line runs ([`commands`]),
//! a handheld's rescue file ([`rescue`]), the hop feed ([`hops`]) and the OpenAPI document of every `/v1`
//! endpoint ([`openapi`]).
//!
//! Every endpoint here takes an admin's bearer token (`stockhop-site admin
//! add`), as scripts use the site's view; a device's token is refused.
//! The work is the same library functions the command line calls.

pub mod attendance;
pub mod commands;
pub mod hops;
pub mod openapi;
pub mod reference;
pub mod rescue;

use axum::routing::{get, post, put};
use axum::Router;

use crate::state::AppState;

/// The routes, merged into the site router.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/admin/reference/{kind}", put(reference::put_reference))
        .route("/v1/admin/imports", get(reference::imports_underway))
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
            "/v1/admin/devices/{device_id}/close-session",
            post(commands::close_device_session),
        )
        .route(
            "/v1/admin/devices/{device_id}/link",
            post(commands::link_device),
        )
        .route("/v1/admin/rescue", post(rescue::import))
        .route("/v1/hops", get(hops::feed))
        .route("/v1/hops.csv", get(hops::csv))
        .route(
            "/v1/site/terminals/{serial}/records",
            get(attendance::records),
        )
        .route("/v1/site/attendance.csv", get(attendance::csv))
        .route("/v1/openapi.json", get(openapi::document))
}
