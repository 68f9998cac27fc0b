//! Row checks: one row of any kind, checked on its own, as it is staged
//! and applied.

use super::*;

/// A row, checked on its own, as staged (JSON in `import_rows.fields`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(super) enum Row {
    Bin {
        bin: String,
        zone: String,
        location: String,
    },
    Unit {
        epc: String,
        code: Option<String>,
        sku: String,
        state: String,
        bin: Option<String>,
        /// Staged before the GS1 columns existed: none given.
        #[serde(default)]
        gs1: UnitGs1,
    },
    GrnLine {
        grn: String,
        qc: String,
        sku: String,
        expected: u64,
    },
    ManifestUnit {
        manifest: String,
        state: String,
        epc: String,
        #[serde(default)]
        sscc: Option<String>,
        /// The file had no `sscc` column: the unit keeps its pallet.
        #[serde(default)]
        keep_sscc: bool,
    },
    Operator {
        badge: String,
        name: String,
        /// Staged before the `language` column existed: none given.
        #[serde(default)]
        language: OperatorLanguage,
    },
    Sku {
        sku: String,
        gtin: String,
    },
}

/// What an operator row says of the operator's language.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum OperatorLanguage {
    /// Nothing: its file has no `language` column, so a known operator
    /// keeps theirs (a new one has none).
    #[default]
    Keep,
    /// The checked BCP 47 tag its `language` column gives (empty: none).
    Set(Option<String>),
}

/// What a unit row says of the unit's GS1 keys.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum UnitGs1 {
    /// Nothing: its file has no GS1 columns, and its EPC is no SGTIN.
    #[default]
    Leave,
    /// The GTIN and serial its SGTIN EPC encodes; its file has no GS1
    /// columns, so the unit keeps its lot and expiry.
    Encoded { gtin: String, serial: String },
    /// All four, as its GS1 columns give them (empty clears).
    Set(Gs1Keys),
}

impl UnitGs1 {
    /// The GTIN and serial that name the unit, when the row gives them.
    pub(super) fn gtin_serial(&self) -> Option<(&str, &str)> {
        match self {
            UnitGs1::Leave => None,
            UnitGs1::Encoded { gtin, serial } => Some((gtin, serial)),
            UnitGs1::Set(keys) => keys.gtin.as_deref().zip(keys.serial.as_deref()),
        }
    }

    /// The unit's keys once the row is applied to `before`, its keys now
    /// (`None` for a new unit); `None` leaves them.
    fn applied(&self, before: Option<&Gs1Keys>) -> Option<Gs1Keys> {
        match self {
            UnitGs1::Leave => None,
            UnitGs1::Encoded { gtin, serial } => Some(Gs1Keys {
                gtin: Some(gtin.clone()),
                serial: Some(serial.clone()),
                ..before.cloned().unwrap_or_default()
            }),
            UnitGs1::Set(keys) => Some(keys.clone()),
        }
    }
}

pub(super) enum Applied {
    Changed,
    Same,
    Skipped(String),
}

impl Row {
    /// What the row names in the ledger: a unit's bin and code, a
    /// manifest's unit. `Err` is the reason the row is refused.
    pub(super) fn check_in(
        &self,
        conn: &Connection,
    ) -> crate::store::sql::Result<Result<(), String>> {
        match self {
            Row::Unit {
                epc,
                code,
                bin,
                gs1,
                ..
            } => {
                if let Some((gtin, serial)) = gs1.gtin_serial() {
                    if let Some(holder) = units::find_gs1(conn, gtin, serial)? {
                        if holder.epc.as_deref() != Some(epc.as_str()) {
                            return Ok(Err(format!(
                                "gtin {gtin} with serial {serial:?} belongs to unit {}",
                                holder.epc.as_deref().unwrap_or("without an epc")
                            )));
                        }
                    }
                }
                if let Some(code) = code {
                    if let Some(holder) = units::find(conn, None, Some(code))? {
                        if holder.epc.as_deref() != Some(epc.as_str()) {
                            return Ok(Err(format!(
                                "code {code:?} belongs to unit {}",
                                holder.epc.as_deref().unwrap_or("without an epc")
                            )));
                        }
                    }
                }
                if let Some(bin) = bin {
                    if bins::find(conn, bin)?.is_none() {
                        return Ok(Err(format!("unknown bin {bin:?}: import bins first")));
                    }
                }
                Ok(Ok(()))
            }
            Row::ManifestUnit { epc, .. } => {
                if units::find(conn, Some(epc), None)?.is_none() {
                    return Ok(Err(format!("unknown unit {epc:?}: import units first")));
                }
                Ok(Ok(()))
            }
            Row::Sku { sku, gtin } => {
                if let Some(holder) = skus::by_gtin(conn, gtin)? {
                    if holder.sku != *sku {
                        return Ok(Err(format!("gtin {gtin} belongs to sku {:?}", holder.sku)));
                    }
                }
                Ok(Ok(()))
            }
            Row::Bin { .. } | Row::GrnLine { .. } | Row::Operator { .. } => Ok(Ok(())),
        }
    }

