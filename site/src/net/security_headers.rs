//! The security headers of the PWA's files (`/`, `/index.html`,
//! `/trust.html`, the shell's scripts, styles and wasm): a
//! Content-Security-Policy that lets the page and its service worker run
//! only the site's own scripts and the wasm module, `nosniff`, and no
//! framing by another page; and on every answer of the HTTPS port (never
//! the plain one), `Strict-Transport-Security` ([`set_hsts`]).
//!
//! What the PWA needs, and so what the policy allows:
//!
//! * scripts from the site alone (`app.js`, `sw.js`, `pkg/stockhop.js`),
//!   and compiling the queue's wasm module (`'wasm-unsafe-eval'`: it allows
//!   `WebAssembly.compile*`, not `eval`);
//! * styles from the site alone (`app.css`); `trust.html` carries its
//!   style inline because a LAN browser over plain HTTP is served that page
//!   and nothing else, so that page alone allows inline styles and runs no
//!   script at all;
//! * requests to the site it is set up for: its own origin, any HTTPS
//!   site, and a plain-HTTP site on this machine's loopback (the plain port
//!   serves the API to loopback clients only, so nothing else could
//!   answer). A policy's host sources cannot name an IPv6 literal, so
//!   plain HTTP on `[::1]` is not among them: `localhost` or `127.0.0.1`
//!   reach the same plain port.

use axum::extract::Request;
use axum::http::{header, HeaderName, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;

/// The policy of every PWA file but `trust.html`.
pub const PWA_POLICY: &str = "default-src 'self'; \
     script-src 'self' 'wasm-unsafe-eval'; \
     style-src 'self'; \
     img-src 'self' data: blob:; \
     connect-src 'self' https: http://localhost:* http://127.0.0.1:*; \
     worker-src 'self'; \
     manifest-src 'self'; \
     object-src 'none'; \
     base-uri 'none'; \
     form-action 'self'; \
     frame-ancestors 'none'";

/// The policy of `trust.html`: its own inline style, the site CA's link,
/// no script.
pub const TRUST_PAGE_POLICY: &str = "default-src 'none'; \
     style-src 'unsafe-inline'; \
     img-src 'self'; \
     object-src 'none'; \
     base-uri 'none'; \
     form-action 'none'; \
     frame-ancestors 'none'";

/// The headers a PWA file at `path` is served with.
pub fn pwa_security_headers(path: &str) -> [(HeaderName, HeaderValue); 3] {
    let policy = if path.trim_end_matches('/').ends_with("/trust.html") {
        TRUST_PAGE_POLICY
    } else {
        PWA_POLICY
    };
    [
        (
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(policy),
        ),
        (
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ),
        // For browsers that predate `frame-ancestors`.
        (header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY")),
    ]
}

/// Middleware: sets [`pwa_security_headers`] on a static-file response,
/// whatever its status (a 404 page is a document too).
pub async fn set_pwa_security_headers(request: Request, next: Next) -> Response {
    let path = request.uri().path().to_owned();
    let mut response = next.run(request).await;
    for (name, value) in pwa_security_headers(&path) {
        response.headers_mut().insert(name, value);
    }
    response
}

/// The `Strict-Transport-Security` value of every HTTPS answer: a browser
/// answered over HTTPS keeps to HTTPS for the site's name for a year
/// (31,536,000 s, the span browsers' preload lists ask for), so a handheld
/// never falls back to the plain port on a hostile network. Without
/// `includeSubDomains`: a site's name says nothing of the names below it.
pub const HSTS: &str = "max-age=31536000";

/// Middleware of the HTTPS port only: sets [`HSTS`] on every answer (a
/// browser takes it only over HTTPS, and the plain port must not claim
/// it).
pub async fn set_hsts(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    response.headers_mut().insert(
        header::STRICT_TRANSPORT_SECURITY,
        HeaderValue::from_static(HSTS),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_trust_page_runs_no_script_and_the_pwa_compiles_only_its_wasm() {
        let [(_, trust), ..] = pwa_security_headers("/trust.html");
        assert!(trust.to_str().unwrap().contains("default-src 'none'"));
        assert!(!trust.to_str().unwrap().contains("script-src"));
        for path in ["/", "/index.html", "/sw.js", "/pkg/stockhop_bg.wasm"] {
            let [(_, policy), ..] = pwa_security_headers(path);
            let policy = policy.to_str().unwrap();
            assert!(policy.contains("script-src 'self' 'wasm-unsafe-eval';"));
            assert!(!policy.contains("unsafe-inline"), "{path}");
            assert!(policy.contains("frame-ancestors 'none'"));
        }
    }
}
