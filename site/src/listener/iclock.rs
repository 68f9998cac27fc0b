//! ZKTeco PUSH ("iclock" / ADMS): what a terminal's request means and the
//! exact bytes the listener answers, on byte slices with no I/O.
//!
//! The terminal starts every exchange; the listener routes it ([`route`]),
//! builds the handshake options ([`handshake_body`]), reads attendance
//! uploads line by line ([`parse_attlog`]) and formats the `OK:<n>` reply.
//! Nothing here panics on what a terminal sends: bytes that are not UTF-8
//! are kept as they came, and a line that cannot be read is reported with
//! its reason so it is stored raw instead of being lost.

use sha2::{Digest, Sha256};
use stockhop::time::UnixMs;

use super::http_message::{query_param, Method};
use super::zone::UtcOffset;

/// The longest serial taken from a terminal (real ones are 13–20 characters);
/// it bounds what an unauthenticated request can make the listener store.
pub const MAX_SERIAL_CHARS: usize = 64;
/// The longest PIN taken (the firmware allows 9–24 digits).
pub const MAX_PIN_BYTES: usize = 64;

/// What a terminal asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// `GET /iclock/cdata?SN=…&options=all` — the handshake; `legacy` when
    /// the terminal sent no `pushver` (old `Stamp=` names).
    Handshake { serial: String, legacy: bool },
    /// `POST /iclock/cdata?SN=…&table=…`.
    Upload { serial: String, table: Table },
    /// `GET /iclock/getrequest?SN=…` — the heartbeat poll.
    GetRequest { serial: String },
    /// `GET /iclock/ping?SN=…` (protocol 2.4+).
    Ping { serial: String },
    /// `POST /iclock/devicecmd?SN=…` — command results.
    DeviceCmd { serial: String },
}

impl Request {
    pub fn serial(&self) -> &str {
        match self {
            Request::Handshake { serial, .. }
            | Request::Upload { serial, .. }
            | Request::GetRequest { serial }
            | Request::Ping { serial }
            | Request::DeviceCmd { serial } => serial,
        }
    }
}

/// The table of an upload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Table {
    AttLog,
    OperLog,
    AttPhoto,
    Options,
    /// Any other table: stored raw and answered `OK`.
    Other(String),
}

