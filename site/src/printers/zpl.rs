//! ZPL II as the site speaks it to a label printer, sans-IO: the label
//! formats it sends (a bin label, a unit label, with or without writing
//! the tag) and the parsers of what comes back (the host status's three
//! strings, the host verification of a tag read back). Nothing here
//! touches a socket; `link.rs` moves the bytes. The wire facts are written
//! down in `docs/printers.md`.

pub use crate::limits::{
    MAX_COPIES, MAX_EPC_HEX_CHARS, MAX_LABEL_FIELD_CHARS as MAX_FIELD_CHARS, MAX_STATUS_BYTES,
};

/// Start of a host-status string.
pub const STX: u8 = 0x02;
/// End of a host-status string, followed by CR LF.
pub const ETX: u8 = 0x03;

/// Asks for the host status: answered at once, ahead of any format still
/// queued, with three STX … ETX CR LF strings.
pub const HOST_STATUS_QUERY: &[u8] = b"~HS";

/// The field number the tag's read-back is kept in (`^FN`) and returned
/// from (`^HV`).
const READ_BACK_FIELD: u32 = 1;

/// What comes after the read-back in the verification answer.
pub const VERIFY_TERMINATOR: u8 = b';';

/// A label the site prints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Label {
    /// A bin: its name in large text and as Code 128.
    Bin { bin: String },
    /// A unit: EPC, SKU and serial, the serial as Code 128, and for a
    /// unit with a GTIN and GS1 serial its GS1-128 ((01) and (21)); with
    /// `encode` the EPC is written to the label's tag and read back to the
    /// host.
    Unit {
        epc: String,
        sku: Option<String>,
        serial: Option<String>,
        gs1: Option<Gs1Key>,
        encode: bool,
    },
}

/// The GS1 key a unit label's GS1-128 carries: the GTIN (14 digits) and
/// the serial that name the unit together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gs1Key {
    pub gtin: String,
    pub serial: String,
}

impl Gs1Key {
    /// The key of a unit with both a GTIN and a serial.
    pub fn of(keys: &crate::ledger::units::Gs1Keys) -> Option<Gs1Key> {
        Some(Gs1Key {
            gtin: keys.gtin.clone()?,
            serial: keys.serial.clone()?,
        })
    }
}

/// The digits of a GTIN-14.
const GTIN_DIGITS: usize = 14;
/// The most characters of a GS1 serial, (21).
const GS1_SERIAL_MAX_CHARS: usize = 20;

/// Why a label cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LabelError {
    #[error("{field} is empty or longer than {MAX_FIELD_CHARS} characters")]
    FieldLength { field: &'static str },
    #[error("{field} holds a control character")]
    Control { field: &'static str },
    #[error(
        "epc must be hex, a whole number of 16-bit words, at most {MAX_EPC_HEX_CHARS} characters"
    )]
    Epc,
    #[error("copies is 1 to {MAX_COPIES}")]
    Copies,
    #[error("an encoded label is printed once: the tag's EPC must stay unique")]
    EncodeCopies,
    #[error("a job id is letters, digits and '-' only")]
    JobId,
    #[error("a gs1 label takes a gtin of 14 digits and a serial of 1 to 20 printable characters")]
    Gs1,
}

/// The EPC as the site writes it: upper-case hex, a whole number of words.
pub fn normalize_epc(epc: &str) -> Result<String, LabelError> {
    let ok = !epc.is_empty()
        && epc.len() <= MAX_EPC_HEX_CHARS
        && epc.len() % 4 == 0
        && epc.bytes().all(|b| b.is_ascii_hexdigit());
    if ok {
        Ok(epc.to_ascii_uppercase())
    } else {
        Err(LabelError::Epc)
    }
}

fn check_text(field: &'static str, text: &str) -> Result<(), LabelError> {
    if text.is_empty() || text.chars().count() > MAX_FIELD_CHARS {
        return Err(LabelError::FieldLength { field });
    }
    if text.chars().any(char::is_control) {
        return Err(LabelError::Control { field });
    }
    Ok(())
}

