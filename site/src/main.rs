//! `stockhop-site`: the site server's command line.

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand};
use stockhop::time::UnixMs;
use stockhop_site::central;
use stockhop_site::db::{Database, Db};
use stockhop_site::ledger::{self, devices::Profile};
use stockhop_site::listener::config::{parse_bool, Allowlist, TerminalFlags};
use stockhop_site::listener::zone::TerminalZone;
use stockhop_site::listener::ListenerConfig;
use stockhop_site::site::{CentralConfig, Site, SiteConfig};
use stockhop_site::view;

#[derive(Parser)]
#[command(
    name = "stockhop-site",
    version,
    about = "Stockhop site server: ledger, terminal listener, PWA"
)]
struct Cli {
    /// Log lines on stderr as text (no colour unless stderr is a terminal)
    /// or as JSON objects, one a line, for a log shipper.
    #[arg(
        long,
        global = true,
        env = "STOCKHOP_LOG_FORMAT",
        value_enum,
        default_value = "text"
    )]
    log_format: LogFormat,
    /// Where the ledger lives, for every command: unset is the SQLite file
    /// in the data directory, a `postgres://USER@HOST:PORT/DB` URL is
    /// PostgreSQL, anything else is the path of an SQLite file. On
    /// PostgreSQL the data directory still keeps the terminal listener's
    /// queue and the site's certificates.
    #[arg(long, global = true, env = "STOCKHOP_DATABASE", hide_env_values = true)]
    database: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

/// Where and how the site serves HTTPS.
#[derive(clap::Args)]
struct HttpsArgs {
    /// Address of the PWA and the handheld API over TLS (what handhelds on
    /// the LAN use: browsers run service workers only in a secure context).
    #[arg(long, env = "STOCKHOP_HTTPS", default_value = "0.0.0.0:8443")]
    https: SocketAddr,
    /// The site's own certificate chain (PEM); with --tls-key. Without
    /// them the site issues its own from a site CA in DATA/tls/.
    #[arg(long, env = "STOCKHOP_TLS_CERT", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The private key (PEM) of --tls-cert.
    #[arg(long, env = "STOCKHOP_TLS_KEY", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// A further name or address the site is reached by (repeatable);
    /// the issued certificate always covers localhost, 127.0.0.1, ::1 and
    /// this machine's host name. The first one is the host of setup links.
    #[arg(long = "tls-name", env = "STOCKHOP_TLS_NAMES", value_delimiter = ',')]
    tls_names: Vec<String>,
}

impl HttpsArgs {
    /// The `https://HOST:PORT` handhelds are set up with: the first
    /// --tls-name, else this machine's host name; `port` is the bound one.
    fn site_url(&self, port: u16) -> String {
        view::enroll::site_url(self.tls_names.first().map(String::as_str), port)
    }
}

