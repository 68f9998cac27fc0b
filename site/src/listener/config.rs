//! The listener's configuration: a TOML file, then the command line on top
//! of it. Nothing here reads the environment: `main` reads every setting
//! once with its command line (each flag with its environment variable,
//! `--terminal-allow` or `STOCKHOP_TERMINAL_ALLOW` and so on) and lays
//! them over the file through [`ListenerConfig::apply_flags`]. The remote
//! ledger's URL and secret (`STOCKHOP_LEDGER_URL`,
//! `STOCKHOP_LEDGER_SECRET`) are settings of the whole site, handed to
//! [`ListenerConfig::set_ledger`].
//!
//! Terminals can do neither TLS nor authentication, so the serial allowlist
//! is the gate: empty by default, which refuses every terminal until the
//! site names its serials (or `*`). Booleans are parsed explicitly:
//! `true`/`1`/`yes` and `false`/`0`/`no`, anything else is an error, so a
//! setting of `"false"` can never read as true. The file is read into
//! [`ConfigFile`], a serde struct that refuses keys it does not know, so a
//! misspelt setting stops the start with an error naming the file, the key
//! and its line instead of being ignored.
//!
//! ```toml
//! http = "0.0.0.0:8081"
//! tcp = "0.0.0.0:8082"
//! allow = ["0316144680030", "gate-dock-1"]   # or "*", or "A,B"
//! time_zone = "Europe/Berlin"                 # site-wide terminal time zone
//! realtime = true                             # iclock Realtime=1
//! reader_profile = "fxr90"                    # readers not named below
//! ledger_url = "http://ledger.site:8080"      # absent: the in-process ledger
//! ledger_secret = "…"
//! [time_zones]
//! 0316144680030 = "+05:30"                    # or an IANA name
//! [reader_profiles]
//! gate-dock-1 = "fxr90"
//! [stamps]
//! attlog = "None"
//! operlog = "9999"
//! attphoto = "None"
//! ```

use std::collections::{BTreeMap, HashMap, HashSet};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use stockhop::time::Millis;

use super::forwarder::Cadence;
use super::iclock::{check_serial, Handshake, MAX_SERIAL_CHARS};
use super::queue;
use super::rules::ReaderRates;
use super::zone::{TerminalZone, ZoneError};
use crate::ledger::devices::Profile;

pub const DEFAULT_HTTP_ADDR: &str = "0.0.0.0:8081";
pub const DEFAULT_TCP_ADDR: &str = "0.0.0.0:8082";

/// The settings the command line lays over the file (`--terminal-allow`,
/// `--terminal-tz`, `--terminal-realtime`, or their environment
/// variables); `None` keeps the file's.
#[derive(Debug, Clone, Default)]
pub struct TerminalFlags {
    pub allow: Option<Allowlist>,
    pub time_zone: Option<TerminalZone>,
    pub realtime: Option<bool>,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Not TOML, or a key the file may not have (named, with its line),
    /// or a value of the wrong type.
    #[error("{0}")]
    Toml(toml::de::Error),
    #[error("{setting}: expected true/1/yes or false/0/no, got {value:?}")]
    Bool { setting: String, value: String },
    #[error("{setting}: {message}")]
    Invalid { setting: String, message: String },
    #[error("{setting}: {error}")]
    Zone { setting: String, error: ZoneError },
    /// Any of the above, in the configuration file `path` (the message
    /// says it all, so it is not also given as a source).
    #[error("{path}: {error}")]
    File {
        path: PathBuf,
        error: Box<ConfigError>,
    },
}

impl From<toml::de::Error> for ConfigError {
    fn from(error: toml::de::Error) -> ConfigError {
        ConfigError::Toml(error)
    }
}

/// The most serials the start's log line names one by one; a longer
/// allowlist is logged by its count, so one log line stays readable.
pub const ALLOWLIST_LOGGED_SERIALS: usize = 16;

/// An allowlist entry no terminal serial can match.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "allowlist entry {entry:?} can never match a terminal serial: a serial is 1 to {MAX_SERIAL_CHARS} characters of A-Z a-z 0-9 . _ - \
     (entries are separated by commas, spaces around an entry are ignored, * lets in any serial)"
)]
pub struct BadAllowEntry {
    /// The entry as given, cut to twice [`MAX_SERIAL_CHARS`] characters.
    pub entry: String,
}

