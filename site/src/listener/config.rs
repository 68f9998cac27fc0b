//! The listener's configuration: a TOML file, then the environment on top,
//! then the command line on top of that (in `main`).
//!
//! Terminals can do neither TLS nor authentication, so the serial allowlist
//! is the gate: empty by default, which refuses every terminal until the
//! site names its serials (or `*`). Booleans are parsed explicitly:
//! `true`/`1`/`yes` and `false`/`0`/`no`, anything else is an error, so a
//! setting of `"false"` can never read as true.
//!
//! ```toml
//! http = "0.0.0.0:8081"
//! tcp = "0.0.0.0:8082"
//! allow = ["0316144680030", "gate-dock-1"]   # or "*", or "A,B"
//! time_zone = "+08:00"                        # site-wide terminal time zone
//! realtime = true                             # iclock Realtime=1
//! ledger_url = "http://ledger.site:8080"      # absent: the in-process ledger
//! ledger_secret = "…"
//! [time_zones]
//! 0316144680030 = "+05:30"
//! [stamps]
//! attlog = "None"
//! operlog = "9999"
//! attphoto = "None"
//! ```

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use super::iclock::Handshake;
use super::rules::ReaderRates;
use super::zone::{OffsetError, UtcOffset};
use crate::ledger::devices::Profile;

pub const DEFAULT_HTTP_ADDR: &str = "0.0.0.0:8081";
pub const DEFAULT_TCP_ADDR: &str = "0.0.0.0:8082";

