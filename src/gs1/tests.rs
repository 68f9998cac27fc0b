//! The parser against published examples (the GS1 General Specifications,
//! the GS1 Digital Link standard, the EPC Tag Data Standard), against
//! labels broken in each way the contract names, and against generated
//! labels and arbitrary text.

use proptest::prelude::*;

use super::ai::{Charset, Length, Rule, TABLE};
use super::*;

/// The day the examples are read on.
fn today() -> CivilDate {
    CivilDate::new(2026, 3, 14).expect("a real date")
}

fn options() -> ReadOptions {
    ReadOptions::new(today())
}

fn read_ok(text: &str) -> Label {
    read(text, &options()).unwrap_or_else(|error| panic!("{text:?}: {error}"))
}

/// Reads `text` and checks its kind and its elements (in the bracketed form).
fn check(text: &str, kind: LabelKind, elements: &str) {
    let label = read_ok(text);
    assert_eq!(label.kind(), kind, "{text:?}");
    assert_eq!(bracketed(&label), elements, "{text:?}");
}

/// Reads `text`, expecting a refusal with `code` about `ai`.
fn refused(text: &str, code: LabelErrorCode, ai: Option<&str>) -> LabelError {
    let error = read(text, &options()).expect_err(text);
    assert_eq!(
        (error.code, error.ai.as_deref()),
        (code, ai),
        "{text:?}: {error}"
    );
    error
}

const GS: &str = "\u{1d}";

/// Published examples: (text, kind, its elements in the bracketed form).
const PUBLISHED: &[(&str, LabelKind, &str)] = &[
    // GS1 General Specifications.
    (
        "(01)09521101530001(17)210119(10)AB-123",
        LabelKind::Gs1,
        "(01)09521101530001(17)210119(10)AB-123",
    ),
    (
        concat!("]C1", "0109521101530001", "17210119", "10AB-123"),
        LabelKind::Gs1,
        "(01)09521101530001(17)210119(10)AB-123",
    ),
    (
        "(00)106141412345678908",
        LabelKind::Gs1,
        "(00)106141412345678908",
    ),
    (
        "(01)95012345678903(3103)000123",
        LabelKind::Gs1,
        "(01)95012345678903(3103)000123",
    ),
    (
        "(01)09501101020917(17)190508(10)ABC123(21)XYZ789",
        LabelKind::Gs1,
        "(01)09501101020917(17)190508(10)ABC123(21)XYZ789",
    ),
    // EPC Tag Data Standard: urn:epc:tag:sgtin-96:3.0614141.812345.6789.
    (
        "3074257BF7194E4000001A85",
        LabelKind::Epc,
        "(01)80614141123458(21)6789",
    ),
    // EPC Tag Data Standard: urn:epc:tag:sscc-96:3.0614141.1234567890.
    (
        "3174257BF4499602D2000000",
        LabelKind::Epc,
        "(00)106141412345678908",
    ),
    // urn:epc:tag:sscc-96:5.023356789.30200002, another filter and partition.
    (
        "31AC16465751CCD0C2000000",
        LabelKind::Epc,
        "(00)302335678902000022",
    ),
    // GS1 Digital Link standard.
    (
        "https://id.gs1.org/01/09520123456788/10/ABC1/21/12345?17=180426",
        LabelKind::DigitalLink,
        "(01)09520123456788(10)ABC1(21)12345(17)180426",
    ),
    (
        "https://id.gs1.org/01/09520123456788/10/ABC%2F123/21/12345?17=180426",
        LabelKind::DigitalLink,
        "(01)09520123456788(10)ABC/123(21)12345(17)180426",
    ),
    (
        "https://id.gs1.org/01/09520123456788",
        LabelKind::DigitalLink,
        "(01)09520123456788",
    ),
    (
        "https://id.gs1.org/00/106141412345678908",
        LabelKind::DigitalLink,
        "(00)106141412345678908",
    ),
    // GTIN-13, -12 and -8 in a Digital Link, padded to 14 digits.
    (
        "https://id.gs1.org/01/9520123456788",
        LabelKind::DigitalLink,
        "(01)09520123456788",
    ),
    (
        "https://example.com/01/614141123452",
        LabelKind::DigitalLink,
        "(01)00614141123452",
    ),
    (
        "https://example.com/01/96385074",
        LabelKind::DigitalLink,
        "(01)00000096385074",
    ),
];