/// Field data with the three characters ZPL reads inside it escaped as
/// `^FH` hex (`_5E`, `_7E`, `_5F`): a `^` or `~` in a bin name must print,
/// not start a command.
fn field_data(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '^' => out.push_str("_5E"),
            '~' => out.push_str("_7E"),
            '_' => out.push_str("_5F"),
            c => out.push(c),
        }
    }
    out
}

/// One format (`^XA … ^XZ`) for `label`, `copies` times, carrying
/// `job_id` in a comment so a capture of the wire names its job. Lines end
/// in CR LF; the printer ignores them between commands.
pub fn format(job_id: &str, label: &Label, copies: u32) -> Result<String, LabelError> {
    if job_id.is_empty()
        || !job_id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-')
    {
        return Err(LabelError::JobId);
    }
    if copies == 0 || copies > MAX_COPIES {
        return Err(LabelError::Copies);
    }
    let mut zpl = String::new();
    let mut line = |text: &str| {
        zpl.push_str(text);
        zpl.push_str("\r\n");
    };
    line("^XA");
    line(&format!("^FXstockhop job {job_id}^FS"));
    line("^CI28");
    line("^PW812");
    match label {
        Label::Bin { bin } => {
            check_text("bin", bin)?;
            let bin = field_data(bin);
            line(&format!("^FO40,30^A0N,60,60^FH^FD{bin}^FS"));
            line(&format!("^FO40,110^BY3^BCN,160,Y,N,N^FH^FD{bin}^FS"));
        }
        Label::Unit {
            epc,
            sku,
            serial,
            gs1,
            encode,
        } => {
            let epc = normalize_epc(epc)?;
            if *encode {
                if copies != 1 {
                    return Err(LabelError::EncodeCopies);
                }
                let header = verify_header(job_id);
                line(&format!("^RFW,H^FD{epc}^FS"));
                line(&format!("^RFR,H^FN{READ_BACK_FIELD}^FS"));
                line(&format!(
                    "^HV{READ_BACK_FIELD},{},{header},{},L^FS",
                    epc.len(),
                    VERIFY_TERMINATOR as char
                ));
            }
            line(&format!("^FO40,30^A0N,34,34^FDEPC {epc}^FS"));
            if let Some(sku) = sku {
                check_text("sku", sku)?;
                line(&format!(
                    "^FO40,80^A0N,34,34^FH^FDSKU {}^FS",
                    field_data(sku)
                ));
            }
            if let Some(serial) = serial {
                check_text("serial", serial)?;
                let serial = field_data(serial);
                line(&format!("^FO40,130^A0N,34,34^FH^FDSN {serial}^FS"));
                line(&format!("^FO40,180^BY2^BCN,120,Y,N,N^FH^FD{serial}^FS"));
            }
            if let Some(key) = gs1 {
                let (data, shown) = gs1_128(key)?;
                line(&format!("^FO40,340^BY2^BCN,120,N,N,N,A^FH^FD{data}^FS"));
                line(&format!("^FO40,470^A0N,30,30^FH^FD{shown}^FS"));
            }
        }
    }
    line(&format!("^PQ{copies}"));
    line("^XZ");
    Ok(zpl)
}

