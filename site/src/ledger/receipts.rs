//! Receipts: the claim on an idempotency key, the hash of the item as it
//! was received, and the answer stored for every replay.
//!
//! The request hash is SHA-256 over the item's canonical JSON: object keys
//! sorted by their UTF-8 bytes, no insignificant whitespace, strings and
//! numbers as serde_json writes them. It is taken over the item exactly as
//! received, so a field the server does not read still tells two bodies
//! apart.

use std::collections::HashMap;

use crate::store::sql::{params, Connection, Engine, OptionalExtension, Row};
use sha2::{Digest, Sha256};
use stockhop::key::IdempotencyKey;
use stockhop::time::UnixMs;
use stockhop::wire::ItemResult;

/// A receipt's state: held behind a gap, or answered for good.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReceiptState {
    Buffered,
    Final,
}

impl ReceiptState {
    fn as_str(self) -> &'static str {
        match self {
            ReceiptState::Buffered => "buffered",
            ReceiptState::Final => "final",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Receipt {
    pub key: String,
    pub client_seq: Option<u64>,
    pub command: String,
    pub request_hash: String,
    pub state: ReceiptState,
    /// The item as received, while it is buffered.
    pub item: Option<String>,
    pub skew_ms: i64,
    /// The stored answer, as JSON; `None` only inside the transaction that
    /// is working on it.
    pub response: Option<String>,
}

const COLUMNS: &str = "key, client_seq, command, request_hash, state, item, skew_ms, response";

impl Receipt {
    fn from_row(row: &Row<'_>) -> crate::store::sql::Result<Receipt> {
        let state: String = row.get(4)?;
        Ok(Receipt {
            key: row.get(0)?,
            client_seq: row.get::<_, Option<i64>>(1)?.map(|s| s as u64),
            command: row.get(2)?,
            request_hash: row.get(3)?,
            state: if state == "buffered" {
                ReceiptState::Buffered
            } else {
                ReceiptState::Final
            },
            item: row.get(5)?,
            skew_ms: row.get(6)?,
            response: row.get(7)?,
        })
    }

    /// The stored answer, marked replayed. `None` when it cannot be read:
    /// the caller fails closed and never runs the item again.
    pub fn stored_answer(&self) -> Option<ItemResult> {
        let mut answer: ItemResult = serde_json::from_str(self.response.as_deref()?).ok()?;
        if answer.key.to_string() != self.key {
            return None;
        }
        answer.replayed = true;
        Some(answer)
    }
}

/// SHA-256 (lower-case hex) of a JSON value's canonical form.
pub fn request_hash(value: &serde_json::Value) -> String {
    let mut text = String::new();
    write_canonical(value, &mut text);
    canonical_hash(&text)
}

/// SHA-256 (lower-case hex) of a canonical form [`write_canonical`] wrote.
pub fn canonical_hash(canonical: &str) -> String {
    hex::encode(Sha256::digest(canonical.as_bytes()))
}

/// Writes `value` canonically: keys sorted, no whitespace.
pub fn write_canonical(value: &serde_json::Value, out: &mut String) {
    let mut bytes = std::mem::take(out).into_bytes();
    write_canonical_bytes(value, &mut bytes);
    *out = String::from_utf8(bytes).expect("serde_json writes UTF-8");
}

/// [`write_canonical`] on bytes: keys and scalars are written by
/// serde_json's compact writer straight into `out`, as `Value`'s own
/// `Display` writes them, without a string of their own each.
fn write_canonical_bytes(value: &serde_json::Value, out: &mut Vec<u8>) {
    match value {
        serde_json::Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            out.push(b'{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_json(key.as_str(), out);
                out.push(b':');
                write_canonical_bytes(item, out);
            }
            out.push(b'}');
        }
        serde_json::Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_canonical_bytes(item, out);
            }
            out.push(b']');
        }
        scalar => write_json(scalar, out),
    }
}

/// A string or scalar as compact JSON: writing to memory cannot fail, and
/// a `Value` holds no number JSON cannot write.
fn write_json<T: serde::Serialize + ?Sized>(value: &T, out: &mut Vec<u8>) {
    serde_json::to_writer(out, value).expect("a JSON string or scalar always writes");
}

