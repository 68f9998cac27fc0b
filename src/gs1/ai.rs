//! The GS1 application identifiers stockhop reads, as data: each AI's
//! length (fixed, or a most), its characters (digits, or the GS1 AI
//! encodable character set 82) and what else its value must satisfy (a
//! check digit, a date). The lengths and sets are those of the GS1
//! General Specifications' AI table.
//!
//! Every fixed-length AI here is also one of GS1's *predefined length*
//! AIs, so an element string needs no separator after it; every other AI
//! here ends at a separator or at the end of the text.

use super::error::LabelError;

/// The characters a value may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Charset {
    /// Digits only.
    Numeric,
    /// GS1 AI encodable character set 82: letters, digits and
    /// `!"%&'()*+,-./:;<=>?_`.
    Cset82,
}

/// How long a value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Length {
    /// Exactly this many characters; no separator follows.
    Fixed(usize),
    /// One to this many characters, ended by a separator or the text's end.
    Max(usize),
}

/// What a value must satisfy besides its length and characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Rule {
    None,
    /// Its last digit is the mod-10 check digit of the others.
    CheckDigit,
    /// `YYMMDD`, `DD` = `00` for the month's last day.
    Date,
}

/// Which AIs an entry of the table covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Code {
    /// One AI.
    One(&'static str),
    /// The measures `first0`–`last5`: a three-digit AI prefix from `first`
    /// to `last`, then the position of the decimal point, 0 to 5
    /// (`3103` is a net weight in kg with three decimals).
    Measures { first: u16, last: u16 },
}

/// One entry of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct AiSpec {
    code: Code,
    pub(super) charset: Charset,
    pub(super) length: Length,
    pub(super) rule: Rule,
}

/// The highest decimal-point digit of a measure AI (`310n`, n = 0–5).
const MEASURE_DECIMALS_MAX: u8 = b'5';

const fn one(ai: &'static str, charset: Charset, length: Length, rule: Rule) -> AiSpec {
    AiSpec {
        code: Code::One(ai),
        charset,
        length,
        rule,
    }
}

const fn key(ai: &'static str, digits: usize) -> AiSpec {
    one(
        ai,
        Charset::Numeric,
        Length::Fixed(digits),
        Rule::CheckDigit,
    )
}

const fn date(ai: &'static str) -> AiSpec {
    one(ai, Charset::Numeric, Length::Fixed(6), Rule::Date)
}

const fn text(ai: &'static str, max: usize) -> AiSpec {
    one(ai, Charset::Cset82, Length::Max(max), Rule::None)
}

const fn count(ai: &'static str) -> AiSpec {
    one(ai, Charset::Numeric, Length::Max(8), Rule::None)
}

const fn measures(first: u16, last: u16) -> AiSpec {
    AiSpec {
        code: Code::Measures { first, last },
        charset: Charset::Numeric,
        length: Length::Fixed(6),
        rule: Rule::None,
    }
}

/// Every AI stockhop reads. No code here is a prefix of another, so an
/// element string's next AI is the one entry its text starts with.
pub(super) const TABLE: &[AiSpec] = &[
    key("00", 18),                                             // SSCC
    key("01", 14),                                             // GTIN
    key("02", 14),                                             // GTIN of contained trade items
    text("10", 20),                                            // batch or lot
    date("11"),                                                // production date
    date("12"),                                                // due date
    date("13"),                                                // packaging date
    date("15"),                                                // best before
    date("16"),                                                // sell by
    date("17"),                                                // expiry
    one("20", Charset::Numeric, Length::Fixed(2), Rule::None), // variant
    text("21", 20),                                            // serial
    text("22", 20),                                            // consumer product variant
    text("240", 30),                                           // additional product id
    text("241", 30),                                           // customer part number
    text("250", 30),                                           // secondary serial
    count("30"),                                               // variable count
    measures(310, 316),                                        // trade measures, metric
    measures(320, 329),                                        // trade measures, imperial
    measures(330, 337), // logistic measures, metric; kg per m²
    measures(340, 349), // logistic measures, imperial
    measures(350, 357), // areas; net weight and volume in ounces
    measures(360, 369), // volumes
    count("37"),        // count of trade items
    text("400", 30),    // customer's order number
    key("410", 13),     // ship to GLN
    key("411", 13),     // bill to GLN
    key("412", 13),     // purchased from GLN
    key("413", 13),     // ship for GLN
    key("414", 13),     // physical location GLN
    key("415", 13),     // invoicing party GLN
    key("416", 13),     // production or service location GLN
    key("417", 13),     // party GLN
    text("420", 20),    // ship to postal code
    text("8020", 25),   // payment slip reference
    text("90", 30),     // mutually agreed
    text("91", 90),     // company internal, 91–99
    text("92", 90),
    text("93", 90),
    text("94", 90),
    text("95", 90),
    text("96", 90),
    text("97", 90),
    text("98", 90),
    text("99", 90),
];

