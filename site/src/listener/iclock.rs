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
pub use crate::limits::{MAX_PIN_BYTES, MAX_SERIAL_CHARS};

/// What a terminal asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// `GET /iclock/cdata?SN=…&options=all` — the handshake; `legacy` when
    /// the terminal sent no `pushver` (old `Stamp=` names); `access` when it
    /// announced `DeviceType=acc` (Security PUSH, [`super::push_acc`]).
    Handshake {
        serial: String,
        legacy: bool,
        access: bool,
    },
    /// `POST /iclock/cdata?SN=…&table=…`.
    Upload { serial: String, table: Table },
    /// `GET /iclock/getrequest?SN=…` — the heartbeat poll.
    GetRequest { serial: String },
    /// `GET /iclock/ping?SN=…` (protocol 2.4+).
    Ping { serial: String },
    /// `POST /iclock/devicecmd?SN=…` — command results.
    DeviceCmd { serial: String },
    /// `GET /iclock/cdata?SN=…&table=RemoteAtt&PIN=…` — the terminal asks
    /// the server for a person it does not know.
    RemoteAtt { serial: String },
    /// `POST /iclock/cdata?SN=…&type=PostVerifyData` (or `table=`) — the
    /// terminal asks the server whether to let someone through (back-end
    /// verification).
    PostVerify { serial: String },
    /// `POST /iclock/registry?SN=…` — Security PUSH registration.
    Registry { serial: String },
    /// `GET|POST /iclock/push?SN=…` — Security PUSH configuration download.
    Push { serial: String },
    /// `GET /iclock/rtdata?SN=…&type=time` — the terminal asks the time.
    Time { serial: String },
    /// `POST /iclock/querydata?SN=…[&type=tabledata&tablename=…&count=…]` —
    /// the answer to a data query, uploaded like a table.
    QueryData {
        serial: String,
        table: Option<TableCount>,
    },
    /// `/iclock/exchange?SN=…` — encryption key exchange, which the listener
    /// does not offer: the terminal then talks plain text.
    Exchange { serial: String },
}

impl Request {
    pub fn serial(&self) -> &str {
        match self {
            Request::Handshake { serial, .. }
            | Request::Upload { serial, .. }
            | Request::GetRequest { serial }
            | Request::Ping { serial }
            | Request::DeviceCmd { serial }
            | Request::RemoteAtt { serial }
            | Request::PostVerify { serial }
            | Request::Registry { serial }
            | Request::Push { serial }
            | Request::Time { serial }
            | Request::QueryData { serial, .. }
            | Request::Exchange { serial } => serial,
        }
    }

    /// Whether this request may carry a body up to [`MAX_PACKAGE_BYTES`]:
    /// photo, template and table uploads, which are stored raw. Attendance
    /// uploads, whose records the listener reads, keep the 256 KB cap.
    pub fn takes_packages(&self) -> bool {
        match self {
            Request::Upload { table, .. } => table.takes_packages(),
            Request::QueryData { .. } => true,
            _ => false,
        }
    }
}

/// The largest body a terminal sends: the `MaxPackageSize` it registers
/// (2,048,000 bytes on a BioFace A1), taken for the tables that carry
/// photos and templates (one face photo line is ~100 KB). A terminal that
/// registered it splits bigger uploads, so none is left resending one.
pub const MAX_PACKAGE_BYTES: usize = 2_048_000;

/// A table name and the record count a terminal uploads it with
/// (`tablename=user&count=3`), answered `user=3`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableCount {
    pub name: String,
    /// `None` when the terminal sent no count (or not a number): the
    /// listener then counts the upload's lines.
    pub count: Option<u64>,
}

/// The longest table name taken; it is echoed in the reply, so it is also
/// held to `[A-Za-z0-9_]`.
pub const MAX_TABLE_NAME_CHARS: usize = 32;

/// The table of an upload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Table {
    AttLog,
    OperLog,
    AttPhoto,
    Options,
    /// Security PUSH real-time events (`table=rtlog`): punches among door
    /// events.
    RtLog,
    /// `table=tabledata&tablename=…&count=…`: answered `<tablename>=<count>`.
    TableData(TableCount),
    /// Any other table: stored raw and answered `OK`.
    Other(String),
}

