//! HTTPS on the site LAN: the site CA and server certificate on disk, the
//! served certificate over real TLS on loopback, SIGHUP reloads, clear
//! errors for bad files, and the plain port's answer to LAN clients.

use crate::listening;

use std::net::{IpAddr, SocketAddr};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use axum::http::StatusCode;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, ServerName};
use stockhop_site::net::server;
use stockhop_site::net::tls::{site_names, CertSource, CertStore, Issued, SiteName};
use stockhop_site::site::lan;
use stockhop_site::store::db::Db;
use stockhop_site::AppState;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

fn names(extra: &[&str]) -> Vec<SiteName> {
    let extra: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
    site_names(Some("dock-pc"), &extra).unwrap()
}

fn site_ca(dir: &Path, extra: &[&str]) -> (CertStore, Issued) {
    CertStore::open(CertSource::SiteCa {
        dir: dir.to_path_buf(),
        names: names(extra),
    })
    .unwrap()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

/// The DNS names and addresses a PEM certificate (the first in the file)
/// is issued for.
fn sans(pem_path: &Path) -> Vec<String> {
    let der = CertificateDer::from_pem_file(pem_path).unwrap();
    let (_, cert) = x509_parser::parse_x509_certificate(&der).unwrap();
    let san = cert.subject_alternative_name().unwrap().unwrap();
    san.value
        .general_names
        .iter()
        .map(|name| match name {
            x509_parser::extensions::GeneralName::DNSName(dns) => dns.to_string(),
            x509_parser::extensions::GeneralName::IPAddress(bytes) => match bytes.len() {
                4 => IpAddr::from(<[u8; 4]>::try_from(*bytes).unwrap()).to_string(),
                _ => IpAddr::from(<[u8; 16]>::try_from(*bytes).unwrap()).to_string(),
            },
            other => format!("{other:?}"),
        })
        .collect()
}

/// A TLS client that trusts only `ca_pem`, connected to `addr` with
/// `server_name` as SNI.
async fn connect_tls(addr: SocketAddr, server_name: &str, ca_pem: &str) -> TlsStream<TcpStream> {
    try_connect_tls(addr, server_name, ca_pem).await.unwrap()
}

async fn try_connect_tls(
    addr: SocketAddr,
    server_name: &str,
    ca_pem: &str,
) -> std::io::Result<TlsStream<TcpStream>> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots.add(cert.unwrap()).unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let tcp = TcpStream::connect(addr).await?;
    connector
        .connect(ServerName::try_from(server_name.to_string()).unwrap(), tcp)
        .await
}

/// Sends one keep-alive HTTP/1.1 GET on `stream` and returns the status
/// line and body (the server answers with a Content-Length).
async fn get<S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin>(
    stream: &mut S,
    host: &str,
    path: &str,
) -> (String, String) {
    let request = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut buf = Vec::new();
    loop {
        let mut chunk = [0u8; 4096];
        let n = stream.read(&mut chunk).await.unwrap();
        assert!(n > 0, "connection closed before a whole answer");
        buf.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&buf).to_string();
        if let Some(end) = text.find("\r\n\r\n") {
            let head = &text[..end];
            let length: usize = head
                .lines()
                .find_map(|l| {
                    let (name, value) = l.split_once(':')?;
                    name.eq_ignore_ascii_case("content-length")
                        .then(|| value.trim().parse().unwrap())
                })
                .unwrap_or(0);
            if buf.len() >= end + 4 + length {
                let status = head.lines().next().unwrap().to_string();
                let body = text[end + 4..end + 4 + length].to_string();
                return (status, body);
            }
        }
    }
}

fn served_cert(stream: &TlsStream<TcpStream>) -> CertificateDer<'static> {
    stream.get_ref().1.peer_certificates().unwrap()[0]
        .clone()
        .into_owned()
}

#[test]
fn first_start_makes_a_site_ca_and_a_server_certificate_naming_every_name() {
    let dir = tempfile::tempdir().unwrap();
    let tls = dir.path().join("tls");
    let (store, issued) = site_ca(&tls, &["stockhop.lan", "192.168.1.20"]);
    assert_eq!(issued, Issued::NewCa);
    for file in ["ca.crt", "ca.key", "server.crt", "server.key"] {
        assert!(tls.join(file).exists(), "{file}");
    }
    assert_eq!(store.ca_cert_path(), Some(tls.join("ca.crt")));
    let mut names = sans(&tls.join("server.crt"));
    names.sort();
    assert_eq!(
        names,
        [
            "127.0.0.1",
            "192.168.1.20",
            "::1",
            "dock-pc",
            "localhost",
            "stockhop.lan"
        ]
    );
}

