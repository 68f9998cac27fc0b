//! TLS handshakes in progress, capped per address and in total.
//!
//! A client that opens a connection and sends half a ClientHello (or
//! nothing) holds its place for the whole handshake deadline. Without a cap
//! a few hundred such connections held every connection slot of the HTTPS
//! port, and a real handheld's request waited behind them past its own
//! 10 s timeout. A connection past either cap is closed at once, before
//! any TLS work: one address can stall at most
//! [`TLS_HANDSHAKES_PER_ADDRESS_MAX`] handshakes, and only a flood from
//! many addresses reaches [`TLS_HANDSHAKES_MAX`]. Handshakes that finish
//! take a few milliseconds on a site LAN, so real clients rarely hold a
//! place at all.

pub use crate::limits::{TLS_HANDSHAKES_MAX, TLS_HANDSHAKES_PER_ADDRESS_MAX};
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

/// Why a handshake was not started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Full {
    #[error("{TLS_HANDSHAKES_PER_ADDRESS_MAX} handshakes in progress from this address")]
    Address,
    #[error("{TLS_HANDSHAKES_MAX} handshakes in progress")]
    Total,
}

/// The handshakes in progress, by address.
#[derive(Clone, Debug, Default)]
pub struct Handshakes {
    counts: Arc<Mutex<Counts>>,
}

#[derive(Debug, Default)]
struct Counts {
    total: usize,
    by_address: HashMap<IpAddr, usize>,
}

/// A handshake's place: given back when dropped.
#[derive(Debug)]
pub struct Place {
    counts: Arc<Mutex<Counts>>,
    addr: IpAddr,
}

impl Handshakes {
    /// A place for a handshake from `addr`, if both caps allow one.
    pub fn enter(&self, addr: IpAddr) -> Result<Place, Full> {
        let addr = crate::net::throttle::address_block(addr);
        let mut counts = lock(&self.counts);
        if counts.total >= TLS_HANDSHAKES_MAX {
            return Err(Full::Total);
        }
        let from = counts.by_address.entry(addr).or_default();
        if *from >= TLS_HANDSHAKES_PER_ADDRESS_MAX {
            return Err(Full::Address);
        }
        *from += 1;
        counts.total += 1;
        Ok(Place {
            counts: self.counts.clone(),
            addr,
        })
    }

    /// Handshakes in progress now.
    pub fn in_progress(&self) -> usize {
        lock(&self.counts).total
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        let mut counts = lock(&self.counts);
        counts.total = counts.total.saturating_sub(1);
        if let Some(from) = counts.by_address.get_mut(&self.addr) {
            *from -= 1;
            if *from == 0 {
                counts.by_address.remove(&self.addr);
            }
        }
    }
}

fn lock(counts: &Mutex<Counts>) -> std::sync::MutexGuard<'_, Counts> {
    counts
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_address_holds_its_share_and_places_come_back_when_dropped() {
        let handshakes = Handshakes::default();
        let stalling: IpAddr = "192.0.2.1".parse().unwrap();
        let real: IpAddr = "192.0.2.2".parse().unwrap();
        let held: Vec<_> = (0..TLS_HANDSHAKES_PER_ADDRESS_MAX)
            .map(|_| handshakes.enter(stalling).unwrap())
            .collect();
        assert_eq!(handshakes.enter(stalling).unwrap_err(), Full::Address);
        let place = handshakes.enter(real).unwrap();
        drop(place);
        drop(held);
        assert_eq!(handshakes.in_progress(), 0);
        let many: Vec<_> = (0..TLS_HANDSHAKES_MAX as u32)
            .map(|i| handshakes.enter(IpAddr::V4(i.into())).unwrap())
            .collect();
        assert_eq!(handshakes.enter(real).unwrap_err(), Full::Total);
        drop(many);
        assert!(handshakes.enter(real).is_ok());
    }
}
