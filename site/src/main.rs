//! `stockhop-site`: the site server's command line.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context;
use clap::{Parser, Subcommand};
use std::sync::Arc;

use stockhop_site::db::Db;
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
        #[command(flatten)]
        terminal: TerminalArgs,
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
    /// instead of the in-process one; needs --ledger-secret.
    #[arg(long = "ledger-url")]
    ledger_url: Option<String>,
    /// Shared secret signing requests to the remote ledger.
    #[arg(long = "ledger-secret")]
    ledger_secret: Option<String>,
}

impl TerminalArgs {
    fn config(self) -> anyhow::Result<ListenerConfig> {
        let mut config = ListenerConfig::load(self.terminal_config.as_deref())?;
        if let Some(http) = self.terminal_http {
            config.http_addr = http;
        }
        if let Some(tcp) = self.terminal_tcp {
            config.tcp_addr = tcp;
        }
        config.set_ledger(self.ledger_url, self.ledger_secret)?;
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
            terminal,
        } => {
            let terminal = terminal.config()?;
            let runtime = tokio::runtime::Runtime::new()?;
            runtime.block_on(serve(data, http, www, terminal))
        }
    }
}

async fn serve(
    data: PathBuf,
    http: SocketAddr,
    www: Option<PathBuf>,
    terminal: ListenerConfig,
) -> anyhow::Result<()> {
    let db =
        Db::open(&data).with_context(|| format!("opening the database in {}", data.display()))?;
    let www_dir = www.unwrap_or_else(stockhop_site::default_www_dir);
    if !www_dir.join("pkg").exists() {
        tracing::warn!(www = %www_dir.display(), "no built wasm package in www/pkg: run `cargo xtask serve`");
    }
    let listener = tokio::net::TcpListener::bind(http)
        .await
        .with_context(|| format!("binding {http}"))?;
    let sink: Option<Arc<dyn LedgerSink>> = match &terminal.ledger {
        Some(remote) => Some(Arc::new(
            RemoteLedgerSink::new(&remote.url, &remote.secret)
                .context("building the ledger client")?,
        )),
        None => None,
    };
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let listener_stopped = stopped.clone();
    let terminals = listener::spawn(terminal, db.clone(), sink, async move {
        let mut stopped = listener_stopped;
        let _ = stopped.wait_for(|stop| *stop).await;
    })
    .await
    .context("starting the terminal listener")?;
    let state = AppState { db, www_dir };
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