#[test]
fn private_keys_are_readable_by_the_site_user_only() {
    let dir = tempfile::tempdir().unwrap();
    site_ca(dir.path(), &[]);
    for (file, mode) in [
        ("ca.key", 0o600),
        ("server.key", 0o600),
        ("ca.crt", 0o644),
        ("server.crt", 0o644),
    ] {
        let actual = std::fs::metadata(dir.path().join(file))
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(actual, mode, "{file}: {actual:o}");
    }
}

#[test]
fn a_restart_with_the_same_names_reuses_the_ca_and_the_server_certificate() {
    let dir = tempfile::tempdir().unwrap();
    site_ca(dir.path(), &["stockhop.lan"]);
    let ca = read(&dir.path().join("ca.crt"));
    let server = read(&dir.path().join("server.crt"));
    let (_, issued) = site_ca(dir.path(), &["stockhop.lan"]);
    assert_eq!(issued, Issued::Reused);
    assert_eq!(read(&dir.path().join("ca.crt")), ca);
    assert_eq!(read(&dir.path().join("server.crt")), server);
}

#[tokio::test]
async fn a_changed_name_set_reissues_the_server_certificate_from_the_same_ca() {
    let dir = tempfile::tempdir().unwrap();
    site_ca(dir.path(), &["stockhop.lan"]);
    let ca = read(&dir.path().join("ca.crt"));
    let ca_key = read(&dir.path().join("ca.key"));
    let old_server = read(&dir.path().join("server.crt"));

    let (store, issued) = site_ca(dir.path(), &["stockhop.lan", "stockhop.test"]);
    assert_eq!(issued, Issued::NewServer);
    assert_eq!(read(&dir.path().join("ca.crt")), ca, "the CA is kept");
    assert_eq!(
        read(&dir.path().join("ca.key")),
        ca_key,
        "the CA key is kept"
    );
    assert_ne!(read(&dir.path().join("server.crt")), old_server);
    assert!(sans(&dir.path().join("server.crt")).contains(&"stockhop.test".to_string()));

    // A client that trusts the original CA accepts the new certificate
    // under the new name, over real TLS.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let router = axum::Router::new().route("/", axum::routing::get(|| async { "ok" }));
    let served = tokio::spawn(server::serve_connections(
        listener,
        Some(store.server_config()),
        router,
        async {
            let _ = stopped.await;
        },
    ));
    let mut stream = connect_tls(addr, "stockhop.test", &ca).await;
    let (status, body) = get(&mut stream, "stockhop.test", "/").await;
    assert_eq!((status.as_str(), body.as_str()), ("HTTP/1.1 200 OK", "ok"));
    assert!(
        try_connect_tls(addr, "elsewhere.lan", &ca).await.is_err(),
        "a name the certificate does not carry is refused"
    );
    drop(stream);
    stop.send(()).unwrap();
    served.await.unwrap().unwrap();
}

#[test]
fn half_a_site_ca_is_an_error_naming_the_missing_file() {
    let dir = tempfile::tempdir().unwrap();
    site_ca(dir.path(), &[]);
    std::fs::remove_file(dir.path().join("ca.crt")).unwrap();
    let err = CertStore::open(CertSource::SiteCa {
        dir: dir.path().to_path_buf(),
        names: names(&[]),
    })
    .unwrap_err()
    .to_string();
    assert!(err.contains("ca.crt") && err.contains("missing"), "{err}");
    assert!(
        !dir.path().join("ca.crt").exists(),
        "no new CA silently replaces the one devices trust"
    );
}

fn site_command(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_stockhop-site"));
    command
        .args(args)
        .args([
            "--terminal-http",
            "127.0.0.1:0",
            "--terminal-tcp",
            "127.0.0.1:0",
        ])
        .env("RUST_LOG", "info");
    command
}

/// `stockhop-site serve` on loopback ports the system chooses, with
/// `data` as its data and www folder and `extra` arguments.
fn serve_command(data: &Path, extra: &[&str]) -> Command {
    let mut args = vec!["serve", "--http", "127.0.0.1:0", "--https", "127.0.0.1:0"];
    args.extend_from_slice(extra);
    let mut command = site_command(&args);
    command.arg("--data").arg(data).arg("--www").arg(data);
    command
}

