//! Connections open on one port, counted by the address they come from.
//!
//! Two bounds hold per address (IPv6 by /64, as the sign-in throttle
//! counts): how many connections it may have open at all, past which a new
//! one is closed as soon as it is accepted; and how many of them may be
//! waiting for a request head (new, trickling, or idle between requests),
//! past which the address's longest-waiting one is closed to make room.
//! Closing the oldest waiter rather than refusing the newcomer matters when
//! an attacker and a real client share an address (a NAT, or loopback on
//! the site's own machine): the flood of slow heads pushes out its own
//! connections, while a real request's head, sent at once, is read before
//! its connection becomes the oldest. Before this, 600 request heads sent
//! a byte every half second from one address held every connection slot of
//! the API port until the head deadline and `/healthz` waited 7.9 s.

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::Notify;

use crate::net::throttle::address_block;

/// Why a connection was not taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{0} connections already open from this address")]
pub struct Full(pub usize);

/// The connections open on one port, by address.
#[derive(Clone, Debug)]
pub struct Addresses {
    shared: Arc<Mutex<Shared>>,
    open_max: usize,
    waiting_max: usize,
}

#[derive(Debug, Default)]
struct Shared {
    /// Orders waiters: a connection that starts waiting again (between two
    /// requests) counts as the newest.
    next_turn: u64,
    by_address: HashMap<IpAddr, Counts>,
}

#[derive(Debug, Default)]
struct Counts {
    open: usize,
    /// The connections waiting for a head, oldest first, each with what
    /// closes it.
    waiting: BTreeMap<u64, Arc<Notify>>,
}

/// One open connection's place: given back when dropped.
#[derive(Debug)]
pub struct Open {
    shared: Arc<Mutex<Shared>>,
    waiting_max: usize,
    addr: IpAddr,
    /// Its turn among its address's waiters while it waits for a head.
    turn: Option<u64>,
    closed: Arc<Notify>,
}

impl Addresses {
    /// At most `open_max` connections open from one address, and at most
    /// `waiting_max` of them waiting for a request head.
    pub fn new(open_max: usize, waiting_max: usize) -> Addresses {
        Addresses {
            shared: Arc::default(),
            open_max,
            waiting_max,
        }
    }

    /// A place for a connection from `addr`, unless that address already
    /// has its most open.
    pub fn open(&self, addr: IpAddr) -> Result<Open, Full> {
        let addr = address_block(addr);
        let mut shared = lock(&self.shared);
        let counts = shared.by_address.entry(addr).or_default();
        if counts.open >= self.open_max {
            return Err(Full(self.open_max));
        }
        counts.open += 1;
        Ok(Open {
            shared: self.shared.clone(),
            waiting_max: self.waiting_max,
            addr,
            turn: None,
            closed: Arc::new(Notify::new()),
        })
    }

    /// Connections open from `addr` now.
    pub fn open_from(&self, addr: IpAddr) -> usize {
        lock(&self.shared)
            .by_address
            .get(&address_block(addr))
            .map_or(0, |counts| counts.open)
    }
}

impl Open {
    /// This connection now waits for a request head, as its address's
    /// newest waiter. If that makes one too many, the address's oldest
    /// waiter is told to close (see [`Open::closed`]).
    pub fn waiting(&mut self) {
        let mut shared = lock(&self.shared);
        let turn = shared.next_turn;
        shared.next_turn += 1;
        let counts = shared.by_address.entry(self.addr).or_default();
        if let Some(old) = self.turn.take() {
            counts.waiting.remove(&old);
        }
        counts.waiting.insert(turn, self.closed.clone());
        self.turn = Some(turn);
        while counts.waiting.len() > self.waiting_max {
            if let Some((_, oldest)) = counts.waiting.pop_first() {
                oldest.notify_one();
            }
        }
    }

    /// This connection has a request in flight: it no longer waits. False
    /// when a newer waiter had pushed it out just before; the request goes
    /// on all the same (the address's waiters were trimmed either way).
    pub fn busy(&mut self) -> bool {
        let Some(turn) = self.turn.take() else {
            return true;
        };
        let still_waiting = lock(&self.shared)
            .by_address
            .get_mut(&self.addr)
            .is_some_and(|counts| counts.waiting.remove(&turn).is_some());
        if !still_waiting {
            // The push came too late: forget it, not close the request.
            self.closed = Arc::new(Notify::new());
        }
        still_waiting
    }

    /// Resolves once this connection, waiting, has been pushed out by a
    /// newer waiter from its address.
    pub async fn closed(&self) {
        self.closed.notified().await;
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        let mut shared = lock(&self.shared);
        if let Some(counts) = shared.by_address.get_mut(&self.addr) {
            if let Some(turn) = self.turn {
                counts.waiting.remove(&turn);
            }
            counts.open = counts.open.saturating_sub(1);
            if counts.open == 0 {
                shared.by_address.remove(&self.addr);
            }
        }
    }
}

fn lock(shared: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    shared
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_address_holds_at_most_its_share_and_others_are_not_counted_with_it() {
        let addresses = Addresses::new(3, 2);
        let flood: IpAddr = "192.0.2.1".parse().unwrap();
        let other: IpAddr = "192.0.2.2".parse().unwrap();
        let held: Vec<_> = (0..3).map(|_| addresses.open(flood).unwrap()).collect();
        assert_eq!(addresses.open(flood).unwrap_err(), Full(3));
        assert!(addresses.open(other).is_ok());
        drop(held);
        assert_eq!(addresses.open_from(flood), 0);
        assert!(addresses.open(flood).is_ok());
    }

    #[tokio::test]
    async fn past_its_waiters_an_address_loses_its_oldest_waiter_not_its_newest() {
        let addresses = Addresses::new(10, 2);
        let from: IpAddr = "2001:db8::1".parse().unwrap();
        let same_64: IpAddr = "2001:db8::2".parse().unwrap();
        let mut first = addresses.open(from).unwrap();
        let mut second = addresses.open(same_64).unwrap();
        let mut third = addresses.open(from).unwrap();
        first.waiting();
        second.waiting();
        third.waiting();
        // The first was pushed out: it closes, and it never gets busy.
        tokio::time::timeout(std::time::Duration::from_secs(5), first.closed())
            .await
            .expect("the oldest waiter is told to close");
        assert!(!first.busy());
        // The others still wait; one that gets busy leaves room.
        assert!(second.busy());
        let mut fourth = addresses.open(from).unwrap();
        fourth.waiting();
        assert!(third.busy());
        // Waiting again makes a connection the newest.
        third.waiting();
        let mut fifth = addresses.open(from).unwrap();
        fifth.waiting();
        assert!(third.busy(), "the oldest waiter was the fourth");
        assert!(!fourth.busy());
    }
}
