//! What the listener does with one complete HTTP request, sans-IO: the
//! records and raw bodies to write and the exact reply to send once they
//! are durable, or the reply alone. [`super::http`] reads the request,
//! hands it here, writes what comes back and sends the reply; nothing here
//! touches a socket, the queue or the clock.

use stockhop::time::UnixMs;

use super::command;
use super::config::ListenerConfig;
use super::framed::MAX_FRAME_BYTES;
use super::http_message::{query_param, Head, Method, Reply, Status};
use super::iclock::{self, Request, Table};
use super::queue::{NewRecord, Poll, RawBody, Write, WriteReport};
use super::rules::Capture;
use super::zone::TerminalZone;
use super::{push_acc, zebra};
use crate::ledger::terminal::refusal_reason;
use crate::terminal_wire::{TerminalEventKind, TerminalSource};

/// What one request makes the listener do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Write durably, then send the reply (a 503 instead when the write fails).
    WriteThen(Write, Reply),
    /// Send the reply; there is nothing to keep.
    Reply(Reply),
    /// A request the listener does not handle: log it and count it (`why`
    /// says what was wrong), then send the refusal.
    Unhandled { reply: Reply, why: String },
}

/// Answers one complete request received at `now`.
pub fn answer(config: &ListenerConfig, now: UnixMs, head: &Head, body: &[u8]) -> Answer {
    if head.path == zebra::ZEBRA_PATH {
        return zebra_report(config, head, body);
    }
    match iclock::route(head.method, &head.path, &head.query) {
        Ok(request) => iclock_request(config, now, head, body, &request),
        Err(err) => unhandled(&err),
    }
}

/// The most body bytes a request may carry: the 256 KB frame cap, or the
/// protocol's package size for the photo, template and table uploads of a
/// terminal that is let in.
pub fn body_cap(config: &ListenerConfig, head: &Head) -> usize {
    match iclock::route(head.method, &head.path, &head.query) {
        Ok(request) if request.takes_packages() && config.allow.check(request.serial()).is_ok() => {
            iclock::MAX_PACKAGE_BYTES
        }
        _ => MAX_FRAME_BYTES,
    }
}