    /// Writes the row. A unit whose code another unit took after the row
    /// was checked is left out (the only check the ledger can undo under
    /// an import: bins and units are never deleted).
    /// Applies the row; `started_at` stamps a unit it creates, `now` the
    /// hop of a unit it moves; `at` is the import and line it came from.
    pub(super) fn apply(
        &self,
        conn: &Connection,
        started_at: UnixMs,
        now: UnixMs,
        at: (i64, i64),
    ) -> crate::store::sql::Result<Applied> {
        let changed = |yes: bool| if yes { Applied::Changed } else { Applied::Same };
        match self {
            Row::Bin {
                bin,
                zone,
                location,
            } => Ok(changed(bins::upsert(
                conn,
                &Bin {
                    bin: bin.clone(),
                    zone: zone.clone(),
                    location: location.clone(),
                },
            )?)),
            Row::Unit {
                epc,
                code,
                sku,
                state,
                bin,
                gs1,
            } => {
                if let Err(reason) = self.check_in(conn)? {
                    return Ok(Applied::Skipped(reason));
                }
                let state = UnitState::parse(state).ok_or_else(|| {
                    crate::store::sql::Error::conversion(2, format!("state {state:?}"))
                })?;
                let known = units::find(conn, Some(epc), None)?;
                let keys = gs1.applied(known.as_ref().map(|unit| &unit.gs1));
                let facts = UnitFacts {
                    epc: Some(epc),
                    code: code.as_deref(),
                    sku: Some(sku),
                    state,
                    bin: bin.as_deref(),
                    gs1: keys.as_ref(),
                };
                Ok(match known {
                    Some(unit) => {
                        let version = units::update(conn, &unit, &facts)?;
                        if unit.bin.as_deref() != facts.bin || unit.state != facts.state {
                            moved(conn, &unit, &facts, version, now, at)?;
                        }
                        changed(version != unit.version)
                    }
                    None => {
                        units::create(conn, &facts, started_at)?;
                        Applied::Changed
                    }
                })
            }
            Row::GrnLine {
                grn,
                qc,
                sku,
                expected,
            } => {
                let head = grns::upsert_head(conn, grn, qc)?;
                let line = grns::upsert_line(conn, grn, sku, *expected)?;
                Ok(changed(head || line))
            }
            Row::ManifestUnit {
                manifest,
                state,
                epc,
                sscc,
                keep_sscc,
            } => {
                let head = manifests::upsert(conn, manifest, state)?;
                let added = match keep_sscc {
                    true => manifests::add_unit_keeping_pallet(conn, manifest, epc)?,
                    false => manifests::add_unit(conn, manifest, epc, sscc.as_deref())?,
                };
                Ok(changed(head || added))
            }
            Row::Operator {
                badge,
                name,
                language,
            } => {
                let language = match language {
                    OperatorLanguage::Set(language) => language.clone(),
                    OperatorLanguage::Keep => {
                        operators::find(conn, badge)?.and_then(|known| known.language)
                    }
                };
                Ok(changed(operators::upsert(
                    conn,
                    &Operator {
                        badge: badge.clone(),
                        name: name.clone(),
                        language,
                    },
                )?))
            }
            Row::Sku { sku, gtin } => {
                if let Err(reason) = self.check_in(conn)? {
                    return Ok(Applied::Skipped(reason));
                }
                Ok(changed(skus::upsert(
                    conn,
                    &Sku {
                        sku: sku.clone(),
                        gtin: gtin.clone(),
                    },
                )?))
            }
        }
    }
}

