//! The entry points of the parser fuzz targets (`fuzz/fuzz_targets/`) and
//! of the test that replays their committed corpus (`site/tests/site/fuzz_corpus.rs`):
//! one function a target, taking the fuzzer's bytes and asserting what must
//! hold for any input. A panic here is a finding.
//!
//! What each asserts beyond "no panic":
//! * [`terminal_request`] — a parsed head lies within the bytes read; the
//!   request line read early ([`http_message::request_target`]) is the one the head
//!   parser read; the same request answered twice gives the same answer
//!   (the keys a terminal's retry must find again); every reply encodes to
//!   a well-formed HTTP response whose `Content-Length` is its body's.
//! * [`framed_stream`] — every decoded frame re-encodes to its own bytes,
//!   and a stream decoded in one buffer or byte by byte yields the same
//!   frames.
//! * [`zebra_report`] — every tag read's EPC is lower-case hex within
//!   [`zebra::MAX_EPC_HEX`]; the same report read twice gives the same
//!   event ids.
//! * [`sync_body`] — each item's canonical JSON is a fixed point (parsing
//!   and canonicalising it again gives the same text and hash), so a
//!   device's retry in any key order or spacing hashes the same.
//! * [`terminal_config`] — a file that reads is written back and reads
//!   again to the same file, which applies to the same configuration.
//! * [`csv_import`] — an import either fails whole and leaves the database
//!   as it was, or succeeds, and then importing the same file again
//!   changes nothing.

use std::io::Cursor;
use std::sync::OnceLock;

use crate::store::sql::Connection;
use stockhop::time::UnixMs;

use crate::ledger::import::{self, Kind};
use crate::ledger::{receipts, sync};
use crate::listener::answer::{self, Answer};
use crate::listener::config::{Allowlist, ConfigFile, ListenerConfig};
use crate::listener::framed::{self, Decoded};
use crate::listener::http_message::{self, BodyLength, Parsed, Version};
use crate::listener::zebra;
use crate::listener::zone::TerminalZone;

/// The instant every fuzzed request is answered at: 2024-08-05 12:00:00 UTC.
pub const NOW: UnixMs = UnixMs(1_722_859_200_000);

/// The listener configuration requests are answered with: every serial let
/// in, a zone with daylight saving, so every route and time rule is reached.
pub fn fuzz_listener_config() -> &'static ListenerConfig {
    static CONFIG: OnceLock<ListenerConfig> = OnceLock::new();
    CONFIG.get_or_init(|| ListenerConfig {
        allow: Allowlist::Any,
        site_time_zone: TerminalZone::parse("Europe/Berlin").expect("a zone of the database"),
        ..ListenerConfig::default()
    })
}

/// One terminal HTTP request (iclock/ADMS, Security PUSH or Zebra), head
/// and body, through the head parser and [`answer::answer`].
pub fn terminal_request(data: &[u8]) {
    let config = fuzz_listener_config();
    let head = match http_message::parse_head(data) {
        Ok(Parsed::Complete(head)) => head,
        Ok(Parsed::Incomplete) | Err(_) => {
            let _ = http_message::request_target(data);
            return;
        }
    };
    assert!(head.head_len <= data.len(), "the head ends past the input");
    assert_eq!(
        http_message::request_target(data),
        Some((head.path.as_str(), head.query.as_str())),
        "the early request-line read disagrees with the head"
    );
    let rest = &data[head.head_len..];
    let body = match head.body {
        BodyLength::Exact(n) => &rest[..n.min(rest.len())],
        BodyLength::UntilClose => rest,
    };
    let _ = answer::body_cap(config, &head);
    let first = answer::answer(config, NOW, &head, body);
    let again = answer::answer(config, NOW, &head, body);
    assert_eq!(first, again, "one request answered two ways");
    let reply = match &first {
        Answer::WriteThen(_, reply) | Answer::Reply(reply) => reply,
        Answer::Unhandled { reply, .. } => reply,
    };
    check_reply(
        &reply.encode(head.version, NOW),
        reply.body.len(),
        head.version,
    );
}