/// `serve`'s arguments.
#[derive(clap::Args)]
struct ServeArgs {
    /// Data directory holding the SQLite database (created on first start).
    #[arg(long, env = "STOCKHOP_DATA", default_value = "./stockhop-data")]
    data: PathBuf,
    /// Plain-HTTP address: the PWA and the handheld API for loopback
    /// clients; /ca.crt, /trust.html and /healthz for everyone.
    #[arg(long, env = "STOCKHOP_HTTP", default_value = "127.0.0.1:8080")]
    http: SocketAddr,
    #[command(flatten)]
    https: HttpsArgs,
    /// Folder of the PWA shell (default: ./www, else the checkout's www/).
    #[arg(long, env = "STOCKHOP_WWW")]
    www: Option<PathBuf>,
    /// Shared secret for HMAC-signed terminal batches: this site's
    /// ledger verifies batches from remote listeners with it (without it
    /// that endpoint is off), and with --ledger-url this site's listener
    /// signs the batches it forwards with it.
    #[arg(long, env = "STOCKHOP_LEDGER_SECRET", hide_env_values = true)]
    ledger_secret: Option<String>,
    /// Free space on the data directory's file system below which sync and
    /// heartbeats are answered 503 STORAGE_FULL (a number with an optional
    /// unit: B, KiB, MiB, GiB).
    #[arg(long = "min-free", env = "STOCKHOP_MIN_FREE", default_value = "256MiB", value_parser = stockhop_site::storage::parse_bytes)]
    min_free: u64,
    /// The site's time zone (a name of the IANA database, such as
    /// Europe/Berlin) for every time the site's view and the handhelds
    /// show; default the machine's.
    #[arg(long = "site-tz", env = "STOCKHOP_SITE_TZ")]
    site_tz: Option<String>,
    /// POST alerts here as JSON (`{"alerts":[…]}`): one `firing` when a
    /// condition starts and one `resolved` when it ends.
    #[arg(long = "alert-webhook", env = "STOCKHOP_ALERT_WEBHOOK")]
    alert_webhook: Option<String>,
    /// Sign alert POSTs with this shared secret, as terminal batches are.
    #[arg(
        long = "alert-secret",
        env = "STOCKHOP_ALERT_SECRET",
        hide_env_values = true,
        requires = "alert_webhook"
    )]
    alert_secret: Option<String>,
    #[command(flatten)]
    central: CentralArgs,
    #[command(flatten)]
    terminal: TerminalArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Run the site server.
    Serve(Box<ServeArgs>),
    /// Manage the devices that may sync with this site.
    Device {
        #[command(subcommand)]
        command: DeviceCommand,
    },
    /// Manage the people who may open the site's view (/site/).
    Admin {
        #[command(subcommand)]
        command: AdminCommand,
    },
    /// Manage accounting periods.
    Period {
        #[command(subcommand)]
        command: PeriodCommand,
    },
    /// Load reference data from a CSV file with a header row, all or
    /// nothing: a bad row fails the whole file with FILE:LINE: reason.
    /// FILE `-` reads standard input (named `stdin` in messages).
    Import {
        #[arg(value_enum)]
        kind: ledger::import::Kind,
        /// The CSV file (UTF-8), or `-` for standard input.
        file: PathBuf,
        #[arg(long, env = "STOCKHOP_DATA", default_value = "./stockhop-data")]
        data: PathBuf,
    },
    /// Count sessions: open one for a zone or a bin, approve its variance,
    /// or cancel it.
    Count {
        #[command(subcommand)]
        command: CountCommand,
    },
    /// Goods received notes.
    Grn {
        #[command(subcommand)]
        command: GrnCommand,
    },
    /// Network label printers, polled and printed to on their raw port.
    Printer {
        #[command(subcommand)]
        command: PrinterCommand,
    },
    /// On a central: the sites that forward to it.
    Central {
        #[command(subcommand)]
        command: CentralCommand,
    },
    /// Copy the SQLite ledger to DEST while the site serves (SQLite's online
    /// backup): a consistent copy a site can be started on. PostgreSQL
    /// ledgers are backed up with pg_dump.
    Backup {
        dest: PathBuf,
        #[arg(long, env = "STOCKHOP_DATA", default_value = "./stockhop-data")]
        data: PathBuf,
    },
}

#[derive(Subcommand)]
enum PrinterCommand {
    /// Add a label printer at HOST:PORT (port 9100 when not given); the
    /// site asks its host status every 30 s while serving.
    Add {
        printer_id: String,
        #[arg(long)]
        address: String,
        #[arg(long, value_enum, default_value = "zt411r")]
        profile: Profile,
        /// A handheld whose station prints here (receive with encode);
        /// repeat for several.
        #[arg(long = "station")]
        stations: Vec<String>,
        #[arg(long, env = "STOCKHOP_DATA", default_value = "./stockhop-data")]
        data: PathBuf,
    },
    /// Move a printer to another address, or have more stations print at
    /// it (`device revoke ID` takes a printer out of service).
    Set {
        printer_id: String,
        /// Its new HOST:PORT (port 9100 when not given).
        #[arg(long)]
        address: Option<String>,
        /// A handheld whose station prints here from now on; repeat for
        /// several.
        #[arg(long = "station")]
        stations: Vec<String>,
        #[arg(long, env = "STOCKHOP_DATA", default_value = "./stockhop-data")]
        data: PathBuf,
    },
}

#[derive(Subcommand)]
enum CentralCommand {
    /// Give a site its own secret; prints it (and nothing else) on stdout,
    /// the one time it is shown. The site signs with it (its
    /// --central-secret); the central then takes that site's batches only
    /// when that secret signed them.
    AddSite {
        site_id: String,
        #[arg(long, env = "STOCKHOP_DATA", default_value = "./stockhop-data")]
        data: PathBuf,
    },
}