impl AiSpec {
    /// Every AI this entry covers (`"3100"` … `"3105"` for a measure).
    #[cfg(test)]
    pub(super) fn every_ai(&self) -> Vec<String> {
        match self.code {
            Code::One(ai) => vec![ai.to_owned()],
            Code::Measures { first, last } => (first..=last)
                .flat_map(|prefix| {
                    (b'0'..=MEASURE_DECIMALS_MAX).map(move |d| format!("{prefix}{}", char::from(d)))
                })
                .collect(),
        }
    }

    /// The length of this entry's AIs.
    fn code_len(&self) -> usize {
        match self.code {
            Code::One(ai) => ai.len(),
            Code::Measures { .. } => 4,
        }
    }

    /// Whether `ai` is one of this entry's AIs.
    fn covers(&self, ai: &[u8]) -> bool {
        match self.code {
            Code::One(code) => ai == code.as_bytes(),
            Code::Measures { first, last } => match ai {
                [a, b, c, decimals] if [a, b, c].iter().all(|d| d.is_ascii_digit()) => {
                    let prefix = [a, b, c]
                        .iter()
                        .fold(0u16, |acc, d| acc * 10 + u16::from(**d - b'0'));
                    (first..=last).contains(&prefix)
                        && (b'0'..=MEASURE_DECIMALS_MAX).contains(decimals)
                }
                _ => false,
            },
        }
    }
}

/// The entry for the AI `ai` (`"01"`, `"3103"`), if stockhop reads it.
pub(super) fn spec(ai: &str) -> Option<&'static AiSpec> {
    TABLE.iter().find(|spec| spec.covers(ai.as_bytes()))
}

/// The AI an element string's `text` starts with and its entry; or, when
/// it starts with digits of no AI stockhop reads, the error naming them.
pub(super) fn at_start(text: &str) -> Option<Result<(&str, &'static AiSpec), LabelError>> {
    let known = TABLE.iter().find_map(|spec| {
        let ai = text.get(..spec.code_len())?;
        spec.covers(ai.as_bytes()).then_some((ai, spec))
    });
    if let Some(found) = known {
        return Some(Ok(found));
    }
    let digits = unknown_ai_len(text)?;
    let ai = text
        .get(..digits)
        .filter(|ai| ai.bytes().all(|b| b.is_ascii_digit()))?;
    Some(Err(LabelError::unknown_ai(ai)))
}

/// How many digits an AI starting with `text`'s first two has, by GS1's
/// allocation of AI lengths to their first two digits; `None` when `text`
/// does not start with two digits.
fn unknown_ai_len(text: &str) -> Option<usize> {
    let two = text
        .get(..2)
        .filter(|two| two.bytes().all(|b| b.is_ascii_digit()))?;
    Some(match two {
        "23" | "24" | "25" | "40" | "41" | "42" | "43" => 3,
        "31" | "32" | "33" | "34" | "35" | "36" | "39" | "70" | "71" | "72" | "80" | "81"
        | "82" => 4,
        _ => 2,
    })
}

/// The mod-10 check digit of `digits` (the digits before it): weights 3
/// and 1 alternate from the rightmost digit, which weighs 3. Characters
/// that are not digits count as 0; callers check for digits first.
pub fn check_digit(digits: &str) -> u8 {
    let sum: u32 = digits
        .chars()
        .rev()
        .enumerate()
        .map(|(i, c)| c.to_digit(10).unwrap_or(0) * if i % 2 == 0 { 3 } else { 1 })
        .sum();
    u8::try_from((10 - sum % 10) % 10).unwrap_or(0)
}

