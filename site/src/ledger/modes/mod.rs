//! The five capture modes as ledger rules: what each mode's `open_session`
//! needs, what each scan checks and changes, what an undo of a scan puts
//! back, and what closing a session computes. The handheld checks the
//! same preconditions from its cached reference data; the ledger checks
//! them again when the item arrives, against the site's own data, and its
//! answer is the one that counts.
//!
//! [`super::sync`] calls in at an item's gate (profile and read-only mode,
//! before anything else), `open_session`, `scan`, `undo` (once the core's
//! rule, `stockhop::undo`, allows it) and `close_session`, and keeps
//! everything else (keys, order, buffering, receipts) to itself. Every
//! refusal here is a `rejected` outcome with a reason, stored and replayed
//! like any other answer.
//!
//! A device that is not commissioned passes the gate the same way, but its
//! sessions open without preconditions and its scans record a simulated
//! hop with no effect: it practises, and posts nothing.

pub mod cycle_count;
pub mod dispatch;
pub mod put_away;
pub mod receive;

use crate::store::sql::Connection;
use serde::Deserialize;
use sha2::{Digest, Sha256};
#[cfg(test)]
use stockhop::key::IdempotencyKey;
use stockhop::time::UnixMs;
use stockhop::wire::{codes as wire_codes, Command, Mode, OpenSessionBody, SyncItem};

use super::devices::{Device, Profile};
use super::hops::{self, HopFacts, NewHop, SourceMode};
use super::sessions::Session;
use super::units::Unit;
use super::{LedgerError, Refusal};
use crate::limits::MAX_ITEM_FIELD_CHARS as MAX_FIELD_CHARS;

/// The rejection reasons (the modes' and the sync protocol's alike).
pub use stockhop::reason as reasons;

/// What a profile may do (the device profile table: form, read, write).
impl Profile {
    /// Handhelds and sleds open handheld modes; a fixed gate reaches the
    /// site through the terminal listener and a printer never scans.
    pub fn runs_handheld_modes(self) -> bool {
        matches!(self, Profile::Mc3390xr | Profile::Rfd40)
    }

    /// Whether it can write (encode) a tag.
    pub fn can_encode(self) -> bool {
        !matches!(self, Profile::Fxr90)
    }
}

/// A scan's body in any mode: the facts the device read. Which fields a
/// mode needs is [`validate_scan`]'s business.
#[derive(Debug, Clone, Deserialize)]
pub struct ModeScan {
    pub mode: Mode,
    /// In the one spelling the ledger holds EPCs in
    /// (`ident::canonical_epc`): a client that sends one in lower case
    /// names the same unit as the handheld that sends it in upper case.
    #[serde(default, deserialize_with = "canonical_epc")]
    pub epc: Option<String>,
    #[serde(default)]
    pub code: Option<String>,
    #[serde(default)]
    pub unit_version: Option<u64>,
    #[serde(default)]
    pub bin: Option<String>,
    #[serde(default)]
    pub grn: Option<String>,
    #[serde(default)]
    pub sku: Option<String>,
    #[serde(default)]
    pub encode: bool,
    #[serde(default)]
    pub count_id: Option<String>,
    #[serde(default)]
    pub manifest: Option<String>,
    /// A receive of a GS1 unit label: the label's GTIN (14 digits), which
    /// names the SKU, and the lot and expiry (`YYYY-MM-DD`) recorded on
    /// the unit.
    #[serde(default)]
    pub gtin: Option<String>,
    #[serde(default)]
    pub lot: Option<String>,
    #[serde(default)]
    pub expiry: Option<String>,
    /// A dispatch verify of a pallet's label: its SSCC (18 digits), which
    /// verifies every unit of the pallet on the manifest.
    #[serde(default)]
    pub sscc: Option<String>,
}

fn canonical_epc<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<String>, D::Error> {
    Ok(Option::<String>::deserialize(deserializer)?.map(crate::ident::canonical_epc))
}

/// The mode an item names, if it is one that names a mode.
fn item_mode(item: &SyncItem) -> Option<Mode> {
    match item.command {
        Command::OpenSession | Command::Scan => item
            .body
            .get("mode")
            .and_then(|mode| Mode::deserialize(mode).ok()),
        _ => None,
    }
}

