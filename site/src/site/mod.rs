//! The whole site server, composed: [`Site::start`] opens the ledger,
//! binds every port (plain HTTP, HTTPS, the terminal listener's two),
//! starts every task beside them (terminal listener and its forwarder, the
//! central forwarder, printers, alerts, certificate renewal, the import
//! settler) and returns a [`Site`] with the bound addresses and a graceful
//! stop. The binary parses its command line into a [`SiteConfig`] and
//! waits for a signal; tests start the same site in-process on port 0, so
//! no test races another process for a port it probed.
//!
//! This room is the site's assembly: besides [`Site`] it holds the router
//! that mounts every surface ([`http`]), the terminal forwarder's path to
//! this site's own ledger without HTTP ([`in_process`]) and what the plain
//! port serves to whom ([`lan`]).
//!
//! Architecture invariant: the assembly may import every room; no room
//! imports it back (only the binary's command line, above it, does).

pub mod http;
pub mod in_process;
pub mod lan;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::sync::watch;
use tokio::task::{JoinError, JoinHandle};

use crate::central::{self, forwarder::CentralClient, outbox};
use crate::ledger;
use crate::listener::{self, LedgerSink, ListenerConfig, ListenerError, RemoteLedgerSink};
use crate::net::outbound::{self, OutboundError};
use crate::net::server;
use crate::net::tls::{self, CertSource, CertStore, Issued, TlsError};
use crate::site::in_process::InProcessLedger;
use crate::site_clock::{SiteZone, ZoneError};
use crate::store::db::{Database, Db, DbError};
use crate::{view, AppState};

/// Everything a site is started with: what `stockhop-site serve` takes on
/// its command line (and environment), read once there.
#[derive(Debug, Clone)]
pub struct SiteConfig {
    /// Data directory: the SQLite ledger, the listener's queue, the site CA.
    pub data_dir: PathBuf,
    /// `--database`: unset is the SQLite file in `data_dir`.
    pub database: Option<String>,
    /// Plain-HTTP address (port 0: any free port).
    pub http_addr: SocketAddr,
    /// HTTPS address (port 0: any free port).
    pub https_addr: SocketAddr,
    /// The site's own certificate chain and key (PEM); without both the
    /// site issues its own from a site CA in `data_dir/tls/`.
    pub tls_cert: Option<PathBuf>,
    pub tls_key: Option<PathBuf>,
    /// Further names of the site; the first is the host of setup links.
    pub tls_names: Vec<String>,
    /// The PWA shell.
    pub www_dir: PathBuf,
    /// Shared secret of signed terminal batches (see `--ledger-secret`).
    pub ledger_secret: Option<String>,
    /// Free space below which sync and heartbeats answer STORAGE_FULL.
    pub min_free_bytes: u64,
    /// The site's IANA time zone; `None` is the machine's.
    pub site_tz: Option<String>,
    /// Where alerts are POSTed, and the secret that signs them.
    pub alert_webhook: Option<String>,
    pub alert_secret: Option<String>,
    /// Forwarding to a central, or being one.
    pub central: CentralConfig,
    /// The terminal listener, its remote ledger already set.
    pub terminal: ListenerConfig,
    /// CA file an https:// remote ledger must chain to.
    pub ledger_ca: Option<PathBuf>,
}

/// `--central-url`, `--central-secret`, `--site-id`, `--central-ca`.
#[derive(Debug, Clone, Default)]
pub struct CentralConfig {
    pub url: Option<String>,
    pub secret: Option<String>,
    pub site_id: Option<String>,
    pub ca: Option<PathBuf>,
}

/// Loopback with any free port, for a site started in-process.
const LOOPBACK_ANY_PORT: SocketAddr =
    SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 0);

