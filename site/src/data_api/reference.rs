//! `PUT /v1/admin/reference/{kind}`: reference data as the importer takes
//! it, CSV (`text/csv`, the file `stockhop-site import` reads) or a JSON
//! array of the same fields (`application/json`), through the same staged
//! import ([`crate::ledger::import::run`]): the site keeps syncing while it
//! runs, and readers see all of it or none of it. The body is written to
//! an unnamed temporary file in the data directory as it arrives (gone with
//! the request, or the process) and the import reads it from there: three
//! 200 MB imports at once held 994 MB of memory when bodies were read into
//! it.

use std::io::{Read, Seek, SeekFrom, Write};

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use http_body_util::BodyExt;
use serde::Serialize;
use stockhop::wire::codes as wire_codes;

use crate::api::caller::AdminTokenCaller;
use crate::error::AppError;
use crate::ledger::import::{self, ImportError, Kind, LineError, NotCsv, Source};
use crate::ledger::wall_clock;
use crate::state::AppState;

/// Largest body an import may carry: a million units as CSV is about
/// 60 MB, as JSON about twice that.
pub const MAX_IMPORT_BODY_BYTES: usize = 256 * 1024 * 1024;

/// Chunks of an import body in flight between the connection and the
/// temporary file: a client faster than the disk waits for it, rather than
/// the site holding its body in memory.
const SPOOL_QUEUE_CHUNKS: usize = 8;

/// The code of a refused import (422).
pub const IMPORT_INVALID: &str = "IMPORT_INVALID";
/// The code of a kind of reference data the site does not take (404).
pub const UNKNOWN_REFERENCE: &str = "UNKNOWN_REFERENCE";

/// What an import did.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Imported {
    /// Rows in the file.
    pub rows: usize,
    /// Rows that added or changed something.
    pub changed: usize,
}