#[derive(Subcommand)]
enum CountCommand {
    /// Open a count for a zone of a location, or for one bin of it, with
    /// the snapshot of the units expected there; prints its count_id (and
    /// nothing else).
    Open {
        #[arg(long)]
        location: String,
        #[arg(long)]
        zone: String,
        /// Count only this bin of the zone (the rest of the zone is left
        /// alone).
        #[arg(long)]
        bin: Option<String>,
        #[arg(long, env = "STOCKHOP_DATA", default_value = "./stockhop-data")]
        data: PathBuf,
    },
    /// Cancel a count opened by mistake: it closes and is never approved;
    /// nothing it counted posts.
    Cancel {
        count_id: String,
        #[arg(long, env = "STOCKHOP_DATA", default_value = "./stockhop-data")]
        data: PathBuf,
    },
    /// Post a closed count's variance: missing units become missing,
    /// unexpected ones move into the bin they were counted in.
    Approve {
        count_id: String,
        #[arg(long, env = "STOCKHOP_DATA", default_value = "./stockhop-data")]
        data: PathBuf,
    },
}

#[derive(Subcommand)]
enum GrnCommand {
    /// Accept a GRN's short and excess lines as they stand: it is complete.
    Resolve {
        grn: String,
        #[arg(long, env = "STOCKHOP_DATA", default_value = "./stockhop-data")]
        data: PathBuf,
    },
}

#[derive(Subcommand)]
enum DeviceCommand {
    /// Add a device; prints its bearer token (and nothing else) on
    /// stdout, and its setup link (to open on the handheld) on stderr.
    Add {
        device_id: String,
        #[arg(long, value_enum)]
        profile: Profile,
        /// Post its items for real at once (otherwise they land as simulation).
        #[arg(long)]
        commissioned: bool,
        #[arg(long, env = "STOCKHOP_DATA", default_value = "./stockhop-data")]
        data: PathBuf,
        /// The site's HTTPS address for the setup link (default: the one
        /// `serve` recorded, else from --https and the first --tls-name).
        #[arg(long, env = "STOCKHOP_SITE_URL")]
        site_url: Option<String>,
        #[command(flatten)]
        https: HttpsArgs,
    },
    /// Commission a device: its items post for real from now on.
    Commission {
        device_id: String,
        #[arg(long, env = "STOCKHOP_DATA", default_value = "./stockhop-data")]
        data: PathBuf,
    },
    /// List the devices, one a line: id, profile, commissioned or not,
    /// when added, and when revoked.
    List {
        #[arg(long, env = "STOCKHOP_DATA", default_value = "./stockhop-data")]
        data: PathBuf,
    },
    /// Print a device's setup link again, with a new token (the site keeps
    /// only tokens' hashes): the old link and token stop working.
    Link {
        device_id: String,
        #[arg(long, env = "STOCKHOP_DATA", default_value = "./stockhop-data")]
        data: PathBuf,
        /// The site's HTTPS address for the link (default: the one `serve`
        /// recorded, else from --https and the first --tls-name).
        #[arg(long, env = "STOCKHOP_SITE_URL")]
        site_url: Option<String>,
        #[command(flatten)]
        https: HttpsArgs,
    },
    /// Revoke a device: its token stops working at once; its hops stay.
    Revoke {
        device_id: String,
        #[arg(long, env = "STOCKHOP_DATA", default_value = "./stockhop-data")]
        data: PathBuf,
    },
    /// Close the session a device has open (a handheld reset or broken
    /// mid-shift), with its mode's closing work: its operator can open a
    /// session again.
    CloseSession {
        device_id: String,
        #[arg(long, env = "STOCKHOP_DATA", default_value = "./stockhop-data")]
        data: PathBuf,
    },
}

#[derive(Subcommand)]
enum AdminCommand {
    /// Add an admin; prints its token (and nothing else) on stdout. The
    /// site keeps only its SHA-256.
    Add {
        name: String,
        #[arg(long, env = "STOCKHOP_DATA", default_value = "./stockhop-data")]
        data: PathBuf,
    },
    /// List the admins, one a line: name and when it was added.
    List {
        #[arg(long, env = "STOCKHOP_DATA", default_value = "./stockhop-data")]
        data: PathBuf,
    },
    /// Revoke an admin: its token and its signed-in sessions stop working.
    Revoke {
        name: String,
        #[arg(long, env = "STOCKHOP_DATA", default_value = "./stockhop-data")]
        data: PathBuf,
    },
}