impl Table {
    /// The name stored beside a raw body.
    pub fn name(&self) -> &str {
        match self {
            Table::AttLog => "ATTLOG",
            Table::OperLog => "OPERLOG",
            Table::AttPhoto => "ATTPHOTO",
            Table::Options => "options",
            Table::Other(name) => name,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RouteError {
    #[error("not an iclock path")]
    NotIclock,
    #[error("missing SN")]
    MissingSerial,
    #[error("invalid SN: {0}")]
    BadSerial(String),
    #[error("method not allowed on {0}")]
    Method(String),
}

/// Routes a request line: method, path (without query) and raw query.
pub fn route(method: Method, path: &str, query: &str) -> Result<Request, RouteError> {
    let endpoint = path.strip_prefix("/iclock/").ok_or(RouteError::NotIclock)?;
    // Some firmware appends the ASP.NET suffix of the vendor's own server.
    let endpoint = endpoint.strip_suffix(".aspx").unwrap_or(endpoint);
    if !matches!(endpoint, "cdata" | "getrequest" | "ping" | "devicecmd") {
        return Err(RouteError::NotIclock);
    }
    let serial = serial_from(query)?;
    let wrong_method = || RouteError::Method(path.to_owned());
    match (endpoint, method) {
        ("cdata", Method::Get) => Ok(Request::Handshake {
            serial,
            legacy: query_param(query, "pushver").is_none(),
        }),
        ("cdata", Method::Post) => {
            let table = match query_param(query, "table").as_deref() {
                Some(t) if t.eq_ignore_ascii_case("ATTLOG") => Table::AttLog,
                Some(t) if t.eq_ignore_ascii_case("OPERLOG") => Table::OperLog,
                Some(t) if t.eq_ignore_ascii_case("ATTPHOTO") => Table::AttPhoto,
                Some(t) if t.eq_ignore_ascii_case("options") => Table::Options,
                Some(other) => Table::Other(other.chars().take(MAX_SERIAL_CHARS).collect()),
                None => Table::Other(String::new()),
            };
            Ok(Request::Upload { serial, table })
        }
        ("getrequest", Method::Get) => Ok(Request::GetRequest { serial }),
        ("ping", Method::Get) => Ok(Request::Ping { serial }),
        ("devicecmd", Method::Post) => Ok(Request::DeviceCmd { serial }),
        _ => Err(wrong_method()),
    }
}

fn serial_from(query: &str) -> Result<String, RouteError> {
    let serial = query_param(query, "SN").ok_or(RouteError::MissingSerial)?;
    check_serial(&serial)?;
    Ok(serial)
}

/// A serial is 1 to [`MAX_SERIAL_CHARS`] of `[A-Za-z0-9._-]`, whichever
/// protocol names it.
pub fn check_serial(serial: &str) -> Result<(), RouteError> {
    if serial.is_empty()
        || serial.chars().count() > MAX_SERIAL_CHARS
        || !serial
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Err(RouteError::BadSerial(
            serial.chars().take(MAX_SERIAL_CHARS).collect(),
        ));
    }
    Ok(())
}

/// The handshake options the listener sends; see protocols.md §1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handshake {
    /// `ATTLOGStamp`: never `0`, which makes the terminal re-upload everything.
    pub attlog_stamp: String,
    pub operlog_stamp: String,
    pub attphoto_stamp: String,
    pub error_delay_secs: u32,
    pub delay_secs: u32,
    pub trans_times: String,
    pub trans_interval_mins: u32,
    pub realtime: bool,
}

impl Default for Handshake {
    fn default() -> Handshake {
        Handshake {
            attlog_stamp: "None".to_owned(),
            operlog_stamp: "9999".to_owned(),
            attphoto_stamp: "None".to_owned(),
            error_delay_secs: 30,
            delay_secs: 10,
            trans_times: "00:00;14:05".to_owned(),
            trans_interval_mins: 1,
            realtime: true,
        }
    }
}

/// The handshake reply body, one `key=value` a line, each LF-terminated.
pub fn handshake_body(serial: &str, legacy: bool, options: &Handshake, zone: UtcOffset) -> String {
    let (attlog, operlog, attphoto) = if legacy {
        ("Stamp", "OpStamp", "PhotoStamp")
    } else {
        ("ATTLOGStamp", "OPERLOGStamp", "ATTPHOTOStamp")
    };
    format!(
        "GET OPTION FROM: {serial}\n\
         {attlog}={}\n\
         {operlog}={}\n\
         {attphoto}={}\n\
         ErrorDelay={}\n\
         Delay={}\n\
         TransTimes={}\n\
         TransInterval={}\n\
         TransFlag=TransData AttLog\tOpLog\n\
         TimeZone={}\n\
         Realtime={}\n\
         Encrypt=None\n",
        options.attlog_stamp,
        options.operlog_stamp,
        options.attphoto_stamp,
        options.error_delay_secs,
        options.delay_secs,
        options.trans_times,
        options.trans_interval_mins,
        zone.iclock_value(),
        u8::from(options.realtime),
    )
}

/// `OK:<n>`: the number of records taken, sent only after the durable write.
pub fn ok_count(n: usize) -> Vec<u8> {
    format!("OK:{n}").into_bytes()
}

/// The reply to getrequest, ping, devicecmd, options and ATTPHOTO.
pub const OK: &[u8] = b"OK";

/// One attendance record from an ATTLOG upload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttRecord {
    /// The PIN (first field), as text; non-UTF-8 bytes are replaced here
    /// but kept as they came in [`AttRecord::raw`].
    pub pin: String,
    /// The terminal's local wall-clock time, read as if it were UTC.
    pub local_time: UnixMs,
    /// The line without its line end.
    pub raw: Vec<u8>,
    /// A digest of the line without trailing TABs, spaces and CR: a resent
    /// record has the same one.
    pub event_id: String,
}

/// A line of an upload that could not be read, with the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnreadableLine {
    pub raw: Vec<u8>,
    pub reason: AttLineError,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AttLineError {
    #[error("fewer than two TAB-separated fields")]
    TooFewFields,
    #[error("empty or overlong PIN")]
    Pin,
    #[error("time is not YYYY-MM-DD HH:MM:SS")]
    Time,
}