/// Environment variables read on top of the file.
pub const ENV_ALLOW: &str = "STOCKHOP_TERMINAL_ALLOW";
pub const ENV_TIME_ZONE: &str = "STOCKHOP_TERMINAL_TZ";
pub const ENV_REALTIME: &str = "STOCKHOP_TERMINAL_REALTIME";
pub const ENV_LEDGER_URL: &str = "STOCKHOP_LEDGER_URL";
pub const ENV_LEDGER_SECRET: &str = "STOCKHOP_LEDGER_SECRET";

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Toml {
        path: PathBuf,
        source: toml::de::Error,
    },
    #[error("{setting}: expected true/1/yes or false/0/no, got {value:?}")]
    Bool { setting: String, value: String },
    #[error("{setting}: {message}")]
    Invalid { setting: String, message: String },
    #[error("{setting}: {source}")]
    Offset {
        setting: String,
        source: OffsetError,
    },
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
    /// Parses `A,B,C` or `*`.
    pub fn parse(text: &str) -> Allowlist {
        let serials: HashSet<String> = text
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect();
        if serials.contains("*") {
            Allowlist::Any
        } else {
            Allowlist::Serials(serials)
        }
    }

    /// `Err` carries the reason logged for a refused serial.
    pub fn check(&self, serial: &str) -> Result<(), &'static str> {
        match self {
            Allowlist::Any => Ok(()),
            Allowlist::Serials(set) if set.contains(serial) => Ok(()),
            Allowlist::Serials(_) => Err("serial not in the terminal allowlist"),
            Allowlist::Unset => {
                Err("no terminal allowlist configured (set STOCKHOP_TERMINAL_ALLOW)")
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
    pub site_time_zone: UtcOffset,
    pub time_zones: HashMap<String, UtcOffset>,
    pub handshake: Handshake,
    pub ledger: Option<RemoteLedger>,
    /// RFID readers' device profiles by serial (`[reader_profiles]`); their
    /// reads per second size each reader's per-tag rate limit.
    pub reader_profiles: HashMap<String, Profile>,
    /// The profile of a reader not named there (`reader_profile`): the
    /// fixed gate, the reader the listener is for.
    pub default_reader_profile: Profile,
}

impl Default for ListenerConfig {
    fn default() -> ListenerConfig {
        ListenerConfig {
            http_addr: DEFAULT_HTTP_ADDR.parse().expect("valid default address"),
            tcp_addr: DEFAULT_TCP_ADDR.parse().expect("valid default address"),
            allow: Allowlist::Unset,
            site_time_zone: UtcOffset::UTC,
            time_zones: HashMap::new(),
            handshake: Handshake::default(),
            ledger: None,
            reader_profiles: HashMap::new(),
            default_reader_profile: Profile::Fxr90,
        }
    }
}

impl ListenerConfig {
    /// The time zone a terminal's local times are read in.
    pub fn time_zone(&self, serial: &str) -> UtcOffset {
        self.time_zones
            .get(serial)
            .copied()
            .unwrap_or(self.site_time_zone)
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

    /// Defaults, then `file` if given, then the process environment.
    pub fn load(file: Option<&Path>) -> Result<ListenerConfig, ConfigError> {
        let mut config = ListenerConfig::default();
        if let Some(path) = file {
            let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
                path: path.to_owned(),
                source,
            })?;
            config.apply_toml(&text).map_err(|err| match err {
                ConfigError::Toml { source, .. } => ConfigError::Toml {
                    path: path.to_owned(),
                    source,
                },
                other => other,
            })?;
        }
        config.apply_env(|name| std::env::var(name).ok())?;
        Ok(config)
    }

    /// Applies a TOML document on top of this configuration.
    pub fn apply_toml(&mut self, text: &str) -> Result<(), ConfigError> {
        let table: toml::Table = toml::from_str(text).map_err(|source| ConfigError::Toml {
            path: PathBuf::new(),
            source,
        })?;
        for (key, value) in &table {
            match key.as_str() {
                "http" => self.http_addr = addr(key, value)?,
                "tcp" => self.tcp_addr = addr(key, value)?,
                "allow" => {
                    self.allow = match value {
                        toml::Value::String(s) => Allowlist::parse(s),
                        toml::Value::Array(items) => {
                            let serials: Vec<&str> = items
                                .iter()
                                .map(|v| v.as_str().ok_or_else(|| invalid(key, "expected strings")))
                                .collect::<Result<_, _>>()?;
                            Allowlist::parse(&serials.join(","))
                        }
                        _ => return Err(invalid(key, "expected a string or a list of strings")),
                    }
                }
                "time_zone" => self.site_time_zone = offset(key, value)?,
                "realtime" => self.handshake.realtime = toml_bool(key, value)?,
                "reader_profile" => self.default_reader_profile = reader_profile(key, value)?,
                "reader_profiles" => {
                    let profiles = value
                        .as_table()
                        .ok_or_else(|| invalid(key, "expected a table of serial = profile"))?;
                    for (serial, profile) in profiles {
                        let setting = format!("reader_profiles.{serial}");
                        self.reader_profiles
                            .insert(serial.clone(), reader_profile(&setting, profile)?);
                    }
                }
                "ledger_url" | "ledger_secret" => {}
                "time_zones" => {
                    let zones = value
                        .as_table()
                        .ok_or_else(|| invalid(key, "expected a table of serial = offset"))?;
                    for (serial, zone) in zones {
                        let setting = format!("time_zones.{serial}");
                        self.time_zones
                            .insert(serial.clone(), offset(&setting, zone)?);
                    }
                }
                "stamps" => {
                    let stamps = value
                        .as_table()
                        .ok_or_else(|| invalid(key, "expected a table"))?;
                    for (name, stamp) in stamps {
                        let setting = format!("stamps.{name}");
                        let stamp = stamp_value(&setting, stamp)?;
                        match name.as_str() {
                            "attlog" => self.handshake.attlog_stamp = stamp,
                            "operlog" => self.handshake.operlog_stamp = stamp,
                            "attphoto" => self.handshake.attphoto_stamp = stamp,
                            _ => return Err(invalid(&setting, "unknown stamp")),
                        }
                    }
                }
                _ => return Err(invalid(key, "unknown setting")),
            }
        }
        let url = table
            .get("ledger_url")
            .map(|v| string("ledger_url", v))
            .transpose()?;
        let secret = table
            .get("ledger_secret")
            .map(|v| string("ledger_secret", v))
            .transpose()?;
        self.set_ledger(url, secret)
    }

    /// Applies environment variables, read through `var`.
    pub fn apply_env(&mut self, var: impl Fn(&str) -> Option<String>) -> Result<(), ConfigError> {
        if let Some(allow) = var(ENV_ALLOW) {
            self.allow = Allowlist::parse(&allow);
        }
        if let Some(zone) = var(ENV_TIME_ZONE) {
            self.site_time_zone = zone.parse().map_err(|source| ConfigError::Offset {
                setting: ENV_TIME_ZONE.to_owned(),
                source,
            })?;
        }
        if let Some(realtime) = var(ENV_REALTIME) {
            self.handshake.realtime = parse_bool(ENV_REALTIME, &realtime)?;
        }
        self.set_ledger(var(ENV_LEDGER_URL), var(ENV_LEDGER_SECRET))
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

fn toml_bool(key: &str, value: &toml::Value) -> Result<bool, ConfigError> {
    match value {
        toml::Value::Boolean(b) => Ok(*b),
        toml::Value::String(s) => parse_bool(key, s),
        toml::Value::Integer(i) => parse_bool(key, &i.to_string()),
        other => parse_bool(key, &other.to_string()),
    }
}

fn invalid(setting: &str, message: &str) -> ConfigError {
    ConfigError::Invalid {
        setting: setting.to_owned(),
        message: message.to_owned(),
    }
}

fn string(key: &str, value: &toml::Value) -> Result<String, ConfigError> {
    value
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| invalid(key, "expected a string"))
}

fn addr(key: &str, value: &toml::Value) -> Result<SocketAddr, ConfigError> {
    value
        .as_str()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| invalid(key, "expected an address like 0.0.0.0:8081"))
}