impl BadAllowEntry {
    fn new(entry: &str) -> BadAllowEntry {
        let mut shown: String = entry.chars().take(2 * MAX_SERIAL_CHARS).collect();
        if shown.len() < entry.len() {
            shown.push('…');
        }
        BadAllowEntry { entry: shown }
    }
}

/// Which terminal serials are let in.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Allowlist {
    /// `*`: any serial.
    Any,
    /// Exactly these serials; empty refuses every terminal.
    Serials(HashSet<String>),
    /// Nothing configured: every terminal is refused.
    #[default]
    Unset,
}

impl Allowlist {
    /// Parses `A,B,C` or `*`. Each entry must be `*` or a serial as the
    /// listener reads one ([`check_serial`]: 1 to [`MAX_SERIAL_CHARS`]
    /// characters of `[A-Za-z0-9._-]`), so an entry that could never match
    /// (`GATE-1;CLOCK-7`, `dock 2`, `bad<x>`) stops the start instead of
    /// refusing a terminal later. Serials hold no whitespace, so spaces
    /// around an entry are dropped (`A1, B2` is `A1` and `B2`) and empty
    /// entries (`A1,,B2`, a trailing comma) are skipped; serials are then
    /// compared exactly, case included.
    pub fn parse(text: &str) -> Result<Allowlist, BadAllowEntry> {
        let mut serials = HashSet::new();
        for entry in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            if entry != "*" && check_serial(entry).is_err() {
                return Err(BadAllowEntry::new(entry));
            }
            serials.insert(entry.to_owned());
        }
        if serials.contains("*") {
            Ok(Allowlist::Any)
        } else {
            Ok(Allowlist::Serials(serials))
        }
    }

    /// What the allowlist lets in, for the log line at start: `*`, none, or
    /// the serials themselves when there are at most
    /// [`ALLOWLIST_LOGGED_SERIALS`] of them, else their count.
    pub fn describe(&self) -> String {
        match self {
            Allowlist::Any => "any serial (*)".to_owned(),
            Allowlist::Unset => {
                "not set: every terminal is refused (set --terminal-allow, STOCKHOP_TERMINAL_ALLOW or the file's allow)".to_owned()
            }
            Allowlist::Serials(set) if set.is_empty() => {
                "empty: every terminal is refused".to_owned()
            }
            Allowlist::Serials(set) => {
                let mut serials: Vec<&str> = set.iter().map(String::as_str).collect();
                serials.sort_unstable();
                if serials.len() <= ALLOWLIST_LOGGED_SERIALS {
                    format!("{} serial(s): {}", serials.len(), serials.join(", "))
                } else {
                    format!(
                        "{} serials ({} … {})",
                        serials.len(),
                        serials[0],
                        serials[serials.len() - 1]
                    )
                }
            }
        }
    }

    /// `Err` carries the reason logged for a refused serial.
    pub fn check(&self, serial: &str) -> Result<(), &'static str> {
        match self {
            Allowlist::Any => Ok(()),
            Allowlist::Serials(set) if set.contains(serial) => Ok(()),
            Allowlist::Serials(_) => Err("serial not in the terminal allowlist"),
            Allowlist::Unset => {
                Err("no terminal allowlist configured (set STOCKHOP_TERMINAL_ALLOW or --terminal-allow)")
            }
        }
    }
}

/// Where forwarded batches go when they do not go to the in-process ledger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteLedger {
    pub url: String,
    pub secret: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ListenerConfig {
    pub http_addr: SocketAddr,
    pub tcp_addr: SocketAddr,
    pub allow: Allowlist,
    pub site_time_zone: TerminalZone,
    pub time_zones: HashMap<String, TerminalZone>,
    pub handshake: Handshake,
    pub ledger: Option<RemoteLedger>,
    /// RFID readers' device profiles by serial (`[reader_profiles]`); their
    /// reads per second size each reader's per-tag rate limit.
    pub reader_profiles: HashMap<String, Profile>,
    /// The profile of a reader not named there (`reader_profile`): the
    /// fixed gate, the reader the listener is for.
    pub default_reader_profile: Profile,
    /// The forwarder's retry and set-aside waits (not read from the file:
    /// the named defaults, shortened only by tests).
    pub forwarding: Cadence,
    /// How long, in capture time, a forwarded record's identity is kept
    /// once its queue row is gone (`seen_retention_minutes`; a week by
    /// default, [`queue::SEEN_RETENTION`]).
    pub seen_retention: Millis,
}

