//! Attendance out, for payroll and HR: `GET
//! /v1/site/terminals/{serial}/records` (one terminal's records of a
//! period, paged like the hop feed) and `GET /v1/site/attendance.csv`
//! (every terminal's, as a spreadsheet opens them). The records are the
//! ledger's ([`crate::ledger::attendance`]), each once.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::Json;
use serde::{Deserialize, Serialize};
use stockhop::time::UnixMs;

use super::hops::{csv_line, csv_response, malformed, period};
use crate::api::caller::AdminCaller;
use crate::error::{ApiQuery, AppError};
use crate::ledger::attendance::{self, Cursor, HeldRecord, DEFAULT_RECORDS_PAGE, MAX_RECORDS_PAGE};
use crate::ledger::codes;
use crate::ledger::hop_feed::inert;
use crate::state::AppState;

/// The CSV's columns, in order.
pub const CSV_COLUMNS: &[&str] = &[
    "device_serial",
    "pin",
    "occurred_at",
    "state",
    "verify",
    "recorded_at",
];

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RecordsQuery {
    /// RFC 3339: the first capture instant of the period.
    #[param(required = true)]
    pub from: Option<String>,
    /// RFC 3339: the end of the period, not included.
    #[param(required = true)]
    pub to: Option<String>,
    /// The `next` of the last page read; none from the period's start.
    pub after: Option<String>,
    /// Records on the page, 1 to 1000 (100 when not given).
    #[param(value_type = Option<u32>, minimum = 1, maximum = 1000)]
    pub limit: Option<String>,
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PeriodQuery {
    /// RFC 3339: the first capture instant of the period.
    #[param(required = true)]
    pub from: Option<String>,
    /// RFC 3339: the end of the period, not included.
    #[param(required = true)]
    pub to: Option<String>,
}

/// One attendance record.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct AttendanceRecord {
    /// The person's PIN on the terminal.
    pub pin: String,
    /// When the person punched (the terminal's local time read in its
    /// zone).
    #[schema(value_type = String, format = DateTime)]
    pub occurred_at: UnixMs,
    /// The punch's status as the terminal gave it (check-in, check-out,
    /// break…: the terminal's own codes); null when its line has none.
    pub state: Option<String>,
    /// How the person was verified (finger, card, face…: the terminal's
    /// own codes); null when its line has none.
    pub verify: Option<String>,
    /// When the site's ledger recorded it.
    #[schema(value_type = String, format = DateTime)]
    pub recorded_at: UnixMs,
}

/// A page of a terminal's records.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct RecordsPage {
    pub records: Vec<AttendanceRecord>,
    /// Pass it back as `after` for the next page; absent on the last one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
}

fn as_record(held: &HeldRecord) -> AttendanceRecord {
    let (state, verify) = attendance::state_and_verify(&held.raw);
    AttendanceRecord {
        pin: held.pin.clone(),
        occurred_at: held.occurred_at,
        state,
        verify,
        recorded_at: held.recorded_at,
    }
}

