//! GS1 Digital Link URIs: `http(s)://<any host>/[any path/]01/<GTIN>
//! [/22/<cpv>][/10/<lot>][/21/<serial>][?17=<date>&…]`, or `/00/<SSCC>`.
//!
//! The path's last pairs of segments are the primary key and its
//! qualifiers (for (01): (22), (10), (21), each at most once and in that
//! order; (00) takes none); query parameters whose name is all digits are
//! further elements, any other (`linkType`, …) is left alone. Values are
//! percent-decoded. A GTIN-8, -12 or -13 is padded with zeros to 14 digits.
//!
//! The URI is split by hand at `/`, `?`, `&`, `=` and `#`, which is all a
//! Digital Link needs; the `url` crate would add its IDNA tables to the
//! handheld's module for hosts this never looks at.

use percent_encoding::percent_decode_str;

use super::error::LabelError;
use super::label::Element;

/// The qualifiers (01) may take in a Digital Link path, in their order.
const GTIN_QUALIFIERS: [&str; 3] = ["22", "10", "21"];
/// The GTIN lengths a Digital Link may carry and the digits they pad to.
const GTIN_SHORT_LENGTHS: [usize; 3] = [8, 12, 13];
const GTIN_DIGITS: usize = 14;

/// The path segments of `text` when it is a Digital Link: an `http` or
/// `https` URI whose path holds `01` or `00` where a primary key can be.
/// Everything else (other URIs too) is not one.
pub(super) fn recognise(text: &str) -> Option<Link<'_>> {
    let scheme_end = text.find("://")?;
    let scheme = &text[..scheme_end];
    if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
        return None;
    }
    let after_scheme = &text[scheme_end + 3..];
    let without_fragment = after_scheme.split('#').next().unwrap_or_default();
    let (authority_and_path, query) = match without_fragment.split_once('?') {
        Some((before, query)) => (before, query),
        None => (without_fragment, ""),
    };
    let path = authority_and_path.split_once('/')?.1;
    let segments: Vec<&str> = path.trim_end_matches('/').split('/').collect();
    // The key is the first `01` or `00` with pairs to the end after it.
    let key_at = (0..segments.len())
        .find(|&at| matches!(segments[at], "01" | "00") && (segments.len() - at) % 2 == 0)?;
    Some(Link {
        pairs: segments[key_at..].to_vec(),
        query,
    })
}

/// A Digital Link's primary key and qualifiers (as `[ai, value, ai,
/// value, …]` path segments) and its query.
pub(super) struct Link<'a> {
    pairs: Vec<&'a str>,
    query: &'a str,
}

impl Link<'_> {
    /// The link's elements: the key, its qualifiers, then the query's AIs.
    pub(super) fn elements(&self) -> Result<Vec<Element>, LabelError> {
        let key = self.pairs[0];
        let mut elements = Vec::new();
        let mut qualifiers_left: &[&str] = if key == "01" { &GTIN_QUALIFIERS } else { &[] };
        for (at, pair) in self.pairs.chunks_exact(2).enumerate() {
            let (ai, raw) = (pair[0], pair[1]);
            if at > 0 {
                let place = qualifiers_left.iter().position(|q| *q == ai);
                let Some(place) = place else {
                    return Err(LabelError::link_qualifier(ai, key));
                };
                qualifiers_left = &qualifiers_left[place + 1..];
            }
            elements.push(Element::new(ai, decoded(ai, raw)?));
        }
        for parameter in self.query.split('&') {
            let (name, raw) = parameter.split_once('=').unwrap_or((parameter, ""));
            if name.is_empty() || !name.bytes().all(|b| b.is_ascii_digit()) {
                continue;
            }
            elements.push(Element::new(name, decoded(name, raw)?));
        }
        if let Some(gtin) = elements.first_mut().filter(|e| e.ai == "01") {
            let short = GTIN_SHORT_LENGTHS.contains(&gtin.value.len())
                && gtin.value.bytes().all(|b| b.is_ascii_digit());
            if short {
                gtin.value = format!("{:0>GTIN_DIGITS$}", gtin.value);
            }
        }
        Ok(elements)
    }
}

/// The percent-decoded `raw` value of `ai`.
fn decoded(ai: &str, raw: &str) -> Result<String, LabelError> {
    percent_decode_str(raw)
        .decode_utf8()
        .map(|value| value.into_owned())
        .map_err(|_| LabelError::link_escape(ai))
}