impl Default for ListenerConfig {
    fn default() -> ListenerConfig {
        ListenerConfig {
            http_addr: DEFAULT_HTTP_ADDR.parse().expect("valid default address"),
            tcp_addr: DEFAULT_TCP_ADDR.parse().expect("valid default address"),
            allow: Allowlist::Unset,
            site_time_zone: TerminalZone::UTC,
            time_zones: HashMap::new(),
            handshake: Handshake::default(),
            ledger: None,
            reader_profiles: HashMap::new(),
            default_reader_profile: Profile::Fxr90,
            forwarding: Cadence::default(),
            seen_retention: queue::SEEN_RETENTION,
        }
    }
}

impl ListenerConfig {
    /// The time zone a terminal's local times are read in.
    pub fn time_zone(&self, serial: &str) -> &TerminalZone {
        self.time_zones.get(serial).unwrap_or(&self.site_time_zone)
    }

    /// Each RFID reader's reads per second, for the rate rules.
    pub fn reader_rates(&self) -> ReaderRates {
        ReaderRates {
            per_reader: self
                .reader_profiles
                .iter()
                .map(|(serial, profile)| (serial.clone(), profile.reads_per_sec()))
                .collect(),
            default_reads_per_sec: self.default_reader_profile.reads_per_sec(),
        }
    }

    /// Defaults, then `file` if given.
    pub fn load(file: Option<&Path>) -> Result<ListenerConfig, ConfigError> {
        let mut config = ListenerConfig::default();
        if let Some(path) = file {
            let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
                path: path.to_owned(),
                source,
            })?;
            config
                .apply_toml(&text)
                .map_err(|error| ConfigError::File {
                    path: path.to_owned(),
                    error: Box::new(error),
                })?;
        }
        Ok(config)
    }

    /// Applies a TOML document on top of this configuration.
    pub fn apply_toml(&mut self, text: &str) -> Result<(), ConfigError> {
        ConfigFile::parse(text)?.apply(self)
    }

    /// Applies the command line's settings on top of this configuration.
    pub fn apply_flags(&mut self, flags: TerminalFlags) {
        if let Some(allow) = flags.allow {
            self.allow = allow;
        }
        if let Some(zone) = flags.time_zone {
            self.site_time_zone = zone;
        }
        if let Some(realtime) = flags.realtime {
            self.handshake.realtime = realtime;
        }
    }

    /// Sets the remote ledger; a URL needs a secret, and either may be
    /// given on its own to replace one part of an earlier setting.
    pub fn set_ledger(
        &mut self,
        url: Option<String>,
        secret: Option<String>,
    ) -> Result<(), ConfigError> {
        let url = url.or_else(|| self.ledger.as_ref().map(|l| l.url.clone()));
        let secret = secret.or_else(|| self.ledger.as_ref().map(|l| l.secret.clone()));
        self.ledger = match (url, secret) {
            (None, _) => None,
            (Some(url), _) if !(url.starts_with("http://") || url.starts_with("https://")) => {
                return Err(invalid("ledger_url", "expected an http:// or https:// URL"))
            }
            (Some(_), None) => {
                return Err(invalid(
                    "ledger_secret",
                    "a remote ledger URL needs a shared secret",
                ))
            }
            (Some(_), Some(secret)) if secret.len() < MIN_SECRET_BYTES => {
                return Err(invalid("ledger_secret", "shorter than 16 bytes"))
            }
            (Some(url), Some(secret)) => Some(RemoteLedger {
                url: url.trim_end_matches('/').to_owned(),
                secret,
            }),
        };
        Ok(())
    }
}

/// Shortest shared secret taken: 128 bits of a random string.
pub const MIN_SECRET_BYTES: usize = 16;