#[derive(Subcommand)]
enum PeriodCommand {
    /// Close the books up to UNTIL (RFC 3339): later hops captured before
    /// it are booked at UNTIL.
    Close {
        until: String,
        #[arg(long, env = "STOCKHOP_DATA", default_value = "./stockhop-data")]
        data: PathBuf,
    },
}

/// Past one site: this site forwarding its hops to a central, or this
/// server being the central.
#[derive(clap::Args)]
struct CentralArgs {
    /// Forward every applied hop to this central (https://host:port, or
    /// http:// on a private link), exactly once, through the outbox; needs
    /// --central-secret and --site-id.
    #[arg(
        long = "central-url",
        env = "STOCKHOP_CENTRAL_URL",
        requires_all = ["central_secret", "site_id"]
    )]
    central_url: Option<String>,
    /// Shared secret for HMAC-signed site batches: with --central-url this
    /// site signs what it forwards with it; without, this server is a
    /// central and takes site batches signed with it (without it that
    /// endpoint is off).
    #[arg(
        long = "central-secret",
        env = "STOCKHOP_CENTRAL_SECRET",
        hide_env_values = true
    )]
    central_secret: Option<String>,
    /// This site's id at the central (with --central-url).
    #[arg(long = "site-id", env = "STOCKHOP_SITE_ID")]
    site_id: Option<String>,
    /// PEM file of the CA (one or more certificates) an https:// central's
    /// certificate must chain to, e.g. the central's site CA from its
    /// /ca.crt; without it, the system's trust store.
    #[arg(
        long = "central-ca",
        env = "STOCKHOP_CENTRAL_CA",
        requires = "central_url"
    )]
    central_ca: Option<PathBuf>,
}

/// The terminal listener's settings; the command line (a flag, or else its
/// environment variable) wins over the file.
#[derive(clap::Args)]
struct TerminalArgs {
    /// Terminal HTTP port: iclock/ADMS push and Zebra tag events (default 0.0.0.0:8081).
    #[arg(long = "terminal-http", env = "STOCKHOP_TERMINAL_HTTP")]
    terminal_http: Option<SocketAddr>,
    /// Terminal framed JSON TCP port (default 0.0.0.0:8082).
    #[arg(long = "terminal-tcp", env = "STOCKHOP_TERMINAL_TCP")]
    terminal_tcp: Option<SocketAddr>,
    /// TOML file with the serial allowlist, time zones and handshake stamps.
    #[arg(long = "terminal-config", env = "STOCKHOP_TERMINAL_CONFIG")]
    terminal_config: Option<PathBuf>,
    /// Terminal serials let in, comma-separated, `*` for any (over the
    /// file's `allow`; unset everywhere, every terminal is refused). Each
    /// is 1-64 characters of A-Z a-z 0-9 . _ -; any other entry stops the start.
    #[arg(
        long = "terminal-allow",
        env = "STOCKHOP_TERMINAL_ALLOW",
        value_name = "SERIALS",
        value_parser = |text: &str| Allowlist::parse(text).map_err(|err| {
            format!("{err}; given by --terminal-allow or its variable STOCKHOP_TERMINAL_ALLOW")
        })
    )]
    terminal_allow: Option<Allowlist>,
    /// Site-wide terminal time zone: an IANA name (Europe/Berlin) or a
    /// fixed offset (+05:30), over the file's `time_zone` (default UTC).
    #[arg(
        long = "terminal-tz",
        env = "STOCKHOP_TERMINAL_TZ",
        value_name = "ZONE",
        value_parser = TerminalZone::parse
    )]
    terminal_tz: Option<TerminalZone>,
    /// iclock handshake's Realtime: true/1/yes or false/0/no, over the
    /// file's `realtime` (default true).
    #[arg(
        long = "terminal-realtime",
        env = "STOCKHOP_TERMINAL_REALTIME",
        value_name = "BOOL",
        value_parser = |text: &str| parse_bool("--terminal-realtime", text)
            .map_err(|_| "expected true/1/yes or false/0/no")
    )]
    terminal_realtime: Option<bool>,
    /// Forward terminal records to this remote ledger (http://host:port)
    /// instead of this site's own; needs --ledger-secret.
    #[arg(long = "ledger-url", env = "STOCKHOP_LEDGER_URL")]
    ledger_url: Option<String>,
    /// PEM file of the CA (one or more certificates) an https:// remote
    /// ledger's certificate must chain to, e.g. that site's CA from its
    /// /ca.crt; without it, the system's trust store.
    #[arg(long = "ledger-ca", env = "STOCKHOP_LEDGER_CA")]
    ledger_ca: Option<PathBuf>,
}

