//! The terminal listener: fixed terminals and gates push their reads here
//! over plain HTTP or TCP, and the listener makes each one durable before
//! it acknowledges it, judges it on capture and queue-write time, and
//! forwards it to the ledger.
//!
//! Codemap, one module per noun:
//! * [`http_message`], [`iclock`], [`push_acc`], [`zebra`], [`framed`] — the
//!   protocols as sans-IO parsers and reply encoders on byte slices;
//! * [`answer`] — what one HTTP request makes the listener write and reply;
//! * [`command`] — commands handed to iclock terminals on their heartbeat
//!   poll (the backfill) and their answers;
//! * [`zone`] — terminal time zones; [`rules`] — the time rules, taking `now`;
//! * [`queue`] — the durable SQLite queue, the only place with the
//!   listener's SQL;
//! * [`http`] and [`tcp`] — the only code touching sockets;
//! * [`forwarder`] — the drain into the ledger through a [`LedgerSink`];
//! * [`unknown`] — the count of requests the listener does not handle;
//! * [`config`] — file and environment settings.
//!
//! Architecture invariant: nothing is acknowledged to a terminal before the
//! SQLite transaction holding it has committed with `synchronous=FULL`, and
//! a failed write leaves neither rows nor rule state behind.

pub mod answer;
pub mod command;
pub mod config;
pub mod forwarder;
pub mod framed;
pub mod http;
pub mod http_message;
pub mod iclock;
pub mod pacing;
pub mod push_acc;
pub mod queue;
pub mod rules;
pub mod tcp;
pub mod unknown;
pub mod zebra;
pub mod zone;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use stockhop::time::UnixMs;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinSet;

pub use config::ListenerConfig;
pub use forwarder::{LedgerSink, RemoteLedgerSink};

use crate::store::db::Db;
use crate::store::writer::Caller;
use queue::{QueueError, Write, WriteReport};
use rules::{ReaderRates, Rules};
use unknown::{UnknownCounts, UnknownRequests};

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

/// Requests sharing one commit at most: several terminals' writes that
/// arrive while the previous commit is syncing go to disk together, and
/// this bounds how long the transaction they wait on can grow.
pub const MAX_WRITES_PER_COMMIT: usize = 64;
/// Records sharing one commit at most (a request with more goes alone):
/// a portal's second of reads (700) with a hundred punches beside it. The
/// commit is one turn at SQLite's one writer, and a handheld's sync that
/// comes during it waits for its end, so this bounds that wait (about
/// 45 µs a record on the reference machine: some 36 ms).
pub const MAX_RECORDS_PER_COMMIT: usize = 800;
/// Requests waiting for the queue writer; a handler beyond it waits for a slot.
pub const WRITE_QUEUE_DEPTH: usize = 1024;

struct Job {
    write: Write,
    done: oneshot::Sender<Result<WriteReport, QueueError>>,
}

/// What the socket handlers share: the queue writer, the configuration and
/// the forwarder's wake-up (a count of committed writes it watches).
#[derive(Clone)]
pub struct Intake {
    config: Arc<ListenerConfig>,
    jobs: mpsc::Sender<Job>,
    writes: Arc<watch::Sender<u64>>,
    unknown: Arc<UnknownRequests>,
    raw_budget: Arc<Mutex<RawBudget>>,
    pacing: Arc<Mutex<pacing::Pacing>>,
    /// Each RFID reader's reads per second: its pacing rate.
    reader_rates: Arc<ReaderRates>,
    db: Db,
}

impl Intake {
    /// Opens the intake, rebuilding the rules' windows from the database,
    /// and starts its queue writer.
    pub async fn open(config: ListenerConfig, db: Db) -> Result<Intake, QueueError> {
        let readers = config.reader_rates();
        let reader_rates = Arc::new(readers.clone());
        let rules = db
            .call_local(move |conn| queue::load_rules(conn, unix_now(), readers))
            .await?;
        let (jobs, queue) = mpsc::channel(WRITE_QUEUE_DEPTH);
        let writes = Arc::new(watch::Sender::new(0));
        tokio::spawn(run_writer(db.clone(), rules, queue, Arc::clone(&writes)));
        Ok(Intake {
            config: Arc::new(config),
            jobs,
            writes,
            unknown: Arc::default(),
            raw_budget: Arc::new(Mutex::new(RawBudget::full(std::time::Instant::now()))),
            pacing: Arc::default(),
            reader_rates,
            db,
        })
    }

    /// The known peers of terminal `port`, as kept across restarts.
    pub async fn known_peers(&self, port: &'static str) -> KnownPeers {
        KnownPeers::load(self.db.clone(), port).await
    }