/// A unit's GS1-128 as `^BC` field data in automatic mode, and its
/// bracketed human form: a start in subset C with FNC1 (`>;>8`), which
/// makes a Code 128 a GS1-128, then (01) and (21). The serial is the last
/// element, so no FNC1 ends it. A `>` in the serial is written `><`, as
/// `^BC` reads `>` as the start of an invocation code.
fn gs1_128(key: &Gs1Key) -> Result<(String, String), LabelError> {
    let gtin_holds = key.gtin.len() == GTIN_DIGITS && key.gtin.bytes().all(|b| b.is_ascii_digit());
    let serial_holds = !key.serial.is_empty()
        && key.serial.chars().count() <= GS1_SERIAL_MAX_CHARS
        && key.serial.chars().all(|c| c.is_ascii_graphic());
    if !gtin_holds || !serial_holds {
        return Err(LabelError::Gs1);
    }
    let serial = field_data(&key.serial);
    Ok((
        format!(">;>801{}21{}", key.gtin, serial.replace('>', "><")),
        format!("(01){}(21){serial}", key.gtin),
    ))
}

/// The header the printer puts before a job's read-back: the job id in
/// upper case (the header is upper-case ASCII) and a colon.
pub fn verify_header(job_id: &str) -> String {
    format!("{}:", job_id.to_ascii_uppercase())
}

/// What the three host-status strings say that the site acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct HostStatus {
    /// String 1, field 2.
    pub paper_out: bool,
    /// String 1, field 3.
    pub paused: bool,
    /// String 1, field 5: formats received and not yet printed.
    pub formats_in_buffer: u32,
    /// String 2, field 3: the print head is up (open).
    pub head_open: bool,
    /// String 2, field 4.
    pub ribbon_out: bool,
    /// String 2, field 9: labels of the current batch still to print.
    pub labels_remaining: u32,
}

impl HostStatus {
    /// Whether a job sent now would wait in the printer rather than print:
    /// the site keeps such jobs itself until the fault clears.
    pub fn holds_jobs(&self) -> bool {
        self.paper_out || self.paused || self.head_open || self.ribbon_out
    }
}

/// A reply the printer sent that the site cannot read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplyError {
    #[error("host status string {string}: {why}")]
    Status { string: usize, why: String },
    #[error("host status longer than {MAX_STATUS_BYTES} bytes")]
    StatusTooLong,
    #[error("verification for another job: {0:?}")]
    OtherJob(String),
    #[error("verification answer longer than expected")]
    VerifyTooLong,
}

/// Field counts of the three strings.
const STRING_FIELDS: [usize; 3] = [12, 11, 2];

/// Reads the host status from the front of `buf`: `Ok(None)` while the
/// three strings are not all there, else the status and the bytes they
/// took.
pub fn parse_host_status(buf: &[u8]) -> Result<Option<(HostStatus, usize)>, ReplyError> {
    let mut at = 0;
    let mut strings: Vec<Vec<&str>> = Vec::with_capacity(3);
    for (index, fields) in STRING_FIELDS.iter().enumerate() {
        let number = index + 1;
        let bad = |why: &str| ReplyError::Status {
            string: number,
            why: why.to_owned(),
        };
        let Some(&first) = buf.get(at) else {
            return incomplete(buf);
        };
        if first != STX {
            return Err(bad("does not start with STX"));
        }
        let Some(end) = buf[at..].iter().position(|&b| b == ETX) else {
            return incomplete(buf);
        };
        let end = at + end;
        match buf.get(end + 1..end + 3) {
            None | Some([b'\r']) => return incomplete(buf),
            Some(b"\r\n") => {}
            Some(_) => return Err(bad("ETX is not followed by CR LF")),
        }
        let text = std::str::from_utf8(&buf[at + 1..end]).map_err(|_| bad("is not ASCII"))?;
        let parts: Vec<&str> = text.split(',').collect();
        if parts.len() != *fields {
            return Err(bad(&format!("has {} fields, not {fields}", parts.len())));
        }
        strings.push(parts);
        at = end + 3;
    }
    let flag = |string: usize, field: usize| -> Result<bool, ReplyError> {
        match strings[string - 1][field - 1] {
            "0" => Ok(false),
            "1" => Ok(true),
            other => Err(ReplyError::Status {
                string,
                why: format!("field {field} is {other:?}, not a flag"),
            }),
        }
    };
    let number = |string: usize, field: usize| -> Result<u32, ReplyError> {
        let text = strings[string - 1][field - 1];
        text.parse().map_err(|_| ReplyError::Status {
            string,
            why: format!("field {field} is {text:?}, not a number"),
        })
    };
    let status = HostStatus {
        paper_out: flag(1, 2)?,
        paused: flag(1, 3)?,
        formats_in_buffer: number(1, 5)?,
        head_open: flag(2, 3)?,
        ribbon_out: flag(2, 4)?,
        labels_remaining: number(2, 9)?,
    };
    Ok(Some((status, at)))
}