#[test]
fn published_examples_read_as_their_standards_say() {
    assert_eq!(PUBLISHED.len(), 15);
    for (text, kind, elements) in PUBLISHED {
        check(text, *kind, elements);
    }
}

#[test]
fn scanners_forms_of_one_label_read_alike() {
    let elements = "(01)09521101530001(10)AB-123(21)XYZ789(17)210119";
    for text in [
        concat!(
            "]C1",
            "0109521101530001",
            "10AB-123",
            "\u{1d}",
            "21XYZ789",
            "\u{1d}",
            "17210119"
        ),
        concat!("]d2", "0109521101530001", "10AB-123~21XYZ789~17210119"),
        concat!("]Q3", "0109521101530001", "10AB-123~21XYZ789~17210119\r\n"),
        concat!("]e0", "0109521101530001", "10AB-123~21XYZ789~17210119~"),
        concat!(
            "\u{1d}",
            "0109521101530001",
            "10AB-123",
            "\u{1d}",
            "21XYZ789",
            "\u{1d}",
            "17210119"
        ),
        concat!("0109521101530001", "10AB-123~21XYZ789~17210119"),
        "(01) 09521101530001 (10) AB-123 (21) XYZ789 (17) 210119",
    ] {
        check(text, LabelKind::Gs1, elements);
    }
    let digital_link = "https://example.com/shop/01/09521101530001/10/AB-123/21/XYZ789?17=210119&linkType=gs1:pip#top";
    check(digital_link, LabelKind::DigitalLink, elements);
    check(
        &format!("]Q1{digital_link}"),
        LabelKind::DigitalLink,
        elements,
    );
}

#[test]
fn a_site_separator_substitute_stands_for_ascii_29() {
    let pipe = ReadOptions {
        separator: Separator::new('|').expect("not in set 82"),
        today: today(),
    };
    let label = read("]C1010952110153000110AB|21XYZ", &pipe).expect("reads");
    assert_eq!(bracketed(&label), "(01)09521101530001(10)AB(21)XYZ");
    let with_tilde =
        read("]C1010952110153000110AB~21XYZ", &pipe).expect_err("~ is no separator here");
    assert_eq!(with_tilde.code, LabelErrorCode::Malformed);
    assert_eq!(Separator::new('-'), Err(SeparatorError('-')));
    assert_eq!(Separator::default().char(), '~');
}

#[test]
fn what_a_label_names() {
    let unit = read_ok("(01)09521101530001(21)XYZ789(10)AB-123");
    assert_eq!(
        unit.names(),
        Named::Unit {
            gtin: "09521101530001",
            serial: "XYZ789",
            epc: None
        }
    );
    let tag = read_ok("3074257bf7194e4000001a85");
    assert_eq!(
        tag.names(),
        Named::Unit {
            gtin: "80614141123458",
            serial: "6789",
            epc: Some("3074257BF7194E4000001A85"),
        }
    );
    let expiry = CivilDate::new(2021, 1, 19);
    assert_eq!(
        read_ok("(01)09521101530001(17)210119(10)AB-123").names(),
        Named::SkuLot {
            gtin: "09521101530001",
            lot: Some("AB-123"),
            expiry
        }
    );
    assert_eq!(
        read_ok("(01)09521101530001(17)210119").names(),
        Named::SkuLot {
            gtin: "09521101530001",
            lot: None,
            expiry
        }
    );
    for pallet in [
        "(00)106141412345678908(02)09521101530001(37)24",
        "3174257BF4499602D2000000",
    ] {
        assert_eq!(
            read_ok(pallet).names(),
            Named::Pallet {
                sscc: "106141412345678908"
            }
        );
    }
    for other in ["(01)09521101530001", "(400)PO-77", "B-12-03"] {
        assert_eq!(read_ok(other).names(), Named::Other, "{other}");
    }
}

