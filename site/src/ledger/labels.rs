//! Real labels at the site (docs/design.md, real labels): the site's
//! setting for the character its wedges send for the group separator, the
//! day a label's two-digit years are read against, the unit a label names,
//! and the checks an import's GS1 fields pass. The parsing itself is the
//! core's ([`stockhop::gs1`]), the one the handhelds run.

use stockhop::gs1::{self, CivilDate, Label, Named, ReadOptions, Separator};
use stockhop::time::UnixMs;

use crate::site_clock::SiteZone;
use crate::store::sql::{Connection, OptionalExtension};

use super::reference::UnitView;
use super::units::{self, Unit};

/// The `site_meta` key the separator substitute is kept under.
const SEPARATOR_KEY: &str = "gs1_separator";
/// A GTIN as the ledger keeps it: GTIN-14, shorter ones padded with zeros.
pub const GTIN_DIGITS: usize = 14;
/// The lengths a GTIN is written in: GTIN-8, -12, -13 and -14.
const GTIN_LENGTHS: [usize; 4] = [8, 12, 13, 14];

/// The site's substitute for ASCII 29: the one set, else `~`.
pub fn separator(conn: &Connection) -> crate::store::sql::Result<Separator> {
    let kept: Option<String> = conn
        .query_row(
            "SELECT value FROM site_meta WHERE key = ?1",
            [SEPARATOR_KEY],
            |row| row.get(0),
        )
        .optional()?;
    let mut chars = kept.as_deref().unwrap_or_default().chars();
    Ok(match (chars.next(), chars.next()) {
        (Some(c), None) => Separator::new(c).unwrap_or_default(),
        _ => Separator::default(),
    })
}

/// Sets the site's substitute for ASCII 29.
pub fn set_separator(conn: &Connection, separator: Separator) -> crate::store::sql::Result<()> {
    conn.execute(
        "INSERT INTO site_meta (key, value) VALUES (?1, ?2)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        [SEPARATOR_KEY, separator.char().to_string().as_str()],
    )?;
    Ok(())
}

/// The date at the site at `now`, in the site's zone: what a label's
/// two-digit years are read against.
pub fn today(zone: &SiteZone, now: UnixMs) -> CivilDate {
    let offset_ms = i64::from(zone.offset_minutes(now)) * 60_000;
    CivilDate::from_unix_ms(UnixMs(now.0 + offset_ms))
}

/// How the site reads labels at `now`: its separator substitute, its date.
pub fn read_options(conn: &Connection, now: UnixMs) -> crate::store::sql::Result<ReadOptions> {
    Ok(ReadOptions {
        separator: separator(conn)?,
        today: today(&SiteZone::remembered(conn)?, now),
    })
}

/// The unit `label` names: by its EPC, else by its GTIN and serial (a
/// GS1 unit label, an SGTIN EPC); plain text by the EPC or code it is, as
/// a scan names a unit. `None` for an unknown unit, and for a label that
/// names no unit (a pallet, a SKU's lot).
pub fn unit_named(conn: &Connection, label: &Label) -> crate::store::sql::Result<Option<Unit>> {
    if let Some(text) = label.plain_text() {
        let epc = crate::ident::canonical_epc(text.to_owned());
        return units::find(conn, Some(&epc), Some(text));
    }
    match label.names() {
        Named::Unit { gtin, serial, epc } => {
            if let Some(unit) = epc
                .map(|epc| units::find(conn, Some(epc), None))
                .transpose()?
            {
                if unit.is_some() {
                    return Ok(unit);
                }
            }
            units::find_gs1(conn, gtin, serial)
        }
        Named::Pallet { .. } | Named::SkuLot { .. } | Named::Other => Ok(None),
    }
}

/// What `stockhop-site label read` prints for a label that parsed: the
/// label's JSON (docs/design.md, real labels) with `"unit"`, the unit row
/// as `/v1/units/{epc}` answers it, when the site knows the unit it names.
#[derive(Debug, Clone, serde::Serialize)]
pub struct LabelRead {
    #[serde(flatten)]
    pub label: Label,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<UnitView>,
}

/// `stockhop-site label read --data`: `text` read as the site reads it at
/// `now`, as [`label_json`] prints it, or why it does not parse.
pub fn read_at_site(
    conn: &Connection,
    text: &str,
    now: UnixMs,
) -> crate::store::sql::Result<Result<LabelRead, gs1::LabelError>> {
    let label = match gs1::read(text, &read_options(conn, now)?) {
        Ok(label) => label,
        Err(refused) => return Ok(Err(refused)),
    };
    let unit = unit_named(conn, &label)?.map(UnitView::from);
    Ok(Ok(LabelRead { label, unit }))
}