    /// Spends `write`'s records from their serials' budgets
    /// ([`pacing`]); `Err` with the wait when one is past it (the request
    /// is then answered "try again" and nothing is kept).
    pub fn pace(&self, write: &Write) -> Result<(), std::time::Duration> {
        let spends = pacing::spends(write.records.iter().map(|record| {
            let serial = record.capture.device.as_str();
            let reads = self.reader_rates.reads_per_sec(serial);
            (serial, pacing::records_per_second(record.kind, reads))
        }));
        let mut pacing = self.pacing.lock().unwrap_or_else(|p| p.into_inner());
        pacing.take(&spends, std::time::Instant::now())
    }

    /// Takes `bytes` of the budget for bodies kept raw; `false` when it is
    /// spent (the request is then answered 503 and nothing is kept).
    pub fn take_raw_budget(&self, bytes: usize) -> bool {
        let mut budget = self.raw_budget.lock().unwrap_or_else(|p| p.into_inner());
        budget.take(std::time::Instant::now(), bytes)
    }

    pub fn config(&self) -> &ListenerConfig {
        &self.config
    }

    /// The count of requests the listener does not handle.
    pub fn unknown(&self) -> &UnknownRequests {
        &self.unknown
    }

    /// Writes one request's records durably; `Ok` means acknowledge.
    pub async fn write(&self, write: Write) -> Result<WriteReport, QueueError> {
        let (done, report) = oneshot::channel();
        let stopped = || QueueError::Writer("the queue writer has stopped".to_owned());
        self.jobs
            .send(Job { write, done })
            .await
            .map_err(|_| stopped())?;
        report.await.map_err(|_| stopped())?
    }
}

/// A token bucket over the bytes all terminals may have kept raw
/// ([`crate::limits::RAW_BYTES_PER_SECOND`], bursts up to
/// [`crate::limits::RAW_BYTES_BURST`]): real terminals send a few raw
/// bodies a day, a flood of junk gets a row a second at most.
#[derive(Debug, Clone, Copy)]
pub struct RawBudget {
    bytes: f64,
    at: std::time::Instant,
}

impl RawBudget {
    pub fn full(now: std::time::Instant) -> RawBudget {
        RawBudget {
            bytes: crate::limits::RAW_BYTES_BURST as f64,
            at: now,
        }
    }

    /// Refills for the time since the last call, then takes `bytes` if
    /// that many are there.
    pub fn take(&mut self, now: std::time::Instant, bytes: usize) -> bool {
        let refill = now.saturating_duration_since(self.at).as_secs_f64()
            * crate::limits::RAW_BYTES_PER_SECOND as f64;
        self.bytes = (self.bytes + refill).min(crate::limits::RAW_BYTES_BURST as f64);
        self.at = now;
        if self.bytes >= bytes as f64 {
            self.bytes -= bytes as f64;
            true
        } else {
            false
        }
    }
}

/// The queue writer: takes the requests waiting (up to
/// [`MAX_WRITES_PER_COMMIT`] requests and [`MAX_RECORDS_PER_COMMIT`]
/// records), commits them in one transaction, and answers each. When a
/// shared commit fails, each request is retried in its own transaction, so
/// one bad write fails only itself.
async fn run_writer(
    db: Db,
    rules: Rules,
    mut queue: mpsc::Receiver<Job>,
    writes: Arc<watch::Sender<u64>>,
) {
    let rules = Arc::new(Mutex::new(rules));
    // A request taken from the queue that did not fit the last commit.
    let mut next: Option<Job> = None;
    loop {
        let first = match next.take() {
            Some(job) => job,
            None => match queue.recv().await {
                Some(job) => job,
                None => break,
            },
        };
        let mut records = first.write.records.len();
        let mut group = vec![first];
        while group.len() < MAX_WRITES_PER_COMMIT {
            match queue.try_recv() {
                Ok(job) if records + job.write.records.len() > MAX_RECORDS_PER_COMMIT => {
                    next = Some(job);
                    break;
                }
                Ok(job) => {
                    records += job.write.records.len();
                    group.push(job);
                }
                Err(_) => break,
            }
        }
        let (batch, answers): (Vec<Write>, Vec<_>) =
            group.into_iter().map(|job| (job.write, job.done)).unzip();
        let rules = Arc::clone(&rules);
        let results = db
            .call_local_as(
                Caller::ListenerWrite,
                move |conn| -> Result<_, QueueError> {
                    let mut rules = rules.lock().unwrap_or_else(|p| p.into_inner());
                    Ok(match queue::write(conn, &mut rules, unix_now(), &batch) {
                        Ok(reports) => reports.into_iter().map(Ok).collect(),
                        Err(err) if batch.len() == 1 => vec![Err(err)],
                        Err(_) => batch
                            .iter()
                            .map(|one| {
                                queue::write(
                                    conn,
                                    &mut rules,
                                    unix_now(),
                                    std::slice::from_ref(one),
                                )
                                .map(|mut reports| reports.remove(0))
                            })
                            .collect(),
                    })
                },
            )
            .await;
        let results: Vec<Result<WriteReport, QueueError>> = match results {
            Ok(results) => results,
            Err(err) => {
                let why = err.to_string();
                answers
                    .iter()
                    .map(|_| Err(QueueError::Writer(why.clone())))
                    .collect()
            }
        };
        if results.iter().any(Result::is_ok) {
            writes.send_modify(|n| *n = n.wrapping_add(1));
        }
        for (answer, result) in answers.into_iter().zip(results) {
            let _ = answer.send(result);
        }
    }
}

