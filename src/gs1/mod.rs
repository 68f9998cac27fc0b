//! GS1 labels: what a scan field's text says when it is a GS1 barcode, a
//! GS1 Digital Link URI or a GS1 EPC, and the plain text it is otherwise.
//! One parser for the service worker, the page (through the worker) and
//! the site.
//!
//! Architecture invariant: this module is sans-IO and imports nothing from
//! the runtime, the web module or the site; `today` comes from the caller,
//! and nothing here reads a clock.
//!
//! # Which text is a GS1 label
//!
//! Only text that is recognisably GS1 is parsed, and then strictly: a
//! label that does not parse is refused with a [`LabelError`], never half
//! used. Everything else is [`LabelKind::Plain`] and goes on as the plain
//! code it is. In order:
//!
//! 1. A symbology identifier `]C1` (GS1-128), `]d2` (GS1 DataMatrix), `]Q3`
//!    (GS1 QR) or `]e0` (GS1 DataBar): an element string. Any other `]xx`
//!    (`]C0`, `]E0`, `]Q1`, …) is taken off and the rest read by the rules
//!    below: a Digital Link comes in a QR code without GS1 mode (`]Q1`).
//! 2. A group separator first (ASCII 29, or the site's substitute): an
//!    element string, as a scanner sends the leading FNC1.
//! 3. `(`, 2–4 digits and `)` first: the bracketed human form.
//! 4. An `http` or `https` URI with a path segment `01` or `00` followed by
//!    its value and qualifier pairs: a Digital Link. Other URIs are plain.
//! 5. Exactly 24 hex digits starting `30` or `31`: an SGTIN-96 or SSCC-96
//!    EPC. Other EPCs (`E280…`) are plain.
//! 6. Bare digits as a keyboard wedge without symbology identifiers types
//!    them: an element string when the text starts with (00) and 18 digits,
//!    or (01) or (02) and 14 digits, whose check digit holds, followed by
//!    nothing, another digit (the next AI) or a separator. A bin label
//!    (`B-12-03`) cannot start so; a plain number does so only when its
//!    first two digits are 00–02 *and* a check digit happens to hold.
//!    Bare text starting otherwise is plain.
//!
//! A line end the wedge appends (`\r`, `\n`) is left out first.

mod ai;
mod date;
mod digital_link;
mod element;
mod epc;
mod error;
mod label;
// The tests use proptest, a native dev-dependency: they run natively.
#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;

pub use ai::check_digit;
pub use date::CivilDate;
pub use element::{bracketed, element_string};
pub use epc::{sgtin96_encode, EncodeError};
pub use error::{LabelError, LabelErrorCode};
pub use label::{Element, Label, LabelKind, Named};

/// The group separator that ends a variable-length value: ASCII 29, as a
/// scanner sends FNC1.
pub const GROUP_SEPARATOR: char = '\u{1d}';
/// What a keyboard wedge that drops ASCII 29 is set to send instead,
/// unless the site says otherwise.
pub const DEFAULT_SEPARATOR: char = '~';
/// The longest text read as a GS1 label, in bytes: more than the largest
/// GS1 carrier holds (a version 40 QR code, 7,089 digits), so anything
/// longer is not a label, and the work a scan costs stays bounded.
pub const MAX_LABEL_BYTES: usize = 8 * 1024;

/// The AIM symbology identifiers of GS1 element strings.
const GS1_SYMBOLOGIES: [&str; 4] = ["]C1", "]d2", "]Q3", "]e0"];

/// The character a site has its wedges send for ASCII 29. It may not be
/// a character a GS1 value can hold, or it would cut values short.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Separator(char);

impl Separator {
    pub fn new(c: char) -> Result<Separator, SeparatorError> {
        if ai::in_cset82(c) {
            return Err(SeparatorError(c));
        }
        Ok(Separator(c))
    }

    pub fn char(self) -> char {
        self.0
    }
}

impl Default for Separator {
    fn default() -> Separator {
        Separator(DEFAULT_SEPARATOR)
    }
}

/// A separator substitute that GS1 values can hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' can be part of a label's value, so it cannot stand for the group separator")]
pub struct SeparatorError(pub char);

/// What [`read`] needs besides the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadOptions {
    /// The site's substitute for ASCII 29 (ASCII 29 itself is always read).
    pub separator: Separator,
    /// The caller's date, against which a label's two-digit years are read.
    pub today: CivilDate,
}

impl ReadOptions {
    /// Options for `today` with the default separator substitute, `~`.
    pub fn new(today: CivilDate) -> ReadOptions {
        ReadOptions {
            separator: Separator::default(),
            today,
        }
    }
}

/// Reads a scan field's `text`: a GS1 label by the rules in this
/// module's documentation, or plain text.
pub fn read(text: &str, options: &ReadOptions) -> Result<Label, LabelError> {
    let text = text.trim_end_matches(['\r', '\n']);
    let (symbology, text) = match text.as_bytes() {
        [b']', code, modifier, ..]
            if code.is_ascii_alphabetic() && modifier.is_ascii_alphanumeric() =>
        {
            text.split_at(3)
        }
        _ => ("", text),
    };
    let Some(form) = Form::of(symbology, text, options.separator) else {
        return Ok(Label::plain(text));
    };
    if text.len() > MAX_LABEL_BYTES {
        return Err(LabelError::text_too_long(text.len(), MAX_LABEL_BYTES));
    }
    let today = options.today;
    match form {
        Form::ElementString => {
            let elements = element::split(text, options.separator)?;
            Label::build(LabelKind::Gs1, elements, today, None)
        }
        Form::Bracketed => {
            let elements = element::split_bracketed(text).unwrap_or_default();
            Label::build(LabelKind::Gs1, elements, today, None)
        }
        Form::DigitalLink(link) => {
            Label::build(LabelKind::DigitalLink, link.elements()?, today, None)
        }
        Form::Epc => {
            let hex = text.to_ascii_uppercase();
            Label::build(LabelKind::Epc, epc::decode(&hex)?, today, Some(hex))
        }
    }
}

/// How a text is written, when it is a GS1 label.
enum Form<'a> {
    ElementString,
    Bracketed,
    DigitalLink(digital_link::Link<'a>),
    Epc,
}

impl<'a> Form<'a> {
    /// The form of `text` (after its symbology identifier `symbology`, if
    /// any), or `None` for plain text.
    fn of(symbology: &str, text: &'a str, separator: Separator) -> Option<Form<'a>> {
        if GS1_SYMBOLOGIES.contains(&symbology)
            || text.starts_with([GROUP_SEPARATOR, separator.char()])
            || element::is_bare_element_string(text, separator)
        {
            Some(Form::ElementString)
        } else if element::starts_bracketed(text) {
            Some(Form::Bracketed)
        } else if let Some(link) = digital_link::recognise(text) {
            Some(Form::DigitalLink(link))
        } else if epc::is_gs1_epc(text) {
            Some(Form::Epc)
        } else {
            None
        }
    }
}
