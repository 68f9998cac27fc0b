//! Alerts reaching a webhook over real HTTP on loopback, from a real
//! SQLite file (and PostgreSQL with `STOCKHOP_TEST_BACKEND=postgres`): a
//! P1 gate going silent fires once and resolves once when it is heard
//! again, across a restart of the site nothing is sent twice, and while
//! the receiver is down the alert waits and is retried, signed as
//! terminal batches are. Waits are on the receiver's events, not sleeps.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::ledger_common::{now, Site};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use serde_json::Value;
use stockhop::time::UnixMs;
use stockhop::wire::Heartbeat;
use stockhop_site::ledger::{self, devices::Profile};
use stockhop_site::net::delivery::signature;
use stockhop_site::net::outbound::Trust;
use stockhop_site::terminal_wire::{SIGNATURE_HEADER, TIMESTAMP_HEADER};
use stockhop_site::view::alerts::webhook::{self, Settings, Webhook};
use tokio::sync::{watch, Notify};

const SECRET: &str = "alert-secret-for-tests";
/// Fast evaluation for the test; the served default is five seconds.
const EVALUATE_EVERY: Duration = Duration::from_millis(100);
/// Longest wait for an event before the test fails.
const PATIENCE: Duration = Duration::from_secs(30);

/// A webhook receiver on loopback that keeps every alert it accepted and
/// can be "down" (answering 503).
#[derive(Clone, Default)]
struct Receiver {
    alerts: Arc<Mutex<Vec<Value>>>,
    down: Arc<AtomicBool>,
    refused: Arc<AtomicUsize>,
    heard: Arc<Notify>,
}

async fn receive(State(receiver): State<Receiver>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let timestamp: i64 = headers[TIMESTAMP_HEADER].to_str().unwrap().parse().unwrap();
    assert_eq!(
        headers[SIGNATURE_HEADER].to_str().unwrap(),
        signature(SECRET.as_bytes(), timestamp, &body),
        "signed like a terminal batch"
    );
    if receiver.down.load(Ordering::SeqCst) {
        receiver.refused.fetch_add(1, Ordering::SeqCst);
        receiver.heard.notify_waiters();
        return StatusCode::SERVICE_UNAVAILABLE;
    }
    let post: Value = serde_json::from_slice(&body).unwrap();
    receiver
        .alerts
        .lock()
        .unwrap()
        .extend(post["alerts"].as_array().unwrap().iter().cloned());
    receiver.heard.notify_waiters();
    StatusCode::OK
}

