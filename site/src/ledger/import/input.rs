//! Reading an input: CSV (with what it plainly is instead when it is not
//! CSV), JSON rows, the header's columns and each record's line.

use super::*;

/// How far into a CSV input the import looks to see whether it is plainly
/// something else ([`NotCsv`]), in bytes: to the end of its first line, or
/// less once it shows itself JSON. A header is tens of bytes; the bound
/// keeps a file of one endless line from being held here (its first
/// 64 KiB are looked at; the whole input is read as CSV all the same).
pub const LOOK_AHEAD_BYTES: usize = 64 * 1024;

/// What a CSV input plainly is instead, seen in its first bytes: JSON
/// (sent or saved as CSV), or a file a spreadsheet saved with `;` (or
/// tabs) between its fields, as Excel does in locales whose decimal mark
/// is a comma. The import would only say the header names no column; this
/// says what to change. The command line and the endpoint both read it
/// here, as the import reads the header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotCsv {
    /// Its first byte past blanks (and a byte order mark) is `[` or `{`.
    Json,
    /// Its first line has no comma but `;` or tabs: the separator as told
    /// (`';'`, `tabs`).
    Separated(&'static str),
    /// It begins with UTF-16's byte order mark (Excel's "Unicode Text").
    Utf16,
}

impl NotCsv {
    /// What `head`, an input's first bytes (from [`look_ahead`]), plainly
    /// is if not CSV.
    pub fn find(head: &[u8]) -> Option<NotCsv> {
        if utf16(head) {
            return Some(NotCsv::Utf16);
        }
        let text = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head);
        let start = text.iter().position(|byte| !byte.is_ascii_whitespace())?;
        if matches!(text[start], b'[' | b'{') {
            return Some(NotCsv::Json);
        }
        let header = &text[..text
            .iter()
            .position(|byte| matches!(byte, b'\n' | b'\r'))
            .unwrap_or(text.len())];
        [(b';', "';'"), (b'\t', "tabs")]
            .into_iter()
            .find(|(byte, _)| !header.contains(&b',') && header.contains(byte))
            .map(|(_, told)| NotCsv::Separated(told))
    }

    /// Whether `head` holds all [`NotCsv::find`] reads: a byte past blanks,
    /// and the end of the first line unless that byte opens JSON.
    pub(super) fn seen_enough(head: &[u8]) -> bool {
        if utf16(head) {
            return true;
        }
        let text = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head);
        match text.iter().position(|byte| !byte.is_ascii_whitespace()) {
            None => false,
            Some(start) if matches!(text[start], b'[' | b'{') => true,
            Some(_) => text.iter().any(|byte| matches!(byte, b'\n' | b'\r')),
        }
    }

    /// What to change, for a file of `kind`.
    pub fn message(self, kind: Kind) -> String {
        let columns = kind.columns().join(",");
        match self {
            NotCsv::Json => format!(
                "the file is JSON, not CSV: save it as CSV with a header row ({columns}), \
                 or send the JSON array to PUT /v1/admin/reference/{} as application/json",
                kind.name()
            ),
            NotCsv::Separated(told) => format!(
                "the header is separated by {told}, not commas: save the file as CSV with commas \
                 ({columns})"
            ),
            NotCsv::Utf16 => "the file is UTF-16 (as Excel's \"Unicode Text\" saves it), \
                              not UTF-8: save it as \"CSV UTF-8 (Comma delimited)\" and \
                              import it again"
                .to_owned(),
        }
    }
}

/// Whether `head` begins with UTF-16's byte order mark, either way round.
pub(super) fn utf16(head: &[u8]) -> bool {
    head.starts_with(b"\xff\xfe") || head.starts_with(b"\xfe\xff")
}

