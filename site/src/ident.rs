//! Identifiers from outside (device, terminal serial, site, operator, bin,
//! GRN, manifest, count, and a terminal's tag or code), checked the same
//! way at every ingress: the sync API, the terminal listener's iclock,
//! Zebra and framed JSON ports, a central's site batches and the command
//! line.
//!
//! An identifier is 1 to [`IDENT_MAX_CHARS`] printable characters: no
//! control characters, no markup (`<`, `>`, `"`, `'`, `&`, backtick), no
//! invisible formatting (zero-width and direction marks, soft hyphen, byte
//! order mark) and no whitespace but the plain space. Real identifiers are
//! codes printed on labels and badges; what this refuses can only be a
//! mistake or an attempt to put markup or a forged line into a page, a log
//! or `/metrics`.
//!
//! Nor may it hold a character that makes two identifiers that look the
//! same different ones, or that shows as nothing: it must be in Unicode
//! NFKC form (`e` + U+0301 is written `é`, a fullwidth `Ａ` is written `A`),
//! and hold no default-ignorable (U+3164, U+034F, U+FE0F, the tag
//! characters U+E0000 to U+E0FFF, …), private-use, noncharacter (U+FFFE)
//! or unassigned code point, nor the blank U+2800; the refusal names the
//! character.
//!
//! Text fields that are shown rather than scanned (an operator's name, a
//! zone, a SKU) pass a narrower check, [`check_text`]: no control
//! characters and no bidirectional controls, which could show a name
//! reversed on a supervisor's screen.
//!
//! A leaf: it imports nothing of the crate, so any module may call it.

pub use crate::limits::IDENT_MAX_CHARS;

/// Why an identifier was refused; it names the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdentError {
    #[error("{0} must be 1 to {IDENT_MAX_CHARS} characters")]
    Length(&'static str),
    #[error(
        "{field} must be printable characters: it holds {held}, and may hold no control characters, no markup (< > \" ' & `), no invisible formatting",
        field = .0,
        held = shown(*.1)
    )]
    Unprintable(&'static str, char),
    #[error("{0} must not contain U+{1:04X}, {2}: remove it from the field")]
    Character(&'static str, u32, CharacterKind),
    #[error("{0} must be in Unicode NFKC form: {1} is written {2}")]
    NotNfkc(&'static str, CodePoints, CodePoints),
}

/// What a refused code point is, as the refusal says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum CharacterKind {
    #[error("a character that shows as nothing")]
    DefaultIgnorable,
    #[error("a private-use character")]
    PrivateUse,
    #[error("a noncharacter")]
    Noncharacter,
    #[error("a code point Unicode has not assigned")]
    Unassigned,
    #[error("a blank that shows as a space")]
    Blank,
}

/// Code points as a refusal names them: `U+0065 U+0301`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodePoints(pub Vec<u32>);

impl std::fmt::Display for CodePoints {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (n, code) in self.0.iter().enumerate() {
            if n > 0 {
                f.write_str(" ")?;
            }
            write!(f, "U+{code:04X}")?;
        }
        Ok(())
    }
}

impl IdentError {
    /// The field it names.
    pub fn field(&self) -> &'static str {
        match self {
            IdentError::Length(field)
            | IdentError::Unprintable(field, _)
            | IdentError::Character(field, ..)
            | IdentError::NotNfkc(field, ..) => field,
        }
    }
}

/// A refused character as a refusal names it: a visible one quoted, one
/// that shows as nothing (or moves the line) by its code point.
fn shown(c: char) -> String {
    if c.is_ascii_graphic() {
        format!("`{c}`")
    } else {
        format!("U+{:04X}", c as u32)
    }
}

/// Checks `value` as the identifier `field`.
pub fn check(field: &'static str, value: &str) -> Result<(), IdentError> {
    let chars = value.chars().count();
    if chars == 0 || chars > IDENT_MAX_CHARS {
        return Err(IdentError::Length(field));
    }
    if let Some(c) = value.chars().find(|&c| !printable(c)) {
        return Err(IdentError::Unprintable(field, c));
    }
    if value.is_ascii() {
        // Printable ASCII is assigned, visible and in NFKC form.
        return Ok(());
    }
    if let Some((c, kind)) = value
        .chars()
        .find_map(|c| refused_kind(c).map(|kind| (c, kind)))
    {
        return Err(IdentError::Character(field, c as u32, kind));
    }
    nfkc(field, value)
}

/// What a code point an identifier may not hold is, if it is one.
fn refused_kind(c: char) -> Option<CharacterKind> {
    use icu_properties::props::{
        DefaultIgnorableCodePoint, GeneralCategory, NoncharacterCodePoint,
    };
    use icu_properties::{CodePointMapData, CodePointSetData};
    if CodePointSetData::new::<DefaultIgnorableCodePoint>().contains(c) {
        return Some(CharacterKind::DefaultIgnorable);
    }
    if CodePointSetData::new::<NoncharacterCodePoint>().contains(c) {
        return Some(CharacterKind::Noncharacter);
    }
    match CodePointMapData::<GeneralCategory>::new().get(c) {
        GeneralCategory::PrivateUse => return Some(CharacterKind::PrivateUse),
        GeneralCategory::Unassigned => return Some(CharacterKind::Unassigned),
        _ => {}
    }
    // Braille's empty pattern: assigned and not ignorable, but it shows as
    // a space, so `LA 1` and `LA⠀1` would be two bins a reader cannot tell.
    (c == '\u{2800}').then_some(CharacterKind::Blank)
}