/// The running listeners and forwarder.
pub struct Running {
    pub http_addr: SocketAddr,
    pub tcp_addr: SocketAddr,
    unknown: Arc<UnknownRequests>,
    tasks: JoinSet<()>,
}

impl Running {
    /// Requests the listener has not handled since it started, for the
    /// site's view.
    pub fn unknown_requests(&self) -> UnknownCounts {
        self.unknown.counts()
    }

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
    let cadence = config.forwarding;
    let seen_retention = config.seen_retention;
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
                cadence,
                intake.writes.subscribe(),
                stopped.clone(),
            ));
        }
        None => tracing::warn!("no ledger to forward to: terminal records wait in the queue"),
    }
    tasks.spawn(forwarder::run_pruner(db, seen_retention, stopped));
    let allow = intake.config().allow.describe();
    tracing::info!(%http_addr, %tcp_addr, %allow, "terminal listener listening");
    Ok(Running {
        http_addr,
        tcp_addr,
        unknown: Arc::clone(&intake.unknown),
        tasks,
    })
}

/// Peer addresses of a port that have had a valid record or request
/// written: they may take the port's reserved slots
/// ([`crate::limits::KNOWN_PEER_SLOTS`]). Kept in the listener's database
/// too, so a restart does not hand those slots to whoever connects first.
#[derive(Clone, Default)]
pub struct KnownPeers {
    addrs: Arc<Mutex<std::collections::HashSet<std::net::IpAddr>>>,
    /// Where a newly known peer is kept, and the port's name there.
    kept: Option<(Db, &'static str)>,
    /// Peers held back until the instant given: their last request was
    /// refused for the raw budget, and a flood of such requests is slowed
    /// to the budget's pace before a byte of the next one is read.
    penalties: Arc<Mutex<std::collections::HashMap<std::net::IpAddr, tokio::time::Instant>>>,
}

impl KnownPeers {
    /// The known peers of `port` as kept in `db`; new ones are kept there.
    pub async fn load(db: Db, port: &'static str) -> KnownPeers {
        let kept = db
            .call_local(move |conn| queue::known_peers(conn, port))
            .await
            .unwrap_or_else(|err| {
                tracing::error!(%err, port, "cannot read the known terminals; starting without them");
                Vec::new()
            });
        let addrs = kept.iter().filter_map(|addr| addr.parse().ok()).collect();
        KnownPeers {
            addrs: Arc::new(Mutex::new(addrs)),
            kept: Some((db, port)),
            penalties: Arc::default(),
        }
    }

    /// Remembers `peer` (up to [`crate::limits::MAX_KNOWN_PEERS`] addresses),
    /// durably the first time.
    pub async fn mark(&self, peer: SocketAddr) {
        let new = {
            let mut addrs = self.addrs.lock().unwrap_or_else(|p| p.into_inner());
            addrs.len() < crate::limits::MAX_KNOWN_PEERS && addrs.insert(peer.ip())
        };
        let Some((db, port)) = self.kept.clone().filter(|_| new) else {
            return;
        };
        let addr = peer.ip().to_string();
        let kept = db
            .call_local(move |conn| queue::remember_peer(conn, port, &addr, unix_now()))
            .await;
        if let Err(err) = kept {
            tracing::warn!(%err, port, "cannot keep a known terminal for the next start");
        }
    }

    pub fn contains(&self, peer: SocketAddr) -> bool {
        let addrs = self.addrs.lock().unwrap_or_else(|p| p.into_inner());
        addrs.contains(&peer.ip())
    }
}

/// A connection's peer, which its handler marks known once it has written
/// a valid record or request from it.
#[derive(Clone)]
pub struct Peer {
    pub addr: SocketAddr,
    known: KnownPeers,
}

impl Peer {
    pub async fn mark_known(&self) {
        self.known.mark(self.addr).await;
    }

