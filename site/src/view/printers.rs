//! The printers' HTTP side: add a printer (`POST /v1/site/printers`, the
//! view's Add a printer), print a label (`POST /v1/site/printers/{id}/print`,
//! for an admin or a handheld receiving), read a job, and the decisions on
//! a job that read back wrong or went unanswered (reprint, dismiss).
//!
//! A print request is checked and its ZPL made here, then kept in the job
//! log before the answer (202); the printers' driver sends it.

use axum::extract::{FromRef, FromRequestParts, Path, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Json, Router};

use super::request::json_body;
use super::{admin, codes as view_codes};
use crate::api::caller::{
    bearer_of, changing_admin_caller, AdminCaller, Caller, ChangingAdminCaller,
};
use crate::error::AppError;
use crate::ledger::devices::Profile;
use crate::ledger::{bins, devices, units, wall_clock, LedgerError};
use crate::printers::driver::Wake;
use crate::printers::store::{self, Decision, JobView, LabelKind, NewJob, MAX_JOB_ID_CHARS};
use crate::printers::{codes, zpl};
use crate::state::AppState;
use crate::store::db::Db;

/// The printers' routes, merged into the view's.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/site/printers", post(add_printer))
        .route("/v1/site/printers/{printer_id}/print", post(print))
        .route("/v1/site/print-jobs/{job_id}", get(read_job))
        .route("/v1/site/print-jobs/{job_id}/reprint", post(reprint))
        .route("/v1/site/print-jobs/{job_id}/dismiss", post(dismiss))
        .merge(super::station_labels::routes())
}

fn bad(code: &'static str, message: impl Into<String>) -> AppError {
    AppError::client(StatusCode::BAD_REQUEST, code, message)
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct NewPrinter {
    printer_id: String,
    address: String,
    #[serde(default)]
    profile: Option<String>,
    /// Handhelds whose station prints here.
    #[serde(default)]
    stations: Vec<String>,
}

#[derive(serde::Serialize, utoipa::ToSchema)]
struct Added {
    printer_id: String,
    address: String,
    profile: &'static str,
}

#[utoipa::path(
    post,
    path = "/v1/site/printers",
    tag = "view",
    description = "Adds a label printer",
    request_body(content = serde_json::Value, description = "{\"printer_id\", \"address\", \"profile\", \"stations\"}", content_type = "application/json"),
    responses((status = 200, description = "the printer", body = Added), (status = "4XX", description = "refused, with code and message")),
    security(("admin_token" = []))
)]
async fn add_printer(
    State(state): State<AppState>,
    ChangingAdminCaller(caller): ChangingAdminCaller,
    request: Request,
) -> Result<Json<Added>, AppError> {
    let (parts, body) = request.into_parts();
    let new: NewPrinter = json_body(&parts.headers, body).await?;
    let profile = match new.profile.as_deref() {
        None => Profile::Zt411r,
        Some(text) => {
            Profile::parse(text).ok_or_else(|| bad(codes::INVALID_PRINTER, "profile is zt411r"))?
        }
    };
    let now = wall_clock();
    let printer = state
        .db
        .call(move |conn| {
            store::add(
                conn,
                &new.printer_id,
                &new.address,
                profile,
                &new.stations,
                now,
            )
        })
        .await?;
    tracing::info!(printer = %printer.printer_id, address = %printer.address(), admin = caller.admin(), "printer added from the site's view");
    Ok(Json(Added {
        address: printer.address(),
        printer_id: printer.printer_id,
        profile: profile.as_str(),
    }))
}

/// A print request.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct PrintRequest {
    label: LabelKind,
    #[serde(default)]
    bin: Option<String>,
    #[serde(default)]
    epc: Option<String>,
    #[serde(default)]
    encode: bool,
    #[serde(default = "one")]
    copies: u32,
    /// The caller's id for the job, so a retry does not print twice
    /// (letters, digits and '-'; the site makes one when absent).
    #[serde(default)]
    job_id: Option<String>,
}

fn one() -> u32 {
    1
}

/// Who asks to print.
enum Requester {
    Admin(String),
    /// A handheld with a receive session open.
    Device(String),
}

impl Requester {
    fn name(&self) -> &str {
        match self {
            Requester::Admin(name) | Requester::Device(name) => name,
        }
    }
}

fn not_allowed(message: impl Into<String>) -> AppError {
    AppError::client(StatusCode::FORBIDDEN, codes::PRINT_NOT_ALLOWED, message)
}

