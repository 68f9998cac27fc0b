//! What a handheld reads about the labels its receive scans asked for: the
//! printer its station prints at (`GET /v1/devices/{id}/printer`) and, by
//! a scan's key, the print job that scan queued there and where it stands
//! (`GET /v1/devices/{id}/print-jobs/{key}`), beside the printer's state,
//! so the handheld can say in words what the ledger decided: the tag
//! written and read back (the ENCODE hop posted), a read-back that did not
//! match or a void tag (a decision for a person), or the label waiting
//! for a printer that is offline or faulted.
//!
//! Only the device itself, with its device token, reads these.

use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::routing::get;
use axum::{Json, Router};
use serde::Serialize;
use stockhop::time::UnixMs;
use stockhop::wire::codes as wire_codes;

use crate::error::AppError;
use crate::ledger::devices::Profile;
use crate::ledger::modes::receive;
use crate::ledger::{auth, codes as ledger_codes, devices, wall_clock};
use crate::printers::store::{self, JobView, PrinterStatus};
use crate::printers::{codes, station};
use crate::state::AppState;

/// The routes, merged into the printers' own.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/devices/{device_id}/printer", get(station_printer))
        .route(
            "/v1/devices/{device_id}/print-jobs/{key}",
            get(scan_print_job),
        )
}

/// A printer as a handheld at its station sees it.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct StationPrinter {
    pub printer_id: String,
    pub address: String,
    /// When the site last read its host status; null before it ever did.
    #[schema(value_type = Option<String>, format = DateTime)]
    pub status_at: Option<UnixMs>,
    /// Silent past its profile's period (or never heard): its jobs wait.
    pub offline: bool,
    /// Paper out, head open, ribbon out, paused: its jobs wait too.
    pub faults: Vec<String>,
    /// Why the site's last visit got no status (it may be off the
    /// network); null when the last visit was answered.
    pub last_error: Option<String>,
    pub jobs_pending: i64,
}

impl StationPrinter {
    fn from_status(status: PrinterStatus, now: UnixMs) -> StationPrinter {
        let period = Profile::Zt411r.heartbeat_period_ms();
        StationPrinter {
            offline: status.status_at.is_none_or(|at| now.0 - at.0 > period),
            printer_id: status.printer_id,
            address: status.address,
            status_at: status.status_at,
            faults: status.faults,
            last_error: status.last_error,
            jobs_pending: status.jobs_pending,
        }
    }
}

/// A receive scan's label: the job and the printer it waits at.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ScanPrintJob {
    pub job: JobView,
    pub printer: Option<StationPrinter>,
}

/// The device behind the bearer token, which must be `device_id`.
fn the_device(
    conn: &crate::store::sql::Connection,
    headers: &HeaderMap,
    device_id: &str,
) -> Result<(), AppError> {
    let token = auth::bearer(
        headers
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok()),
    )
    .ok_or_else(|| {
        AppError::client(
            StatusCode::UNAUTHORIZED,
            wire_codes::UNAUTHORIZED,
            "a device token is required",
        )
    })?;
    let device = devices::authenticate(conn, token)?.ok_or_else(|| {
        AppError::client(
            StatusCode::UNAUTHORIZED,
            wire_codes::UNAUTHORIZED,
            "unknown device token",
        )
    })?;
    if device.device_id != device_id {
        return Err(AppError::client(
            StatusCode::FORBIDDEN,
            ledger_codes::DEVICE_MISMATCH,
            "a device reads only its own labels",
        ));
    }
    Ok(())
}

fn printer_status(
    conn: &crate::store::sql::Connection,
    printer_id: &str,
    now: UnixMs,
) -> crate::store::sql::Result<Option<StationPrinter>> {
    Ok(store::statuses(conn)?
        .into_iter()
        .find(|status| status.printer_id == printer_id)
        .map(|status| StationPrinter::from_status(status, now)))
}

#[utoipa::path(
    get,
    path = "/v1/devices/{device_id}/printer",
    tag = "ledger",
    description = "The printer the handheld's station prints and encodes at, and its state",
    params(("device_id" = String, Path)),
    responses((status = 200, description = "{\"printer_id\", \"address\", \"status_at\", \"offline\", \"faults\", \"last_error\", \"jobs_pending\"}", body = StationPrinter), (status = 404, description = "PRINTER_NOT_FOUND: no printer is set for this station"), (status = "4XX", description = "refused, with code and message")),
    security(("device_token" = []))
)]
async fn station_printer(
    State(state): State<AppState>,
    Path(device_id): Path<String>,
    headers: HeaderMap,
) -> Result<Json<StationPrinter>, AppError> {
    let now = wall_clock();
    state
        .db
        .call(move |conn| -> Result<_, AppError> {
            the_device(conn, &headers, &device_id)?;
            let printer = match station::printer_for(conn, &device_id)? {
                Some(printer_id) => printer_status(conn, &printer_id, now)?,
                None => None,
            };
            printer.map(Json).ok_or_else(|| {
                AppError::client(
                    StatusCode::NOT_FOUND,
                    codes::PRINTER_NOT_FOUND,
                    format!("no printer is set for {device_id}'s station"),
                )
            })
        })
        .await
}

#[utoipa::path(
    get,
    path = "/v1/devices/{device_id}/print-jobs/{key}",
    tag = "ledger",
    description = "The label a receive scan with encode queued at the station's printer (by the scan's key), and the printer's state",
    params(("device_id" = String, Path), ("key" = String, Path, description = "the scan's idempotency key")),
    responses((status = 200, description = "{\"job\": the print job, \"printer\": the printer's state}", body = ScanPrintJob), (status = 404, description = "JOB_NOT_FOUND: the scan queued no label (not applied yet, or the station has no printer)"), (status = "4XX", description = "refused, with code and message")),
    security(("device_token" = []))
)]
async fn scan_print_job(
    State(state): State<AppState>,
    Path((device_id, key)): Path<(String, String)>,
    headers: HeaderMap,
) -> Result<Json<ScanPrintJob>, AppError> {
    let now = wall_clock();
    state
        .db
        .call(move |conn| -> Result<_, AppError> {
            // Who asks first: a request without the device's token is
            // refused 401 whatever its key, before the key is read.
            the_device(conn, &headers, &device_id)?;
            if uuid::Uuid::try_parse(&key).is_err() {
                return Err(AppError::client(
                    StatusCode::BAD_REQUEST,
                    wire_codes::MALFORMED_REQUEST,
                    "a scan's key is a UUID",
                ));
            }
            let job_id = receive::print_job_id(&device_id, &key);
            let job = store::job(conn, &job_id)?
                .filter(|job| job.requested_by == device_id)
                .ok_or_else(|| {
                    AppError::client(
                        StatusCode::NOT_FOUND,
                        codes::JOB_NOT_FOUND,
                        "this scan queued no label at a printer",
                    )
                })?;
            let printer = printer_status(conn, &job.printer_id, now)?;
            Ok(Json(ScanPrintJob { job, printer }))
        })
        .await
}
