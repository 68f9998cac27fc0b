//! The terminal HTTP port (default 0.0.0.0:8081): iclock/ADMS push and the
//! Zebra IoT Connector endpoint, one request per connection.
//!
//! This and [`super::tcp`] are the only code touching sockets. A connection
//! is read until its head and body are complete (a body over the frame cap
//! is refused from its `Content-Length`, before it is read), answered by
//! [`respond`], and closed. Every exchange is bounded in time and size: the
//! head must be complete within [`TERMINAL_HEAD_DEADLINE`] of the accept,
//! the whole request within [`REQUEST_TIMEOUT`]; a serial outside the
//! allowlist is refused as soon as the request line has arrived.

use std::time::Duration;

use stockhop::time::UnixMs;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::time::Instant;

use super::framed::MAX_FRAME_BYTES;
use super::http_message::{
    parse_head, query_param, request_target, BodyLength, Head, Method, Parsed, Reply, Status,
    Version, CONTINUE,
};
use super::iclock::{self, Request, Table};
use super::queue::{NewRecord, RawBody, Write};
use super::rules::Capture;
use super::{unix_now, zebra, Intake, Peer};
use crate::ledger::terminal::refusal_reason;
use crate::limits::{
    MAX_ROWS_PER_TERMINAL_REQUEST, MAX_STORED_BYTES_PER_TERMINAL_REQUEST, RAW_BYTES_PER_SECOND,
};
pub use crate::limits::{TERMINAL_HEAD_DEADLINE, TERMINAL_HTTP_MAX_CONNECTIONS as MAX_CONNECTIONS};
use crate::terminal_wire::{TerminalEventKind, TerminalSource};

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
        move |stream, peer, _| {
            let intake = intake.clone();
            async move { connection(stream, peer, &intake).await }
        },
    )
    .await;
}