impl SiteConfig {
    /// A site on `data_dir` listening on loopback only, every port chosen
    /// by the system (read them back from the [`Site`]), the PWA from
    /// [`crate::default_www_dir`], everything else at its default. Nothing
    /// is read from the environment.
    pub fn on_loopback(data_dir: PathBuf) -> SiteConfig {
        let terminal = ListenerConfig {
            http_addr: LOOPBACK_ANY_PORT,
            tcp_addr: LOOPBACK_ANY_PORT,
            ..ListenerConfig::default()
        };
        SiteConfig {
            data_dir,
            database: None,
            http_addr: LOOPBACK_ANY_PORT,
            https_addr: LOOPBACK_ANY_PORT,
            tls_cert: None,
            tls_key: None,
            tls_names: Vec::new(),
            www_dir: crate::default_www_dir(),
            ledger_secret: None,
            min_free_bytes: crate::store::storage::DEFAULT_MIN_FREE_BYTES,
            site_tz: None,
            alert_webhook: None,
            alert_secret: None,
            central: CentralConfig::default(),
            terminal,
            ledger_ca: None,
        }
    }
}

/// Why a site did not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("building the client for --alert-webhook")]
    AlertWebhook(#[source] OutboundError),
    #[error(transparent)]
    Zone(#[from] ZoneError),
    #[error("opening the database {database}")]
    Database {
        database: String,
        #[source]
        source: DbError,
    },
    #[error("building the client for --central-url")]
    CentralClient(#[source] OutboundError),
    #[error("building the ledger client")]
    LedgerClient(#[source] OutboundError),
    #[error("{what}")]
    Record {
        what: &'static str,
        #[source]
        source: crate::store::sql::Error,
    },
    #[error("preparing the HTTPS certificate")]
    Certificate(#[source] TlsError),
    #[error("binding {addr}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error("starting the terminal listener")]
    Listener(#[source] ListenerError),
}

/// Why a site did not stop cleanly.
#[derive(Debug, thiserror::Error)]
pub enum StopError {
    #[error("serving the handheld API: {0}")]
    Serve(#[from] std::io::Error),
    #[error("a site task failed: {0}")]
    Task(#[from] JoinError),
}

/// A running site. [`Site::stop`] stops it gracefully and waits for every
/// task; dropping it asks the same stop without waiting.
pub struct Site {
    http_addr: SocketAddr,
    https_addr: SocketAddr,
    terminal_http_addr: SocketAddr,
    terminal_tcp_addr: SocketAddr,
    site_url: String,
    certs: CertStore,
    stop: watch::Sender<bool>,
    tasks: Option<Tasks>,
}

struct Tasks {
    plain: JoinHandle<std::io::Result<()>>,
    secure: JoinHandle<std::io::Result<()>>,
    renewals: JoinHandle<()>,
    terminals: listener::Running,
    printers: JoinHandle<()>,
    forwarder: Option<JoinHandle<()>>,
    alerts: JoinHandle<()>,
}

impl Site {
    /// Opens the ledger (making it on the first start), binds every port
    /// and starts every task. Must run inside a Tokio runtime.
    pub async fn start(config: SiteConfig) -> Result<Site, StartError> {
        let SiteConfig {
            data_dir: data,
            database,
            http_addr: http,
            https_addr,
            tls_cert,
            tls_key,
            tls_names,
            www_dir,
            ledger_secret,
            min_free_bytes,
            site_tz,
            alert_webhook,
            alert_secret,
            central,
            terminal,
            ledger_ca,
        } = config;
        let webhook = alert_webhook
            .as_deref()
            .map(|url| {
                view::alerts::webhook::Webhook::new(
                    url,
                    alert_secret.as_deref(),
                    &outbound::Trust::from_ca_file(None),
                )
            })
            .transpose()
            .map_err(StartError::AlertWebhook)?;
        let site_zone = SiteZone::configured(site_tz.as_deref())?;
        let ledger_trust = outbound::Trust::from_ca_file(ledger_ca);
        let db = open_or_make(&data, database.as_deref())?;
        tokio::spawn(settle_imports(db.clone()));
        let forwarding = match (&central.url, &central.site_id, &central.secret) {
            (Some(url), Some(site_id), Some(secret)) => {
                let trust = outbound::Trust::from_ca_file(central.ca.clone());
                let client =
                    CentralClient::new(url, secret, &trust).map_err(StartError::CentralClient)?;
                if outbound::plain_off_loopback(url) {
                    tracing::warn!(
                        central = %url,
                        "the central is reached over plain HTTP: hops are signed but readable on the way; give an https:// --central-url"
                    );
                }
                Some((
                    outbox::Forwarding {
                        site_id: site_id.clone(),
                        central_url: url.clone(),
                    },
                    client,
                ))
            }
            _ => None,
        };
        let backlog = db
            .call_blocking(|conn| {
                outbox::configure(
                    conn,
                    forwarding.as_ref().map(|(f, _)| f),
                    ledger::wall_clock(),
                )
            })
            .map_err(|source| StartError::Record {
                what: "recording the central forwarding",
                source,
            })?;
        if backlog > 0 {
            tracing::info!(
                hops = backlog,
                "enqueued the hops appended without forwarding for the central"
            );
        }
        if !www_dir.join("pkg").exists() {
            tracing::warn!(www = %www_dir.display(), "no built wasm package in www/pkg: run `cargo xtask serve`");
        }
        let certs = open_certs(&data, tls_cert, tls_key, &tls_names)?;
        let bind = |addr: SocketAddr| async move {
            tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|source| StartError::Bind { addr, source })
        };
        let plain_listener = bind(http).await?;
        let tls_listener = bind(https_addr).await?;
        let http_addr = plain_listener
            .local_addr()
            .map_err(|source| StartError::Bind { addr: http, source })?;
        let https_addr = tls_listener
            .local_addr()
            .map_err(|source| StartError::Bind {
                addr: https_addr,
                source,
            })?;
        let site_url =
            view::enroll::site_url(tls_names.first().map(String::as_str), https_addr.port());
        db.call_blocking(|conn| view::enroll::remember_site_url(conn, &site_url))
            .map_err(|source| StartError::Record {
                what: "recording the site's address",
                source,
            })?;
        db.call_blocking(|conn| site_zone.remember(conn))
            .map_err(|source| StartError::Record {
                what: "recording the site's time zone",
                source,
            })?;
        let now = ledger::wall_clock();
        if terminal.site_time_zone.offset_at(now).minutes() != site_zone.offset_minutes(now) {
            // Not refused: a site may keep its terminals on UTC clocks.
            tracing::warn!(
                terminal_zone = %terminal.site_time_zone,
                site_zone = site_zone.name(),
                "the terminals' local times are read in a zone other than the site's: if their clocks show the site's time, set --terminal-tz (or time_zone in the terminal file), or their records are stored hours off"
            );
        }
        let sink: Arc<dyn LedgerSink> = match &terminal.ledger {
            Some(remote) => Arc::new(
                RemoteLedgerSink::new(&remote.url, &remote.secret, &ledger_trust)
                    .map_err(StartError::LedgerClient)?,
            ),
            None => Arc::new(InProcessLedger::new(db.clone())),
        };
        let (stop, stopped) = watch::channel(false);
        let stop_signal = || {
            let mut stopped = stopped.clone();
            async move {
                let _ = stopped.wait_for(|stop| *stop).await;
            }
        };
        let terminals = listener::spawn(terminal, db.clone(), Some(sink), stop_signal())
            .await
            .map_err(StartError::Listener)?;
        let alert_settings = view::alerts::webhook::Settings {
            site_id: central
                .site_id
                .clone()
                .or_else(|| tls_names.first().cloned())
                .unwrap_or_else(|| "site".to_owned()),
            data_dir: data.clone(),
            webhook,
            evaluate_every: view::alerts::webhook::EVALUATE_INTERVAL,
        };
        if let Some(url) = &alert_webhook {
            tracing::info!(webhook = %url, site_id = %alert_settings.site_id, "alerts go to the webhook");
        }
        let alerts = tokio::spawn(view::alerts::webhook::run(
            db.clone(),
            alert_settings,
            stopped.clone(),
        ));
        let forwarder = forwarding.map(|(forwarding, client)| {
            tracing::info!(site_id = %forwarding.site_id, central = %forwarding.central_url, "forwarding hops to the central");
            tokio::spawn(central::forwarder::run(
                db.clone(),
                forwarding.site_id,
                client,
                view::summary::summary,
                stopped.clone(),
            ))
        });
        // Without a central URL the secret makes this server a central.
        let central_secret = central.url.is_none().then_some(central.secret).flatten();
        if central_secret.is_some() {
            tracing::info!("taking site batches as a central");
        }
        first_start_hints(&db, &data, &site_url, http_addr)?;
        let state = AppState {
            db,
            www_dir: www_dir.clone(),
            ledger: ledger::LedgerState::new(ledger_secret)
                .with_central_secret(central_secret)
                .with_storage(Some(data.clone()), min_free_bytes),
        };
        let printer_wake = crate::printers::driver::Wake::default();
        let printers = tokio::spawn(crate::printers::driver::run(
            state.db.clone(),
            printer_wake.clone(),
            Default::default(),
            stop_signal(),
        ));
        let site = crate::app(state)
            .merge(lan::ca_routes(certs.ca_cert_path()))
            .layer(axum::Extension(printer_wake));
        let plain = lan::https_only_off_loopback(site.clone(), &site_url);
        let site =
            site.layer(axum::Extension(view::api::OverTls))
                .layer(axum::middleware::from_fn(
                    crate::net::security_headers::set_hsts,
                ));
        tracing::info!(addr = %http_addr, www = %www_dir.display(), "site server listening (http)");
        tracing::info!(addr = %https_addr, %site_url, "site server listening (https)");
        let renewals = tokio::spawn(renew_certs(certs.clone(), stop_signal()));
        let plain = tokio::spawn(server::serve_connections(
            plain_listener,
            None,
            plain,
            stop_signal(),
        ));
        let secure = tokio::spawn(server::serve_connections(
            tls_listener,
            Some(certs.server_config()),
            site,
            stop_signal(),
        ));
        Ok(Site {
            http_addr,
            https_addr,
            terminal_http_addr: terminals.http_addr,
            terminal_tcp_addr: terminals.tcp_addr,
            site_url,
            certs,
            stop,
            tasks: Some(Tasks {
                plain,
                secure,
                renewals,
                terminals,
                printers,
                forwarder,
                alerts,
            }),
        })
    }

    /// The bound plain-HTTP address.
    pub fn http_addr(&self) -> SocketAddr {
        self.http_addr
    }

    /// The bound HTTPS address.
    pub fn https_addr(&self) -> SocketAddr {
        self.https_addr
    }

    /// The terminal listener's bound HTTP (iclock/Zebra) address.
    pub fn terminal_http_addr(&self) -> SocketAddr {
        self.terminal_http_addr
    }

    /// The terminal listener's bound framed TCP address.
    pub fn terminal_tcp_addr(&self) -> SocketAddr {
        self.terminal_tcp_addr
    }

    /// The `https://HOST:PORT` handhelds are set up with.
    pub fn site_url(&self) -> &str {
        &self.site_url
    }

    /// Reloads the served certificate now (`why` goes to the log): new
    /// handshakes get the new one, open connections keep theirs, and a
    /// failed reload keeps the old one.
    pub fn reload_certificate(&self, why: &'static str) {
        reload(&self.certs, why);
    }

    /// Stops accepting, lets the requests in flight finish (within the
    /// shutdown grace) and waits for every task to stop.
    pub async fn stop(mut self) -> Result<(), StopError> {
        let _ = self.stop.send(true);
        let Some(tasks) = self.tasks.take() else {
            return Ok(());
        };
        tasks.plain.await??;
        tasks.secure.await??;
        tasks.renewals.await?;
        tasks.terminals.join().await;
        tasks.printers.await?;
        if let Some(forwarder) = tasks.forwarder {
            forwarder.await?;
        }
        tasks.alerts.await?;
        tracing::info!("site server stopped");
        Ok(())
    }
}

impl Drop for Site {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}

/// Opens the site's ledger, making it on the first start.
pub fn open_or_make(data: &Path, database: Option<&str>) -> Result<Db, StartError> {
    let database = Database::from_arg(database, data);
    let db = Db::connect(&database, data).map_err(|source| StartError::Database {
        database: database.describe(),
        source,
    })?;
    tracing::debug!(database = %database.describe(), "ledger database open");
    Ok(db)
}

/// Finishes an import a killed importer left (decided: applied; not yet:
/// swept), at start and again once its lease has surely run out, beside
/// the serving site: an import's turns never hold the writer for long.
async fn settle_imports(db: Db) {
    let lease = std::time::Duration::from_millis(ledger::import::IMPORT_LEASE_MS as u64);
    for wait in [
        std::time::Duration::ZERO,
        lease + std::time::Duration::from_secs(1),
    ] {
        tokio::time::sleep(wait).await;
        let db = db.clone();
        let settled =
            tokio::task::spawn_blocking(move || ledger::import::settle(&db, ledger::wall_clock()))
                .await;
        match settled {
            Ok(Ok(0)) => {}
            Ok(Ok(imports)) => {
                tracing::info!(imports, "finished imports a killed importer had decided")
            }
            Ok(Err(err)) => tracing::error!(%err, "finishing an import a killed importer left"),
            Err(err) => tracing::error!(%err, "finishing an import a killed importer left"),
        }
    }
}

/// On a site with no admin yet (its first start), where to open the site's
/// view and the commands that add an admin and a device, on stderr.
fn first_start_hints(
    db: &Db,
    data: &Path,
    site_url: &str,
    plain: SocketAddr,
) -> Result<(), StartError> {
    let admins = db
        .call_blocking(|conn| view::admin::list(conn))
        .map_err(|source| StartError::Record {
            what: "reading the site's admins",
            source,
        })?;
    if !admins.is_empty() {
        return Ok(());
    }
    // The commands name this site's data directory, so they work from any
    // folder (without it they would make a new, empty site where they run).
    let data = std::fs::canonicalize(data).unwrap_or_else(|_| data.to_path_buf());
    let data = data.display();
    // A log event, not loose lines on stderr: with `--log-format json`
    // every line stays one object.
    tracing::info!(
        site_view = %format!("{site_url}/site/"),
        site_view_here = %format!("http://{plain}/site/"),
        add_admin = %format!("stockhop-site admin add NAME --data {data}"),
        add_device = %format!("stockhop-site device add ID --profile mc3390xr --data {data}"),
        "first start, no admin yet: open the site's view; add an admin (its token signs in there) and a handheld (open its setup link on it)"
    );
    Ok(())
}

/// The served certificate: the site's own (`tls_cert`/`tls_key`) or one
/// issued from the site CA in DATA/tls/. A missing or unreadable file stops
/// the start with an error naming it; there is no plain-HTTP fallback.
fn open_certs(
    data: &Path,
    tls_cert: Option<PathBuf>,
    tls_key: Option<PathBuf>,
    tls_names: &[String],
) -> Result<CertStore, StartError> {
    let source = match (tls_cert, tls_key) {
        (Some(cert), Some(key)) => CertSource::Own { cert, key },
        _ => CertSource::SiteCa {
            dir: data.join("tls"),
            names: tls::site_names(tls::host_name().as_deref(), tls_names)
                .map_err(StartError::Certificate)?,
        },
    };
    let (certs, issued) = CertStore::open(source).map_err(StartError::Certificate)?;
    match issued {
        Issued::Own => tracing::info!("serving the site's own certificate"),
        Issued::Reused => tracing::info!("serving the site CA's server certificate"),
        Issued::NewCa => tracing::info!(
            dir = %data.join("tls").display(),
            "made a new site CA and server certificate: devices trust the CA from /ca.crt"
        ),
        Issued::NewServer => tracing::info!("issued a new server certificate from the site CA"),
    }
    Ok(certs)
}

/// Checks daily whether the site CA's server certificate is due for
/// renewal (the binary also reloads on SIGHUP, through
/// [`Site::reload_certificate`]).
async fn renew_certs(certs: CertStore, stop: impl std::future::Future<Output = ()>) {
    let mut daily = tokio::time::interval(tls::RENEW_CHECK_INTERVAL);
    daily.tick().await;
    tokio::pin!(stop);
    loop {
        tokio::select! {
            () = &mut stop => return,
            _ = daily.tick() => reload(&certs, "daily check"),
        }
    }
}

fn reload(certs: &CertStore, why: &'static str) {
    match certs.reload() {
        Ok(issued) => tracing::info!(why, ?issued, "certificate reloaded"),
        Err(err) => {
            tracing::error!(why, %err, "certificate reload failed; still serving the previous one")
        }
    }
}