/// An admin (token, or session with its CSRF token), or the device token
/// of a commissioned handheld with a receive session open.
impl<S> FromRequestParts<S> for Requester
where
    Db: FromRef<S>,
    S: Send + Sync,
{
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        requester(&Db::from_ref(state), &parts.headers).await
    }
}

async fn requester(db: &Db, headers: &HeaderMap) -> Result<Requester, AppError> {
    let Some(token) = bearer_of(headers).map(str::to_owned) else {
        let caller = changing_admin_caller(db, headers).await?;
        return Ok(Requester::Admin(caller.admin().to_owned()));
    };
    db.call(move |conn| -> Result<Requester, AppError> {
        if let Some(admin) = admin::authenticate(conn, &token)? {
            return Ok(Requester::Admin(admin));
        }
        let Some(device) = devices::authenticate(conn, &token)? else {
            return Err(AppError::client(
                StatusCode::UNAUTHORIZED,
                view_codes::ADMIN_REQUIRED,
                "an admin token or a handheld's device token is required",
            ));
        };
        if !device.profile.runs_handheld_modes() || !device.commissioned {
            return Err(not_allowed(format!(
                "device {} is not a commissioned handheld",
                device.device_id
            )));
        }
        let receiving = conn
            .prepare_cached(
                "SELECT 1 FROM sessions
                     WHERE device_id = ?1 AND state = 'open' AND mode = 'receive'",
            )?
            .exists([device.device_id.as_str()])?;
        if !receiving {
            return Err(not_allowed(format!(
                "device {} has no receive session open",
                device.device_id
            )));
        }
        Ok(Requester::Device(device.device_id))
    })
    .await
}

fn mint_job_id() -> Result<String, AppError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|err| AppError::Internal(err.to_string()))?;
    Ok(uuid::Builder::from_random_bytes(bytes)
        .into_uuid()
        .hyphenated()
        .to_string())
}

#[utoipa::path(
    post,
    path = "/v1/site/printers/{printer_id}/print",
    tag = "view",
    description = "Prints a bin or unit label; an admin, or a commissioned handheld with a receive session open (unit labels only)",
    params(("printer_id" = String, Path)),
    request_body(content = serde_json::Value, description = "{\"label\": \"bin\" | \"unit\", \"bin\", \"epc\", \"encode\", \"copies\", \"job_id\"}", content_type = "application/json"),
    responses((status = 202, description = "the job, kept in the job log for the driver to send", body = JobView), (status = "4XX", description = "refused, with code and message")),
    security(("admin_token" = []), ("device_token" = []))
)]
async fn print(
    State(state): State<AppState>,
    Path(printer_id): Path<String>,
    wake: Option<Extension<Wake>>,
    requester: Requester,
    request: Request,
) -> Result<Response, AppError> {
    let (parts, body) = request.into_parts();
    let ask: PrintRequest = json_body(&parts.headers, body).await?;
    let job_id = match ask.job_id.clone() {
        Some(id)
            if !id.is_empty()
                && id.len() <= MAX_JOB_ID_CHARS
                && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') =>
        {
            id
        }
        Some(_) => {
            return Err(bad(
                codes::INVALID_LABEL,
                format!("job_id is 1 to {MAX_JOB_ID_CHARS} letters, digits or '-'"),
            ))
        }
        None => mint_job_id()?,
    };
    let subject = match (&ask.label, &ask.bin, &ask.epc) {
        (LabelKind::Bin, Some(bin), None) if !ask.encode => bin.clone(),
        (LabelKind::Unit, None, Some(epc)) => {
            zpl::normalize_epc(epc).map_err(|err| bad(codes::INVALID_LABEL, err.to_string()))?
        }
        (LabelKind::Bin, ..) => {
            return Err(bad(
                codes::INVALID_LABEL,
                "a bin label names its \"bin\" (and no epc) and encodes no tag",
            ))
        }
        (LabelKind::Unit, ..) => {
            return Err(bad(
                codes::INVALID_LABEL,
                "a unit label names its \"epc\" (and no bin)",
            ))
        }
    };
    if matches!(requester, Requester::Device(_)) && ask.label != LabelKind::Unit {
        return Err(not_allowed("a handheld prints unit labels only"));
    }
    let canonical = serde_json::json!({
        "printer_id": printer_id,
        "label": ask.label.as_str(),
        "subject": subject,
        "encode": ask.encode,
        "copies": ask.copies,
    })
    .to_string();
    let now = wall_clock();
    let requested_by = requester.name().to_owned();
    let job = state
        .db
        .call(move |conn| -> Result<JobView, AppError> {
            let label = match ask.label {
                LabelKind::Bin => {
                    if bins::find(conn, &subject)?.is_none() {
                        return Err(AppError::client(
                            StatusCode::NOT_FOUND,
                            codes::BIN_NOT_FOUND,
                            format!("no bin {subject:?}"),
                        ));
                    }
                    zpl::Label::Bin {
                        bin: subject.clone(),
                    }
                }
                LabelKind::Unit => {
                    let Some(unit) = units::find(conn, Some(&subject), None)? else {
                        return Err(AppError::client(
                            StatusCode::NOT_FOUND,
                            codes::UNIT_NOT_FOUND,
                            format!("no unit with EPC {subject}"),
                        ));
                    };
                    zpl::Label::Unit {
                        epc: subject.clone(),
                        gs1: zpl::Gs1Key::of(&unit.gs1),
                        sku: unit.sku,
                        serial: unit.code,
                        encode: ask.encode,
                    }
                }
            };
            let zpl = zpl::format(&job_id, &label, ask.copies)
                .map_err(|err| bad(codes::INVALID_LABEL, err.to_string()))?;
            Ok(store::accept(
                conn,
                &NewJob {
                    job_id: &job_id,
                    printer_id: &printer_id,
                    request: &canonical,
                    label: ask.label,
                    subject: &subject,
                    encode: ask.encode,
                    copies: ask.copies,
                    zpl: &zpl,
                    requested_by: &requested_by,
                },
                now,
            )?)
        })
        .await?;
    if let Some(Extension(wake)) = wake {
        wake.wake();
    }
    tracing::info!(job = %job.job_id, printer = %job.printer_id, by = %job.requested_by, label = %job.label, encode = job.encode, "print job accepted");
    Ok((StatusCode::ACCEPTED, Json(job)).into_response())
}