/// The first bytes of `input`, as far as [`NotCsv::find`] needs them and
/// at most [`LOOK_AHEAD_BYTES`]; `input` goes on after them.
pub(super) fn look_ahead(input: &mut impl std::io::Read) -> std::io::Result<Vec<u8>> {
    let mut head = Vec::new();
    let mut chunk = [0; 8 * 1024];
    while head.len() < LOOK_AHEAD_BYTES && !NotCsv::seen_enough(&head) {
        let want = chunk.len().min(LOOK_AHEAD_BYTES - head.len());
        match input.read(&mut chunk[..want]) {
            Ok(0) => break,
            Ok(read) => head.extend_from_slice(&chunk[..read]),
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
    Ok(head)
}

/// The input's records as CSV records under a header, with their lines;
/// the errors found so far.
pub(super) struct Records<R> {
    pub(super) kind: Kind,
    pub(super) headers: csv::StringRecord,
    pub(super) input: Input<R>,
    pub(super) errors: Vec<LineError>,
}

pub(super) enum Input<R> {
    Csv(
        csv::StringRecordsIntoIter<LineCounting<Looked<R>>>,
        LineStarts,
    ),
    Json(std::iter::Enumerate<std::vec::IntoIter<JsonRow>>),
}

/// One element of a JSON import as its text gave it: the value, and the
/// first field an object named twice. A JSON object with a field twice
/// reads as its last value everywhere else (serde_json keeps the last), so
/// a row would be imported with one of two values silently; the element is
/// refused instead, naming the field.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonRow {
    pub value: serde_json::Value,
    pub repeated: Option<String>,
}

impl From<serde_json::Value> for JsonRow {
    fn from(value: serde_json::Value) -> JsonRow {
        JsonRow {
            value,
            repeated: None,
        }
    }
}

impl<'de> serde::Deserialize<'de> for JsonRow {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<JsonRow, D::Error> {
        deserializer.deserialize_any(JsonRowVisitor)
    }
}

/// Reads an object's fields one by one, keeping the first of a repeated
/// one's name; any other JSON value as serde_json reads it.
struct JsonRowVisitor;

impl<'de> serde::de::Visitor<'de> for JsonRowVisitor {
    type Value = JsonRow;

    fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
        formatter.write_str("a JSON value")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<JsonRow, A::Error> {
        let mut object = serde_json::Map::new();
        let mut repeated = None;
        while let Some(key) = map.next_key::<String>()? {
            let value: serde_json::Value = map.next_value()?;
            if object.contains_key(&key) {
                repeated.get_or_insert(key);
            } else {
                object.insert(key, value);
            }
        }
        Ok(JsonRow {
            value: serde_json::Value::Object(object),
            repeated,
        })
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<JsonRow, A::Error> {
        use serde::Deserialize;
        serde_json::Value::deserialize(serde::de::value::SeqAccessDeserializer::new(seq))
            .map(JsonRow::from)
    }

    fn visit_bool<E: serde::de::Error>(self, value: bool) -> Result<JsonRow, E> {
        Ok(serde_json::Value::from(value).into())
    }

    fn visit_i64<E: serde::de::Error>(self, value: i64) -> Result<JsonRow, E> {
        Ok(serde_json::Value::from(value).into())
    }

    fn visit_u64<E: serde::de::Error>(self, value: u64) -> Result<JsonRow, E> {
        Ok(serde_json::Value::from(value).into())
    }

    fn visit_f64<E: serde::de::Error>(self, value: f64) -> Result<JsonRow, E> {
        Ok(serde_json::Value::from(value).into())
    }

    fn visit_str<E: serde::de::Error>(self, value: &str) -> Result<JsonRow, E> {
        Ok(serde_json::Value::from(value).into())
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<JsonRow, E> {
        Ok(serde_json::Value::Null.into())
    }
}

/// A CSV input read on from its start after [`look_ahead`] read its first
/// bytes.
pub(super) type Looked<R> = std::io::Chain<std::io::Cursor<Vec<u8>>, R>;

impl<R: std::io::Read> Records<R> {
    pub(super) fn new(
        kind: Kind,
        file: &str,
        source: Source<R>,
    ) -> Result<Records<R>, ImportError> {
        let header_error = |message: String| ImportError::Invalid {
            file: file.to_owned(),
            errors: vec![LineError { line: 1, message }],
        };
        let (headers, input) = match source {
            Source::Csv(mut reader) => {
                let head = look_ahead(&mut reader)
                    .map_err(|err| header_error(csv::Error::from(err).to_string()))?;
                if let Some(found) = NotCsv::find(&head) {
                    return Err(ImportError::NotCsv {
                        file: file.to_owned(),
                        kind,
                        found,
                    });
                }
                let reader = std::io::Read::chain(std::io::Cursor::new(head), reader);
                let starts = LineStarts::default();
                // Flexible: a row with too few or too many fields is told
                // as such at its line, and the rows after
                // it are still checked.
                let mut reader = csv::ReaderBuilder::new()
                    .trim(csv::Trim::All)
                    .flexible(true)
                    .from_reader(LineCounting::new(reader, starts.clone()));
                let headers = reader
                    .headers()
                    .map_err(|err| header_error(csv_message(&err, None)))?
                    .clone();
                if headers.is_empty() {
                    return Err(header_error(format!(
                        "the file is empty: its first line names the columns ({}), then a row a line",
                        kind.columns().join(",")
                    )));
                }
                let headers = header_columns(kind, &headers).map_err(header_error)?;
                (headers, Input::Csv(reader.into_records(), starts))
            }
            Source::Json(values) => (
                csv::StringRecord::from(json_columns(kind).collect::<Vec<_>>()),
                Input::Json(values.into_iter().enumerate()),
            ),
        };
        Ok(Records {
            kind,
            headers,
            input,
            errors: Vec::new(),
        })
    }

    pub(super) fn error(&mut self, line: u64, message: String) {
        if self.errors.len() < MAX_IMPORT_ERRORS {
            self.errors.push(LineError { line, message });
        }
    }

    /// Reads up to [`PARSE_AHEAD_ROWS`] good rows into `ahead`; false once
    /// the input is done (or cannot be read on).
    pub(super) fn read_ahead(
        &mut self,
        checked: &mut Checked,
        ahead: &mut VecDeque<(u64, Row)>,
    ) -> bool {
        while ahead.len() < PARSE_AHEAD_ROWS {
            if self.errors.len() >= MAX_IMPORT_ERRORS {
                return false;
            }
            let (line, record) = match self.next_record() {
                None => return false,
                Some(Err(error)) => {
                    self.error(error.line, error.message);
                    // A CSV that cannot be split into records cannot be
                    // read on reliably; a JSON element stands alone.
                    if matches!(self.input, Input::Csv(..)) {
                        return false;
                    }
                    continue;
                }
                Some(Ok(record)) => record,
            };
            if record.iter().all(str::is_empty) {
                self.error(
                    line,
                    "the line is empty but for its commas (a spreadsheet's leftover row): \
                     delete it"
                        .to_owned(),
                );
                continue;
            }
            if record.len() != self.headers.len() {
                let why = match record.len() < self.headers.len() {
                    true => "a value is missing, or a double quote opened here is never closed",
                    false => "a value holding a comma is put in double quotes",
                };
                let message = format!(
                    "this line has {} field{} where the header names {} ({}): {why}",
                    record.len(),
                    if record.len() == 1 { "" } else { "s" },
                    self.headers.len(),
                    self.headers.iter().collect::<Vec<_>>().join(","),
                );
                self.error(line, message);
                continue;
            }
            match self.row(&record, line, checked) {
                Ok(row) => ahead.push_back((line, row)),
                Err(message) => self.error(line, message),
            }
        }
        true
    }

    pub(super) fn next_record(&mut self) -> Option<Result<(u64, csv::StringRecord), LineError>> {
        match &mut self.input {
            Input::Csv(records, starts) => Some(match records.next()? {
                Ok(record) => Ok((starts.line_at(record.position()), record)),
                Err(err) => Err(LineError {
                    line: starts.line_at(err.position()),
                    message: csv_message(&err, Some(&self.headers)),
                }),
            }),
            Input::Json(values) => {
                let (index, row) = values.next()?;
                let line = index as u64 + 1;
                let record = match row.repeated {
                    Some(field) => Err(format!(
                        "the field {field:?} is given twice: give each field once"
                    )),
                    None => json_record(self.kind, &row.value),
                };
                Some(
                    record
                        .map(|record| (line, record))
                        .map_err(|message| LineError { line, message }),
                )
            }
        }
    }

    pub(super) fn row(
        &self,
        record: &csv::StringRecord,
        line: u64,
        checked: &mut Checked,
    ) -> Result<Row, String> {
        match self.kind {
            Kind::Bins => {
                let row: BinRow = read(record, &self.headers)?;
                let bin = identifier(&row.bin, "bin")?;
                let zone = required(&row.zone, "zone")?;
                let location = required(&row.location, "location")?;
                checked.once(&format!("bin\0{bin}"), line, &format!("bin {bin:?}"))?;
                Ok(Row::Bin {
                    bin,
                    zone,
                    location,
                })
            }
            Kind::Units => {
                let row: UnitRow = read(record, &self.headers)?;
                let epc = crate::ident::canonical_epc(identifier(&row.epc, "epc")?);
                let code = optional_identifier(&row.code, "code")?;
                let sku = required(&row.sku, "sku")?;
                if UnitState::parse(&row.state).is_none() {
                    return Err(format!(
                        "state {:?} is not one of new, in_stock, dispatched, missing",
                        row.state
                    ));
                }
                let bin = optional_identifier(&row.bin, "bin")?;
                let gs1_named = UNIT_GS1_COLUMNS
                    .iter()
                    .any(|column| self.headers.iter().any(|header| header == *column));
                let gs1 = unit_gs1(&epc, &row, gs1_named)?;
                checked.once(&format!("epc\0{epc}"), line, &format!("epc {epc:?}"))?;
                if let Some(code) = &code {
                    checked.once(&format!("code\0{code}"), line, &format!("code {code:?}"))?;
                }
                if let Some((gtin, serial)) = gs1.gtin_serial() {
                    checked.once(
                        &format!("gs1\0{gtin}\0{serial}"),
                        line,
                        &format!("gtin {gtin} with serial {serial:?}"),
                    )?;
                }
                Ok(Row::Unit {
                    epc,
                    code,
                    sku,
                    state: row.state,
                    bin,
                    gs1,
                })
            }
            Kind::Grns => {
                let row: GrnRow = read(record, &self.headers)?;
                let grn = identifier(&row.grn, "grn")?;
                one_of(&row.qc, "qc", &grns::qc::ALL)?;
                let sku = required(&row.sku, "sku")?;
                let expected: u64 = row.expected.parse().map_err(|_| {
                    format!("expected {:?} is not a whole number of units", row.expected)
                })?;
                if expected > i64::MAX as u64 {
                    return Err("expected is out of range".into());
                }
                checked.agrees(&format!("grn\0{grn}"), &row.qc, line, "qc")?;
                checked.once(
                    &format!("line\0{grn}\0{sku}"),
                    line,
                    &format!("sku {sku:?} of GRN {grn:?}"),
                )?;
                Ok(Row::GrnLine {
                    grn,
                    qc: row.qc,
                    sku,
                    expected,
                })
            }
            Kind::Manifests => {
                let row: ManifestRow = read(record, &self.headers)?;
                let manifest = identifier(&row.manifest, "manifest")?;
                one_of(&row.state, "state", &manifests::states::ALL)?;
                let epc = crate::ident::canonical_epc(identifier(&row.epc, "epc")?);
                let sscc = match row.sscc.as_str() {
                    "" => None,
                    sscc => Some(labels::element_value("00", "sscc", sscc)?),
                };
                // A file without the column says nothing of pallets: the
                // units keep theirs (as units keep their GS1 keys).
                let keep_sscc = !self.headers.iter().any(|header| header == "sscc");
                checked.agrees(&format!("manifest\0{manifest}"), &row.state, line, "state")?;
                checked.once(
                    &format!("unit\0{manifest}\0{epc}"),
                    line,
                    &format!("epc {epc:?} of manifest {manifest:?}"),
                )?;
                Ok(Row::ManifestUnit {
                    manifest,
                    state: row.state,
                    epc,
                    sscc,
                    keep_sscc,
                })
            }
            Kind::Operators => {
                // A badge is scanned and a name is shown: both required,
                // and `field` refuses control characters and direction
                // controls in either.
                let row: OperatorRow = read(record, &self.headers)?;
                let badge = identifier(&row.badge, "badge")?;
                let name = required(&row.name, "name")?;
                let language = match self.headers.iter().any(|header| header == "language") {
                    false => OperatorLanguage::Keep,
                    true => OperatorLanguage::Set(language_tag(&row.language)?),
                };
                checked.once(
                    &format!("badge\0{badge}"),
                    line,
                    &format!("badge {badge:?}"),
                )?;
                Ok(Row::Operator {
                    badge,
                    name,
                    language,
                })
            }
            Kind::Skus => {
                let row: SkuRow = read(record, &self.headers)?;
                let sku = required(&row.sku, "sku")?;
                let gtin = labels::gtin(&required(&row.gtin, "gtin")?)?;
                checked.once(&format!("sku\0{sku}"), line, &format!("sku {sku:?}"))?;
                checked.once(&format!("gtin\0{gtin}"), line, &format!("gtin {gtin}"))?;
                Ok(Row::Sku { sku, gtin })
            }
        }
    }
}

/// An operator's `language`: empty for none, else a well-formed BCP 47
/// tag (language, script, region, variants, extensions, as ICU reads
/// them), kept in its canonical case (`pt-br` is `pt-BR`).
pub(super) fn language_tag(value: &str) -> Result<Option<String>, String> {
    if value.is_empty() {
        return Ok(None);
    }
    if value.len() > MAX_LANGUAGE_TAG_BYTES {
        return Err(format!(
            "language {value:?} is longer than {MAX_LANGUAGE_TAG_BYTES} bytes"
        ));
    }
    icu_locale_core::Locale::try_from_str(value)
        .map(|locale| Some(locale.to_string()))
        .map_err(|err| {
            // `en_US` is how POSIX locales and spreadsheets write it.
            let hint = match value.contains('_') {
                true => format!(": write it with hyphens, {:?}", value.replace('_', "-")),
                false => String::new(),
            };
            format!("language {value:?} is not a BCP 47 language tag ({err}){hint}")
        })
}

/// The longest `language` an operator row may give, in bytes: a tag with
/// a language, script, region and a variant is under 20, and one with
/// Unicode extensions (`de-DE-u-co-phonebk`) under 40; a longer one is
/// a wrong column, not a language.
pub(super) const MAX_LANGUAGE_TAG_BYTES: usize = 64;

/// A unit row's GS1 keys: those its GS1 columns give (`named`: the file
/// has such columns), with the GTIN and serial its EPC encodes when it is
/// an SGTIN, which the columns, if given, must agree with.
fn unit_gs1(epc: &str, row: &UnitRow, named: bool) -> Result<UnitGs1, String> {
    let given = |value: &str, check: &dyn Fn(&str) -> Result<String, String>| match value {
        "" => Ok(None),
        value => check(value).map(Some),
    };
    let gtin = given(&row.gtin, &labels::gtin)?;
    let serial = given(&row.serial, &|value| {
        labels::element_value("21", "serial", value)
    })?;
    let lot = given(&row.lot, &|value| labels::element_value("10", "lot", value))?;
    let expiry = given(&row.expiry, &labels::expiry)?;
    let encoded = labels::sgtin_keys(epc);
    if let Some((epc_gtin, epc_serial)) = &encoded {
        if gtin.as_ref().is_some_and(|gtin| gtin != epc_gtin) {
            return Err(format!(
                "gtin {} differs from {epc_gtin}, the gtin epc {epc} encodes",
                row.gtin
            ));
        }
        if serial.as_ref().is_some_and(|serial| serial != epc_serial) {
            return Err(format!(
                "serial {:?} differs from {epc_serial:?}, the serial epc {epc} encodes",
                row.serial
            ));
        }
    }
    if gtin.is_some() != serial.is_some() && encoded.is_none() {
        return Err("gtin and serial go together: a unit is named by both or by neither".into());
    }
    let (gtin, serial) = match encoded {
        Some((gtin, serial)) => (Some(gtin), Some(serial)),
        None => (gtin, serial),
    };
    Ok(match named {
        true => UnitGs1::Set(Gs1Keys {
            gtin,
            serial,
            lot,
            expiry,
        }),
        false => match (gtin, serial) {
            (Some(gtin), Some(serial)) => UnitGs1::Encoded { gtin, serial },
            _ => UnitGs1::Leave,
        },
    })
}

/// What a CSV input that cannot be read is told at its line. The csv
/// crate's own words, except for text that is not UTF-8: a spreadsheet's
/// plain "CSV" (Excel's on Windows) is Windows-1252, where "é" is the one
/// byte 0xE9, and the crate's "invalid utf-8 in field 1 near byte index 3"
/// says neither that the whole file is in another encoding nor what to
/// do. The header and every row are read here, for the command line and
/// the endpoint alike; `headers` names the field of a row.
pub(super) fn csv_message(err: &csv::Error, headers: Option<&csv::StringRecord>) -> String {
    let csv::ErrorKind::Utf8 { err: utf8, .. } = err.kind() else {
        return err.to_string();
    };
    let field = match headers.and_then(|headers| headers.get(utf8.field())) {
        Some(column) => format!("the {column:?} field of this line"),
        None if headers.is_none() => format!("field {} of the header", utf8.field() + 1),
        None => format!("field {} of this line", utf8.field() + 1),
    };
    format!(
        "the file is not UTF-8: {field} holds a byte that is not UTF-8 text (as a \
         spreadsheet's plain CSV writes \"é\" in Windows-1252); save the file as UTF-8 \
         (in Excel, \"CSV UTF-8 (Comma delimited)\") and import it again"
    )
}

/// Where the lines of a CSV input that hold something begin, as its
/// reader passes them to the CSV parser: `(byte offset, line from 1)`, the
/// lines an editor shows. The parser's own line count does not serve: it
/// counts `\n` alone, and gives a row after a `\r\n` the line before it
/// (two rows one line in a file that mixes line ends, every row one line
/// early in a CRLF file). Only the lines in the parser's buffer are kept.
#[derive(Clone, Default)]
pub(super) struct LineStarts(std::rc::Rc<std::cell::RefCell<VecDeque<(u64, u64)>>>);

impl LineStarts {
    /// The line of the record that the parser began reading at
    /// `position`: the first line holding something from there on (the
    /// parser begins a record right after the last one's first line-end
    /// byte, and skips empty lines).
    pub(super) fn line_at(&self, position: Option<&csv::Position>) -> u64 {
        let Some(position) = position else { return 0 };
        let mut starts = self.0.borrow_mut();
        while starts
            .front()
            .is_some_and(|(offset, _)| *offset < position.byte())
        {
            starts.pop_front();
        }
        starts
            .front()
            .map_or_else(|| position.line(), |(_, line)| *line)
    }
}

/// A reader that notes in [`LineStarts`] where each line that holds
/// something begins. A line ends at `\n`, `\r\n` or a lone `\r`, as the
/// CSV parser ends a record.
pub(super) struct LineCounting<R> {
    pub(super) inner: R,
    pub(super) starts: LineStarts,
    pub(super) offset: u64,
    pub(super) line: u64,
    pub(super) at_line_start: bool,
    pub(super) after_cr: bool,
}

impl<R> LineCounting<R> {
    pub(super) fn new(inner: R, starts: LineStarts) -> LineCounting<R> {
        LineCounting {
            inner,
            starts,
            offset: 0,
            line: 1,
            at_line_start: true,
            after_cr: false,
        }
    }
}

impl<R: std::io::Read> std::io::Read for LineCounting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let read = self.inner.read(buf)?;
        let mut starts = self.starts.0.borrow_mut();
        for &byte in &buf[..read] {
            if self.after_cr && byte != b'\n' {
                // A lone `\r` ended the line.
                self.line += 1;
                self.at_line_start = true;
            }
            self.after_cr = byte == b'\r';
            match byte {
                b'\n' => {
                    self.line += 1;
                    self.at_line_start = true;
                }
                b'\r' => {}
                _ if self.at_line_start => {
                    starts.push_back((self.offset, self.line));
                    self.at_line_start = false;
                }
                _ => {}
            }
            self.offset += 1;
        }
        Ok(read)
    }
}

/// Other columns a refused header's message names as the likely
/// misspelling of a missing one: a few, so a file whose line ends were
/// lost (one line of thousands of fields) is told in a line.
pub(super) const MAX_NAMED_COLUMNS: usize = 5;

/// A CSV header as the rows are read under it: each name in lower case
/// (a spreadsheet's `Bin` is `bin`), every column of `kind` named once.
/// Columns the kind does not have are left alone (an export from another
/// system carries more), but named when a column is missing, as the
/// likely misspelling of it.
pub(super) fn header_columns(
    kind: Kind,
    headers: &csv::StringRecord,
) -> Result<csv::StringRecord, String> {
    let named: csv::StringRecord = headers.iter().map(str::to_lowercase).collect();
    let expected = kind.columns().join(",");
    for column in kind.columns() {
        match named.iter().filter(|name| name == column).count() {
            1 => {}
            0 => {
                let mut others: Vec<String> = named
                    .iter()
                    .filter(|name| {
                        !name.is_empty()
                            && !kind.columns().contains(name)
                            && !kind.optional_columns().contains(name)
                    })
                    .map(|name| format!("{name:?}"))
                    .collect();
                let count = others.len();
                if count > MAX_NAMED_COLUMNS {
                    others.truncate(MAX_NAMED_COLUMNS);
                    others.push(format!("and {} more", count - MAX_NAMED_COLUMNS));
                }
                let besides = match count {
                    0 => String::new(),
                    1 => format!("; it names {}, which is not one", others[0]),
                    _ => format!("; it names {}, which are not", others.join(", ")),
                };
                return Err(format!(
                    "the header names no {column:?} column{besides} (expected {expected})"
                ));
            }
            _ => {
                return Err(format!(
                    "the header names the {column:?} column twice (expected {expected})"
                ))
            }
        }
    }
    for column in kind.optional_columns() {
        if named.iter().filter(|name| name == column).count() > 1 {
            return Err(format!(
                "the header names the {column:?} column twice (expected {expected})"
            ));
        }
    }
    Ok(named)
}

/// A JSON array element as a record in [`Kind::columns`] order: strings
/// as they are, numbers and booleans as their text, null or absent empty.
/// A field the kind does not have is an error: a CSV header must name
/// every column, but an element leaves an optional field out by not naming
/// it, so a misspelt one (`"Bin"` for `"bin"`) would be dropped and the row
/// imported without it.
pub(super) fn json_record(
    kind: Kind,
    value: &serde_json::Value,
) -> Result<csv::StringRecord, String> {
    let Some(object) = value.as_object() else {
        return Err(format!(
            "each element is an object with the fields {}",
            kind.columns().join(", ")
        ));
    };
    let unknown: Vec<String> = object
        .keys()
        .filter(|field| !json_columns(kind).any(|column| column == field.as_str()))
        .map(|field| format!("{field:?}"))
        .collect();
    if !unknown.is_empty() {
        return Err(format!(
            "unknown field{} {}: the fields of {} are {}",
            if unknown.len() == 1 { "" } else { "s" },
            unknown.join(", "),
            kind.name(),
            json_columns(kind).collect::<Vec<_>>().join(", ")
        ));
    }
    let mut record = csv::StringRecord::new();
    for column in json_columns(kind) {
        match object.get(column) {
            None | Some(serde_json::Value::Null) => record.push_field(""),
            Some(serde_json::Value::String(text)) => record.push_field(text.trim()),
            Some(serde_json::Value::Number(number)) => record.push_field(&number.to_string()),
            Some(serde_json::Value::Bool(flag)) => record.push_field(&flag.to_string()),
            Some(_) => return Err(format!("{column} is not a string or a number")),
        }
    }
    Ok(record)
}

/// The fields of a JSON element of `kind`: its columns, then its optional
/// ones. An element that leaves an optional field out gives it as null.
fn json_columns(kind: Kind) -> impl Iterator<Item = &'static str> {
    kind.columns()
        .iter()
        .chain(kind.optional_columns())
        .copied()
}

