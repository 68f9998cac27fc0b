//! The ledger's HTTP handlers: authentication, request limits and JSON at
//! the edge; the work itself is [`crate::ledger::sync`], [`crate::ledger::hops`],
//! [`crate::ledger::devices`] and [`crate::ledger::terminal`], run on the database's
//! blocking thread.

use axum::body::{Body, Bytes};
use axum::extract::{Path, Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::routing::{get, post};
use axum::{Json, Router};
use stockhop::wire::{
    codes as wire_codes, Heartbeat, HeartbeatAck, SessionHops, SyncResponse, MAX_REQUEST_BYTES,
    SYNC_PATH,
};

use crate::api::caller::{device_of, device_token, unknown_device_token, DeviceCaller};
use crate::error::AppError;
use crate::ledger::admission;
use crate::ledger::devices::{self, Device};
use crate::ledger::{
    auth, codes, hops, sessions, sync, terminal, wall_clock, InFlightGuard, LedgerError, Refusal,
};
pub use crate::limits::MAX_APP_VERSION_CHARS;
use crate::limits::SIGNED_BODY_DEADLINE;
use crate::state::AppState;
use crate::store::writer::Caller;
use crate::terminal_wire::{
    TerminalBatch, SIGNATURE_HEADER, TERMINAL_EVENTS_PATH, TIMESTAMP_HEADER,
};

/// The ledger's routes, merged into the site router.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route(SYNC_PATH, post(sync_items))
        .route("/v1/sessions/{session_id}/hops", get(session_hops))
        .route("/v1/devices/{device_id}/heartbeat", post(heartbeat))
        .route(TERMINAL_EVENTS_PATH, post(terminal_events))
        .merge(super::reference::routes())
}

fn client(status: StatusCode, code: &'static str, message: impl Into<String>) -> AppError {
    AppError::client(status, code, message)
}

/// Reads a body of at most [`MAX_REQUEST_BYTES`]; a larger one is 413
/// before a byte of it is parsed.
async fn read_body(headers: &HeaderMap, body: Body) -> Result<Bytes, AppError> {
    let too_large = || {
        client(
            StatusCode::PAYLOAD_TOO_LARGE,
            wire_codes::BODY_TOO_LARGE,
            format!("request bodies are limited to {MAX_REQUEST_BYTES} bytes"),
        )
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<usize>().ok());
    if declared.is_some_and(|len| len > MAX_REQUEST_BYTES) {
        return Err(too_large());
    }
    axum::body::to_bytes(body, MAX_REQUEST_BYTES)
        .await
        .map_err(|err| {
            let over_limit = std::error::Error::source(&err)
                .is_some_and(|source| source.is::<http_body_util::LengthLimitError>());
            if over_limit {
                too_large()
            } else {
                client(
                    StatusCode::BAD_REQUEST,
                    wire_codes::MALFORMED_REQUEST,
                    format!("cannot read the body: {err}"),
                )
            }
        })
}

fn refusal(refusal: Refusal) -> AppError {
    AppError::from(LedgerError::Refused(refusal))
}