fn incomplete<T>(buf: &[u8]) -> Result<Option<T>, ReplyError> {
    if buf.len() > MAX_STATUS_BYTES {
        Err(ReplyError::StatusTooLong)
    } else {
        Ok(None)
    }
}

/// What a tag read back as, against the EPC written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadBack {
    /// The tag holds the EPC.
    Matches,
    /// The tag answered with other data.
    Mismatch(String),
    /// Nothing readable came back: no tag, or one the printer voided.
    Void,
}

impl ReadBack {
    pub fn judge(written: &str, read: &str) -> ReadBack {
        let read = read.trim();
        if read.is_empty() || read.bytes().all(|b| b == b'0') {
            ReadBack::Void
        } else if read.eq_ignore_ascii_case(written) {
            ReadBack::Matches
        } else {
            ReadBack::Mismatch(read.to_owned())
        }
    }
}

/// Reads job `job_id`'s verification from the front of `buf` (its header,
/// the data read, the terminator): `Ok(None)` until the terminator is in.
pub fn parse_verification(buf: &[u8], job_id: &str) -> Result<Option<(String, usize)>, ReplyError> {
    let header = verify_header(job_id);
    let Some(end) = buf.iter().position(|&b| b == VERIFY_TERMINATOR) else {
        return if buf.len() > header.len() + MAX_EPC_HEX_CHARS {
            Err(ReplyError::VerifyTooLong)
        } else {
            Ok(None)
        };
    };
    let text = String::from_utf8_lossy(&buf[..end]);
    let Some(data) = text.strip_prefix(&header) else {
        return Err(ReplyError::OtherJob(text.into_owned()));
    };
    Ok(Some((data.to_owned(), end + 1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(s1: &str, s2: &str) -> Vec<u8> {
        let mut out = Vec::new();
        for s in [s1, s2, "1234,0"] {
            out.push(STX);
            out.extend_from_slice(s.as_bytes());
            out.extend_from_slice(&[ETX, b'\r', b'\n']);
        }
        out
    }

    #[test]
    fn host_status_reads_its_flags_from_their_fields() {
        let bytes = status(
            "030,1,0,1245,002,0,0,0,000,0,0,0",
            "001,0,1,1,1,2,4,0,00000003,1,000",
        );
        let (got, used) = parse_host_status(&bytes).unwrap().unwrap();
        assert_eq!(used, bytes.len());
        assert_eq!(
            got,
            HostStatus {
                paper_out: true,
                paused: false,
                formats_in_buffer: 2,
                head_open: true,
                ribbon_out: true,
                labels_remaining: 3,
            }
        );
        assert!(got.holds_jobs());
    }

    #[test]
    fn host_status_waits_for_all_three_strings_and_refuses_garbage() {
        let bytes = status(
            "030,0,1,1245,000,0,0,0,000,0,0,0",
            "001,0,0,0,1,2,4,0,00000000,1,000",
        );
        for cut in 0..bytes.len() {
            assert_eq!(parse_host_status(&bytes[..cut]), Ok(None), "cut at {cut}");
        }
        let (got, _) = parse_host_status(&bytes).unwrap().unwrap();
        assert!(got.paused && !got.paper_out);
        assert!(parse_host_status(b"HELLO").is_err());
        let short = status("030,0,1", "001");
        assert!(matches!(
            parse_host_status(&short),
            Err(ReplyError::Status { string: 1, .. })
        ));
        assert_eq!(
            parse_host_status(&[STX; MAX_STATUS_BYTES + 1]),
            Err(ReplyError::StatusTooLong)
        );
    }

    #[test]
    fn a_verification_names_its_job_and_is_judged_against_the_epc() {
        let answer = b"JOB-1:E28068940000400177906E71;rest";
        let (data, used) = parse_verification(answer, "job-1").unwrap().unwrap();
        assert_eq!((data.as_str(), used), ("E28068940000400177906E71", 31));
        assert_eq!(parse_verification(b"JOB-1:E2", "job-1"), Ok(None));
        assert!(matches!(
            parse_verification(b"JOB-2:E2;", "job-1"),
            Err(ReplyError::OtherJob(_))
        ));
        assert_eq!(ReadBack::judge("E280", "e280"), ReadBack::Matches);
        assert_eq!(ReadBack::judge("E280", "0000"), ReadBack::Void);
        assert_eq!(ReadBack::judge("E280", ""), ReadBack::Void);
        assert_eq!(
            ReadBack::judge("E280", "E281"),
            ReadBack::Mismatch("E281".into())
        );
    }

    #[test]
    fn field_data_cannot_start_a_command() {
        let zpl = format(
            "j1",
            &Label::Bin {
                bin: "A^B~C_D".into(),
            },
            1,
        )
        .unwrap();
        assert!(zpl.contains("^FH^FDA_5EB_7EC_5FD^FS"), "{zpl}");
        assert_eq!(
            format("j1", &Label::Bin { bin: "".into() }, 1),
            Err(LabelError::FieldLength { field: "bin" })
        );
        assert_eq!(
            format("j^1", &Label::Bin { bin: "B".into() }, 1),
            Err(LabelError::JobId)
        );
    }

    #[test]
    fn an_encoded_label_is_one_copy_of_a_hex_epc() {
        let unit = |epc: &str| Label::Unit {
            epc: epc.into(),
            sku: None,
            serial: None,
            gs1: None,
            encode: true,
        };
        assert_eq!(format("j", &unit("E280"), 2), Err(LabelError::EncodeCopies));
        assert_eq!(format("j", &unit("E28"), 1), Err(LabelError::Epc));
        assert_eq!(format("j", &unit("G280"), 1), Err(LabelError::Epc));
        assert_eq!(format("j", &unit("E280"), 0), Err(LabelError::Copies));
        assert!(format("j", &unit("e280"), 1)
            .unwrap()
            .contains("^RFW,H^FDE280^FS"));
    }

    #[test]
    fn a_unit_with_a_gtin_and_serial_carries_its_gs1_128() {
        let unit = |gtin: &str, serial: &str| Label::Unit {
            epc: "E280".into(),
            sku: None,
            serial: None,
            gs1: Some(Gs1Key {
                gtin: gtin.into(),
                serial: serial.into(),
            }),
            encode: false,
        };
        let zpl = format("j", &unit("09521101530001", "AB>7_1"), 1).unwrap();
        assert!(
            zpl.contains("^BCN,120,N,N,N,A^FH^FD>;>8010952110153000121AB><7_5F1^FS"),
            "{zpl}"
        );
        assert!(
            zpl.contains("^FD(01)09521101530001(21)AB>7_5F1^FS"),
            "{zpl}"
        );
        assert_eq!(
            format("j", &unit("0952110153000", "7"), 1),
            Err(LabelError::Gs1)
        );
        assert_eq!(
            format("j", &unit("09521101530001", "123456789012345678901"), 1),
            Err(LabelError::Gs1)
        );
        let without = Label::Unit {
            epc: "E280".into(),
            sku: None,
            serial: None,
            gs1: None,
            encode: false,
        };
        assert!(!format("j", &without, 1).unwrap().contains(">;>8"));
    }
}
