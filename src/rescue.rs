//! The rescue file: a handheld's unacknowledged queue as one signed file, so
//! a device that can no longer reach the site (a broken radio, the wrong
//! site, a device being retired) still hands over every scan it holds, and
//! the site applies them exactly once through the same code as sync
//! (docs/design.md, "No scan is stranded").
//!
//! The format is JSON Lines, UTF-8, every line ending in `\n`:
//!
//! ```text
//! {"format":"stockhop-rescue/1","device_id":"HH-0042","build":"…","exported_at":"…","items":2}
//! {"key":"…","session_id":"…","client_seq":1,"command":"open_session",…}
//! {"key":"…","session_id":"…","client_seq":2,"command":"scan",…}
//! {"sha256":"<hex>","hmac":"<hex>"}
//! ```
//!
//! a header, one line per item exactly as a sync request carries it (in any
//! order: the site puts them in `client_seq` order per session), and a
//! trailer whose `sha256` and `hmac` are both over every byte before the
//! trailer line. The HMAC-SHA256 is keyed by the 32-byte SHA-256 of the
//! device's token ([`token_digest`]), which is what the site keeps of the
//! token, so the site can tell the file came from that device without
//! ever holding the token itself.
//!
//! Architecture invariant: sans-IO. [`write`] is what the handheld calls
//! with the items it reads from its queue (exporting changes nothing in
//! the queue); [`read`] and [`verify`] are what the site calls on the bytes
//! it was given. Nothing here reads a clock or a file.

use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::time::UnixMs;
use crate::wire::SyncItem;

/// The header's `format`: the version of this layout.
pub const FORMAT: &str = "stockhop-rescue/1";

/// The largest file the site reads, in bytes. The site takes the file as
/// one request body and holds it in memory while it imports, so it is
/// bounded; 64 MiB holds [`MAX_ITEMS`] items at the ~400 bytes a scan takes
/// on the wire with room to spare (10,000 items are about 4 MB).
pub const MAX_FILE_BYTES: usize = 64 * 1024 * 1024;

/// The most items one file carries: a handheld scanning once a second
/// through a whole day without reaching the site holds 86,400, so a day
/// and more of scans fits in one file.
pub const MAX_ITEMS: usize = 100_000;

/// The longest line, in bytes, `\n` included: eight times the largest item
/// body the site stores (8 KiB) plus the item's own fields, so an item too
/// large for the site is still read and then refused by itself (as sync
/// refuses it), while no single line can hold the reader hostage.
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// The SHA-256 of a device token, the key of a file's HMAC: the site keeps
/// exactly this (hex-encoded) for every device.
pub type TokenDigest = [u8; 32];

/// The digest of `token` the site keeps and a file is signed with.
pub fn token_digest(token: &str) -> TokenDigest {
    Sha256::digest(token.as_bytes()).into()
}

/// Who wrote a file, with what, and when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    pub device_id: String,
    /// The build of the handheld that wrote it (its `app_version`).
    pub build: String,
    /// The device's clock when the file was written.
    pub exported_at: UnixMs,
}

/// The header line as written and read: [`Header`] with the format and the
/// item count that the reader checks against the lines.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct HeaderLine {
    format: String,
    device_id: String,
    build: String,
    exported_at: UnixMs,
    items: u64,
}

/// The last line: both digests over every byte before it, in lower-case hex.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Trailer {
    pub sha256: String,
    pub hmac: String,
}

/// A file read whole, its integrity checked ([`Trailer::sha256`]); whether
/// the device signed it is [`verify`]'s answer.
#[derive(Debug, Clone, PartialEq)]
pub struct RescueFile<'a> {
    pub header: Header,
    /// The items in the file's order.
    pub items: Vec<SyncItem>,
    pub trailer: Trailer,
    /// Every byte before the trailer line: what the trailer covers.
    signed: &'a [u8],
}

/// Why bytes are not a rescue file. The site refuses such a file whole.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RescueError {
    #[error("the file is {bytes} bytes; a rescue file is at most {MAX_FILE_BYTES}")]
    TooLarge { bytes: usize },
    #[error("the file is empty")]
    Empty,
    #[error("{what}, not a handheld's rescue file (the queue screen's Export writes one)")]
    NotRescueFile { what: &'static str },
    #[error("the file does not end with a complete line: it was cut short")]
    Truncated,
    #[error("line {line} is over {MAX_LINE_BYTES} bytes")]
    LineTooLong { line: usize },
    #[error("line {line} is not a JSON line: {reason}")]
    NotJsonLines { line: usize, reason: String },
    #[error("the first line is not a rescue header: {reason}")]
    BadHeader { reason: String },
    #[error("the header says format {found:?}; this site reads {FORMAT:?}")]
    UnknownFormat { found: String },
    #[error("line {line} is not a queued item: {reason}")]
    BadItem { line: usize, reason: String },
    #[error("the last line is not the trailer with the file's digests: the file was cut short or is not a rescue file")]
    NoTrailer,
    #[error("the header counts {header} items but the file holds {found}")]
    CountMismatch { header: u64, found: usize },
    #[error("the file holds {found} items; a rescue file holds at most {MAX_ITEMS}")]
    TooManyItems { found: usize },
    #[error("the file's bytes do not match its SHA-256: it was changed or damaged")]
    DigestMismatch,
}

