//! The read side of reference data for devices (any device's token): the
//! cache's pages (`GET /v1/reference`), one unit (by EPC, or by a label
//! that names it), GRN, manifest or count.
//! None of it names a session: a device reads the site's data, never
//! another device's work.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};

use crate::api::caller::DeviceCaller;
use crate::error::{ApiQuery, AppError};
use crate::ledger::counts::{self, CountFigures};
use crate::ledger::grns::{self, Grn};
use crate::ledger::manifests::{self, Manifest};
use crate::ledger::reference::{self, ReferencePage, UnitView, DEFAULT_PAGE_ROWS, MAX_PAGE_ROWS};
use crate::ledger::{codes, labels, units};
use crate::state::AppState;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/reference", get(reference_page))
        .route("/v1/units", get(unit_by_label))
        .route("/v1/units/{epc}", get(unit))
        .route("/v1/grns/{grn}", get(grn))
        .route("/v1/manifests/{manifest}", get(manifest))
        .route("/v1/counts/{count_id}", get(count))
}

#[derive(Deserialize)]
struct PageQuery {
    after: Option<String>,
    limit: Option<String>,
}

#[utoipa::path(
    get,
    path = "/v1/reference",
    tag = "ledger",
    description = "The handheld's reference cache: every row changed after the cursor",
    params(
        ("after" = Option<String>, Query, description = "the cursor the last page answered; none or empty: from the start"),
        ("limit" = Option<u32>, Query, description = "rows in the page (500 when not given)", minimum = 1, maximum = 2000)
    ),
    responses((status = 200, description = "a page of bins, units, GRNs and counts", body = crate::ledger::reference::ReferencePage), (status = "4XX", description = "refused, with code and message", body = stockhop::wire::ErrorBody)),
    security(("device_token" = []))
)]
async fn reference_page(
    State(state): State<AppState>,
    ApiQuery(query): ApiQuery<PageQuery>,
    DeviceCaller(device): DeviceCaller,
) -> Result<Json<ReferencePage>, AppError> {
    let after = reference::parse_cursor(query.after.as_deref()).ok_or_else(|| {
        AppError::client(
            StatusCode::BAD_REQUEST,
            codes::INVALID_CURSOR,
            "after is a cursor a page answered",
        )
    })?;
    let limit = match query.limit.as_deref() {
        None => DEFAULT_PAGE_ROWS,
        Some(text) => text
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=MAX_PAGE_ROWS).contains(n))
            .ok_or_else(|| {
                AppError::client(
                    StatusCode::BAD_REQUEST,
                    stockhop::wire::codes::MALFORMED_REQUEST,
                    format!("limit runs from 1 to {MAX_PAGE_ROWS}"),
                )
            })?,
    };
    let page = state
        .db
        .call(move |conn| -> Result<_, AppError> {
            Ok(reference::page(conn, &device, after, limit)?)
        })
        .await?;
    Ok(Json(page))
}

/// Reads one object for an authenticated device; 404 when there is none.
async fn one<T: Send + 'static>(
    state: &AppState,
    what: &'static str,
    read: impl FnOnce(&crate::store::sql::Connection) -> crate::store::sql::Result<Option<T>>
        + Send
        + 'static,
) -> Result<Json<T>, AppError> {
    state
        .db
        .call(move |conn| -> Result<_, AppError> { Ok(read(conn)?) })
        .await?
        .map(Json)
        .ok_or_else(|| {
            AppError::client(
                StatusCode::NOT_FOUND,
                codes::NOT_FOUND,
                format!("no such {what}"),
            )
        })
}

#[utoipa::path(
    get,
    path = "/v1/units/{epc}",
    tag = "ledger",
    description = "One unit by EPC",
    params(("epc" = String, Path)),
    responses((status = 200, description = "the unit", body = crate::ledger::reference::UnitView), (status = "4XX", description = "refused, with code and message", body = stockhop::wire::ErrorBody)),
    security(("device_token" = []))
)]
async fn unit(
    State(state): State<AppState>,
    Path(epc): Path<String>,
    DeviceCaller(_): DeviceCaller,
) -> Result<Json<UnitView>, AppError> {
    // As the handheld spells it first, then as asked (a unit kept before
    // imports spelled EPCs one way).
    let canonical = crate::ident::canonical_epc(epc.clone());
    one(&state, "unit", move |conn| {
        let unit = match units::find(conn, Some(&canonical), None)? {
            Some(unit) => Some(unit),
            None => units::find(conn, Some(&epc), None)?,
        };
        Ok(unit.map(UnitView::from))
    })
    .await
}

/// The code of a unit lookup whose label names no unit the site knows (404).
pub const UNKNOWN_UNIT: &str = "UNKNOWN_UNIT";
/// The code of a unit lookup whose label does not parse (422).
pub const LABEL_INVALID: &str = "LABEL_INVALID";

