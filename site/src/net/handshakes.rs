//! TLS handshakes in progress, capped per address and in total, with a
//! share of the total kept for addresses that have finished one before.
//!
//! A client that opens a connection and sends half a ClientHello (or
//! nothing) holds its place for the whole handshake deadline. Without a cap
//! a few hundred such connections held every connection slot of the HTTPS
//! port, and a real handheld's request waited behind them past its own
//! 10 s timeout. A connection past a cap is closed at once, before any TLS
//! work: one address can stall at most [`TLS_HANDSHAKES_PER_ADDRESS_MAX`]
//! handshakes; addresses that have never finished a handshake together at
//! most [`TLS_HANDSHAKES_MAX`] less [`TLS_HANDSHAKES_KNOWN_RESERVED`]; the
//! rest is kept for addresses that have (up to
//! [`TLS_KNOWN_ADDRESSES_MAX`] of them are remembered), as the terminal
//! ports keep slots for their known peers. A stalled flood from many
//! addresses therefore cannot fill the budget alone: the handhelds that
//! have connected before still get their handshakes, and 20 flooding
//! addresses leave room for a new one too. Handshakes that finish take a
//! few milliseconds on a site LAN, so real clients rarely hold a place at
//! all.

pub use crate::limits::{
    TLS_HANDSHAKES_KNOWN_RESERVED, TLS_HANDSHAKES_MAX, TLS_HANDSHAKES_PER_ADDRESS_MAX,
    TLS_KNOWN_ADDRESSES_MAX,
};
use std::collections::{HashMap, HashSet};
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

/// Why a handshake was not started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Full {
    #[error("{TLS_HANDSHAKES_PER_ADDRESS_MAX} handshakes in progress from this address")]
    Address,
    #[error("the handshakes of addresses that never finished one fill their share")]
    Unknown,
    #[error("{TLS_HANDSHAKES_MAX} handshakes in progress")]
    Total,
}

/// The handshakes in progress, by address, and the addresses that have
/// finished one.
#[derive(Clone, Debug, Default)]
pub struct Handshakes {
    counts: Arc<Mutex<Counts>>,
}

#[derive(Debug, Default)]
struct Counts {
    total: usize,
    /// Of `total`, those from addresses not in `known`.
    unknown: usize,
    by_address: HashMap<IpAddr, usize>,
    known: HashSet<IpAddr>,
}

/// A handshake's place: given back when dropped.
#[derive(Debug)]
pub struct Place {
    counts: Arc<Mutex<Counts>>,
    addr: IpAddr,
    unknown: bool,
}

impl Handshakes {
    /// A place for a handshake from `addr`, if the caps allow one.
    pub fn enter(&self, addr: IpAddr) -> Result<Place, Full> {
        let addr = crate::net::throttle::address_block(addr);
        let mut counts = lock(&self.counts);
        if counts.total >= TLS_HANDSHAKES_MAX {
            return Err(Full::Total);
        }
        let unknown = !counts.known.contains(&addr);
        if unknown && counts.unknown >= TLS_HANDSHAKES_MAX - TLS_HANDSHAKES_KNOWN_RESERVED {
            return Err(Full::Unknown);
        }
        let from = counts.by_address.entry(addr).or_default();
        if *from >= TLS_HANDSHAKES_PER_ADDRESS_MAX {
            return Err(Full::Address);
        }
        *from += 1;
        counts.total += 1;
        if unknown {
            counts.unknown += 1;
        }
        Ok(Place {
            counts: self.counts.clone(),
            addr,
            unknown,
        })
    }

    /// Handshakes in progress now.
    pub fn in_progress(&self) -> usize {
        lock(&self.counts).total
    }
}

impl Place {
    /// The handshake finished: its address is known from now on (while
    /// fewer than [`TLS_KNOWN_ADDRESSES_MAX`] are), and its place is given
    /// back.
    pub fn finished(self) {
        let mut counts = lock(&self.counts);
        if counts.known.len() < TLS_KNOWN_ADDRESSES_MAX {
            counts.known.insert(self.addr);
        }
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        let mut counts = lock(&self.counts);
        counts.total = counts.total.saturating_sub(1);
        if self.unknown {
            counts.unknown = counts.unknown.saturating_sub(1);
        }
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
    }

    #[test]
    fn addresses_that_never_finished_a_handshake_cannot_fill_the_budget_alone() {
        let handshakes = Handshakes::default();
        let known: IpAddr = "192.0.2.2".parse().unwrap();
        handshakes.enter(known).unwrap().finished();
        let strangers = TLS_HANDSHAKES_MAX - TLS_HANDSHAKES_KNOWN_RESERVED;
        let flood: Vec<_> = (0..strangers as u32)
            .map(|i| {
                handshakes
                    .enter(IpAddr::V4((0x0a00_0000 + i).into()))
                    .unwrap()
            })
            .collect();
        let stranger: IpAddr = "198.51.100.1".parse().unwrap();
        assert_eq!(handshakes.enter(stranger).unwrap_err(), Full::Unknown);
        // The known address still has the reserved share.
        let reserved: Vec<_> = (0..TLS_HANDSHAKES_PER_ADDRESS_MAX)
            .map(|_| handshakes.enter(known).unwrap())
            .collect();
        assert_eq!(handshakes.in_progress(), strangers + reserved.len());
        // And the total holds for everyone.
        let mut more_known = Vec::new();
        for i in 0..TLS_HANDSHAKES_KNOWN_RESERVED as u32 {
            let addr = IpAddr::V4((0xc000_0300 + i).into());
            lock(&handshakes.counts).known.insert(addr);
            if let Ok(place) = handshakes.enter(addr) {
                more_known.push(place);
            }
        }
        assert_eq!(handshakes.in_progress(), TLS_HANDSHAKES_MAX);
        assert_eq!(handshakes.enter(known).unwrap_err(), Full::Total);
        drop((flood, reserved, more_known));
        assert_eq!(handshakes.in_progress(), 0);
        assert!(handshakes.enter(stranger).is_ok());
    }
}