/// The file's name: `stockhop-rescue-<device>-<instant>.jsonl`, the instant
/// in UTC without the `:` and `-` that some file systems refuse
/// (`20261129T101502.120Z`).
pub fn file_name(device_id: &str, exported_at: UnixMs) -> String {
    let instant: String = exported_at
        .to_string()
        .chars()
        .filter(|c| !matches!(c, '-' | ':'))
        .collect();
    format!("stockhop-rescue-{device_id}-{instant}.jsonl")
}

/// Writes the file: the header, each item as one line in the order given,
/// and the trailer signed with `token_digest`. The caller passes every item
/// not yet acknowledged; nothing here changes them.
pub fn write(header: &Header, items: &[SyncItem], token_digest: &TokenDigest) -> Vec<u8> {
    let Ok(signed) = signed_lines(&mut SerdeJson, header, items);
    let trailer = sign(&signed, token_digest);
    let Ok(file) = seal(&mut SerdeJson, signed, &trailer);
    file
}

/// How a value becomes one line of a file: compact JSON (which never holds
/// a raw newline: strings escape it) and the `\n`. [`write`] uses
/// serde_json's writer; the handheld passes the browser's `JSON.stringify`
/// of the value serde gives it, so its module carries no JSON text writer
/// of its own. Either way the layout is this module's: which lines, which
/// fields, in what order.
pub trait Lines {
    type Error;
    /// Appends `value` as one JSON line, its `\n` included.
    fn push<T: Serialize>(&mut self, out: &mut Vec<u8>, value: &T) -> Result<(), Self::Error>;
}

/// [`Lines`] through `serde_json::to_writer`.
pub struct SerdeJson;

impl Lines for SerdeJson {
    type Error = std::convert::Infallible;

    fn push<T: Serialize>(&mut self, out: &mut Vec<u8>, value: &T) -> Result<(), Self::Error> {
        serde_json::to_writer(&mut *out, value)
            .expect("a header, an item and a trailer always serialize to JSON");
        out.push(b'\n');
        Ok(())
    }
}

/// The part of a file its trailer covers: the header line and one line
/// per item, in the order given. [`write`] is this, signed and sealed; a
/// caller that computes the digests itself (the handheld, with the
/// browser's own SHA-256 and HMAC) passes them to [`trailer`] and
/// [`seal`].
pub fn signed_lines<L: Lines>(
    lines: &mut L,
    header: &Header,
    items: &[SyncItem],
) -> Result<Vec<u8>, L::Error> {
    let head = HeaderLine {
        format: FORMAT.to_owned(),
        device_id: header.device_id.clone(),
        build: header.build.clone(),
        exported_at: header.exported_at,
        items: items.len() as u64,
    };
    let mut out = Vec::with_capacity(256 * (items.len() + 2));
    lines.push(&mut out, &head)?;
    for item in items {
        lines.push(&mut out, item)?;
    }
    Ok(out)
}

/// The trailer of the two digests of [`signed_lines`]' bytes: their
/// SHA-256, and their HMAC-SHA256 keyed by the device's [`TokenDigest`].
pub fn trailer(sha256: &[u8; 32], hmac: &[u8; 32]) -> Trailer {
    Trailer {
        sha256: hex::encode(sha256),
        hmac: hex::encode(hmac),
    }
}

/// The whole file: `signed` ([`signed_lines`]) and its trailer line.
pub fn seal<L: Lines>(
    lines: &mut L,
    mut signed: Vec<u8>,
    trailer: &Trailer,
) -> Result<Vec<u8>, L::Error> {
    lines.push(&mut signed, trailer)?;
    Ok(signed)
}

fn mac(token_digest: &TokenDigest) -> Hmac<Sha256> {
    Hmac::<Sha256>::new_from_slice(token_digest).expect("HMAC takes a key of any length")
}

fn sign(signed: &[u8], token_digest: &TokenDigest) -> Trailer {
    let mut hmac = mac(token_digest);
    hmac.update(signed);
    trailer(
        &Sha256::digest(signed).into(),
        &hmac.finalize().into_bytes().into(),
    )
}

