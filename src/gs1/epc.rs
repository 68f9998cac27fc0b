//! EPCs from RFID tags, in hex: SGTIN-96 (header `0x30`) and SSCC-96
//! (`0x31`), decoded to their GS1 keys by the partition tables of the EPC
//! Tag Data Standard (TDS 2.x), and SGTIN-96 encoded for printers. Every
//! other header is not GS1 here: the text stays an opaque, plain EPC.
//!
//! SGTIN-96: header 8 bits, filter 3, partition 3, company prefix and item
//! reference 44 together (split by the partition), serial 38. SSCC-96:
//! header 8, filter 3, partition 3, company prefix and serial reference 58
//! together, 24 unallocated bits that are zero.

use super::ai::check_digit;
use super::error::LabelError;
use super::label::Element;

/// An EPC-96 written in hex: 96 bits, four to a digit.
pub(super) const EPC96_HEX_DIGITS: usize = 24;
const SGTIN96_HEADER: u128 = 0x30;
const SSCC96_HEADER: u128 = 0x31;
/// The serial of an SGTIN-96: 38 bits of a decimal integer.
const SGTIN96_SERIAL_BITS: u32 = 38;
/// The company prefix and item reference of an SGTIN-96, together.
const SGTIN96_KEY_BITS: u32 = 44;
/// The company prefix and serial reference of an SSCC-96, together.
const SSCC96_KEY_BITS: u32 = 58;
/// The unallocated low bits of an SSCC-96.
const SSCC96_UNALLOCATED_BITS: u32 = 24;
/// The filter value: three bits.
const FILTER_MAX: u8 = 7;

/// One row of a partition table: the company prefix's bits and digits;
/// the other field takes the rest of the key's bits, and the digits that
/// make the key's 13 (SGTIN) or 17 (SSCC).
#[derive(Debug, Clone, Copy)]
struct Partition {
    prefix_bits: u32,
    prefix_digits: usize,
}

/// The partition values 0–6 (TDS, the SGTIN and SSCC partition tables:
/// the company prefix's bits and digits are the same in both).
const PARTITIONS: [Partition; 7] = [
    Partition {
        prefix_bits: 40,
        prefix_digits: 12,
    },
    Partition {
        prefix_bits: 37,
        prefix_digits: 11,
    },
    Partition {
        prefix_bits: 34,
        prefix_digits: 10,
    },
    Partition {
        prefix_bits: 30,
        prefix_digits: 9,
    },
    Partition {
        prefix_bits: 27,
        prefix_digits: 8,
    },
    Partition {
        prefix_bits: 24,
        prefix_digits: 7,
    },
    Partition {
        prefix_bits: 20,
        prefix_digits: 6,
    },
];
/// Digits of an SGTIN's company prefix and item reference (with its
/// indicator) together: a GTIN-14 without its check digit.
const SGTIN_KEY_DIGITS: usize = 13;
/// Digits of an SSCC's company prefix and serial reference (with its
/// extension digit) together: an SSCC without its check digit.
const SSCC_KEY_DIGITS: usize = 17;

/// Whether `text` is an EPC this module decodes: 24 hex digits with a
/// GS1 header it reads.
pub(super) fn is_gs1_epc(text: &str) -> bool {
    text.len() == EPC96_HEX_DIGITS
        && text.bytes().all(|b| b.is_ascii_hexdigit())
        && u128::from_str_radix(&text[..2], 16)
            .is_ok_and(|header| [SGTIN96_HEADER, SSCC96_HEADER].contains(&header))
}

/// The elements of an SGTIN-96 ((01), (21)) or SSCC-96 ((00)) in `hex`,
/// which [`is_gs1_epc`] accepted.
pub(super) fn decode(hex: &str) -> Result<Vec<Element>, LabelError> {
    let bits = u128::from_str_radix(hex, 16).map_err(|_| LabelError::epc(hex, "not hex"))?;
    let partition_value = field(bits, 82, 3);
    let partition = usize::try_from(partition_value)
        .ok()
        .and_then(|p| PARTITIONS.get(p))
        .ok_or_else(|| {
            LabelError::epc(
                hex,
                &format!("partition {partition_value} is not in the tds table"),
            )
        })?;
    let header = field(bits, 88, 8);
    if header == SGTIN96_HEADER {
        let serial = field(bits, 0, SGTIN96_SERIAL_BITS);
        let key = field(bits, SGTIN96_SERIAL_BITS, SGTIN96_KEY_BITS);
        let gtin = gs1_key(hex, key, SGTIN96_KEY_BITS, partition, SGTIN_KEY_DIGITS)?;
        Ok(vec![
            Element::new("01", gtin),
            Element::new("21", serial.to_string()),
        ])
    } else if header == SSCC96_HEADER {
        if field(bits, 0, SSCC96_UNALLOCATED_BITS) != 0 {
            return Err(LabelError::epc(
                hex,
                "the unallocated bits of an sscc-96 are not zero",
            ));
        }
        let key = field(bits, SSCC96_UNALLOCATED_BITS, SSCC96_KEY_BITS);
        let sscc = gs1_key(hex, key, SSCC96_KEY_BITS, partition, SSCC_KEY_DIGITS)?;
        Ok(vec![Element::new("00", sscc)])
    } else {
        Err(LabelError::epc(
            hex,
            "its header is not sgtin-96 (30) or sscc-96 (31)",
        ))
    }
}