/// `true`/`1`/`yes` or `false`/`0`/`no` (any case); anything else is an error.
pub fn parse_bool(setting: &str, value: &str) -> Result<bool, ConfigError> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" => Ok(true),
        "false" | "0" | "no" => Ok(false),
        _ => Err(ConfigError::Bool {
            setting: setting.to_owned(),
            value: value.to_owned(),
        }),
    }
}

/// The terminal configuration file as written: every key optional, any
/// other key refused. [`ConfigFile::apply`] checks the values and sets
/// them on a [`ListenerConfig`].
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub http: Option<SocketAddr>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tcp: Option<SocketAddr>,
    /// `"*"`, `"A,B"` or `["A", "B"]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allow: Option<Serials>,
    /// The site-wide terminal time zone: an IANA name or an offset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_zone: Option<Setting>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub realtime: Option<Flag>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reader_profile: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ledger_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ledger_secret: Option<String>,
    /// Minutes, in capture time, a forwarded record's identity is kept
    /// to recognise a resend ([`SEEN_RETENTION_MINUTES`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seen_retention_minutes: Option<u64>,
    /// Serial → time zone.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub time_zones: BTreeMap<String, Setting>,
    /// Serial → reading profile.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub reader_profiles: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Stamps::is_empty")]
    pub stamps: Stamps,
}

/// `[stamps]`: the handshake's table stamps.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Stamps {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attlog: Option<Setting>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operlog: Option<Setting>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attphoto: Option<Setting>,
}

impl Stamps {
    fn is_empty(&self) -> bool {
        self == &Stamps::default()
    }
}

/// A serial list: one comma-separated string or an array of strings.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum Serials {
    Text(String),
    List(Vec<String>),
}

/// A value written as a string or a whole number (`attlog = 9999`,
/// `time_zone = 330`).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum Setting {
    Number(i64),
    Text(String),
}

impl Setting {
    fn text(&self) -> String {
        match self {
            Setting::Number(n) => n.to_string(),
            Setting::Text(text) => text.clone(),
        }
    }
}

/// A boolean written as one, or as the strings and numbers [`parse_bool`]
/// takes.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum Flag {
    Bool(bool),
    Other(Setting),
}

impl ConfigFile {
    /// Reads a TOML document; an unknown key or a value of the wrong type
    /// is an error naming it.
    pub fn parse(text: &str) -> Result<ConfigFile, ConfigError> {
        Ok(toml::from_str(text)?)
    }

    /// The document this file writes back to.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a configuration file serialises")
    }

    /// Checks every value and sets it on `config`.
    pub fn apply(&self, config: &mut ListenerConfig) -> Result<(), ConfigError> {
        if let Some(addr) = self.http {
            config.http_addr = addr;
        }
        if let Some(addr) = self.tcp {
            config.tcp_addr = addr;
        }
        if let Some(allow) = &self.allow {
            let parsed = match allow {
                Serials::Text(text) => Allowlist::parse(text),
                Serials::List(serials) => Allowlist::parse(&serials.join(",")),
            };
            config.allow = parsed.map_err(|err| ConfigError::Invalid {
                setting: "allow".to_owned(),
                message: err.to_string(),
            })?;
        }
        if let Some(zone) = &self.time_zone {
            config.site_time_zone = time_zone("time_zone", zone)?;
        }
        if let Some(realtime) = &self.realtime {
            config.handshake.realtime = match realtime {
                Flag::Bool(b) => *b,
                Flag::Other(value) => parse_bool("realtime", &value.text())?,
            };
        }
        if let Some(profile) = &self.reader_profile {
            config.default_reader_profile = reader_profile("reader_profile", profile)?;
        }
        for (serial, profile) in &self.reader_profiles {
            let setting = format!("reader_profiles.{serial}");
            config
                .reader_profiles
                .insert(serial.clone(), reader_profile(&setting, profile)?);
        }
        for (serial, zone) in &self.time_zones {
            let setting = format!("time_zones.{serial}");
            config
                .time_zones
                .insert(serial.clone(), time_zone(&setting, zone)?);
        }
        let stamps = [
            (
                "attlog",
                &self.stamps.attlog,
                &mut config.handshake.attlog_stamp,
            ),
            (
                "operlog",
                &self.stamps.operlog,
                &mut config.handshake.operlog_stamp,
            ),
            (
                "attphoto",
                &self.stamps.attphoto,
                &mut config.handshake.attphoto_stamp,
            ),
        ];
        for (name, value, stamp) in stamps {
            if let Some(value) = value {
                *stamp = stamp_value(&format!("stamps.{name}"), value)?;
            }
        }
        if let Some(minutes) = self.seen_retention_minutes {
            config.seen_retention = seen_retention(minutes)?;
        }
        config.set_ledger(self.ledger_url.clone(), self.ledger_secret.clone())
    }
}

