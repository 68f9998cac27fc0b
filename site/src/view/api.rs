//! The view's HTTP handlers: who is asking (an admin token, or a session
//! cookie with its CSRF token on every state-changing request), limits and
//! JSON at the edge; the work runs on the database's blocking thread.

use axum::extract::{Path, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Extension, Json, Router};
use cookie::{Cookie, SameSite};
use stockhop::time::UnixMs;
use stockhop::wire::codes as wire_codes;

use super::request::{from_queue, json_body};
use super::{admin, builds, chart, codes, enroll, history, metrics, page, status, workbench};
use crate::api::caller::{admin_caller, bearer_of, AdminCaller, Caller, ChangingAdminCaller};
use crate::error::{ApiQuery, AppError};
use crate::ledger::devices::{self, Profile};
use crate::ledger::session_close::{self, OpenSession};
use crate::ledger::{wall_clock, LedgerError};
use crate::state::AppState;

/// A locale's catalogue of the view's words; 404 for a locale it does
/// not speak.
async fn catalogue(Path(locale): Path<String>) -> Response {
    match page::catalogue(&locale) {
        Some(text) => page::file("text/plain; charset=utf-8", text),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

/// Marks requests that came in over TLS (the site router on `--https`
/// carries it as an extension), so the session cookie is `Secure` there.
#[derive(Clone, Copy, Debug)]
pub struct OverTls;

/// The view's routes, merged into the site router.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/site", get(|| async { Redirect::permanent("/site/") }))
        .route(
            "/site/",
            get(|headers: HeaderMap| async move { page::index(&headers) }),
        )
        .route(
            "/site/l10n.js",
            get(|| async { page::file("text/javascript; charset=utf-8", page::L10N_JS) }),
        )
        .route(
            "/site/vendor/fluent-bundle.js",
            get(|| async { page::file("text/javascript; charset=utf-8", page::FLUENT_BUNDLE_JS) }),
        )
        .route("/site/locales/{locale}/view.ftl", get(catalogue))
        .route(
            "/site/dashboard.js",
            get(|| async { page::file("text/javascript; charset=utf-8", page::DASHBOARD_JS) }),
        )
        .route(
            "/site/dashboard.css",
            get(|| async { page::file("text/css; charset=utf-8", page::DASHBOARD_CSS) }),
        )
        .route("/v1/site/login", post(login))
        .route("/v1/site/logout", post(logout))
        .route("/v1/site/session", get(session))
        .route("/v1/site/status", get(site_status))
        .route("/v1/site/builds", get(site_builds))
        .route("/v1/site/series", get(series))
        .route("/v1/site/chart.svg", get(chart_svg))
        .route("/v1/site/devices", post(add_device))
        .route("/v1/site/devices/{device_id}/revoke", post(revoke_device))
        .route(
            "/v1/site/devices/{device_id}/close-session",
            post(close_device_session),
        )
        .route(
            "/v1/site/devices/{device_id}/commission",
            post(commission_device),
        )
        .route("/v1/site/counts/{count_id}/approve", post(approve_count))
        .route("/v1/site/grns/{grn_id}/resolve", post(resolve_grn))
        .route("/metrics", get(prometheus))
        .merge(super::workbench_api::routes())
        .merge(super::terminals::routes())
}

fn client(status: StatusCode, code: &'static str, message: impl Into<String>) -> AppError {
    AppError::client(status, code, message)
}

#[derive(serde::Deserialize, utoipa::ToSchema)]
struct Login {
    token: String,
}

#[derive(serde::Serialize, utoipa::ToSchema)]
struct SessionView {
    admin: String,
    /// Echo it in `x-csrf-token` on every POST; null for a bearer token,
    /// which needs none.
    csrf_token: Option<String>,
}

fn set_cookie(response: &mut Response, cookie: Cookie<'_>) -> Result<(), AppError> {
    let value = HeaderValue::from_str(&cookie.to_string())
        .map_err(|err| AppError::Internal(err.to_string()))?;
    response.headers_mut().append(header::SET_COOKIE, value);
    Ok(())
}

#[utoipa::path(
    post,
    path = "/v1/site/login",
    tag = "view",
    description = "Trades an admin token for the dashboard's session cookie",
    request_body(content = Login, description = "an admin token", content_type = "application/json"),
    responses((status = 200, description = "the session and its CSRF token", body = SessionView), (status = "4XX", description = "refused, with code and message"))
)]
async fn login(
    State(state): State<AppState>,
    tls: Option<Extension<OverTls>>,
    request: Request,
) -> Result<Response, AppError> {
    let (parts, body) = request.into_parts();
    let Login { token } = json_body(&parts.headers, body).await?;
    let now = wall_clock();
    let (cookie, session) = state
        .db
        .call(move |conn| -> Result<_, AppError> {
            let Some(admin) = admin::authenticate(conn, &token)? else {
                return Err(client(
                    StatusCode::UNAUTHORIZED,
                    codes::ADMIN_REQUIRED,
                    "not an admin token",
                ));
            };
            Ok(admin::open_session(conn, &admin, now)?)
        })
        .await?;
    let mut response = Json(SessionView {
        admin: session.admin,
        csrf_token: Some(session.csrf_token),
    })
    .into_response();
    let cookie = Cookie::build((admin::SESSION_COOKIE, cookie))
        .path("/")
        .http_only(true)
        .same_site(SameSite::Strict)
        .secure(tls.is_some())
        .max_age(cookie::time::Duration::milliseconds(
            admin::SESSION_LIFETIME_MS,
        ))
        .build();
    set_cookie(&mut response, cookie)?;
    Ok(response)
}

