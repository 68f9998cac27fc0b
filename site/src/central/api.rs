//! The central's endpoint: `POST /v1/central/hops`, a site's signed batch.
//! A site server started without `--central-secret` answers it 404, as it
//! answers the terminal endpoint without `--ledger-secret`.

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::routing::post;
use axum::{Json, Router};
use stockhop::wire::codes as wire_codes;

use super::ingest;
use super::wire::{CentralBatch, CentralBatchResponse, CENTRAL_HOPS_PATH};
use crate::error::AppError;
use crate::http::AppState;
use crate::ledger::api::read_signed_body;
use crate::ledger::{codes, wall_clock};

pub fn routes() -> Router<AppState> {
    Router::new().route(CENTRAL_HOPS_PATH, post(central_hops))
}

#[utoipa::path(
    post,
    path = "/v1/central/hops",
    tag = "central",
    description = "A site's signed batch of hops, on a central (HMAC-SHA256 headers)",
    request_body(content = serde_json::Value, description = "CentralBatch: site_id, hops", content_type = "application/json"),
    responses((status = 200, description = "one result per hop", body = serde_json::Value), (status = "4XX", description = "refused, with code and message"))
)]
async fn central_hops(
    State(state): State<AppState>,
    request: Request,
) -> Result<Json<CentralBatchResponse>, AppError> {
    let Some(secret) = state.ledger.central_secret.clone() else {
        return Err(AppError::client(
            StatusCode::NOT_FOUND,
            codes::NOT_FOUND,
            "this site is not a central: it takes no site batches",
        ));
    };
    let now = wall_clock();
    let bytes = read_signed_body(&secret, request, now).await?;
    let malformed = |message: String| {
        AppError::client(
            StatusCode::BAD_REQUEST,
            wire_codes::MALFORMED_REQUEST,
            message,
        )
    };
    let batch: CentralBatch =
        serde_json::from_slice(&bytes).map_err(|err| malformed(err.to_string()))?;
    ingest::check(&batch).map_err(|err| malformed(err.to_string()))?;
    let response = state
        .db
        .call(move |conn| -> Result<_, AppError> { Ok(ingest::ingest(conn, &batch, now)?) })
        .await?;
    Ok(Json(response))
}