/// Whether `c` is in the GS1 AI encodable character set 82.
pub(super) fn in_cset82(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!\"%&'()*+,-./:;<=>?_".contains(c)
}

/// Checks `value` of `ai` against its entry: length, characters and check
/// digit. Dates are read by the caller, which knows today.
pub(super) fn check_value(ai: &str, spec: &AiSpec, value: &str) -> Result<(), LabelError> {
    let len = value.chars().count();
    if len == 0 {
        return Err(LabelError::empty(ai));
    }
    match spec.length {
        Length::Fixed(n) if len > n => return Err(LabelError::fixed_too_long(ai, n, len)),
        Length::Fixed(n) if len < n => return Err(LabelError::too_short(ai, n, len)),
        Length::Max(max) if len > max => {
            let unit = match spec.charset {
                Charset::Numeric => "digits",
                Charset::Cset82 => "characters",
            };
            return Err(LabelError::value_too_long(ai, max, unit, len));
        }
        _ => {}
    }
    match spec.charset {
        Charset::Numeric if !value.bytes().all(|b| b.is_ascii_digit()) => {
            return Err(LabelError::not_digits(ai, value))
        }
        Charset::Cset82 => {
            if let Some(bad) = value.chars().find(|c| !in_cset82(*c)) {
                return Err(LabelError::bad_character(ai, bad));
            }
        }
        Charset::Numeric => {}
    }
    if spec.rule == Rule::CheckDigit {
        let (body, last) = value.split_at(value.len() - 1);
        let expected = check_digit(body);
        if last.as_bytes()[0] - b'0' != expected {
            return Err(LabelError::check_digit(ai, value, expected));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// GS1's predefined-length AIs by their first two digits (General
    /// Specifications, the table of element strings with predefined length).
    const PREDEFINED: &[&str] = &[
        "00", "01", "02", "03", "04", "11", "12", "13", "14", "15", "16", "17", "18", "19", "20",
        "31", "32", "33", "34", "35", "36", "41",
    ];

    #[test]
    fn every_fixed_length_ai_needs_no_separator_and_every_other_ends_at_one() {
        for spec in TABLE {
            let code = match spec.code {
                Code::One(ai) => ai.to_owned(),
                Code::Measures { first, .. } => first.to_string(),
            };
            let predefined = PREDEFINED.contains(&&code[..2]);
            assert_eq!(
                matches!(spec.length, Length::Fixed(_)),
                predefined,
                "({code})"
            );
        }
    }

    #[test]
    fn no_ai_in_the_table_is_a_prefix_of_another() {
        let every_ai: Vec<String> = TABLE.iter().flat_map(AiSpec::every_ai).collect();
        for a in &every_ai {
            assert_eq!(spec(a).map(AiSpec::code_len), Some(a.len()), "({a})");
            for b in &every_ai {
                assert!(a == b || !b.starts_with(a.as_str()), "({a}) starts ({b})");
            }
        }
    }

    #[test]
    fn measures_take_a_decimal_point_position_of_0_to_5() {
        assert!(spec("3100").is_some());
        assert!(spec("3695").is_some());
        assert!(spec("3375").is_some());
        assert!(spec("3106").is_none());
        assert!(spec("3170").is_none());
        assert!(spec("3380").is_none());
    }

    #[test]
    fn check_digits_of_published_keys() {
        assert_eq!(check_digit("0952110153000"), 1);
        assert_eq!(check_digit("8061414112345"), 8);
        assert_eq!(check_digit("10614141234567890"), 8);
        assert_eq!(check_digit("952012345678"), 8);
    }

    #[test]
    fn an_unknown_ai_is_named_with_the_length_gs1_gives_its_first_two_digits() {
        for (text, ai) in [("14260101", "14"), ("8006123", "8006"), ("2351234", "235")] {
            let error = at_start(text).expect("digits").expect_err(text);
            assert_eq!(error.ai.as_deref(), Some(ai));
        }
        assert!(at_start("A1").is_none());
    }
}
