//! Framed JSON over TCP, Stockhop's own protocol for terminal bridges: the
//! frame codec and the record grammar, on byte slices with no I/O.
//!
//! A frame is a 4-byte big-endian length and exactly that many bytes of
//! UTF-8 JSON holding one object. [`decode`] keeps "need more bytes"
//! ([`Decoded::Incomplete`]) apart from protocol errors ([`FrameError`]),
//! so a frame split across reads is simply waited for. The grammar is
//! written down in `docs/terminal-protocols.md`.

use serde_json::Value;
use stockhop::time::UnixMs;

use super::iclock::MAX_SERIAL_CHARS;
pub use crate::limits::{MAX_FRAME_BYTES, MAX_ID_CHARS, MAX_SUBJECT_CHARS};

/// Bytes of the length prefix.
pub const LENGTH_PREFIX_BYTES: usize = 4;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decoded<'a> {
    /// A whole frame: its payload and the bytes it used, prefix included.
    Frame { payload: &'a [u8], consumed: usize },
    /// The prefix or the payload has not fully arrived.
    Incomplete,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("zero-length frame")]
    ZeroLength,
    #[error("frame of {0} bytes is over the {MAX_FRAME_BYTES}-byte limit")]
    TooLong(u32),
}

impl FrameError {
    pub fn code(&self) -> &'static str {
        match self {
            FrameError::ZeroLength => "zero_length",
            FrameError::TooLong(_) => "frame_too_long",
        }
    }
}

/// Decodes the frame at the start of `buf`. An oversized length is refused
/// from the prefix alone, before any of its payload is read.
pub fn decode(buf: &[u8]) -> Result<Decoded<'_>, FrameError> {
    let Some(prefix) = buf.first_chunk::<LENGTH_PREFIX_BYTES>() else {
        return Ok(Decoded::Incomplete);
    };
    let len = u32::from_be_bytes(*prefix);
    if len == 0 {
        return Err(FrameError::ZeroLength);
    }
    if len as usize > MAX_FRAME_BYTES {
        return Err(FrameError::TooLong(len));
    }
    let end = LENGTH_PREFIX_BYTES + len as usize;
    match buf.get(LENGTH_PREFIX_BYTES..end) {
        Some(payload) => Ok(Decoded::Frame {
            payload,
            consumed: end,
        }),
        None => Ok(Decoded::Incomplete),
    }
}

/// A payload with its length prefix.
pub fn encode(payload: &[u8]) -> Vec<u8> {
    let len = u32::try_from(payload.len()).expect("reply frames are small");
    let mut out = Vec::with_capacity(LENGTH_PREFIX_BYTES + payload.len());
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(payload);
    out
}

