//! ZKTeco Security PUSH: access-control terminals (`DeviceType=acc`, push
//! 2.x–3.x firmware) on the same `/iclock/` paths as attendance terminals,
//! with a registration step, a configuration download, a time service and
//! real-time access events. Sans-IO: the exact bytes the listener answers,
//! and the reading of `rtlog` uploads.
//!
//! The exchange, terminal first every time:
//! 1. `GET /iclock/cdata?…&DeviceType=acc` — the handshake: answered with
//!    the registered form ([`handshake_body`]), so a terminal that reads it
//!    goes straight to work;
//! 2. `POST /iclock/registry` — its capabilities; answered with its
//!    `RegistryCode` ([`registry_reply`]), or 406 for a serial not let in;
//! 3. `GET|POST /iclock/push` — the configuration with the `SessionID`
//!    ([`options_body`]);
//! 4. `GET /iclock/rtdata?type=time` — the time ([`time_body`]);
//! 5. `POST /iclock/cdata?table=rtlog` — access events ([`parse_rtlog`]):
//!    a person's punch becomes a record like an ATTLOG line; door events
//!    (PIN 0: start-up, sensors, remote opening) are kept raw.
//!
//! The registry code and session id are derived from the serial, so they
//! stay the same across restarts without being stored. They are not
//! secrets: the serial allowlist is what lets a terminal in.

use sha2::{Digest, Sha256};
use stockhop::time::UnixMs;

use super::iclock::{lines, parse_local_time, AttRecord, Handshake, MAX_PIN_BYTES};
use super::zone::UtcOffset;

/// What the configuration names the server as; the versions are the
/// Security PUSH protocol's that this listener follows.
pub const SERVER_NAME: &str = "Stockhop";
pub const SERVER_VERSION: &str = "3.1.2";
pub const PUSH_VERSION: &str = "3.1.2";
/// Ask only for users and transactions: the listener wants punches, not
/// templates (which would come as big uploads it only stores raw).
pub const TRANS_TABLES: &str = "User Transaction";
/// Seconds the terminal waits for an answer before it counts a request as
/// failed.
pub const TIMEOUT_SECS: u32 = 10;

/// `RegistryCode`: 16 hex digits (the protocol allows up to 32 characters).
pub fn registry_code(serial: &str) -> String {
    let digest = Sha256::digest(format!("stockhop registry code\0{serial}"));
    hex::encode(&digest[..8])
}

/// `SessionID`: 32 upper-case hex digits, as the protocol's example has it.
pub fn session_id(serial: &str) -> String {
    let digest = Sha256::digest(format!("stockhop session id\0{serial}"));
    hex::encode_upper(&digest[..16])
}

/// The reply to `/iclock/registry`: exactly `RegistryCode=<code>`, no line
/// end. A bare `OK` leaves the terminal unregistered and it starts over.
pub fn registry_reply(serial: &str) -> Vec<u8> {
    format!("RegistryCode={}", registry_code(serial)).into_bytes()
}

/// The configuration block of `/iclock/push`: one `key=value` a line, LF
/// between lines and none after the last.
pub fn options_body(serial: &str, options: &Handshake) -> String {
    [
        format!("ServerVersion={SERVER_VERSION}"),
        format!("ServerName={SERVER_NAME}"),
        format!("PushVersion={PUSH_VERSION}"),
        format!("ErrorDelay={}", options.error_delay_secs),
        format!("RequestDelay={}", options.delay_secs),
        format!("TransTimes={}", options.trans_times),
        format!("TransInterval={}", options.trans_interval_mins),
        format!("TransTables={TRANS_TABLES}"),
        format!("Realtime={}", u8::from(options.realtime)),
        format!("SessionID={}", session_id(serial)),
        format!("TimeoutSec={TIMEOUT_SECS}"),
    ]
    .join("\n")
}

/// The handshake reply to an access-control terminal: registered, with its
/// code, then the configuration block.
pub fn handshake_body(serial: &str, options: &Handshake) -> String {
    format!(
        "registry=ok\nRegistryCode={}\n{}",
        registry_code(serial),
        options_body(serial, options)
    )
}

/// The reply to `rtdata?type=time`: `DateTime=<now, encoded>,ServerTZ=±HHMM`
/// with `zone`, the offset in force now in the terminal's configured zone.
pub fn time_body(now: UnixMs, zone: UtcOffset) -> String {
    let minutes = zone.minutes();
    let sign = if minutes < 0 { '-' } else { '+' };
    let minutes = minutes.abs();
    format!(
        "DateTime={},ServerTZ={sign}{:02}{:02}",
        encode_time(now),
        minutes / 60,
        minutes % 60
    )
}

/// The protocol's time encoding of a UTC instant: seconds counted in
/// months of 31 days from 2000-01-01,
/// `((year−2000)·12·31 + (month−1)·31 + day−1)·86400 + hh·3600 + mm·60 + ss`.
pub fn encode_time(at: UnixMs) -> i64 {
    let (year, month, day, hour, minute, second, _) = at.to_civil();
    let days = (year - 2000) * 12 * 31 + (month - 1) * 31 + day - 1;
    days * 86_400 + hour * 3600 + minute * 60 + second
}

