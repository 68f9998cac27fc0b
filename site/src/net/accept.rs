//! `accept()` that survives running out of file descriptors: every accept
//! loop of the site (the handheld API, both terminal ports) takes its
//! connections through [`accept`], which pauses after a failure (doubling
//! from [`ACCEPT_BACKOFF_FIRST`] to [`ACCEPT_BACKOFF_MAX`]) instead of
//! retrying at once, and logs the failure at most once per interval.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};

use crate::limits::{ACCEPT_BACKOFF_FIRST, ACCEPT_BACKOFF_MAX};
use crate::log_sample::Sampled;

/// The next connection on `listener`; `port` names the port in the log.
pub async fn accept(listener: &TcpListener, port: &'static str) -> (TcpStream, SocketAddr) {
    static FAILED: Sampled = Sampled::new();
    let mut pause = ACCEPT_BACKOFF_FIRST;
    loop {
        match listener.accept().await {
            Ok(accepted) => return accepted,
            Err(err) => {
                if let Some(suppressed) = FAILED.now() {
                    tracing::warn!(%err, port, suppressed, pause_ms = pause.as_millis() as u64, "accept failed; pausing");
                }
                tokio::time::sleep(pause).await;
                pause = next_pause(pause);
            }
        }
    }
}

fn next_pause(pause: Duration) -> Duration {
    (pause * 2).min(ACCEPT_BACKOFF_MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pause_doubles_up_to_its_cap() {
        let mut pause = ACCEPT_BACKOFF_FIRST;
        let mut seen = vec![pause];
        for _ in 0..20 {
            pause = next_pause(pause);
            seen.push(pause);
        }
        assert_eq!(seen[1], ACCEPT_BACKOFF_FIRST * 2);
        assert_eq!(*seen.last().unwrap(), ACCEPT_BACKOFF_MAX);
        assert!(seen.windows(2).all(|w| w[0] <= w[1]));
    }
}