#[test]
fn accessors_give_the_keys_and_the_expiry_as_a_day() {
    let label = read_ok("(00)106141412345678908(01)09521101530001(10)L1(21)S1(17)280200");
    assert_eq!(label.sscc(), Some("106141412345678908"));
    assert_eq!(label.gtin(), Some("09521101530001"));
    assert_eq!(label.lot(), Some("L1"));
    assert_eq!(label.serial(), Some("S1"));
    assert_eq!(
        label.expiry().map(|d| d.to_string()).as_deref(),
        Some("2028-02-29")
    );
    assert_eq!(label.value("3103"), None);
}

#[test]
fn plain_text_stays_plain() {
    for (text, plain) in [
        ("B-12-03", "B-12-03"),
        ("]C0B-12-03", "B-12-03"),
        ("]E04006381333931", "4006381333931"),
        ("E2806894000040017790E471", "E2806894000040017790E471"),
        ("3074257BF7194E4000001A8", "3074257BF7194E4000001A8"),
        ("SKU-123", "SKU-123"),
        ("0123456789", "0123456789"),
        // A bare (01) whose check digit does not hold is a number, not a label.
        ("0109521101530002", "0109521101530002"),
        ("0109521101530001AB", "0109521101530001AB"),
        (
            "https://example.com/products/123",
            "https://example.com/products/123",
        ),
        ("https://example.com/01", "https://example.com/01"),
        (
            "ftp://example.com/01/09520123456788",
            "ftp://example.com/01/09520123456788",
        ),
        ("(B)12", "(B)12"),
        // Not ASCII where a bare key's digits would be.
        (" %4éé=~(~/é", " %4éé=~(~/é"),
        ("01095211015300é", "01095211015300é"),
        ("", ""),
    ] {
        let label = read_ok(text);
        assert_eq!(label.kind(), LabelKind::Plain, "{text:?}");
        assert_eq!(label.plain_text(), Some(plain), "{text:?}");
        assert!(label.elements().is_empty());
        assert_eq!(label.names(), Named::Other);
    }
}