/// Why nothing was imported: each bad row with its line (for JSON, the
/// element's position from 1; line 1 of a CSV is its header).
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ImportRefused {
    /// `IMPORT_INVALID`.
    pub code: &'static str,
    pub message: String,
    pub errors: Vec<ImportLineError>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ImportLineError {
    pub line: u64,
    pub message: String,
}

impl From<LineError> for ImportLineError {
    fn from(error: LineError) -> ImportLineError {
        ImportLineError {
            line: error.line,
            message: error.message,
        }
    }
}

/// The kind a path names.
fn kind(name: &str) -> Result<Kind, AppError> {
    match name {
        "bins" => Ok(Kind::Bins),
        "units" => Ok(Kind::Units),
        "grns" => Ok(Kind::Grns),
        "manifests" => Ok(Kind::Manifests),
        "operators" => Ok(Kind::Operators),
        "skus" => Ok(Kind::Skus),
        other => Err(AppError::client(
            StatusCode::NOT_FOUND,
            UNKNOWN_REFERENCE,
            format!("no reference data {other:?}: bins, units, grns, manifests, operators or skus"),
        )),
    }
}

enum Format {
    Csv,
    Json,
}

fn format(headers: &HeaderMap) -> Result<Format, AppError> {
    let media = headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .map(|value| value.trim().to_ascii_lowercase());
    match media.as_deref() {
        Some("text/csv") => Ok(Format::Csv),
        Some("application/json") => Ok(Format::Json),
        _ => Err(AppError::client(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            wire_codes::MALFORMED_REQUEST,
            "send the rows as text/csv or application/json",
        )),
    }
}

/// Imports reference data.
#[utoipa::path(
    put,
    path = "/v1/admin/reference/{kind}",
    tag = "admin",
    params(("kind" = String, Path, description = "bins, units, grns, manifests, operators or skus")),
    request_body(
        description = "CSV with a header row (bins: bin,zone,location; units: epc,code,sku,state,bin, optionally gtin,serial,lot,expiry; grns: grn,qc,sku,expected; manifests: manifest,state,epc, optionally sscc; operators: badge,name, optionally language (BCP 47); skus: sku,gtin), or a JSON array of objects with the same fields and no others",
        content(
            (String = "text/csv"),
            (Vec<serde_json::Value> = "application/json")
        )
    ),
    responses(
        (status = 200, description = "imported, all rows at once", body = Imported),
        (status = 400, description = "a JSON body that is not an array of rows, or not JSON"),
        (status = 401, description = "no admin token"),
        (status = 403, description = "a device's token"),
        (status = 404, description = "no such kind of reference data"),
        (status = 413, description = "body over 256 MiB"),
        (status = 415, description = "neither CSV nor JSON"),
        (status = 422, description = "bad rows: nothing imported", body = ImportRefused)
    ),
    security(("admin_token" = []))
)]
pub async fn put_reference(
    State(state): State<AppState>,
    Path(name): Path<String>,
    headers: HeaderMap,
    AdminTokenCaller(admin): AdminTokenCaller,
    body: Body,
) -> Result<Response, AppError> {
    let kind = kind(&name)?;
    let format = format(&headers)?;
    let too_large = || {
        AppError::client(
            StatusCode::PAYLOAD_TOO_LARGE,
            wire_codes::BODY_TOO_LARGE,
            format!("an import is limited to {MAX_IMPORT_BODY_BYTES} bytes"),
        )
    };
    if crate::net::body::declared_over(&headers, MAX_IMPORT_BODY_BYTES) {
        return Err(too_large());
    }
    let spooled = spool(body, state.db.data_dir(), MAX_IMPORT_BODY_BYTES, too_large).await?;
    // One line of a header's fields and more than a row's beside: a file
    // whose line ends were lost on the way (`curl -d @FILE` drops them), which would
    // otherwise be told as a header that names no such column.
    if matches!(format, Format::Csv)
        && !spooled.line_ends
        && spooled.commas >= 2 * kind.columns().len()
    {
        return Ok(refused(vec![ImportLineError {
            line: 1,
            message: "the body is one line with more fields than a header: its line ends \
                      were lost on the way (curl -d drops them); send the file with \
                      --data-binary @FILE"
                .to_owned(),
        }]));
    }
    let size = spooled.bytes;
    let db = state.db.clone();
    let file = format!("PUT {}", kind.name());
    // A large import runs for minutes: the log says it began, not only
    // how it ended.
    tracing::info!(
        kind = kind.name(),
        bytes = size,
        %admin,
        "an import through the admin API began"
    );
    // The outcome is logged where the import runs: a client that gives up
    // on a long import does not stop it, and the log still says how it
    // ended.
    let by = admin.clone();
    let outcome = tokio::task::spawn_blocking(move || -> Result<_, AppError> {
        let body = std::io::BufReader::new(spooled.file);
        let source = match format {
            Format::Csv => Source::Csv(body),
            Format::Json => Source::Json(json_rows(kind, body)?),
        };
        let outcome = import::run(&db, kind, &file, source, &wall_clock);
        match &outcome {
            Ok(summary) => tracing::info!(
                kind = kind.name(),
                rows = summary.rows,
                changed = summary.changed,
                admin = %by,
                "reference data imported through the admin API"
            ),
            Err(ImportError::Invalid { errors, .. }) => tracing::info!(
                kind = kind.name(),
                errors = errors.len(),
                admin = %by,
                "an import through the admin API was refused: nothing imported"
            ),
            Err(ImportError::NotCsv { .. }) => tracing::info!(
                kind = kind.name(),
                admin = %by,
                "an import through the admin API was refused: not CSV"
            ),
            Err(err) => tracing::warn!(
                kind = kind.name(),
                admin = %by,
                %err,
                "an import through the admin API failed"
            ),
        }
        Ok(outcome)
    })
    .await
    .map_err(|err| AppError::Internal(err.to_string()))??;
    match outcome {
        Ok(summary) => Ok(Json(Imported {
            rows: summary.rows,
            changed: summary.changed,
        })
        .into_response()),
        Err(ImportError::Invalid { errors, .. }) => Ok(refused(
            errors.into_iter().map(ImportLineError::from).collect(),
        )),
        Err(ImportError::NotCsv { found, .. }) => Ok(refused(vec![ImportLineError {
            line: 1,
            message: not_csv(kind, found),
        }])),
        // Decided but not all applied: the site finishes it, and the same
        // import again (a retry after a 503) changes nothing twice.
        Err(ImportError::Sqlite { source, .. } | ImportError::Decided { source, .. }) => {
            Err(AppError::from(source))
        }
        Err(ImportError::File { reason, .. }) => Err(AppError::Internal(reason)),
    }
}