/// The gate every item passes before its session is looked at: a
/// `find_unit` item is answered from the device's cache and never posts
/// (`read_only_mode`, in whatever session); a profile that cannot run
/// handheld modes, or encode, is `mode_not_allowed`.
pub fn gate(device: &Device, item: &SyncItem) -> Option<&'static str> {
    let mode = item_mode(item)?;
    if mode == Mode::FindUnit {
        return Some(reasons::READ_ONLY_MODE);
    }
    if !device.profile.runs_handheld_modes() {
        return Some(reasons::MODE_NOT_ALLOWED);
    }
    let encodes = item.command == Command::Scan
        && item.body.get("encode").and_then(serde_json::Value::as_bool) == Some(true);
    if encodes && !device.profile.can_encode() {
        return Some(reasons::MODE_NOT_ALLOWED);
    }
    None
}

/// A check of one GS1 field of a scan: its value as the ledger keeps it,
/// or what is wrong with it.
type Gs1Check = dyn Fn(&str) -> Result<String, String>;

/// Checks the fields a mode's scan needs, when the item arrives: a scan
/// that lacks them will never be taken as sent (422).
pub fn validate_scan(item: &SyncItem) -> Result<(), Refusal> {
    let bad = |message: String| Refusal::new(422, wire_codes::INVALID_ITEM, message);
    let body: ModeScan = item
        .body_as()
        .map_err(|err| bad(format!("scan body: {err}")))?;
    for (name, value) in [
        ("grn", &body.grn),
        ("count_id", &body.count_id),
        ("manifest", &body.manifest),
    ] {
        if let Some(text) = value.as_deref() {
            crate::ident::check(name, text).map_err(|err| bad(err.to_string()))?;
        }
    }
    // A scan's SKU is text, as an import's is: checked as the import
    // checks it (no control characters, no direction controls), so a scan
    // never names a SKU no import could hold.
    for (name, value) in [("sku", &body.sku)] {
        if let Some(text) = value.as_deref() {
            if text.is_empty() || text.chars().count() > MAX_FIELD_CHARS {
                return Err(bad(format!(
                    "{name} must be 1 to {MAX_FIELD_CHARS} characters"
                )));
            }
            crate::ident::check_text(name, text).map_err(|err| bad(err.to_string()))?;
        }
    }
    // GS1 keys as a label carries them, checked as an import checks them.
    let gs1_checks: [(&Option<String>, &Gs1Check); 4] = [
        (&body.gtin, &super::labels::gtin),
        (&body.lot, &|value| {
            super::labels::element_value("10", "lot", value)
        }),
        (&body.expiry, &super::labels::expiry),
        (&body.sscc, &|value| {
            super::labels::element_value("00", "sscc", value)
        }),
    ];
    for (value, check) in gs1_checks {
        if let Some(text) = value.as_deref() {
            check(text).map_err(bad)?;
        }
    }
    match body.mode {
        Mode::PutAway if body.bin.is_none() => Err(bad(
            "a put_away scan names the bin whose label was scanned".into(),
        )),
        Mode::DispatchVerify if body.epc.is_none() && body.sscc.is_none() => Err(bad(
            "a dispatch_verify scan names the tag's epc or the pallet's sscc".into(),
        )),
        Mode::Receive | Mode::CycleCount if body.epc.is_none() => Err(bad(format!(
            "a {} scan names the tag's epc",
            body.mode.as_str()
        ))),
        _ => Ok(()),
    }
}

/// What an `open_session` needs, checked before the session opens: the
/// rejection reason, if it may not.
pub fn open_refusal(
    conn: &Connection,
    device: &Device,
    body: &OpenSessionBody,
) -> crate::store::sql::Result<Option<&'static str>> {
    if !device.commissioned {
        return Ok(None);
    }
    let context = |name: &str| body.context.get(name).and_then(serde_json::Value::as_str);
    Ok(match body.mode {
        Mode::PutAway | Mode::FindUnit => None,
        Mode::Receive => receive::open_refusal(conn, context("grn"))?,
        Mode::CycleCount => cycle_count::open_refusal(conn, context("count_id"))?,
        Mode::DispatchVerify => dispatch::open_refusal(conn, context("manifest"))?,
    })
}

