use super::*;

#[test]
fn a_turn_gives_way_past_its_floor_only_while_the_writer_is_wanted() {
    let unasked = || -> bool { panic!("asked before the floor") };
    for budget in [TURN_BUDGET_SQLITE, TURN_BUDGET_POSTGRES] {
        assert!(TURN_FLOOR < budget);
        assert!(!turn_over(Duration::ZERO, budget, unasked));
        let before_floor = TURN_FLOOR - Duration::from_micros(1);
        assert!(!turn_over(before_floor, budget, unasked));
        assert!(!turn_over(TURN_FLOOR, budget, || false));
        assert!(turn_over(TURN_FLOOR, budget, || true));
        let before_end = budget - Duration::from_micros(1);
        assert!(!turn_over(before_end, budget, || false));
        assert!(turn_over(budget, budget, || false));
    }
}

/// One connection whose every turn is wanted by someone else.
struct Wanted<'a>(std::cell::RefCell<&'a mut Connection>);

impl Connections for Wanted<'_> {
    fn turn<T>(&self, work: impl FnOnce(&mut Connection) -> T) -> (T, Duration) {
        self.0.turn(work)
    }

    fn wanted(&self) -> bool {
        true
    }
}

#[test]
fn an_import_that_gives_way_every_turn_still_lands_whole() {
    let dir = tempfile::tempdir().unwrap();
    let mut sqlite = crate::store::db::open_connection(&dir.path().join("db.sqlite")).unwrap();
    crate::store::db::migrate(&mut sqlite).unwrap();
    let mut conn = Connection::Sqlite(sqlite);
    let rows = 3 * APPLY_READ_ROWS as usize + 1;
    let mut csv = String::from("bin,zone,location\n");
    for i in 0..rows {
        csv.push_str(&format!("B-{i},Z-1,L-1\n"));
    }
    let conns = Wanted(std::cell::RefCell::new(&mut conn));
    let summary = run(
        &conns,
        Kind::Bins,
        "bins.csv",
        Source::Csv(csv.as_bytes()),
        &|| UnixMs(1),
    )
    .unwrap();
    assert_eq!((summary.rows, summary.changed), (rows, rows));
    let (bins, staged, imports): (i64, i64, i64) = conn
        .query_row(
            "SELECT (SELECT count(*) FROM bins), (SELECT count(*) FROM import_rows),
                    (SELECT count(*) FROM imports)",
            [],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
        )
        .unwrap();
    assert_eq!((bins, staged, imports), (rows as i64, 0, 0));
}

fn migrated_in_memory() -> Connection {
    let mut sqlite = rusqlite::Connection::open_in_memory().unwrap();
    crate::store::db::migrate(&mut sqlite).unwrap();
    Connection::Sqlite(sqlite)
}

