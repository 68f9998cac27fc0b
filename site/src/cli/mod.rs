//! `stockhop-site`'s command line, as clap's derive reads it: [`Cli`]
//! and its [`Command`]s here, one file a command group beside it
//! ([`serve`], [`device`], [`admin`], [`count`], [`printer`], [`central`],
//! [`books`], [`import`], [`label`], [`backup`], [`terminal`], [`rescue`]), each parsing its arguments and
//! calling the library.
//!
//! Architecture invariant: a command body only parses, calls the library
//! (`stockhop_site`) and prints; the rules it applies live in the library,
//! so the API and the command line answer alike.

mod admin;
mod backup;
mod books;
mod central;
mod count;
mod device;
mod import;
mod label;
mod printer;
mod rescue;
mod restore;
mod serve;
mod terminal;

use self::admin::AdminCommand;
use self::books::{GrnCommand, PeriodCommand};
use self::central::CentralCommand;
use self::count::CountCommand;
use self::device::DeviceCommand;
use self::label::LabelCommand;
use self::printer::PrinterCommand;
use self::rescue::RescueCommand;
use self::serve::ServeArgs;
use self::terminal::TerminalCommand;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use clap::{Parser, Subcommand};
use stockhop_site::ledger::{self};
use stockhop_site::store::db::{Database, Db};
use stockhop_site::view;

#[derive(Parser)]
#[command(
    name = "stockhop-site",
    version,
    about = "Stockhop site server: ledger, terminal listener, PWA"
)]
pub(crate) struct Cli {
    /// Log lines on stderr as text (no colour unless stderr is a terminal)
    /// or as JSON objects, one a line, for a log shipper.
    #[arg(
        long,
        global = true,
        env = "STOCKHOP_LOG_FORMAT",
        value_enum,
        default_value = "text"
    )]
    pub(crate) log_format: LogFormat,
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
pub(crate) enum LogFormat {
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
    /// Real labels: what a GS1 barcode, Digital Link or EPC says, and the
    /// site's group separator substitute.
    Label {
        #[command(subcommand)]
        command: LabelCommand,
    },
    /// Count sessions: open one for a zone or a bin, approve its variance,
    /// or cancel it.
    Count {
        #[command(subcommand)]
        command: CountCommand,
    },
    /// A handheld's rescue file: the queue of a device that cannot reach
    /// the site, applied exactly once.
    Rescue {
        #[command(subcommand)]
        command: RescueCommand,
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
    /// The fixed terminals that push to the site's listener: ask one for
    /// its records again, list what it was asked.
    Terminal {
        #[command(subcommand)]
        command: TerminalCommand,
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
    /// Put a backup made by `backup` in place of the SQLite ledger, with
    /// the site stopped (refused while it serves): the ledger it replaces
    /// is kept aside with its write-ahead log, the certificates in
    /// DATA/tls/ stay, and the site's hops go on at its central after
    /// what the central holds (a new outbox epoch).
    Restore {
        backup: PathBuf,
        #[arg(long, env = "STOCKHOP_DATA", default_value = "./stockhop-data")]
        data: PathBuf,
    },
}

pub(crate) fn run(cli: Cli) -> anyhow::Result<()> {
    let database = cli.database.as_deref();
    match cli.command {
        Command::Serve(args) => {
            let runtime = tokio::runtime::Runtime::new()?;
            runtime.block_on(serve::serve(*args, database))
        }
        Command::Device { command } => device::device(command, database),
        Command::Admin { command } => admin::admins(command, database),
        Command::Period { command } => books::period(command, database),
        Command::Import { kind, file, data } => import::import(kind, &file, &data, database),
        Command::Count { command } => count::count(command, database),
        Command::Label { command } => label::label(command, database),
        Command::Printer { command } => printer::printer(command, database),
        Command::Central { command } => central::central(command, database),
        Command::Terminal { command } => terminal::terminal(command, database),
        Command::Backup { dest, data } => backup::backup(&dest, &data, database),
        Command::Restore { backup, data } => restore::restore(&backup, &data, database),
        Command::Grn { command } => books::grn(command, database),
        Command::Rescue { command } => rescue::rescue(command, database),
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
            stockhop_site::store::db::no_site_at(&path)
        );
    }
    open_or_make(data, database)
}

/// Opens the site's ledger, making it on `serve`'s first start.
fn open_or_make(data: &Path, database: Option<&str>) -> anyhow::Result<Db> {
    Ok(stockhop_site::site::open_or_make(data, database)?)
}