pub(super) fn read<T: serde::de::DeserializeOwned>(
    record: &csv::StringRecord,
    headers: &csv::StringRecord,
) -> Result<T, String> {
    record
        .deserialize(Some(headers))
        .map_err(|err| match err.kind() {
            csv::ErrorKind::Deserialize { err, .. } => err.to_string(),
            _ => err.to_string(),
        })
}

// The rows as a file or a JSON element gives them: the fields of
// [`Kind::columns`], each as text (a JSON number or boolean as its text).
// Their schemas are those of `PUT /v1/admin/reference/{kind}`'s JSON
// elements in the OpenAPI document.

/// A bin: `bin` (its label), the `zone` it is in and the zone's `location`.
#[derive(Deserialize, utoipa::ToSchema)]
#[schema(as = ImportBin)]
pub(crate) struct BinRow {
    pub(super) bin: String,
    pub(super) zone: String,
    pub(super) location: String,
}

/// A unit: its `epc`, an optional `code` (barcode), its `sku`, its `state`
/// and, when in stock, its `bin`; optionally the GS1 keys of its labels:
/// `gtin` (8, 12, 13 or 14 digits) and `serial` together, `lot`, `expiry`
/// (`YYYY-MM-DD`). For an SGTIN-96 EPC the GTIN and serial are the ones it
/// encodes, and any given must agree with them.
#[derive(Deserialize, utoipa::ToSchema)]
#[schema(as = ImportUnit)]
pub(crate) struct UnitRow {
    pub(super) epc: String,
    #[schema(required = false, nullable)]
    pub(super) code: String,
    pub(super) sku: String,
    pub(super) state: String,
    #[schema(required = false, nullable)]
    pub(super) bin: String,
    #[serde(default)]
    #[schema(required = false, nullable)]
    pub(super) gtin: String,
    #[serde(default)]
    #[schema(required = false, nullable)]
    pub(super) serial: String,
    #[serde(default)]
    #[schema(required = false, nullable)]
    pub(super) lot: String,
    #[serde(default)]
    #[schema(required = false, nullable, format = Date)]
    pub(super) expiry: String,
}

