//! The read side of reference data for devices (any device's token): the
//! cache's pages (`GET /v1/reference`), one unit, GRN, manifest or count.
//! None of it names a session: a device reads the site's data, never
//! another device's work.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;

use crate::api::caller::DeviceCaller;
use crate::error::{ApiQuery, AppError};
use crate::ledger::counts::{self, CountFigures};
use crate::ledger::grns::{self, Grn};
use crate::ledger::manifests::{self, Manifest};
use crate::ledger::reference::{self, ReferencePage, UnitView, DEFAULT_PAGE_ROWS, MAX_PAGE_ROWS};
use crate::ledger::{codes, units};
use crate::state::AppState;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/reference", get(reference_page))
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