/// Refuses bytes whose first line cannot begin a rescue file, saying
/// what they look like instead, before anything is said of their end (an
/// SQLite database has no final newline, but it was never cut short).
fn what_it_is(bytes: &[u8]) -> Result<(), RescueError> {
    const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";
    let first = bytes.split(|&b| b == b'\n').next().unwrap_or_default();
    let what = if bytes.starts_with(SQLITE_MAGIC) {
        "this is an SQLite database"
    } else if !first.starts_with(b"{") {
        "this is not JSON Lines"
    } else {
        match serde_json::from_slice::<serde_json::Value>(first) {
            // Cut short inside its first line: said as such below.
            Err(err) if err.is_eof() => return Ok(()),
            Err(_) => "its first line is not JSON",
            Ok(value) if value.get("format").is_none() => {
                "its first line is JSON without a rescue file's \"format\""
            }
            Ok(_) => return Ok(()),
        }
    };
    Err(RescueError::NotRescueFile { what })
}

/// Reads a file whole: every line within its bounds, a header of this
/// format, items that are sync items, a trailer, as many items as the
/// header says, and bytes that match the trailer's SHA-256. Anything else
/// is refused; nothing of such a file should be used.
pub fn read(bytes: &[u8]) -> Result<RescueFile<'_>, RescueError> {
    if bytes.len() > MAX_FILE_BYTES {
        return Err(RescueError::TooLarge { bytes: bytes.len() });
    }
    if bytes.is_empty() {
        return Err(RescueError::Empty);
    }
    what_it_is(bytes)?;
    let body = bytes.strip_suffix(b"\n").ok_or(RescueError::Truncated)?;
    let lines: Vec<&[u8]> = body.split(|&b| b == b'\n').collect();
    if let Some(line) = lines.iter().position(|l| l.len() + 1 > MAX_LINE_BYTES) {
        return Err(RescueError::LineTooLong { line: line + 1 });
    }
    let value_of = |line: usize, text: &[u8]| {
        serde_json::from_slice::<serde_json::Value>(text).map_err(|err| RescueError::NotJsonLines {
            line,
            reason: err.to_string(),
        })
    };
    let head_value = value_of(1, lines[0])?;
    if let Some(found) = head_value.get("format").and_then(serde_json::Value::as_str) {
        if found != FORMAT {
            return Err(RescueError::UnknownFormat {
                found: found.to_owned(),
            });
        }
    }
    let head = HeaderLine::deserialize(&head_value).map_err(|err| RescueError::BadHeader {
        reason: err.to_string(),
    })?;
    let (last, middle) = match lines.split_last() {
        Some((last, rest)) if !rest.is_empty() => (*last, &rest[1..]),
        _ => return Err(RescueError::NoTrailer),
    };
    let trailer = value_of(lines.len(), last)
        .ok()
        .and_then(|value| Trailer::deserialize(&value).ok())
        .filter(|t| is_hex_digest(&t.sha256) && is_hex_digest(&t.hmac))
        .ok_or(RescueError::NoTrailer)?;
    if head.items != middle.len() as u64 {
        return Err(RescueError::CountMismatch {
            header: head.items,
            found: middle.len(),
        });
    }
    if middle.len() > MAX_ITEMS {
        return Err(RescueError::TooManyItems {
            found: middle.len(),
        });
    }
    let items = middle
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let line = i + 2;
            let value = value_of(line, text)?;
            SyncItem::deserialize(&value).map_err(|err| RescueError::BadItem {
                line,
                reason: err.to_string(),
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let signed = &bytes[..bytes.len() - last.len() - 1];
    if hex::encode(Sha256::digest(signed)) != trailer.sha256 {
        return Err(RescueError::DigestMismatch);
    }
    Ok(RescueFile {
        header: Header {
            device_id: head.device_id,
            build: head.build,
            exported_at: head.exported_at,
        },
        items,
        trailer,
        signed,
    })
}

/// 64 lower-case hex digits: a SHA-256 as the trailer writes it.
fn is_hex_digest(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Whether the device whose token hashes to `token_digest` signed `file`.
/// The comparison takes the same time wherever the HMACs differ.
pub fn verify(file: &RescueFile<'_>, token_digest: &TokenDigest) -> bool {
    let Ok(expected) = hex::decode(&file.trailer.hmac) else {
        return false;
    };
    let mut hmac = mac(token_digest);
    hmac.update(file.signed);
    hmac.verify_slice(&expected).is_ok()
}

// The tests use proptest, a native dev-dependency: they run natively.
#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;
