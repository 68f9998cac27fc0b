//! A request as it arrives: its envelope and items parsed (a 400 for the
//! request as a whole when that fails), and each item's shape, sizes and
//! identifiers checked before anything of it is claimed (a 422 for that
//! item).

use serde::Deserialize;
use stockhop::time::UnixMs;
use stockhop::wire::{
    codes as wire_codes, AcknowledgeBody, Command, OpenSessionBody, ScanBody, SyncItem, UndoBody,
    VoidBody, MAX_ITEMS_PER_REQUEST,
};

use crate::ledger::modes;
use crate::ledger::receipts;
use crate::ledger::Refusal;
use crate::limits::{MAX_BODY_DEPTH, MAX_BODY_STRING_CHARS, MAX_ITEM_BODY_BYTES};

/// The largest `client_seq` (and `void_seq`): SQLite stores integers as
/// signed 64-bit. There is no lower cap: the ledger takes any backlog.
pub const MAX_CLIENT_SEQ: u64 = i64::MAX as u64;

/// One item as received: its typed form, the hash of its canonical JSON,
/// and that canonical JSON (kept while the item is buffered).
#[derive(Debug, Clone)]
pub struct Incoming {
    pub item: SyncItem,
    pub hash: String,
    pub canonical: String,
}

impl Incoming {
    pub fn from_value(value: &serde_json::Value) -> Result<Incoming, serde_json::Error> {
        let item = SyncItem::deserialize(value)?;
        let mut canonical = String::new();
        receipts::write_canonical(value, &mut canonical);
        Ok(Incoming {
            item,
            hash: receipts::canonical_hash(&canonical),
            canonical,
        })
    }
}

/// A parsed request: who says they sent it, when, and its items.
#[derive(Debug, Clone)]
pub struct ParsedRequest {
    pub device_id: String,
    pub sent_at: UnixMs,
    pub items: Vec<Incoming>,
}

/// Parses a request body (already within the size limit). Every failure is
/// a 400 for the request as a whole.
pub fn parse_request(body: &[u8]) -> Result<ParsedRequest, Refusal> {
    let malformed = |message: String| Refusal::new(400, wire_codes::MALFORMED_REQUEST, message);
    let value: serde_json::Value =
        serde_json::from_slice(body).map_err(|err| malformed(format!("not JSON: {err}")))?;
    let items = value
        .get("items")
        .and_then(serde_json::Value::as_array)
        .ok_or_else(|| malformed("missing items array".into()))?;
    if items.len() > MAX_ITEMS_PER_REQUEST {
        return Err(Refusal::new(
            400,
            wire_codes::TOO_MANY_ITEMS,
            format!(
                "{} items; at most {MAX_ITEMS_PER_REQUEST} a request",
                items.len()
            ),
        ));
    }
    #[derive(Deserialize)]
    struct Envelope {
        device_id: String,
        sent_at: UnixMs,
    }
    let envelope = Envelope::deserialize(&value).map_err(|err| malformed(err.to_string()))?;
    let items = items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            Incoming::from_value(item).map_err(|err| malformed(format!("item {i}: {err}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ParsedRequest {
        device_id: envelope.device_id,
        sent_at: envelope.sent_at,
        items,
    })
}

/// Checks what serde could not: sequence numbers, body sizes and shapes,
/// identifiers.
pub(super) fn validate(item: &SyncItem) -> Result<(), Refusal> {
    let bad = |message: String| Refusal::new(422, wire_codes::INVALID_ITEM, message);
    if item.client_seq == 0 || item.client_seq > MAX_CLIENT_SEQ {
        return Err(bad(format!("client_seq runs from 1 to {MAX_CLIENT_SEQ}")));
    }
    check_body(&item.body).map_err(bad)?;
    let field = |name: &'static str, value: Option<&str>| match value {
        Some(text) => crate::ident::check(name, text).map_err(|err| bad(err.to_string())),
        None => Ok(()),
    };
    let shape = |err: serde_json::Error| bad(format!("{} body: {err}", item.command.as_str()));
    match item.command {
        Command::OpenSession => {
            let body: OpenSessionBody = item.body_as().map_err(shape)?;
            field("operator_id", Some(&body.operator_id))
        }
        Command::Scan => {
            let body: ScanBody = item.body_as().map_err(shape)?;
            if body.epc.is_none() && body.code.is_none() && body.sscc.is_none() {
                return Err(bad("a scan names an epc, a code or a pallet's sscc".into()));
            }
            field("epc", body.epc.as_deref())?;
            field("code", body.code.as_deref())?;
            field("bin", body.bin.as_deref())?;
            modes::validate_scan(item)
        }
        Command::Undo => item.body_as::<UndoBody>().map(drop).map_err(shape),
        Command::Void => {
            let body: VoidBody = item.body_as().map_err(shape)?;
            if body.void_seq == 0 || body.void_seq > MAX_CLIENT_SEQ {
                return Err(bad(format!("void_seq runs from 1 to {MAX_CLIENT_SEQ}")));
            }
            Ok(())
        }
        Command::CloseSession => Ok(()),
        Command::Acknowledge => item.body_as::<AcknowledgeBody>().map(drop).map_err(shape),
    }
}

/// Bounds what any body may store, whatever its command reads from it:
/// its size, its depth, every string and key in it.
fn check_body(body: &serde_json::Value) -> Result<(), String> {
    fn walk(value: &serde_json::Value, depth: usize) -> Result<(), String> {
        use serde_json::Value;
        let string = |text: &str| {
            if text.chars().count() > MAX_BODY_STRING_CHARS {
                Err(format!(
                    "body strings are limited to {MAX_BODY_STRING_CHARS} characters"
                ))
            } else {
                Ok(())
            }
        };
        if depth > MAX_BODY_DEPTH {
            return Err(format!("body nested deeper than {MAX_BODY_DEPTH} levels"));
        }
        match value {
            Value::String(text) => string(text),
            Value::Array(items) => items.iter().try_for_each(|v| walk(v, depth + 1)),
            Value::Object(fields) => fields.iter().try_for_each(|(key, v)| {
                string(key)?;
                walk(v, depth + 1)
            }),
            Value::Null | Value::Bool(_) | Value::Number(_) => Ok(()),
        }
    }
    walk(body, 0)?;
    let bytes = serde_json::to_vec(body).map_or(usize::MAX, |json| json.len());
    if bytes > MAX_ITEM_BODY_BYTES {
        return Err(format!(
            "body of {bytes} bytes; at most {MAX_ITEM_BODY_BYTES}"
        ));
    }
    Ok(())
}
