//! What the plain-HTTP port serves, and to whom.
//!
//! Off loopback, plain HTTP is not a secure context: a browser there runs
//! no service worker, so a handheld would have no offline queue. The plain
//! port therefore serves the PWA and the `/v1` API to loopback clients only
//! (development, tests, a browser on the site machine itself). A LAN client
//! gets what it needs to move to HTTPS: `/ca.crt` (the site CA, to trust
//! once), the page that explains how (`/trust.html`), and `/healthz`;
//! every other page is redirected to the HTTPS address and the API refuses
//! with a message that names it. A central's signed endpoint for site
//! batches is the one API path open to any peer.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::Router;

use crate::error::AppError;

/// Paths a LAN client may fetch over plain HTTP: what it takes to trust the
/// site and move to HTTPS, and the health check monitoring polls.
const PLAIN_HTTP_PATHS: &[&str] = &["/ca.crt", "/trust.html", "/healthz"];

/// Machine-to-machine endpoints a LAN or WAN peer may POST to over plain
/// HTTP: no browser is involved (the HTTPS rule is about a secure context
/// for the handheld's service worker), and each request is authenticated
/// by its HMAC signature over timestamp and body. A site set up with an
/// `http://` central reaches it here; one with `https://` uses the HTTPS
/// port, which serves the same router.
const SIGNED_PLAIN_HTTP_PATHS: &[&str] = &[crate::central::wire::CENTRAL_HOPS_PATH];

/// The error code of a refused plain-HTTP API request.
pub const HTTPS_REQUIRED: &str = "HTTPS_REQUIRED";

/// `GET /ca.crt`: the site CA certificate (PEM) for devices to install.
/// With a certificate of the site's own PKI there is no site CA to offer.
pub fn ca_routes(ca_cert: Option<PathBuf>) -> Router {
    Router::new().route(
        "/ca.crt",
        get(move || {
            let ca_cert = ca_cert.clone();
            async move { ca_cert_response(ca_cert).await }
        }),
    )
}

async fn ca_cert_response(ca_cert: Option<PathBuf>) -> Result<Response, AppError> {
    let Some(path) = ca_cert else {
        return Err(AppError::client(
            StatusCode::NOT_FOUND,
            "NO_SITE_CA",
            "this site serves a certificate of its own PKI (--tls-cert); trust its issuer the way that PKI says",
        ));
    };
    let pem = tokio::fs::read(&path)
        .await
        .map_err(|err| AppError::Internal(format!("{}: {err}", path.display())))?;
    Ok((
        [
            // The type Android's certificate installer opens from a download.
            (header::CONTENT_TYPE, "application/x-x509-ca-cert"),
            (
                header::CONTENT_DISPOSITION,
                "attachment; filename=\"stockhop-site-ca.crt\"",
            ),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        Body::from(pem),
    )
        .into_response())
}

/// Wraps the plain port's router: loopback clients get everything, LAN
/// clients only [`PLAIN_HTTP_PATHS`] and otherwise a pointer to the site's
/// configured HTTPS address `site_url` (`https://NAME[:PORT]`, what setup
/// links carry). The pointer never takes its host from the request's
/// `Host`: a forged one would send the device elsewhere.
pub fn https_only_off_loopback(router: Router, site_url: &str) -> Router {
    let site_url: Arc<str> = Arc::from(site_url.trim_end_matches('/'));
    router.layer(middleware::from_fn_with_state(site_url, guard))
}

async fn guard(State(base): State<Arc<str>>, request: Request, next: Next) -> Response {
    // No peer address means the router runs outside the site's own
    // connection loop; fail closed.
    let loopback = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .is_some_and(|ConnectInfo(addr)| is_loopback(*addr));
    let path = request.uri().path();
    let signed = *request.method() == Method::POST && SIGNED_PLAIN_HTTP_PATHS.contains(&path);
    if loopback || signed || PLAIN_HTTP_PATHS.contains(&path) {
        return next.run(request).await;
    }
    let is_page =
        matches!(*request.method(), Method::GET | Method::HEAD) && !path.starts_with("/v1/");
    if is_page {
        let target = match request.uri().query() {
            Some(query) => format!("{base}{path}?{query}"),
            None => format!("{base}{path}"),
        };
        return Redirect::permanent(&target).into_response();
    }
    AppError::client(
        StatusCode::FORBIDDEN,
        HTTPS_REQUIRED,
        format!("the handheld API needs HTTPS off the site machine: use {base}/ (trust the site CA from this port's /trust.html first)"),
    )
    .into_response()
}

fn is_loopback(addr: SocketAddr) -> bool {
    match addr {
        SocketAddr::V4(v4) => v4.ip().is_loopback(),
        SocketAddr::V6(v6) => {
            v6.ip().is_loopback() || v6.ip().to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    }
}
