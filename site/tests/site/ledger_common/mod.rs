//! One helper for the ledger's tests: a real site server on loopback over
//! a real SQLite file in a temporary directory, and a handheld that builds
//! items the way the queue does.

#![allow(dead_code)] // each test file uses its own part of the helper

use std::path::PathBuf;

use serde_json::{json, Value};
use stockhop::key::IdempotencyKey;
use stockhop::time::UnixMs;
use stockhop_site::store::db::Db;

use crate::backend;
use stockhop_site::ledger::{self, devices::Profile, LedgerState};
use stockhop_site::AppState;
use uuid::Uuid;

pub const TERMINAL_SECRET: &str = "terminal-secret-for-tests";

pub struct Site {
    pub base: String,
    pub db: Db,
    pub data: PathBuf,
    pub client: reqwest::Client,
    pub ledger: LedgerState,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
    _dir: Option<tempfile::TempDir>,
}

impl Site {
    pub async fn start() -> Site {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let mut site = Site::start_on(data).await;
        site._dir = Some(dir);
        site
    }

    /// A site that knows bins `B-1`…`B-9` (zone `Z-1` of location `L-1`)
    /// and units `EPC-0`…`EPC-99` (SKU `SKU-1`, new, in no bin): the
    /// reference data the sync protocol's tests scan against in put-away.
    pub async fn start_stocked() -> Site {
        let site = Site::start().await;
        site.stock();
        site
    }

    /// Imports [`Site::start_stocked`]'s bins and units.
    pub fn stock(&self) {
        let bins: String = (1..=9).map(|i| format!("B-{i},Z-1,L-1\n")).collect();
        let units: String = (0..100).map(|i| format!("EPC-{i},,SKU-1,new,\n")).collect();
        self.import("bins", &format!("bin,zone,location\n{bins}"));
        self.import("units", &format!("epc,code,sku,state,bin\n{units}"));
    }

    /// Imports CSV `text` as `kind` through the site's importer; panics on
    /// a bad file.
    pub fn import(&self, kind: &str, text: &str) -> ledger::import::Summary {
        self.try_import(kind, text).unwrap()
    }

    pub fn try_import(
        &self,
        kind: &str,
        text: &str,
    ) -> Result<ledger::import::Summary, ledger::import::ImportError> {
        use clap::ValueEnum;
        let kind = ledger::import::Kind::from_str(kind, false).unwrap();
        let path = self.data.join(format!("{kind:?}.csv"));
        std::fs::write(&path, text).unwrap();
        self.db
            .call_blocking(|conn| ledger::import::import(conn, kind, &path, now()))
    }

    /// A server over an existing data directory (a restart).
    pub async fn start_on(data: PathBuf) -> Site {
        let db = backend::open_db(&data);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let ledger = LedgerState::new(Some(TERMINAL_SECRET.into()));
        let state = AppState {
            db: db.clone(),
            www_dir: data.join("www"),
            ledger: ledger.clone(),
        };
        let task = tokio::spawn(async move {
            stockhop_site::serve(listener, state, async {
                let _ = stopped.await;
            })
            .await
            .unwrap();
        });
        Site {
            base,
            db,
            data,
            client: reqwest::Client::new(),
            ledger,
            stop: Some(stop),
            task: Some(task),
            _dir: None,
        }
    }

    /// Stops the server and hands back its temporary directory's ownership.
    pub async fn stop(mut self) -> Option<tempfile::TempDir> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            task.await.unwrap();
        }
        self._dir.take()
    }

    pub fn add_device(&self, device_id: &str, commissioned: bool) -> String {
        self.add_device_as(device_id, Profile::Mc3390xr, commissioned)
    }

    pub fn add_device_as(&self, device_id: &str, profile: Profile, commissioned: bool) -> String {
        self.db
            .call_blocking(|conn| {
                ledger::devices::add(conn, device_id, profile, commissioned, UnixMs(0))
            })
            .unwrap()
    }

    pub async fn handheld(&self, device_id: &str) -> Handheld {
        let token = self.add_device(device_id, true);
        Handheld::new(device_id, token)
    }

    /// POSTs raw bytes to `path` with a token; returns status and JSON.
    pub async fn post_raw(&self, path: &str, token: Option<&str>, body: Vec<u8>) -> (u16, Value) {
        let mut request = self
            .client
            .post(format!("{}{path}", self.base))
            .header("content-type", "application/json")
            .body(body);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        (status, json_or_text(text))
    }

    /// `method path` without a body, with a token if given: the status,
    /// the headers and the body as JSON.
    pub async fn request(
        &self,
        method: reqwest::Method,
        path: &str,
        token: Option<&str>,
    ) -> (u16, reqwest::header::HeaderMap, Value) {
        let mut request = self.client.request(method, format!("{}{path}", self.base));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let text = response.text().await.unwrap();
        (status, headers, json_or_text(text))
    }

    /// Sends a sync request; returns status and body.
    pub async fn sync(&self, hh: &Handheld, items: &[Value]) -> (u16, Value) {
        let body = json!({
            "device_id": hh.device_id,
            "sent_at": now().to_string(),
            "items": items,
        });
        self.post_raw("/v1/sync", Some(&hh.token), body.to_string().into_bytes())
            .await
    }

    /// Sends items that must all be answered; returns the results array.
    pub async fn sync_ok(&self, hh: &Handheld, items: &[Value]) -> Vec<Value> {
        let (status, body) = self.sync(hh, items).await;
        assert_eq!(status, 200, "{body}");
        body["results"].as_array().unwrap().clone()
    }

    /// A sync whose every item must apply.
    pub async fn sync_applied(&self, hh: &Handheld, items: &[Value]) {
        let results = self.sync_ok(hh, items).await;
        assert!(
            results.iter().all(|r| r["outcome"] == "applied"),
            "{results:?}"
        );
    }

    pub async fn get(&self, path: &str, token: &str) -> (u16, Value) {
        let (status, text) = self.get_text(path, token).await;
        (status, serde_json::from_str(&text).unwrap())
    }

    /// `GET path` as text: its status and body.
    pub async fn get_text(&self, path: &str, token: &str) -> (u16, String) {
        get_text_at(&self.client, &self.base, path, token).await
    }

    pub fn count(&self, sql: &str) -> i64 {
        self.db
            .call_blocking(|conn| conn.query_row(sql, [], |row| row.get(0)))
            .unwrap()
    }
}