/// Runs `serve` to its end (it must fail fast) and returns its stderr.
fn failed_start(data: &Path, extra: &[&str]) -> String {
    let output = serve_command(data, extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(!output.status.success(), "serve started with bad TLS files");
    String::from_utf8_lossy(&output.stderr).to_string()
}

#[test]
fn missing_or_unreadable_certificate_files_stop_the_start_with_the_file_named() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such.crt");
    let key = dir.path().join("site.key");
    std::fs::write(&key, "not a key").unwrap();
    let stderr = failed_start(
        dir.path(),
        &[
            "--tls-cert",
            missing.to_str().unwrap(),
            "--tls-key",
            key.to_str().unwrap(),
        ],
    );
    assert!(stderr.contains(missing.to_str().unwrap()), "{stderr}");

    // A real certificate with a key that is not one names the key file.
    let (cert, _) = test_certificate("stockhop.test");
    let cert_path = dir.path().join("site.crt");
    std::fs::write(&cert_path, cert).unwrap();
    let stderr = failed_start(
        dir.path(),
        &[
            "--tls-cert",
            cert_path.to_str().unwrap(),
            "--tls-key",
            key.to_str().unwrap(),
        ],
    );
    assert!(stderr.contains(key.to_str().unwrap()), "{stderr}");

    // --tls-cert without --tls-key is refused by the command line itself.
    let stderr = failed_start(dir.path(), &["--tls-cert", cert_path.to_str().unwrap()]);
    assert!(stderr.contains("--tls-key"), "{stderr}");
}

/// A test CA (made once per call) and a certificate it issued for `name`:
/// (chain PEM, key PEM), the chain ending with the CA.
fn test_certificate(name: &str) -> (String, String) {
    let (ca, ca_key) = test_ca();
    issue(&ca, &ca_key, name)
}

fn test_ca() -> (String, rcgen::KeyPair) {
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::default();
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "test CA");
    (params.self_signed(&key).unwrap().pem(), key)
}

fn issue(ca_pem: &str, ca_key: &rcgen::KeyPair, name: &str) -> (String, String) {
    let key = rcgen::KeyPair::generate().unwrap();
    let ca_key = rcgen::KeyPair::from_pem(&ca_key.serialize_pem()).unwrap();
    let issuer = rcgen::Issuer::from_ca_cert_pem(ca_pem, ca_key).unwrap();
    let params = rcgen::CertificateParams::new(vec![name.to_string()]).unwrap();
    let cert = params.signed_by(&key, &issuer).unwrap();
    (format!("{}{ca_pem}", cert.pem()), key.serialize_pem())
}

struct Site {
    child: Child,
    https: SocketAddr,
}

impl Drop for Site {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_site(data: &Path, extra: &[&str]) -> Site {
    let site = listening::spawn(&mut serve_command(data, extra));
    Site {
        child: site.child,
        https: site.https,
    }
}

#[tokio::test]
async fn sighup_reloads_the_sites_own_certificate_without_dropping_connections() {
    let dir = tempfile::tempdir().unwrap();
    let (ca, ca_key) = test_ca();
    let (first_chain, first_key) = issue(&ca, &ca_key, "stockhop.test");
    let cert_path = dir.path().join("site.crt");
    let key_path = dir.path().join("site.key");
    std::fs::write(&cert_path, &first_chain).unwrap();
    std::fs::write(&key_path, &first_key).unwrap();
    let site = start_site(
        dir.path(),
        &[
            "--tls-cert",
            cert_path.to_str().unwrap(),
            "--tls-key",
            key_path.to_str().unwrap(),
        ],
    );

    let mut open = connect_tls(site.https, "stockhop.test", &ca).await;
    let (status, _) = get(&mut open, "stockhop.test", "/healthz").await;
    assert_eq!(status, "HTTP/1.1 200 OK");
    let first = served_cert(&open);
    assert_eq!(
        first,
        CertificateDer::from_pem_slice(first_chain.as_bytes()).unwrap()
    );

    let (second_chain, second_key) = issue(&ca, &ca_key, "stockhop.test");
    std::fs::write(&cert_path, &second_chain).unwrap();
    std::fs::write(&key_path, &second_key).unwrap();
    let second = CertificateDer::from_pem_slice(second_chain.as_bytes()).unwrap();
    assert!(Command::new("kill")
        .args(["-HUP", &site.child.id().to_string()])
        .status()
        .unwrap()
        .success());

    let mut served = first.clone();
    for _ in 0..50 {
        let fresh = connect_tls(site.https, "stockhop.test", &ca).await;
        served = served_cert(&fresh);
        if served == second {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        served, second,
        "new handshakes get the reloaded certificate"
    );
    let (status, _) = get(&mut open, "stockhop.test", "/healthz").await;
    assert_eq!(
        status, "HTTP/1.1 200 OK",
        "the connection opened before the reload still answers"
    );
}

#[test]
fn the_setup_link_from_device_add_uses_the_https_address() {
    let dir = tempfile::tempdir().unwrap();
    drop(stockhop_site::store::db::Db::open(dir.path()).unwrap());
    let output = Command::new(env!("CARGO_BIN_EXE_stockhop-site"))
        .args(["device", "add", "HH-7", "--profile", "mc3390xr"])
        .args(["--https", "0.0.0.0:8443", "--tls-name", "stockhop.lan"])
        .arg("--data")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(output.status.success());
    let token = String::from_utf8(output.stdout).unwrap().trim().to_string();
    assert!(
        !token.contains(char::is_whitespace),
        "stdout is the token alone"
    );
    let stderr = String::from_utf8(output.stderr).unwrap();
    let expected = format!(
        "https://stockhop.lan:8443/#site=https%3A%2F%2Fstockhop.lan%3A8443&device=HH-7&token={token}"
    );
    assert!(stderr.contains(&expected), "{stderr}");
}

/// The plain port's router as the site binary builds it, served on
/// `listener` by the site's own connection loop.
async fn plain_port(
    dir: &Path,
    listener: tokio::net::TcpListener,
) -> (
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<()>,
) {
    std::fs::create_dir_all(dir.join("www")).unwrap();
    std::fs::write(
        dir.join("www/index.html"),
        "<!doctype html><title>PWA</title>",
    )
    .unwrap();
    std::fs::write(
        dir.join("www/trust.html"),
        "<!doctype html><title>Trust</title>",
    )
    .unwrap();
    let (store, _) = site_ca(&dir.join("tls"), &[]);
    let state = AppState {
        db: Db::open(&dir.join("data")).unwrap(),
        www_dir: dir.join("www"),
        ledger: stockhop_site::ledger::LedgerState::new(None),
    };
    let site = stockhop_site::app(state).merge(lan::ca_routes(store.ca_cert_path()));
    // The site's configured name is the address it is reached by here.
    let site_url = format!("https://{}:8443", listener.local_addr().unwrap().ip());
    let router = lan::https_only_off_loopback(site, &site_url);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        server::serve_connections(listener, None, router, async {
            let _ = stopped.await;
        })
        .await
        .unwrap();
    });
    (stop, task)
}