/// A reply on the wire is one HTTP response whose `Content-Length` is the
/// length of the body that follows it.
fn check_reply(wire: &[u8], body_len: usize, version: Version) {
    let mut headers = [httparse::EMPTY_HEADER; 16];
    let mut response = httparse::Response::new(&mut headers);
    let head_len = match response.parse(wire) {
        Ok(httparse::Status::Complete(n)) => n,
        other => panic!("a reply that is not an HTTP response: {other:?}"),
    };
    let expected_version = match version {
        Version::Http10 => 0,
        Version::Http11 => 1,
    };
    assert_eq!(response.version, Some(expected_version));
    let length = response
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("content-length"))
        .and_then(|h| std::str::from_utf8(h.value).ok()?.parse::<usize>().ok())
        .expect("every reply has a Content-Length");
    assert_eq!(length, body_len);
    assert_eq!(wire.len() - head_len, body_len);
}

/// A byte stream on the framed-JSON TCP port: frames decoded one after
/// another, each payload read as a record.
pub fn framed_stream(data: &[u8]) {
    let whole = decode_all(data);
    for (payload, wire) in &whole.frames {
        assert_eq!(
            &framed::encode(payload),
            wire,
            "a frame re-encodes to itself"
        );
        let _ = framed::parse_record(payload);
    }
    // The same bytes arriving one at a time (a split frame is waited for).
    let mut buffer = Vec::new();
    let mut frames = Vec::new();
    let mut error = None;
    for &byte in data {
        buffer.push(byte);
        match framed::decode(&buffer) {
            Ok(Decoded::Frame { payload, consumed }) => {
                frames.push((payload.to_vec(), buffer[..consumed].to_vec()));
                buffer.drain(..consumed);
            }
            Ok(Decoded::Incomplete) => {}
            Err(err) => {
                error = Some(err);
                break;
            }
        }
    }
    assert_eq!(frames, whole.frames, "split reads decode other frames");
    assert_eq!(error, whole.error, "split reads end in another error");
}

struct Frames {
    frames: Vec<(Vec<u8>, Vec<u8>)>,
    error: Option<framed::FrameError>,
}

fn decode_all(mut data: &[u8]) -> Frames {
    let mut frames = Vec::new();
    loop {
        match framed::decode(data) {
            Ok(Decoded::Frame { payload, consumed }) => {
                assert!(consumed <= data.len() && consumed > framed::LENGTH_PREFIX_BYTES);
                frames.push((payload.to_vec(), data[..consumed].to_vec()));
                data = &data[consumed..];
            }
            Ok(Decoded::Incomplete) => {
                return Frames {
                    frames,
                    error: None,
                }
            }
            Err(err) => {
                return Frames {
                    frames,
                    error: Some(err),
                }
            }
        }
    }
}

/// A Zebra IoT Connector report body.
pub fn zebra_report(data: &[u8]) {
    let Ok(report) = zebra::parse_report(data) else {
        return;
    };
    for tag in &report.tags {
        assert!(!tag.epc.is_empty() && tag.epc.len() <= zebra::MAX_EPC_HEX);
        assert!(
            tag.epc
                .bytes()
                .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')),
            "EPC {:?} is not lower-case hex",
            tag.epc
        );
    }
    let again = zebra::parse_report(data).expect("read once, read again");
    assert_eq!(report, again);
}

/// A `POST /v1/sync` body as the site parses it.
pub fn sync_body(data: &[u8]) {
    let Ok(request) = sync::parse_request(data) else {
        return;
    };
    for item in &request.items {
        let value: serde_json::Value =
            serde_json::from_str(&item.canonical).expect("canonical JSON parses");
        let mut again = String::new();
        receipts::write_canonical(&value, &mut again);
        assert_eq!(again, item.canonical, "canonical JSON is not a fixed point");
        assert_eq!(receipts::request_hash(&value), item.hash);
    }
}

