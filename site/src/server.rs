//! The site's connection loop: accepts connections on one port, plain or
//! TLS, and serves the router on each until a shutdown future resolves.
//!
//! It exists (rather than `axum::serve`) because the site needs what that
//! loop does not offer: TLS through rustls, a bound on open connections, a
//! deadline on the TLS handshake and on reading a request head, and the
//! peer's address on every request (the plain port treats loopback and LAN
//! clients differently). The only code that accepts on the API ports.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::ConnectInfo;
use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio_rustls::TlsAcceptor;
use tower::ServiceExt;

/// Open connections one API port serves at once. Each handheld keeps one
/// or two; past this, new connections wait in the kernel's backlog rather
/// than take the file descriptors the terminal ports and SQLite need.
pub const MAX_CONNECTIONS_PER_PORT: usize = 1024;
/// Time a client has to finish the TLS handshake; a handheld on a poor
/// link needs a few round trips, a client that stalls holds a slot.
pub const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// Time a client has to send a whole request head once it starts one.
pub const HEAD_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Pause after a failed accept (out of file descriptors, say) so the loop
/// does not spin, as hyper's and axum's own loops do.
pub const ACCEPT_ERROR_PAUSE: Duration = Duration::from_millis(100);
/// At most one log line per this interval for repeated accept failures.
pub const ACCEPT_ERROR_LOG_INTERVAL: Duration = Duration::from_secs(10);
/// How long shutdown waits for requests in flight before it gives up on
/// them (a handheld resends; its key makes the resend harmless).
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

/// Serves `router` on `listener`, over TLS when `tls` is given, until
/// `shutdown` resolves; then stops accepting and lets the requests in
/// flight finish (for up to [`SHUTDOWN_GRACE`]).
pub async fn serve_connections(
    listener: TcpListener,
    tls: Option<Arc<rustls::ServerConfig>>,
    router: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let acceptor = tls.map(TlsAcceptor::from);
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS_PER_PORT));
    let graceful = GracefulShutdown::new();
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(HEAD_READ_TIMEOUT);
    let builder = Arc::new(builder);
    let mut accept_errors = AcceptErrors::default();
    tokio::pin!(shutdown);
    loop {
        let slot = tokio::select! {
            slot = slots.clone().acquire_owned() => slot.expect("the semaphore is never closed"),
            () = &mut shutdown => break,
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(err) => {
                    accept_errors.record(&err);
                    tokio::time::sleep(ACCEPT_ERROR_PAUSE).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let watcher = graceful.watcher();
        let acceptor = acceptor.clone();
        let router = router.clone();
        let builder = builder.clone();
        tokio::spawn(async move {
            let _slot = slot;
            let service = hyper::service::service_fn(move |mut request| {
                request.extensions_mut().insert(ConnectInfo(peer));
                router.clone().oneshot(request)
            });
            let result = match acceptor {
                None => {
                    let conn = builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
                    watcher.watch(conn.into_owned()).await
                }
                Some(acceptor) => {
                    let Some(tls) = handshake(&acceptor, stream, peer).await else {
                        return;
                    };
                    let conn = builder.serve_connection_with_upgrades(TokioIo::new(tls), service);
                    watcher.watch(conn.into_owned()).await
                }
            };
            if let Err(err) = result {
                tracing::debug!(%peer, %err, "connection ended with an error");
            }
        });
    }
    drop(listener);
    if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!(
            grace_s = SHUTDOWN_GRACE.as_secs(),
            "requests still in flight after the shutdown grace; closing them"
        );
    }
    Ok(())
}

async fn handshake(
    acceptor: &TlsAcceptor,
    stream: TcpStream,
    peer: SocketAddr,
) -> Option<tokio_rustls::server::TlsStream<TcpStream>> {
    match tokio::time::timeout(TLS_HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await {
        Ok(Ok(tls)) => Some(tls),
        // A client that does not trust the site CA yet ends here on every
        // attempt; that is the site engineer's to fix on the device, not
        // the server's, so it is not a warning.
        Ok(Err(err)) => {
            tracing::debug!(%peer, %err, "TLS handshake failed");
            None
        }
        Err(_) => {
            tracing::debug!(%peer, "TLS handshake timed out");
            None
        }
    }
}

/// Accept failures, logged at most once per interval with how many there
/// were since the last line.
#[derive(Default)]
struct AcceptErrors {
    last_logged: Option<Instant>,
    unlogged: u64,
}

impl AcceptErrors {
    fn record(&mut self, err: &std::io::Error) {
        self.unlogged += 1;
        let due = self
            .last_logged
            .is_none_or(|at| at.elapsed() >= ACCEPT_ERROR_LOG_INTERVAL);
        if due {
            tracing::warn!(%err, failures = self.unlogged, "accepting a connection failed");
            self.last_logged = Some(Instant::now());
            self.unlogged = 0;
        }
    }
}
