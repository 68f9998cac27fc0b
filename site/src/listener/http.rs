//! The terminal HTTP port (default 0.0.0.0:8081): iclock/ADMS push and the
//! Zebra IoT Connector endpoint, one request per connection.
//!
//! This and [`super::tcp`] are the only code touching sockets. A connection
//! is read until its head and body are complete (a body over its cap is
//! refused from its `Content-Length`, before it is read), answered by
//! [`respond`] as [`super::answer`] decides, and closed. Every exchange is
//! bounded in time and size: the head must be complete within
//! [`TERMINAL_HEAD_DEADLINE`] of the accept, the whole request within
//! [`REQUEST_TIMEOUT`]; a serial outside the allowlist is refused as soon
//! as the request line has arrived.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::time::Instant;

use super::answer::{self, Answer};
use super::http_message::{
    parse_head, query_param, request_target, BodyLength, Head, Parsed, Reply, Status, Version,
    CONTINUE,
};
use super::queue::Write;
use super::{iclock, unix_now, unknown, Intake, Peer};
use crate::limits::{
    MAX_ROWS_PER_TERMINAL_REQUEST, MAX_STORED_BYTES_PER_TERMINAL_REQUEST, RAW_BYTES_PER_SECOND,
};
pub use crate::limits::{TERMINAL_HEAD_DEADLINE, TERMINAL_HTTP_MAX_CONNECTIONS as MAX_CONNECTIONS};
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
    let known = intake.known_peers("http").await;
    super::accept_loop(
        listener,
        MAX_CONNECTIONS,
        "http",
        known,
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
                peer.mark_known().await;
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
    let cap = answer::body_cap(intake.config(), &head);
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

/// The 403 for a request line naming a serial outside the allowlist.
fn refused_serial(intake: &Intake, query: &str) -> Option<Reply> {
    let serial = query_param(query, "SN")?;
    let reason = intake.config().allow.check(&serial).err()?;
    crate::warn_sampled!(%serial, reason, "refused a terminal");
    Some(Reply::error(Status::Forbidden, "refused"))
}

fn too_large(cap: usize) -> Read {
    Read::Refused(Reply::error(
        Status::PayloadTooLarge,
        &format!("body over {cap} bytes"),
    ))
}

async fn read_some(stream: &mut TcpStream, buf: &mut Vec<u8>) -> std::io::Result<usize> {
    let mut chunk = [0u8; READ_CHUNK];
    let n = stream.read(&mut chunk).await?;
    buf.extend_from_slice(&chunk[..n]);
    Ok(n)
}

/// Answers one complete request: writes what [`answer::answer`] says to
/// keep, then replies.
pub async fn respond(intake: &Intake, peer: &Peer, head: &Head, body: &[u8]) -> Reply {
    match answer::answer(intake.config(), unix_now(), head, body) {
        Answer::WriteThen(write, reply) => {
            let stored_bytes_max =
                MAX_STORED_BYTES_PER_TERMINAL_REQUEST.max(answer::body_cap(intake.config(), head));
            write_then(intake, peer, write, reply, stored_bytes_max).await
        }
        Answer::Reply(reply) => reply,
        Answer::Unhandled { reply, why } => {
            note_unhandled(intake, head, &why);
            reply
        }
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
    crate::warn_sampled!(
        serial = ?serial,
        path = ?path,
        method = ?head.method,
        why,
        "terminal request not handled"
    );
    intake.unknown().count(&head.path);
}

/// Answers `reply` once `write` is durable, 503 when it could not be (or
/// when the bodies it keeps raw are past the raw budget), 413 when it would
/// add more rows or bytes than one request may (`stored_bytes_max`: the
/// per-request bound, or the package size of an upload that may carry it).
async fn write_then(
    intake: &Intake,
    peer: &Peer,
    write: Write,
    reply: Reply,
    stored_bytes_max: usize,
) -> Reply {
    let rows = write.records.len() + write.raw.len();
    let bytes: usize = write.records.iter().map(|r| r.raw.len()).sum::<usize>()
        + write.raw.iter().map(|r| r.body.len()).sum::<usize>();
    if rows > MAX_ROWS_PER_TERMINAL_REQUEST || bytes > stored_bytes_max {
        crate::warn_sampled!(
            rows,
            bytes,
            "terminal request over the per-request write bound"
        );
        return Reply::error(
            Status::PayloadTooLarge,
            &format!("at most {MAX_ROWS_PER_TERMINAL_REQUEST} records and {stored_bytes_max} bytes a request"),
        );
    }
    if let Err(wait) = intake.pace(&write) {
        let serial = write
            .records
            .first()
            .map_or("-", |r| r.capture.device.as_str());
        crate::warn_sampled!(peer = %peer.addr, serial, records = write.records.len(), "terminal past its record budget; answered 503");
        peer.penalize(wait);
        return Reply::error(Status::ServiceUnavailable, "try again");
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
        Ok(report) => answer::reply_after(reply, &report),
        Err(err) => {
            tracing::error!(%err, "terminal write failed; answered 503");
            Reply::error(Status::ServiceUnavailable, "try again")
        }
    }
}
