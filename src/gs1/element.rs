//! GS1 element strings, as scanners send them and as people write them.
//!
//! * The scanner's form: AIs and values one after another; a value of a
//!   fixed-length AI takes its length, any other ends at a separator (ASCII
//!   29, or the site's substitute) or at the end. A separator after a
//!   fixed-length value, or at the very end, is tolerated: some encoders
//!   write one.
//! * The bracketed human form, `(01)09521101530001(17)210119(10)AB-123`:
//!   each AI in brackets. A `(` inside a value is written `\(`; a `(` not
//!   followed by 2–4 digits and `)` is read as part of the value. Spaces
//!   around a value are left out: no GS1 value holds a space, and a label's
//!   printed line often has them.
//!
//! This file splits text into elements; [`Label::build`] checks them.

use super::ai::{self, Length};
use super::error::LabelError;
use super::label::{Element, Label};
use super::{Separator, GROUP_SEPARATOR};

/// The digits of an AI in brackets.
const BRACKETED_AI_DIGITS: std::ops::RangeInclusive<usize> = 2..=4;

/// The elements of a scanner's element string `text` (after any
/// symbology identifier). An unknown AI is refused here: past it the text
/// cannot be split.
pub(super) fn split(text: &str, separator: Separator) -> Result<Vec<Element>, LabelError> {
    let is_separator = |c: char| c == GROUP_SEPARATOR || c == separator.char();
    let mut elements: Vec<Element> = Vec::new();
    let mut rest = text.trim_start_matches(is_separator);
    while !rest.is_empty() {
        let after = elements.last().map(|e| e.ai.as_str());
        let (ai, spec) = match ai::at_start(rest) {
            Some(found) => found?,
            None => return Err(LabelError::not_an_ai(rest, after)),
        };
        rest = &rest[ai.len()..];
        let end = match spec.length {
            // Stops early at a separator: the value is then too short,
            // which the check says in words.
            Length::Fixed(n) => rest
                .char_indices()
                .take(n)
                .find(|(_, c)| is_separator(*c))
                .map_or_else(|| byte_len_of_chars(rest, n), |(at, _)| at),
            Length::Max(_) => rest.find(is_separator).unwrap_or(rest.len()),
        };
        let (value, tail) = rest.split_at(end);
        elements.push(Element::new(ai, value));
        rest = tail.trim_start_matches(is_separator);
    }
    Ok(elements)
}

/// The byte length of `text`'s first `n` characters (all of it if shorter).
fn byte_len_of_chars(text: &str, n: usize) -> usize {
    text.char_indices().nth(n).map_or(text.len(), |(at, _)| at)
}

/// Whether `text` starts with an AI in brackets: the bracketed form.
pub(super) fn starts_bracketed(text: &str) -> bool {
    bracketed_ai(text).is_some()
}

/// The AI in brackets at the start of `text` (`(`, 2–4 digits, `)`), and
/// the bytes it takes.
fn bracketed_ai(text: &str) -> Option<(&str, usize)> {
    let inner = text.strip_prefix('(')?;
    let digits = inner.bytes().take_while(u8::is_ascii_digit).count();
    let closed = inner.as_bytes().get(digits) == Some(&b')');
    (closed && BRACKETED_AI_DIGITS.contains(&digits)).then(|| (&inner[..digits], digits + 2))
}

/// The elements of `text` in the bracketed form, or `None` when it does
/// not start with an AI in brackets.
pub(super) fn split_bracketed(text: &str) -> Option<Vec<Element>> {
    let mut rest = text;
    let mut elements = Vec::new();
    while let Some((ai, taken)) = bracketed_ai(rest) {
        rest = &rest[taken..];
        let mut value = String::new();
        loop {
            if let Some(escaped) = rest.strip_prefix("\\(") {
                value.push('(');
                rest = escaped;
                continue;
            }
            if rest.is_empty() || bracketed_ai(rest).is_some() {
                break;
            }
            let mut chars = rest.chars();
            value.extend(chars.next());
            rest = chars.as_str();
        }
        elements.push(Element::new(ai, value.trim_matches(' ')));
    }
    (!elements.is_empty()).then_some(elements)
}

/// Whether bare `text` (no symbology identifier, no separator first) is an
/// element string: it starts with (00), (01) or (02), the key's digits
/// complete with a check digit that holds, and nothing but another AI or a
/// separator follows the key. See the module's rule.
pub(super) fn is_bare_element_string(text: &str, separator: Separator) -> bool {
    let digits = match text.get(..2) {
        Some("00") => 18,
        Some("01" | "02") => 14,
        _ => return false,
    };
    let key = text.get(2..2 + digits);
    let Some(key) = key.filter(|key| key.bytes().all(|b| b.is_ascii_digit())) else {
        return false;
    };
    let (body, check) = key.split_at(digits - 1);
    let key_holds = ai::check_digit(body) == check.as_bytes()[0] - b'0';
    let after = text[2 + digits..].chars().next();
    key_holds
        && after.is_none_or(|c| c.is_ascii_digit() || c == GROUP_SEPARATOR || c == separator.char())
}

/// The label's elements in the bracketed human form,
/// `(01)09521101530001(17)210119(10)AB-123`; a `(` in a value is written
/// `\(`. Plain text gives an empty string.
pub fn bracketed(label: &Label) -> String {
    label
        .elements()
        .iter()
        .map(|e| format!("({}){}", e.ai, e.value.replace('(', "\\(")))
        .collect()
}

/// The label's elements as a scanner's element string, without a
/// symbology identifier: a group separator (ASCII 29) after each value of
/// variable length but the last. Plain text gives an empty string.
pub fn element_string(label: &Label) -> String {
    let mut text = String::new();
    let mut open = false;
    for element in label.elements() {
        if open {
            text.push(GROUP_SEPARATOR);
        }
        text.push_str(&element.ai);
        text.push_str(&element.value);
        open = !matches!(
            ai::spec(&element.ai).map(|spec| spec.length),
            Some(Length::Fixed(_))
        );
    }
    text
}