#[derive(Deserialize)]
struct LabelQuery {
    label: String,
}

/// A label that does not parse: `LABEL_INVALID`, with the label's own
/// error (`label_check_digit`, `label_unknown_ai`, `label_bad_date`,
/// `label_too_long`, `label_malformed`), the AI at fault and what is wrong.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct LabelInvalid {
    /// `LABEL_INVALID`.
    pub code: &'static str,
    /// `label_check_digit`, `label_unknown_ai`, `label_bad_date`,
    /// `label_too_long` or `label_malformed`.
    pub error: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ai: Option<String>,
    pub message: String,
}

#[utoipa::path(
    get,
    path = "/v1/units",
    tag = "ledger",
    description = "The unit a scanned label names: a GS1 unit label ((01)+(21)), a Digital Link or an SGTIN EPC by its EPC or its GTIN and serial; any other text by the EPC or code it is. A label is read as the site reads it (its separator substitute, its date)",
    params(("label" = String, Query, description = "the text the scanner sent")),
    responses(
        (status = 200, description = "the unit", body = crate::ledger::reference::UnitView),
        (status = 404, description = "UNKNOWN_UNIT: the label names no unit the site knows", body = stockhop::wire::ErrorBody),
        (status = 422, description = "LABEL_INVALID: the label does not parse", body = LabelInvalid),
        (status = "4XX", description = "refused, with code and message", body = stockhop::wire::ErrorBody)
    ),
    security(("device_token" = []))
)]
async fn unit_by_label(
    State(state): State<AppState>,
    ApiQuery(query): ApiQuery<LabelQuery>,
    DeviceCaller(_): DeviceCaller,
) -> Result<Response, AppError> {
    let now = crate::ledger::wall_clock();
    let found = state
        .db
        .call(move |conn| -> Result<_, AppError> {
            let options = labels::read_options(conn, now)?;
            Ok(match stockhop::gs1::read(&query.label, &options) {
                Ok(label) => Ok(labels::unit_named(conn, &label)?),
                Err(refused) => Err(refused),
            })
        })
        .await?;
    match found {
        Ok(Some(unit)) => Ok(Json(UnitView::from(unit)).into_response()),
        Ok(None) => Err(AppError::client(
            StatusCode::NOT_FOUND,
            UNKNOWN_UNIT,
            "the label names no unit the site knows",
        )),
        Err(refused) => Ok((
            StatusCode::UNPROCESSABLE_ENTITY,
            Json(LabelInvalid {
                code: LABEL_INVALID,
                error: refused.code.as_str(),
                ai: refused.ai,
                message: refused.message,
            }),
        )
            .into_response()),
    }
}

#[utoipa::path(
    get,
    path = "/v1/grns/{grn}",
    tag = "ledger",
    description = "One GRN with its lines",
    params(("grn" = String, Path)),
    responses((status = 200, description = "the GRN", body = crate::ledger::grns::Grn), (status = "4XX", description = "refused, with code and message", body = stockhop::wire::ErrorBody)),
    security(("device_token" = []))
)]
async fn grn(
    State(state): State<AppState>,
    Path(grn): Path<String>,
    DeviceCaller(_): DeviceCaller,
) -> Result<Json<Grn>, AppError> {
    one(&state, "GRN", move |conn| grns::find(conn, &grn)).await
}

#[utoipa::path(
    get,
    path = "/v1/manifests/{manifest}",
    tag = "ledger",
    description = "One manifest with its units, read live by dispatch verify",
    params(("manifest" = String, Path)),
    responses((status = 200, description = "the manifest", body = crate::ledger::manifests::Manifest), (status = "4XX", description = "refused, with code and message", body = stockhop::wire::ErrorBody)),
    security(("device_token" = []))
)]
async fn manifest(
    State(state): State<AppState>,
    Path(manifest): Path<String>,
    DeviceCaller(_): DeviceCaller,
) -> Result<Json<Manifest>, AppError> {
    one(&state, "manifest", move |conn| {
        manifests::find(conn, &manifest)
    })
    .await
}

#[utoipa::path(
    get,
    path = "/v1/counts/{count_id}",
    tag = "ledger",
    description = "One count session with what it expected and saw",
    params(("count_id" = String, Path)),
    responses((status = 200, description = "the count", body = crate::ledger::counts::CountFigures), (status = "4XX", description = "refused, with code and message", body = stockhop::wire::ErrorBody)),
    security(("device_token" = []))
)]
async fn count(
    State(state): State<AppState>,
    Path(count_id): Path<String>,
    DeviceCaller(_): DeviceCaller,
) -> Result<Json<CountFigures>, AppError> {
    one(&state, "count", move |conn| {
        // Read on the connection, after every sync that had it before.
        let as_of = crate::ledger::wall_clock();
        Ok(counts::view(conn, &count_id)?.map(|view| CountFigures { view, as_of }))
    })
    .await
}