/// What the rows so far have said: each key's first line, and the value a
/// group's rows must agree on.
///
/// The keys and values are kept in one text, not an allocation each: a
/// million rows' keys are then let go as two allocations when the import
/// is decided. As a million small strings they took the allocator about
/// 150 ms to merge back, at its next large allocation: inside the flip,
/// holding the writer.
#[derive(Default)]
pub(super) struct Checked {
    /// Every key and value, one after another.
    pub(super) text: String,
    pub(super) seen: hashbrown::HashTable<Said>,
    pub(super) hasher: std::hash::RandomState,
}

/// A key's first line, and the value its group gave there (empty for a
/// key that must not repeat), as places in [`Checked::text`].
pub(super) struct Said {
    pub(super) key: std::ops::Range<usize>,
    pub(super) line: u64,
    pub(super) value: std::ops::Range<usize>,
}

impl Checked {
    /// Remembers `key` at `line`; a key repeated in the file is an error.
    pub(super) fn once(&mut self, key: &str, line: u64, what: &str) -> Result<(), String> {
        if let Some(first) = self.find(key) {
            return Err(format!("{what} is already on line {}", first.line));
        }
        self.remember(key, line, "");
        Ok(())
    }

    /// A group's `value` must be the one its first row gave.
    pub(super) fn agrees(
        &mut self,
        group: &str,
        value: &str,
        line: u64,
        what: &str,
    ) -> Result<(), String> {
        match self.find(group) {
            Some(first) => {
                let earlier = &self.text[first.value.clone()];
                if earlier == value {
                    Ok(())
                } else {
                    Err(format!(
                        "{what} {value:?} differs from {earlier:?} on line {}",
                        first.line
                    ))
                }
            }
            None => {
                self.remember(group, line, value);
                Ok(())
            }
        }
    }

    pub(super) fn find(&self, key: &str) -> Option<&Said> {
        let text = &self.text;
        self.seen.find(self.hasher.hash_one(key), |said| {
            &text[said.key.clone()] == key
        })
    }

    pub(super) fn remember(&mut self, key: &str, line: u64, value: &str) {
        let Checked { text, seen, hasher } = self;
        let start = text.len();
        text.push_str(key);
        let key = start..text.len();
        text.push_str(value);
        let value = key.end..text.len();
        seen.insert_unique(
            hasher.hash_one(&text[key.clone()]),
            Said { key, line, value },
            |said| hasher.hash_one(&text[said.key.clone()]),
        );
    }
}

/// A field: empty is `None` (an error when `required`); too long, with a
/// control character (which no scan could ever match: sync refuses them)
/// or with a direction control (which could show a name reversed on the
/// site's view, [`crate::ident::direction_control`]) is an error. The
/// characters are checked as sync checks a scan's text fields
/// ([`crate::ident::check_text`]).
pub(super) fn field(
    value: &str,
    name: &'static str,
    required: bool,
) -> Result<Option<String>, String> {
    if value.is_empty() {
        return if required {
            Err(format!("{name} is empty"))
        } else {
            Ok(None)
        };
    }
    if value.chars().count() > MAX_FIELD_CHARS {
        return Err(format!(
            "{name} is longer than {MAX_FIELD_CHARS} characters"
        ));
    }
    crate::ident::check_text(name, value).map_err(|err| err.to_string())?;
    Ok(Some(value.to_owned()))
}

pub(super) fn required(value: &str, name: &'static str) -> Result<String, String> {
    Ok(field(value, name, true)?.unwrap_or_default())
}

/// A field a handheld scans or the site's view shows as an identifier
/// (bin, tag, code, GRN, manifest, badge): the one identifier check sync
/// applies, so an import never takes what a scan of it would be refused.
pub(super) fn identifier(value: &str, name: &'static str) -> Result<String, String> {
    let value = required(value, name)?;
    crate::ident::check(name, &value).map_err(|err| err.to_string())?;
    Ok(value)
}

/// An optional identifier: empty is none, anything else as [`identifier`].
pub(super) fn optional_identifier(
    value: &str,
    name: &'static str,
) -> Result<Option<String>, String> {
    if value.is_empty() {
        return Ok(None);
    }
    identifier(value, name).map(Some)
}

pub(super) fn one_of(value: &str, name: &str, allowed: &[&str]) -> Result<(), String> {
    if allowed.contains(&value) {
        Ok(())
    } else {
        Err(format!(
            "{name} {value:?} is not one of {}",
            allowed.join(", ")
        ))
    }
}
