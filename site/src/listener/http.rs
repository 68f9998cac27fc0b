//! The terminal HTTP port (default 0.0.0.0:8081): iclock/ADMS push and the
//! Zebra IoT Connector endpoint, one request per connection.
//!
//! This and [`super::tcp`] are the only code touching sockets. A connection
//! is read until its head and body are complete (a body over its cap is
//! refused from its `Content-Length`, before it is read), answered by
//! [`respond`] as [`super::answer`] decides, and closed. Every exchange is
//! bounded in time and size.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

use super::answer::{self, Answer};
use super::http_message::{
    parse_head, query_param, BodyLength, Head, Parsed, Reply, Status, Version, CONTINUE,
};
use super::queue::Write;
use super::{iclock, unix_now, unknown, Intake};

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
pub async fn respond(intake: &Intake, head: &Head, body: &[u8]) -> Reply {
    match answer::answer(intake.config(), unix_now(), head, body) {
        Answer::WriteThen(write, reply) => write_then(intake, write, reply).await,
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
    tracing::warn!(
        serial = ?serial,
        path = ?path,
        method = ?head.method,
        why,
        "terminal request not handled"
    );
    intake.unknown().count(&head.path);
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