/// A ZKTeco terminal's request.
fn iclock_request(
    config: &ListenerConfig,
    now: UnixMs,
    head: &Head,
    body: &[u8],
    request: &Request,
) -> Answer {
    let serial = request.serial().to_owned();
    if let Err(reason) = config.allow.check(&serial) {
        crate::warn_sampled!(%serial, reason, path = %head.path, "refused a terminal");
        return Answer::Reply(match request {
            // Security PUSH's own refusal of a registration: 406, no body.
            Request::Registry { .. } => Reply {
                status: Status::NotAcceptable,
                body: Vec::new(),
            },
            _ => Reply::error(Status::Forbidden, "refused"),
        });
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
    let options = &config.handshake;
    let zone = config.time_zone(&serial);
    let (write, reply) = match &request {
        Request::Handshake { access: true, .. } => (
            only_seen(),
            Reply::ok(push_acc::handshake_body(&serial, options)),
        ),
        Request::Handshake { legacy, .. } => (
            only_seen(),
            Reply::ok(iclock::handshake_body(
                &serial,
                *legacy,
                options,
                zone.offset_at(now),
            )),
        ),
        // `OK`, or the commands the write hands out ([`reply_after`]).
        Request::GetRequest { .. } => (
            Write {
                poll: Some(Poll {
                    serial: serial.clone(),
                    zone: zone.clone(),
                }),
                ..only_seen()
            },
            Reply::ok(iclock::OK),
        ),
        Request::Ping { .. } => (only_seen(), Reply::ok(iclock::OK)),
        Request::DeviceCmd { .. } => (
            Write {
                raw: vec![raw("devicecmd", None)],
                seen,
                results: Some((serial.clone(), command::parse_results(body))),
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
            Reply::ok(push_acc::time_body(now, zone.offset_at(now))),
        ),
        Request::RemoteAtt { .. } => {
            // The listener keeps no people: nobody to hand the terminal.
            tracing::debug!(%serial, query = %head.query, "remote attendance lookup answered empty");
            (only_seen(), Reply::ok(Vec::new()))
        }
        Request::PostVerify { .. } => {
            crate::warn_sampled!(%serial, "back-end verification asked for: refused");
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
            return Answer::Reply(Reply::error(Status::NotFound, "encryption is not offered"));
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
            let mut kept_raw: Vec<(Vec<u8>, String)> = log
                .unreadable
                .iter()
                .map(|line| (line.raw.clone(), line.reason.to_string()))
                .collect();
            let records = queueable(&serial, &log.records, zone, &mut kept_raw);
            kept_raw.extend(log.id_checks.iter().map(|line| {
                let reason = "ID-card check (Type=1), not an attendance";
                (line.clone(), reason.to_owned())
            }));
            (
                Write {
                    records,
                    raw: kept_raw_as_one(&serial, "ATTLOG", &head.query, kept_raw)
                        .into_iter()
                        .collect(),
                    seen,
                    ..Write::default()
                },
                Reply::ok(iclock::ok_count(log.lines())),
            )
        }
        Request::Upload {
            table: Table::RtLog,
            ..
        } => {
            let log = push_acc::parse_rtlog(body);
            let mut kept_raw: Vec<(Vec<u8>, String)> = log
                .others
                .into_iter()
                .map(|(line, reason)| (line, reason.to_owned()))
                .collect();
            let records = queueable(&serial, &log.punches, zone, &mut kept_raw);
            (
                Write {
                    records,
                    raw: kept_raw_as_one(&serial, "rtlog", &head.query, kept_raw)
                        .into_iter()
                        .collect(),
                    seen,
                    ..Write::default()
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
    // Every request of a terminal let in notes its zone: a backfill queued
    // before its first poll is written in it.
    let write = Write {
        zone: Some((serial, zone.to_string())),
        ..write
    };
    Answer::WriteThen(write, reply)
}

/// The reply to send once a write is durable: `reply`, or for a
/// heartbeat poll that handed out commands, those commands.
pub fn reply_after(reply: Reply, report: &WriteReport) -> Reply {
    if report.commands.is_empty() {
        reply
    } else {
        Reply::ok(command::poll_body(&report.commands))
    }
}

/// The punches of one upload that the ledger will take, as queue records
/// (each line's own time offset wins over `zone`); a punch the ledger would
/// refuse after its acknowledgement, or whose instant falls outside years
/// 0000-9999, joins `kept_raw` instead.
fn queueable(
    serial: &str,
    punches: &[iclock::AttRecord],
    zone: &TerminalZone,
    kept_raw: &mut Vec<(Vec<u8>, String)>,
) -> Vec<NewRecord> {
    let mut records = Vec::with_capacity(punches.len());
    for record in punches {
        let text_len = String::from_utf8_lossy(&record.raw).len();
        if let Some(why) = refusal_reason(serial, &record.pin, text_len) {
            kept_raw.push((record.raw.clone(), why));
            continue;
        }
        let punch = punch(serial, record, zone);
        if !(UnixMs::MIN..=UnixMs::MAX).contains(&punch.capture.occurred_at) {
            kept_raw.push((
                record.raw.clone(),
                "time outside years 0000-9999 in UTC".to_owned(),
            ));
            continue;
        }
        records.push(punch);
    }
    records
}

/// The lines of one upload kept raw as one raw body (joined by LF, in
/// their order) with the count and the first reason (a single line keeps
/// its own reason), so an upload of junk costs one row and one log line,
/// not one per line.
fn kept_raw_as_one(
    serial: &str,
    kind: &str,
    query: &str,
    lines: Vec<(Vec<u8>, String)>,
) -> Option<RawBody> {
    let first_reason = lines.first()?.1.clone();
    crate::warn_sampled!(%serial, kind, lines = lines.len(), first_reason = %first_reason, "upload lines kept raw");
    let count = lines.len();
    Some(RawBody {
        device: serial.to_owned(),
        kind: kind.to_owned(),
        query: query.to_owned(),
        body: lines
            .into_iter()
            .map(|(raw, _)| raw)
            .collect::<Vec<_>>()
            .join(&b'\n'),
        reason: Some(if count == 1 {
            first_reason
        } else {
            format!("{count} line(s) kept raw; first: {first_reason}")
        }),
    })
}

/// A person's punch (an ATTLOG line, an access event) as a queue record,
/// its local time read with the line's own time offset, else in `zone`.
fn punch(serial: &str, record: &iclock::AttRecord, zone: &TerminalZone) -> NewRecord {
    let occurred_at = match record.time_offset {
        Some(offset) => offset.local_to_utc(record.local_time),
        None => zone.local_to_utc(record.local_time),
    };
    NewRecord {
        source: TerminalSource::Iclock,
        kind: TerminalEventKind::Attendance,
        capture: Capture {
            device: serial.to_owned(),
            subject: record.pin.clone(),
            event_id: record.event_id.clone(),
            occurred_at,
        },
        raw: record.raw.clone(),
    }
}

/// A request the listener does not handle, and its refusal.
fn unhandled(err: &iclock::RouteError) -> Answer {
    let reply = match err {
        iclock::RouteError::NotIclock | iclock::RouteError::RtDataType(_) => {
            Reply::error(Status::NotFound, "not found")
        }
        iclock::RouteError::Method(_) => Reply::error(Status::MethodNotAllowed, &err.to_string()),
        _ => Reply::error(Status::BadRequest, &err.to_string()),
    };
    Answer::Unhandled {
        reply,
        why: err.to_string(),
    }
}

/// A Zebra reader's report.
fn zebra_report(config: &ListenerConfig, head: &Head, body: &[u8]) -> Answer {
    if head.method != Method::Post {
        return Answer::Unhandled {
            reply: Reply::error(Status::MethodNotAllowed, "POST tag events here"),
            why: "tag events are POSTed".to_owned(),
        };
    }
    let Some(serial) = query_param(&head.query, "SN").filter(|s| !s.is_empty()) else {
        return Answer::Unhandled {
            reply: Reply::error(
                Status::BadRequest,
                "missing SN: configure the reader to post to /zebra?SN=<reader>",
            ),
            why: "missing SN".to_owned(),
        };
    };
    if let Err(err) = iclock::check_serial(&serial) {
        return Answer::Reply(Reply::error(Status::BadRequest, &err.to_string()));
    }
    if let Err(reason) = config.allow.check(&serial) {
        crate::warn_sampled!(%serial, reason, "refused a reader");
        return Answer::Reply(Reply::error(Status::Forbidden, "refused"));
    }
    let report = match zebra::parse_report(body) {
        Ok(report) => report,
        Err(err) => {
            crate::warn_sampled!(%serial, %err, "unreadable tag report refused");
            return Answer::Reply(Reply::error(Status::BadRequest, &err.to_string()));
        }
    };
    // The whole report is refused, as for an unreadable report, when the
    // ledger would refuse any of its tag reads after the acknowledgement.
    for (index, event) in report.tags.iter().enumerate() {
        if let Some(why) = refusal_reason(&serial, &event.epc, event.raw.len()) {
            crate::warn_sampled!(%serial, index, %why, "tag report the ledger would refuse");
            return Answer::Reply(Reply::error(
                Status::BadRequest,
                &format!("tag read {index}: {why}"),
            ));
        }
    }
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
        ..Write::default()
    };
    Answer::WriteThen(write, Reply::ok(Vec::new()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::listener::config::Allowlist;
    use crate::listener::http_message::{parse_head, Parsed};

    const NOW: UnixMs = UnixMs(1_800_000_000_000);

    /// The answer to `request` (a whole request: head and body) from a
    /// listener that lets in `allow`.
    fn check(allow: &str, request: &[u8]) -> Answer {
        let config = ListenerConfig {
            allow: Allowlist::parse(allow).unwrap(),
            ..ListenerConfig::default()
        };
        let Ok(Parsed::Complete(head)) = parse_head(request) else {
            panic!("a complete head");
        };
        answer(&config, NOW, &head, &request[head.head_len..])
    }

    #[test]
    fn a_registration_outside_the_allowlist_is_refused_406_with_nothing_kept() {
        let refused = check(
            "OTHER",
            b"POST /iclock/registry?SN=ACC1 HTTP/1.1\r\nContent-Length: 14\r\n\r\nDeviceType=acc",
        );
        assert_eq!(
            refused,
            Answer::Reply(Reply {
                status: Status::NotAcceptable,
                body: Vec::new()
            })
        );
    }

    #[test]
    fn unknown_paths_and_wrong_methods_are_unhandled_not_silent() {
        for (request, status) in [
            (
                &b"GET /iclock/fdata?SN=A1 HTTP/1.1\r\n\r\n"[..],
                Status::NotFound,
            ),
            (b"GET /favicon.ico HTTP/1.1\r\n\r\n", Status::NotFound),
            (
                b"GET /iclock/devicecmd?SN=A1 HTTP/1.1\r\n\r\n",
                Status::MethodNotAllowed,
            ),
            (b"GET /iclock/ping HTTP/1.1\r\n\r\n", Status::BadRequest),
            (
                b"GET /zebra?SN=R1 HTTP/1.1\r\n\r\n",
                Status::MethodNotAllowed,
            ),
        ] {
            match check("*", request) {
                Answer::Unhandled { reply, .. } => assert_eq!(reply.status, status),
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn the_time_service_reads_the_clock_it_is_given() {
        let Answer::WriteThen(write, reply) = check(
            "*",
            b"GET /iclock/rtdata?SN=ACC1&type=time HTTP/1.1\r\n\r\n",
        ) else {
            panic!("a write then a reply");
        };
        assert!(write.records.is_empty());
        assert_eq!(
            reply.body,
            push_acc::time_body(NOW, crate::listener::zone::UtcOffset::UTC).into_bytes()
        );
    }
}