impl Receiver {
    async fn start() -> (Receiver, String) {
        let receiver = Receiver::default();
        let app = axum::Router::new()
            .route("/hook", axum::routing::post(receive))
            .with_state(receiver.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        (receiver, url)
    }

    /// The gate's alerts, in the order they arrived.
    fn gate(&self) -> Vec<(String, String)> {
        self.alerts
            .lock()
            .unwrap()
            .iter()
            .filter(|a| a["name"] == "DeviceOffline" && a["device_id"] == "GATE-1")
            .map(|a| {
                (
                    a["state"].as_str().unwrap().to_owned(),
                    a["priority"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    }

    /// Waits until `done` holds, re-checked whenever the receiver hears a
    /// POST.
    async fn until(&self, what: &str, done: impl Fn(&Receiver) -> bool) {
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            let heard = self.heard.notified();
            if done(self) {
                return;
            }
            if tokio::time::timeout_at(deadline, heard).await.is_err() {
                panic!(
                    "waited {PATIENCE:?} for {what}: {:?}",
                    self.alerts.lock().unwrap()
                );
            }
        }
    }
}

fn beat_as(site: &Site, device_id: &str, at: UnixMs) {
    let heartbeat = Heartbeat {
        sent_at: at,
        queue_depth: 0,
        oldest_queued_at: None,
        app_version: "test".into(),
    };
    site.db.call_blocking(|conn| {
        ledger::devices::record_heartbeat(conn, device_id, &heartbeat, at).unwrap();
    });
}

fn beat(site: &Site, at: UnixMs) {
    beat_as(site, "GATE-1", at);
}

/// Heard last just past the fxr90's 60 s period: offline now.
fn silent(site: &Site) {
    beat(site, UnixMs(now().0 - 61_000));
}

fn start_alerts(site: &Site, url: &str) -> (watch::Sender<bool>, tokio::task::JoinHandle<()>) {
    let settings = Settings {
        site_id: "S-1".to_owned(),
        data_dir: site.data.clone(),
        webhook: Some(Webhook::new(url, Some(SECRET), &Trust::from_ca_file(None)).unwrap()),
        evaluate_every: EVALUATE_EVERY,
    };
    let (stop, stopped) = watch::channel(false);
    let task = tokio::spawn(webhook::run(site.db.clone(), settings, stopped));
    (stop, task)
}

#[tokio::test]
async fn a_silent_p1_gate_fires_once_and_resolves_once_across_a_restart_and_a_receiver_outage() {
    let site = Site::start().await;
    site.add_device_as("GATE-1", Profile::Fxr90, true);
    beat(&site, now());
    let (receiver, url) = Receiver::start().await;
    let (stop, task) = start_alerts(&site, &url);

    let went_silent = Instant::now();
    silent(&site);
    receiver
        .until("the gate's firing", |r| r.gate().len() == 1)
        .await;
    let latency = went_silent.elapsed();
    assert_eq!(receiver.gate(), [("firing".into(), "P1".into())]);
    let firing = receiver
        .alerts
        .lock()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "DeviceOffline")
        .cloned()
        .unwrap();
    assert_eq!(firing["site_id"], "S-1");
    assert!(firing["summary"]
        .as_str()
        .unwrap()
        .contains("GATE-1 (fxr90) offline since"));
    assert!(
        receiver
            .alerts
            .lock()
            .unwrap()
            .iter()
            .any(|a| a["name"] == "BacklogEscalated" && a["state"] == "firing"),
        "a P1 device offline escalates the backlog"
    );
    eprintln!(
        "alert latency (condition → webhook) at a {EVALUATE_EVERY:?} evaluation: {latency:?}"
    );

    // The site restarts while the gate is still silent: nothing fires again.
    stop.send(true).unwrap();
    task.await.unwrap();
    let data = site.data.clone();
    let dir = site.stop().await;
    let site = Site::start_on(data).await;
    let (stop, task) = start_alerts(&site, &url);
    beat(&site, now());
    receiver
        .until("the gate's resolved", |r| r.gate().len() >= 2)
        .await;
    assert_eq!(
        receiver.gate(),
        [
            ("firing".into(), "P1".into()),
            ("resolved".into(), "P1".into())
        ],
        "one firing and one resolved, nothing twice across the restart"
    );

    // The receiver is down when the gate falls silent again: the alert
    // waits in the outbox and is retried until it is taken.
    receiver.down.store(true, Ordering::SeqCst);
    silent(&site);
    receiver
        .until("a refused attempt", |r| {
            r.refused.load(Ordering::SeqCst) >= 1
        })
        .await;
    assert_eq!(receiver.gate().len(), 2);
    receiver.down.store(false, Ordering::SeqCst);
    receiver
        .until("the retried firing", |r| r.gate().len() == 3)
        .await;
    assert_eq!(receiver.gate()[2], ("firing".into(), "P1".into()));

    // Stopped, the task has settled what it delivered.
    stop.send(true).unwrap();
    task.await.unwrap();
    let pending = site.count("SELECT count(*) FROM alert_outbox WHERE state = 'pending'");
    assert_eq!(pending, 0, "everything delivered is marked sent");
    site.stop().await;
    drop(dir);
}

#[tokio::test]
async fn alert_conditions_show_on_the_metrics_with_their_priority() {
    let site = Site::start().await;
    site.add_device_as("GATE-1", Profile::Fxr90, true);
    site.add_device_as("HH-1", Profile::Mc3390xr, true);
    beat_as(&site, "HH-1", now());
    silent(&site);
    let settings = Settings {
        site_id: "S-1".to_owned(),
        data_dir: site.data.clone(),
        webhook: None,
        evaluate_every: EVALUATE_EVERY,
    };
    let queued = webhook::evaluate(&site.db, &settings).await.unwrap();
    assert_eq!(queued, 0, "no webhook, nothing queued");
    let admin = site
        .db
        .call_blocking(|conn| stockhop_site::view::admin::add(conn, "ops", now()))
        .unwrap();
    let text = site
        .client
        .get(format!("{}/metrics", site.base))
        .bearer_auth(&admin)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        text.contains(
            r#"stockhop_device_offline{device_id="GATE-1",profile="fxr90",priority="P1"} 1"#
        ),
        "{text}"
    );
    assert!(
        text.contains(
            r#"stockhop_device_offline{device_id="HH-1",profile="mc3390xr",priority="P3"} 0"#
        ),
        "{text}"
    );
    assert!(text.contains("stockhop_site_escalated 1"), "{text}");
    assert!(
        text.contains(
            r#"stockhop_alert_firing{name="DeviceOffline",priority="P1",device_id="GATE-1"} 1"#
        ),
        "{text}"
    );
}
