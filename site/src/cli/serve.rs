//! `stockhop-site serve`: the site server's arguments (the handheld
//! ports, the terminal listener's, the central's) and the server run
//! until Ctrl-C or SIGTERM, reloading its certificate on SIGHUP.

use std::net::SocketAddr;
use std::path::PathBuf;

use stockhop_site::listener::config::{parse_bool, Allowlist, TerminalFlags};
use stockhop_site::listener::zone::TerminalZone;
use stockhop_site::listener::ListenerConfig;
use stockhop_site::site::{CentralConfig, Site, SiteConfig};

use super::*;

/// `serve`'s arguments.
#[derive(clap::Args)]
pub(super) struct ServeArgs {
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
    #[arg(long = "min-free", env = "STOCKHOP_MIN_FREE", default_value = "256MiB", value_parser = stockhop_site::store::storage::parse_bytes)]
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

/// Past one site: this site forwarding its hops to a central, or this
/// server being the central.
#[derive(clap::Args)]
pub(super) struct CentralArgs {
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
pub(super) struct TerminalArgs {
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

pub(super) async fn serve(args: ServeArgs, database: Option<&str>) -> anyhow::Result<()> {
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
    std::fs::create_dir_all(&config.data_dir)?;
    let _lock = stockhop_site::store::data_lock::DataLock::take(&config.data_dir)?;
    let site = Site::start(config).await?;
    wait_for_shutdown(&site, shutdown).await;
    site.stop().await?;
    Ok(())
}

/// Waits for `shutdown`, reloading the certificate on every SIGHUP
/// meanwhile (a renewed certificate of the site's own, or changed files).
pub(super) async fn wait_for_shutdown(
    site: &Site,
    shutdown: impl std::future::Future<Output = ()>,
) {
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
pub(super) fn shutdown_signal() -> impl std::future::Future<Output = ()> {
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

pub(super) async fn shutdown_signal_from(
    #[cfg(unix)] sigterm: std::io::Result<tokio::signal::unix::Signal>,
) {
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
