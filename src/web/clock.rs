//! The device clock as a trait, so tests control time.

use crate::time::UnixMs;

pub trait Clock {
    fn now(&self) -> UnixMs;
}

/// `Date.now()`.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> UnixMs {
        UnixMs(js_sys::Date::now() as i64)
    }
}