#[test]
fn each_way_a_label_breaks_is_refused_with_its_code_and_words() {
    use LabelErrorCode::*;
    let cases: &[(&str, LabelErrorCode, Option<&str>, &str)] = &[
        ("(01)09521101530002(17)210119", CheckDigit, Some("01"), "the check digit of (01) 09521101530002 should be 1"),
        ("(00)106141412345678909", CheckDigit, Some("00"), "the check digit of (00) 106141412345678909 should be 8"),
        ("(02)09521101530001(410)0952110153003(37)5", CheckDigit, Some("410"), "the check digit of (410) 0952110153003 should be 1"),
        ("https://id.gs1.org/01/09520123456789", CheckDigit, Some("01"), "the check digit of (01) 09520123456789 should be 8"),
        ("(14)260101", UnknownAi, Some("14"), "(14) is not an application identifier stockhop reads"),
        ("]C1010952110153000180061234", UnknownAi, Some("8006"), "(8006) is not an application identifier stockhop reads"),
        ("(01)09521101530001(3106)000123", UnknownAi, Some("3106"), "(3106) is not an application identifier stockhop reads"),
        ("https://id.gs1.org/01/09520123456788?7003=2601011200", UnknownAi, Some("7003"), "(7003) is not an application identifier stockhop reads"),
        ("(01)09521101530001(17)211301", BadDate, Some("17"), "(17) 211301 is not a date: there is no month 13"),
        ("(01)09521101530001(11)250229", BadDate, Some("11"), "(11) 250229 is not a date: february 2025 has 28 days"),
        ("https://id.gs1.org/01/09520123456788?15=260431", BadDate, Some("15"), "(15) 260431 is not a date: april 2026 has 30 days"),
        ("(01)09521101530001(10)ABCDEFGHIJKLMNOPQRSTU", TooLong, Some("10"), "(10) holds at most 20 characters, not 21"),
        ("(01)095211015300012", TooLong, Some("01"), "(01) takes 14 digits, not 15"),
        ("]C1010952110153000137123456789", TooLong, Some("37"), "(37) holds at most 8 digits, not 9"),
        ("(01)0952110153000A", Malformed, Some("01"), "(01) takes digits only, not 0952110153000A"),
        ("(01)095211", Malformed, Some("01"), "(01) takes 14 digits, not 6"),
        ("(01)09521101530001(10)AB CD", Malformed, Some("10"), "(10) may not hold a space: a gs1 value takes letters, digits and !\"%&'()*+,-./:;<=>?_"),
        ("(01)09521101530001(10)", Malformed, Some("10"), "(10) has no value"),
        ("]C1010952110153000110AB~10CD", Malformed, Some("10"), "(10) appears twice with different values"),
        ("]C1XY12", Malformed, None, "the label starts with 'XY12', which is not an application identifier"),
        ("]C10109521101530001~A1", Malformed, None, "after (01) comes 'A1', which is not an application identifier"),
        ("]C1", Malformed, None, "the label holds no gs1 data"),
        ("https://id.gs1.org/01/09520123456788/21/12345/10/ABC1", Malformed, Some("10"), "a digital link path may not carry (10) after (01) there: its qualifiers are (22), (10), (21) in that order"),
        ("https://id.gs1.org/01/09520123456788/10/%FF", Malformed, Some("10"), "(10) holds a percent escape that is not utf-8 text"),
        ("301C00000000000000000000", Malformed, None, "epc 301C00000000000000000000: partition 7 is not in the tds table"),
        ("3174257BF4499602D2000001", Malformed, None, "epc 3174257BF4499602D2000001: the unallocated bits of an sscc-96 are not zero"),
        ("3003FFFFFFFFFC0000000000", Malformed, None, "epc 3003FFFFFFFFFC0000000000: its company prefix 1099511627775 has more than 12 digits"),
    ];
    for (text, code, ai, words) in cases {
        let error = refused(text, *code, *ai);
        assert_eq!(error.message, *words, "{text:?}");
    }
    let counted = |code| cases.iter().filter(|case| case.1 == code).count();
    for code in [CheckDigit, UnknownAi, BadDate, TooLong, Malformed] {
        assert!(counted(code) >= 3, "{code:?}");
    }
}

#[test]
fn text_longer_than_any_gs1_symbol_is_refused_whole() {
    let long = format!("]C101095211015300019{}", "9".repeat(MAX_LABEL_BYTES));
    let error = refused(&long, LabelErrorCode::TooLong, None);
    assert!(
        error.message.starts_with("the label is "),
        "{}",
        error.message
    );
    let plain = "B".repeat(MAX_LABEL_BYTES + 1);
    assert_eq!(read_ok(&plain).plain_text(), Some(plain.as_str()));
}