/// A terminal's attendance records of a period, in capture order, a page
/// at a time.
#[utoipa::path(
    get,
    path = "/v1/site/terminals/{serial}/records",
    operation_id = "terminal_records",
    tag = "view",
    description = "A terminal's attendance records captured in a period, each once (a punch repeated within seconds is folded into the first), in capture order, a page at a time: resume from next, which is absent on the last page. Records a backfill brings later into a period already read are there when it is read again. 404 for a serial the site has never seen a terminal by",
    params(("serial" = String, Path, description = "the terminal's serial number (SN)"), RecordsQuery),
    responses(
        (status = 200, description = "the records", body = RecordsPage),
        (status = 400, description = "from or to missing or not RFC 3339, to not after from, a bad cursor or limit"),
        (status = 401, description = "no admin token or session"),
        (status = 404, description = "no terminal with this serial has reached the site")
    ),
    security(("admin_token" = []))
)]
pub async fn records(
    State(state): State<AppState>,
    Path(serial): Path<String>,
    ApiQuery(query): ApiQuery<RecordsQuery>,
    AdminCaller(_): AdminCaller,
) -> Result<Json<RecordsPage>, AppError> {
    let (from, to) = period(query.from.as_deref(), query.to.as_deref())?;
    let after = match query.after.as_deref() {
        None | Some("") => None,
        Some(text) => Some(Cursor::parse(text).ok_or_else(|| {
            malformed(format!(
                "after {text:?} is not a cursor: give the `next` of the page before, or leave it out to start from the period's start"
            ))
        })?),
    };
    let limit = match query.limit.as_deref() {
        None => DEFAULT_RECORDS_PAGE,
        Some(text) => text
            .parse()
            .ok()
            .filter(|limit| (1..=MAX_RECORDS_PAGE).contains(limit))
            .ok_or_else(|| malformed(format!("limit is 1 to {MAX_RECORDS_PAGE}")))?,
    };
    let (held, next) = state
        .db
        .read(move |conn| -> Result<_, AppError> {
            if !attendance::terminal_known(conn, &serial)? {
                return Err(AppError::client(
                    StatusCode::NOT_FOUND,
                    codes::NOT_FOUND,
                    format!("no terminal with serial {serial:?} has reached the site: check the serial (the terminal's SN)"),
                ));
            }
            Ok(attendance::page(
                conn,
                Some(&serial),
                from,
                to,
                after.as_ref(),
                limit,
            )?)
        })
        .await?;
    Ok(Json(RecordsPage {
        records: held.iter().map(as_record).collect(),
        next: next.map(|cursor| cursor.encode()),
    }))
}

/// Every terminal's attendance records of a period as CSV, in capture
/// order, each once; cells a spreadsheet would run as a formula begin
/// with `'`.
#[utoipa::path(
    get,
    path = "/v1/site/attendance.csv",
    operation_id = "attendance_csv",
    tag = "view",
    description = "Every terminal's attendance records captured in a period, as CSV for payroll (device_serial, pin, occurred_at, state, verify, recorded_at), each once, in capture order; cells a spreadsheet would run as a formula begin with '",
    params(PeriodQuery),
    responses(
        (status = 200, description = "the period's records", body = String, content_type = "text/csv"),
        (status = 400, description = "from or to missing or not RFC 3339, or to not after from"),
        (status = 401, description = "no admin token or session")
    ),
    security(("admin_token" = []))
)]
pub async fn csv(
    State(state): State<AppState>,
    ApiQuery(query): ApiQuery<PeriodQuery>,
    AdminCaller(_): AdminCaller,
) -> Result<Response, AppError> {
    let (from, to) = period(query.from.as_deref(), query.to.as_deref())?;
    let db = state.db.clone();
    let header_row = csv_line(CSV_COLUMNS.iter().map(|c| c.to_string()))?;
    // A page at a time, each its own short read, streamed as it goes.
    let steps = futures_util::stream::unfold(Some(None::<Cursor>), move |after| {
        let db = db.clone();
        async move {
            let after = after?;
            let step = db
                .read(move |conn| -> Result<_, AppError> {
                    Ok(attendance::page(
                        conn,
                        None,
                        from,
                        to,
                        after.as_ref(),
                        MAX_RECORDS_PAGE,
                    )?)
                })
                .await;
            Some(match step {
                Ok((held, next)) => {
                    let mut text = Vec::new();
                    for record in &held {
                        match csv_line(csv_record(record)) {
                            Ok(line) => text.extend(line),
                            Err(err) => return Some((Err(err), None)),
                        }
                    }
                    (Ok(text), next.map(Some))
                }
                Err(err) => (Err(err), None),
            })
        }
    });
    Ok(csv_response(header_row, steps))
}

/// A record as a CSV record in [`CSV_COLUMNS`] order, every cell inert.
fn csv_record(held: &HeldRecord) -> Vec<String> {
    let record = as_record(held);
    vec![
        inert(&held.device_serial),
        inert(&record.pin),
        record.occurred_at.to_string(),
        inert(record.state.as_deref().unwrap_or_default()),
        inert(record.verify.as_deref().unwrap_or_default()),
        record.recorded_at.to_string(),
    ]
}