    /// Holds this peer's next connections back for `span` (at most
    /// [`crate::limits::PENALTY_MAX`]).
    pub fn penalize(&self, span: std::time::Duration) {
        let until = tokio::time::Instant::now() + span.min(crate::limits::PENALTY_MAX);
        let mut penalties = self
            .known
            .penalties
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let now = tokio::time::Instant::now();
        penalties.retain(|_, until| *until > now);
        if penalties.len() < crate::limits::MAX_KNOWN_PEERS {
            penalties.insert(self.addr.ip(), until);
        }
    }

    /// When this peer's penalty ends, if it has one now.
    pub fn penalty_ends(&self) -> Option<tokio::time::Instant> {
        let penalties = self
            .known
            .penalties
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        penalties
            .get(&self.addr.ip())
            .copied()
            .filter(|until| *until > tokio::time::Instant::now())
    }
}

/// Accepts connections on `listener` until `shutdown` turns true, serving
/// at most `max_connections` at once; [`crate::limits::KNOWN_PEER_SLOTS`]
/// of them are kept for known peers. While every general slot is taken an
/// unknown peer's connection is closed as soon as it is accepted, and while
/// every slot is taken nothing is accepted (more wait in the backlog). One
/// address holds at most [`crate::limits::TERMINAL_CONNECTIONS_PER_ADDRESS_MAX`]
/// connections; one more from it is closed as soon as it is accepted.
/// Each connection runs `serve_one` on its own task. The one accept loop
/// of both terminal ports; `port` names them in logs.
pub(crate) async fn accept_loop<F, Fut>(
    listener: tokio::net::TcpListener,
    max_connections: usize,
    port: &'static str,
    known: KnownPeers,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
    serve_one: F,
) where
    F: Fn(tokio::net::TcpStream, Peer, tokio::sync::watch::Receiver<bool>) -> Fut,
    Fut: std::future::Future<Output = std::io::Result<()>> + Send + 'static,
{
    use tokio::sync::Semaphore;
    let reserved_slots = crate::limits::KNOWN_PEER_SLOTS.min(max_connections / 2);
    let general = Arc::new(Semaphore::new(max_connections - reserved_slots));
    let reserved = Arc::new(Semaphore::new(reserved_slots));
    let addresses = crate::net::per_address::Addresses::new(
        crate::limits::TERMINAL_CONNECTIONS_PER_ADDRESS_MAX,
        crate::limits::TERMINAL_CONNECTIONS_PER_ADDRESS_MAX,
    );
    loop {
        // Any free slot lets the loop accept; which share the connection
        // takes is decided once its peer is known.
        let permit = tokio::select! {
            biased;
            _ = shutdown.changed() => return,
            permit = Arc::clone(&general).acquire_owned() => permit.expect("semaphore never closed"),
            permit = Arc::clone(&reserved).acquire_owned() => permit.expect("semaphore never closed"),
        };
        let (stream, peer) = tokio::select! {
            accepted = crate::net::accept::accept(&listener, port) => accepted,
            _ = shutdown.changed() => return,
        };
        let open = match addresses.open(peer.ip()) {
            Ok(open) => open,
            Err(full) => {
                crate::warn_sampled!(%peer, port, %full, "terminal connection refused: too many open from its address");
                drop(stream);
                continue;
            }
        };
        let permit = if known.contains(peer) || Arc::ptr_eq(permit.semaphore(), &general) {
            Some(permit)
        } else {
            // An unknown peer takes a general slot or none.
            Arc::clone(&general).try_acquire_owned().ok()
        };
        let Some(permit) = permit else {
            crate::warn_sampled!(%peer, port, "every general slot is taken; closed an unknown peer's connection");
            drop(stream);
            continue;
        };
        let connection = serve_one(
            stream,
            Peer {
                addr: peer,
                known: known.clone(),
            },
            shutdown.clone(),
        );
        tokio::spawn(async move {
            let _held = (permit, open);
            if let Err(err) = connection.await {
                tracing::debug!(%peer, %err, port, "terminal connection ended");
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::RawBudget;
    use crate::limits::{RAW_BYTES_BURST, RAW_BYTES_PER_SECOND};

    #[test]
    fn the_raw_budget_allows_its_burst_then_refills_at_its_rate() {
        let start = Instant::now();
        let mut budget = RawBudget::full(start);
        assert!(budget.take(start, RAW_BYTES_BURST));
        assert!(!budget.take(start, 1), "spent");
        let one_second = start + Duration::from_secs(1);
        assert!(!budget.take(one_second, RAW_BYTES_PER_SECOND + 1024));
        assert!(budget.take(one_second, RAW_BYTES_PER_SECOND));
        let much_later = start + Duration::from_secs(3600);
        assert!(budget.take(much_later, RAW_BYTES_BURST));
        assert!(!budget.take(much_later, 1), "the burst caps the refill");
    }
}
