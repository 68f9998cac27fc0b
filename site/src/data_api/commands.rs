//! The commands `stockhop-site` runs on the server machine, as endpoints
//! for an admin's scripts: open and cancel a count, close a period, add,
//! list, commission, revoke and re-link devices, close a device's open
//! session. Each calls the library
//! function the command line calls.
//!
//! Every action that changes something logs one line once it has (the
//! ledger's functions log none of these), naming the admin, what was done
//! and its ids and figures, so the server's log answers who opened that
//! count or re-linked that device; a refused one logs nothing, its answer
//! says why. Reads (the device list) log nothing.

use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::Json;
use serde::{Deserialize, Serialize};
use stockhop::time::UnixMs;
use stockhop::wire::codes as wire_codes;

use crate::api::caller::AdminTokenCaller;
use crate::error::AppError;
use crate::ledger::devices::{self, Listed, Profile};
use crate::ledger::modes::cycle_count::{self, CountOpened};
use crate::ledger::session_close::{self, OpenSession};
use crate::ledger::{periods, wall_clock, LedgerError};
use crate::state::AppState;
use crate::view::enroll;

fn malformed(message: impl Into<String>) -> AppError {
    AppError::client(
        StatusCode::BAD_REQUEST,
        wire_codes::MALFORMED_REQUEST,
        message,
    )
}

/// A JSON body, or the reason it is not one as the API's error body: in
/// words that say what to send, with serde's own account of the field at
/// fault (axum's text leads with "Failed to deserialize the JSON body into
/// the target type").
fn body<T>(body: Result<Json<T>, JsonRejection>) -> Result<T, AppError> {
    body.map(|Json(value)| value).map_err(|rejection| {
        let cause = || {
            let mut cause: &dyn std::error::Error = &rejection;
            while let Some(inner) = cause.source() {
                cause = inner;
            }
            cause.to_string()
        };
        let message = match &rejection {
            JsonRejection::MissingJsonContentType(_) => {
                "send the body as JSON, with Content-Type: application/json".to_owned()
            }
            JsonRejection::JsonSyntaxError(_) => format!("the body is not JSON: {}", cause()),
            JsonRejection::JsonDataError(_) => format!("the body does not fit: {}", cause()),
            other => other.body_text(),
        };
        AppError::client(rejection.status(), wire_codes::MALFORMED_REQUEST, message)
    })
}

/// A count to open: a zone of a location, or one bin of it (`count open
/// --location L --zone Z [--bin B]`). A field the site does not know is
/// refused rather than left out, so a misspelt `bin` never opens a count
/// of the whole zone.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OpenCount {
    pub location: String,
    pub zone: String,
    /// Count only this bin of the zone (the rest of the zone is left
    /// alone); none: the whole zone.
    #[serde(default)]
    pub bin: Option<String>,
}

/// Opens a count of a zone, or of one bin of it, with the snapshot of the
/// units expected there; answers how many that is and, when none, the
/// warning `count open` prints (the count is open all the same).
#[utoipa::path(
    post,
    path = "/v1/admin/counts",
    tag = "admin",
    request_body = OpenCount,
    responses(
        (status = 201, description = "opened; `warning` set when the count expects nothing", body = CountOpened),
        (status = 401, description = "no admin token"),
        (status = 404, description = "no bins in the zone, or the bin is not in it (NOT_FOUND)"),
        (status = 409, description = "a count of the zone or bin is open already"),
        (status = 422, description = "a field missing, of the wrong type, or unknown")
    ),
    security(("admin_token" = []))
)]
pub async fn open_count(
    State(state): State<AppState>,
    AdminTokenCaller(admin): AdminTokenCaller,
    request: Result<Json<OpenCount>, JsonRejection>,
) -> Result<(StatusCode, Json<CountOpened>), AppError> {
    let OpenCount {
        location,
        zone,
        bin,
    } = body(request)?;
    let (opened, location, zone, bin) = state
        .db
        .call(move |conn| {
            cycle_count::open_told(conn, &location, &zone, bin.as_deref(), wall_clock())
                .map(|opened| (opened, location, zone, bin))
        })
        .await?;
    tracing::info!(
        count_id = %opened.count_id,
        %location,
        %zone,
        bin = bin.as_deref().unwrap_or("(whole zone)"),
        expected = opened.expected,
        %admin,
        "count opened through the admin API"
    );
    Ok((StatusCode::CREATED, Json(opened)))
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ClosePeriod {
    /// RFC 3339: the books close up to this instant.
    pub until: String,
}

/// Closes the books up to an instant: later hops captured before it are
/// booked at it.
#[utoipa::path(
    post,
    path = "/v1/admin/periods/close",
    tag = "admin",
    request_body = ClosePeriod,
    responses(
        (status = 204, description = "closed"),
        (status = 400, description = "until is not RFC 3339"),
        (status = 401, description = "no admin token"),
        (status = 409, description = "the books are closed to that instant or a later one already (PERIOD_NOT_LATER), or it is after the site's clock (PERIOD_NOT_ENDED)"),
        (status = 422, description = "until missing, or a field the request does not have")
    ),
    security(("admin_token" = []))
)]
pub async fn close_period(
    State(state): State<AppState>,
    AdminTokenCaller(admin): AdminTokenCaller,
    request: Result<Json<ClosePeriod>, JsonRejection>,
) -> Result<StatusCode, AppError> {
    let ClosePeriod { until } = body(request)?;
    let until = UnixMs::parse_rfc3339(&until).map_err(|err| {
        malformed(format!(
            "until is not an RFC 3339 instant, a date, a T, a time and an offset like \
                 2026-12-01T00:00:00Z or 2026-12-01T00:00:00+01:00 ({err})"
        ))
    })?;
    state
        .db
        .call(move |conn| periods::close(conn, until, wall_clock()))
        .await?;
    tracing::info!(%until, %admin, "period closed through the admin API");
    Ok(StatusCode::NO_CONTENT)
}