#[utoipa::path(
    post,
    path = "/v1/site/logout",
    tag = "view",
    description = "Ends the dashboard session",
    responses((status = 204, description = "done"), (status = "4XX", description = "refused, with code and message")),
    security(("admin_token" = []))
)]
async fn logout(
    State(state): State<AppState>,
    ChangingAdminCaller(caller): ChangingAdminCaller,
) -> Result<Response, AppError> {
    if let Caller::Session { cookie, .. } = caller {
        state
            .db
            .call(move |conn| -> Result<_, AppError> { Ok(admin::close_session(conn, &cookie)?) })
            .await?;
    }
    let mut response = StatusCode::NO_CONTENT.into_response();
    let gone = Cookie::build((admin::SESSION_COOKIE, ""))
        .path("/")
        .http_only(true)
        .same_site(SameSite::Strict)
        .max_age(cookie::time::Duration::ZERO)
        .build();
    set_cookie(&mut response, gone)?;
    Ok(response)
}

#[utoipa::path(
    get,
    path = "/v1/site/session",
    tag = "view",
    description = "Who is signed in. Without a bearer token, a browser holding no live session (no cookie, or one whose session ended) is answered 204: the page asks on every load whether to show the sign-in form, and being signed out is not an error",
    responses((status = 200, description = "the admin and the CSRF token", body = SessionView), (status = 204, description = "no one is signed in in this browser"), (status = "4XX", description = "refused, with code and message")),
    // A token is optional: without one (and no session cookie) the answer
    // is 204, not 401.
    security((), ("admin_token" = []))
)]
async fn session(State(state): State<AppState>, headers: HeaderMap) -> Result<Response, AppError> {
    let caller = match admin_caller(&state.db, &headers).await {
        Ok(caller) => caller,
        Err(AppError::Client {
            status: StatusCode::UNAUTHORIZED,
            ..
        }) if bearer_of(&headers).is_none() => return Ok(StatusCode::NO_CONTENT.into_response()),
        Err(err) => return Err(err),
    };
    Ok(Json(match caller {
        Caller::Token { admin } => SessionView {
            admin,
            csrf_token: None,
        },
        Caller::Session { session, .. } => SessionView {
            admin: session.admin,
            csrf_token: Some(session.csrf_token),
        },
    })
    .into_response())
}

async fn read_status(state: &AppState, now: UnixMs) -> Result<status::SiteStatus, AppError> {
    let listener = state
        .db
        .read_local(|conn| status::listener_status(conn).map_err(from_queue))
        .await?;
    state
        .db
        .read(move |conn| -> Result<_, AppError> { Ok(status::status(conn, listener, now)?) })
        .await
}

/// The status and the site's storage (`"ok"` or `"full"`).
#[derive(serde::Serialize, utoipa::ToSchema)]
struct StatusView {
    #[serde(flatten)]
    status: status::SiteStatus,
    /// `ok`, or `full` while the site refuses writes for want of space.
    #[schema(value_type = String)]
    storage: &'static str,
}