/// An ATTLOG body read line by line.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AttLog {
    pub records: Vec<AttRecord>,
    pub unreadable: Vec<UnreadableLine>,
}

impl AttLog {
    /// Lines taken: the number the reply counts.
    pub fn lines(&self) -> usize {
        self.records.len() + self.unreadable.len()
    }
}

/// Reads an ATTLOG body: records separated by LF or CRLF, fields by TAB,
/// empty lines skipped. Fields after the time (status, verify, workcode,
/// reserved, and newer firmware's extras) are kept in the raw line only.
pub fn parse_attlog(body: &[u8]) -> AttLog {
    let mut log = AttLog::default();
    for line in lines(body) {
        match parse_att_line(line) {
            Ok(record) => log.records.push(record),
            Err(reason) => log.unreadable.push(UnreadableLine {
                raw: line.to_vec(),
                reason,
            }),
        }
    }
    log
}

/// The non-empty lines of a body, without their LF or CRLF.
pub fn lines(body: &[u8]) -> impl Iterator<Item = &[u8]> {
    body.split(|&b| b == b'\n')
        .map(|line| line.strip_suffix(b"\r").unwrap_or(line))
        .filter(|line| line.iter().any(|b| !b.is_ascii_whitespace()))
}

fn parse_att_line(line: &[u8]) -> Result<AttRecord, AttLineError> {
    let mut fields = line.split(|&b| b == b'\t');
    let pin = fields.next().ok_or(AttLineError::TooFewFields)?;
    let time = fields.next().ok_or(AttLineError::TooFewFields)?;
    let pin = trim_ascii(pin);
    if pin.is_empty() || pin.len() > MAX_PIN_BYTES {
        return Err(AttLineError::Pin);
    }
    let local_time = parse_local_time(trim_ascii(time)).ok_or(AttLineError::Time)?;
    let identity = trim_end(line);
    let digest = Sha256::digest(identity);
    Ok(AttRecord {
        pin: String::from_utf8_lossy(pin).into_owned(),
        local_time,
        raw: line.to_vec(),
        event_id: hex::encode(&digest[..16]),
    })
}

fn trim_ascii(bytes: &[u8]) -> &[u8] {
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(bytes.len());
    trim_end(&bytes[start..])
}

fn trim_end(bytes: &[u8]) -> &[u8] {
    let end = bytes
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(0, |i| i + 1);
    &bytes[..end]
}