#[utoipa::path(
    post,
    path = "/v1/sync",
    tag = "ledger",
    description = "A handheld's queued items, applied once each in client_seq order per session (docs/design.md §4)",
    request_body(content = stockhop::wire::SyncRequest, description = "the device's queued items", content_type = "application/json"),
    responses((status = 200, description = "the per-item results", body = stockhop::wire::SyncResponse), (status = "4XX", description = "refused, with code and message", body = stockhop::wire::ErrorBody), (status = 503, description = "OVERLOADED: busy, send again after Retry-After", body = stockhop::wire::ErrorBody)),
    security(("device_token" = []))
)]
async fn sync_items(
    State(state): State<AppState>,
    request: Request,
) -> Result<Json<SyncResponse>, AppError> {
    let (parts, body) = request.into_parts();
    let (token, device) = sync_device(&state, &parts.headers).await?;
    let bytes = read_body(&parts.headers, body).await?;
    let parsed = sync::parse_request(&bytes).map_err(refusal)?;
    if parsed.device_id != device.device_id {
        return Err(client(
            StatusCode::FORBIDDEN,
            codes::DEVICE_MISMATCH,
            "device_id does not match the token's device",
        ));
    }
    let keys: Vec<_> = parsed
        .items
        .iter()
        .map(|incoming| incoming.item.key)
        .collect();
    let occurred_at: Vec<_> = parsed
        .items
        .iter()
        .map(|incoming| incoming.item.occurred_at)
        .collect();
    let (guard, held) = state.ledger.in_flight.claim(&device.device_id, &keys);
    let (ran, device) = run_admitted(&state, device, token, parsed, (guard, held)).await?;
    // A filled gap with a long backlog behind it applies in chunks, each
    // its own transaction, after this answer; other requests go between.
    if !ran.parked.is_empty() {
        tokio::spawn(drain_parked(state.db.clone(), device, ran.parked));
    }
    state.ledger.metrics.observe(&ran.results, &occurred_at);
    Ok(Json(SyncResponse {
        server_time: wall_clock(),
        results: ran.results,
    }))
}

/// The token and device of a sync request: the device the admission gate
/// remembers for the token, else read, as for any request. Its turn checks
/// the token again, so a sync request goes to the writer once, in the
/// gate's order, and a revoked token is refused there.
async fn sync_device(state: &AppState, headers: &HeaderMap) -> Result<(String, Device), AppError> {
    let token = device_token(headers)?.to_owned();
    let hash = auth::token_hash(&token);
    if let Some(device) = state.ledger.admission.known_device(&hash) {
        return Ok((token, device));
    }
    let device = device_of(&state.db, headers).await?;
    state.ledger.admission.remember(hash, Some(device.clone()));
    Ok((token, device))
}

/// Runs a request's items in one transaction when the admission gate
/// gives it its turn (live requests first, backlog ones paced), after
/// checking its token again. The request's in-flight keys are held until
/// that work is done.
async fn run_admitted(
    state: &AppState,
    device: Device,
    token: String,
    parsed: sync::ParsedRequest,
    (guard, held): (InFlightGuard, Vec<bool>),
) -> Result<(sync::Ran, Device), AppError> {
    let class = admission::classify(
        parsed.sent_at,
        parsed
            .items
            .iter()
            .map(|incoming| incoming.item.occurred_at),
    );
    let turn = state
        .ledger
        .admission
        .admit(class)
        .await
        .map_err(|refused| AppError::Overloaded(refused.to_string()))?;
    let gate = state.ledger.admission.clone();
    let now = wall_clock();
    state
        .db
        .call_as(Caller::HandheldSync, move |conn| -> Result<_, AppError> {
            let hash = auth::token_hash(&token);
            let checked = devices::authenticate(conn, &token)?
                .filter(|checked| checked.device_id == device.device_id);
            gate.remember(hash, checked.clone());
            let Some(device) = checked else {
                return Err(unknown_device_token());
            };
            let ran = sync::run_parked(conn, &device, parsed.sent_at, &parsed.items, &held, now);
            // The keys and the next turn are released when the work is
            // done, even if the client went away.
            drop((guard, turn));
            Ok((ran?, device))
        })
        .await
}

/// Applies the parked drains of `device`'s `sessions` chunk by chunk until
/// none is left; a crash in between leaves a cursor parked, and the
/// device's next request for that session goes on from there.
async fn drain_parked(
    db: crate::store::db::Db,
    device: devices::Device,
    mut sessions: Vec<String>,
) {
    while !sessions.is_empty() {
        let device = device.clone();
        let parked = db
            .call_as(Caller::HandheldSync, move |conn| {
                sync::drain_parked(conn, &device, &sessions, wall_clock())
            })
            .await;
        match parked {
            Ok(still) => {
                sessions = still;
                tokio::task::yield_now().await;
            }
            Err(err) => {
                tracing::warn!(%err, "a parked drain stopped; the device's next request goes on with it");
                return;
            }
        }
    }
}

