//! `GET /v1/hops` (the hop feed's pages) and `GET /v1/hops.csv` (a
//! period's hops as a spreadsheet opens them). On a central (a server that
//! takes site batches) both read every site's hops.

use axum::body::Body;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use stockhop::time::UnixMs;
use stockhop::wire::codes as wire_codes;

use crate::api::caller::AdminTokenCaller;
use crate::central;
use crate::error::{ApiQuery, AppError};
use crate::ledger::hop_feed::{self, FeedHop, FeedPage, DEFAULT_FEED_HOPS, MAX_FEED_HOPS};
use crate::ledger::LedgerError;
use crate::state::AppState;

pub(super) fn malformed(message: impl Into<String>) -> AppError {
    AppError::client(
        StatusCode::BAD_REQUEST,
        wire_codes::MALFORMED_REQUEST,
        message,
    )
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct FeedQuery {
    /// The `next` of the last page read; none from the start.
    pub after: Option<String>,
    /// Hops on the page, 1 to 1000 (100 when not given).
    #[param(value_type = Option<u32>, minimum = 1, maximum = 1000)]
    pub limit: Option<String>,
}

/// Whether this server reads every site's hops (a central) or its own.
fn central(state: &AppState) -> bool {
    state.ledger.central_secret.is_some()
}

/// The hop ledger in commit order, a page at a time.
#[utoipa::path(
    get,
    path = "/v1/hops",
    tag = "hops",
    params(FeedQuery),
    responses(
        (status = 200, description = "the hops after the cursor; resume from next", body = FeedPage),
        (status = 400, description = "a bad cursor or limit"),
        (status = 401, description = "no admin token"),
        (status = 409, body = stockhop::wire::ErrorBody, description = "CURSOR_AHEAD: the cursor is past the last hop (the ledger was restored from an earlier backup, so ids after its last hop, named in the message, will be given out again); resume from a cursor no later than it")
    ),
    security(("admin_token" = []))
)]
pub async fn feed(
    State(state): State<AppState>,
    ApiQuery(query): ApiQuery<FeedQuery>,
    AdminTokenCaller(_): AdminTokenCaller,
) -> Result<Json<FeedPage>, AppError> {
    let after = hop_feed::parse_cursor(query.after.as_deref())
        .ok_or_else(|| malformed(format!(
            "after {:?} is not a cursor: give the `next` of the page before (a whole number), or leave it out to start from the first hop",
            query.after.as_deref().unwrap_or_default()
        )))?;
    let limit = match query.limit.as_deref() {
        None => DEFAULT_FEED_HOPS,
        Some(text) => text
            .parse()
            .ok()
            .filter(|limit| (1..=MAX_FEED_HOPS).contains(limit))
            .ok_or_else(|| malformed(format!("limit is 1 to {MAX_FEED_HOPS}")))?,
    };
    let central = central(&state);
    let page = state
        .db
        .call(move |conn| -> Result<_, AppError> {
            let page = if central {
                central::feed::page(conn, after, limit)?
            } else {
                hop_feed::page(conn, after, limit)?
            };
            if page.hops.is_empty() && after > 0 {
                let last = if central {
                    central::feed::last_id(conn)?
                } else {
                    hop_feed::last_id(conn)?
                };
                if after > last {
                    return Err(LedgerError::Refused(hop_feed::cursor_ahead(after, last)).into());
                }
            }
            Ok(page)
        })
        .await?;
    Ok(Json(page))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct CsvQuery {
    /// RFC 3339: the first instant of the period (recorded at).
    #[param(required = true)]
    pub from: Option<String>,
    /// RFC 3339: the end of the period, not included.
    #[param(required = true)]
    pub to: Option<String>,
}

/// A period's hops (by when the site recorded them) as CSV, in commit
/// order; cells a spreadsheet would run as a formula begin with `'`.
#[utoipa::path(
    get,
    path = "/v1/hops.csv",
    tag = "hops",
    params(CsvQuery),
    responses(
        (status = 200, description = "the period's hops", body = String, content_type = "text/csv"),
        (status = 400, description = "from or to is missing or not RFC 3339, or to is not after from"),
        (status = 401, description = "no admin token")
    ),
    security(("admin_token" = []))
)]
pub async fn csv(
    State(state): State<AppState>,
    ApiQuery(query): ApiQuery<CsvQuery>,
    AdminTokenCaller(_): AdminTokenCaller,
) -> Result<Response, AppError> {
    // Checked here rather than by the query's extractor, so a missing
    // bound gets the same JSON error as a bad one.
    let (from, to) = period(query.from.as_deref(), query.to.as_deref())?;
    let central = central(&state);
    let db = state.db.clone();
    let header_row = csv_line(hop_feed::CSV_COLUMNS.iter().map(|c| c.to_string()))?;
    // The export walks the ledger a step at a time, each step its own
    // short read, and streams each step's rows as it goes.
    let steps = futures_util::stream::unfold(Some(0_i64), move |after| {
        let db = db.clone();
        async move {
            let after = after?;
            let step = db
                .call(move |conn| -> Result<(Vec<FeedHop>, bool), AppError> {
                    Ok(if central {
                        central::feed::scan(conn, after, from, to)?
                    } else {
                        hop_feed::scan(conn, after, from, to)?
                    })
                })
                .await;
            Some(match step {
                Ok((hops, more)) => {
                    let mut text = Vec::new();
                    for hop in &hops {
                        match csv_line(hop_feed::csv_record(hop)) {
                            Ok(line) => text.extend(line),
                            Err(err) => return Some((Err(err), None)),
                        }
                    }
                    let next = more.then_some(after + hop_feed::CSV_SCAN_IDS);
                    (Ok(text), next)
                }
                Err(err) => (Err(err), None),
            })
        }
    });
    Ok(csv_response(header_row, steps))
}

