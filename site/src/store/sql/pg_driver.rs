//! A PostgreSQL connection driven on the thread that uses it.
//!
//! tokio-postgres splits a connection in two: the client that statements
//! go through, and a connection future that writes their messages to the
//! socket and reads the answers. Run as a task on a runtime of its own,
//! every round trip crosses threads twice (the request to the task, the
//! answer back), which on loopback cost the ledger as much as the round
//! trip itself. Here the connection future is polled by the thread that
//! awaits a statement, beside the statement, over a non-blocking socket:
//! when neither can go on, the thread waits in poll(2) on that socket
//! alone. Between statements nothing polls it (a notice the server sends
//! meanwhile waits in the socket).
//!
//! Nothing here needs a runtime, so it runs the same from the server's
//! blocking threads, the CLI's main thread and a test's async body.
//!
//! Why not the `postgres` crate's blocking client over an r2d2 pool: it was
//! measured in its place (the ledger bench on a loopback cluster, four
//! runs each, interleaved; medians, each within the other's range):
//!
//! | 50 items a request          | this driver    | `postgres` + r2d2 |
//! |-----------------------------|----------------|-------------------|
//! | in-process apply, items/s   | 1847 (54% raw) | 2113 (59% raw)    |
//! | `POST /v1/sync` apply       | 1625 (45% raw) | 1885 (50% raw)    |
//! | round trips per item        | 2.13           | 4.13              |
//! | one round trip, µs          | 42 (raw 75)    | 37 (raw 61)       |
//!
//! As fast on loopback, where a round trip costs tens of µs, but it keeps
//! neither of two things the ledger needs:
//! * It awaits each statement's answer before sending the next, so the
//!   writes the ledger puts off (claims, a unit's new place) cannot travel
//!   with the next statement: twice the round trips per item, each one a
//!   network round trip to a database on another machine.
//! * Each client runs a runtime of its own and panics when used or
//!   dropped on a thread that is running async code, where the server's
//!   start and the tests' async bodies call the ledger: each such call
//!   would have to move to another thread.

use std::cell::RefCell;
use std::collections::HashMap;
use std::future::Future;
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream, ToSocketAddrs};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::net::UnixStream;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use deadpool::managed::{Metrics, RecycleError, RecycleResult};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_postgres::config::Host;

use super::pg_error::describe;
use super::Error;

/// How long work waits for a free connection, or for a new one to open,
/// before it fails as busy (503 with `Retry-After`, like SQLite's busy
/// timeout).
pub const PG_WAIT: Duration = Duration::from_secs(5);

/// PostgreSQL's port when the URL names none.
const PG_DEFAULT_PORT: u16 = 5432;

/// The stream under a connection: TCP, or the server's Unix socket.
enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Stream {
    fn try_clone(&self) -> io::Result<Stream> {
        Ok(match self {
            Stream::Tcp(stream) => Stream::Tcp(stream.try_clone()?),
            Stream::Unix(stream) => Stream::Unix(stream.try_clone()?),
        })
    }

    fn fd(&self) -> BorrowedFd<'_> {
        match self {
            Stream::Tcp(stream) => stream.as_fd(),
            Stream::Unix(stream) => stream.as_fd(),
        }
    }
}

/// The socket as the connection future sees it: non-blocking, answering
/// `Pending` where it would block. No waker is registered: the thread
/// driving the connection waits on the socket itself ([`Driven::run`]),
/// told by `write_blocked` whether to wait for room to write too.
struct Socket {
    stream: Stream,
    write_blocked: Arc<AtomicBool>,
}

impl AsyncRead for Socket {
    fn poll_read(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let unfilled = buf.initialize_unfilled();
        let read = match &mut self.get_mut().stream {
            Stream::Tcp(stream) => stream.read(unfilled),
            Stream::Unix(stream) => stream.read(unfilled),
        };
        match read {
            Ok(n) => {
                buf.advance(n);
                Poll::Ready(Ok(()))
            }
            Err(err) if err.kind() == io::ErrorKind::WouldBlock => Poll::Pending,
            Err(err) => Poll::Ready(Err(err)),
        }
    }
}

