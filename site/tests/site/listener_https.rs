//! A listener forwarding to a whole site's ledger (started in-process, as
//! `stockhop-site serve` starts it) over HTTPS: the
//! ledger's certificate is checked against the CA the listener is given
//! (`--ledger-ca`), and a listener trusting another CA delivers nothing and
//! keeps every record queued.

use std::path::Path;
use std::time::Duration;

use crate::listener_support::*;
use stockhop_site::{Site, SiteConfig};

const DEVICE: &str = "bridge-tls";
/// How long the untrusting listener is given to try (and fail) before the
/// test looks: the forwarder's first attempt follows the frame at once,
/// its retries 1 s apart and doubling.
const REFUSED_ATTEMPTS: Duration = Duration::from_secs(2);

/// A site whose ledger takes terminal batches signed with [`SECRET`],
/// started in-process on loopback ports of its own choosing.
async fn start_ledger(data: &Path) -> Site {
    Site::start(SiteConfig {
        ledger_secret: Some(SECRET.to_owned()),
        ..SiteConfig::on_loopback(data.to_path_buf())
    })
    .await
    .unwrap()
}

/// A CA of no site's, written as PEM under `dir`.
fn stranger_ca(dir: &Path) -> Trust {
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let cert = params.self_signed(&key).unwrap();
    let path = dir.join("stranger-ca.crt");
    std::fs::write(&path, cert.pem()).unwrap();
    Trust::from_ca_file(Some(path))
}

fn ledger_events(data: &Path) -> i64 {
    let conn = rusqlite::Connection::open(data.join("stockhop.sqlite")).unwrap();
    conn.query_row("SELECT count(*) FROM terminal_events", [], |row| row.get(0))
        .unwrap()
}

#[tokio::test]
async fn records_reach_a_ledger_over_https_only_when_its_ca_is_trusted() {
    let dir = tempfile::tempdir().unwrap();
    let ledger_data = dir.path().join("ledger");
    let ledger = start_ledger(&ledger_data).await;
    let https_port = ledger.https_addr().port();
    // A name the site CA's certificate carries, on loopback.
    let url = format!("https://localhost:{https_port}");
    let records: Vec<String> = (0..5)
        .map(|i| framed_record(DEVICE, &format!("t{i}"), &format!("p{i}"), 2))
        .collect();

    // Trusting another CA: the ledger's certificate does not chain to it.
    let stranger = dir.path().join("stranger");
    let other_ca = stranger_ca(dir.path());
    let untrusting = start_trusting(&stranger, config(DEVICE), Some(&url), &other_ca).await;
    send_frames(untrusting.tcp, &records).await;
    // A new frame sends at once; give the refused attempts time to happen.
    tokio::time::sleep(REFUSED_ATTEMPTS).await;
    assert_eq!(
        untrusting.count("SELECT count(*) FROM listener_queue WHERE state = 'pending'"),
        5,
        "refused by the TLS check: every record still queued, none dead-lettered"
    );
    assert_eq!(ledger_events(&ledger_data), 0);
    untrusting.stop().await;

    // Given the ledger's CA: every record arrives once.
    let trusting = dir.path().join("trusting");
    let ca = Trust::from_ca_file(Some(ledger_data.join("tls").join("ca.crt")));
    let listener = start_trusting(&trusting, config(DEVICE), Some(&url), &ca).await;
    send_frames(listener.tcp, &records).await;
    assert!(eventually(10, || ledger_events(&ledger_data) == 5).await);
    assert!(
        eventually(5, || listener
            .count("SELECT count(*) FROM listener_queue WHERE state = 'done'")
            == 5)
        .await
    );
    listener.stop().await;
    ledger.stop().await.unwrap();
}