/// Sends a raw HTTP/1.1 request from `from` (a local address) to `to`.
async fn raw_request(from: IpAddr, to: SocketAddr, request: &str) -> String {
    let socket = match from {
        IpAddr::V4(_) => tokio::net::TcpSocket::new_v4().unwrap(),
        IpAddr::V6(_) => tokio::net::TcpSocket::new_v6().unwrap(),
    };
    socket.bind(SocketAddr::new(from, 0)).unwrap();
    let mut stream = socket.connect(to).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).await.unwrap();
    reply
}

/// This machine's first non-loopback IPv4 address: a peer the site sees
/// as a LAN client, with the traffic never leaving the machine.
fn lan_address() -> Option<IpAddr> {
    if_addrs::get_if_addrs()
        .unwrap()
        .into_iter()
        .map(|iface| iface.ip())
        .find(|ip| ip.is_ipv4() && !ip.is_loopback())
}

#[tokio::test]
async fn plain_http_from_the_lan_is_pointed_to_https_and_loopback_is_served() {
    let dir = tempfile::tempdir().unwrap();
    let Some(lan) = lan_address() else {
        // A machine with loopback alone cannot be a LAN peer of itself; the
        // rule is still checked with the peer set on the request below.
        eprintln!("no non-loopback IPv4 address here: the socket-level check is left to machines that have one");
        return;
    };
    let listener = tokio::net::TcpListener::bind((lan, 0)).await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let loopback_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let loopback = loopback_listener.local_addr().unwrap();
    let (stop, task) = plain_port(dir.path(), listener).await;
    let (stop_lo, task_lo) = plain_port(&dir.path().join("lo"), loopback_listener).await;
    let to = SocketAddr::new(lan, port);
    let host = format!("{lan}:{port}");

    let page = raw_request(
        lan,
        to,
        &format!("GET /index.html?x=1 HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"),
    )
    .await;
    assert!(page.starts_with("HTTP/1.1 308"), "{page}");
    assert!(
        page.to_ascii_lowercase()
            .contains(&format!("location: https://{lan}:8443/index.html?x=1")),
        "{page}"
    );

    let body = r#"{"device_id":"HH-1","sent_at":"2026-11-30T10:00:00Z","items":[]}"#;
    let sync = raw_request(
        lan,
        to,
        &format!(
            "POST /v1/sync HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ),
    )
    .await;
    assert!(
        sync.starts_with(&format!("HTTP/1.1 {}", StatusCode::FORBIDDEN.as_u16())),
        "{sync}"
    );
    assert!(sync.contains(lan::HTTPS_REQUIRED), "{sync}");
    assert!(sync.contains(&format!("https://{lan}:8443/")), "{sync}");

    // A central's endpoint for signed site batches is open to LAN peers:
    // this site is no central, so past the guard it answers 404.
    let batch = r#"{"site_id":"S","hops":[]}"#;
    let central = raw_request(
        lan,
        to,
        &format!(
            "POST /v1/central/hops HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{batch}",
            batch.len()
        ),
    )
    .await;
    assert!(central.starts_with("HTTP/1.1 404"), "{central}");
    assert!(!central.contains(lan::HTTPS_REQUIRED), "{central}");

    for path in ["/ca.crt", "/trust.html", "/healthz"] {
        let reply = raw_request(
            lan,
            to,
            &format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"),
        )
        .await;
        assert!(reply.starts_with("HTTP/1.1 200"), "{path}: {reply}");
    }
    let ca = raw_request(
        lan,
        to,
        &format!("GET /ca.crt HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"),
    )
    .await;
    assert!(ca.contains("-----BEGIN CERTIFICATE-----"), "{ca}");

    let local = raw_request(
        IpAddr::from([127, 0, 0, 1]),
        loopback,
        "GET /index.html HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert!(local.starts_with("HTTP/1.1 200"), "{local}");
    assert!(local.contains("<title>PWA</title>"), "{local}");

    stop.send(()).unwrap();
    stop_lo.send(()).unwrap();
    task.await.unwrap();
    task_lo.await.unwrap();
}

/// Starts `serve` with stderr captured, stops it with SIGTERM, and returns
/// what it logged.
fn logs_of_a_run(extra: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let listening::Listening {
        mut child, logs, ..
    } = listening::spawn(&mut serve_command(dir.path(), extra));
    assert!(Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap()
        .success());
    assert!(child.wait().unwrap().success());
    logs.join().unwrap()
}

#[test]
fn logs_to_a_file_carry_no_colour_codes_and_json_logs_are_one_object_a_line() {
    let text = logs_of_a_run(&[]);
    assert!(text.contains("site server listening"), "{text}");
    assert!(
        !text.contains('\u{1b}'),
        "escape sequences in a log file: {text:?}"
    );

    let json = logs_of_a_run(&["--log-format", "json"]);
    let lines: Vec<serde_json::Value> = json
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|err| panic!("{err}: {line}")))
        .collect();
    assert!(lines.iter().any(|line| line["fields"]["message"]
        .as_str()
        .is_some_and(|m| m.starts_with("site server listening"))));
    assert!(lines
        .iter()
        .all(|line| line["level"].is_string() && line["timestamp"].is_string()));
}