/// The range `seen_retention_minutes` takes, in minutes. At least 10: a
/// record's identity is kept from the prune that removes its queue row
/// ([`queue::ROW_RETENTION`] after its capture, and up to a prune
/// interval later), and a shorter time would forget it at once. At most
/// 31 days: past a month the identities of a busy portal (some 15 MB a
/// day at 700 distinct reads a second) outweigh what a resend that late
/// could cost.
pub const SEEN_RETENTION_MINUTES: std::ops::RangeInclusive<u64> = 10..=31 * 24 * 60;

fn seen_retention(minutes: u64) -> Result<Millis, ConfigError> {
    if !SEEN_RETENTION_MINUTES.contains(&minutes) {
        return Err(invalid(
            "seen_retention_minutes",
            &format!(
                "expected whole minutes from {} to {} (31 days), got {minutes}",
                SEEN_RETENTION_MINUTES.start(),
                SEEN_RETENTION_MINUTES.end()
            ),
        ));
    }
    Ok(Millis::from_secs(minutes * 60))
}

fn invalid(setting: &str, message: &str) -> ConfigError {
    ConfigError::Invalid {
        setting: setting.to_owned(),
        message: message.to_owned(),
    }
}

fn time_zone(setting: &str, value: &Setting) -> Result<TerminalZone, ConfigError> {
    TerminalZone::parse(&value.text()).map_err(|error| ConfigError::Zone {
        setting: setting.to_owned(),
        error,
    })
}

/// A reader's profile: one that reads tags (a printer reads none, and
/// would refuse every read).
fn reader_profile(setting: &str, value: &str) -> Result<Profile, ConfigError> {
    Profile::parse(value)
        .filter(|profile| profile.reads_per_sec() > 0)
        .ok_or_else(|| {
            invalid(
                setting,
                "expected a reading profile: fxr90, mc3390xr or rfd40",
            )
        })
}

