//! The handheld API's connections: the accept loop of the `--http` and
//! `--https` ports, plain or TLS, serving the router on each connection
//! until a shutdown future resolves.
//!
//! It exists (rather than `axum::serve`) because the site needs what that
//! loop does not offer: TLS through rustls; a bound on open connections
//! ([`API_MAX_CONNECTIONS`]: more wait in the kernel's backlog, where they
//! cost no descriptor, so idle clients cannot take the file descriptors the
//! terminal ports and SQLite need); a deadline on the TLS handshake and on
//! every request head ([`API_HEAD_DEADLINE`]; an idle keep-alive connection
//! is closed after it too); an `accept()` that backs off after a failure
//! ([`crate::net::accept`]); TLS handshakes in progress capped per address and
//! in total ([`crate::net::handshakes`]), so stalled ClientHellos cannot hold
//! the connection slots a real handheld needs; and the peer's address on
//! every request (the plain
//! port treats loopback and LAN clients differently). HTTP/1.1 only: the
//! head deadline is an HTTP/1 setting, and browsers and the forwarder speak
//! it. The only code that accepts on the API ports.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::ConnectInfo;
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio_rustls::TlsAcceptor;
use tower::ServiceExt;

use crate::limits::{
    API_HEAD_DEADLINE, API_MAX_CONNECTIONS, SHUTDOWN_GRACE, TLS_HANDSHAKE_TIMEOUT,
};

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
    let port = if acceptor.is_some() { "https" } else { "http" };
    let slots = Arc::new(Semaphore::new(API_MAX_CONNECTIONS));
    let graceful = GracefulShutdown::new();
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(API_HEAD_DEADLINE);
    let builder = Arc::new(builder);
    let handshakes = crate::net::handshakes::Handshakes::default();
    tokio::pin!(shutdown);
    loop {
        // A plain connection takes its slot before it is accepted; a TLS
        // one after its handshake, so handshakes that stall hold only
        // handshake places, never the slots of connections that finished.
        let slot = match acceptor {
            None => Some(tokio::select! {
                slot = slots.clone().acquire_owned() => slot.expect("the semaphore is never closed"),
                () = &mut shutdown => break,
            }),
            Some(_) => None,
        };
        let (stream, peer) = tokio::select! {
            accepted = crate::net::accept::accept(&listener, port) => accepted,
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let place = match acceptor {
            None => None,
            Some(_) => match handshakes.enter(peer.ip()) {
                Ok(place) => Some(place),
                Err(full) => {
                    crate::warn_sampled!(%peer, %full, "TLS handshake refused: too many in progress");
                    drop(stream);
                    continue;
                }
            },
        };
        let watcher = graceful.watcher();
        let acceptor = acceptor.clone();
        let router = router.clone();
        let builder = builder.clone();
        let slots = slots.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |mut request| {
                request.extensions_mut().insert(ConnectInfo(peer));
                router.clone().oneshot(request)
            });
            let result = match acceptor {
                None => {
                    let _slot = slot;
                    let conn = builder.serve_connection(TokioIo::new(stream), service);
                    watcher.watch(conn).await
                }
                Some(acceptor) => {
                    let Some(tls) = handshake(&acceptor, stream, peer).await else {
                        return;
                    };
                    let Ok(_slot) = slots.acquire_owned().await else {
                        return;
                    };
                    drop(place);
                    let conn = builder.serve_connection(TokioIo::new(tls), service);
                    watcher.watch(conn).await
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