impl AsyncWrite for Socket {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<io::Result<usize>> {
        let socket = self.get_mut();
        let written = match &mut socket.stream {
            Stream::Tcp(stream) => stream.write(bytes),
            Stream::Unix(stream) => stream.write(bytes),
        };
        match written {
            Err(err) if err.kind() == io::ErrorKind::WouldBlock => {
                socket.write_blocked.store(true, Ordering::Relaxed);
                Poll::Pending
            }
            other => Poll::Ready(other),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        // Written straight to the socket: nothing is held here.
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(match &self.stream {
            Stream::Tcp(stream) => stream.shutdown(Shutdown::Write),
            Stream::Unix(stream) => stream.shutdown(Shutdown::Write),
        })
    }
}

/// Set when a future asks to be polled again.
#[derive(Default)]
struct Woken(AtomicBool);

impl Wake for Woken {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::Release);
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.store(true, Ordering::Release);
    }
}

type Driver = Pin<Box<dyn Future<Output = Result<(), tokio_postgres::Error>> + Send>>;

/// One open connection: the client statements go through, and the
/// connection future that writes them to the socket and reads the
/// answers, polled only while a statement is awaited.
pub(super) struct Driven {
    pub(super) client: tokio_postgres::Client,
    /// `None` once it has ended (the server closed it, or the socket
    /// failed): the client's statements then fail as closed.
    driver: RefCell<Option<Driver>>,
    /// The socket's own descriptor (a duplicate), to wait on.
    waits_on: Stream,
    write_blocked: Arc<AtomicBool>,
    /// Statements prepared on this connection, by their SQL.
    pub(super) statements: RefCell<HashMap<String, tokio_postgres::Statement>>,
}

impl Driven {
    /// Awaits `work` on this thread, driving the connection beside it.
    pub(super) fn run<T>(&self, work: impl Future<Output = T>) -> T {
        let mut work = std::pin::pin!(work);
        let mut step = |cx: &mut Context<'_>| match work.as_mut().poll(cx) {
            // A connection that has ended dropped the channels `work`
            // waits on, so polled again it fails as closed.
            Poll::Pending if self.drive(cx) => work.as_mut().poll(cx),
            polled => polled,
        };
        loop {
            match block_on(&self.waits_on, &self.write_blocked, None, &mut step) {
                Ok(out) => return out,
                // The wait itself failed (not the socket: its errors are
                // read by the connection): the connection is given up.
                Err(err) => {
                    tracing::warn!(error = %err, "waiting on a PostgreSQL socket failed; closing it");
                    self.driver.borrow_mut().take();
                }
            }
        }
    }

    /// Polls the connection once; whether it has ended (now or before).
    fn drive(&self, cx: &mut Context<'_>) -> bool {
        let mut driver = self.driver.borrow_mut();
        let Some(running) = driver.as_mut() else {
            return true;
        };
        if running.as_mut().poll(cx).is_pending() {
            return false;
        }
        *driver = None;
        true
    }
}

/// Polls `step` until it is ready, waiting on `stream` in between while
/// nothing asked to be polled again; by `deadline`, if given.
fn block_on<T>(
    stream: &Stream,
    write_blocked: &AtomicBool,
    deadline: Option<Instant>,
    mut step: impl FnMut(&mut Context<'_>) -> Poll<T>,
) -> io::Result<T> {
    let woken = Arc::new(Woken::default());
    let waker = Waker::from(Arc::clone(&woken));
    let mut cx = Context::from_waker(&waker);
    loop {
        woken.0.store(false, Ordering::Release);
        if let Poll::Ready(out) = step(&mut cx) {
            return Ok(out);
        }
        if woken.0.load(Ordering::Acquire) {
            continue;
        }
        let mut flags = rustix::event::PollFlags::IN;
        if write_blocked.swap(false, Ordering::Relaxed) {
            flags |= rustix::event::PollFlags::OUT;
        }
        let timeout = match deadline {
            Some(deadline) => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "PostgreSQL did not answer in time",
                    ));
                }
                Some(rustix::event::Timespec::try_from(left).map_err(io::Error::other)?)
            }
            None => None,
        };
        let mut fds = [rustix::event::PollFd::from_borrowed_fd(stream.fd(), flags)];
        match rustix::event::poll(&mut fds, timeout.as_ref()) {
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(err) => return Err(err.into()),
        }
    }
}

