//! The terminal listener: fixed terminals and gates push their reads here
//! over plain HTTP or TCP, and the listener makes each one durable before
//! it acknowledges it, judges it on capture and queue-write time, and
//! forwards it to the ledger.
//!
//! Codemap, one module per noun:
//! * [`http_message`], [`iclock`], [`zebra`], [`framed`] — the protocols as
//!   sans-IO parsers and reply encoders on byte slices;
//! * [`zone`] — terminal time zones; [`rules`] — the time rules, taking `now`;
//! * [`queue`] — the durable SQLite queue, the only place with the
//!   listener's SQL;
//! * [`http`] and [`tcp`] — the only code touching sockets;
//! * [`forwarder`] — the drain into the ledger through a [`LedgerSink`];
//! * [`config`] — file and environment settings.
//!
//! Architecture invariant: nothing is acknowledged to a terminal before the
//! SQLite transaction holding it has committed with `synchronous=FULL`, and
//! a failed write leaves neither rows nor rule state behind.

pub mod config;
pub mod forwarder;
pub mod framed;
pub mod http;
pub mod http_message;
pub mod iclock;
pub mod queue;
pub mod rules;
pub mod tcp;
pub mod zebra;
pub mod zone;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use stockhop::time::UnixMs;
use tokio::sync::watch;
use tokio::task::JoinSet;

pub use config::ListenerConfig;
pub use forwarder::{LedgerSink, RemoteLedgerSink};

use crate::db::Db;
use queue::{QueueError, Write, WriteReport};
use rules::Rules;

/// The site clock, read only at the I/O edge and passed into the rules.
pub fn unix_now() -> UnixMs {
    let since = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    UnixMs(i64::try_from(since.as_millis()).unwrap_or(i64::MAX))
}

#[derive(Debug, thiserror::Error)]
pub enum ListenerError {
    #[error("cannot bind {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error(transparent)]
    Queue(#[from] QueueError),
}

/// What the socket handlers share: the queue, the rules' windows and the
/// forwarder's wake-up (a count of committed writes it watches).
#[derive(Clone)]
pub struct Intake {
    db: Db,
    config: Arc<ListenerConfig>,
    rules: Arc<Mutex<Rules>>,
    writes: Arc<watch::Sender<u64>>,
}

impl Intake {
    /// Opens the intake, rebuilding the rules' windows from the database.
    pub async fn open(config: ListenerConfig, db: Db) -> Result<Intake, QueueError> {
        let rules = db.call(|conn| queue::load_rules(conn, unix_now())).await?;
        Ok(Intake {
            db,
            config: Arc::new(config),
            rules: Arc::new(Mutex::new(rules)),
            writes: Arc::new(watch::Sender::new(0)),
        })
    }

    pub fn config(&self) -> &ListenerConfig {
        &self.config
    }

    /// Writes one request's records durably; `Ok` means acknowledge.
    pub async fn write(&self, write: Write) -> Result<WriteReport, QueueError> {
        let rules = Arc::clone(&self.rules);
        let report = self
            .db
            .call(move |conn| {
                let mut rules = rules.lock().unwrap_or_else(|p| p.into_inner());
                queue::write(conn, &mut rules, unix_now(), &write)
            })
            .await;
        if report.is_ok() {
            self.writes.send_modify(|n| *n = n.wrapping_add(1));
        }
        report
    }
}

/// The running listeners and forwarder.
pub struct Running {
    pub http_addr: SocketAddr,
    pub tcp_addr: SocketAddr,
    tasks: JoinSet<()>,
}

impl Running {
    /// Waits until every task has stopped after shutdown.
    pub async fn join(mut self) {
        while let Some(result) = self.tasks.join_next().await {
            if let Err(err) = result {
                tracing::error!(%err, "terminal listener task failed");
            }
        }
    }
}

/// Binds the iclock/Zebra HTTP port and the framed TCP port, and starts
/// them with the forwarder (when `sink` is given; without one, records wait
/// in the queue) and the prune pass, until `shutdown` resolves.
pub async fn spawn(
    config: ListenerConfig,
    db: Db,
    sink: Option<Arc<dyn LedgerSink>>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<Running, ListenerError> {
    let bind = |addr: SocketAddr| async move {
        tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| ListenerError::Bind { addr, source })
    };
    let http_listener = bind(config.http_addr).await?;
    let tcp_listener = bind(config.tcp_addr).await?;
    let http_addr = http_listener
        .local_addr()
        .map_err(|source| ListenerError::Bind {
            addr: config.http_addr,
            source,
        })?;
    let tcp_addr = tcp_listener
        .local_addr()
        .map_err(|source| ListenerError::Bind {
            addr: config.tcp_addr,
            source,
        })?;
    let intake = Intake::open(config, db.clone()).await?;
    let (stop, stopped) = watch::channel(false);
    let mut tasks = JoinSet::new();
    tasks.spawn(async move {
        shutdown.await;
        let _ = stop.send(true);
    });
    tasks.spawn(http::serve(http_listener, intake.clone(), stopped.clone()));
    tasks.spawn(tcp::serve(tcp_listener, intake.clone(), stopped.clone()));
    match sink {
        Some(sink) => {
            tasks.spawn(forwarder::run(
                db.clone(),
                sink,
                intake.writes.subscribe(),
                stopped.clone(),
            ));
        }
        None => tracing::warn!("no ledger to forward to: terminal records wait in the queue"),
    }
    tasks.spawn(forwarder::run_pruner(db, stopped));
    tracing::info!(%http_addr, %tcp_addr, "terminal listener listening");
    Ok(Running {
        http_addr,
        tcp_addr,
        tasks,
    })
}
