//! The commands the site hands its iclock terminals, as the view and
//! scripts see them: `POST /v1/site/terminals/{serial}/backfill` queues a
//! backfill (the view's button, `stockhop-site terminal backfill` on the
//! command line), `GET /v1/site/terminals/{serial}/commands` lists what a
//! terminal was asked and how it answered. The commands are kept beside
//! the listener's queue ([`crate::listener::queue`]), read on the site's
//! own SQLite file.

use axum::extract::{Path, Request, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use stockhop::time::UnixMs;
use stockhop::wire::codes as wire_codes;

use super::request::{from_queue, json_body};
use crate::api::caller::{AdminCaller, ChangingAdminCaller};
use crate::error::AppError;
use crate::ledger::wall_clock;
use crate::listener::command::BackfillError;
use crate::listener::queue::{self, TerminalCommand};
use crate::state::AppState;

/// The routes, merged into the view's.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/site/terminals/{serial}/backfill", post(backfill))
        .route("/v1/site/terminals/{serial}/commands", get(commands))
}

/// A backfill's range: RFC 3339 instants, read by [`instant`] so a bad
/// one is told by its field's name with an example.
#[derive(serde::Deserialize, utoipa::ToSchema)]
pub struct BackfillRange {
    /// The first instant of the range (RFC 3339).
    #[schema(value_type = String, format = DateTime)]
    pub from: String,
    /// The end of the range (RFC 3339).
    #[schema(value_type = String, format = DateTime)]
    pub to: String,
}

/// A range's `field` as an instant, or a 400 naming it.
fn instant(field: &str, text: &str) -> Result<UnixMs, AppError> {
    UnixMs::parse_rfc3339(text).map_err(|err| {
        AppError::client(
            StatusCode::BAD_REQUEST,
            wire_codes::MALFORMED_REQUEST,
            format!("{field} {text:?} is not an RFC 3339 instant ({err}): write it with its zone, as 2026-03-01T06:00:00Z or 2026-03-01T07:00:00+01:00"),
        )
    })
}

/// A terminal's commands, newest first.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct CommandList {
    pub commands: Vec<TerminalCommand>,
}

fn backfill_refused(err: BackfillError) -> AppError {
    match err {
        BackfillError::Reversed { .. } | BackfillError::Ahead { .. } => AppError::client(
            StatusCode::BAD_REQUEST,
            wire_codes::MALFORMED_REQUEST,
            err.to_string(),
        ),
        BackfillError::UnknownSerial(_) => AppError::client(
            StatusCode::NOT_FOUND,
            crate::ledger::codes::NOT_FOUND,
            err.to_string(),
        ),
        BackfillError::Queue(err) => from_queue(err),
    }
}

#[utoipa::path(
    post,
    path = "/v1/site/terminals/{serial}/backfill",
    operation_id = "terminal_backfill",
    tag = "view",
    description = "Asks an iclock terminal for its attendance records of a time range again (after a listener outage or a lost batch): the command is handed out on the terminal's next poll, and the records arrive as ordinary uploads, those the site already keeps changing nothing. 400 for a reversed range or one that starts after now, 404 for a serial no iclock terminal has polled the listener with",
    params(("serial" = String, Path, description = "the terminal's serial number (SN)")),
    request_body(content = BackfillRange, content_type = "application/json"),
    responses((status = 201, description = "the command queued", body = TerminalCommand), (status = "4XX", description = "refused, with code and message")),
    security(("admin_token" = []))
)]
async fn backfill(
    State(state): State<AppState>,
    Path(serial): Path<String>,
    ChangingAdminCaller(_): ChangingAdminCaller,
    request: Request,
) -> Result<(StatusCode, Json<TerminalCommand>), AppError> {
    let (parts, body) = request.into_parts();
    let range: BackfillRange = json_body(&parts.headers, body).await?;
    let (from, to) = (instant("from", &range.from)?, instant("to", &range.to)?);
    let now = wall_clock();
    let queued = state
        .db
        .call_local(move |conn| queue::queue_backfill(conn, &serial, from, to, now))
        .await
        .map_err(backfill_refused)?;
    Ok((StatusCode::CREATED, Json(queued)))
}

#[utoipa::path(
    get,
    path = "/v1/site/terminals/{serial}/commands",
    operation_id = "terminal_commands",
    tag = "view",
    description = "The commands handed (or to be handed) to a terminal, newest first, at most 200: pending until its next poll, sent once handed out (again after 10 minutes without an answer), done (Return=0, or -4 for no records in the range) or failed (any other Return). 404 for a serial no iclock terminal has polled the listener with",
    params(("serial" = String, Path, description = "the terminal's serial number (SN)")),
    responses((status = 200, description = "the commands", body = CommandList), (status = "4XX", description = "refused, with code and message")),
    security(("admin_token" = []))
)]
async fn commands(
    State(state): State<AppState>,
    Path(serial): Path<String>,
    AdminCaller(_): AdminCaller,
) -> Result<Json<CommandList>, AppError> {
    let commands = state
        .db
        .read_local(move |conn| queue::commands(conn, &serial))
        .await
        .map_err(backfill_refused)?;
    Ok(Json(CommandList { commands }))
}