fn offset(key: &str, value: &toml::Value) -> Result<UtcOffset, ConfigError> {
    let text = match value {
        toml::Value::String(s) => s.clone(),
        toml::Value::Integer(i) => i.to_string(),
        _ => return Err(invalid(key, "expected an offset like \"+05:30\"")),
    };
    text.parse().map_err(|source| ConfigError::Offset {
        setting: key.to_owned(),
        source,
    })
}

/// A reader's profile: one that reads tags (a printer reads none, and
/// would refuse every read).
fn reader_profile(key: &str, value: &toml::Value) -> Result<Profile, ConfigError> {
    value
        .as_str()
        .and_then(Profile::parse)
        .filter(|profile| profile.reads_per_sec() > 0)
        .ok_or_else(|| invalid(key, "expected a reading profile: fxr90, mc3390xr or rfd40"))
}

fn stamp_value(key: &str, value: &toml::Value) -> Result<String, ConfigError> {
    let stamp = match value {
        toml::Value::String(s) => s.clone(),
        toml::Value::Integer(i) => i.to_string(),
        _ => return Err(invalid(key, "expected None or a number")),
    };
    // `0` makes a terminal re-upload its whole table.
    if stamp.trim() == "0" || stamp.is_empty() || !stamp.chars().all(|c| c.is_ascii_alphanumeric())
    {
        return Err(invalid(key, "expected None or a non-zero number"));
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
    fn realtime_false_from_the_environment_and_the_file_turns_it_off() {
        let mut config = ListenerConfig::default();
        config
            .apply_env(|name| (name == ENV_REALTIME).then(|| "false".to_owned()))
            .unwrap();
        assert!(!config.handshake.realtime);
        let mut config = ListenerConfig::default();
        config.apply_toml("realtime = \"false\"").unwrap();
        assert!(!config.handshake.realtime);
        assert!(ListenerConfig::default()
            .apply_toml("realtime = \"maybe\"")
            .is_err());
    }

    #[test]
    fn a_file_sets_everything_and_the_environment_wins() {
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
        assert_eq!(config.time_zone("A1").minutes(), 480);
        assert_eq!(config.time_zone("B2").minutes(), 330);
        assert_eq!(config.handshake.attlog_stamp, "9999");
        let rates = config.reader_rates();
        assert_eq!(rates.reads_per_sec("dock1"), 700);
        assert_eq!(rates.reads_per_sec("sled"), 200);
        assert_eq!(config.ledger.as_ref().unwrap().url, "http://ledger:8080");
        config
            .apply_env(|name| (name == ENV_ALLOW).then(|| "*".to_owned()))
            .unwrap();
        assert!(config.allow.check("C3").is_ok());
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
        ] {
            assert!(ListenerConfig::default().apply_toml(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn no_allowlist_refuses_every_terminal() {
        assert!(Allowlist::default().check("A1").is_err());
        assert!(Allowlist::parse("").check("A1").is_err());
        assert!(Allowlist::parse(" A1 , *").check("Z").is_ok());
    }
}