/// A GTIN as an import gives it: 8, 12, 13 or 14 digits whose check digit
/// holds, kept as GTIN-14. `Err` says what is wrong.
pub fn gtin(text: &str) -> Result<String, String> {
    if !text.bytes().all(|b| b.is_ascii_digit()) || !GTIN_LENGTHS.contains(&text.len()) {
        return Err(format!(
            "gtin {text:?} is not a GTIN: 8, 12, 13 or 14 digits"
        ));
    }
    let padded = format!("{text:0>GTIN_DIGITS$}");
    let (body, check) = padded.split_at(GTIN_DIGITS - 1);
    let expected = gs1::check_digit(body);
    if check.as_bytes()[0] - b'0' != expected {
        return Err(format!(
            "the check digit of gtin {text} should be {expected}"
        ));
    }
    Ok(padded)
}

/// A value of a GS1 element as an import gives it (`ai` 21, a serial;
/// 10, a lot): what a label's (ai) may hold. `Err` says what is wrong, in
/// the parser's words.
pub fn element_value(ai: &str, name: &str, value: &str) -> Result<String, String> {
    let options = ReadOptions::new(any_day());
    let read = gs1::read(&format!("]C1{ai}{value}"), &options)
        .map_err(|err| format!("{name} {value:?}: {err}"))?;
    match read.elements() {
        [element] if element.ai == ai && element.value == value => Ok(value.to_owned()),
        _ => Err(format!("{name} {value:?} is not one gs1 ({ai}) value")),
    }
}

/// The date to read a label against when none of its dates is used.
fn any_day() -> CivilDate {
    CivilDate::from_unix_ms(UnixMs(0))
}

/// An expiry date as an import gives it, `YYYY-MM-DD`.
pub fn expiry(text: &str) -> Result<String, String> {
    let refused = || format!("expiry {text:?} is not a date written YYYY-MM-DD");
    let mut parts = text.splitn(3, '-');
    let mut part = |digits: usize| {
        parts
            .next()
            .filter(|p| p.len() == digits && p.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|p| p.parse::<i32>().ok())
    };
    let (Some(year), Some(month), Some(day)) = (part(4), part(2), part(2)) else {
        return Err(refused());
    };
    let date = CivilDate::new(year, month as u8, day as u8).ok_or_else(refused)?;
    Ok(date.to_string())
}

/// The GTIN and serial an SGTIN-96 EPC encodes; `None` for any other EPC
/// (one that does not decode as an SGTIN is an opaque EPC, as any other).
pub fn sgtin_keys(epc: &str) -> Option<(String, String)> {
    let options = ReadOptions::new(any_day());
    let label = gs1::read(epc, &options).ok()?;
    match label.names() {
        Named::Unit {
            gtin,
            serial,
            epc: Some(_),
        } => Some((gtin.to_owned(), serial.to_owned())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gtin_is_kept_as_fourteen_digits_and_its_check_digit_must_hold() {
        assert_eq!(gtin("09521101530001").unwrap(), "09521101530001");
        assert_eq!(gtin("9521101530001").unwrap(), "09521101530001");
        assert_eq!(gtin("96385074").unwrap(), "00000096385074");
        assert_eq!(
            gtin("09521101530002").unwrap_err(),
            "the check digit of gtin 09521101530002 should be 1"
        );
        assert!(gtin("0952110153000").is_err());
        assert!(gtin("ABC").is_err());
    }

    #[test]
    fn an_expiry_is_a_real_day_written_with_dashes() {
        assert_eq!(expiry("2027-02-28").unwrap(), "2027-02-28");
        assert!(expiry("2027-02-29").is_err());
        assert!(expiry("270228").is_err());
        assert!(expiry("2027-2-28").is_err());
    }

    #[test]
    fn a_serial_or_lot_holds_what_its_gs1_element_may() {
        assert_eq!(element_value("21", "serial", "AB-12/3").unwrap(), "AB-12/3");
        assert!(element_value("21", "serial", "123456789012345678901").is_err());
        assert!(element_value("10", "lot", "A B").is_err());
    }

    #[test]
    fn an_sgtin_epc_gives_its_gtin_and_serial_and_other_epcs_none() {
        // TDS 2.x's own example: urn:epc:id:sgtin:0614141.812345.6789.
        assert_eq!(
            sgtin_keys("3074257BF7194E4000001A85"),
            Some(("80614141123458".to_owned(), "6789".to_owned()))
        );
        assert_eq!(sgtin_keys("E28068940000000000000001"), None);
        assert_eq!(sgtin_keys("U-1"), None);
    }
}