impl TerminalArgs {
    fn config(self, ledger_secret: Option<String>) -> anyhow::Result<ListenerConfig> {
        let mut config = ListenerConfig::load(self.terminal_config.as_deref())?;
        config.apply_flags(TerminalFlags {
            allow: self.terminal_allow,
            time_zone: self.terminal_tz,
            realtime: self.terminal_realtime,
        });
        if let Some(http) = self.terminal_http {
            config.http_addr = http;
        }
        if let Some(tcp) = self.terminal_tcp {
            config.tcp_addr = tcp;
        }
        config.set_ledger(self.ledger_url, ledger_secret)?;
        Ok(config)
    }
}

fn init_logs(format: LogFormat) {
    let logs = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr);
    match format {
        // Colour only for a person at a terminal: a site server's stderr
        // usually goes to a file or the journal.
        LogFormat::Text => logs.with_ansi(std::io::stderr().is_terminal()).init(),
        LogFormat::Json => logs.json().with_ansi(false).init(),
    }
}

/// A command that fails says why on stderr, as one line of its causes
/// (`opening a count of L-1/Z-9: no bins in zone …`), and exits 1. Never
/// the `Debug` form `main` returning an error would print: with
/// `RUST_BACKTRACE` set (as a shell or a service manager may leave it),
/// that adds a stack backtrace a site engineer cannot act on.
fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logs(cli.log_format);
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    let database = cli.database.as_deref();
    match cli.command {
        Command::Serve(args) => {
            let runtime = tokio::runtime::Runtime::new()?;
            runtime.block_on(serve(*args, database))
        }
        Command::Device { command } => device(command, database),
        Command::Admin { command } => admins(command, database),
        Command::Period {
            command: PeriodCommand::Close { until, data },
        } => {
            let until = UnixMs::parse_rfc3339(&until).context("reading UNTIL")?;
            let db = open(&data, database)?;
            db.call_blocking(|conn| ledger::periods::close(conn, until, ledger::wall_clock()))
                .map_err(|err| anyhow::anyhow!("{err}"))?;
            tracing::info!(%until, "period closed");
            Ok(())
        }
        Command::Import { kind, file, data } => {
            let db = open(&data, database)?;
            if file.as_os_str() == ledger::import::STDIN_ARG && std::io::stdin().is_terminal() {
                // Typed by hand, or a forgotten `< FILE`: say what ends it.
                eprintln!(
                    "reading {} CSV from standard input ({}); end it with Ctrl-D",
                    kind.name(),
                    kind.columns().join(",")
                );
            }
            // Turn by turn on the site's database, resting between turns,
            // so a serving site keeps syncing meanwhile.
            let mut name = file.display().to_string();
            let imported = ledger::import::open_input(&file).and_then(|(named, input)| {
                name = named;
                ledger::import::run(
                    &db,
                    kind,
                    &name,
                    ledger::import::Source::Csv(input),
                    &ledger::wall_clock,
                )
            });
            match imported {
                Ok(summary) => {
                    let rows = match summary.rows {
                        1 => "1 row".to_owned(),
                        n => format!("{n} rows"),
                    };
                    eprintln!("{name}: {rows}, {} changed", summary.changed);
                    Ok(())
                }
                // The reason alone, as FILE:LINE: reason, for the person
                // fixing the file (anyhow would prefix it with "Error: ").
                Err(err) => {
                    eprintln!("{err}");
                    if matches!(
                        err,
                        ledger::import::ImportError::Invalid { .. }
                            | ledger::import::ImportError::NotCsv { .. }
                    ) {
                        eprintln!("nothing was imported: fix the file and import it again");
                    }
                    std::process::exit(1);
                }
            }
        }
        Command::Count { command } => count(command, database),
        Command::Printer {
            command:
                PrinterCommand::Add {
                    printer_id,
                    address,
                    profile,
                    stations,
                    data,
                },
        } => {
            let db = open(&data, database)?;
            let printer = db
                .call_blocking(|conn| {
                    stockhop_site::printers::store::add(
                        conn,
                        &printer_id,
                        &address,
                        profile,
                        &stations,
                        ledger::wall_clock(),
                    )
                })
                .map_err(|err| anyhow::anyhow!("adding printer {printer_id}: {err}"))?;
            eprintln!("printer {printer_id} at {}", printer.address());
            Ok(())
        }
        Command::Printer {
            command:
                PrinterCommand::Set {
                    printer_id,
                    address,
                    stations,
                    data,
                },
        } => {
            if address.is_none() && stations.is_empty() {
                anyhow::bail!("printer set {printer_id}: give --address, --station or both");
            }
            let db = open(&data, database)?;
            let printer = db
                .call_blocking(|conn| {
                    stockhop_site::printers::store::update(
                        conn,
                        &printer_id,
                        address.as_deref(),
                        &stations,
                    )
                })
                .map_err(|err| anyhow::anyhow!("changing printer {printer_id}: {err}"))?;
            eprintln!("printer {printer_id} at {}", printer.address());
            Ok(())
        }
        Command::Central {
            command: CentralCommand::AddSite { site_id, data },
        } => {
            let db = open(&data, database)?;
            let secret = db
                .call_blocking(|conn| central::secrets::add(conn, &site_id, ledger::wall_clock()))
                .map_err(|err| anyhow::anyhow!("adding site {site_id}: {err}"))?;
            println!("{secret}");
            Ok(())
        }
        Command::Backup { dest, data } => {
            let Database::Sqlite(source) = Database::from_arg(database, &data) else {
                anyhow::bail!(
                    "this ledger is on PostgreSQL: back it up with pg_dump (see the README)"
                );
            };
            let summary = stockhop_site::backup::backup(&source, &dest)
                .with_context(|| format!("backing up {}", source.display()))?;
            eprintln!(
                "{}: {} bytes in {:.1} s",
                dest.display(),
                summary.bytes,
                summary.elapsed.as_secs_f64()
            );
            Ok(())
        }
        Command::Grn {
            command: GrnCommand::Resolve { grn, data },
        } => {
            let db = open(&data, database)?;
            db.call_blocking(|conn| ledger::modes::receive::resolve(conn, &grn))
                .map_err(|err| anyhow::anyhow!("resolving GRN {grn}: {err}"))?;
            eprintln!("GRN {grn} is complete");
            Ok(())
        }
    }
}