#[test]
fn a_label_prints_as_the_json_of_the_contract() {
    let label = read_ok("(01)09521101530001(17)210119(10)AB-123");
    assert_eq!(
        serde_json::to_string(&label).expect("serialises"),
        concat!(
            r#"{"kind":"gs1","elements":[{"ai":"01","value":"09521101530001"},"#,
            r#"{"ai":"17","value":"210119"},{"ai":"10","value":"AB-123"}],"#,
            r#""gtin":"09521101530001","lot":"AB-123","expiry":"2021-01-19"}"#
        )
    );
    let pallet = read_ok("3174257BF4499602D2000000");
    assert_eq!(
        serde_json::to_string(&pallet).expect("serialises"),
        r#"{"kind":"epc","elements":[{"ai":"00","value":"106141412345678908"}],"sscc":"106141412345678908"}"#
    );
    let link = read_ok("https://id.gs1.org/01/09520123456788/21/12345");
    assert!(serde_json::to_string(&link)
        .expect("serialises")
        .starts_with(r#"{"kind":"digital_link","#));
    assert_eq!(
        serde_json::to_string(&read_ok("B-12-03")).expect("serialises"),
        r#"{"kind":"plain","elements":[]}"#
    );
    let error = read("(01)09521101530002", &options()).expect_err("check digit");
    assert_eq!(
        serde_json::to_string(&error).expect("serialises"),
        r#"{"error":"label_check_digit","ai":"01","message":"the check digit of (01) 09521101530002 should be 1"}"#
    );
    let no_ai = read("]C1", &options()).expect_err("empty");
    assert_eq!(
        serde_json::to_value(&no_ai).expect("serialises"),
        serde_json::json!({"error": "label_malformed", "message": "the label holds no gs1 data"})
    );
    assert_eq!(no_ai.code.as_str(), "label_malformed");
}

#[test]
fn the_tds_sgtin_example_encodes_back_to_its_hex() {
    assert_eq!(
        sgtin96_encode("80614141123458", "6789", 3, 7).as_deref(),
        Ok("3074257BF7194E4000001A85")
    );
    assert_eq!(
        sgtin96_encode("80614141123459", "6789", 3, 7),
        Err(EncodeError::Gtin("80614141123459".to_owned()))
    );
    assert_eq!(
        sgtin96_encode("80614141123458", "06789", 3, 7),
        Err(EncodeError::Serial("06789".to_owned()))
    );
    assert_eq!(
        sgtin96_encode("80614141123458", "274877906944", 3, 7),
        Err(EncodeError::Serial("274877906944".to_owned()))
    );
    assert_eq!(
        sgtin96_encode("80614141123458", "1", 8, 7),
        Err(EncodeError::Filter(8))
    );
    assert_eq!(
        sgtin96_encode("80614141123458", "1", 3, 13),
        Err(EncodeError::CompanyPrefixLength(13))
    );
}

#[test]
fn bracketed_escapes_a_bracket_in_a_value_and_element_strings_separate_variable_values() {
    let label = read_ok("(10)A\\(12)B(21)(x)");
    assert_eq!(label.lot(), Some("A(12)B"));
    assert_eq!(label.serial(), Some("(x)"));
    assert_eq!(bracketed(&label), "(10)A\\(12)B(21)\\(x)");
    assert_eq!(read_ok(&bracketed(&label)).elements(), label.elements());
    let logistic = read_ok("(00)106141412345678908(02)09521101530001(37)24(400)PO-7(3103)000123");
    assert_eq!(
        element_string(&logistic),
        format!("0010614141234567890802095211015300013724{GS}400PO-7{GS}3103000123")
    );
}

#[test]
fn the_parser_imports_nothing_from_the_runtime_the_web_or_the_site() {
    let folder = concat!(env!("CARGO_MANIFEST_DIR"), "/src/gs1");
    let files = std::fs::read_dir(folder).expect("the module's folder");
    for file in files {
        let path = file.expect("an entry").path();
        if path.file_name().is_some_and(|name| name == "tests.rs") {
            continue;
        }
        let source = std::fs::read_to_string(&path).expect("a source file");
        for forbidden in [
            "crate::runtime",
            "crate::web",
            "stockhop_site",
            "wasm_bindgen",
            "web_sys",
            "js_sys",
            "SystemTime",
            "Instant::now",
        ] {
            assert!(
                !source.contains(forbidden),
                "{} names {forbidden}",
                path.display()
            );
        }
    }
}

/// A value `spec` accepts, for AIs whose dates hold on any day.
fn valid_value(spec: &'static super::ai::AiSpec) -> BoxedStrategy<String> {
    let digits = |n: usize| proptest::collection::vec(0u8..10, n);
    let text = |d: Vec<u8>| d.iter().map(|d| char::from(b'0' + d)).collect::<String>();
    match (spec.length, spec.rule, spec.charset) {
        (Length::Fixed(n), Rule::CheckDigit, _) => digits(n - 1)
            .prop_map(move |d| {
                let body = text(d);
                let check = check_digit(&body);
                format!("{body}{check}")
            })
            .boxed(),
        (_, Rule::Date, _) => (0u8..100, 1u8..13, 0u8..29)
            .prop_map(|(y, m, d)| format!("{y:02}{m:02}{d:02}"))
            .boxed(),
        (Length::Fixed(n), _, _) => digits(n).prop_map(text).boxed(),
        (Length::Max(max), _, Charset::Numeric) => proptest::collection::vec(0u8..10, 1..=max)
            .prop_map(text)
            .boxed(),
        (Length::Max(max), _, Charset::Cset82) => {
            let set: Vec<char> = (' '..='~').filter(|c| super::ai::in_cset82(*c)).collect();
            proptest::collection::vec(proptest::sample::select(set), 1..=max)
                .prop_map(|chars| chars.into_iter().collect())
                .boxed()
        }
    }
}

/// Labels of one to eight distinct AIs of the table, in any order, in the
/// bracketed form.
fn valid_label() -> impl Strategy<Value = String> {
    let every: Vec<(String, &'static super::ai::AiSpec)> = TABLE
        .iter()
        .flat_map(|spec| spec.every_ai().into_iter().map(move |ai| (ai, spec)))
        .collect();
    proptest::sample::subsequence(every, 1..=8)
        .prop_shuffle()
        .prop_flat_map(|chosen| {
            chosen
                .into_iter()
                .map(|(ai, spec)| valid_value(spec).prop_map(move |value| (ai.clone(), value)))
                .collect::<Vec<_>>()
        })
        .prop_map(|elements| {
            elements
                .iter()
                .map(|(ai, value)| format!("({ai}){}", value.replace('(', "\\(")))
                .collect()
        })
}

proptest! {
    #[test]
    fn every_valid_element_string_round_trips_through_its_bracketed_form(text in valid_label()) {
        let label = read_ok(&text);
        prop_assert_eq!(label.kind(), LabelKind::Gs1);
        prop_assert_eq!(bracketed(&label), text.clone());
        for scanned in [
            format!("]C1{}", element_string(&label)),
            format!("]d2{}", element_string(&label).replace(GS, "~")),
            format!("{GS}{}", element_string(&label)),
        ] {
            let again = read_ok(&scanned);
            prop_assert_eq!(again.elements(), label.elements(), "{:?}", scanned);
            prop_assert_eq!(again.expiry(), label.expiry());
        }
    }

    #[test]
    fn an_sgtin_round_trips_through_its_epc(
        prefix_len in 6usize..=12,
        body in proptest::collection::vec(0u8..10, 13),
        serial in 0u64..(1 << 38),
        filter in 0u8..=7,
    ) {
        let body: String = body.iter().map(|d| char::from(b'0' + d)).collect();
        let gtin = format!("{body}{}", check_digit(&body));
        let hex = sgtin96_encode(&gtin, &serial.to_string(), filter, prefix_len).expect("encodes");
        let label = read_ok(&hex);
        prop_assert_eq!(label.kind(), LabelKind::Epc);
        let serial = serial.to_string();
        prop_assert_eq!(
            label.names(),
            Named::Unit { gtin: &gtin, serial: &serial, epc: Some(&hex) }
        );
    }

    #[test]
    fn read_never_panics_on_arbitrary_text(text in any::<String>()) {
        let _ = read(&text, &options());
    }

    #[test]
    fn read_never_panics_on_text_that_looks_like_gs1(
        start in proptest::sample::select(vec!["", "]C1", "]Q1", "(", "\u{1d}", "~", "01", "00", "30", "31", "https://x.org/01/", "https://x/00/"]),
        rest in "[0-9A-F()~\u{1d}%/?=&#\\ é]{0,40}",
    ) {
        let _ = read(&format!("{start}{rest}"), &options());
    }
}
