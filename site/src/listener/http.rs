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
use super::http_message::query_param;
use super::http_message::{
    parse_head, BodyLength, Head, Method, Parsed, Reply, Status, Version, CONTINUE,
};
use super::iclock::{self, Request, Table};
use super::queue::{NewRecord, RawBody, Write};
use super::rules::Capture;
use super::zone::UtcOffset;
use super::{push_acc, unix_now, unknown, zebra, Intake};
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
    let request = tokio::time::timeout(REQUEST_TIMEOUT, read_request(&mut stream, intake)).await;
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

async fn read_request(stream: &mut TcpStream, intake: &Intake) -> std::io::Result<Read> {
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
    let cap = body_cap(intake, &head);
    let too_long = matches!(head.body, BodyLength::Exact(n) if n > cap);
    if head.expect_continue && head.version == Version::Http11 && body.is_empty() && !too_long {
        stream.write_all(CONTINUE).await?;
    }
    match head.body {
        BodyLength::Exact(n) if n > cap => Ok(too_large(cap)),
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
                if body.len() > cap {
                    return Ok(too_large(cap));
                }
            }
            Ok(Read::Request { head, body })
        }
    }
}

fn too_large(cap: usize) -> Read {
    Read::Refused(Reply::error(
        Status::PayloadTooLarge,
        &format!("body over {cap} bytes"),
    ))
}