/// Refuses `value` unless it is in NFKC form, naming the characters that
/// differ and what they are written as.
fn nfkc(field: &'static str, value: &str) -> Result<(), IdentError> {
    use unicode_normalization::{is_nfkc_quick, IsNormalized, UnicodeNormalization};
    if is_nfkc_quick(value.chars()) == IsNormalized::Yes {
        return Ok(());
    }
    let given: Vec<char> = value.chars().collect();
    let written: Vec<char> = value.nfkc().collect();
    if given == written {
        return Ok(());
    }
    let head = given
        .iter()
        .zip(&written)
        .take_while(|(a, b)| a == b)
        .count();
    let tail = given[head..]
        .iter()
        .rev()
        .zip(written[head..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let points = |chars: &[char]| CodePoints(chars.iter().map(|c| *c as u32).collect());
    Err(IdentError::NotNfkc(
        field,
        points(&given[head..given.len() - tail]),
        points(&written[head..written.len() - tail]),
    ))
}

/// Whether `c` may stand in an identifier.
pub fn printable(c: char) -> bool {
    const MARKUP: &[char] = &['<', '>', '"', '\'', '&', '`'];
    !(c.is_control() || (c.is_whitespace() && c != ' ') || MARKUP.contains(&c) || invisible(c))
}

/// Unicode's format characters a reader cannot see: they can make two
/// identifiers look alike or reorder what a page shows.
fn invisible(c: char) -> bool {
    direction_control(c)
        || matches!(
            c,
            '\u{00AD}'
                | '\u{061C}'
                | '\u{180E}'
                | '\u{200B}'..='\u{200F}'
                | '\u{2060}'..='\u{2064}'
                | '\u{FEFF}'
                | '\u{FFF9}'..='\u{FFFB}'
        )
}

/// Unicode's bidirectional embeddings, overrides and isolates (U+202A to
/// U+202E, U+2066 to U+2069): each changes the order in which what follows
/// it is shown, so a name holding U+202E shows its letters reversed on a
/// supervisor's screen and can pass for another (spoofing). No name, code
/// or label a warehouse prints needs them: a right-to-left name shows
/// right to left without them.
pub fn direction_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Why a text field (a name, a zone, a SKU: shown, not scanned as an
/// identifier) was refused; it names the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TextError {
    /// A control character: no scan or label could ever hold it, and in a
    /// log or a terminal it can forge a line or recolour the screen.
    #[error("{0} must not contain control characters")]
    Control(&'static str),
    /// A [`direction_control`], told by its code point.
    #[error(
        "{0} must not contain U+{1:04X}, a Unicode direction control that makes text show \
         reversed or out of order: remove it from the field"
    )]
    Direction(&'static str, u32),
}

/// Checks the characters of `value`, the text field `field`: no control
/// characters and no [`direction_control`]. Its length is the caller's,
/// as each field has its own bound. The identifier check ([`check`])
/// refuses all of these too, and more.
pub fn check_text(field: &'static str, value: &str) -> Result<(), TextError> {
    for c in value.chars() {
        if c.is_control() {
            return Err(TextError::Control(field));
        }
        if direction_control(c) {
            return Err(TextError::Direction(field, c as u32));
        }
    }
    Ok(())
}

/// Hex digits in the EPC a handheld reads and writes (96 bits).
pub const EPC_HEX_DIGITS: usize = 24;

/// An EPC as the handheld sends it: a code of [`EPC_HEX_DIGITS`] hex
/// digits in upper case, whatever case a file gave it, so an imported unit
/// and a scan of its tag name the same unit. Any other code is kept as it
/// is (a serial, a test's `U-1`).
pub fn canonical_epc(value: String) -> String {
    if value.len() == EPC_HEX_DIGITS && value.bytes().all(|b| b.is_ascii_hexdigit()) {
        value.to_ascii_uppercase()
    } else {
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_epc_of_24_hex_digits_is_upper_case_and_anything_else_kept() {
        assert_eq!(
            canonical_epc("3034257bf400000000000001".into()),
            "3034257BF400000000000001"
        );
        assert_eq!(
            canonical_epc("E280C7000000000000000059".into()),
            "E280C7000000000000000059"
        );
        for kept in ["u-1", "3034257bf4", "3034257bf40000000000000g", "abc"] {
            assert_eq!(canonical_epc(kept.into()), kept);
        }
    }

    #[test]
    fn text_refuses_controls_and_direction_controls_naming_the_code_point() {
        for ok in ["Ann Lee", "Zoë Ålesund", "שרה כהן", "李明", "a\u{200F}b"] {
            assert_eq!(check_text("name", ok), Ok(()), "{ok:?}");
        }
        assert_eq!(
            check_text("name", "a\u{7}b"),
            Err(TextError::Control("name"))
        );
        for (bad, code) in [
            ("Ann\u{202E}eeL", 0x202E),
            ("\u{202A}x", 0x202A),
            ("x\u{2066}y\u{2069}", 0x2066),
            ("x\u{2069}", 0x2069),
        ] {
            assert_eq!(
                check_text("name", bad),
                Err(TextError::Direction("name", code)),
                "{bad:?}"
            );
        }
        assert_eq!(
            check_text("name", "\u{202E}").unwrap_err().to_string(),
            "name must not contain U+202E, a Unicode direction control that makes text show \
             reversed or out of order: remove it from the field"
        );
        // Every direction control is refused as an identifier too.
        for c in ('\u{2000}'..='\u{2070}').filter(|c| direction_control(*c)) {
            assert!(!printable(c), "U+{:04X}", c as u32);
        }
    }

    #[test]
    fn identifiers_that_look_alike_or_hold_what_shows_as_nothing_are_refused_naming_the_character()
    {
        for ok in ["LA-é", "LA-A", "Zoë/Ålesund#4", "李明-1", "שרה-2", "LA-А"] {
            assert_eq!(check("bin", ok), Ok(()), "{ok:?}");
        }
        for (bad, code, kind) in [
            ("LA-\u{3164}", 0x3164, CharacterKind::DefaultIgnorable),
            ("LA-\u{FFA0}", 0xFFA0, CharacterKind::DefaultIgnorable),
            ("LA-\u{034F}1", 0x034F, CharacterKind::DefaultIgnorable),
            ("LA-1\u{FE0F}", 0xFE0F, CharacterKind::DefaultIgnorable),
            ("LA-1\u{E0041}", 0xE0041, CharacterKind::DefaultIgnorable),
            ("LA-\u{E000}", 0xE000, CharacterKind::PrivateUse),
            ("LA-\u{F0000}", 0xF0000, CharacterKind::PrivateUse),
            ("LA-\u{FFFE}", 0xFFFE, CharacterKind::Noncharacter),
            ("LA-\u{FDD0}", 0xFDD0, CharacterKind::Noncharacter),
            ("LA-\u{0378}", 0x0378, CharacterKind::Unassigned),
            ("LA-\u{2800}1", 0x2800, CharacterKind::Blank),
        ] {
            assert_eq!(
                check("bin", bad),
                Err(IdentError::Character("bin", code, kind)),
                "{bad:?}"
            );
        }
        assert_eq!(
            check("bin", "LA-1\u{E0041}").unwrap_err().to_string(),
            "bin must not contain U+E0041, a character that shows as nothing: remove it from the field"
        );
        assert_eq!(
            check("bin", "LA-e\u{0301}").unwrap_err().to_string(),
            "bin must be in Unicode NFKC form: U+0065 U+0301 is written U+00E9"
        );
        assert_eq!(
            check("bin", "LA-\u{FF21}").unwrap_err().to_string(),
            "bin must be in Unicode NFKC form: U+FF21 is written U+0041"
        );
        assert_eq!(
            check("operator_id", "\u{2460}"),
            Err(IdentError::NotNfkc(
                "operator_id",
                CodePoints(vec![0x2460]),
                CodePoints(vec![0x31])
            ))
        );
    }

    #[test]
    fn real_codes_pass_and_markup_controls_and_invisible_marks_do_not() {
        for ok in [
            "HH-1",
            "DC-EAST",
            "CKJF201260123",
            "3034257BF7194E4000000001",
            "B-01.02 A",
            "Zoë/Ålesund#4",
            &"x".repeat(IDENT_MAX_CHARS),
        ] {
            assert_eq!(check("device_id", ok), Ok(()), "{ok:?}");
        }
        assert_eq!(check("bin", ""), Err(IdentError::Length("bin")));
        assert_eq!(
            check("bin", &"x".repeat(IDENT_MAX_CHARS + 1)),
            Err(IdentError::Length("bin"))
        );
        for bad in [
            "<script>",
            "<svg/onload=alert(1)>",
            "a\"b",
            "DC-SOUTH\"} 1\nstockhop_fake 1",
            "a\\\nb",
            "tab\there",
            "nul\0",
            "zero\u{200B}width",
            "rtl\u{202E}gnp.exe",
            "nbsp\u{00A0}",
            "a'b",
            "a&b",
        ] {
            assert!(
                matches!(
                    check("device", bad),
                    Err(IdentError::Unprintable("device", _))
                ),
                "{bad:?}"
            );
        }
        assert_eq!(
            check("bin", "A-<1").unwrap_err().to_string(),
            "bin must be printable characters: it holds `<`, and may hold no control characters, \
             no markup (< > \" ' & `), no invisible formatting"
        );
        assert!(check("bin", "A\u{202E}1")
            .unwrap_err()
            .to_string()
            .contains("it holds U+202E"));
    }
}
