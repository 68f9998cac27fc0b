//! A one-shot channel for one thread: the service worker's runtime hands a
//! capture's result from the group writer to the caller waiting on it, and
//! a drain's end to the callers that joined it.
//!
//! The worker has one thread, so the slot is an `Rc` of `Cell`s: no atomics
//! and no lock, and no borrow that could fail (a `Cell` is only ever
//! swapped). Each message type instantiates this small code once, where a
//! thread-safe channel carried its atomics and `Arc` per type.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

/// The sender went away without sending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Canceled;

struct Slot<T> {
    value: Cell<Option<T>>,
    waker: Cell<Option<Waker>>,
    sender_gone: Cell<bool>,
}

/// Sends one value (see [`channel`]).
pub struct Sender<T>(Rc<Slot<T>>);

/// Resolves with the sent value, or [`Canceled`] if the sender was dropped
/// without sending.
pub struct Receiver<T>(Rc<Slot<T>>);

/// A connected sender and receiver.
pub fn channel<T>() -> (Sender<T>, Receiver<T>) {
    let slot = Rc::new(Slot {
        value: Cell::new(None),
        waker: Cell::new(None),
        sender_gone: Cell::new(false),
    });
    (Sender(slot.clone()), Receiver(slot))
}

impl<T> Sender<T> {
    /// Sends `value` and wakes the receiver. A receiver already dropped
    /// never reads it; the value is dropped with the slot.
    pub fn send(self, value: T) {
        self.0.value.set(Some(value));
        // Dropping `self` marks the sender gone and wakes the receiver.
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        self.0.sender_gone.set(true);
        if let Some(waker) = self.0.waker.take() {
            waker.wake();
        }
    }
}

impl<T> Future for Receiver<T> {
    type Output = Result<T, Canceled>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let slot = &self.0;
        if let Some(value) = slot.value.take() {
            return Poll::Ready(Ok(value));
        }
        if slot.sender_gone.get() {
            return Poll::Ready(Err(Canceled));
        }
        slot.waker.set(Some(cx.waker().clone()));
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::task::Wake;

    use super::*;

    /// Counts its wake-ups.
    struct Counter(AtomicUsize);

    impl Wake for Counter {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn poll<T>(rx: &mut Receiver<T>, waker: &Waker) -> Poll<Result<T, Canceled>> {
        Pin::new(rx).poll(&mut Context::from_waker(waker))
    }

    #[test]
    fn a_value_sent_before_or_after_the_first_poll_arrives_once() {
        let counter = Arc::new(Counter(AtomicUsize::new(0)));
        let waker = Waker::from(counter.clone());

        let (tx, mut rx) = channel();
        tx.send(7);
        assert_eq!(poll(&mut rx, &waker), Poll::Ready(Ok(7)));

        let (tx, mut rx) = channel();
        assert_eq!(poll(&mut rx, &waker), Poll::Pending);
        assert_eq!(counter.0.load(Ordering::SeqCst), 0);
        tx.send(String::from("done"));
        assert_eq!(counter.0.load(Ordering::SeqCst), 1, "the receiver is woken");
        assert_eq!(poll(&mut rx, &waker), Poll::Ready(Ok("done".into())));
    }

    #[test]
    fn a_sender_dropped_unsent_cancels_and_wakes_the_receiver() {
        let counter = Arc::new(Counter(AtomicUsize::new(0)));
        let waker = Waker::from(counter.clone());
        let (tx, mut rx) = channel::<u8>();
        assert_eq!(poll(&mut rx, &waker), Poll::Pending);
        drop(tx);
        assert_eq!(counter.0.load(Ordering::SeqCst), 1);
        assert_eq!(poll(&mut rx, &waker), Poll::Ready(Err(Canceled)));
    }

    #[test]
    fn a_value_sent_to_a_dropped_receiver_is_dropped_with_the_slot() {
        let value = Rc::new(());
        let (tx, rx) = channel();
        drop(rx);
        tx.send(value.clone());
        assert_eq!(Rc::strong_count(&value), 1);
    }
}
