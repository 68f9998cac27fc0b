//! No head-of-line blocking, over real sockets on loopback against real
//! SQLite files: a terminal sends records over the framed port, the
//! site's listener forwards them over HTTP to the site's own ledger, and
//! the ledger is made to fail (500) on one record by a trigger in its
//! database. That record is set aside after five attempts with its
//! attempts and last error, the records behind it reach the ledger, the
//! site's view and `/metrics` show it, it is retried at the slower cadence,
//! it survives a restart, and it is delivered once the ledger takes it.
//!
//! The listener queue is the site's own SQLite file whichever engine holds
//! the ledger, and the trigger is SQLite's: this suite runs on SQLite.

use std::path::Path;
use std::sync::Arc;

use crate::ledger_common::{now, Site, TERMINAL_SECRET};
use crate::listener_support::{config, eventually, framed_record, send_frames};
use serde_json::Value;
use stockhop::time::Millis;
use stockhop_site::listener::forwarder::{Cadence, SET_ASIDE_AFTER_ATTEMPTS};
use stockhop_site::listener::{self, LedgerSink, RemoteLedgerSink, Running};
use stockhop_site::net::outbound::Trust;
use stockhop_site::view;

const DEVICE: &str = "bridge-1";
/// The subject the ledger's trigger fails on.
const FAILING: &str = "p-failing";
/// The set-aside cadence in this suite: long enough to tell from the
/// ordinary retries (20 ms doubling to 200 ms), short enough to wait out.
const SET_ASIDE_RETRY: Millis = Millis(1_500);

/// The site's listener, forwarding over HTTP to the site's own ledger at
/// `site.base` with this suite's waits.
struct Terminals {
    running: Running,
    stop: tokio::sync::oneshot::Sender<()>,
}

impl Terminals {
    async fn start(site: &Site) -> Terminals {
        let mut listener_config = config(DEVICE);
        listener_config.forwarding = Cadence {
            retry_delay_first: Millis(20),
            retry_delay_max: Millis(200),
            set_aside_retry: SET_ASIDE_RETRY,
        };
        let sink: Arc<dyn LedgerSink> =
            Arc::new(RemoteLedgerSink::new(&site.base, TERMINAL_SECRET, &Trust::System).unwrap());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let running = listener::spawn(listener_config, site.db.clone(), Some(sink), async {
            let _ = stopped.await;
        })
        .await
        .unwrap();
        Terminals { running, stop }
    }

    async fn stop(self) {
        let _ = self.stop.send(());
        self.running.join().await;
    }
}

/// Makes the ledger fail (a 500, as a damaged page or a full journal does)
/// on every record of [`FAILING`], or stop failing.
fn ledger_fails_one_record(data: &Path, fails: bool) {
    let conn = rusqlite::Connection::open(data.join(stockhop_site::store::db::DB_FILE)).unwrap();
    conn.busy_timeout(std::time::Duration::from_secs(5))
        .unwrap();
    let sql = if fails {
        format!(
            "CREATE TRIGGER fail_one_record BEFORE INSERT ON terminal_events
             WHEN NEW.subject = '{FAILING}'
             BEGIN SELECT RAISE(ABORT, 'disk I/O error under this record'); END"
        )
    } else {
        "DROP TRIGGER fail_one_record".to_owned()
    };
    conn.execute_batch(&sql).unwrap();
}

/// The listener queue's row for `subject`: state, attempts, last error,
/// set-aside and last-attempt instants.
fn queue_row(
    site: &Site,
    subject: &str,
) -> (String, i64, Option<String>, Option<i64>, Option<i64>) {
    let conn =
        rusqlite::Connection::open(site.data.join(stockhop_site::store::db::DB_FILE)).unwrap();
    conn.query_row(
        "SELECT state, attempts, last_error, set_aside_at, last_attempt_at
         FROM listener_queue WHERE subject = ?1",
        [subject],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
    )
    .unwrap()
}

