//! Zebra fixed readers (FXR90, FX9600) posting tag events through the IoT
//! Connector's "HTTP POST" endpoint: one JSON object or an array of them.
//!
//! The reader's own events carry no serial, so the reader is named in the
//! URL it is configured with: `POST /zebra?SN=<reader serial>`; the allowlist
//! applies to that name. Timestamps come with a `+0000` or a `Z` offset.
//!
//! A report is a list of events, and not all of them are tag reads: a
//! reader-side app adds `CUSTOM` events, the reader its management events.
//! [`parse_report`] keeps every tag read and hands back the other events
//! (and tag reads it cannot read) to be stored raw with a reason, so one
//! odd event never makes the reader resend its good reads.

use serde_json::Value;
use sha2::{Digest, Sha256};
use stockhop::time::UnixMs;

/// The path the reader is configured to POST to.
pub const ZEBRA_PATH: &str = "/zebra";
/// The longest EPC taken, in hex digits (EPC memory is at most 496 bits).
pub const MAX_EPC_HEX: usize = 124;

/// One tag read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TagEvent {
    /// The EPC in lower-case hex.
    pub epc: String,
    pub occurred_at: UnixMs,
    /// The event object as received (compact JSON).
    pub raw: String,
    /// A digest of the event: the reader's retries of it have the same one.
    pub event_id: String,
}

/// An event of a report that is not a tag read the listener can take: kept
/// raw with the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OtherEvent {
    /// The event's `type` (`CUSTOM`, `HEARTBEAT`, …), empty when it has none.
    pub event_type: String,
    /// The event as received (compact JSON).
    pub raw: String,
    pub reason: String,
}

/// A report read event by event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Report {
    pub tags: Vec<TagEvent>,
    pub others: Vec<OtherEvent>,
}

/// Event types that carry a tag read (the IoT Connector's tag data events).
pub const TAG_EVENT_TYPES: [&str; 2] = ["SIMPLE", "INVENTORY"];
/// The longest event type kept as the raw row's kind.
const MAX_EVENT_TYPE_CHARS: usize = 32;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ZebraError {
    #[error("body is not JSON: {0}")]
    Json(String),
    #[error("expected an object or an array of objects")]
    Shape,
}

/// Reads a report body: one event object or an array of them. Only a body
/// that is not JSON, or not an object or array, is refused whole; within a
/// report, every tag read is taken and every other event comes back in
/// [`Report::others`].
pub fn parse_report(body: &[u8]) -> Result<Report, ZebraError> {
    let value: Value =
        serde_json::from_slice(body).map_err(|err| ZebraError::Json(err.to_string()))?;
    let events = match value {
        Value::Array(items) => items,
        object @ Value::Object(_) => vec![object],
        _ => return Err(ZebraError::Shape),
    };
    let mut report = Report::default();
    for event in events {
        let event_type: String = event
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .chars()
            .take(MAX_EVENT_TYPE_CHARS)
            .collect();
        let tag_read = if event_type.is_empty() {
            event.pointer("/data/idHex").is_some()
        } else {
            TAG_EVENT_TYPES
                .iter()
                .any(|t| t.eq_ignore_ascii_case(&event_type))
        };
        let outcome = if tag_read {
            parse_tag(&event).map_err(|why| format!("unreadable tag read: {why}"))
        } else if event.is_object() {
            Err(format!("not a tag read: event type {event_type:?}"))
        } else {
            Err("not an event object".to_owned())
        };
        match outcome {
            Ok(tag) => report.tags.push(tag),
            Err(reason) => report.others.push(OtherEvent {
                event_type,
                raw: event.to_string(),
                reason,
            }),
        }
    }
    Ok(report)
}