fn stamp_value(setting: &str, value: &Setting) -> Result<String, ConfigError> {
    let stamp = value.text();
    // `0` makes a terminal re-upload its whole table.
    if stamp.trim() == "0" || stamp.is_empty() || !stamp.chars().all(|c| c.is_ascii_alphanumeric())
    {
        return Err(invalid(setting, "expected None or a non-zero number"));
    }
    Ok(stamp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_string_false_is_false() {
        assert!(!parse_bool("x", "false").unwrap());
        assert!(!parse_bool("x", "FALSE").unwrap());
        assert!(!parse_bool("x", "0").unwrap());
        assert!(!parse_bool("x", "no").unwrap());
        assert!(parse_bool("x", "true").unwrap());
        assert!(parse_bool("x", "1").unwrap());
        assert!(parse_bool("x", "yes").unwrap());
        for bad in ["", "off", "flase", "2", "nope"] {
            assert!(
                matches!(parse_bool("x", bad), Err(ConfigError::Bool { .. })),
                "{bad}"
            );
        }
    }

    #[test]
    fn realtime_false_from_the_command_line_and_the_file_turns_it_off() {
        let mut config = ListenerConfig::default();
        config.apply_flags(TerminalFlags {
            realtime: Some(false),
            ..TerminalFlags::default()
        });
        assert!(!config.handshake.realtime);
        let mut config = ListenerConfig::default();
        config.apply_toml("realtime = \"false\"").unwrap();
        assert!(!config.handshake.realtime);
        assert!(ListenerConfig::default()
            .apply_toml("realtime = \"maybe\"")
            .is_err());
    }

    #[test]
    fn a_file_sets_everything_and_the_command_line_wins() {
        let mut config = ListenerConfig::default();
        config
            .apply_toml(
                r#"
                http = "127.0.0.1:9081"
                tcp = "127.0.0.1:9082"
                allow = ["A1", "B2"]
                time_zone = "+08:00"
                ledger_url = "http://ledger:8080/"
                ledger_secret = "0123456789abcdef"
                reader_profile = "mc3390xr"
                [time_zones]
                B2 = "+05:30"
                [stamps]
                attlog = 9999
                [reader_profiles]
                dock1 = "fxr90"
                "#,
            )
            .unwrap();
        assert_eq!(config.http_addr.port(), 9081);
        assert!(config.allow.check("A1").is_ok());
        assert!(config.allow.check("C3").is_err());
        let now = stockhop::time::UnixMs::from_civil(2026, 7, 1, 0, 0, 0);
        assert_eq!(config.time_zone("A1").offset_at(now).minutes(), 480);
        assert_eq!(config.time_zone("B2").offset_at(now).minutes(), 330);
        assert_eq!(config.handshake.attlog_stamp, "9999");
        let rates = config.reader_rates();
        assert_eq!(rates.reads_per_sec("dock1"), 700);
        assert_eq!(rates.reads_per_sec("sled"), 200);
        assert_eq!(config.ledger.as_ref().unwrap().url, "http://ledger:8080");
        config.apply_flags(TerminalFlags {
            allow: Some(Allowlist::parse("*").unwrap()),
            time_zone: Some(TerminalZone::parse("-03:00").unwrap()),
            realtime: None,
        });
        assert!(config.allow.check("C3").is_ok());
        assert_eq!(config.time_zone("A1").offset_at(now).minutes(), -180);
        assert_eq!(
            config.time_zone("B2").offset_at(now).minutes(),
            330,
            "a serial's own zone, kept"
        );
        assert_eq!(config.handshake.attlog_stamp, "9999", "the file's, kept");
    }

    #[test]
    fn bad_settings_are_errors_not_defaults() {
        for bad in [
            "allow = 3",
            "time_zone = \"+25:00\"",
            "[stamps]\nattlog = 0",
            "ledger_url = \"http://x\"",
            "ledger_url = \"ftp://x\"\nledger_secret = \"0123456789abcdef\"",
            "colour = \"blue\"",
            "reader_profile = \"zt411r\"",
            "[reader_profiles]\ndock1 = \"fx9\"",
            "time_zone = \"Europe/Atlantis\"",
            "[time_zones]\nA1 = true",
            "[stamps]\nattlog = \"None\"\nbadge = 1",
        ] {
            assert!(ListenerConfig::default().apply_toml(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_named_zone_is_read_per_serial_and_site_wide() {
        let mut config = ListenerConfig::default();
        config
            .apply_toml("time_zone = \"Europe/Berlin\"\n[time_zones]\nNY1 = \"America/New_York\"\n")
            .unwrap();
        let summer = stockhop::time::UnixMs::from_civil(2026, 7, 1, 0, 0, 0);
        assert_eq!(config.time_zone("B1").offset_at(summer).minutes(), 120);
        assert_eq!(config.time_zone("NY1").offset_at(summer).minutes(), -240);
        assert_eq!(config.time_zone("NY1").to_string(), "America/New_York");
    }

    #[test]
    fn an_unknown_key_is_refused_with_the_key_and_the_file_named() {
        let dir = std::env::temp_dir().join(format!("stockhop-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("terminals.toml");
        std::fs::write(
            &path,
            "allow = \"*\"\ntime_zone = \"UTC\"\nrealtme = false\n",
        )
        .unwrap();
        let err = ListenerConfig::load(Some(&path)).unwrap_err().to_string();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(err.starts_with(&path.display().to_string()), "{err}");
        assert!(err.contains("unknown field `realtme`"), "{err}");
        assert!(err.contains("line 3"), "{err}");
        let err = ConfigFile::parse("[stamps]\noplog = 1\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown field `oplog`"), "{err}");
    }

    #[test]
    fn seen_retention_is_a_week_unless_set_and_refused_out_of_its_range() {
        assert_eq!(
            ListenerConfig::default().seen_retention,
            Millis::from_secs(7 * 24 * 3600)
        );
        let mut config = ListenerConfig::default();
        ConfigFile::parse("seen_retention_minutes = 10\n")
            .unwrap()
            .apply(&mut config)
            .unwrap();
        assert_eq!(config.seen_retention, Millis::from_secs(600));
        for minutes in [0, 9, 31 * 24 * 60 + 1] {
            let err = ConfigFile::parse(&format!("seen_retention_minutes = {minutes}\n"))
                .unwrap()
                .apply(&mut ListenerConfig::default())
                .unwrap_err()
                .to_string();
            assert!(
                err.starts_with("seen_retention_minutes: expected whole minutes from 10"),
                "{err}"
            );
        }
        let err = ConfigFile::parse("seen_retention_minutes = \"ten\"\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("seen_retention_minutes"), "{err}");
    }

    #[test]
    fn a_file_written_back_reads_the_same() {
        let text = r#"
            allow = ["A1", "B2"]
            time_zone = "Europe/Berlin"
            realtime = "no"
            [time_zones]
            B2 = 330
            [stamps]
            attlog = 9999
            operlog = "None"
        "#;
        let file = ConfigFile::parse(text).unwrap();
        assert_eq!(ConfigFile::parse(&file.to_toml()).unwrap(), file);
    }

    #[test]
    fn an_allowlist_entry_no_serial_can_match_is_refused_naming_it() {
        for (text, entry) in [
            ("GATE-1;CLOCK-7", "GATE-1;CLOCK-7"),
            ("GATE-1,bad<serial>, dock 2", "bad<serial>"),
            ("GATE-1, dock 2", "dock 2"),
            ("bad<x>", "bad<x>"),
            ("A1,**", "**"),
        ] {
            let err = Allowlist::parse(text).unwrap_err();
            assert_eq!(err.entry, entry, "{text}");
            let message = err.to_string();
            assert!(message.contains(&format!("{entry:?}")), "{message}");
            assert!(
                message.contains("1 to 64 characters of A-Z a-z 0-9 . _ -"),
                "{message}"
            );
        }
        let long = "X".repeat(65);
        assert!(Allowlist::parse(&long).is_err());
        assert!(Allowlist::parse(&"X".repeat(64)).is_ok());
        let huge = "<".repeat(1000);
        assert_eq!(
            Allowlist::parse(&huge).unwrap_err().entry.chars().count(),
            129
        );
    }

    #[test]
    fn spaces_around_an_entry_and_empty_entries_are_dropped_and_serials_match_exactly() {
        let allow = Allowlist::parse(" GATE-1 ,, dock_2.b ,").unwrap();
        assert!(allow.check("GATE-1").is_ok());
        assert!(allow.check("dock_2.b").is_ok());
        assert!(allow.check("gate-1").is_err());
        assert!(allow.check(" GATE-1").is_err());
        assert_eq!(allow.describe(), "2 serial(s): GATE-1, dock_2.b");
        let many = (0..40)
            .map(|i| format!("T{i:02}"))
            .collect::<Vec<_>>()
            .join(",");
        assert_eq!(
            Allowlist::parse(&many).unwrap().describe(),
            "40 serials (T00 … T39)"
        );
        assert_eq!(Allowlist::parse("*").unwrap().describe(), "any serial (*)");
    }

    #[test]
    fn a_bad_allowlist_entry_in_the_file_names_the_file_and_the_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("terminals.toml");
        std::fs::write(&path, "allow = [\"GATE-1\", \"dock 2\"]\n").unwrap();
        let message = ListenerConfig::load(Some(&path)).unwrap_err().to_string();
        assert!(
            message.starts_with(&path.display().to_string()),
            "{message}"
        );
        assert!(
            message.contains("allow: allowlist entry \"dock 2\""),
            "{message}"
        );
        let mut config = ListenerConfig::default();
        assert!(config.apply_toml("allow = \"A;B\"").is_err());
    }

    #[test]
    fn no_allowlist_refuses_every_terminal() {
        assert!(Allowlist::default().check("A1").is_err());
        assert!(Allowlist::parse("").unwrap().check("A1").is_err());
        assert!(Allowlist::parse(" A1 , *").unwrap().check("Z").is_ok());
    }
}
