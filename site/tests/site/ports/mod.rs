//! Loopback ports for a child process to listen on.

use std::net::TcpListener;
use std::sync::atomic::{AtomicU32, Ordering};

/// The ports handed out: below Linux's default ephemeral range
/// (32768–60999, `net.ipv4.ip_local_port_range`), from which every
/// outgoing connection on the machine takes its local port. A port from
/// `bind("127.0.0.1:0")` lies inside that range, and between a kill and a
/// restart any `connect()` may take it as its local port; the restarted
/// child then cannot bind it ("Address already in use"). No `connect()`
/// takes a port below the range.
const FIRST: u32 = 20_000;
const END: u32 = 32_768;

/// The next port to try: spread by process id, so the test binaries
/// cargo runs one after another do not reuse each other's ports, and
/// never the same twice in one process.
static NEXT: AtomicU32 = AtomicU32::new(u32::MAX);

/// A loopback port nothing listens on now, for a child to bind (and bind
/// again after it is killed and restarted).
pub fn free_port() -> u16 {
    let span = END - FIRST;
    let _ = NEXT.compare_exchange(
        u32::MAX,
        std::process::id().wrapping_mul(2_654_435_761) % span,
        Ordering::SeqCst,
        Ordering::SeqCst,
    );
    for _ in 0..span {
        let port = FIRST + NEXT.fetch_add(1, Ordering::SeqCst) % span;
        let port = u16::try_from(port).expect("below 32768");
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free loopback port in {FIRST}..{END}");
}
