//! Zebra fixed readers (FXR90, FX9600) posting tag events through the IoT
//! Connector's "HTTP POST" endpoint: one JSON object or an array of them.
//!
//! The reader's own events carry no serial, so the reader is named in the
//! URL it is configured with: `POST /zebra?SN=<reader serial>`; the allowlist
//! applies to that name. Timestamps come with a `+0000` or a `Z` offset.

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

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ZebraError {
    #[error("body is not JSON: {0}")]
    Json(String),
    #[error("expected an object or an array of objects")]
    Shape,
    #[error("event {index}: {why}")]
    Event { index: usize, why: String },
}

/// Reads a report body. The whole body is refused when any event in it is
/// unreadable: the reader resends whole reports, and a partial answer would
/// leave the rest to be resent and queued twice.
pub fn parse_events(body: &[u8]) -> Result<Vec<TagEvent>, ZebraError> {
    let value: Value =
        serde_json::from_slice(body).map_err(|err| ZebraError::Json(err.to_string()))?;
    let objects = match value {
        Value::Array(items) => items,
        object @ Value::Object(_) => vec![object],
        _ => return Err(ZebraError::Shape),
    };
    objects
        .into_iter()
        .enumerate()
        .map(|(index, object)| parse_event(&object).map_err(|why| ZebraError::Event { index, why }))
        .collect()
}

fn parse_event(object: &Value) -> Result<TagEvent, String> {
    if !object.is_object() {
        return Err("not an object".to_owned());
    }
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
        let one = parse_events(SIMPLE.as_bytes()).unwrap();
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].epc, "e2806894000040017790e471");
        assert_eq!(
            one[0].occurred_at,
            UnixMs::parse_rfc3339("2026-09-07T12:50:36.194Z").unwrap()
        );
        assert_eq!(one[0].raw, SIMPLE);
        let both = parse_events(format!("[{SIMPLE},{INVENTORY}]").as_bytes()).unwrap();
        assert_eq!(both.len(), 2);
        assert_ne!(both[0].event_id, both[1].event_id);
    }

    #[test]
    fn z_and_plus_0000_offsets_are_the_same_instant() {
        let z = SIMPLE.replace("+0000", "Z");
        assert_eq!(
            parse_events(z.as_bytes()).unwrap()[0].occurred_at,
            parse_events(SIMPLE.as_bytes()).unwrap()[0].occurred_at
        );
    }

    #[test]
    fn a_report_with_a_bad_event_is_refused_whole() {
        let bad =
            format!(r#"[{SIMPLE},{{"data":{{"idHex":"zz"}},"timestamp":"2026-09-07T12:50:36Z"}}]"#);
        assert!(matches!(
            parse_events(bad.as_bytes()),
            Err(ZebraError::Event { index: 1, .. })
        ));
        assert!(matches!(
            parse_events(b"[1]"),
            Err(ZebraError::Event { index: 0, .. })
        ));
        assert!(matches!(parse_events(b"\"x\""), Err(ZebraError::Shape)));
        assert!(matches!(parse_events(b"{"), Err(ZebraError::Json(_))));
    }
}
