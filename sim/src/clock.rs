//! A device's clock in the simulation: the world's time plus the device's
//! skew, moved only by the world; a sleep on it is ready once the world
//! has moved it far enough. The runtime and the device's database model
//! both read it.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use stockhop::runtime::Clock;
use stockhop::time::UnixMs;

/// The device's clock: the world's plus the device's skew, moved by the
/// world; a sleep is ready once the world has moved it far enough.
#[derive(Clone, Default)]
pub struct SimClock(Rc<ClockState>);

#[derive(Default)]
struct ClockState {
    now: Cell<i64>,
    /// Sleeps waiting, by their instant.
    timers: RefCell<Vec<(UnixMs, Waker)>>,
}

impl SimClock {
    /// Moves the clock to `now` and wakes the sleeps due by then.
    pub fn set(&self, now: UnixMs) {
        self.0.now.set(now.0);
        let due: Vec<Waker> = {
            let mut timers = self.0.timers.borrow_mut();
            let (due, later) = std::mem::take(&mut *timers)
                .into_iter()
                .partition(|(at, _)| *at <= now);
            *timers = later;
            due.into_iter().map(|(_, waker)| waker).collect()
        };
        for waker in due {
            waker.wake();
        }
    }

    pub fn next_timer(&self) -> Option<UnixMs> {
        self.0.timers.borrow().iter().map(|(at, _)| *at).min()
    }

    pub fn forget_timers(&self) {
        self.0.timers.borrow_mut().clear();
    }
}

/// A sleep on a [`SimClock`].
pub struct SimSleep {
    clock: SimClock,
    at: UnixMs,
    armed: bool,
}

impl Future for SimSleep {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.clock.now() >= self.at {
            return Poll::Ready(());
        }
        if !self.armed {
            self.armed = true;
            let entry = (self.at, cx.waker().clone());
            self.clock.0.timers.borrow_mut().push(entry);
        }
        Poll::Pending
    }
}

impl Clock for SimClock {
    type Sleep = SimSleep;
    fn now(&self) -> UnixMs {
        UnixMs(self.0.now.get())
    }
    fn sleep_until(&self, at: UnixMs) -> SimSleep {
        SimSleep {
            clock: self.clone(),
            at,
            armed: false,
        }
    }
}
