//! The central's endpoint: `POST /v1/central/hops`, a site's signed batch.
//! A batch is verified with its site's own secret ([`crate::central::secrets`]), or
//! with the shared `--central-secret` for a site without one. A site server
//! with neither answers it 404, as it answers the terminal endpoint without
//! `--ledger-secret`.

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::routing::post;
use axum::{Json, Router};
use stockhop::wire::codes as wire_codes;

use crate::api::ledger::read_signed_unverified;
use crate::central::ingest;
use crate::central::secrets::{self, SiteKey};
use crate::central::wire::{CentralBatch, CentralBatchResponse, CENTRAL_HOPS_PATH};
use crate::error::AppError;
use crate::ledger::{codes, wall_clock};
use crate::state::AppState;

pub fn routes() -> Router<AppState> {
    Router::new().route(CENTRAL_HOPS_PATH, post(central_hops))
}

#[utoipa::path(
    post,
    path = "/v1/central/hops",
    tag = "central",
    description = "A site's signed batch of hops, on a central (HMAC-SHA256 headers)",
    request_body(content = serde_json::Value, description = "CentralBatch: site_id, hops, and now and then the site's summary", content_type = "application/json"),
    responses(
        (status = 200, description = "one result per hop (a hop refused for its seq: 409 SEQ_OUT_OF_ORDER or SEQ_GAP), and where the site's stream stands", body = crate::central::wire::CentralBatchResponse),
        (status = 400, description = "a malformed batch", body = stockhop::wire::ErrorBody),
        (status = 422, description = "INVALID_HOP: a hop's field the central would store is refused (markup or control characters in an identifier, a kind, mode or source_mode off its list, an instant far from now, facts too large); the message names the hop's seq and the field", body = stockhop::wire::ErrorBody),
        (status = 401, description = "unsigned, wrongly signed or stale; SITE_MISMATCH: not the site's own secret", body = stockhop::wire::ErrorBody),
        (status = 403, description = "EPOCH_NEEDS_OWN_SECRET: a new outbox epoch (a restored site) not signed with the site's own secret", body = stockhop::wire::ErrorBody),
        (status = 404, description = "this server is not a central", body = stockhop::wire::ErrorBody),
        (status = 409, description = "EPOCH_STALE: a batch of an outbox epoch older than the site's, from a copy of the site from before its restore", body = stockhop::wire::ErrorBody),
        (status = "4XX", description = "refused, with code and message", body = stockhop::wire::ErrorBody)
    )
)]
async fn central_hops(
    State(state): State<AppState>,
    request: Request,
) -> Result<Json<CentralBatchResponse>, AppError> {
    let shared = state.ledger.central_secret.clone();
    if shared.is_none() {
        let central = state
            .db
            .call(|conn| -> Result<_, AppError> { Ok(secrets::any(conn)?) })
            .await?;
        if !central {
            return Err(AppError::client(
                StatusCode::NOT_FOUND,
                codes::NOT_FOUND,
                "this site is not a central: it takes no site batches",
            ));
        }
    }
    let now = wall_clock();
    let (signed, bytes) = read_signed_unverified(request, now).await?;
    let unauthorized = |code: &'static str, message: String| {
        AppError::client(StatusCode::UNAUTHORIZED, code, message)
    };
    let malformed = |message: String| {
        AppError::client(
            StatusCode::BAD_REQUEST,
            wire_codes::MALFORMED_REQUEST,
            message,
        )
    };
    // The site a batch is for is read before its signature is checked,
    // because the site names the key to check it with; nothing of it is
    // used before that check passes.
    let batch: CentralBatch = match serde_json::from_slice(&bytes) {
        Ok(batch) => batch,
        Err(err) => {
            // Unreadable: only a holder of the shared secret learns why.
            return Err(match &shared {
                Some(shared) if signed.verify(&shared[..], &bytes).is_ok() => {
                    malformed(err.to_string())
                }
                _ => unauthorized(wire_codes::UNAUTHORIZED, "signature does not match".into()),
            });
        }
    };
    let site_id = batch.site_id.clone();
    let key = state
        .db
        .call(move |conn| -> Result<_, AppError> { Ok(secrets::key_of(conn, &site_id)?) })
        .await?;
    let signer = match (key, &shared) {
        (SiteKey::Own(own), _) => signed.verify(own.as_bytes(), &bytes).map(|()| ingest::Signer::OwnSecret).map_err(|_| {
            unauthorized(
                secrets::SITE_MISMATCH,
                format!(
                    "this batch for site {:?} is not signed with that site's secret",
                    batch.site_id
                ),
            )
        })?,
        (SiteKey::Shared, Some(shared)) => {
            signed
                .verify(&shared[..], &bytes)
                .map_err(|err| unauthorized(wire_codes::UNAUTHORIZED, err.to_string()))?;
            crate::warn_sampled!(
                site_id = %batch.site_id.escape_debug(),
                "a site signs with the central's shared secret: give it its own with `stockhop-site central add-site`"
            );
            ingest::Signer::SharedSecret
        }
        (SiteKey::Shared, None) => {
            return Err(unauthorized(
                secrets::SITE_MISMATCH,
                format!(
                    "site {:?} has no secret at this central: add it with `stockhop-site central add-site`",
                    batch.site_id
                ),
            ))
        }
    };
    if let Err(err) = ingest::check(&batch, now) {
        // A site sends a refused batch's hops again one at a time and
        // drops the one refused: its stream goes on past it.
        if let ([hop], Ok(())) = (
            &batch.hops[..],
            crate::ident::check("site_id", &batch.site_id),
        ) {
            let (site_id, seq) = (batch.site_id.clone(), hop.seq);
            state
                .db
                .call(move |conn| -> Result<_, AppError> {
                    Ok(ingest::refused_alone(conn, &site_id, seq, now)?)
                })
                .await?;
        }
        return Err(match err {
            ingest::BatchError::Hop { .. } => AppError::client(
                StatusCode::UNPROCESSABLE_ENTITY,
                ingest::INVALID_HOP,
                err.to_string(),
            ),
            _ => malformed(err.to_string()),
        });
    }
    let response = state
        .db
        .call(move |conn| -> Result<_, AppError> { Ok(ingest::ingest(conn, &batch, signer, now)?) })
        .await?;
    Ok(Json(response))
}
