//! The throttle in front of the view's sign-ins: a request that signs in
//! (`POST /v1/site/login`, or any view request with a bearer token) and is
//! answered 401 counts as a failure, in `/metrics` and in a sampled log
//! line; from an address past its failures ([`crate::net::throttle`]) that
//! 401 becomes a 429 with Retry-After. A valid token is always taken, from
//! any address: the tokens are 256-bit, so guessing is not the threat but
//! noise is, and an attacker behind the same NAT or proxy as an admin must
//! not lock the admin out. A browser whose session cookie ran out is not a
//! guess and is not counted.

use std::net::SocketAddr;
use std::time::Instant;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Router;

use crate::error::AppError;
use crate::state::AppState;

/// The error code of a sign-in refused for too many failures.
pub const SIGN_IN_THROTTLED: &str = "SIGN_IN_THROTTLED";

/// `routes` with the throttle in front of each.
pub fn guarded(routes: Router<AppState>, state: &AppState) -> Router<AppState> {
    routes.route_layer(axum::middleware::from_fn_with_state(state.clone(), guard))
}

async fn guard(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let signs_in = request.uri().path() == "/v1/site/login"
        || request.headers().contains_key(header::AUTHORIZATION);
    // No peer address: the router runs outside the site's connection loop.
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(addr)| addr.ip());
    let (true, Some(peer)) = (signs_in, peer) else {
        return next.run(request).await;
    };
    let response = next.run(request).await;
    if response.status() != StatusCode::UNAUTHORIZED {
        return response;
    }
    let throttle = &state.ledger.sign_ins;
    let now = Instant::now();
    let mut throttle = lock(throttle);
    if let Some(wait) = throttle.retry_after(peer, now) {
        drop(throttle);
        state.ledger.metrics.sign_ins_throttled.inc();
        return AppError::Later {
            status: StatusCode::TOO_MANY_REQUESTS,
            code: SIGN_IN_THROTTLED,
            message: format!(
                "too many failed sign-ins from this address: try again in {} s",
                wait.as_secs().max(1)
            ),
            retry_after_secs: wait.as_secs_f64().ceil() as u64,
        }
        .into_response();
    }
    throttle.failed(peer, now);
    drop(throttle);
    state.ledger.metrics.sign_in_failures.inc();
    crate::warn_sampled!(%peer, "failed admin sign-in");
    response
}

fn lock(
    throttle: &std::sync::Mutex<crate::net::throttle::SignInThrottle>,
) -> std::sync::MutexGuard<'_, crate::net::throttle::SignInThrottle> {
    throttle
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
