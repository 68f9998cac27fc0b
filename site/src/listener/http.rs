//! The terminal HTTP port (default 0.0.0.0:8081): iclock/ADMS push and the
//! Zebra IoT Connector endpoint, one request per connection.
//!
//! This and [`super::tcp`] are the only code touching sockets. A connection
//! is read until its head and body are complete (a body over the frame cap
//! is refused from its `Content-Length`, before it is read), answered by
//! [`respond`], and closed. Every exchange is bounded in time and size.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

use super::framed::MAX_FRAME_BYTES;
use super::http_message::{
    parse_head, BodyLength, Head, Method, Parsed, Reply, Status, Version, CONTINUE,
};
use super::iclock::{self, Request, Table};
use super::queue::{NewRecord, RawBody, Write};
use super::rules::Capture;
use super::{unix_now, zebra, Intake};
use crate::terminal_wire::{TerminalEventKind, TerminalSource};

/// Connections served at once; more wait in the accept backlog. A site has
/// tens of terminals, each with one request in flight.
pub const MAX_CONNECTIONS: usize = 512;
/// Longest time a terminal may take to send one whole request, and to
/// take the reply.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// After the reply, how long the listener keeps reading what the terminal
/// still sends, so closing does not reset the connection under the reply.
pub const LINGER: Duration = Duration::from_millis(500);
/// Bytes read per socket read.
const READ_CHUNK: usize = 8 * 1024;

/// Accepts connections until `shutdown` turns true.
pub async fn serve(listener: TcpListener, intake: Intake, shutdown: watch::Receiver<bool>) {
    super::accept_loop(
        listener,
        MAX_CONNECTIONS,
        "http",
        shutdown,
        move |stream, _| {
            let intake = intake.clone();
            async move { connection(stream, &intake).await }
        },
    )
    .await;
}

async fn connection(mut stream: TcpStream, intake: &Intake) -> std::io::Result<()> {
    let request = tokio::time::timeout(REQUEST_TIMEOUT, read_request(&mut stream)).await;
    let (version, reply) = match request {
        Err(_) => return Ok(()),
        Ok(Err(err)) => return Err(err),
        Ok(Ok(Read::Closed)) => return Ok(()),
        Ok(Ok(Read::Refused(reply))) => (Version::Http11, reply),
        Ok(Ok(Read::Request { head, body })) => (head.version, respond(intake, &head, &body).await),
    };
    let answer = async {
        stream.write_all(&reply.encode(version, unix_now())).await?;
        stream.shutdown().await
    };
    match tokio::time::timeout(REQUEST_TIMEOUT, answer).await {
        Ok(written) => written?,
        Err(_) => return Ok(()),
    }
    let mut sink = [0u8; READ_CHUNK];
    let _ = tokio::time::timeout(LINGER, async {
        while matches!(stream.read(&mut sink).await, Ok(n) if n > 0) {}
    })
    .await;
    Ok(())
}

enum Read {
    Request { head: Head, body: Vec<u8> },
    Refused(Reply),
    Closed,
}

async fn read_request(stream: &mut TcpStream) -> std::io::Result<Read> {
    let mut buf = Vec::with_capacity(READ_CHUNK);
    let head = loop {
        match parse_head(&buf) {
            Ok(Parsed::Complete(head)) => break head,
            Ok(Parsed::Incomplete) => {}
            Err(err) => return Ok(Read::Refused(Reply::error(err.status(), &err.to_string()))),
        }
        if read_some(stream, &mut buf).await? == 0 {
            return Ok(Read::Closed);
        }
    };
    let mut body = buf.split_off(head.head_len);
    let too_long = matches!(head.body, BodyLength::Exact(n) if n > MAX_FRAME_BYTES);
    if head.expect_continue && head.version == Version::Http11 && body.is_empty() && !too_long {
        stream.write_all(CONTINUE).await?;
    }
    match head.body {
        BodyLength::Exact(n) if n > MAX_FRAME_BYTES => Ok(too_large()),
        BodyLength::Exact(n) => {
            while body.len() < n {
                if read_some(stream, &mut body).await? == 0 {
                    return Ok(Read::Closed);
                }
            }
            body.truncate(n);
            Ok(Read::Request { head, body })
        }
        BodyLength::UntilClose => {
            while read_some(stream, &mut body).await? > 0 {
                if body.len() > MAX_FRAME_BYTES {
                    return Ok(too_large());
                }
            }
            Ok(Read::Request { head, body })
        }
    }
}

fn too_large() -> Read {
    Read::Refused(Reply::error(
        Status::PayloadTooLarge,
        &format!("body over {MAX_FRAME_BYTES} bytes"),
    ))
}

async fn read_some(stream: &mut TcpStream, buf: &mut Vec<u8>) -> std::io::Result<usize> {
    let mut chunk = [0u8; READ_CHUNK];
    let n = stream.read(&mut chunk).await?;
    buf.extend_from_slice(&chunk[..n]);
    Ok(n)
}

