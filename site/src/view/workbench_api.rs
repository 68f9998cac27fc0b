//! The decision workbench over HTTP (admin token or signed-in session):
//! `GET /v1/site/decisions` lists what waits with its context,
//! `POST /v1/site/decisions/{id}` settles one (`{"action":"dismiss" |
//! "correct","note":…}`), `GET /v1/site/decision-log` reads the audit log.

use axum::extract::{Path, Request, State};
use axum::routing::{get, post};
use axum::{Json, Router};

use super::request::{from_queue, json_body};
use super::workbench::{self, Decision, Settle};
use crate::api::caller::{AdminCaller, ChangingAdminCaller};
use crate::error::AppError;
use crate::ledger::decision_log::{self, actions, Entry, Subject};
use crate::ledger::{codes, savepoint, wall_clock, LedgerError, Refusal};
use crate::listener::queue::{self, DeadLetter};
use crate::state::AppState;
use crate::store::sql::retry_conflicts;

/// Dead letters read to find the unsettled ones among them: the newest
/// this many (each settled one is skipped, so the window is wider than
/// the list).
pub const MAX_DEAD_LETTERS_READ: usize = 1000;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/site/decisions", get(list))
        .route("/v1/site/decisions/{id}", post(settle))
        .route("/v1/site/decision-log", get(log))
}

#[derive(serde::Serialize, utoipa::ToSchema)]
struct Open {
    decisions: Vec<Decision>,
}

#[derive(serde::Serialize, utoipa::ToSchema)]
struct Settled {
    decision: Entry,
}

#[derive(serde::Serialize, utoipa::ToSchema)]
struct Log {
    entries: Vec<Entry>,
}

async fn dead_letters(state: &AppState) -> Result<Vec<DeadLetter>, AppError> {
    state
        .db
        .read_local(|conn| queue::dead_letters(conn, MAX_DEAD_LETTERS_READ).map_err(from_queue))
        .await
}

#[utoipa::path(
    get,
    path = "/v1/site/decisions",
    tag = "view",
    description = "The decisions that wait, each with its context",
    responses((status = 200, description = "the decisions that wait", body = Open), (status = "4XX", description = "refused, with code and message")),
    security(("admin_token" = []))
)]
async fn list(
    State(state): State<AppState>,
    AdminCaller(_): AdminCaller,
) -> Result<Json<Open>, AppError> {
    let dead = dead_letters(&state).await?;
    let decisions = state
        .db
        .read(move |conn| -> Result<_, AppError> { Ok(workbench::open(conn, &dead)?) })
        .await?;
    Ok(Json(Open { decisions }))
}

#[utoipa::path(
    get,
    path = "/v1/site/decision-log",
    tag = "view",
    description = "The newest settled decisions, newest first",
    responses((status = 200, description = "the settlements, newest first", body = Log), (status = "4XX", description = "refused, with code and message")),
    security(("admin_token" = []))
)]
async fn log(
    State(state): State<AppState>,
    AdminCaller(_): AdminCaller,
) -> Result<Json<Log>, AppError> {
    let entries = state
        .db
        .read(|conn| -> Result<_, AppError> {
            Ok(decision_log::newest(conn, decision_log::MAX_LOG_ENTRIES)?)
        })
        .await?;
    Ok(Json(Log { entries }))
}

#[utoipa::path(
    post,
    path = "/v1/site/decisions/{id}",
    tag = "view",
    description = "Settles a decision: corrects or dismisses it, with a note",
    params(("id" = String, Path)),
    request_body(content = Settle, description = "action: dismiss or correct; note: up to 500 characters", content_type = "application/json"),
    responses((status = 200, description = "the log entry", body = Settled), (status = "4XX", description = "refused, with code and message")),
    security(("admin_token" = []))
)]
async fn settle(
    State(state): State<AppState>,
    Path(id): Path<String>,
    // Who asks first: a body is read only for an admin.
    ChangingAdminCaller(caller): ChangingAdminCaller,
    request: Request,
) -> Result<Json<Settled>, AppError> {
    let (parts, body) = request.into_parts();
    let settle: Settle = json_body(&parts.headers, body).await?;
    let decision = settle_as(&state, caller.admin().to_owned(), id, settle).await?;
    Ok(Json(Settled { decision }))
}

fn not_open(id: &str, settled: bool) -> LedgerError {
    if settled {
        LedgerError::Refused(Refusal::new(
            409,
            codes::ALREADY_SETTLED,
            format!("decision {id} is settled already"),
        ))
    } else {
        LedgerError::Refused(Refusal::new(
            404,
            codes::NOT_FOUND,
            format!("no decision {id} waits"),
        ))
    }
}

/// Settles decision `id` for `admin`: the open
/// decision is read again, corrected or dismissed and logged in one
/// transaction (run again on a serialization conflict). A terminal
/// record's correction puts it back in the listener's queue first: sent
/// twice, it is still recorded once by its key.
async fn settle_as(
    state: &AppState,
    admin: String,
    id: String,
    settle: Settle,
) -> Result<Entry, AppError> {
    workbench::check(&settle)?;
    let subject = Subject::parse(&id).ok_or_else(|| not_open(&id, false))?;
    let now = wall_clock();
    // A terminal record lives in the listener's queue: it must be a dead
    // letter nobody settled before it is put back there.
    let terminal = match subject {
        Subject::Terminal(seq) => {
            let dead = dead_letters(state).await?;
            let decision_id = id.clone();
            let decision = state
                .db
                .call(move |conn| -> Result<_, LedgerError> {
                    match workbench::find_open(conn, &decision_id, &dead)? {
                        Some(decision) => Ok(decision),
                        None => Err(not_open(
                            &decision_id,
                            decision_log::is_settled(conn, &decision_id)?,
                        )),
                    }
                })
                .await?;
            if settle.action == actions::CORRECT {
                state
                    .db
                    .call_local(move |conn| queue::requeue_dead(conn, seq).map_err(from_queue))
                    .await?;
            }
            Some(decision)
        }
        _ => None,
    };
    let entry = state
        .db
        .call(move |conn| -> Result<_, LedgerError> {
            retry_conflicts(|| {
                savepoint(conn, |conn| {
                    // Read inside the transaction: another settlement may
                    // have landed since the page showed it.
                    let current = match &terminal {
                        Some(decision) => {
                            (!decision_log::is_settled(conn, &id)?).then(|| decision.clone())
                        }
                        None => workbench::find_open(conn, &id, &[])?,
                    };
                    let Some(current) = current else {
                        return Err(not_open(&id, decision_log::is_settled(conn, &id)?));
                    };
                    workbench::settle(conn, &current, &settle, &admin, now)
                })
            })
        })
        .await?;
    tracing::info!(
        decision = %entry.decision_id,
        action = %entry.action,
        admin = %entry.settled_by,
        hops = entry.hop_ids.len(),
        "decision settled"
    );
    Ok(entry)
}