fn ledger_subjects(site: &Site) -> Vec<String> {
    let conn =
        rusqlite::Connection::open(site.data.join(stockhop_site::store::db::DB_FILE)).unwrap();
    let mut select = conn
        .prepare("SELECT subject FROM terminal_events ORDER BY recorded_at, subject")
        .unwrap();
    select
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

async fn listener_status(site: &Site, admin: &str) -> Value {
    let (code, body) = site.get("/v1/site/status", admin).await;
    assert_eq!(code, 200, "{body}");
    body["listener"].clone()
}

/// `stockhop_listener_set_aside` as `/metrics` has it.
async fn set_aside_metric(site: &Site, admin: &str) -> f64 {
    let response = site
        .client
        .get(format!("{}/metrics", site.base))
        .bearer_auth(admin)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let text = response.text().await.unwrap();
    let scrape = prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_owned())))
        .unwrap_or_else(|err| panic!("{err}\n{text}"));
    let sample = scrape
        .samples
        .iter()
        .find(|s| s.metric == "stockhop_listener_set_aside")
        .unwrap_or_else(|| panic!("stockhop_listener_set_aside in\n{text}"));
    match sample.value {
        prometheus_parse::Value::Gauge(v) | prometheus_parse::Value::Untyped(v) => v,
        ref other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_record_the_ledger_keeps_failing_is_set_aside_shown_kept_and_delivered_later() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let site = Site::start_on(data.clone()).await;
    let admin = site
        .db
        .call_blocking(|conn| view::admin::add(conn, "ops", now()))
        .unwrap();
    ledger_fails_one_record(&data, true);
    let terminals = Terminals::start(&site).await;
    let tcp = terminals.running.tcp_addr;

    let records = [
        framed_record(DEVICE, "a", "p1", 4),
        framed_record(DEVICE, "f", FAILING, 3),
        framed_record(DEVICE, "c", "p3", 2),
        framed_record(DEVICE, "d", "p4", 1),
    ];
    let acks = send_frames(tcp, &records).await;
    assert!(acks.iter().all(|a| a.starts_with(r#"{"ack":"#)), "{acks:?}");

    // The records behind the failing one reach the ledger.
    assert!(
        eventually(20, || ledger_subjects(&site).len() == 3).await,
        "{:?}",
        ledger_subjects(&site)
    );
    let mut subjects = ledger_subjects(&site);
    subjects.sort();
    assert_eq!(subjects, ["p1", "p3", "p4"]);
    let (state, attempts, last_error, set_aside_at, _) = queue_row(&site, FAILING);
    assert_eq!(state, "pending", "kept, never dropped");
    assert!(
        attempts >= i64::from(SET_ASIDE_AFTER_ATTEMPTS),
        "{attempts}"
    );
    let set_aside_at = set_aside_at.expect("set aside");
    let last_error = last_error.expect("the last failure kept");
    assert!(last_error.starts_with("500 "), "{last_error}");

    // The site's view and /metrics show it with its attempts and last error.
    let shown = listener_status(&site, &admin).await;
    assert_eq!(shown["set_aside_total"], 1, "{shown}");
    assert_eq!(shown["queue_depth"], 1, "still queued: {shown}");
    let aside = &shown["set_aside"][0];
    assert_eq!(aside["device_serial"], DEVICE);
    assert_eq!(aside["subject"], FAILING);
    assert!(aside["attempts"].as_i64().unwrap() >= 5, "{aside}");
    assert!(
        aside["last_error"].as_str().unwrap().starts_with("500 "),
        "{aside}"
    );
    assert_eq!(set_aside_metric(&site, &admin).await, 1.0);

    // New records flow past it at once.
    send_frames(tcp, &[framed_record(DEVICE, "e", "p5", 1)]).await;
    assert!(eventually(10, || ledger_subjects(&site).len() == 4).await);

    // Retried at the slower cadence: the next attempt comes no sooner.
    let tried_again = |site: &Site| {
        let (_, again, _, _, _) = queue_row(site, FAILING);
        again > attempts
    };
    assert!(eventually(10, || tried_again(&site)).await);
    let (_, _, _, _, last_attempt_at) = queue_row(&site, FAILING);
    assert!(
        last_attempt_at.unwrap() - set_aside_at >= SET_ASIDE_RETRY.0 as i64,
        "tried again {} ms after it was set aside",
        last_attempt_at.unwrap() - set_aside_at
    );

    // Nothing is lost across a restart of the listener and the site.
    terminals.stop().await;
    site.stop().await;
    let site = Site::start_on(data.clone()).await;
    let (state, attempts_kept, last_error, set_aside, _) = queue_row(&site, FAILING);
    assert_eq!(state, "pending");
    assert!(attempts_kept > attempts);
    assert!(last_error.is_some() && set_aside.is_some());
    let shown = listener_status(&site, &admin).await;
    assert_eq!(shown["set_aside_total"], 1, "{shown}");
    let terminals = Terminals::start(&site).await;

    // Once the ledger takes it, it is delivered and no longer set aside.
    ledger_fails_one_record(&data, false);
    assert!(
        eventually(15, || ledger_subjects(&site).len() == 5).await,
        "{:?}",
        ledger_subjects(&site)
    );
    assert!(ledger_subjects(&site).iter().any(|s| s == FAILING));
    assert!(
        eventually(5, || queue_row(&site, FAILING).0 == "done").await,
        "{:?}",
        queue_row(&site, FAILING)
    );
    let shown = listener_status(&site, &admin).await;
    assert_eq!(shown["set_aside_total"], 0, "{shown}");
    assert_eq!(shown["queue_depth"], 0, "{shown}");
    assert_eq!(set_aside_metric(&site, &admin).await, 0.0);
    assert_eq!(
        site.count("SELECT count(*) FROM terminal_events"),
        5,
        "each record once"
    );
    terminals.stop().await;
    site.stop().await;
}