/// `{"ack":"<id>"}`: the record is durable (or was already).
pub fn ack(id: &str) -> Vec<u8> {
    encode(format!(r#"{{"ack":{}}}"#, json_string(id)).as_bytes())
}

/// `{"nack":"<id>","retry":true}`: the write failed; nothing was kept.
pub fn nack(id: &str) -> Vec<u8> {
    encode(format!(r#"{{"nack":{},"retry":true}}"#, json_string(id)).as_bytes())
}

/// `{"error":"<code>","message":"<text>"}`, sent before the listener closes.
pub fn error(code: &str, message: &str) -> Vec<u8> {
    encode(
        format!(
            r#"{{"error":{},"message":{}}}"#,
            json_string(code),
            json_string(message)
        )
        .as_bytes(),
    )
}

fn json_string(text: &str) -> String {
    Value::String(text.to_owned()).to_string()
}

/// What was scanned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scan {
    Person,
    Epc,
    Code,
}

/// One record frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub device: String,
    pub id: String,
    pub at: UnixMs,
    pub scan: Scan,
    pub subject: String,
    /// The frame's JSON as received.
    pub raw: String,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    #[error("payload is not UTF-8")]
    Utf8,
    #[error("payload is not a JSON object: {0}")]
    Json(String),
    #[error("field {0}: {1}")]
    Field(&'static str, &'static str),
    #[error(transparent)]
    Ident(crate::ident::IdentError),
    #[error("exactly one of person, epc or code is required")]
    Scan,
}

/// Reads a record frame's payload: an object with `device`, `id`, `at`
/// (RFC 3339) and exactly one of `person`, `epc`, `code`; other fields are
/// kept in the raw JSON only.
pub fn parse_record(payload: &[u8]) -> Result<Record, RecordError> {
    let text = std::str::from_utf8(payload).map_err(|_| RecordError::Utf8)?;
    let value: Value =
        serde_json::from_str(text).map_err(|err| RecordError::Json(err.to_string()))?;
    let object = value
        .as_object()
        .ok_or_else(|| RecordError::Json("not an object".to_owned()))?;
    let text_field = |name: &'static str, max: usize| -> Result<Option<String>, RecordError> {
        match object.get(name) {
            None => Ok(None),
            Some(Value::String(s)) if s.is_empty() => Err(RecordError::Field(name, "empty")),
            Some(Value::String(s)) if s.chars().count() > max => {
                Err(RecordError::Field(name, "too long"))
            }
            Some(Value::String(s)) if s.chars().any(char::is_control) => {
                Err(RecordError::Field(name, "control characters"))
            }
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(RecordError::Field(name, "not a string")),
        }
    };
    // The terminal's serial and what it scanned are identifiers: checked
    // as every ingress checks them, naming the field.
    let ident =
        |name: &'static str, value: Option<String>| -> Result<Option<String>, RecordError> {
            if let Some(text) = &value {
                crate::ident::check(name, text).map_err(RecordError::Ident)?;
            }
            Ok(value)
        };
    let device = ident("device", text_field("device", MAX_SERIAL_CHARS)?)?
        .ok_or(RecordError::Field("device", "missing"))?;
    let id = text_field("id", MAX_ID_CHARS)?.ok_or(RecordError::Field("id", "missing"))?;
    let at = text_field("at", 64)?.ok_or(RecordError::Field("at", "missing"))?;
    let at = UnixMs::parse_rfc3339(&at).map_err(|_| RecordError::Field("at", "not RFC 3339"))?;
    let scans = [
        (
            Scan::Person,
            ident("person", text_field("person", MAX_SUBJECT_CHARS)?)?,
        ),
        (
            Scan::Epc,
            ident("epc", text_field("epc", MAX_SUBJECT_CHARS)?)?,
        ),
        (
            Scan::Code,
            ident("code", text_field("code", MAX_SUBJECT_CHARS)?)?,
        ),
    ];
    let mut present = scans
        .into_iter()
        .filter_map(|(scan, v)| v.map(|v| (scan, v)));
    let (scan, subject) = match (present.next(), present.next()) {
        (Some(one), None) => one,
        _ => return Err(RecordError::Scan),
    };
    Ok(Record {
        device,
        id,
        at,
        scan,
        subject,
        raw: text.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_buffer_needs_more_bytes() {
        assert_eq!(decode(b""), Ok(Decoded::Incomplete));
        assert_eq!(decode(&[0, 0, 0]), Ok(Decoded::Incomplete));
        assert_eq!(decode(&[0, 0, 0, 3, b'{', b'}']), Ok(Decoded::Incomplete));
    }

    #[test]
    fn zero_and_oversized_lengths_are_errors_from_the_prefix_alone() {
        assert_eq!(decode(&[0, 0, 0, 0]), Err(FrameError::ZeroLength));
        assert_eq!(decode(&[0, 4, 0, 1]), Err(FrameError::TooLong(262_145)));
        assert!(matches!(decode(&[0, 4, 0, 0]), Ok(Decoded::Incomplete)));
    }

    #[test]
    fn two_frames_in_one_buffer_decode_one_after_the_other() {
        let mut buf = encode(b"{}");
        buf.extend(encode(b"[1]"));
        let Ok(Decoded::Frame { payload, consumed }) = decode(&buf) else {
            panic!()
        };
        assert_eq!((payload, consumed), (&b"{}"[..], 6));
        let Ok(Decoded::Frame { payload, consumed }) = decode(&buf[6..]) else {
            panic!()
        };
        assert_eq!((payload, consumed), (&b"[1]"[..], 7));
    }

    #[test]
    fn acks_and_nacks_are_byte_exact() {
        assert_eq!(ack("r-1"), b"\x00\x00\x00\x0d{\"ack\":\"r-1\"}");
        assert_eq!(
            nack("r-1"),
            b"\x00\x00\x00\x1b{\"nack\":\"r-1\",\"retry\":true}"
        );
        assert_eq!(ack("a\"b"), b"\x00\x00\x00\x0e{\"ack\":\"a\\\"b\"}");
    }

    #[test]
    fn records_need_device_id_at_and_one_scan() {
        let ok = parse_record(br#"{"device":"gate-1","id":"42","at":"2026-09-07T12:50:36.194+0000","epc":"e280","rssi":-40}"#).unwrap();
        assert_eq!(
            (
                ok.device.as_str(),
                ok.id.as_str(),
                ok.scan,
                ok.subject.as_str()
            ),
            ("gate-1", "42", Scan::Epc, "e280")
        );
        for (bad, why) in [
            (
                &br#"{"id":"1","at":"2026-09-07T12:50:36Z","person":"7"}"#[..],
                "device",
            ),
            (
                br#"{"device":"d","at":"2026-09-07T12:50:36Z","person":"7"}"#,
                "id",
            ),
            (
                br#"{"device":"d","id":"1","at":"yesterday","person":"7"}"#,
                "at",
            ),
            (
                br#"{"device":"d","id":"1","at":"2026-09-07T12:50:36Z"}"#,
                "scan",
            ),
            (
                br#"{"device":"d","id":"1","at":"2026-09-07T12:50:36Z","person":"7","code":"x"}"#,
                "scan",
            ),
            (
                br#"{"device":"d","id":1,"at":"2026-09-07T12:50:36Z","person":"7"}"#,
                "id",
            ),
            (br#"[]"#, "object"),
            (b"\xff", "utf8"),
        ] {
            assert!(parse_record(bad).is_err(), "{why}");
        }
    }
}
