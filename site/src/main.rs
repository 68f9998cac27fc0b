//! `stockhop-site`: the site server's command line.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use clap::{Parser, Subcommand};
use stockhop::time::UnixMs;
use stockhop_site::db::Db;
use stockhop_site::in_process::InProcessLedger;
use stockhop_site::ledger::{self, devices::Profile};
use stockhop_site::listener::{self, LedgerSink, ListenerConfig, RemoteLedgerSink};
use stockhop_site::AppState;

#[derive(Parser)]
#[command(
    name = "stockhop-site",
    version,
    about = "Stockhop site server: ledger, terminal listener, PWA"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the site server.
    Serve {
        /// Data directory holding the SQLite database (created on first start).
        #[arg(long, env = "STOCKHOP_DATA", default_value = "./stockhop-data")]
        data: PathBuf,
        /// Address of the handheld API and PWA.
        #[arg(long, env = "STOCKHOP_HTTP", default_value = "127.0.0.1:8080")]
        http: SocketAddr,
        /// Folder of the PWA shell (default: ./www, else the checkout's www/).
        #[arg(long, env = "STOCKHOP_WWW")]
        www: Option<PathBuf>,
        /// Shared secret for HMAC-signed terminal batches: this site's
        /// ledger verifies batches from remote listeners with it (without it
        /// that endpoint is off), and with --ledger-url this site's listener
        /// signs the batches it forwards with it.
        #[arg(long, env = "STOCKHOP_LEDGER_SECRET", hide_env_values = true)]
        ledger_secret: Option<String>,
        #[command(flatten)]
        terminal: TerminalArgs,
    },
    /// Manage the devices that may sync with this site.
    Device {
        #[command(subcommand)]
        command: DeviceCommand,
    },
    /// Manage accounting periods.
    Period {
        #[command(subcommand)]
        command: PeriodCommand,
    },
}

#[derive(Subcommand)]
enum DeviceCommand {
    /// Add a device; prints its bearer token (and nothing else) on stdout.
    Add {
        device_id: String,
        #[arg(long, value_enum)]
        profile: Profile,
        /// Post its items for real at once (otherwise they land as simulation).
        #[arg(long)]
        commissioned: bool,
        #[arg(long, env = "STOCKHOP_DATA", default_value = "./stockhop-data")]
        data: PathBuf,
    },
    /// Commission a device: its items post for real from now on.
    Commission {
        device_id: String,
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

/// The terminal listener's settings; the command line wins over the
/// environment, which wins over the file.
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
    /// Forward terminal records to this remote ledger (http://host:port)
    /// instead of this site's own; needs --ledger-secret.
    #[arg(long = "ledger-url", env = "STOCKHOP_LEDGER_URL")]
    ledger_url: Option<String>,
}

impl TerminalArgs {
    fn config(self, ledger_secret: Option<String>) -> anyhow::Result<ListenerConfig> {
        let mut config = ListenerConfig::load(self.terminal_config.as_deref())?;
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

fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    match cli.command {
        Command::Serve {
            data,
            http,
            www,
            ledger_secret,
            terminal,
        } => {
            let terminal = terminal.config(ledger_secret.clone())?;
            let runtime = tokio::runtime::Runtime::new()?;
            runtime.block_on(serve(data, http, www, ledger_secret, terminal))
        }
        Command::Device { command } => device(command),
        Command::Period {
            command: PeriodCommand::Close { until, data },
        } => {
            let until = UnixMs::parse_rfc3339(&until).context("reading UNTIL")?;
            let db = open(&data)?;
            db.call_blocking(|conn| ledger::periods::close(conn, until, ledger::wall_clock()))
                .map_err(|err| anyhow::anyhow!("{err}"))?;
            tracing::info!(%until, "period closed");
            Ok(())
        }
    }
}

fn open(data: &Path) -> anyhow::Result<Db> {
    Db::open(data).with_context(|| format!("opening the database in {}", data.display()))
}

fn device(command: DeviceCommand) -> anyhow::Result<()> {
    match command {
        DeviceCommand::Add {
            device_id,
            profile,
            commissioned,
            data,
        } => {
            let db = open(&data)?;
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
            Ok(())
        }
        DeviceCommand::Commission { device_id, data } => {
            let db = open(&data)?;
            db.call_blocking(|conn| ledger::devices::commission(conn, &device_id))
                .map_err(|err| anyhow::anyhow!("commissioning {device_id}: {err}"))?;
            tracing::info!(%device_id, "device commissioned");
            Ok(())
        }
    }
}

async fn serve(
    data: PathBuf,
    http: SocketAddr,
    www: Option<PathBuf>,
    ledger_secret: Option<String>,
    terminal: ListenerConfig,
) -> anyhow::Result<()> {
    let db = open(&data)?;
    let www_dir = www.unwrap_or_else(stockhop_site::default_www_dir);
    if !www_dir.join("pkg").exists() {
        tracing::warn!(www = %www_dir.display(), "no built wasm package in www/pkg: run `cargo xtask serve`");
    }
    let listener = tokio::net::TcpListener::bind(http)
        .await
        .with_context(|| format!("binding {http}"))?;
    let sink: Arc<dyn LedgerSink> = match &terminal.ledger {
        Some(remote) => Arc::new(
            RemoteLedgerSink::new(&remote.url, &remote.secret)
                .context("building the ledger client")?,
        ),
        None => Arc::new(InProcessLedger::new(db.clone())),
    };
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let mut listener_stopped = stopped.clone();
    let terminals = listener::spawn(terminal, db.clone(), Some(sink), async move {
        let _ = listener_stopped.wait_for(|stop| *stop).await;
    })
    .await
    .context("starting the terminal listener")?;
    let state = AppState {
        db,
        www_dir,
        ledger: ledger::LedgerState::new(ledger_secret),
    };
    stockhop_site::serve(listener, state, async move {
        shutdown_signal().await;
        let _ = stop.send(true);
    })
    .await?;
    terminals.join().await;
    tracing::info!("site server stopped");
    Ok(())
}

/// Resolves on Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(err) = tokio::signal::ctrl_c().await {
            tracing::error!(%err, "cannot listen for Ctrl-C");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
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