async fn connection(mut stream: TcpStream, peer: Peer, intake: &Intake) -> std::io::Result<()> {
    if let Some(until) = peer.penalty_ends() {
        tokio::time::sleep_until(until).await;
    }
    let head_by = Instant::now() + TERMINAL_HEAD_DEADLINE;
    let request =
        tokio::time::timeout(REQUEST_TIMEOUT, read_request(&mut stream, intake, head_by)).await;
    let (version, reply) = match request {
        Err(_) => return Ok(()),
        Ok(Err(err)) => return Err(err),
        Ok(Ok(Read::Closed)) => return Ok(()),
        Ok(Ok(Read::Refused(reply))) => (Version::Http11, reply),
        Ok(Ok(Read::Request { head, body })) => {
            let reply = respond(intake, &peer, &head, &body).await;
            if reply.status == Status::Ok {
                peer.mark_known();
            }
            (head.version, reply)
        }
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

async fn read_request(
    stream: &mut TcpStream,
    intake: &Intake,
    head_by: Instant,
) -> std::io::Result<Read> {
    let mut buf = Vec::with_capacity(READ_CHUNK);
    let mut target_checked = false;
    let head = loop {
        match parse_head(&buf) {
            Ok(Parsed::Complete(head)) => break head,
            Ok(Parsed::Incomplete) => {}
            Err(err) => return Ok(Read::Refused(Reply::error(err.status(), &err.to_string()))),
        }
        if !target_checked {
            if let Some((_, query)) = request_target(&buf) {
                target_checked = true;
                if let Some(refused) = refused_serial(intake, query) {
                    return Ok(Read::Refused(refused));
                }
            }
        }
        match tokio::time::timeout_at(head_by, read_some(stream, &mut buf)).await {
            Err(_) | Ok(Ok(0)) => return Ok(Read::Closed),
            Ok(read) => read?,
        };
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

/// The 403 for a request line naming a serial outside the allowlist.
fn refused_serial(intake: &Intake, query: &str) -> Option<Reply> {
    let serial = query_param(query, "SN")?;
    let reason = intake.config().allow.check(&serial).err()?;
    crate::warn_sampled!(%serial, reason, "refused a terminal");
    Some(Reply::error(Status::Forbidden, "refused"))
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
pub async fn respond(intake: &Intake, peer: &Peer, head: &Head, body: &[u8]) -> Reply {
    if head.path == zebra::ZEBRA_PATH {
        return respond_zebra(intake, peer, head, body).await;
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
        crate::warn_sampled!(%serial, reason, path = %head.path, "refused a terminal");
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
            let mut unreadable: Vec<(&[u8], Why)> = log
                .unreadable
                .iter()
                .map(|line| (line.raw.as_slice(), Why::Line(line.reason)))
                .collect();
            let mut records = Vec::with_capacity(log.records.len());
            for record in &log.records {
                let text_len = String::from_utf8_lossy(&record.raw).len();
                let occurred_at = zone.local_to_utc(record.local_time);
                // A line the ledger would refuse is kept raw here instead of
                // being queued and dead-lettered after its acknowledgement.
                if let Some(why) = refusal_reason(&serial, &record.pin, text_len) {
                    unreadable.push((record.raw.as_slice(), Why::Refused(why)));
                    continue;
                }
                if !(UnixMs::MIN..=UnixMs::MAX).contains(&occurred_at) {
                    let why = "time outside years 0000-9999 in UTC".to_owned();
                    unreadable.push((record.raw.as_slice(), Why::Refused(why)));
                    continue;
                }
                records.push(NewRecord {
                    source: TerminalSource::Iclock,
                    kind: TerminalEventKind::Attendance,
                    capture: Capture {
                        device: serial.clone(),
                        subject: record.pin.clone(),
                        event_id: record.event_id.clone(),
                        occurred_at,
                    },
                    raw: record.raw.clone(),
                });
            }
            let raw = unreadable_kept_raw(&serial, &head.query, &unreadable);
            (
                Write {
                    records,
                    raw: raw.into_iter().collect(),
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
    write_then(intake, peer, write, reply).await
}

async fn respond_zebra(intake: &Intake, peer: &Peer, head: &Head, body: &[u8]) -> Reply {
    if head.method != Method::Post {
        return Reply::error(Status::MethodNotAllowed, "POST tag events here");
    }
    let Some(serial) = query_param(&head.query, "SN").filter(|s| !s.is_empty()) else {
        return Reply::error(
            Status::BadRequest,
            "missing SN: configure the reader to post to /zebra?SN=<reader>",
        );
    };
    if let Err(err) = iclock::check_serial(&serial) {
        return Reply::error(Status::BadRequest, &err.to_string());
    }
    if let Err(reason) = intake.config().allow.check(&serial) {
        crate::warn_sampled!(%serial, reason, "refused a reader");
        return Reply::error(Status::Forbidden, "refused");
    }
    let events = match zebra::parse_events(body) {
        Ok(events) => events,
        Err(err) => {
            crate::warn_sampled!(%serial, %err, "unreadable tag report refused");
            return Reply::error(Status::BadRequest, &err.to_string());
        }
    };
    // The whole report is refused, as for an unreadable event, when the
    // ledger would refuse any of its events after the acknowledgement.
    for (index, event) in events.iter().enumerate() {
        if let Some(why) = refusal_reason(&serial, &event.epc, event.raw.len()) {
            crate::warn_sampled!(%serial, index, %why, "tag report the ledger would refuse");
            return Reply::error(Status::BadRequest, &format!("event {index}: {why}"));
        }
    }
    let records = events
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
    let write = Write {
        records,
        raw: Vec::new(),
        seen: vec![(serial, TerminalSource::Zebra)],
    };
    write_then(intake, peer, write, Reply::ok(Vec::new())).await
}

/// Why an ATTLOG line is kept raw instead of queued.
enum Why {
    Line(iclock::AttLineError),
    /// The ledger would refuse it.
    Refused(String),
}

/// The unreadable lines of one ATTLOG upload as one raw body (the lines
/// joined by LF, in their order) with the count and the first reason, so
/// an upload of junk costs one row and one log line, not one per line.
fn unreadable_kept_raw(serial: &str, query: &str, lines: &[(&[u8], Why)]) -> Option<RawBody> {
    let first_reason = match &lines.first()?.1 {
        Why::Line(reason) => reason.to_string(),
        Why::Refused(why) => why.clone(),
    };
    crate::warn_sampled!(%serial, lines = lines.len(), first_reason = %first_reason, "unreadable ATTLOG lines kept raw");
    Some(RawBody {
        device: serial.to_owned(),
        kind: "ATTLOG".to_owned(),
        query: query.to_owned(),
        body: lines
            .iter()
            .map(|(raw, _)| *raw)
            .collect::<Vec<_>>()
            .join(&b'\n'),
        reason: Some(format!(
            "{} unreadable line(s); first: {first_reason}",
            lines.len()
        )),
    })
}

/// Answers `reply` once `write` is durable, 503 when it could not be (or
/// when the bodies it keeps raw are past the raw budget), 413 when it would
/// add more rows or bytes than one request may.
async fn write_then(intake: &Intake, peer: &Peer, write: Write, reply: Reply) -> Reply {
    let rows = write.records.len() + write.raw.len();
    let bytes: usize = write.records.iter().map(|r| r.raw.len()).sum::<usize>()
        + write.raw.iter().map(|r| r.body.len()).sum::<usize>();
    if rows > MAX_ROWS_PER_TERMINAL_REQUEST || bytes > MAX_STORED_BYTES_PER_TERMINAL_REQUEST {
        crate::warn_sampled!(
            rows,
            bytes,
            "terminal request over the per-request write bound"
        );
        return Reply::error(
            Status::PayloadTooLarge,
            &format!(
                "at most {MAX_ROWS_PER_TERMINAL_REQUEST} records and {MAX_STORED_BYTES_PER_TERMINAL_REQUEST} bytes a request"
            ),
        );
    }
    let raw_bytes = write.raw.iter().map(|r| r.body.len()).sum::<usize>();
    if raw_bytes > 0 && !intake.take_raw_budget(raw_bytes) {
        crate::warn_sampled!(peer = %peer.addr, raw_bytes, "raw body budget spent; answered 503");
        peer.penalize(Duration::from_secs_f64(
            raw_bytes as f64 / RAW_BYTES_PER_SECOND as f64,
        ));
        return Reply::error(Status::ServiceUnavailable, "try again");
    }
    match intake.write(write).await {
        Ok(_) => reply,
        Err(err) => {
            tracing::error!(%err, "terminal write failed; answered 503");
            Reply::error(Status::ServiceUnavailable, "try again")
        }
    }
}