/// A GRN line: the GRN, its QC disposition (the same on each of its
/// lines), a SKU and the units expected of it.
#[derive(Deserialize, utoipa::ToSchema)]
#[schema(as = ImportGrnLine)]
pub(crate) struct GrnRow {
    pub(super) grn: String,
    pub(super) qc: String,
    pub(super) sku: String,
    /// A whole number of units (a number, or its text).
    #[schema(value_type = u64)]
    pub(super) expected: String,
}

/// An operator: the `badge` that opens sessions, the `name` shown and,
/// optionally, the `language` the operator reads (a BCP 47 tag: `de`,
/// `pl-PL`, `ar`; empty for none). A file without the column leaves the
/// operators' languages as they are.
#[derive(Deserialize, utoipa::ToSchema)]
#[schema(as = ImportOperator)]
pub(crate) struct OperatorRow {
    pub(super) badge: String,
    pub(super) name: String,
    #[serde(default)]
    #[schema(required = false, nullable, example = "de")]
    pub(super) language: String,
}

/// A unit of a manifest: the manifest, its state (the same on each of its
/// units), the unit's EPC and, optionally, its pallet's SSCC.
#[derive(Deserialize, utoipa::ToSchema)]
#[schema(as = ImportManifestUnit)]
pub(crate) struct ManifestRow {
    pub(super) manifest: String,
    pub(super) state: String,
    pub(super) epc: String,
    /// The SSCC (18 digits) of the pallet the unit ships on: one scan of
    /// the pallet's label verifies its units.
    #[serde(default)]
    #[schema(required = false, nullable)]
    pub(super) sscc: String,
}

/// A SKU and its GTIN (8, 12, 13 or 14 digits; kept as 14).
#[derive(Deserialize, utoipa::ToSchema)]
#[schema(as = ImportSku)]
pub(crate) struct SkuRow {
    pub(super) sku: String,
    pub(super) gtin: String,
}