/// The lines `run` reports for the bad rows (an empty bin) of `csv`.
fn bad_lines(csv: &str) -> Vec<u64> {
    let mut conn = migrated_in_memory();
    let conns = std::cell::RefCell::new(&mut conn);
    match run(
        &conns,
        Kind::Bins,
        "bins.csv",
        Source::Csv(csv.as_bytes()),
        &|| UnixMs(1),
    ) {
        Err(ImportError::Invalid { errors, .. }) => {
            errors.into_iter().map(|error| error.line).collect()
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_bad_row_is_told_at_its_line_whatever_ends_the_lines() {
    let rows = ["B-1,Z,L", ",Z,L", "B-2,Z,L", ",Z,L"];
    for end in ["\n", "\r\n", "\r"] {
        let csv = format!("bin,zone,location{end}{}{end}", rows.join(end));
        assert_eq!(bad_lines(&csv), [3, 5], "lines ended by {end:?}");
    }
    // Mixed ends, an empty line, a quoted field over two lines (a
    // line end in a zone is a control character: refused on its
    // first line).
    let csv = "bin,zone,location\nB-1,Z,L\r\n,Z,L\r\n\r\nB-2,\"Z\nZ\",L\r,Z,L\n";
    assert_eq!(bad_lines(csv), [3, 5, 7]);
}

#[test]
fn a_file_with_mixed_line_ends_imports_every_row() {
    let mut conn = migrated_in_memory();
    let csv = "bin,zone,location\nH-01-01,H,DC1\r\nH-01-02,H,DC1\r\nH-01-03,H,DC1\rH-01-04,H,DC1\n";
    let summary =
        import_reader(&mut conn, Kind::Bins, "c5.csv", csv.as_bytes(), UnixMs(1)).unwrap();
    assert_eq!((summary.rows, summary.changed), (4, 4));
}

#[test]
fn a_field_with_a_control_character_is_refused_like_a_scan_of_it() {
    assert_eq!(field("B-1", "bin", true), Ok(Some("B-1".into())));
    for bad in ["B\u{0}1", "B\u{1b}[31m", "B\u{7f}"] {
        assert_eq!(
            field(bad, "bin", true),
            Err("bin must not contain control characters".into())
        );
    }
}

#[test]
fn a_field_with_a_direction_control_is_refused_naming_its_code_point() {
    for (bad, code) in [("Ann\u{202E}eeL", "U+202E"), ("\u{2067}Bo", "U+2067")] {
        let refused = field(bad, "name", true).unwrap_err();
        assert!(
            refused.starts_with(&format!("name must not contain {code}")),
            "{refused}"
        );
    }
    // In a file: the operator's name and the bin's zone, each at its
    // line, and nothing imported.
    let (told, conn) = refusal(
        Kind::Operators,
        "badge,name\nOP-1,Ann Lee\nOP-2,\"\u{202E}eeL nnA\"\n".as_bytes(),
    );
    assert_eq!(told.len(), 1, "{told:?}");
    assert_eq!(told[0].0, 3);
    assert!(
        told[0].1.starts_with("name must not contain U+202E"),
        "{told:?}"
    );
    let operators: i64 = conn
        .query_row("SELECT count(*) FROM operators", [], |row| row.get(0))
        .unwrap();
    assert_eq!(operators, 0);
    let (told, _) = refusal(
        Kind::Bins,
        "bin,zone,location\nB-1,Z\u{2066}A\u{2069},L\n".as_bytes(),
    );
    assert_eq!(told[0].0, 2);
    assert!(
        told[0].1.starts_with("zone must not contain U+2066"),
        "{told:?}"
    );
}

#[test]
fn a_spreadsheets_header_in_capitals_and_with_a_byte_order_mark_reads_as_the_columns() {
    // Excel's "CSV UTF-8" starts with a byte order mark; people write
    // headers capitalised.
    let mut conn = migrated_in_memory();
    let csv = "\u{feff}Bin, Zone ,LOCATION,Note\nB-1,Z-1,L-1,by the door\n";
    let summary =
        import_reader(&mut conn, Kind::Bins, "file.csv", csv.as_bytes(), UnixMs(1)).unwrap();
    assert_eq!((summary.rows, summary.changed), (1, 1));
    let bin = bins::find(&conn, "B-1").unwrap().unwrap();
    assert_eq!((bin.zone.as_str(), bin.location.as_str()), ("Z-1", "L-1"));
}

#[test]
fn a_row_with_too_few_or_too_many_fields_is_told_at_its_line_and_the_rest_still_checked() {
    let (told, conn) = refusal(
        Kind::Bins,
        b"bin,zone,location\nB-1,Z\nB-2,Z,L,Dock 1, east\nB-3,Z,L\n,Z,L\n,,\n",
    );
    assert_eq!(
        told,
        [
            (
                2,
                "this line has 2 fields where the header names 3 (bin,zone,location): \
                 a value is missing, or a double quote opened here is never closed"
                    .to_owned()
            ),
            (
                3,
                "this line has 5 fields where the header names 3 (bin,zone,location): \
                 a value holding a comma is put in double quotes"
                    .to_owned()
            ),
            (5, "bin is empty".to_owned()),
            (
                6,
                "the line is empty but for its commas (a spreadsheet's leftover row): \
                 delete it"
                    .to_owned()
            ),
        ]
    );
    assert_eq!(bins::find(&conn, "B-3").unwrap(), None, "nothing imported");
}

#[test]
fn a_utf16_file_is_told_to_be_saved_as_utf8() {
    let mut conn = migrated_in_memory();
    // Excel's "Unicode Text": UTF-16 little-endian after its mark.
    let text: Vec<u8> = [0xff, 0xfe]
        .into_iter()
        .chain(
            "bin,zone,location\n"
                .encode_utf16()
                .flat_map(u16::to_le_bytes),
        )
        .collect();
    match import_reader(
        &mut conn,
        Kind::Bins,
        "file.csv",
        text.as_slice(),
        UnixMs(1),
    ) {
        Err(
            err @ ImportError::NotCsv {
                found: NotCsv::Utf16,
                ..
            },
        ) => assert!(
            err.to_string()
                .starts_with("file.csv:1: the file is UTF-16"),
            "{err}"
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_header_missing_a_column_names_what_it_has_instead_and_a_column_named_twice_is_told() {
    let (told, _) = refusal(Kind::Units, b"epc,cdoe,sku,state,bin\nE-1,,S,new,\n");
    assert_eq!(
        told,
        [(
            1,
            "the header names no \"code\" column; it names \"cdoe\", which is not one \
             (expected epc,code,sku,state,bin)"
                .to_owned()
        )]
    );
    let (told, _) = refusal(Kind::Bins, b"bin,Bin,zone,location\nB-1,B-1,Z,L\n");
    assert_eq!(
        told,
        [(
            1,
            "the header names the \"bin\" column twice (expected bin,zone,location)".to_owned()
        )]
    );
}

/// The error of importing `csv` as `kind` into a new ledger: each line
/// and message, and the ledger after it.
fn refusal(kind: Kind, csv: &[u8]) -> (Vec<(u64, String)>, Connection) {
    let mut conn = migrated_in_memory();
    match import_reader(&mut conn, kind, "file.csv", csv, UnixMs(1)) {
        Err(ImportError::Invalid { errors, .. }) => (
            errors
                .into_iter()
                .map(|error| (error.line, error.message))
                .collect(),
            conn,
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_file_that_is_not_utf8_is_told_at_its_line_to_be_saved_as_utf8() {
    // Excel's plain CSV on Windows: "é" is the byte 0xE9.
    let (told, _) = refusal(
        Kind::Bins,
        b"bin,zone,location\r\nB-1,Z,L\r\nB-2,Entr\xe9e,L\r\n",
    );
    assert_eq!(told.len(), 1, "{told:?}");
    let (line, message) = &told[0];
    assert_eq!(*line, 3);
    assert!(
        message.starts_with("the file is not UTF-8: the \"zone\" field of this line"),
        "{message}"
    );
    assert!(message.contains("save the file as UTF-8"), "{message}");
    assert!(message.contains("CSV UTF-8"), "{message}");
    // In the header, it is line 1.
    let (told, _) = refusal(Kind::Bins, b"bin,zon\xe9,location\nB-1,Z,L\n");
    assert_eq!(told[0].0, 1);
    assert!(
        told[0]
            .1
            .starts_with("the file is not UTF-8: field 2 of the header"),
        "{told:?}"
    );
}

#[test]
fn a_json_element_reads_as_the_csv_row_of_the_same_fields() {
    let record = json_record(
        Kind::Grns,
        &serde_json::json!({"grn": "G-1", "qc": "accepted", "sku": "S", "expected": 3}),
    )
    .unwrap();
    assert_eq!(
        record,
        csv::StringRecord::from(vec!["G-1", "accepted", "S", "3"])
    );
    assert!(json_record(Kind::Bins, &serde_json::json!(["B-1"])).is_err());
}