fn count(command: CountCommand, database: Option<&str>) -> anyhow::Result<()> {
    use ledger::modes::cycle_count;
    match command {
        CountCommand::Open {
            location,
            zone,
            bin,
            data,
        } => {
            let db = open(&data, database)?;
            let opened = db
                .call_blocking(|conn| {
                    let now = ledger::wall_clock();
                    cycle_count::open_told(conn, &location, &zone, bin.as_deref(), now)
                })
                .map_err(|err| {
                    let place = cycle_count::place(&location, &zone, bin.as_deref());
                    anyhow::anyhow!("opening a count of {place}: {err}")
                })?;
            // Opened all the same; the warning is the one the admin API
            // answers.
            if let Some(warning) = &opened.warning {
                eprintln!("warning: {warning}");
            }
            // The id alone on its line, for scripts (`$(stockhop-site count open …)`).
            println!("{}", opened.count_id);
            Ok(())
        }
        CountCommand::Cancel { count_id, data } => {
            let db = open(&data, database)?;
            db.call_blocking(|conn| cycle_count::cancel(conn, &count_id, ledger::wall_clock()))
                .map_err(|err| anyhow::anyhow!("cancelling count {count_id}: {err}"))?;
            eprintln!("count {count_id} is cancelled: nothing it counted posts");
            Ok(())
        }
        CountCommand::Approve { count_id, data } => {
            let db = open(&data, database)?;
            let approval = db
                .call_blocking(|conn| cycle_count::approve(conn, &count_id, ledger::wall_clock()))
                .map_err(|err| anyhow::anyhow!("approving count {count_id}: {err}"))?;
            eprintln!(
                "count {count_id} approved: {} adjustments posted",
                approval.hop_ids.len()
            );
            for epc in &approval.moved_since {
                eprintln!("  {epc} was not seen but moved after the count opened: left as it is");
            }
            Ok(())
        }
    }
}