/// Answers one complete request.
pub async fn respond(intake: &Intake, head: &Head, body: &[u8]) -> Reply {
    if head.path == zebra::ZEBRA_PATH {
        return respond_zebra(intake, head, body).await;
    }
    let request = match iclock::route(head.method, &head.path, &head.query) {
        Ok(request) => request,
        Err(iclock::RouteError::NotIclock) => return Reply::error(Status::NotFound, "not found"),
        Err(err @ iclock::RouteError::Method(_)) => {
            return Reply::error(Status::MethodNotAllowed, &err.to_string())
        }
        Err(err) => return Reply::error(Status::BadRequest, &err.to_string()),
    };
    let serial = request.serial().to_owned();
    if let Err(reason) = intake.config().allow.check(&serial) {
        tracing::warn!(%serial, reason, path = %head.path, "refused a terminal");
        return Reply::error(Status::Forbidden, "refused");
    }
    let seen = vec![(serial.clone(), TerminalSource::Iclock)];
    let raw = |kind: &str, reason: Option<String>| RawBody {
        device: serial.clone(),
        kind: kind.to_owned(),
        query: head.query.clone(),
        body: body.to_vec(),
        reason,
    };
    let (write, reply) = match &request {
        Request::Handshake { legacy, .. } => {
            let options = iclock::handshake_body(
                &serial,
                *legacy,
                &intake.config().handshake,
                intake.config().time_zone(&serial),
            );
            (
                Write {
                    seen,
                    ..Write::default()
                },
                Reply::ok(options),
            )
        }
        Request::GetRequest { .. } | Request::Ping { .. } => (
            Write {
                seen,
                ..Write::default()
            },
            Reply::ok(iclock::OK),
        ),
        Request::DeviceCmd { .. } => (
            Write {
                raw: vec![raw("devicecmd", None)],
                seen,
                ..Write::default()
            },
            Reply::ok(iclock::OK),
        ),
        Request::Upload {
            table: Table::AttLog,
            ..
        } => {
            let log = iclock::parse_attlog(body);
            let zone = intake.config().time_zone(&serial);
            let records = log
                .records
                .iter()
                .map(|record| NewRecord {
                    source: TerminalSource::Iclock,
                    kind: TerminalEventKind::Attendance,
                    capture: Capture {
                        device: serial.clone(),
                        subject: record.pin.clone(),
                        event_id: record.event_id.clone(),
                        occurred_at: zone.local_to_utc(record.local_time),
                    },
                    raw: record.raw.clone(),
                })
                .collect();
            let unreadable = log
                .unreadable
                .iter()
                .map(|line| {
                    tracing::warn!(%serial, reason = %line.reason, "unreadable ATTLOG line kept raw");
                    RawBody {
                        device: serial.clone(),
                        kind: "ATTLOG".to_owned(),
                        query: head.query.clone(),
                        body: line.raw.clone(),
                        reason: Some(line.reason.to_string()),
                    }
                })
                .collect();
            (
                Write {
                    records,
                    raw: unreadable,
                    seen,
                },
                Reply::ok(iclock::ok_count(log.lines())),
            )
        }
        Request::Upload {
            table: Table::OperLog,
            ..
        } => (
            Write {
                raw: vec![raw("OPERLOG", None)],
                seen,
                ..Write::default()
            },
            Reply::ok(iclock::ok_count(iclock::lines(body).count())),
        ),
        Request::Upload { table, .. } => (
            Write {
                raw: vec![raw(table.name(), None)],
                seen,
                ..Write::default()
            },
            Reply::ok(iclock::OK),
        ),
    };
    write_then(intake, write, reply).await
}

async fn respond_zebra(intake: &Intake, head: &Head, body: &[u8]) -> Reply {
    if head.method != Method::Post {
        return Reply::error(Status::MethodNotAllowed, "POST tag events here");
    }
    let Some(serial) =
        super::http_message::query_param(&head.query, "SN").filter(|s| !s.is_empty())
    else {
        return Reply::error(
            Status::BadRequest,
            "missing SN: configure the reader to post to /zebra?SN=<reader>",
        );
    };
    if let Err(reason) = intake.config().allow.check(&serial) {
        tracing::warn!(%serial, reason, "refused a reader");
        return Reply::error(Status::Forbidden, "refused");
    }
    let report = match zebra::parse_report(body) {
        Ok(report) => report,
        Err(err) => {
            tracing::warn!(%serial, %err, "unreadable tag report refused");
            return Reply::error(Status::BadRequest, &err.to_string());
        }
    };
    let records = report
        .tags
        .into_iter()
        .map(|event| NewRecord {
            source: TerminalSource::Zebra,
            kind: TerminalEventKind::TagRead,
            capture: Capture {
                device: serial.clone(),
                subject: event.epc,
                event_id: event.event_id,
                occurred_at: event.occurred_at,
            },
            raw: event.raw.into_bytes(),
        })
        .collect();
    let raw = report
        .others
        .into_iter()
        .map(|other| RawBody {
            device: serial.clone(),
            kind: format!("zebra {}", other.event_type).trim_end().to_owned(),
            query: head.query.clone(),
            body: other.raw.into_bytes(),
            reason: Some(other.reason),
        })
        .collect();
    let write = Write {
        records,
        raw,
        seen: vec![(serial, TerminalSource::Zebra)],
    };
    write_then(intake, write, Reply::ok(Vec::new())).await
}

/// Answers `reply` once `write` is durable, 503 when it could not be.
async fn write_then(intake: &Intake, write: Write, reply: Reply) -> Reply {
    match intake.write(write).await {
        Ok(_) => reply,
        Err(err) => {
            tracing::error!(%err, "terminal write failed; answered 503");
            Reply::error(Status::ServiceUnavailable, "try again")
        }
    }
}
