//! `POST /v1/admin/rescue`: a handheld's rescue file (the body, as the
//! handheld wrote it) imported through the same ledger code as the command
//! line's `stockhop-site rescue import` ([`crate::ledger::rescue`]). The
//! file is checked whole first (`422 RESCUE_UNVERIFIED`, nothing applied);
//! then its items apply one sync request's worth at a time, each on the
//! site's writer in its own turn, so handhelds keep syncing meanwhile.

use axum::body::Body;
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use stockhop::rescue::MAX_FILE_BYTES;
use stockhop::wire::codes as wire_codes;

use crate::api::caller::AdminTokenCaller;
use crate::error::AppError;
use crate::ledger::rescue::{self, RescueCounts};
use crate::ledger::{wall_clock, LedgerError};
use crate::state::AppState;

/// Imports a rescue file.
#[utoipa::path(
    post,
    path = "/v1/admin/rescue",
    tag = "admin",
    description = "A handheld's rescue file (stockhop-rescue-<device>-<instant>.jsonl), its items applied through sync's code exactly once by key, in client_seq order per session; items = applied + rejected + replayed, and buffered (items waiting for an earlier client_seq the file did not hold) are counted among the rejected",
    request_body(description = "the file as the handheld wrote it", content(
        (String = "application/jsonl"),
        (String = "application/octet-stream")
    )),
    responses(
        (status = 200, description = "imported", body = RescueCounts),
        (status = 401, description = "no admin token"),
        (status = 403, description = "a device's token"),
        (status = 413, description = "body over 64 MiB"),
        (status = 422, description = "RESCUE_UNVERIFIED: not a rescue file, or its signature does not hold for its device; nothing imported", body = stockhop::wire::ErrorBody)
    ),
    security(("admin_token" = []))
)]
pub async fn import(
    State(state): State<AppState>,
    AdminTokenCaller(admin): AdminTokenCaller,
    body: Body,
) -> Result<Json<RescueCounts>, AppError> {
    let bytes = axum::body::to_bytes(body, MAX_FILE_BYTES)
        .await
        .map_err(|_| {
            AppError::client(
                StatusCode::PAYLOAD_TOO_LARGE,
                wire_codes::BODY_TOO_LARGE,
                format!("a rescue file is limited to {MAX_FILE_BYTES} bytes"),
            )
        })?;
    let mut plan = state
        .db
        .call(move |conn| rescue::verify(conn, &bytes))
        .await
        .inspect_err(|err| {
            if let LedgerError::Refused(refusal) = err {
                tracing::info!(%admin, reason = %refusal.message, "a rescue file was refused");
            }
        })?;
    for index in 0..plan.requests() {
        plan = state
            .db
            .call(move |conn| -> Result<_, LedgerError> {
                plan.run_request(conn, index, wall_clock())?;
                Ok(plan)
            })
            .await?;
    }
    let imported = state
        .db
        .call(move |conn| plan.finish(conn, wall_clock()))
        .await?;
    let (device_id, counts) = (imported.device_id, imported.counts);
    tracing::info!(
        %admin,
        device_id,
        items = counts.items,
        applied = counts.applied,
        replayed = counts.replayed,
        rejected = counts.rejected,
        "a rescue file was imported"
    );
    Ok(Json(counts))
}