/// The `width` bits of `bits` from bit `low` up.
fn field(bits: u128, low: u32, width: u32) -> u128 {
    (bits >> low) & ((1u128 << width) - 1)
}

/// The GS1 key of an EPC's `key` field (`key_bits` wide, split by
/// `partition`): the other field's first digit (indicator or extension),
/// the company prefix, the other field's rest, and the check digit.
fn gs1_key(
    hex: &str,
    key: u128,
    key_bits: u32,
    partition: &Partition,
    key_digits: usize,
) -> Result<String, LabelError> {
    let other_bits = key_bits - partition.prefix_bits;
    let prefix = key >> other_bits;
    let other = field(key, 0, other_bits);
    let other_digits = key_digits - partition.prefix_digits;
    let prefix = digits(prefix, partition.prefix_digits).ok_or_else(|| {
        LabelError::epc(
            hex,
            &format!(
                "its company prefix {prefix} has more than {} digits",
                partition.prefix_digits
            ),
        )
    })?;
    let other = digits(other, other_digits).ok_or_else(|| {
        LabelError::epc(
            hex,
            &format!("its reference {other} has more than {other_digits} digits"),
        )
    })?;
    let body = format!("{}{prefix}{}", &other[..1], &other[1..]);
    let check = check_digit(&body);
    Ok(format!("{body}{check}"))
}

/// `value` in exactly `count` digits, zero-padded; `None` if it needs more.
fn digits(value: u128, count: usize) -> Option<String> {
    let text = format!("{value:0count$}");
    (text.len() == count).then_some(text)
}

/// Why an SGTIN-96 cannot be encoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    #[error("the gtin {0} is not 14 digits whose check digit holds")]
    Gtin(String),
    #[error("the serial {0} is not a whole number of at most 38 bits written without leading zeros, as sgtin-96 needs")]
    Serial(String),
    #[error("the filter value {0} is more than 7")]
    Filter(u8),
    #[error("a company prefix of {0} digits is not 6 to 12")]
    CompanyPrefixLength(usize),
}

/// The SGTIN-96 EPC, in upper-case hex, of the unit `gtin` (14 digits)
/// and `serial` (a decimal integer below 2^38 without leading zeros), with
/// `filter` (0–7; 1 is a point-of-sale item) and a GS1 company prefix of
/// `company_prefix_len` digits (6–12), which picks the partition.
pub fn sgtin96_encode(
    gtin: &str,
    serial: &str,
    filter: u8,
    company_prefix_len: usize,
) -> Result<String, EncodeError> {
    let gtin_holds = gtin.len() == SGTIN_KEY_DIGITS + 1
        && gtin.bytes().all(|b| b.is_ascii_digit())
        && check_digit(&gtin[..SGTIN_KEY_DIGITS]) == gtin.as_bytes()[SGTIN_KEY_DIGITS] - b'0';
    if !gtin_holds {
        return Err(EncodeError::Gtin(gtin.to_owned()));
    }
    let serial_value = serial
        .parse::<u128>()
        .ok()
        .filter(|value| value.to_string() == serial && *value < 1 << SGTIN96_SERIAL_BITS)
        .ok_or_else(|| EncodeError::Serial(serial.to_owned()))?;
    if filter > FILTER_MAX {
        return Err(EncodeError::Filter(filter));
    }
    let (partition_value, partition) = PARTITIONS
        .iter()
        .enumerate()
        .find(|(_, p)| p.prefix_digits == company_prefix_len)
        .ok_or(EncodeError::CompanyPrefixLength(company_prefix_len))?;
    // The GTIN is indicator, company prefix, item reference, check digit;
    // the EPC's item field is the indicator then the item reference.
    let prefix = &gtin[1..=company_prefix_len];
    let item = format!(
        "{}{}",
        &gtin[..1],
        &gtin[1 + company_prefix_len..SGTIN_KEY_DIGITS]
    );
    let number = |digits: &str| digits.parse::<u128>().unwrap_or_default();
    let item_bits = SGTIN96_KEY_BITS - partition.prefix_bits;
    let bits = SGTIN96_HEADER << 88
        | u128::from(filter) << 85
        | (partition_value as u128) << 82
        | number(prefix) << (SGTIN96_SERIAL_BITS + item_bits)
        | number(&item) << SGTIN96_SERIAL_BITS
        | serial_value;
    Ok(format!("{bits:0EPC96_HEX_DIGITS$X}"))
}