/// A device to add (`commissioned` false when not given; a misspelt field
/// is refused, so it never leaves a device in training unnoticed).
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewDevice {
    pub device_id: String,
    /// fxr90, mc3390xr, rfd40 or zt411r.
    pub profile: String,
    #[serde(default)]
    pub commissioned: bool,
}

/// A device's token and setup link (shown once: the site keeps only the
/// token's hash).
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct DeviceLink {
    pub device_id: String,
    pub token: String,
    pub setup_link: String,
}

/// The address setup links point at: the one `serve` recorded, else where
/// the request came in.
fn link_site(
    conn: &crate::store::sql::Connection,
    host: Option<String>,
) -> crate::store::sql::Result<String> {
    Ok(enroll::remembered_site_url(conn)?
        .or(host)
        .unwrap_or_else(|| enroll::site_url(None, 443)))
}

fn request_host(headers: &HeaderMap) -> Option<String> {
    headers
        .get(header::HOST)
        .and_then(|value| value.to_str().ok())
        .map(|host| format!("http://{host}"))
}

/// Adds a device; answers its token and setup link.
#[utoipa::path(
    post,
    path = "/v1/admin/devices",
    tag = "admin",
    request_body = NewDevice,
    responses(
        (status = 201, description = "added", body = DeviceLink),
        (status = 400, description = "a bad id or profile"),
        (status = 401, description = "no admin token"),
        (status = 409, description = "the id is taken"),
        (status = 422, description = "a field missing, of the wrong type, or unknown")
    ),
    security(("admin_token" = []))
)]
pub async fn add_device(
    State(state): State<AppState>,
    headers: HeaderMap,
    AdminTokenCaller(admin): AdminTokenCaller,
    request: Result<Json<NewDevice>, JsonRejection>,
) -> Result<(StatusCode, Json<DeviceLink>), AppError> {
    let new = body(request)?;
    let profile = Profile::parse(&new.profile)
        .ok_or_else(|| malformed("profile is one of fxr90, mc3390xr, rfd40, zt411r"))?;
    let host = request_host(&headers);
    let device_id = new.device_id.clone();
    let (token, site) = state
        .db
        .call(move |conn| -> Result<_, AppError> {
            let token = devices::add(conn, &device_id, profile, new.commissioned, wall_clock())?;
            Ok((token, link_site(conn, host)?))
        })
        .await?;
    tracing::info!(
        device_id = %new.device_id,
        profile = %new.profile,
        commissioned = new.commissioned,
        %admin,
        "device added through the admin API"
    );
    Ok((
        StatusCode::CREATED,
        Json(DeviceLink {
            setup_link: enroll::setup_link(&site, &new.device_id, &token),
            device_id: new.device_id,
            token,
        }),
    ))
}

/// Every device, revoked ones too.
#[utoipa::path(
    get,
    path = "/v1/admin/devices",
    tag = "admin",
    responses(
        (status = 200, description = "the devices, by id", body = Vec<Listed>),
        (status = 401, description = "no admin token")
    ),
    security(("admin_token" = []))
)]
pub async fn list_devices(
    State(state): State<AppState>,
    AdminTokenCaller(_): AdminTokenCaller,
) -> Result<Json<Vec<Listed>>, AppError> {
    Ok(Json(
        state
            .db
            .call(|conn| -> Result<_, AppError> { Ok(devices::list(conn)?) })
            .await?,
    ))
}

