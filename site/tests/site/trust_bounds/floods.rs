//! Floods from many addresses: stalled TLS handshakes from twenty loopback
//! addresses, and slow request heads from one. Linux routes all of 127/8 to
//! the loopback interface, so each flood binds its own source addresses.

use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use stockhop_site::limits::{
    API_HEADS_WAITING_PER_ADDRESS_MAX, API_HEAD_DEADLINE, TLS_HANDSHAKES_PER_ADDRESS_MAX,
};
use stockhop_site::net::tls::{site_names, CertSource, CertStore};
use stockhop_site::store::db::Db;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::{connect_from, state, Served, HANDHELD_TIMEOUT};
use stockhop_site::ledger::LedgerState;

/// The loopback addresses a flood comes from: 127.0.0.2 on.
fn flooder(n: usize) -> String {
    format!("127.0.0.{}", 2 + n)
}

/// The first bytes of a TLS ClientHello, and then nothing.
const HALF_A_CLIENT_HELLO: &[u8] = &[0x16, 0x03, 0x01, 0x02, 0x00];

/// An HTTPS site on a loopback port, its CA, and what stops it.
pub(super) struct Tls {
    pub(super) addr: SocketAddr,
    ca: Vec<u8>,
    /// The CA's PEM file, for clients that trust a file.
    pub(super) ca_path: std::path::PathBuf,
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
    _dir: tempfile::TempDir,
}

pub(super) async fn serve_tls() -> Tls {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let (certs, _) = CertStore::open(CertSource::SiteCa {
        dir: data.join("tls"),
        names: site_names(Some("dock-pc"), &[]).unwrap(),
    })
    .unwrap();
    let db = Db::open(&data).unwrap();
    let router = stockhop_site::app(state(db, &data, LedgerState::new(None)));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(stockhop_site::net::server::serve_connections(
        listener,
        Some(certs.server_config()),
        router,
        async {
            let _ = stopped.await;
        },
    ));
    let ca_path = certs.ca_cert_path().unwrap().to_owned();
    let ca = std::fs::read(&ca_path).unwrap();
    Tls {
        addr,
        ca,
        ca_path,
        stop,
        task,
        _dir: dir,
    }
}

impl Tls {
    /// `GET /healthz` over a new TLS connection (a new client: a new
    /// handshake) from the loopback address `from`, within the handheld's
    /// timeout; its status, or why it failed.
    async fn healthz_from(&self, from: &str) -> Result<u16, String> {
        let client = reqwest::Client::builder()
            .add_root_certificate(reqwest::Certificate::from_pem(&self.ca).unwrap())
            .resolve("localhost", self.addr)
            .local_address(from.parse::<IpAddr>().unwrap())
            .timeout(HANDHELD_TIMEOUT)
            .build()
            .unwrap();
        let url = format!("https://localhost:{}/healthz", self.addr.port());
        match client.get(&url).send().await {
            Ok(response) => Ok(response.status().as_u16()),
            Err(err) => Err(format!("{err:?}")),
        }
    }