#[utoipa::path(
    get,
    path = "/v1/sessions/{session_id}/hops",
    tag = "ledger",
    description = "The hops a session of the asking device recorded, in applied order",
    params(("session_id" = String, Path)),
    responses((status = 200, description = "the session's hops", body = stockhop::wire::SessionHops), (status = "4XX", description = "refused, with code and message", body = stockhop::wire::ErrorBody)),
    security(("device_token" = []))
)]
async fn session_hops(
    State(state): State<AppState>,
    Path(session_id): Path<String>,
    DeviceCaller(device): DeviceCaller,
) -> Result<Json<SessionHops>, AppError> {
    let Ok(session_uuid) = uuid::Uuid::try_parse(&session_id) else {
        return Err(client(
            StatusCode::NOT_FOUND,
            codes::SESSION_NOT_FOUND,
            "no such session",
        ));
    };
    let session_id = session_uuid.to_string();
    state
        .db
        .call(move |conn| -> Result<_, AppError> {
            let session = sessions::find(conn, &session_id)?.ok_or_else(|| {
                client(
                    StatusCode::NOT_FOUND,
                    codes::SESSION_NOT_FOUND,
                    "no such session",
                )
            })?;
            if session.device_id != device.device_id {
                return Err(client(
                    StatusCode::FORBIDDEN,
                    wire_codes::SESSION_NOT_YOURS,
                    "this session belongs to another device",
                ));
            }
            Ok(Json(SessionHops {
                session_id: session_uuid,
                hops: hops::for_session(conn, &session_id)?,
            }))
        })
        .await
}

#[utoipa::path(
    post,
    path = "/v1/devices/{device_id}/heartbeat",
    tag = "ledger",
    description = "A handheld's heartbeat: its queue depth and oldest queued item",
    params(("device_id" = String, Path)),
    request_body(content = stockhop::wire::Heartbeat, description = "the device's queue as it stands", content_type = "application/json"),
    responses((status = 200, description = "the heartbeat period to keep", body = stockhop::wire::HeartbeatAck), (status = "4XX", description = "refused, with code and message", body = stockhop::wire::ErrorBody)),
    security(("device_token" = []))
)]
async fn heartbeat(
    State(state): State<AppState>,
    Path(device_id): Path<String>,
    DeviceCaller(device): DeviceCaller,
    request: Request,
) -> Result<Json<HeartbeatAck>, AppError> {
    let (parts, body) = request.into_parts();
    if device.device_id != device_id {
        return Err(client(
            StatusCode::FORBIDDEN,
            codes::DEVICE_MISMATCH,
            "a device reports only its own heartbeat",
        ));
    }
    let bytes = read_body(&parts.headers, body).await?;
    let beat: Heartbeat = serde_json::from_slice(&bytes).map_err(|err| {
        client(
            StatusCode::BAD_REQUEST,
            wire_codes::MALFORMED_REQUEST,
            err.to_string(),
        )
    })?;
    if beat.app_version.chars().count() > MAX_APP_VERSION_CHARS {
        return Err(client(
            StatusCode::BAD_REQUEST,
            wire_codes::MALFORMED_REQUEST,
            format!("app_version is limited to {MAX_APP_VERSION_CHARS} characters"),
        ));
    }
    let now = wall_clock();
    let device_id = device.device_id.clone();
    let (zone, closed) = state
        .db
        .call_as(Caller::Heartbeat, move |conn| -> Result<_, AppError> {
            // One transaction, one fsync: the latest row and the log agree.
            let tx = conn.transaction()?;
            devices::record_heartbeat(&tx, &device_id, &beat, now)?;
            crate::ledger::heartbeat_log::record(&tx, &device_id, &beat, now)?;
            tx.commit()?;
            let closed = crate::ledger::session_close::told_at_heartbeat(conn, &device_id, now)?;
            Ok((crate::site_clock::SiteZone::remembered(conn)?, closed))
        })
        .await?;
    Ok(Json(HeartbeatAck {
        server_time: now,
        heartbeat_period_ms: u64::try_from(device.profile.heartbeat_period_ms()).ok(),
        commissioned: Some(device.commissioned),
        time_zone: Some(zone.name().to_owned()),
        closed_sessions: Some(closed),
    }))
}