/// The imports under way: how far one is that a client stopped waiting
/// for (it goes on), or that the command line runs. One not listed has
/// ended: applied whole if it was decided, else nothing of it imported.
#[utoipa::path(
    get,
    path = "/v1/admin/imports",
    tag = "admin",
    responses(
        (status = 200, description = "the imports under way, oldest first", body = Vec<import::Underway>),
        (status = 401, description = "no admin token")
    ),
    security(("admin_token" = []))
)]
pub async fn imports_underway(
    State(state): State<AppState>,
    AdminTokenCaller(_): AdminTokenCaller,
) -> Result<Json<Vec<import::Underway>>, AppError> {
    let underway = state
        .db
        .call(|conn| -> Result<_, AppError> { Ok(import::underway(conn)?) })
        .await?;
    Ok(Json(underway))
}

/// The rows of a JSON body: an array of objects. What else it is, and what
/// to send instead, is said in words (serde's own text names types, not
/// the fix). The rows are read from `body` as they are parsed; only they,
/// not the body's text, are held.
fn json_rows<R: Read + Seek>(kind: Kind, mut body: R) -> Result<Vec<import::JsonRow>, AppError> {
    let malformed = |message: String| {
        AppError::client(
            StatusCode::BAD_REQUEST,
            wire_codes::MALFORMED_REQUEST,
            message,
        )
    };
    let unreadable = |err: std::io::Error| AppError::Internal(format!("reading the import: {err}"));
    let fields = kind.columns().join(", ");
    // A byte order mark, as some tools write before JSON too, is skipped
    // as it is before CSV.
    let mut start = [0u8; 3];
    let read = read_up_to(&mut body, &mut start).map_err(unreadable)?;
    let from = if start[..read] == *b"\xEF\xBB\xBF" {
        3
    } else {
        0
    };
    let rewind = |body: &mut R| body.seek(SeekFrom::Start(from)).map_err(unreadable);
    rewind(&mut body)?;
    if let Ok(rows) = serde_json::from_reader::<_, Vec<import::JsonRow>>(&mut body) {
        return Ok(rows);
    }
    rewind(&mut body)?;
    match serde_json::from_reader::<_, serde_json::Value>(&mut body) {
        Ok(serde_json::Value::Array(rows)) => Ok(rows.into_iter().map(Into::into).collect()),
        Ok(serde_json::Value::Object(_)) => Err(malformed(format!(
            "the body is one JSON object: send an array of them, [{{…}}, {{…}}], \
             each with the fields {fields}"
        ))),
        Ok(_) => Err(malformed(format!(
            "the body is JSON but not an array: send an array of objects with the fields {fields}"
        ))),
        Err(err) => {
            rewind(&mut body)?;
            let starts = std::io::BufReader::new(&mut body)
                .bytes()
                .map_while(Result::ok)
                .find(|byte| !byte.is_ascii_whitespace());
            let hint = match starts {
                Some(b'[' | b'{') | None => String::new(),
                Some(_) => "; a CSV file goes as Content-Type: text/csv".to_owned(),
            };
            Err(malformed(format!("the body is not JSON ({err}){hint}")))
        }
    }
}

