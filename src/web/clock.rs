//! The browser's clock: `Date.now()`, and sleeps on `setTimeout`.

use gloo_timers::future::TimeoutFuture;

use crate::time::UnixMs;

pub use crate::runtime::Clock;

/// `Date.now()`.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    type Sleep = TimeoutFuture;

    fn now(&self) -> UnixMs {
        UnixMs(js_sys::Date::now() as i64)
    }

    fn sleep_until(&self, at: UnixMs) -> TimeoutFuture {
        let wait = at.since(self.now()).clamp(0, i64::from(u32::MAX)) as u32;
        TimeoutFuture::new(wait)
    }
}