/// Commissions a device: its items post for real from now on.
#[utoipa::path(
    post,
    path = "/v1/admin/devices/{device_id}/commission",
    tag = "admin",
    params(("device_id" = String, Path)),
    responses(
        (status = 204, description = "commissioned"),
        (status = 401, description = "no admin token"),
        (status = 404, description = "no such device")
    ),
    security(("admin_token" = []))
)]
pub async fn commission_device(
    State(state): State<AppState>,
    Path(device_id): Path<String>,
    AdminTokenCaller(admin): AdminTokenCaller,
) -> Result<StatusCode, AppError> {
    let id = device_id.clone();
    state
        .db
        .call(move |conn| devices::commission(conn, &id))
        .await?;
    tracing::info!(%device_id, %admin, "device commissioned through the admin API");
    Ok(StatusCode::NO_CONTENT)
}

/// Revokes a device: its token stops working at once.
#[utoipa::path(
    post,
    path = "/v1/admin/devices/{device_id}/revoke",
    tag = "admin",
    params(("device_id" = String, Path)),
    responses(
        (status = 204, description = "revoked"),
        (status = 401, description = "no admin token"),
        (status = 404, description = "no such device, or revoked already")
    ),
    security(("admin_token" = []))
)]
pub async fn revoke_device(
    State(state): State<AppState>,
    Path(device_id): Path<String>,
    AdminTokenCaller(admin): AdminTokenCaller,
) -> Result<StatusCode, AppError> {
    let id = device_id.clone();
    state
        .db
        .call(move |conn| -> Result<_, LedgerError> { devices::revoke(conn, &id, wall_clock()) })
        .await?;
    tracing::info!(%device_id, %admin, "device revoked through the admin API");
    Ok(StatusCode::NO_CONTENT)
}

/// Gives a device a new token and setup link; the old ones stop working.
#[utoipa::path(
    post,
    path = "/v1/admin/devices/{device_id}/link",
    tag = "admin",
    params(("device_id" = String, Path)),
    responses(
        (status = 200, description = "the new link", body = DeviceLink),
        (status = 401, description = "no admin token"),
        (status = 404, description = "no such device, or revoked")
    ),
    security(("admin_token" = []))
)]
pub async fn link_device(
    State(state): State<AppState>,
    Path(device_id): Path<String>,
    headers: HeaderMap,
    AdminTokenCaller(admin): AdminTokenCaller,
) -> Result<Json<DeviceLink>, AppError> {
    let host = request_host(&headers);
    let id = device_id.clone();
    let (token, site) = state
        .db
        .call(move |conn| -> Result<_, AppError> {
            let token = devices::relink(conn, &id)?;
            Ok((token, link_site(conn, host)?))
        })
        .await?;
    // The token is never logged: the log would be a way in.
    tracing::info!(%device_id, %admin, "device given a new token and setup link through the admin API; its old token stops working");
    Ok(Json(DeviceLink {
        setup_link: enroll::setup_link(&site, &device_id, &token),
        device_id,
        token,
    }))
}

/// Closes the session a device has open (a handheld that lost its storage
/// cannot send `close_session`): its operator, or the device set up
/// again, can open one again.
#[utoipa::path(
    post,
    path = "/v1/admin/devices/{device_id}/close-session",
    tag = "admin",
    params(("device_id" = String, Path)),
    responses(
        (status = 200, description = "the session closed", body = OpenSession),
        (status = 401, description = "no admin token"),
        (status = 404, description = "no such device"),
        (status = 409, description = "the device has no session open (NO_OPEN_SESSION)")
    ),
    security(("admin_token" = []))
)]
pub async fn close_device_session(
    State(state): State<AppState>,
    Path(device_id): Path<String>,
    AdminTokenCaller(admin): AdminTokenCaller,
) -> Result<Json<OpenSession>, AppError> {
    let id = device_id.clone();
    let closed = state
        .db
        .call(move |conn| session_close::close_for_device(conn, &id, wall_clock()))
        .await?;
    tracing::info!(%device_id, session_id = %closed.session_id, %admin, "device's session closed through the admin API");
    Ok(Json(closed))
}

/// Cancels a count: nothing it counted posts.
#[utoipa::path(
    post,
    path = "/v1/admin/counts/{count_id}/cancel",
    tag = "admin",
    params(("count_id" = String, Path)),
    responses(
        (status = 204, description = "cancelled"),
        (status = 401, description = "no admin token"),
        (status = 404, description = "no such count"),
        (status = 409, description = "the count is approved: its adjustments are posted")
    ),
    security(("admin_token" = []))
)]
pub async fn cancel_count(
    State(state): State<AppState>,
    Path(count_id): Path<String>,
    AdminTokenCaller(admin): AdminTokenCaller,
) -> Result<StatusCode, AppError> {
    let id = count_id.clone();
    state
        .db
        .call(move |conn| cycle_count::cancel(conn, &id, wall_clock()))
        .await?;
    tracing::info!(%count_id, %admin, "count cancelled through the admin API");
    Ok(StatusCode::NO_CONTENT)
}