/// The most body bytes a request may carry: the 256 KB frame cap, or the
/// protocol's package size for the photo, template and table uploads of a
/// terminal that is let in.
fn body_cap(intake: &Intake, head: &Head) -> usize {
    match iclock::route(head.method, &head.path, &head.query) {
        Ok(request)
            if request.takes_packages()
                && intake.config().allow.check(request.serial()).is_ok() =>
        {
            iclock::MAX_PACKAGE_BYTES
        }
        _ => MAX_FRAME_BYTES,
    }
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
        Err(err) => return unhandled(intake, head, &err),
    };
    let serial = request.serial().to_owned();
    if let Err(reason) = intake.config().allow.check(&serial) {
        tracing::warn!(%serial, reason, path = %head.path, "refused a terminal");
        return match request {
            // Security PUSH's own refusal of a registration: 406, no body.
            Request::Registry { .. } => Reply {
                status: Status::NotAcceptable,
                body: Vec::new(),
            },
            _ => Reply::error(Status::Forbidden, "refused"),
        };
    }
    let seen = vec![(serial.clone(), TerminalSource::Iclock)];
    let raw = |kind: &str, reason: Option<String>| RawBody {
        device: serial.clone(),
        kind: kind.to_owned(),
        query: head.query.clone(),
        body: body.to_vec(),
        reason,
    };
    let only_seen = || Write {
        seen: seen.clone(),
        ..Write::default()
    };
    let options = &intake.config().handshake;
    let zone = intake.config().time_zone(&serial);
    let (write, reply) = match &request {
        Request::Handshake { access: true, .. } => (
            only_seen(),
            Reply::ok(push_acc::handshake_body(&serial, options)),
        ),
        Request::Handshake { legacy, .. } => (
            only_seen(),
            Reply::ok(iclock::handshake_body(&serial, *legacy, options, zone)),
        ),
        Request::GetRequest { .. } | Request::Ping { .. } => (only_seen(), Reply::ok(iclock::OK)),
        Request::DeviceCmd { .. } => (
            Write {
                raw: vec![raw("devicecmd", None)],
                seen,
                ..Write::default()
            },
            Reply::ok(iclock::OK),
        ),
        Request::Registry { .. } => (
            Write {
                raw: vec![raw("registry", None)],
                seen,
                ..Write::default()
            },
            Reply::ok(push_acc::registry_reply(&serial)),
        ),
        Request::Push { .. } => (
            only_seen(),
            Reply::ok(push_acc::options_body(&serial, options)),
        ),
        Request::Time { .. } => (
            only_seen(),
            Reply::ok(push_acc::time_body(unix_now(), zone)),
        ),
        Request::RemoteAtt { .. } => {
            // The listener keeps no people: nobody to hand the terminal.
            tracing::debug!(%serial, query = %head.query, "remote attendance lookup answered empty");
            (only_seen(), Reply::ok(Vec::new()))
        }
        Request::PostVerify { .. } => {
            tracing::warn!(%serial, "back-end verification asked for: refused");
            (
                Write {
                    raw: vec![raw(
                        "PostVerifyData",
                        Some("back-end verification is not offered: refused".to_owned()),
                    )],
                    seen,
                    ..Write::default()
                },
                Reply::error(Status::Forbidden, "back-end verification is not offered"),
            )
        }
        Request::Exchange { .. } => {
            tracing::debug!(%serial, "key exchange not offered: the terminal talks plain text");
            return Reply::error(Status::NotFound, "encryption is not offered");
        }
        Request::QueryData { table, .. } => (
            Write {
                raw: vec![raw("querydata", None)],
                seen,
                ..Write::default()
            },
            Reply::ok(match table {
                Some(table) => iclock::table_count_reply(table, body),
                None => iclock::OK.to_vec(),
            }),
        ),
        Request::Upload {
            table: Table::AttLog,
            ..
        } => {
            let log = iclock::parse_attlog(body);
            let records = log
                .records
                .iter()
                .map(|record| punch(&serial, record, record.time_offset.unwrap_or(zone)))
                .collect();
            let unreadable = log.unreadable.iter().map(|line| {
                tracing::warn!(%serial, reason = %line.reason, "unreadable ATTLOG line kept raw");
                (line.raw.clone(), line.reason.to_string())
            });
            let id_checks = log.id_checks.iter().map(|line| {
                let reason = "ID-card check (Type=1), not an attendance";
                (line.clone(), reason.to_owned())
            });
            (
                Write {
                    records,
                    raw: unreadable
                        .chain(id_checks)
                        .map(|(line, reason)| RawBody {
                            device: serial.clone(),
                            kind: "ATTLOG".to_owned(),
                            query: head.query.clone(),
                            body: line,
                            reason: Some(reason),
                        })
                        .collect(),
                    seen,
                },
                Reply::ok(iclock::ok_count(log.lines())),
            )
        }
        Request::Upload {
            table: Table::RtLog,
            ..
        } => {
            let log = push_acc::parse_rtlog(body);
            (
                Write {
                    records: log
                        .punches
                        .iter()
                        .map(|record| punch(&serial, record, zone))
                        .collect(),
                    raw: log
                        .others
                        .into_iter()
                        .map(|(line, reason)| RawBody {
                            device: serial.clone(),
                            kind: "rtlog".to_owned(),
                            query: head.query.clone(),
                            body: line,
                            reason: Some(reason.to_owned()),
                        })
                        .collect(),
                    seen,
                },
                Reply::ok(iclock::OK),
            )
        }
        Request::Upload {
            table: Table::TableData(table),
            ..
        } => (
            Write {
                raw: vec![raw("tabledata", None)],
                seen,
                ..Write::default()
            },
            Reply::ok(iclock::table_count_reply(table, body)),
        ),
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

/// A person's punch (an ATTLOG line, an access event) as a queue record,
/// its local time read in `zone`.
fn punch(serial: &str, record: &iclock::AttRecord, zone: UtcOffset) -> NewRecord {
    NewRecord {
        source: TerminalSource::Iclock,
        kind: TerminalEventKind::Attendance,
        capture: Capture {
            device: serial.to_owned(),
            subject: record.pin.clone(),
            event_id: record.event_id.clone(),
            occurred_at: zone.local_to_utc(record.local_time),
        },
        raw: record.raw.clone(),
    }
}

/// Logs a request the listener does not handle, with the serial it names
/// and its path (both cut short and escaped), and counts it for the site's
/// view.
fn note_unhandled(intake: &Intake, head: &Head, why: &str) {
    let serial: String = query_param(&head.query, "SN")
        .unwrap_or_default()
        .chars()
        .take(iclock::MAX_SERIAL_CHARS)
        .collect();
    let path: String = head.path.chars().take(unknown::PATH_CHARS_MAX).collect();
    tracing::warn!(
        serial = ?serial,
        path = ?path,
        method = ?head.method,
        why,
        "terminal request not handled"
    );
    intake.unknown().count(&head.path);
}

/// A request the listener does not handle: logged, counted, and refused.
fn unhandled(intake: &Intake, head: &Head, err: &iclock::RouteError) -> Reply {
    note_unhandled(intake, head, &err.to_string());
    match err {
        iclock::RouteError::NotIclock | iclock::RouteError::RtDataType(_) => {
            Reply::error(Status::NotFound, "not found")
        }
        iclock::RouteError::Method(_) => Reply::error(Status::MethodNotAllowed, &err.to_string()),
        _ => Reply::error(Status::BadRequest, &err.to_string()),
    }
}

async fn respond_zebra(intake: &Intake, head: &Head, body: &[u8]) -> Reply {
    if head.method != Method::Post {
        note_unhandled(intake, head, "tag events are POSTed");
        return Reply::error(Status::MethodNotAllowed, "POST tag events here");
    }
    let Some(serial) = query_param(&head.query, "SN").filter(|s| !s.is_empty()) else {
        note_unhandled(intake, head, "missing SN");
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