fn parse_tag(object: &Value) -> Result<TagEvent, String> {
    let id_hex = object
        .pointer("/data/idHex")
        .and_then(Value::as_str)
        .ok_or("missing data.idHex")?;
    if id_hex.is_empty()
        || id_hex.len() > MAX_EPC_HEX
        || !id_hex.bytes().all(|b| b.is_ascii_hexdigit())
    {
        return Err("data.idHex is not an EPC in hex".to_owned());
    }
    let timestamp = object
        .get("timestamp")
        .and_then(Value::as_str)
        .ok_or("missing timestamp")?;
    let occurred_at = UnixMs::parse_rfc3339(timestamp).map_err(|err| err.to_string())?;
    let raw = object.to_string();
    let digest = Sha256::digest(raw.as_bytes());
    Ok(TagEvent {
        epc: id_hex.to_ascii_lowercase(),
        occurred_at,
        raw,
        event_id: hex::encode(&digest[..16]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIMPLE: &str = r#"{"data":{"eventNum":5036,"format":"epc","idHex":"e2806894000040017790e471"},"timestamp":"2026-09-07T12:50:36.194+0000","type":"SIMPLE"}"#;
    const INVENTORY: &str = r#"{"data":{"antenna":1,"eventNum":5059,"format":"epc","idHex":"e2806894000040017790e471","peakRssi":-37,"reads":1},"timestamp":"2026-09-07T12:50:55.513+0000","type":"INVENTORY"}"#;

    #[test]
    fn one_object_or_an_array_both_read() {
        let one = parse_report(SIMPLE.as_bytes()).unwrap().tags;
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].epc, "e2806894000040017790e471");
        assert_eq!(
            one[0].occurred_at,
            UnixMs::parse_rfc3339("2026-09-07T12:50:36.194Z").unwrap()
        );
        assert_eq!(one[0].raw, SIMPLE);
        let both = parse_report(format!("[{SIMPLE},{INVENTORY}]").as_bytes())
            .unwrap()
            .tags;
        assert_eq!(both.len(), 2);
        assert_ne!(both[0].event_id, both[1].event_id);
    }

    #[test]
    fn z_and_plus_0000_offsets_are_the_same_instant() {
        let z = SIMPLE.replace("+0000", "Z");
        assert_eq!(
            parse_report(z.as_bytes()).unwrap().tags[0].occurred_at,
            parse_report(SIMPLE.as_bytes()).unwrap().tags[0].occurred_at
        );
    }

    #[test]
    fn a_report_mixing_tag_reads_with_other_events_keeps_every_tag_read() {
        let custom = r#"{"data":{"dock":"D4","pallet":"P-77"},"timestamp":"2026-09-07T12:50:56.000+0000","type":"CUSTOM"}"#;
        let heartbeat = r#"{"data":{"uptime":"3h"},"timestamp":"2026-09-07T12:50:57.000+0000","type":"HEARTBEAT"}"#;
        let bad_tag =
            r#"{"data":{"idHex":"zz"},"timestamp":"2026-09-07T12:50:36Z","type":"INVENTORY"}"#;
        let body = format!("[{SIMPLE},{custom},{INVENTORY},{heartbeat},{bad_tag},7]");
        let report = parse_report(body.as_bytes()).unwrap();
        assert_eq!(report.tags.len(), 2);
        let others: Vec<(&str, &str)> = report
            .others
            .iter()
            .map(|o| (o.event_type.as_str(), o.reason.as_str()))
            .collect();
        assert_eq!(
            others,
            [
                ("CUSTOM", "not a tag read: event type \"CUSTOM\""),
                ("HEARTBEAT", "not a tag read: event type \"HEARTBEAT\""),
                (
                    "INVENTORY",
                    "unreadable tag read: data.idHex is not an EPC in hex"
                ),
                ("", "not an event object"),
            ]
        );
        assert_eq!(report.others[0].raw, custom);
    }

    #[test]
    fn only_a_body_that_is_not_a_report_is_refused() {
        assert!(matches!(parse_report(b"\"x\""), Err(ZebraError::Shape)));
        assert!(matches!(parse_report(b"{"), Err(ZebraError::Json(_))));
        assert_eq!(parse_report(b"[]").unwrap(), Report::default());
    }
}