/// `YYYY-MM-DD HH:MM:SS` as if it were UTC; `None` for anything else.
pub fn parse_local_time(text: &[u8]) -> Option<UnixMs> {
    if text.len() != 19 {
        return None;
    }
    let mut rfc3339 = text.to_vec();
    if rfc3339[10] != b' ' {
        return None;
    }
    rfc3339.push(b'Z');
    let text = std::str::from_utf8(&rfc3339).ok()?;
    UnixMs::parse_rfc3339(text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_every_iclock_request() {
        let check = |method, path, query, expected: Request| {
            assert_eq!(route(method, path, query), Ok(expected), "{path}?{query}");
        };
        let sn = || "0316144680030".to_owned();
        check(
            Method::Get,
            "/iclock/cdata",
            "SN=0316144680030&options=all&pushver=2.2.14&language=83",
            Request::Handshake {
                serial: sn(),
                legacy: false,
            },
        );
        check(
            Method::Get,
            "/iclock/cdata",
            "SN=0316144680030&options=all",
            Request::Handshake {
                serial: sn(),
                legacy: true,
            },
        );
        check(
            Method::Post,
            "/iclock/cdata",
            "SN=0316144680030&table=ATTLOG&Stamp=9999",
            Request::Upload {
                serial: sn(),
                table: Table::AttLog,
            },
        );
        check(
            Method::Post,
            "/iclock/cdata.aspx",
            "SN=0316144680030&table=OPERLOG&OpStamp=1",
            Request::Upload {
                serial: sn(),
                table: Table::OperLog,
            },
        );
        check(
            Method::Get,
            "/iclock/getrequest",
            "SN=0316144680030&INFO=Ver%208.0.4,1,0,2",
            Request::GetRequest { serial: sn() },
        );
        check(
            Method::Get,
            "/iclock/ping",
            "SN=0316144680030",
            Request::Ping { serial: sn() },
        );
        check(
            Method::Post,
            "/iclock/devicecmd",
            "SN=0316144680030",
            Request::DeviceCmd { serial: sn() },
        );
    }

    #[test]
    fn requests_without_a_sane_serial_are_refused() {
        assert_eq!(
            route(Method::Get, "/iclock/ping", ""),
            Err(RouteError::MissingSerial)
        );
        assert!(matches!(
            route(Method::Get, "/iclock/ping", "SN=a%0Ab"),
            Err(RouteError::BadSerial(_))
        ));
        assert_eq!(
            route(Method::Get, "/other", "SN=1"),
            Err(RouteError::NotIclock)
        );
        assert!(matches!(
            route(Method::Post, "/iclock/getrequest", "SN=1"),
            Err(RouteError::Method(_))
        ));
    }

    #[test]
    fn the_real_devices_line_with_empty_workcode_and_trailing_tab_reads() {
        let log = parse_attlog(b"1156\t2024-08-05 12:40:57\t1\t1\t\t0\t0\t\n");
        assert_eq!(log.unreadable, vec![]);
        assert_eq!(log.records.len(), 1);
        assert_eq!(log.records[0].pin, "1156");
        assert_eq!(
            log.records[0].local_time,
            UnixMs::from_civil(2024, 8, 5, 12, 40, 57)
        );
        assert_eq!(
            log.records[0].raw,
            b"1156\t2024-08-05 12:40:57\t1\t1\t\t0\t0\t"
        );
    }

    #[test]
    fn a_resent_line_has_the_same_event_id_whatever_its_line_end() {
        let lf = parse_attlog(b"1452\t2015-07-30 15:16:28\t0\t1\t0\t0\t0\n");
        let crlf = parse_attlog(b"1452\t2015-07-30 15:16:28\t0\t1\t0\t0\t0\t\r\n");
        let other = parse_attlog(b"1452\t2015-07-30 15:16:29\t0\t1\t0\t0\t0\n");
        assert_eq!(lf.records[0].event_id, crlf.records[0].event_id);
        assert_ne!(lf.records[0].event_id, other.records[0].event_id);
    }

    #[test]
    fn newer_firmware_extras_and_non_utf8_bytes_are_kept_opaque() {
        let line: &[u8] =
            b"7\t2024-08-05 12:40:57\t0\t15\t\t0\t0\t1\t36.5\t97.7\t+28800\t\xc4\xe3\xba\xc3";
        let log = parse_attlog(line);
        assert_eq!(log.records.len(), 1);
        assert_eq!(log.records[0].raw, line);
        let gb2312_pin = parse_attlog(b"\xd5\xc5\t2024-08-05 12:40:57\t0\t1\n");
        assert_eq!(gb2312_pin.records.len(), 1);
    }

    #[test]
    fn unreadable_lines_are_reported_not_dropped() {
        let log = parse_attlog(
            b"1\t2024-08-05 12:40:57\n\n2\tyesterday\n\t2024-08-05 12:40:57\nlonely\n",
        );
        assert_eq!(log.records.len(), 1);
        let reasons: Vec<_> = log.unreadable.iter().map(|u| u.reason).collect();
        assert_eq!(
            reasons,
            [
                AttLineError::Time,
                AttLineError::Pin,
                AttLineError::TooFewFields
            ]
        );
        assert_eq!(log.lines(), 4);
    }

    #[test]
    fn arbitrary_bytes_never_panic() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..2000 {
            let len = (seed % 80) as usize;
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    [b'\t', b'\n', b'\r', b'1', b'-', b':', b' ', 0xff][(seed % 8) as usize]
                })
                .collect();
            let _ = parse_attlog(&bytes);
        }
    }

    #[test]
    fn legacy_handshakes_use_the_old_stamp_names() {
        let body = handshake_body("X1", true, &Handshake::default(), UtcOffset::UTC);
        assert!(
            body.starts_with("GET OPTION FROM: X1\nStamp=None\nOpStamp=9999\nPhotoStamp=None\n")
        );
    }
}