#[utoipa::path(
    get,
    path = "/v1/site/status",
    tag = "view",
    description = "Devices online and offline, queue depth, median sync latency and the trend",
    responses((status = 200, description = "the site's status", body = StatusView), (status = "4XX", description = "refused, with code and message")),
    security(("admin_token" = []))
)]
async fn site_status(
    State(state): State<AppState>,
    AdminCaller(_): AdminCaller,
) -> Result<Json<StatusView>, AppError> {
    let status = read_status(&state, wall_clock()).await?;
    let storage = if state.ledger.storage.is_full() {
        "full"
    } else {
        "ok"
    };
    Ok(Json(StatusView { status, storage }))
}

#[utoipa::path(
    get,
    path = "/v1/site/builds",
    tag = "view",
    description = "The handhelds by the build they run, beside the build the site serves",
    responses((status = 200, description = "the fleet by build", body = builds::Fleet), (status = "4XX", description = "refused, with code and message")),
    security(("admin_token" = []))
)]
async fn site_builds(
    State(state): State<AppState>,
    AdminCaller(_): AdminCaller,
) -> Result<Json<builds::Fleet>, AppError> {
    let served = crate::shell::release::served_build(&state.www_dir).await?;
    let now = wall_clock();
    let devices = state
        .db
        .read(move |conn| -> Result<_, AppError> { Ok(status::devices(conn, now)?) })
        .await?;
    Ok(Json(builds::fleet(&devices, &served)))
}

#[derive(serde::Deserialize)]
struct SeriesQuery {
    hours: Option<u32>,
    /// The view's language for the chart's words (`en` when absent or not
    /// one it speaks).
    lang: Option<String>,
}

/// The series' default span: the 12 h the chart shows.
pub const DEFAULT_SERIES_HOURS: u32 = 12;

fn hours(query: &SeriesQuery) -> Result<u32, AppError> {
    let hours = query.hours.unwrap_or(DEFAULT_SERIES_HOURS);
    if hours == 0 || hours > history::MAX_SERIES_HOURS {
        return Err(client(
            StatusCode::BAD_REQUEST,
            wire_codes::MALFORMED_REQUEST,
            format!("hours is 1 to {}", history::MAX_SERIES_HOURS),
        ));
    }
    Ok(hours)
}

async fn read_series(state: &AppState, hours: u32) -> Result<history::Series, AppError> {
    let now = wall_clock();
    state
        .db
        .read(move |conn| -> Result<_, AppError> { Ok(history::series(conn, hours, now)?) })
        .await
}

#[utoipa::path(
    get,
    path = "/v1/site/series",
    tag = "view",
    description = "The site's queue depth and sync latency over the last hours",
    params(("hours" = Option<u32>, Query, description = "hours back from now, 1 to 24 (12 when not given)", minimum = 1, maximum = 24)),
    responses((status = 200, description = "the series", body = history::Series), (status = "4XX", description = "refused, with code and message")),
    security(("admin_token" = []))
)]
async fn series(
    State(state): State<AppState>,
    ApiQuery(query): ApiQuery<SeriesQuery>,
    AdminCaller(_): AdminCaller,
) -> Result<Json<history::Series>, AppError> {
    let hours = hours(&query)?;
    Ok(Json(read_series(&state, hours).await?))
}