#[utoipa::path(
    post,
    path = "/v1/terminal/events",
    tag = "ledger",
    description = "A signed batch of terminal records from a remote listener (HMAC-SHA256 headers)",
    request_body(content = crate::terminal_wire::TerminalBatch, description = "the listener's records and terminal heartbeats", content_type = "application/json"),
    responses((status = 200, description = "one result per record", body = crate::terminal_wire::TerminalBatchResponse), (status = "4XX", description = "refused, with code and message", body = stockhop::wire::ErrorBody))
)]
async fn terminal_events(
    State(state): State<AppState>,
    request: Request,
) -> Result<Json<crate::terminal_wire::TerminalBatchResponse>, AppError> {
    let Some(secret) = state.ledger.terminal_secret.clone() else {
        return Err(client(
            StatusCode::NOT_FOUND,
            codes::NOT_FOUND,
            "this site takes no remote terminal batches",
        ));
    };
    let now = wall_clock();
    let bytes = read_signed_body(&secret, request, now).await?;
    let batch: TerminalBatch = serde_json::from_slice(&bytes).map_err(|err| {
        client(
            StatusCode::BAD_REQUEST,
            wire_codes::MALFORMED_REQUEST,
            err.to_string(),
        )
    })?;
    let response = state
        .db
        .call_as(
            Caller::ListenerForward,
            move |conn| -> Result<_, AppError> { Ok(terminal::ingest(conn, &batch, now)?) },
        )
        .await?;
    Ok(Json(response))
}

/// Reads the body of a request signed with `secret` (HMAC-SHA256 over
/// `"<timestamp>.<body>"`, [`SIGNATURE_HEADER`], [`TIMESTAMP_HEADER`]).
/// Everything that can be refused from the head is, before a byte of the
/// body is read: the signature headers, their age, the length (401, 411,
/// 413); then the body within [`SIGNED_BODY_DEADLINE`] (408) and its MAC
/// (401). Terminal batches and a central's site batches both come in here.
pub(crate) async fn read_signed_body(
    secret: &[u8],
    request: Request,
    now: stockhop::time::UnixMs,
) -> Result<Bytes, AppError> {
    let (signed, bytes) = read_signed_unverified(request, now).await?;
    signed.verify(secret, &bytes).map_err(|err| {
        client(
            StatusCode::UNAUTHORIZED,
            wire_codes::UNAUTHORIZED,
            err.to_string(),
        )
    })?;
    Ok(bytes)
}

/// [`read_signed_body`] without the MAC check: the signature headers
/// checked for form and freshness, and the body read under its deadline,
/// for a caller that picks the key from the body (a central, by site).
pub(crate) async fn read_signed_unverified(
    request: Request,
    now: stockhop::time::UnixMs,
) -> Result<(terminal::SignedHeaders, Bytes), AppError> {
    let (parts, body) = request.into_parts();
    let header_text = |name: &str| parts.headers.get(name).and_then(|v| v.to_str().ok());
    let signed = terminal::check_headers(
        header_text(TIMESTAMP_HEADER),
        header_text(SIGNATURE_HEADER),
        now,
    )
    .map_err(|err| {
        client(
            StatusCode::UNAUTHORIZED,
            wire_codes::UNAUTHORIZED,
            err.to_string(),
        )
    })?;
    if !parts.headers.contains_key(header::CONTENT_LENGTH) {
        return Err(client(
            StatusCode::LENGTH_REQUIRED,
            wire_codes::MALFORMED_REQUEST,
            "a signed batch declares its Content-Length",
        ));
    }
    let bytes = tokio::time::timeout(SIGNED_BODY_DEADLINE, read_body(&parts.headers, body))
        .await
        .map_err(|_| {
            client(
                StatusCode::REQUEST_TIMEOUT,
                wire_codes::MALFORMED_REQUEST,
                format!(
                    "the body did not arrive within {} s",
                    SIGNED_BODY_DEADLINE.as_secs()
                ),
            )
        })??;
    Ok((signed, bytes))
}