/// A real-time upload read line by line.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RtLog {
    /// A person's access: a record like an ATTLOG line.
    pub punches: Vec<AttRecord>,
    /// Door events and lines that cannot be read, with the reason.
    pub others: Vec<(Vec<u8>, &'static str)>,
}

impl RtLog {
    pub fn lines(&self) -> usize {
        self.punches.len() + self.others.len()
    }
}

/// Reads `table=rtlog`: one event a line, TAB-separated `key=value` fields
/// (`time`, `pin`, `cardno`, `eventaddr`, `event`, `inoutstatus`,
/// `verifytype`, `index`, and more on newer firmware), read by key since
/// firmware adds and reorders them. A line with a person's PIN is a punch;
/// PIN 0 or none is the door's own event.
pub fn parse_rtlog(body: &[u8]) -> RtLog {
    let mut log = RtLog::default();
    for line in lines(body) {
        match parse_rt_line(line) {
            Ok(record) => log.punches.push(record),
            Err(reason) => log.others.push((line.to_vec(), reason)),
        }
    }
    log
}

fn parse_rt_line(line: &[u8]) -> Result<AttRecord, &'static str> {
    let field = |name: &str| {
        line.split(|&b| b == b'\t').find_map(|pair| {
            let at = pair.iter().position(|&b| b == b'=')?;
            let key = std::str::from_utf8(&pair[..at]).ok()?;
            key.trim()
                .eq_ignore_ascii_case(name)
                .then(|| pair[at + 1..].trim_ascii())
        })
    };
    let pin = field("pin").unwrap_or_default();
    if pin.iter().all(|&b| b == b'0') {
        return Err("door event (no person: pin 0), not a punch");
    }
    if pin.len() > MAX_PIN_BYTES {
        return Err("overlong pin");
    }
    let time = field("time").ok_or("no time field")?;
    let local_time = parse_local_time(time).ok_or("time is not YYYY-MM-DD HH:MM:SS")?;
    let trimmed = line.trim_ascii_end();
    let digest = Sha256::digest(trimmed);
    Ok(AttRecord {
        pin: String::from_utf8_lossy(pin).into_owned(),
        local_time,
        time_offset: None,
        raw: line.to_vec(),
        event_id: hex::encode(&digest[..16]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SN: &str = "ACC7301000042";

    #[test]
    fn the_time_encoding_counts_31_day_months_from_2000() {
        assert_eq!(encode_time(UnixMs::from_civil(2000, 1, 1, 0, 0, 0)), 0);
        assert_eq!(
            encode_time(UnixMs::from_civil(2026, 9, 7, 12, 50, 36)),
            ((26 * 12 * 31 + 8 * 31 + 6) * 86_400 + 12 * 3600 + 50 * 60 + 36)
        );
        let east = UtcOffset::from_minutes(8 * 60).unwrap();
        let west = UtcOffset::from_minutes(-(3 * 60 + 30)).unwrap();
        let at = UnixMs::from_civil(2000, 1, 1, 0, 0, 5);
        assert_eq!(time_body(at, east), "DateTime=5,ServerTZ=+0800");
        assert_eq!(time_body(at, west), "DateTime=5,ServerTZ=-0330");
    }

    #[test]
    fn registry_code_and_session_are_stable_and_within_the_protocols_sizes() {
        assert_eq!(registry_code(SN), registry_code(SN));
        assert_ne!(registry_code(SN), registry_code("OTHER"));
        assert_eq!(registry_code(SN).len(), 16);
        assert_eq!(session_id(SN).len(), 32);
        assert!(registry_reply(SN).starts_with(b"RegistryCode="));
        assert!(!registry_reply(SN).ends_with(b"\n"));
    }

    #[test]
    fn a_persons_access_is_a_punch_and_door_events_are_not() {
        let body = b"time=2026-09-07 09:15:02\tpin=1001\tcardno=0\teventaddr=1\tevent=0\tinoutstatus=0\tverifytype=15\tindex=311\r\n\
time=2026-09-07 09:15:09\tpin=0\tcardno=0\teventaddr=1\tevent=8\tinoutstatus=2\tverifytype=200\tindex=312\n\
time=2026-09-07 09:16:00\tcardno=0\tevent=206\tindex=313\n\
pin=1002\tevent=0\tindex=314\n\
index=315\tverifytype=15\tevent=0\tpin=1003\ttime=2026-09-07 09:17:30\tmaskflag=1\ttemperature=36.6\n";
        let log = parse_rtlog(body);
        let pins: Vec<&str> = log.punches.iter().map(|p| p.pin.as_str()).collect();
        assert_eq!(pins, ["1001", "1003"]);
        assert_eq!(
            log.punches[0].local_time,
            UnixMs::from_civil(2026, 9, 7, 9, 15, 2)
        );
        assert!(log.punches[0].raw.ends_with(b"index=311"));
        let reasons: Vec<&str> = log.others.iter().map(|(_, why)| *why).collect();
        assert_eq!(
            reasons,
            [
                "door event (no person: pin 0), not a punch",
                "door event (no person: pin 0), not a punch",
                "no time field"
            ]
        );
        assert_eq!(log.lines(), 5);
    }
}
