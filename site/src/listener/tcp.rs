//! The framed JSON TCP port (default 0.0.0.0:8082).
//!
//! A connection carries any number of record frames. Every complete frame
//! in what has been read is written in one durable transaction, then each
//! is acked in order (`{"ack":"<id>"}`), or nacked with `retry` when the
//! write failed. A protocol error (zero or oversized length, a frame that
//! is not a record, a device outside the allowlist) acks what came before
//! it, answers an error frame and closes. An oversized frame is refused
//! from its length prefix, before its payload is read, and so is a record
//! the ledger would refuse (a raw frame over its audit cap), before it is
//! acknowledged.
//!
//! A connection must deliver its first complete frame within
//! [`FIRST_FRAME_DEADLINE`] of its accept, however it trickles its bytes;
//! after that only the idle timeout applies.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

use super::framed::{self, Decoded, Record, Scan, LENGTH_PREFIX_BYTES, MAX_FRAME_BYTES};
use super::queue::{NewRecord, Write};
use super::rules::Capture;
use super::{Intake, Peer};
use crate::ledger::terminal::refusal_reason;
pub use crate::limits::{FIRST_FRAME_DEADLINE, TCP_MAX_CONNECTIONS as MAX_CONNECTIONS};
use crate::terminal_wire::{TerminalEventKind, TerminalSource};
/// A connection silent (or not reading its acks) this long is closed;
/// bridges reconnect.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(300);
/// Bytes read per socket read.
const READ_CHUNK: usize = 64 * 1024;

/// Accepts connections until `shutdown` turns true.
pub async fn serve(listener: TcpListener, intake: Intake, shutdown: watch::Receiver<bool>) {
    let known = intake.known_peers("tcp").await;
    super::accept_loop(
        listener,
        MAX_CONNECTIONS,
        "tcp",
        known,
        shutdown,
        move |stream, peer, shutdown| {
            let intake = intake.clone();
            async move { connection(stream, peer, &intake, shutdown).await }
        },
    )
    .await;
}

async fn connection(
    mut stream: TcpStream,
    peer: Peer,
    intake: &Intake,
    mut shutdown: watch::Receiver<bool>,
) -> std::io::Result<()> {
    let mut buf: Vec<u8> = Vec::with_capacity(READ_CHUNK);
    let mut chunk = vec![0u8; READ_CHUNK];
    let first_frame_by = tokio::time::Instant::now() + FIRST_FRAME_DEADLINE;
    let mut framed_once = false;
    loop {
        let deadline = if framed_once {
            tokio::time::Instant::now() + IDLE_TIMEOUT
        } else {
            first_frame_by
        };
        let n = tokio::select! {
            read = tokio::time::timeout_at(deadline, stream.read(&mut chunk)) => match read {
                Ok(read) => read?,
                Err(_) => return Ok(()),
            },
            _ = shutdown.changed() => return Ok(()),
        };
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&chunk[..n]);
        let (records, consumed, error) = take_frames(&buf, intake);
        buf.drain(..consumed);
        if consumed > 0 {
            framed_once = true;
        }
        if !records.is_empty() {
            let ids: Vec<String> = records.iter().map(|r| r.id.clone()).collect();
            let write = to_write(records);
            let (reply, hold): (Vec<u8>, _) = match intake.pace(&write) {
                // The protocol's "try again": nothing kept, the bridge
                // resends; this connection is held back for the wait.
                Err(wait) => {
                    let serial = write
                        .records
                        .first()
                        .map_or("-", |r| r.capture.device.as_str());
                    crate::warn_sampled!(peer = %peer.addr, serial, records = ids.len(), "framed device past its record budget; nacked");
                    (
                        ids.iter().flat_map(|id| framed::nack(id)).collect(),
                        Some(wait),
                    )
                }
                Ok(()) => match intake.write(write).await {
                    Ok(_) => {
                        peer.mark_known().await;
                        (ids.iter().flat_map(|id| framed::ack(id)).collect(), None)
                    }
                    Err(err) => {
                        tracing::error!(%err, "framed write failed; nacked");
                        (ids.iter().flat_map(|id| framed::nack(id)).collect(), None)
                    }
                },
            };
            send(&mut stream, &reply).await?;
            if let Some(wait) = hold {
                tokio::time::sleep(wait.min(crate::limits::PENALTY_MAX)).await;
            }
        }
        if let Some((code, message)) = error {
            send(&mut stream, &framed::error(code, &message)).await?;
            stream.shutdown().await?;
            return Ok(());
        }
        debug_assert!(buf.len() < LENGTH_PREFIX_BYTES + MAX_FRAME_BYTES);
    }
}

/// Writes `bytes`, giving up on a peer that stops reading.
async fn send(stream: &mut TcpStream, bytes: &[u8]) -> std::io::Result<()> {
    tokio::time::timeout(IDLE_TIMEOUT, stream.write_all(bytes))
        .await
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::TimedOut, "peer stopped reading"))?
}

/// The records of every complete frame at the start of `buf`, the bytes
/// they used, and the protocol error that stopped the scan, if any.
fn take_frames(
    buf: &[u8],
    intake: &Intake,
) -> (Vec<Record>, usize, Option<(&'static str, String)>) {
    let mut records = Vec::new();
    let mut at = 0;
    loop {
        match framed::decode(&buf[at..]) {
            Ok(Decoded::Incomplete) => return (records, at, None),
            Err(err) => {
                crate::warn_sampled!(%err, "framed protocol error");
                return (records, at, Some((err.code(), err.to_string())));
            }
            Ok(Decoded::Frame { payload, consumed }) => {
                let record = match framed::parse_record(payload) {
                    Ok(record) => record,
                    Err(err) => {
                        crate::warn_sampled!(%err, "unreadable framed record");
                        return (records, at, Some(("bad_record", err.to_string())));
                    }
                };
                if let Err(reason) = intake.config().allow.check(&record.device) {
                    crate::warn_sampled!(device = %record.device, reason, "refused a framed device");
                    return (records, at, Some(("device_not_allowed", reason.to_owned())));
                }
                if let Err(why) = ledger_takes(&record) {
                    crate::warn_sampled!(device = %record.device, %why, "refused a framed record the ledger would not take");
                    return (records, at, Some(("bad_record", why)));
                }
                records.push(record);
                at += consumed;
            }
        }
    }
}

/// Whether the ledger takes `record` as it is: nothing is acknowledged
/// that the forwarder would then dead-letter.
fn ledger_takes(record: &Record) -> Result<(), String> {
    match refusal_reason(&record.device, &record.subject, record.raw.len()) {
        Some(why) => Err(why),
        None => Ok(()),
    }
}

fn to_write(records: Vec<Record>) -> Write {
    let mut seen: Vec<(String, TerminalSource)> = Vec::new();
    let records = records
        .into_iter()
        .map(|record| {
            if !seen.iter().any(|(device, _)| *device == record.device) {
                seen.push((record.device.clone(), TerminalSource::Framed));
            }
            NewRecord {
                source: TerminalSource::Framed,
                kind: match record.scan {
                    Scan::Person => TerminalEventKind::Attendance,
                    Scan::Epc => TerminalEventKind::TagRead,
                    Scan::Code => TerminalEventKind::CodeRead,
                },
                capture: Capture {
                    device: record.device,
                    subject: record.subject,
                    event_id: record.id,
                    occurred_at: record.at,
                },
                raw: record.raw.into_bytes(),
            }
        })
        .collect();
    Write {
        records,
        seen,
        ..Write::default()
    }
}