#[utoipa::path(
    get,
    path = "/v1/site/print-jobs/{job_id}",
    tag = "view",
    description = "A print job and where it stands",
    params(("job_id" = String, Path)),
    responses((status = 200, description = "the job", body = JobView), (status = "4XX", description = "refused, with code and message")),
    security(("admin_token" = []))
)]
async fn read_job(
    State(state): State<AppState>,
    Path(job_id): Path<String>,
    AdminCaller(_): AdminCaller,
) -> Result<Json<JobView>, AppError> {
    let found = state
        .db
        .call(move |conn| -> Result<_, AppError> { Ok(store::job(conn, &job_id)?) })
        .await?;
    found.map(Json).ok_or_else(|| {
        AppError::client(
            StatusCode::NOT_FOUND,
            codes::JOB_NOT_FOUND,
            "no such print job",
        )
    })
}

async fn decide(
    state: AppState,
    caller: Caller,
    job_id: String,
    decision: Decision,
    wake: Option<Extension<Wake>>,
) -> Result<Json<JobView>, AppError> {
    let now = wall_clock();
    let job = state
        .db
        .call(move |conn| -> Result<_, LedgerError> { store::decide(conn, &job_id, decision, now) })
        .await?;
    if let Some(Extension(wake)) = wake {
        wake.wake();
    }
    tracing::info!(job = %job.job_id, ?decision, admin = caller.admin(), "print job decided");
    Ok(Json(job))
}

#[utoipa::path(
    post,
    path = "/v1/site/print-jobs/{job_id}/reprint",
    tag = "view",
    description = "Prints a job that read back wrong or went unanswered again",
    params(("job_id" = String, Path)),
    responses((status = 200, description = "the job", body = JobView), (status = "4XX", description = "refused, with code and message")),
    security(("admin_token" = []))
)]
async fn reprint(
    State(state): State<AppState>,
    Path(job_id): Path<String>,
    wake: Option<Extension<Wake>>,
    ChangingAdminCaller(caller): ChangingAdminCaller,
) -> Result<Json<JobView>, AppError> {
    decide(state, caller, job_id, Decision::Reprint, wake).await
}

#[utoipa::path(
    post,
    path = "/v1/site/print-jobs/{job_id}/dismiss",
    tag = "view",
    description = "Gives up on a job that read back wrong or went unanswered",
    params(("job_id" = String, Path)),
    responses((status = 200, description = "the job", body = JobView), (status = "4XX", description = "refused, with code and message")),
    security(("admin_token" = []))
)]
async fn dismiss(
    State(state): State<AppState>,
    Path(job_id): Path<String>,
    wake: Option<Extension<Wake>>,
    ChangingAdminCaller(caller): ChangingAdminCaller,
) -> Result<Json<JobView>, AppError> {
    decide(state, caller, job_id, Decision::Dismiss, wake).await
}