/// `GET path` as text from the site at `base` (e.g. `http://127.0.0.1:…`)
/// with `token`: its status and body. [`Site::get_text`] and the test
/// sites of other suites (the printers') read through it.
pub async fn get_text_at(
    client: &reqwest::Client,
    base: &str,
    path: &str,
    token: &str,
) -> (u16, String) {
    let response = client
        .get(format!("{base}{path}"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.text().await.unwrap())
}

/// A body as JSON, or as a JSON string when it is not JSON (an empty body
/// is `""`).
fn json_or_text(text: String) -> Value {
    serde_json::from_str(&text).unwrap_or(Value::String(text))
}

pub fn now() -> UnixMs {
    ledger::wall_clock()
}

/// `GET /v1/counts/{count_id}` as `token`: the count's figures, with their
/// `as_of` checked to be the site's clock while the request was answered
/// and taken out, so the rest compares as the ledger holds it.
pub async fn count_figures(site: &Site, token: &str, count_id: &str) -> Value {
    let before = now();
    let (status, mut figures) = site.get(&format!("/v1/counts/{count_id}"), token).await;
    let after = now();
    assert_eq!(status, 200, "{count_id}: {figures}");
    let as_of = figures
        .as_object_mut()
        .and_then(|fields| fields.remove("as_of"))
        .unwrap_or_else(|| panic!("no as_of in {figures}"));
    let as_of: UnixMs = serde_json::from_value(as_of).unwrap();
    assert!(
        before <= as_of && as_of <= after,
        "as_of {as_of} is not within the request ({before} to {after})"
    );
    figures
}

pub fn key() -> String {
    IdempotencyKey::mint().unwrap().to_string()
}

/// A handheld: its token, and a session with a contiguous `client_seq`.
#[derive(Clone)]
pub struct Handheld {
    pub device_id: String,
    pub token: String,
    pub session: Uuid,
    pub seq: u64,
}

impl Handheld {
    pub fn new(device_id: &str, token: String) -> Handheld {
        Handheld {
            device_id: device_id.into(),
            token,
            session: *IdempotencyKey::mint().unwrap().as_uuid(),
            seq: 0,
        }
    }

    /// Starts a new session (the next item is its client_seq 1).
    pub fn new_session(&mut self) {
        self.session = *IdempotencyKey::mint().unwrap().as_uuid();
        self.seq = 0;
    }

    /// The next item of the session, captured at `occurred_at`.
    pub fn item_at(&mut self, command: &str, body: Value, occurred_at: UnixMs) -> Value {
        self.seq += 1;
        json!({
            "key": key(),
            "session_id": self.session.to_string(),
            "client_seq": self.seq,
            "command": command,
            "occurred_at": occurred_at.to_string(),
            "queued_at": occurred_at.plus(stockhop::time::Millis(3)).to_string(),
            "body": body,
        })
    }

    pub fn item(&mut self, command: &str, body: Value) -> Value {
        self.item_at(command, body, now())
    }

    pub fn open(&mut self, operator: &str) -> Value {
        self.item(
            "open_session",
            json!({"operator_id": operator, "mode": "put_away", "context": {}}),
        )
    }

    pub fn scan(&mut self, epc: &str, bin: &str) -> Value {
        self.item("scan", json!({"mode": "put_away", "epc": epc, "bin": bin}))
    }
}