/// A terminal configuration file.
pub fn terminal_config(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(file) = ConfigFile::parse(text) else {
        return;
    };
    let written = file.to_toml();
    let again = ConfigFile::parse(&written)
        .unwrap_or_else(|err| panic!("the file written back does not read: {err}\n{written}"));
    assert_eq!(again, file, "the file written back reads otherwise");
    let mut first = ListenerConfig::default();
    let mut second = ListenerConfig::default();
    match (file.apply(&mut first), again.apply(&mut second)) {
        (Ok(()), Ok(())) => {
            assert_eq!(first, second);
            let _ = first.reader_rates();
        }
        (Err(_), Err(_)) => {}
        (one, other) => panic!("the same file applies two ways: {one:?} / {other:?}"),
    }
}

/// A CSV file for `stockhop-site import`: the first byte chooses the kind
/// (bins, units, grns, manifests), the rest is the file.
pub fn csv_import(data: &[u8]) {
    let Some((&selector, file)) = data.split_first() else {
        return;
    };
    let kind = match selector % 4 {
        0 => Kind::Bins,
        1 => Kind::Units,
        2 => Kind::Grns,
        _ => Kind::Manifests,
    };
    let mut conn = migrated_database();
    let before = dump(&conn);
    match import::import_reader(&mut conn, kind, "fuzz.csv", Cursor::new(file), NOW) {
        Err(_) => assert_eq!(dump(&conn), before, "a failed import wrote something"),
        Ok(first) => {
            let after = dump(&conn);
            let second = import::import_reader(&mut conn, kind, "fuzz.csv", Cursor::new(file), NOW)
                .expect("a file that imported once imports again");
            assert_eq!(second.rows, first.rows);
            assert_eq!(
                second.changed, 0,
                "importing the same file again changed rows"
            );
            assert_eq!(dump(&conn), after, "importing the same file again wrote");
        }
    }
}

/// A fresh in-memory database at the current schema, with the site's
/// connection settings that bear on an import: a copy of one migrated
/// once per thread (migrating for every input would be most of the work).
fn migrated_database() -> Connection {
    thread_local! {
        static TEMPLATE: rusqlite::Connection = {
            let mut conn = rusqlite::Connection::open_in_memory().expect("an in-memory database");
            crate::store::db::migrate(&mut conn).expect("migrations apply");
            conn
        };
    }
    let mut conn = rusqlite::Connection::open_in_memory().expect("an in-memory database");
    TEMPLATE.with(|template| {
        rusqlite::backup::Backup::new(template, &mut conn)
            .and_then(|copy| copy.run_to_completion(i32::MAX, std::time::Duration::ZERO, None))
            .expect("the migrated database copies")
    });
    conn.pragma_update(None, "foreign_keys", "ON")
        .expect("foreign keys on, as the site opens its database");
    Connection::Sqlite(conn)
}

/// Every row of every table, as text: what an import may change.
fn dump(conn: &Connection) -> Vec<String> {
    let mut tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .and_then(|mut stmt| {
            stmt.query_map([], |row| row.get(0))?
                .collect::<crate::store::sql::Result<_>>()
        })
        .expect("the schema reads");
    tables.retain(|name| !name.starts_with("sqlite_"));
    let mut out = Vec::new();
    for table in tables {
        let mut stmt = conn
            .prepare(&format!("SELECT * FROM \"{table}\""))
            .expect("a table reads");
        let columns = stmt.column_count();
        let rows = stmt
            .query_map([], |row| {
                (0..columns)
                    .map(|i| {
                        row.get::<_, crate::store::sql::Value>(i)
                            .map(|v| format!("{v:?}"))
                    })
                    .collect::<crate::store::sql::Result<Vec<_>>>()
            })
            .expect("rows read");
        for row in rows {
            out.push(format!("{table}: {}", row.expect("a row reads").join("|")));
        }
    }
    out
}
