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
//! in total, with a share kept for addresses that have finished one
//! ([`crate::net::handshakes`]), so stalled ClientHellos from many addresses
//! cannot hold the handshakes or slots a real handheld needs; connections
//! capped per address, open and waiting for a head, the longest-waiting
//! closed first ([`crate::net::per_address`]), so slow heads from one
//! address cannot hold the port; and the peer's address on
//! every request (the plain
//! port treats loopback and LAN clients differently). The plain port speaks
//! HTTP/1.1; the TLS port HTTP/2 when the handshake's ALPN agreed on it
//! (every browser does), else HTTP/1.1. HTTP/2 has no head deadline of its
//! own, so a connection with no request in flight for
//! [`API_HEAD_DEADLINE`] is closed, and its streams and heads are bounded
//! ([`API_H2_MAX_STREAMS`], [`API_H2_MAX_HEAD_BYTES`]). The only code that
//! accepts on the API ports.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::Router;
use http_body_util::BodyExt;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Semaphore};
use tokio_rustls::TlsAcceptor;
use tower::ServiceExt;

use crate::limits::{
    API_CONNECTIONS_PER_ADDRESS_MAX, API_H2_MAX_HEAD_BYTES, API_H2_MAX_STREAMS,
    API_HEADS_WAITING_PER_ADDRESS_MAX, API_HEAD_DEADLINE, API_MAX_CONNECTIONS, SHUTDOWN_GRACE,
    TLS_HANDSHAKE_TIMEOUT,
};
use crate::net::per_address::{Addresses, Open};
use crate::net::tls::ALPN_H2;

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
    let mut h2 = hyper::server::conn::http2::Builder::new(TokioExecutor::new());
    h2.timer(TokioTimer::new())
        .max_concurrent_streams(API_H2_MAX_STREAMS)
        .max_header_list_size(API_H2_MAX_HEAD_BYTES);
    let h2 = Arc::new(h2);
    let handshakes = crate::net::handshakes::Handshakes::default();
    let addresses = Addresses::new(
        API_CONNECTIONS_PER_ADDRESS_MAX,
        API_HEADS_WAITING_PER_ADDRESS_MAX,
    );
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
        let mut open = match addresses.open(peer.ip()) {
            Ok(open) => open,
            Err(full) => {
                crate::warn_sampled!(%peer, port, %full, "API connection refused: too many open from its address");
                drop(stream);
                continue;
            }
        };
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
        let h2 = h2.clone();
        let slots = slots.clone();
        tokio::spawn(async move {
            // Requests in flight on this connection, each counted until its
            // response body is dropped (sent or abandoned).
            let (in_flight, mut idle) = watch::channel(0usize);
            let mut heads = idle.clone();
            let service = hyper::service::service_fn(move |mut request| {
                request.extensions_mut().insert(ConnectInfo(peer));
                let counted = InFlight::enter(&in_flight);
                let response = router.clone().oneshot(request);
                async move {
                    let response = response.await?;
                    // The count goes with the body, which holds it until dropped.
                    Ok::<_, std::convert::Infallible>(response.map(|body| {
                        Body::new(body.map_frame(move |frame| {
                            let _held = &counted;
                            frame
                        }))
                    }))
                }
            });
            let result = match acceptor {
                None => {
                    let _slot = slot;
                    let conn = builder.serve_connection(TokioIo::new(stream), service);
                    tokio::select! {
                        result = watcher.watch(conn) => result,
                        () = pushed_out(&mut open, &mut heads) => Ok(()),
                    }
                }
                Some(acceptor) => {
                    let Some(tls) = handshake(&acceptor, stream, peer).await else {
                        return;
                    };
                    let Ok(_slot) = slots.acquire_owned().await else {
                        return;
                    };
                    if let Some(place) = place {
                        place.finished();
                    }
                    if tls.get_ref().1.alpn_protocol() == Some(ALPN_H2) {
                        let conn = h2.serve_connection(TokioIo::new(tls), service);
                        tokio::select! {
                            result = watcher.watch(conn) => result,
                            () = idle_for(API_HEAD_DEADLINE, &mut idle) => Ok(()),
                            () = pushed_out(&mut open, &mut heads) => Ok(()),
                        }
                    } else {
                        let conn = builder.serve_connection(TokioIo::new(tls), service);
                        tokio::select! {
                            result = watcher.watch(conn) => result,
                            () = pushed_out(&mut open, &mut heads) => Ok(()),
                        }
                    }
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

/// Resolves once `in_flight` has stayed at zero for `deadline`: an
/// HTTP/2 connection with nothing to do, closed as HTTP/1.1's head deadline
/// closes an idle one. Every request that starts or ends starts the wait
/// again.
async fn idle_for(deadline: std::time::Duration, in_flight: &mut watch::Receiver<usize>) {
    loop {
        if *in_flight.borrow_and_update() > 0 {
            if in_flight.changed().await.is_err() {
                return;
            }
            continue;
        }
        match tokio::time::timeout(deadline, in_flight.changed()).await {
            Ok(Ok(())) => continue,
            Ok(Err(_)) | Err(_) => return,
        }
    }
}

/// Resolves once this connection, while it waits for a request head (no
/// request in flight), is pushed out by newer waiters from its address
/// ([`crate::net::per_address`]); never while a request is in flight.
async fn pushed_out(open: &mut Open, in_flight: &mut watch::Receiver<usize>) {
    loop {
        if *in_flight.borrow_and_update() == 0 {
            open.waiting();
            tokio::select! {
                () = open.closed() => return,
                changed = in_flight.changed() => {
                    if changed.is_err() {
                        return std::future::pending().await;
                    }
                }
            }
        } else {
            open.busy();
            if in_flight.changed().await.is_err() {
                return std::future::pending().await;
            }
        }
    }
}

/// One request in flight on a connection, from its head until its
/// response body is dropped (sent or abandoned).
struct InFlight(watch::Sender<usize>);

impl InFlight {
    fn enter(count: &watch::Sender<usize>) -> InFlight {
        count.send_modify(|n| *n += 1);
        InFlight(count.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n -= 1);
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_http2_connection_is_idle_only_once_no_request_is_in_flight() {
        let deadline = std::time::Duration::from_millis(10);
        let (count, mut seen) = watch::channel(0usize);
        let request = InFlight::enter(&count);
        let idle = tokio::spawn(async move { idle_for(deadline, &mut seen).await });
        // Many deadlines pass while a request is in flight: never idle.
        tokio::time::sleep(deadline * 20).await;
        assert!(
            !idle.is_finished(),
            "a connection with a request in flight is not idle"
        );
        drop(request);
        idle.await.expect("idle once the request ended");
        assert_eq!(*count.borrow(), 0);
    }
}
