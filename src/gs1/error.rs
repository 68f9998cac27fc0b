//! Why a label was refused: one of five codes, the AI it concerns, and a
//! lower-case sentence naming that AI and what is wrong with it.
//!
//! Every sentence a person reads is built here, one constructor a fault,
//! so the words stay together and consistent. The code is what programs
//! read (the handheld's refusal, the site's 422 and `label read`'s JSON:
//! `{"error":"label_…","ai"?,"message"}`).

use serde::Serialize;

/// What is wrong with a label, in the five codes of the product's contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum LabelErrorCode {
    /// A check digit (00, 01, 02, 41x) does not hold.
    #[serde(rename = "label_check_digit")]
    CheckDigit,
    /// An application identifier stockhop does not read.
    #[serde(rename = "label_unknown_ai")]
    UnknownAi,
    /// A date (11–17) that is not a day of the calendar.
    #[serde(rename = "label_bad_date")]
    BadDate,
    /// A value, or the whole text, longer than it may be.
    #[serde(rename = "label_too_long")]
    TooLong,
    /// Anything else that breaks the syntax: wrong characters, a value too
    /// short or missing, an AI twice, a broken Digital Link or EPC.
    #[serde(rename = "label_malformed")]
    Malformed,
}

impl LabelErrorCode {
    /// The code as the contract spells it (`label_check_digit`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            LabelErrorCode::CheckDigit => "label_check_digit",
            LabelErrorCode::UnknownAi => "label_unknown_ai",
            LabelErrorCode::BadDate => "label_bad_date",
            LabelErrorCode::TooLong => "label_too_long",
            LabelErrorCode::Malformed => "label_malformed",
        }
    }
}

/// A label that does not parse. Nothing of it is used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("{message}")]
pub struct LabelError {
    #[serde(rename = "error")]
    pub code: LabelErrorCode,
    /// The application identifier at fault, when there is one (`"17"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ai: Option<String>,
    /// What is wrong, in lower-case words naming the AI.
    pub message: String,
}

impl LabelError {
    fn about(code: LabelErrorCode, ai: &str, message: String) -> LabelError {
        LabelError {
            code,
            ai: Some(ai.to_owned()),
            message,
        }
    }

    fn general(code: LabelErrorCode, message: String) -> LabelError {
        LabelError {
            code,
            ai: None,
            message,
        }
    }

    pub(super) fn check_digit(ai: &str, value: &str, expected: u8) -> LabelError {
        LabelError::about(
            LabelErrorCode::CheckDigit,
            ai,
            format!("the check digit of ({ai}) {value} should be {expected}"),
        )
    }

    pub(super) fn unknown_ai(ai: &str) -> LabelError {
        LabelError::about(
            LabelErrorCode::UnknownAi,
            ai,
            format!("({ai}) is not an application identifier stockhop reads"),
        )
    }

    pub(super) fn bad_date(ai: &str, value: &str, why: &str) -> LabelError {
        LabelError::about(
            LabelErrorCode::BadDate,
            ai,
            format!("({ai}) {value} is not a date: {why}"),
        )
    }

    pub(super) fn value_too_long(ai: &str, max: usize, unit: &str, got: usize) -> LabelError {
        LabelError::about(
            LabelErrorCode::TooLong,
            ai,
            format!("({ai}) holds at most {max} {unit}, not {got}"),
        )
    }

    pub(super) fn fixed_too_long(ai: &str, needed: usize, got: usize) -> LabelError {
        LabelError::about(
            LabelErrorCode::TooLong,
            ai,
            format!("({ai}) takes {needed} digits, not {got}"),
        )
    }

    pub(super) fn text_too_long(bytes: usize, max: usize) -> LabelError {
        LabelError::general(
            LabelErrorCode::TooLong,
            format!("the label is {bytes} bytes long, and no gs1 symbol holds more than {max}"),
        )
    }

    pub(super) fn too_short(ai: &str, needed: usize, got: usize) -> LabelError {
        LabelError::about(
            LabelErrorCode::Malformed,
            ai,
            format!("({ai}) takes {needed} digits, not {got}"),
        )
    }

    pub(super) fn empty(ai: &str) -> LabelError {
        LabelError::about(
            LabelErrorCode::Malformed,
            ai,
            format!("({ai}) has no value"),
        )
    }

    pub(super) fn not_digits(ai: &str, value: &str) -> LabelError {
        LabelError::about(
            LabelErrorCode::Malformed,
            ai,
            format!("({ai}) takes digits only, not {value}"),
        )
    }

    pub(super) fn bad_character(ai: &str, found: char) -> LabelError {
        LabelError::about(
            LabelErrorCode::Malformed,
            ai,
            format!(
                "({ai}) may not hold {}: a gs1 value takes letters, digits and !\"%&'()*+,-./:;<=>?_",
                shown(found)
            ),
        )
    }

    pub(super) fn repeated(ai: &str) -> LabelError {
        LabelError::about(
            LabelErrorCode::Malformed,
            ai,
            format!("({ai}) appears twice with different values"),
        )
    }

    pub(super) fn no_data() -> LabelError {
        LabelError::general(
            LabelErrorCode::Malformed,
            "the label holds no gs1 data".to_owned(),
        )
    }

    /// The text at `rest` should start an application identifier and does
    /// not (`after` is the element before it, if any).
    pub(super) fn not_an_ai(rest: &str, after: Option<&str>) -> LabelError {
        let head: String = rest.chars().take(4).collect();
        let found = match rest.chars().find(|c| !c.is_ascii_graphic()) {
            Some(unseen) if !head.is_empty() && head.contains(unseen) => shown(unseen),
            _ => format!("'{head}'"),
        };
        let message = match after {
            Some(ai) => {
                format!("after ({ai}) comes {found}, which is not an application identifier")
            }
            None => {
                format!("the label starts with {found}, which is not an application identifier")
            }
        };
        LabelError::general(LabelErrorCode::Malformed, message)
    }

    pub(super) fn link_qualifier(ai: &str, key: &str) -> LabelError {
        LabelError::about(
            LabelErrorCode::Malformed,
            ai,
            format!(
                "a digital link path may not carry ({ai}) after ({key}) there: its qualifiers are (22), (10), (21) in that order"
            ),
        )
    }

    pub(super) fn link_escape(ai: &str) -> LabelError {
        LabelError::about(
            LabelErrorCode::Malformed,
            ai,
            format!("({ai}) holds a percent escape that is not utf-8 text"),
        )
    }

    pub(super) fn epc(hex: &str, why: &str) -> LabelError {
        LabelError::general(LabelErrorCode::Malformed, format!("epc {hex}: {why}"))
    }
}

/// A character as a message shows it: quoted, or named when it cannot be seen.
fn shown(c: char) -> String {
    match c {
        '\u{1d}' => "the group separator".to_owned(),
        ' ' => "a space".to_owned(),
        c if c.is_control() => format!("the control character {:#04x}", u32::from(c)),
        c => format!("'{c}'"),
    }
}