/// Opens the pool's connections and checks them on their way out of it.
pub(super) struct Opener {
    pub(super) config: tokio_postgres::Config,
}

impl deadpool::managed::Manager for Opener {
    type Type = Driven;
    type Error = Error;

    async fn create(&self) -> Result<Driven, Error> {
        let unreachable =
            |err: io::Error| Error::Unavailable(format!("cannot reach PostgreSQL: {err}"));
        let stream = open_stream(&self.config).map_err(unreachable)?;
        let waits_on = stream.try_clone().map_err(unreachable)?;
        let write_blocked = Arc::new(AtomicBool::new(false));
        let socket = Socket {
            stream,
            write_blocked: Arc::clone(&write_blocked),
        };
        // The startup exchange, driven here like any statement, within the
        // time a connection has to open.
        let mut connect = std::pin::pin!(self.config.connect_raw(socket, tokio_postgres::NoTls));
        let deadline = Instant::now() + PG_WAIT;
        let (client, connection) = block_on(&waits_on, &write_blocked, Some(deadline), |cx| {
            connect.as_mut().poll(cx)
        })
        .map_err(unreachable)?
        .map_err(|err| Error::Unavailable(describe(&err)))?;
        Ok(Driven {
            client,
            driver: RefCell::new(Some(Box::pin(connection))),
            waits_on,
            write_blocked,
            statements: RefCell::new(HashMap::new()),
        })
    }

    async fn recycle(&self, driven: &mut Driven, _: &Metrics) -> RecycleResult<Error> {
        // A connection the server closed while it sat in the pool is only
        // seen closed once it is polled.
        driven.drive(&mut Context::from_waker(Waker::noop()));
        if driven.client.is_closed() {
            return Err(RecycleError::message("the connection is closed"));
        }
        Ok(())
    }
}

/// Connects to the URL's hosts in order (a `hostaddr` before its `host`),
/// the first that answers, pairing hosts and ports as tokio-postgres's own
/// `connect` does.
fn open_stream(config: &tokio_postgres::Config) -> io::Result<Stream> {
    let hosts = config.get_hosts();
    let addrs = config.get_hostaddrs();
    let ports = config.get_ports();
    let timeout = config.get_connect_timeout().copied().unwrap_or(PG_WAIT);
    let mut last = io::Error::new(io::ErrorKind::InvalidInput, "no host in the URL");
    for i in 0..hosts.len().max(addrs.len()) {
        let port = ports
            .get(i)
            .or(ports.first())
            .copied()
            .unwrap_or(PG_DEFAULT_PORT);
        let host = match (addrs.get(i), hosts.get(i)) {
            (Some(addr), _) => Host::Tcp(addr.to_string()),
            (None, Some(host)) => host.clone(),
            (None, None) => continue,
        };
        let opened = match host {
            Host::Tcp(name) => open_tcp(config, &name, port, timeout),
            Host::Unix(dir) => {
                UnixStream::connect(dir.join(format!(".s.PGSQL.{port}"))).map(Stream::Unix)
            }
        };
        match opened.and_then(|stream| {
            match &stream {
                Stream::Tcp(tcp) => tcp.set_nonblocking(true)?,
                Stream::Unix(unix) => unix.set_nonblocking(true)?,
            }
            Ok(stream)
        }) {
            Ok(stream) => return Ok(stream),
            Err(err) => last = err,
        }
    }
    Err(last)
}

fn open_tcp(
    config: &tokio_postgres::Config,
    name: &str,
    port: u16,
    timeout: Duration,
) -> io::Result<Stream> {
    let mut last = io::Error::new(
        io::ErrorKind::NotFound,
        format!("{name} resolves to no address"),
    );
    for addr in (name, port).to_socket_addrs()? {
        match TcpStream::connect_timeout(&addr, timeout) {
            Ok(stream) => {
                stream.set_nodelay(true)?;
                if config.get_keepalives() {
                    socket2::SockRef::from(&stream).set_tcp_keepalive(
                        &socket2::TcpKeepalive::new().with_time(config.get_keepalives_idle()),
                    )?;
                }
                return Ok(Stream::Tcp(stream));
            }
            Err(err) => last = err,
        }
    }
    Err(last)
}