/// What a scan did.
#[derive(Debug)]
pub enum Scanned {
    Applied(Vec<i64>),
    Simulated(Vec<i64>),
    Rejected(&'static str),
}

/// What a mode's scan works with: the open session's context, the body,
/// and the hop the item records (its kind, unit and bins still to fill in).
pub struct ScanCtx<'a> {
    pub now: UnixMs,
    pub body: ModeScan,
    /// The open session's context (`grn`, `count_id`, `manifest`).
    pub context: serde_json::Value,
    pub hop: NewHop<'a>,
}

impl ScanCtx<'_> {
    /// The value the session was opened with for `name`; a scan that names
    /// another is not part of this session (422). None when the session
    /// opened without it: a device that was not commissioned then opens
    /// without preconditions, and may be commissioned since.
    pub fn context_value(
        &self,
        name: &str,
        sent: Option<&str>,
    ) -> Result<Option<String>, LedgerError> {
        let opened = self.context.get(name).and_then(serde_json::Value::as_str);
        match (opened, sent) {
            (Some(opened), Some(sent)) if opened != sent => {
                Err(LedgerError::Refused(Refusal::new(
                    422,
                    wire_codes::INVALID_ITEM,
                    format!(
                        "the scan names {name} {sent:?}; its session was opened for {opened:?}"
                    ),
                )))
            }
            (opened, _) => Ok(opened.map(str::to_owned)),
        }
    }

    /// Appends the item's hop of `kind` for `unit` with its places and
    /// version after.
    pub fn append(
        &self,
        conn: &Connection,
        kind: &'static str,
        unit: Option<&Unit>,
        from_bin: Option<&str>,
        version: Option<u64>,
    ) -> crate::store::sql::Result<i64> {
        self.append_keyed(conn, self.hop.key, kind, unit, from_bin, version)
    }

    /// [`ScanCtx::append`] under `key` (a side effect's own key).
    pub fn append_keyed(
        &self,
        conn: &Connection,
        key: &str,
        kind: &'static str,
        unit: Option<&Unit>,
        from_bin: Option<&str>,
        version: Option<u64>,
    ) -> crate::store::sql::Result<i64> {
        let hop = NewHop {
            key,
            kind,
            unit_id: unit.map(|unit| unit.unit_id),
            from_bin,
            to_bin: unit.and_then(|unit| unit.bin.as_deref()),
            unit_version: version,
            source_mode: SourceMode::Live,
            ..self.hop.clone()
        };
        hops::append(conn, &hop)
    }

    /// `stale_state` when the device read the unit at another version.
    pub fn is_stale(&self, unit: &Unit) -> bool {
        self.body
            .unit_version
            .is_some_and(|seen| seen != unit.version)
    }
}

/// Applies a scan in its open session.
pub fn scan(
    conn: &Connection,
    device: &Device,
    session: &Session,
    item: &SyncItem,
    hop: NewHop<'_>,
    now: UnixMs,
) -> Result<Scanned, LedgerError> {
    let body: ModeScan = item.body_as().map_err(invalid)?;
    if let Some(opened) = session.mode.as_deref() {
        if opened != body.mode.as_str() {
            return Err(LedgerError::Refused(Refusal::new(
                422,
                wire_codes::INVALID_ITEM,
                format!("a {} scan in a {opened} session", body.mode.as_str()),
            )));
        }
    }
    let hop = NewHop {
        kind: hops::scan_kind(body.mode),
        mode: Some(body.mode),
        ..hop
    };
    if !device.commissioned {
        return Ok(Scanned::Simulated(vec![hops::append(conn, &hop)?]));
    }
    let context = match session.context.as_deref() {
        Some(text) => serde_json::from_str(text)
            .map_err(|err| LedgerError::Corrupt(format!("session context: {err}")))?,
        None => serde_json::Value::Null,
    };
    let ctx = ScanCtx {
        now,
        body,
        context,
        hop,
    };
    match ctx.body.mode {
        Mode::PutAway => put_away::scan(conn, &ctx),
        Mode::Receive => receive::scan(conn, &ctx),
        Mode::DispatchVerify => dispatch::scan(conn, &ctx),
        Mode::CycleCount => cycle_count::scan(conn, &ctx),
        // The gate answered it before it got here.
        Mode::FindUnit => Ok(Scanned::Rejected(reasons::READ_ONLY_MODE)),
    }
}

