//! The handheld API's connections: the accept loop of the `--http` port.
//!
//! axum's own `serve` has neither a connection cap nor a deadline on
//! request heads, so a client holding thousands of idle connections could
//! take every file descriptor of the process (and with them the terminal
//! ports). Here at most [`API_MAX_CONNECTIONS`] are served at once (more
//! wait in the kernel's backlog, where they cost no descriptor), each
//! request head must arrive within [`API_HEAD_DEADLINE`] (an idle
//! keep-alive connection is closed after it too), and a failed `accept()`
//! backs off ([`crate::accept`]).
//!
//! [`serve_connection`] serves one connection of any transport, so a TLS
//! listener wraps the stream and hands it here.

use std::future::Future;
use std::sync::Arc;

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use crate::limits::{API_HEAD_DEADLINE, API_MAX_CONNECTIONS};

/// Serves `router` on `listener` until `shutdown` resolves, then lets the
/// requests in flight finish and returns.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let slots = Arc::new(Semaphore::new(API_MAX_CONNECTIONS));
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            permit = Arc::clone(&slots).acquire_owned() => permit.expect("semaphore never closed"),
            () = &mut shutdown => break,
        };
        let (stream, _peer) = tokio::select! {
            accepted = crate::accept::accept(&listener, "api") => accepted,
            () = &mut shutdown => break,
        };
        let connection = serve_connection(stream, router.clone(), &graceful);
        tokio::spawn(async move {
            let _permit = permit;
            connection.await;
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}

/// Serves HTTP/1.1 on one connection, with the head deadline; `graceful`
/// ends it between requests when the server stops.
pub fn serve_connection<I>(
    io: I,
    router: Router,
    graceful: &GracefulShutdown,
) -> impl Future<Output = ()> + Send + 'static
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(API_HEAD_DEADLINE);
    let connection = builder.serve_connection(TokioIo::new(io), TowerToHyperService::new(router));
    let connection = graceful.watch(connection);
    async move {
        if let Err(err) = connection.await {
            tracing::debug!(%err, "api connection ended");
        }
    }
}