#[tokio::test]
async fn the_plain_port_rule_reads_the_peer_each_request_carries() {
    use tower::ServiceExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("www")).unwrap();
    std::fs::write(
        dir.path().join("www/index.html"),
        "<!doctype html><title>PWA</title>",
    )
    .unwrap();
    let state = AppState {
        db: Db::open(&dir.path().join("data")).unwrap(),
        www_dir: dir.path().join("www"),
        ledger: stockhop_site::ledger::LedgerState::new(None),
    };
    let router = lan::https_only_off_loopback(stockhop_site::app(state), "https://site.lan:8443");
    let request = |peer: &str, path: &str| {
        let mut request = axum::http::Request::get(path)
            .header("host", "site.lan:8080")
            .body(axum::body::Body::empty())
            .unwrap();
        let peer: SocketAddr = peer.parse().unwrap();
        request
            .extensions_mut()
            .insert(axum::extract::ConnectInfo(peer));
        request
    };
    let lan = router
        .clone()
        .oneshot(request("192.168.1.50:40000", "/index.html"))
        .await
        .unwrap();
    assert_eq!(lan.status(), StatusCode::PERMANENT_REDIRECT);
    assert_eq!(
        lan.headers()["location"],
        "https://site.lan:8443/index.html"
    );
    let api = router
        .clone()
        .oneshot(request("[fe80::1]:40000", "/v1/sessions/x/hops"))
        .await
        .unwrap();
    assert_eq!(api.status(), StatusCode::FORBIDDEN);
    for peer in ["127.0.0.1:40000", "[::1]:40000", "[::ffff:127.0.0.1]:40000"] {
        let local = router
            .clone()
            .oneshot(request(peer, "/index.html"))
            .await
            .unwrap();
        assert_eq!(local.status(), StatusCode::OK, "{peer}");
    }
}