/// Posts the compensating hop of an undo of `original`, a live scan's hop
/// (which scans can be undone, and until when, the caller has checked by
/// [`stockhop::undo`]): each mode puts back what its scan changed, or
/// rejects the undo when that no longer can be done as recorded (the unit
/// moved since: `stale_state`; the count is no longer open:
/// `count_not_open`). `hop` is the undo's hop with its unit, mode and
/// `compensates` filled in; the mode fills in its places and version.
pub fn undo(
    conn: &Connection,
    original: &HopFacts,
    hop: NewHop<'_>,
) -> Result<Scanned, LedgerError> {
    let context = match original.session_id.as_deref() {
        Some(session_id) => super::sessions::find(conn, session_id)?
            .and_then(|session| session.context)
            .map(|text| serde_json::from_str(&text))
            .transpose()
            .map_err(|err| LedgerError::Corrupt(format!("session context: {err}")))?,
        None => None,
    }
    .unwrap_or(serde_json::Value::Null);
    // What the scan was counted against: its session's context, or else
    // what its body named.
    let named = |name: &str| {
        context
            .get(name)
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned)
            .or_else(|| original.fact(name))
    };
    let unit = match original.unit_id {
        Some(unit_id) => super::units::get(conn, unit_id)?,
        None => None,
    };
    let undo = Undo {
        original,
        unit: unit.as_ref(),
        hop,
    };
    match original.mode.as_deref() {
        Some("put_away") => put_away::undo(conn, undo),
        Some("receive") => receive::undo(conn, undo),
        Some("dispatch_verify") => dispatch::undo(conn, undo, named("manifest")),
        Some("cycle_count") => cycle_count::undo(conn, undo, named("count_id")),
        _ => Ok(Scanned::Rejected(reasons::TARGET_NOT_UNDOABLE)),
    }
}

/// An undo as a mode compensates it: the hop it undoes, that hop's unit
/// as it stands now, and the undo's own hop still to place.
pub struct Undo<'a> {
    pub original: &'a HopFacts,
    pub unit: Option<&'a Unit>,
    pub hop: NewHop<'a>,
}

impl<'a> Undo<'a> {
    /// The unit the original hop changed, as it stands now.
    pub fn unit(&self) -> Result<&'a Unit, LedgerError> {
        self.unit.ok_or_else(|| {
            LedgerError::Corrupt(format!("hop {} names no unit", self.original.hop_id))
        })
    }

    /// Refuses a second undo of the same scan where the unit's version
    /// cannot tell (a receive or a count scan leaves it as it was): `409
    /// ALREADY_UNDONE`, as the ledger's unique `compensates` would.
    pub fn not_undone_yet(&self, conn: &Connection) -> Result<(), LedgerError> {
        if hops::compensated(conn, self.original.hop_id)? {
            return Err(LedgerError::Refused(Refusal::new(
                409,
                super::codes::ALREADY_UNDONE,
                format!("hop {} is undone already", self.original.hop_id),
            )));
        }
        Ok(())
    }

    /// Whether the unit changed since the original hop left it.
    pub fn moved_since(&self, unit: &Unit) -> bool {
        Some(unit.version) != self.original.unit_version
    }

    /// Appends the undo's hop, the unit going from `from_bin` to `to_bin`
    /// at `version`.
    pub fn post(
        self,
        conn: &Connection,
        from_bin: Option<&'a str>,
        to_bin: Option<&'a str>,
        version: Option<u64>,
    ) -> Result<Scanned, LedgerError> {
        let hop = NewHop {
            from_bin,
            to_bin,
            unit_version: version,
            ..self.hop
        };
        Ok(Scanned::Applied(vec![hops::append(conn, &hop)?]))
    }
}