    pub(super) async fn stop(self) {
        let _ = self.stop.send(());
        self.task.await.unwrap().unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stalled_handshakes_from_twenty_addresses_leave_room_for_known_and_new_addresses() {
    let site = serve_tls().await;
    // The handheld's address finishes a handshake before the flood.
    assert_eq!(site.healthz_from("127.0.0.1").await, Ok(200));

    // 400 stalled ClientHellos, 20 from each of 20 addresses: more than
    // one address may stall, so some are closed at once; the rest hold
    // their places for the whole handshake deadline.
    const ADDRESSES: usize = 20;
    const EACH: usize = 20;
    let mut stalled = Vec::with_capacity(ADDRESSES * EACH);
    for n in 0..ADDRESSES {
        for _ in 0..EACH {
            let Ok(mut stream) = connect_from(&flooder(n), site.addr).await else {
                continue;
            };
            let _ = stream.write_all(HALF_A_CLIENT_HELLO).await;
            stalled.push(stream);
        }
    }
    // The site has taken every one of them it will: those past an
    // address's cap are closed.
    let mut closed = 0;
    for stream in &mut stalled {
        let mut byte = [0u8; 1];
        if let Ok(Ok(0) | Err(_)) =
            tokio::time::timeout(Duration::from_millis(20), stream.read(&mut byte)).await
        {
            closed += 1;
        }
    }
    eprintln!(
        "{} stalled ClientHellos from {ADDRESSES} addresses, {closed} closed at once",
        stalled.len()
    );
    assert!(
        closed >= ADDRESSES * (EACH - TLS_HANDSHAKES_PER_ADDRESS_MAX),
        "each address stalls at most {TLS_HANDSHAKES_PER_ADDRESS_MAX} handshakes ({closed} closed)"
    );

    // A known address's new handshake, and a new address's, both finish.
    assert_eq!(
        site.healthz_from("127.0.0.1").await,
        Ok(200),
        "the handheld that connected before"
    );
    assert_eq!(
        site.healthz_from("127.0.0.100").await,
        Ok(200),
        "an address new to the site, within its own cap"
    );
    drop(stalled);
    site.stop().await;
}

/// A request head sent a byte every half second that never ends.
async fn trickle(mut stream: TcpStream) {
    let head = b"GET /healthz HTTP/1.1\r\nHost: site\r\nX-Slow: ";
    for byte in head.iter().chain(std::iter::repeat(&b'x')) {
        if stream.write_all(&[*byte]).await.is_err() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// `GET /healthz` over a new connection from `from`; its status line.
async fn plain_healthz_from(from: &str, to: SocketAddr) -> String {
    let mut stream = connect_from(from, to).await.unwrap();
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: site\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut reply = Vec::new();
    let read = tokio::time::timeout(HANDHELD_TIMEOUT, stream.read_to_end(&mut reply)).await;
    assert!(read.is_ok(), "no answer within {HANDHELD_TIMEOUT:?}");
    let reply = String::from_utf8_lossy(&reply).into_owned();
    reply.lines().next().unwrap_or_default().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_heads_from_one_address_hold_only_that_addresss_share() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let db = Db::open(&data).unwrap();
    let site = Served::start(state(db, &data, LedgerState::new(None))).await;
    let addr: SocketAddr = site.base.trim_start_matches("http://").parse().unwrap();

    // 600 request heads from one address, a byte every half second.
    const SLOW: usize = 600;
    let started = Instant::now();
    let mut probes = Vec::with_capacity(SLOW);
    let mut tricklers = Vec::with_capacity(SLOW);
    for _ in 0..SLOW {
        let stream = connect_from(&flooder(0), addr).await.unwrap();
        // A second handle on the socket, to see whether the site closed it.
        let std = stream.into_std().unwrap();
        let probe = TcpStream::from_std(std.try_clone().unwrap()).unwrap();
        probes.push(probe);
        tricklers.push(tokio::spawn(trickle(TcpStream::from_std(std).unwrap())));
    }

    // Another address is answered, and so is a new request from the
    // flooding address itself: its head, sent at once, is read before its
    // connection is the oldest waiting.
    assert!(
        plain_healthz_from("127.0.0.1", addr)
            .await
            .starts_with("HTTP/1.1 200"),
        "another address"
    );
    assert!(
        plain_healthz_from(&flooder(0), addr)
            .await
            .starts_with("HTTP/1.1 200"),
        "the flooding address's own real request"
    );

    // The flood's extra connections were closed, not left to the head
    // deadline.
    let mut closed = 0;
    for probe in &mut probes {
        let mut byte = [0u8; 1];
        if let Ok(Ok(0) | Err(_)) =
            tokio::time::timeout(Duration::from_millis(5), probe.read(&mut byte)).await
        {
            closed += 1;
        }
    }
    let elapsed = started.elapsed();
    eprintln!("{SLOW} slow heads from one address: {closed} closed in {elapsed:?}");
    if elapsed < API_HEAD_DEADLINE {
        assert!(
            closed >= SLOW - API_HEADS_WAITING_PER_ADDRESS_MAX,
            "one address keeps at most {API_HEADS_WAITING_PER_ADDRESS_MAX} heads waiting ({closed} of {SLOW} closed)"
        );
    } else {
        eprintln!("the machine was too slow to tell the cap from the head deadline");
    }
    for trickler in tricklers {
        trickler.abort();
    }
    site.stop().await;
}
