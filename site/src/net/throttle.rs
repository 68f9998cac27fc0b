//! Failed admin sign-ins per address, sans-IO: past
//! [`SIGN_IN_FAILURES_MAX`] failures within [`SIGN_IN_WINDOW`] an
//! address's failing sign-ins are answered 429 with Retry-After until its
//! oldest failure in the window ages out. A person who mistypes a token a
//! few times never meets it; a valid token is never refused by it (the
//! view's guard asks it only of a sign-in that failed), so noise from an
//! address an admin shares cannot lock the admin out.
//!
//! IPv6 addresses are counted by their /64, the block one host is usually
//! given, so a host cannot step around the limit by changing its address.
//! A leaf: the view's middleware drives it with `now`.

pub use crate::limits::{SIGN_IN_ADDRESSES_MAX, SIGN_IN_FAILURES_MAX, SIGN_IN_WINDOW};
use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::time::{Duration, Instant};

/// The failures of each address within the window.
#[derive(Debug, Default)]
pub struct SignInThrottle {
    failures: HashMap<IpAddr, VecDeque<Instant>>,
}

impl SignInThrottle {
    /// How long `addr` must wait before it may try again, if it must.
    pub fn retry_after(&mut self, addr: IpAddr, now: Instant) -> Option<Duration> {
        let key = address_block(addr);
        let times = self.failures.get_mut(&key)?;
        expire(times, now);
        if times.is_empty() {
            self.failures.remove(&key);
            return None;
        }
        if times.len() < SIGN_IN_FAILURES_MAX {
            return None;
        }
        let oldest = *times.front()?;
        Some((oldest + SIGN_IN_WINDOW).saturating_duration_since(now))
    }

    /// Records a failed sign-in of `addr` at `now`.
    pub fn failed(&mut self, addr: IpAddr, now: Instant) {
        let key = address_block(addr);
        if !self.failures.contains_key(&key) && self.failures.len() >= SIGN_IN_ADDRESSES_MAX {
            self.forget_one(now);
        }
        let times = self.failures.entry(key).or_default();
        expire(times, now);
        times.push_back(now);
        // Only the newest count toward the limit.
        while times.len() > SIGN_IN_FAILURES_MAX {
            times.pop_front();
        }
    }

    /// Addresses followed now.
    pub fn len(&self) -> usize {
        self.failures.len()
    }

    pub fn is_empty(&self) -> bool {
        self.failures.is_empty()
    }

    /// Drops the expired entries, or else the one heard from longest ago.
    fn forget_one(&mut self, now: Instant) {
        self.failures.retain(|_, times| {
            expire(times, now);
            !times.is_empty()
        });
        if self.failures.len() < SIGN_IN_ADDRESSES_MAX {
            return;
        }
        let stalest = self
            .failures
            .iter()
            .min_by_key(|(_, times)| times.back().copied())
            .map(|(addr, _)| *addr);
        if let Some(addr) = stalest {
            self.failures.remove(&addr);
        }
    }
}

fn expire(times: &mut VecDeque<Instant>, now: Instant) {
    while times
        .front()
        .is_some_and(|at| now.saturating_duration_since(*at) >= SIGN_IN_WINDOW)
    {
        times.pop_front();
    }
}

/// The address a client is counted as: IPv4 as it is, IPv6 by its /64
/// (an IPv4-mapped one as its IPv4 address).
pub fn address_block(addr: IpAddr) -> IpAddr {
    match addr {
        IpAddr::V4(_) => addr,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let mut segments = v6.segments();
                segments[4..].fill(0);
                IpAddr::V6(segments.into())
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ten_failures_in_a_minute_lock_out_until_the_oldest_ages_out() {
        let mut throttle = SignInThrottle::default();
        let addr: IpAddr = "192.0.2.7".parse().unwrap();
        let other: IpAddr = "192.0.2.8".parse().unwrap();
        let start = Instant::now();
        for i in 0..SIGN_IN_FAILURES_MAX as u64 {
            let at = start + Duration::from_secs(i);
            assert_eq!(throttle.retry_after(addr, at), None);
            throttle.failed(addr, at);
        }
        let now = start + Duration::from_secs(10);
        assert_eq!(
            throttle.retry_after(addr, now),
            Some(Duration::from_secs(50))
        );
        assert_eq!(throttle.retry_after(other, now), None);
        assert_eq!(
            throttle.retry_after(addr, start + Duration::from_secs(60)),
            None
        );
    }

    #[test]
    fn an_ipv6_host_is_one_address_across_its_64_and_memory_is_bounded() {
        let mut throttle = SignInThrottle::default();
        let start = Instant::now();
        for i in 0..SIGN_IN_FAILURES_MAX {
            let addr: IpAddr = format!("2001:db8:1:2::{:x}", i + 1).parse().unwrap();
            throttle.failed(addr, start);
        }
        let next: IpAddr = "2001:db8:1:2:ffff::1".parse().unwrap();
        assert!(throttle.retry_after(next, start).is_some());
        for i in 0..(SIGN_IN_ADDRESSES_MAX as u32 + 100) {
            throttle.failed(IpAddr::V4(i.into()), start);
        }
        assert!(throttle.len() <= SIGN_IN_ADDRESSES_MAX);
    }
}