/// Opens the ledger of a site for a command other than `serve`. A site's
/// database is made only in a folder that exists (one `serve` made on its
/// first start, or one the site engineer made to set the site up before
/// it first serves), so a forgotten or mistyped --data, which names a
/// folder that is not there, is refused rather than answered from a new,
/// empty site.
fn open(data: &Path, database: Option<&str>) -> anyhow::Result<Db> {
    if let Database::Sqlite(path) = Database::from_arg(database, data) {
        let folder = path
            .parent()
            .filter(|dir| !dir.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        anyhow::ensure!(
            path.exists() || folder.is_dir(),
            "{}",
            stockhop_site::db::no_site_at(&path)
        );
    }
    open_or_make(data, database)
}

/// Opens the site's ledger, making it on `serve`'s first start.
fn open_or_make(data: &Path, database: Option<&str>) -> anyhow::Result<Db> {
    Ok(stockhop_site::site::open_or_make(data, database)?)
}

fn device(command: DeviceCommand, database: Option<&str>) -> anyhow::Result<()> {
    match command {
        DeviceCommand::Add {
            device_id,
            profile,
            commissioned,
            data,
            site_url,
            https,
        } => {
            let db = open(&data, database)?;
            let token = db
                .call_blocking(|conn| {
                    ledger::devices::add(
                        conn,
                        &device_id,
                        profile,
                        commissioned,
                        ledger::wall_clock(),
                    )
                })
                .map_err(|err| anyhow::anyhow!("adding device {device_id}: {err}"))?;
            println!("{token}");
            let site = link_site(&db, site_url, &https)?;
            let link = view::enroll::setup_link(&site, &device_id, &token);
            eprintln!("setup link for {device_id}: {link}");
            Ok(())
        }
        DeviceCommand::List { data } => {
            let db = open(&data, database)?;
            for device in db.call_blocking(|conn| ledger::devices::list(conn))? {
                let revoked = device
                    .revoked_at
                    .map_or_else(String::new, |at| format!("\trevoked {at}"));
                println!(
                    "{}\t{}\t{}\t{}{revoked}",
                    device.device_id,
                    device.profile,
                    if device.commissioned {
                        "commissioned"
                    } else {
                        "simulation"
                    },
                    device.added_at,
                );
            }
            Ok(())
        }
        DeviceCommand::Link {
            device_id,
            data,
            site_url,
            https,
        } => {
            let db = open(&data, database)?;
            let token = db
                .call_blocking(|conn| ledger::devices::relink(conn, &device_id))
                .map_err(|err| anyhow::anyhow!("linking device {device_id}: {err}"))?;
            let site = link_site(&db, site_url, &https)?;
            println!("{}", view::enroll::setup_link(&site, &device_id, &token));
            eprintln!("the earlier setup link and token of {device_id} no longer work");
            Ok(())
        }
        DeviceCommand::Revoke { device_id, data } => {
            let db = open(&data, database)?;
            db.call_blocking(|conn| {
                ledger::devices::revoke(conn, &device_id, ledger::wall_clock())
            })
            .map_err(|err| anyhow::anyhow!("revoking {device_id}: {err}"))?;
            eprintln!("device {device_id} revoked: its token no longer works");
            Ok(())
        }
        DeviceCommand::CloseSession { device_id, data } => {
            let db = open(&data, database)?;
            let closed = db
                .call_blocking(|conn| {
                    ledger::session_close::close_for_device(conn, &device_id, ledger::wall_clock())
                })
                .map_err(|err| anyhow::anyhow!("closing {device_id}'s session: {err}"))?;
            eprintln!(
                "session {} of {device_id} ({} by {}) closed: its operator can open a session again",
                closed.session_id,
                closed.mode.as_deref().unwrap_or("no mode"),
                closed.operator_id.as_deref().unwrap_or("no operator"),
            );
            Ok(())
        }
        DeviceCommand::Commission { device_id, data } => {
            let db = open(&data, database)?;
            db.call_blocking(|conn| ledger::devices::commission(conn, &device_id))
                .map_err(|err| anyhow::anyhow!("commissioning {device_id}: {err}"))?;
            tracing::info!(%device_id, "device commissioned");
            Ok(())
        }
    }
}

/// Where a setup link points: --site-url, else the address `serve`
/// recorded at its last start (the port it really serves), else one made
/// from --https and --tls-name, saying so.
fn link_site(db: &Db, site_url: Option<String>, https: &HttpsArgs) -> anyhow::Result<String> {
    if let Some(site) = site_url {
        return Ok(site);
    }
    if let Some(site) = db.call_blocking(|conn| view::enroll::remembered_site_url(conn))? {
        return Ok(site);
    }
    let site = https.site_url(https.https.port());
    eprintln!(
        "the site has not been served from this data yet: the link assumes {site} (--https {}); give --site-url if it serves elsewhere",
        https.https
    );
    Ok(site)
}

fn admins(command: AdminCommand, database: Option<&str>) -> anyhow::Result<()> {
    let now = ledger::wall_clock();
    match command {
        AdminCommand::Add { name, data } => {
            let db = open(&data, database)?;
            let token = db
                .call_blocking(|conn| view::admin::add(conn, &name, now))
                .map_err(|err| anyhow::anyhow!("adding admin {name}: {err}"))?;
            println!("{token}");
            Ok(())
        }
        AdminCommand::List { data } => {
            let db = open(&data, database)?;
            for admin in db.call_blocking(|conn| view::admin::list(conn))? {
                println!("{}\t{}", admin.name, admin.added_at);
            }
            Ok(())
        }
        AdminCommand::Revoke { name, data } => {
            let db = open(&data, database)?;
            db.call_blocking(|conn| view::admin::revoke(conn, &name))
                .map_err(|err| anyhow::anyhow!("revoking admin {name}: {err}"))?;
            tracing::info!(%name, "admin revoked");
            Ok(())
        }
    }
}

async fn serve(args: ServeArgs, database: Option<&str>) -> anyhow::Result<()> {
    let ServeArgs {
        data,
        http,
        https,
        www,
        ledger_secret,
        min_free,
        site_tz,
        alert_webhook,
        alert_secret,
        central,
        terminal,
    } = args;
    let shutdown = shutdown_signal();
    let ledger_ca = terminal.ledger_ca.clone();
    let terminal = terminal.config(ledger_secret.clone())?;
    let config = SiteConfig {
        data_dir: data,
        database: database.map(str::to_owned),
        http_addr: http,
        https_addr: https.https,
        tls_cert: https.tls_cert,
        tls_key: https.tls_key,
        tls_names: https.tls_names,
        www_dir: www.unwrap_or_else(stockhop_site::default_www_dir),
        ledger_secret,
        min_free_bytes: min_free,
        site_tz,
        alert_webhook,
        alert_secret,
        central: CentralConfig {
            url: central.central_url,
            secret: central.central_secret,
            site_id: central.site_id,
            ca: central.central_ca,
        },
        terminal,
        ledger_ca,
    };
    let site = Site::start(config).await?;
    wait_for_shutdown(&site, shutdown).await;
    site.stop().await?;
    Ok(())
}

/// Waits for `shutdown`, reloading the certificate on every SIGHUP
/// meanwhile (a renewed certificate of the site's own, or changed files).
async fn wait_for_shutdown(site: &Site, shutdown: impl std::future::Future<Output = ()>) {
    let mut hangups = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()) {
        Ok(signal) => Some(signal),
        Err(err) => {
            tracing::error!(%err, "cannot listen for SIGHUP: certificates reload only at start");
            None
        }
    };
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            () = &mut shutdown => return,
            Some(()) = async { hangups.as_mut()?.recv().await } => site.reload_certificate("SIGHUP"),
        }
    }
}

/// Resolves on Ctrl-C or SIGTERM. SIGTERM is taken over when this is
/// called, not when the future is first polled: one that arrives while the
/// site starts then stops it cleanly instead of killing it.
fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    let sigterm = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate());
    async move {
        shutdown_signal_from(
            #[cfg(unix)]
            sigterm,
        )
        .await
    }
}

async fn shutdown_signal_from(#[cfg(unix)] sigterm: std::io::Result<tokio::signal::unix::Signal>) {
    let ctrl_c = async {
        if let Err(err) = tokio::signal::ctrl_c().await {
            tracing::error!(%err, "cannot listen for Ctrl-C");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match sigterm {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(err) => {
                tracing::error!(%err, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => tracing::info!("Ctrl-C: shutting down"),
        () = terminate => tracing::info!("SIGTERM: shutting down"),
    }
}