/// Reads into `buf` until it is full or the input ends; how many bytes.
fn read_up_to(input: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match input.read(&mut buf[filled..])? {
            0 => break,
            n => filled += n,
        }
    }
    Ok(filled)
}

/// A request body written to a temporary file, read back from its start.
struct Spooled {
    file: std::fs::File,
    bytes: usize,
    /// Whether any line end was in it.
    line_ends: bool,
    /// Its commas.
    commas: usize,
}

/// Writes `body` to an unnamed temporary file in `dir` as it arrives (on
/// a blocking thread; the connection waits for the disk, never the other
/// way), refusing it with `too_large` past `limit` bytes.
async fn spool(
    body: Body,
    dir: &std::path::Path,
    limit: usize,
    too_large: impl Fn() -> AppError,
) -> Result<Spooled, AppError> {
    let spool_failed = |err: std::io::Error| {
        if err.kind() == std::io::ErrorKind::StorageFull {
            AppError::storage_full()
        } else {
            AppError::Internal(format!("writing the import to a temporary file: {err}"))
        }
    };
    let file = tempfile::tempfile_in(dir).map_err(spool_failed)?;
    let (chunks, mut arriving) =
        tokio::sync::mpsc::channel::<axum::body::Bytes>(SPOOL_QUEUE_CHUNKS);
    let writer = tokio::task::spawn_blocking(move || -> std::io::Result<std::fs::File> {
        let mut file = file;
        while let Some(chunk) = arriving.blocking_recv() {
            file.write_all(&chunk)?;
        }
        file.seek(SeekFrom::Start(0))?;
        Ok(file)
    });
    let mut body = body;
    let (mut bytes, mut line_ends, mut commas) = (0usize, false, 0usize);
    let read = async {
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|err| {
                AppError::client(
                    StatusCode::BAD_REQUEST,
                    wire_codes::MALFORMED_REQUEST,
                    format!("the body did not arrive whole: {err}"),
                )
            })?;
            let Ok(data) = frame.into_data() else {
                continue;
            };
            bytes += data.len();
            if bytes > limit {
                return Err(too_large());
            }
            line_ends |= data.iter().any(|byte| matches!(byte, b'\n' | b'\r'));
            commas += data.iter().filter(|byte| **byte == b',').count();
            if chunks.send(data).await.is_err() {
                // The writer stopped: its error is told below.
                break;
            }
        }
        Ok(())
    }
    .await;
    drop(chunks);
    let file = writer
        .await
        .map_err(|err| AppError::Internal(err.to_string()))?
        .map_err(spool_failed);
    read?;
    Ok(Spooled {
        file: file?,
        bytes,
        line_ends,
        commas,
    })
}

/// The 422 of an import refused for `errors`: nothing was imported.
fn refused(errors: Vec<ImportLineError>) -> Response {
    (
        StatusCode::UNPROCESSABLE_ENTITY,
        Json(ImportRefused {
            code: IMPORT_INVALID,
            message: match errors.len() {
                1 => "1 error in the file: nothing was imported".to_owned(),
                n if n >= import::MAX_IMPORT_ERRORS => format!(
                    "the first {n} errors in the file: nothing was imported; \
                     the import stopped at them and did not check the rest"
                ),
                n => format!("{n} errors in the file: nothing was imported"),
            },
            errors,
        }),
    )
        .into_response()
}

/// What a body sent as `text/csv` that is plainly not CSV is told (the
/// import finds it, [`NotCsv`]): JSON is sent right with its own media
/// type; a file separated by `;` or tabs is told as the command line tells
/// it.
fn not_csv(kind: Kind, found: NotCsv) -> String {
    match found {
        NotCsv::Json => {
            "the body is JSON, sent as text/csv: send it with Content-Type: application/json"
                .to_owned()
        }
        NotCsv::Separated(_) | NotCsv::Utf16 => found.message(kind),
    }
}
