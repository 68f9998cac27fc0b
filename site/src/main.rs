//! `stockhop-site`: the site server's command line.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context;
use clap::{Parser, Subcommand};
use stockhop_site::db::Db;
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
    },
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
        Command::Serve { data, http, www } => {
            let runtime = tokio::runtime::Runtime::new()?;
            runtime.block_on(serve(data, http, www))
        }
    }
}

async fn serve(data: PathBuf, http: SocketAddr, www: Option<PathBuf>) -> anyhow::Result<()> {
    let db =
        Db::open(&data).with_context(|| format!("opening the database in {}", data.display()))?;
    let www_dir = www.unwrap_or_else(stockhop_site::default_www_dir);
    if !www_dir.join("pkg").exists() {
        tracing::warn!(www = %www_dir.display(), "no built wasm package in www/pkg: run `cargo xtask serve`");
    }
    let listener = tokio::net::TcpListener::bind(http)
        .await
        .with_context(|| format!("binding {http}"))?;
    let state = AppState { db, www_dir };
    stockhop_site::serve(listener, state, shutdown_signal()).await?;
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