/// Tables that carry photos and templates, taken up to [`MAX_PACKAGE_BYTES`].
const PACKAGE_TABLES: [&str; 5] = ["OPERLOG", "ATTPHOTO", "BIODATA", "BIOPHOTO", "USERPIC"];

impl Table {
    /// The name stored beside a raw body.
    pub fn name(&self) -> &str {
        match self {
            Table::AttLog => "ATTLOG",
            Table::OperLog => "OPERLOG",
            Table::AttPhoto => "ATTPHOTO",
            Table::Options => "options",
            Table::RtLog => "rtlog",
            Table::TableData(table) => &table.name,
            Table::Other(name) => name,
        }
    }

    fn takes_packages(&self) -> bool {
        match self {
            Table::TableData(_) => true,
            Table::AttLog | Table::RtLog | Table::Options => false,
            other => PACKAGE_TABLES
                .iter()
                .any(|t| t.eq_ignore_ascii_case(other.name())),
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
    #[error("missing or invalid tablename")]
    BadTableName,
    #[error("unknown rtdata type {0:?}")]
    RtDataType(String),
}

/// The endpoints under `/iclock/` the listener answers.
const ENDPOINTS: [&str; 9] = [
    "cdata",
    "getrequest",
    "ping",
    "devicecmd",
    "registry",
    "push",
    "rtdata",
    "querydata",
    "exchange",
];

/// Routes a request line: method, path (without query) and raw query.
pub fn route(method: Method, path: &str, query: &str) -> Result<Request, RouteError> {
    let endpoint = path.strip_prefix("/iclock/").ok_or(RouteError::NotIclock)?;
    // Some firmware appends the ASP.NET suffix of the vendor's own server.
    let endpoint = endpoint.strip_suffix(".aspx").unwrap_or(endpoint);
    if !ENDPOINTS.contains(&endpoint) {
        return Err(RouteError::NotIclock);
    }
    let serial = serial_from(query)?;
    let wrong_method = || RouteError::Method(path.to_owned());
    let param = |name: &str| query_param_any_case(query, name);
    let is = |name: &str, value: &str| param(name).is_some_and(|v| v.eq_ignore_ascii_case(value));
    match (endpoint, method) {
        ("cdata", Method::Get) if is("table", "RemoteAtt") => Ok(Request::RemoteAtt { serial }),
        ("cdata", Method::Get) => Ok(Request::Handshake {
            serial,
            legacy: param("pushver").is_none(),
            access: is("DeviceType", "acc"),
        }),
        ("cdata", Method::Post)
            if is("type", "PostVerifyData") || is("table", "PostVerifyData") =>
        {
            Ok(Request::PostVerify { serial })
        }
        ("cdata", Method::Post) => {
            let table = match param("table").as_deref() {
                Some(t) if t.eq_ignore_ascii_case("ATTLOG") => Table::AttLog,
                Some(t) if t.eq_ignore_ascii_case("OPERLOG") => Table::OperLog,
                Some(t) if t.eq_ignore_ascii_case("ATTPHOTO") => Table::AttPhoto,
                Some(t) if t.eq_ignore_ascii_case("options") => Table::Options,
                Some(t) if t.eq_ignore_ascii_case("rtlog") => Table::RtLog,
                Some(t) if t.eq_ignore_ascii_case("tabledata") => {
                    Table::TableData(table_count(query)?.ok_or(RouteError::BadTableName)?)
                }
                Some(other) => Table::Other(other.chars().take(MAX_SERIAL_CHARS).collect()),
                None => Table::Other(String::new()),
            };
            Ok(Request::Upload { serial, table })
        }
        ("getrequest", Method::Get) => Ok(Request::GetRequest { serial }),
        ("ping", Method::Get) => Ok(Request::Ping { serial }),
        ("devicecmd", Method::Post) => Ok(Request::DeviceCmd { serial }),
        ("registry", Method::Post) => Ok(Request::Registry { serial }),
        // The protocol's prose says GET, its own example POSTs.
        ("push", Method::Get | Method::Post) => Ok(Request::Push { serial }),
        ("rtdata", Method::Get) if is("type", "time") => Ok(Request::Time { serial }),
        ("rtdata", Method::Get) => Err(RouteError::RtDataType(
            param("type")
                .unwrap_or_default()
                .chars()
                .take(MAX_TABLE_NAME_CHARS)
                .collect(),
        )),
        ("querydata", Method::Post) => Ok(Request::QueryData {
            serial,
            table: table_count(query)?,
        }),
        ("exchange", Method::Get | Method::Post) => Ok(Request::Exchange { serial }),
        _ => Err(wrong_method()),
    }
}

/// A query parameter whatever the case of its name: the protocol documents
/// spell `DeviceType`, `tablename`, `pushver`, and firmware does not always
/// agree with them.
fn query_param_any_case(query: &str, name: &str) -> Option<String> {
    query
        .split('&')
        .filter_map(|pair| pair.split_once('=').map(|(key, _)| key))
        .find(|key| key.eq_ignore_ascii_case(name))
        .and_then(|key| query_param(query, key))
}

/// `tablename` and `count`; `Ok(None)` when there is no `tablename`.
fn table_count(query: &str) -> Result<Option<TableCount>, RouteError> {
    let Some(name) = query_param_any_case(query, "tablename") else {
        return Ok(None);
    };
    let valid = !name.is_empty()
        && name.len() <= MAX_TABLE_NAME_CHARS
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if !valid {
        return Err(RouteError::BadTableName);
    }
    let count = query_param_any_case(query, "count").and_then(|c| c.trim().parse().ok());
    Ok(Some(TableCount { name, count }))
}

/// The reply to a table upload: `<tablename>=<count>`, the count the
/// terminal sent or, without one, the upload's non-empty lines. Anything
/// else (`OK` included) makes the terminal send the upload again, forever.
pub fn table_count_reply(table: &TableCount, body: &[u8]) -> Vec<u8> {
    let count = table.count.unwrap_or_else(|| lines(body).count() as u64);
    format!("{}={count}", table.name).into_bytes()
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

/// The handshake options the listener sends (docs/terminal-protocols.md).
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

/// The handshake reply body, one `key=value` a line, each LF-terminated;
/// `zone` is the offset in force now in the terminal's configured zone.
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
    /// The line's own `TimeOffset` (PUSH 2.4 firmware): the offset its local
    /// time is in, which wins over any configured zone.
    pub time_offset: Option<UtcOffset>,
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
    /// Lines of the ID-card check sub-protocol (`Type=1`): a card being
    /// verified, not a person clocking in; kept raw.
    pub id_checks: Vec<Vec<u8>>,
}

impl AttLog {
    /// Lines taken: the number the reply counts.
    pub fn lines(&self) -> usize {
        self.records.len() + self.unreadable.len() + self.id_checks.len()
    }
}

/// The positional fields of a PUSH 2.4 ATTLOG line, after PIN and time:
/// status, verify, workcode, two reserved, mask flag, temperature,
/// converted temperature, then `TimeOffset` (seconds east of UTC, e.g.
/// `+28800`, may be empty), base64 extension data and the sub-protocol
/// `Type`.
const TIME_OFFSET_FIELD: usize = 10;
const TYPE_FIELD: usize = 12;
/// `Type` of the ID-card check sub-protocol.
const ID_CARD_CHECK_TYPE: &str = "1";

/// Reads an ATTLOG body: records separated by LF or CRLF, fields by TAB,
/// empty lines skipped. Fields after the time (status, verify, workcode,
/// reserved, and newer firmware's extras) are kept in the raw line; of the
/// extras the listener reads `TimeOffset` and `Type`, by position or as
/// `TimeOffset=` / `Type=` fields.
pub fn parse_attlog(body: &[u8]) -> AttLog {
    let mut log = AttLog::default();
    for line in lines(body) {
        if extra_field(line, TYPE_FIELD, "Type").as_deref() == Some(ID_CARD_CHECK_TYPE) {
            log.id_checks.push(line.to_vec());
            continue;
        }
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

/// An extra field of an ATTLOG line: written `Name=value` anywhere after
/// the time, or else the bare field at `position`. Trimmed; `None` when
/// absent or empty.
fn extra_field(line: &[u8], position: usize, name: &str) -> Option<String> {
    let fields: Vec<&[u8]> = line.split(|&b| b == b'\t').collect();
    let named = fields.iter().skip(2).find_map(|field| {
        let field = std::str::from_utf8(field).ok()?;
        let (key, value) = field.split_once('=')?;
        key.trim().eq_ignore_ascii_case(name).then_some(value)
    });
    let value = match named {
        Some(value) => value.trim(),
        None => std::str::from_utf8(fields.get(position)?).ok()?.trim(),
    };
    (!value.is_empty()).then(|| value.to_owned())
}

/// `TimeOffset` as a zone: signed seconds east of UTC, a whole number of
/// minutes within the real offsets; anything else is not an offset and the
/// configured zone applies.
fn time_offset(line: &[u8]) -> Option<UtcOffset> {
    let text = extra_field(line, TIME_OFFSET_FIELD, "TimeOffset")?;
    let digits = text.strip_prefix(['+', '-']).unwrap_or(&text);
    if digits.is_empty() || digits.len() > 6 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let seconds: i32 = text.strip_prefix('+').unwrap_or(&text).parse().ok()?;
    if seconds % 60 != 0 {
        return None;
    }
    UtcOffset::from_minutes(seconds / 60).ok()
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
        time_offset: time_offset(line),
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
                access: false,
            },
        );
        check(
            Method::Get,
            "/iclock/cdata",
            "SN=0316144680030&options=all",
            Request::Handshake {
                serial: sn(),
                legacy: true,
                access: false,
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
    fn routes_security_push_and_the_other_requests_real_devices_send() {
        let check = |method, path, query, expected: Request| {
            assert_eq!(route(method, path, query), Ok(expected), "{path}?{query}");
        };
        let sn = || "ACC7301000042".to_owned();
        check(
            Method::Get,
            "/iclock/cdata",
            "SN=ACC7301000042&options=all&pushver=3.1.2&DeviceType=acc&PushOptionsFlag=1",
            Request::Handshake {
                serial: sn(),
                legacy: false,
                access: true,
            },
        );
        check(
            Method::Get,
            "/iclock/cdata",
            "SN=ACC7301000042&options=all&devicetype=ACC",
            Request::Handshake {
                serial: sn(),
                legacy: true,
                access: true,
            },
        );
        check(
            Method::Post,
            "/iclock/registry",
            "SN=ACC7301000042",
            Request::Registry { serial: sn() },
        );
        for method in [Method::Get, Method::Post] {
            check(
                method,
                "/iclock/push",
                "SN=ACC7301000042",
                Request::Push { serial: sn() },
            );
        }
        check(
            Method::Get,
            "/iclock/rtdata",
            "SN=ACC7301000042&type=time",
            Request::Time { serial: sn() },
        );
        check(
            Method::Post,
            "/iclock/querydata",
            "SN=ACC7301000042&type=tabledata&cmdid=7&tablename=user&count=2&packcnt=1&packidx=1",
            Request::QueryData {
                serial: sn(),
                table: Some(TableCount {
                    name: "user".to_owned(),
                    count: Some(2),
                }),
            },
        );
        check(
            Method::Post,
            "/iclock/cdata",
            "SN=ACC7301000042&table=tabledata&tablename=biophoto&count=1",
            Request::Upload {
                serial: sn(),
                table: Table::TableData(TableCount {
                    name: "biophoto".to_owned(),
                    count: Some(1),
                }),
            },
        );
        check(
            Method::Post,
            "/iclock/cdata",
            "SN=ACC7301000042&table=rtlog&Stamp=9999",
            Request::Upload {
                serial: sn(),
                table: Table::RtLog,
            },
        );
        check(
            Method::Post,
            "/iclock/cdata",
            "SN=ACC7301000042&type=PostVerifyData",
            Request::PostVerify { serial: sn() },
        );
        check(
            Method::Post,
            "/iclock/cdata",
            "SN=ACC7301000042&table=PostVerifyData",
            Request::PostVerify { serial: sn() },
        );
        check(
            Method::Get,
            "/iclock/cdata",
            "SN=ACC7301000042&table=RemoteAtt&PIN=77",
            Request::RemoteAtt { serial: sn() },
        );
        check(
            Method::Post,
            "/iclock/exchange",
            "SN=ACC7301000042&type=publickey",
            Request::Exchange { serial: sn() },
        );
        assert_eq!(
            route(
                Method::Post,
                "/iclock/cdata",
                "SN=1&table=tabledata&tablename=us%0Aer"
            ),
            Err(RouteError::BadTableName)
        );
        assert_eq!(
            route(Method::Get, "/iclock/rtdata", "SN=1&type=door"),
            Err(RouteError::RtDataType("door".to_owned()))
        );
        assert_eq!(
            route(Method::Get, "/iclock/fdata", "SN=1"),
            Err(RouteError::NotIclock)
        );
    }

    #[test]
    fn a_table_upload_is_answered_with_its_name_and_count() {
        let user = TableCount {
            name: "user".to_owned(),
            count: Some(3),
        };
        assert_eq!(table_count_reply(&user, b""), b"user=3");
        let uncounted = TableCount {
            name: "templatev10".to_owned(),
            count: None,
        };
        assert_eq!(
            table_count_reply(
                &uncounted,
                b"templatev10 pin=1\tfid=0\n\ntemplatev10 pin=2\tfid=1\n"
            ),
            b"templatev10=2"
        );
    }

    #[test]
    fn only_photo_template_and_table_uploads_take_package_sized_bodies() {
        let takes = |query: &str| {
            route(Method::Post, "/iclock/cdata", query)
                .unwrap()
                .takes_packages()
        };
        assert!(takes("SN=1&table=BIOPHOTO"));
        assert!(takes("SN=1&table=biodata"));
        assert!(takes("SN=1&table=OPERLOG"));
        assert!(takes("SN=1&table=tabledata&tablename=user&count=1"));
        assert!(!takes("SN=1&table=ATTLOG"));
        assert!(!takes("SN=1&table=rtlog"));
        assert!(!takes("SN=1&table=options"));
    }

    #[test]
    fn a_lines_own_time_offset_is_read_by_position_or_name() {
        let line = |offset: &str| {
            format!("7\t2026-09-07 09:15:00\t0\t15\t\t0\t0\t1\t36.5\t97.7\t{offset}\teyJ4IjoxfQ==")
        };
        let offset = |text: &str| parse_attlog(text.as_bytes()).records[0].time_offset;
        assert_eq!(
            offset(&line("+28800")),
            Some(UtcOffset::from_minutes(480).unwrap())
        );
        assert_eq!(
            offset(&line("-12600")),
            Some(UtcOffset::from_minutes(-210).unwrap())
        );
        assert_eq!(
            offset(&line("19800")),
            Some(UtcOffset::from_minutes(330).unwrap())
        );
        for not_an_offset in ["", "+28801", "+99999", "8h", "+"] {
            assert_eq!(offset(&line(not_an_offset)), None, "{not_an_offset:?}");
        }
        assert_eq!(
            offset("7\t2026-09-07 09:15:00\t0\t15\tTimeOffset=-18000"),
            Some(UtcOffset::from_minutes(-300).unwrap())
        );
        assert_eq!(offset("1452\t2015-07-30 15:16:28\t0\t1\t0\t0\t0"), None);
    }

    #[test]
    fn an_id_card_check_line_is_not_an_attendance() {
        let log = parse_attlog(
            b"8\t2026-09-07 09:15:00\t0\t4\t\t0\t0\t0\t\t\t+28800\t\t1\n\
9\t2026-09-07 09:15:01\t0\t4\t\t0\t0\tType=1\n\
10\t2026-09-07 09:15:02\t0\t4\t\t0\t0\t0\t\t\t+28800\t\t0\n",
        );
        assert_eq!(log.id_checks.len(), 2);
        assert_eq!(log.records.len(), 1);
        assert_eq!(log.records[0].pin, "10");
        assert_eq!(log.lines(), 3);
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