/// The receipt for `key` in `scope`, if the key was claimed.
pub fn find(
    conn: &Connection,
    scope: &str,
    key: &IdempotencyKey,
) -> crate::store::sql::Result<Option<Receipt>> {
    conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM receipts WHERE scope = ?1 AND key = ?2"
    ))?
    .query_row(params![scope, key.to_string()], Receipt::from_row)
    .optional()
}

/// The receipts already claimed in `scope` for any of `keys`, by key text, in
/// one query: a request reads its keys' claims together instead of one
/// lookup an item. The keys travel as one JSON array parameter, so the
/// statement is the same whatever their number.
pub fn find_many(
    conn: &Connection,
    scope: &str,
    keys: &[IdempotencyKey],
) -> crate::store::sql::Result<HashMap<String, Receipt>> {
    let texts: Vec<String> = keys.iter().map(ToString::to_string).collect();
    let list = serde_json::to_string(&texts)
        .map_err(|err| crate::store::sql::Error::ToSqlConversionFailure(err.to_string()))?;
    // Driven by the list: one primary-key search a key. Each engine has its
    // own table function for a JSON array's elements. On PostgreSQL the keys
    // are gathered into an array first: joined to the function's rows, the
    // generic plan of this prepared statement hashes them against a scan
    // of every receipt, which grows with the ledger.
    let mut statement = conn.prepare_cached(match conn.engine() {
        Engine::Sqlite => {
            "SELECT r.key, r.client_seq, r.command, r.request_hash, r.state, r.item, r.skew_ms,
                    r.response
             FROM json_each(?2) AS k CROSS JOIN receipts AS r ON r.scope = ?1 AND r.key = k.value"
        }
        Engine::Postgres => {
            "SELECT r.key, r.client_seq, r.command, r.request_hash, r.state, r.item, r.skew_ms,
                    r.response
             FROM receipts AS r
             WHERE r.scope = ?1
               AND r.key = ANY (ARRAY(SELECT json_array_elements_text(CAST(CAST(?2 AS TEXT) AS JSON))))"
        }
    })?;
    let rows = statement.query_map(params![scope, list], Receipt::from_row)?;
    rows.map(|receipt| receipt.map(|receipt| (receipt.key.clone(), receipt)))
        .collect()
}

/// The receipt holding `client_seq` in a session, if any.
pub fn at_seq(
    conn: &Connection,
    session_id: &str,
    client_seq: u64,
) -> crate::store::sql::Result<Option<Receipt>> {
    conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM receipts WHERE session_id = ?1 AND client_seq = ?2"
    ))?
    .query_row(params![session_id, client_seq as i64], Receipt::from_row)
    .optional()
}

/// A new claim on a key.
pub struct Claim<'a> {
    pub scope: &'a str,
    pub key: &'a IdempotencyKey,
    pub session_id: Option<&'a str>,
    pub client_seq: Option<u64>,
    pub command: &'a str,
    pub request_hash: &'a str,
    pub state: ReceiptState,
    pub item: Option<&'a str>,
    pub received_at: UnixMs,
    pub skew_ms: i64,
    /// The final answer, when the work is done before the claim.
    pub response: Option<&'a str>,
}

/// Claims a key. A second claim on the key, or on the session slot, fails
/// with a unique violation that the caller maps to its 409: on PostgreSQL
/// inside a transaction the insert travels with the next statement, so the
/// violation comes from that statement, or from the flush that ends the
/// item's savepoint or the transaction ([`Connection::flush`]).
pub fn claim(conn: &Connection, claim: &Claim<'_>) -> crate::store::sql::Result<()> {
    conn.prepare_cached(
        "INSERT INTO receipts (scope, key, session_id, client_seq, command, request_hash,
                               state, item, received_at, skew_ms, response)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    )?
    .execute_later(params![
        claim.scope,
        claim.key.to_string(),
        claim.session_id,
        claim.client_seq.map(|s| s as i64),
        claim.command,
        claim.request_hash,
        claim.state.as_str(),
        claim.item,
        claim.received_at.0,
        claim.skew_ms,
        claim.response,
    ])
}