/// What closing a session computes for its mode: a receive session sets
/// its GRN's state, a count session closes its count.
pub fn close(
    conn: &Connection,
    device: &Device,
    session: &Session,
    now: UnixMs,
) -> Result<(), LedgerError> {
    if !device.commissioned {
        return Ok(());
    }
    let context: serde_json::Value = match session.context.as_deref() {
        Some(text) => serde_json::from_str(text)
            .map_err(|err| LedgerError::Corrupt(format!("session context: {err}")))?,
        None => return Ok(()),
    };
    let named = |name: &str| context.get(name).and_then(serde_json::Value::as_str);
    match (session.mode.as_deref(), named("grn"), named("count_id")) {
        (Some("receive"), Some(grn), _) => receive::settle(conn, grn)?,
        (Some("cycle_count"), _, Some(count_id)) => cycle_count::close(conn, count_id, now)?,
        _ => {}
    }
    Ok(())
}

/// A key for a side effect of the item (or supervisor action) `parts`
/// name: a UUIDv8 from their SHA-256, the same every time, so the effect
/// has its own key in the hop ledger and is posted once.
pub fn derived_key(parts: &[&str]) -> String {
    let mut hash = Sha256::new();
    for part in parts {
        hash.update(part.as_bytes());
        hash.update([0]);
    }
    let digest = hash.finalize();
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    uuid::Builder::from_custom_bytes(bytes)
        .into_uuid()
        .hyphenated()
        .to_string()
}

fn invalid(err: serde_json::Error) -> LedgerError {
    LedgerError::Refused(Refusal::new(422, wire_codes::INVALID_ITEM, err.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_side_effects_key_is_a_uuidv8_the_same_for_the_same_cause() {
        let key = derived_key(&["HH-1", "8a0c5e2e-4b1f-4c3d-9e8f-0123456789ab", "ENCODE"]);
        let parsed = IdempotencyKey::parse(&key).unwrap();
        assert_eq!(parsed.version(), 8);
        assert_eq!(
            key,
            derived_key(&["HH-1", "8a0c5e2e-4b1f-4c3d-9e8f-0123456789ab", "ENCODE"])
        );
        assert_ne!(
            key,
            derived_key(&["HH-2", "8a0c5e2e-4b1f-4c3d-9e8f-0123456789ab", "ENCODE"])
        );
        // Parts are separated: ("ab", "c") is not ("a", "bc").
        assert_ne!(derived_key(&["ab", "c"]), derived_key(&["a", "bc"]));
    }

    /// A receive scan naming `sku`, as a handheld sends it.
    fn receive_scan(sku: &str) -> SyncItem {
        serde_json::from_value(serde_json::json!({
            "key": derived_key(&["scan"]),
            "session_id": derived_key(&["session"]),
            "client_seq": 2,
            "command": "scan",
            "occurred_at": "2026-01-05T09:00:00Z",
            "queued_at": "2026-01-05T09:00:00Z",
            "body": {"mode": "receive", "grn": "G-1", "epc": "U-1", "sku": sku},
        }))
        .unwrap()
    }

    #[test]
    fn a_scans_sku_is_refused_for_what_an_import_of_it_is_refused_for() {
        assert!(validate_scan(&receive_scan("SKU-1")).is_ok());
        for (sku, told) in [
            ("SKU\u{202E}1", "sku must not contain U+202E"),
            ("SKU\u{2066}1", "sku must not contain U+2066"),
            ("SKU\u{1b}[2J", "sku must not contain control characters"),
        ] {
            let refusal = validate_scan(&receive_scan(sku)).unwrap_err();
            assert_eq!(refusal.status, 422, "{sku:?}");
            assert!(refusal.message.starts_with(told), "{}", refusal.message);
        }
    }

    #[test]
    fn only_handhelds_and_sleds_run_modes_and_only_a_fixed_gate_cannot_encode() {
        let runs: Vec<_> = [
            Profile::Fxr90,
            Profile::Mc3390xr,
            Profile::Rfd40,
            Profile::Zt411r,
        ]
        .map(|p| (p.runs_handheld_modes(), p.can_encode()))
        .into();
        assert_eq!(
            runs,
            [(false, false), (true, true), (true, true), (false, true)]
        );
    }
}