#[utoipa::path(
    get,
    path = "/v1/site/chart.svg",
    tag = "view",
    description = "The series as an SVG chart",
    params(("hours" = Option<u32>, Query, description = "hours back from now, 1 to 24 (12 when not given)", minimum = 1, maximum = 24)),
    responses((status = 200, description = "SVG", body = String, content_type = "image/svg+xml"), (status = "4XX", description = "refused, with code and message")),
    security(("admin_token" = []))
)]
async fn chart_svg(
    State(state): State<AppState>,
    ApiQuery(query): ApiQuery<SeriesQuery>,
    AdminCaller(_): AdminCaller,
) -> Result<Response, AppError> {
    let hours = hours(&query)?;
    let series = read_series(&state, hours).await?;
    let zone = state
        .db
        .read(|conn| -> Result<_, AppError> { Ok(crate::site_clock::SiteZone::remembered(conn)?) })
        .await?;
    let words = chart::Words::of(page::locale_named(query.lang.as_deref()), &zone);
    let svg = chart::svg_in(&series, &zone, &words).map_err(AppError::Internal)?;
    Ok((
        [
            (header::CONTENT_TYPE, "image/svg+xml"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        svg,
    )
        .into_response())
}

async fn prometheus(
    State(state): State<AppState>,
    AdminCaller(_): AdminCaller,
) -> Result<Response, AppError> {
    let status = read_status(&state, wall_clock()).await?;
    let firing = state
        .db
        .read(|conn| -> Result<_, AppError> { Ok(super::alerts::outbox::firing(conn)?) })
        .await?;
    let writer = state.db.writer_uses();
    let text = metrics::render(&status, &state.ledger.metrics, &firing, &writer)
        .map_err(|err| AppError::Internal(err.to_string()))?;
    Ok((
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        text,
    )
        .into_response())
}

/// A device added from the dashboard. Named apart from the admin API's
/// `NewDevice` in the OpenAPI document, where schemas share one namespace.
#[derive(serde::Deserialize, utoipa::ToSchema)]
#[schema(as = SiteNewDevice)]
struct NewDevice {
    device_id: String,
    /// `fxr90`, `mc3390xr`, `rfd40` or `zt411r`.
    profile: String,
    #[serde(default)]
    commissioned: bool,
}

#[derive(serde::Serialize, utoipa::ToSchema)]
struct Enrolled {
    device_id: String,
    profile: String,
    commissioned: bool,
    token: String,
    setup_link: String,
    /// The setup link as a QR code (SVG).
    qr_svg: String,
}

#[utoipa::path(
    post,
    path = "/v1/site/devices",
    operation_id = "site_add_device",
    tag = "view",
    description = "Adds a device from the dashboard",
    request_body(content = NewDevice, description = "the device", content_type = "application/json"),
    responses((status = 200, description = "its token, setup link and QR code", body = Enrolled), (status = "4XX", description = "refused, with code and message")),
    security(("admin_token" = []))
)]
async fn add_device(
    State(state): State<AppState>,
    ChangingAdminCaller(_): ChangingAdminCaller,
    request: Request,
) -> Result<Json<Enrolled>, AppError> {
    let (parts, body) = request.into_parts();
    let new: NewDevice = json_body(&parts.headers, body).await?;
    let Some(profile) = Profile::parse(&new.profile) else {
        return Err(client(
            StatusCode::BAD_REQUEST,
            wire_codes::MALFORMED_REQUEST,
            "profile is one of fxr90, mc3390xr, rfd40, zt411r",
        ));
    };
    // Without an address recorded by `serve` (a server embedded in a
    // test), the setup link points where the request came in.
    let host = parts
        .headers
        .get(header::HOST)
        .and_then(|value| value.to_str().ok())
        .map(|host| format!("http://{host}"));
    let now = wall_clock();
    let device_id = new.device_id.clone();
    let (token, site) = state
        .db
        .call(move |conn| -> Result<_, AppError> {
            let token = devices::add(conn, &device_id, profile, new.commissioned, now)?;
            let site = enroll::remembered_site_url(conn)?;
            Ok((token, site))
        })
        .await?;
    let site = site.or(host).unwrap_or_else(|| enroll::site_url(None, 443));
    let setup_link = enroll::setup_link(&site, &new.device_id, &token);
    let qr_svg = enroll::qr_svg(&setup_link).map_err(|err| AppError::Internal(err.to_string()))?;
    tracing::info!(device_id = %new.device_id, profile = %new.profile, "device added from the site's view");
    Ok(Json(Enrolled {
        device_id: new.device_id,
        profile: new.profile,
        commissioned: new.commissioned,
        token,
        setup_link,
        qr_svg,
    }))
}

#[utoipa::path(
    post,
    path = "/v1/site/devices/{device_id}/revoke",
    operation_id = "site_revoke_device",
    tag = "view",
    description = "Revokes a device from the dashboard",
    params(("device_id" = String, Path)),
    responses((status = 204, description = "done"), (status = "4XX", description = "refused, with code and message")),
    security(("admin_token" = []))
)]
async fn revoke_device(
    State(state): State<AppState>,
    Path(device_id): Path<String>,
    ChangingAdminCaller(caller): ChangingAdminCaller,
) -> Result<StatusCode, AppError> {
    let now = wall_clock();
    let id = device_id.clone();
    state
        .db
        .call(move |conn| -> Result<_, LedgerError> { devices::revoke(conn, &id, now) })
        .await?;
    tracing::info!(%device_id, admin = caller.admin(), "device revoked");
    Ok(StatusCode::NO_CONTENT)
}