/// An answer as stored.
pub fn to_json(answer: &ItemResult) -> crate::store::sql::Result<String> {
    serde_json::to_string(answer)
        .map_err(|err| crate::store::sql::Error::ToSqlConversionFailure(err.to_string()))
}

/// Stores the final answer for a claimed key and drops the buffered copy,
/// unless the answer is a rejection: a rejected item keeps its body for
/// the site's view of the decisions waiting, and is counted in the
/// rejection summaries ([`super::rejections`]).
pub fn finish(
    conn: &Connection,
    scope: &str,
    key: &IdempotencyKey,
    answer: &ItemResult,
) -> crate::store::sql::Result<()> {
    let response = to_json(answer)?;
    let keep = answer.outcome == Some(stockhop::wire::ItemOutcome::Rejected);
    conn.prepare_cached(
        "UPDATE receipts SET state = 'final', response = ?3,
                item = CASE WHEN ?4 = 1 THEN item ELSE NULL END
         WHERE scope = ?1 AND key = ?2",
    )?
    .execute(params![scope, key.to_string(), response, i64::from(keep)])?;
    if keep {
        let received_at: i64 = conn
            .prepare_cached("SELECT received_at FROM receipts WHERE scope = ?1 AND key = ?2")?
            .query_row(params![scope, key.to_string()], |row| row.get(0))?;
        super::rejections::rejected(
            conn,
            scope,
            &key.to_string(),
            answer.reason.as_deref(),
            UnixMs(received_at),
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_numbers_canonical_text_reads_back_to_the_same_number_and_hash() {
        // A 45-digit integer was read one ulp off, written as 1e+45 and
        // read back as another number: found by the sync_body fuzz target.
        for text in [
            "999999999999999999999999999999999999999999992",
            "1e45",
            "0.1",
            "-2.5e-308",
        ] {
            let value: serde_json::Value = serde_json::from_str(text).unwrap();
            let mut written = String::new();
            write_canonical(&value, &mut written);
            let again: serde_json::Value = serde_json::from_str(&written).unwrap();
            assert_eq!(again, value, "{text} written as {written}");
            assert_eq!(request_hash(&again), request_hash(&value));
        }
    }

    fn canonical(json: &str) -> String {
        let mut out = String::new();
        write_canonical(&serde_json::from_str(json).unwrap(), &mut out);
        out
    }

    #[test]
    fn canonical_json_sorts_keys_and_drops_whitespace() {
        assert_eq!(
            canonical(r#"{ "b": 1, "a": {"z": [1, 2, {"y": "x", "c": null}], "é": true} }"#),
            r#"{"a":{"z":[1,2,{"c":null,"y":"x"}],"é":true},"b":1}"#
        );
        assert_eq!(canonical(r#""a\"b""#), r#""a\"b""#);
    }

    #[test]
    fn canonical_json_writes_strings_and_numbers_as_serde_json_does() {
        // Keys with escapes and non-ASCII, control characters, numbers at
        // the edges of each kind.
        let text = r#"{"q\"k": "a\u0001\n\t\\\/é\ud83d\ude00", "n": [0, -0.0, 1.5e300,
            -9223372036854775808, 18446744073709551615, 0.1, 1e-7, true, false, null],
            "\u00e9": {"": ""}}"#;
        let value: serde_json::Value = serde_json::from_str(text).unwrap();
        // Without `preserve_order` serde_json's maps are sorted by key
        // bytes, so its compact form is the canonical one.
        assert_eq!(canonical(text), serde_json::to_string(&value).unwrap());
    }

    #[test]
    fn the_hash_ignores_key_order_and_whitespace_but_not_values() {
        let a = serde_json::from_str(r#"{"a":1,"b":"x"}"#).unwrap();
        let b = serde_json::from_str("{ \"b\" : \"x\",\n \"a\" : 1 }").unwrap();
        let c = serde_json::from_str(r#"{"a":2,"b":"x"}"#).unwrap();
        assert_eq!(request_hash(&a), request_hash(&b));
        assert_ne!(request_hash(&a), request_hash(&c));
        assert_eq!(request_hash(&a).len(), 64);
    }
}