/// The period `from`..`to`, checked: both RFC 3339, `to` after `from`.
pub(super) fn period(from: Option<&str>, to: Option<&str>) -> Result<(UnixMs, UnixMs), AppError> {
    let instant = |name: &str, text: Option<&str>| {
        let text = text.ok_or_else(|| {
            malformed(format!(
                "{name} is required: the period is from=…&to=…, each an RFC 3339 instant"
            ))
        })?;
        UnixMs::parse_rfc3339(text).map_err(|err| {
            // `+01:00` in a URL reads as ` 01:00`: a query string's `+` is
            // a space.
            let plus = if text.contains(' ') {
                "; a + in a query string is read as a space: write an offset's + as %2B"
            } else {
                ""
            };
            malformed(format!(
                "{name} is not an RFC 3339 instant ({err}): write it with its zone, as 2026-03-01T06:00:00Z or 2026-03-01T07:00:00%2B01:00{plus}"
            ))
        })
    };
    let from = instant("from", from)?;
    let to = instant("to", to)?;
    if to <= from {
        return Err(malformed("to must be after from"));
    }
    Ok((from, to))
}

/// A CSV export's answer: its header row, then the lines each step of
/// `steps` gives, streamed as they are read (the hop and attendance
/// exports share it).
pub(super) fn csv_response(
    header_row: Vec<u8>,
    steps: impl futures_util::Stream<Item = Result<Vec<u8>, AppError>> + Send + 'static,
) -> Response {
    let header = futures_util::stream::once(async move { Ok(header_row) });
    // Fused: a stream that has ended answers "ended" again when asked,
    // rather than panicking as `unfold` does; the compression layer asks
    // once more after the last chunk when it gzips the answer.
    let body = futures_util::StreamExt::fuse(futures_util::StreamExt::chain(header, steps));
    let body = futures_util::StreamExt::map(body, |chunk: Result<Vec<u8>, AppError>| {
        chunk.map_err(|err| std::io::Error::other(err.to_string()))
    });
    (
        [
            (header::CONTENT_TYPE, "text/csv; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        Body::from_stream(body),
    )
        .into_response()
}

pub(super) fn csv_line(record: impl IntoIterator<Item = String>) -> Result<Vec<u8>, AppError> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer
        .write_record(record)
        .map_err(|err| AppError::Internal(err.to_string()))?;
    writer
        .into_inner()
        .map_err(|err| AppError::Internal(err.to_string()))
}