/// Closes the session a device has open, for a handheld that lost its
/// storage or broke mid-shift: its operator (or the device, set up again)
/// can open a session again. Answers the session it closed.
#[utoipa::path(
    post,
    path = "/v1/site/devices/{device_id}/close-session",
    operation_id = "site_close_device_session",
    tag = "view",
    description = "Closes a device's open session from the dashboard",
    params(("device_id" = String, Path)),
    responses(
        (status = 200, description = "the session closed", body = OpenSession),
        (status = "4XX", description = "refused, with code and message (NO_OPEN_SESSION, DEVICE_NOT_FOUND)")
    ),
    security(("admin_token" = []))
)]
async fn close_device_session(
    State(state): State<AppState>,
    Path(device_id): Path<String>,
    ChangingAdminCaller(caller): ChangingAdminCaller,
) -> Result<Json<OpenSession>, AppError> {
    let now = wall_clock();
    let id = device_id.clone();
    let closed = state
        .db
        .call(move |conn| session_close::close_for_device(conn, &id, now))
        .await?;
    tracing::info!(%device_id, session_id = %closed.session_id, admin = caller.admin(), "device's session closed by a supervisor");
    Ok(Json(closed))
}

/// Commissions a device: its items post for real from now on (the same
/// work as `stockhop-site device commission`). Commissioning one that is
/// already commissioned changes nothing.
#[utoipa::path(
    post,
    path = "/v1/site/devices/{device_id}/commission",
    operation_id = "site_commission_device",
    tag = "view",
    description = "Commissions a device from the dashboard",
    params(("device_id" = String, Path)),
    responses((status = 204, description = "done"), (status = "4XX", description = "refused, with code and message")),
    security(("admin_token" = []))
)]
async fn commission_device(
    State(state): State<AppState>,
    Path(device_id): Path<String>,
    ChangingAdminCaller(caller): ChangingAdminCaller,
) -> Result<StatusCode, AppError> {
    let id = device_id.clone();
    state
        .db
        .call(move |conn| -> Result<_, LedgerError> { devices::commission(conn, &id) })
        .await?;
    tracing::info!(%device_id, admin = caller.admin(), "device commissioned");
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(
    post,
    path = "/v1/site/counts/{count_id}/approve",
    tag = "view",
    description = "Posts a closed count's variance",
    params(("count_id" = String, Path)),
    responses((status = 204, description = "done"), (status = "4XX", description = "refused, with code and message")),
    security(("admin_token" = []))
)]
async fn approve_count(
    State(state): State<AppState>,
    Path(count_id): Path<String>,
    ChangingAdminCaller(caller): ChangingAdminCaller,
) -> Result<StatusCode, AppError> {
    decide(&state, &caller, move |conn, admin, now| {
        workbench::approve_count(conn, &count_id, admin, now)
    })
    .await
}

#[utoipa::path(
    post,
    path = "/v1/site/grns/{grn_id}/resolve",
    tag = "view",
    description = "Accepts a GRN's short and excess lines",
    params(("grn_id" = String, Path)),
    responses((status = 204, description = "done"), (status = "4XX", description = "refused, with code and message")),
    security(("admin_token" = []))
)]
async fn resolve_grn(
    State(state): State<AppState>,
    Path(grn_id): Path<String>,
    ChangingAdminCaller(caller): ChangingAdminCaller,
) -> Result<StatusCode, AppError> {
    decide(&state, &caller, move |conn, admin, now| {
        workbench::resolve_grn(conn, &grn_id, admin, now)
    })
    .await
}

/// A decision from the page (CSRF-checked, signed in): `work` runs on the
/// database with the deciding admin's name and the wall clock.
async fn decide<T: Send + 'static>(
    state: &AppState,
    caller: &Caller,
    work: impl FnOnce(&mut crate::store::sql::Connection, &str, UnixMs) -> Result<T, LedgerError>
        + Send
        + 'static,
) -> Result<StatusCode, AppError> {
    let admin = caller.admin().to_owned();
    let now = wall_clock();
    state
        .db
        .call(move |conn| -> Result<_, LedgerError> { work(conn, &admin, now) })
        .await?;
    Ok(StatusCode::NO_CONTENT)
}
