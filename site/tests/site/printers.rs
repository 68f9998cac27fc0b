//! Printers over a real raw port on loopback: a ZT411R stand-in
//! (`printer_support/`) polled by the site's printer driver, print jobs
//! through the HTTP API against a real SQLite file (or PostgreSQL), each
//! label's ZPL byte for byte against the fixtures, tags verified and
//! refused, a job accepted offline printed once when the printer is back,
//! and a connection dropped mid-job never printed twice.

use crate::backend;

use std::path::PathBuf;
use std::time::Duration;

use crate::ledger_common::{get_text_at, Handheld};
use crate::printer_support::{Faults, StandIn};
use axum::Extension;
use serde_json::{json, Value};
use stockhop::time::UnixMs;
use stockhop_site::ledger::{self, devices::Profile, LedgerState};
use stockhop_site::printers::driver::{self, Config, Wake};
use stockhop_site::printers::store;
use stockhop_site::printers::zpl::{self, Label};
use stockhop_site::store::db::Db;
use stockhop_site::view::status::{self, Alert};
use stockhop_site::AppState;

const EPC: &str = "E28068940000400177906E71";

fn fixture(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/site/fixtures/zpl")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

/// A site with its printer driver polling every 100 ms.
struct PrintSite {
    base: String,
    db: Db,
    data: PathBuf,
    client: reqwest::Client,
    admin: String,
    stop: tokio::sync::watch::Sender<bool>,
    _dir: tempfile::TempDir,
}

/// The driver's timings in the tests: the same code, a faster clock.
fn test_config() -> Config {
    Config {
        poll_interval: Duration::from_millis(100),
        connect_timeout: Duration::from_secs(2),
        answer_timeout: Duration::from_secs(2),
        verify_timeout: Duration::from_secs(2),
        job_check_interval: Duration::from_millis(50),
    }
}

impl PrintSite {
    async fn start() -> PrintSite {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let db = backend::open_db(&data);
        let admin = db
            .call_blocking(|conn| stockhop_site::view::admin::add(conn, "ops", now()))
            .unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let stop_signal = move || {
            let mut stopped = stopped.clone();
            async move {
                let _ = stopped.wait_for(|stop| *stop).await;
            }
        };
        let wake = Wake::default();
        let state = AppState {
            db: db.clone(),
            www_dir: data.join("www"),
            ledger: LedgerState::default(),
        };
        let router = stockhop_site::app(state).layer(Extension(wake.clone()));
        tokio::spawn(stockhop_site::net::server::serve_connections(
            listener,
            None,
            router,
            stop_signal(),
        ));
        tokio::spawn(driver::run(db.clone(), wake, test_config(), stop_signal()));
        let site = PrintSite {
            base,
            db,
            data,
            client: reqwest::Client::new(),
            admin,
            stop,
            _dir: dir,
        };
        site.import("bins", "bin,zone,location\nB-12-03,Z-1,L-1\n");
        site.import(
            "units",
            &format!("epc,code,sku,state,bin\n{EPC},SN-0001,SKU-1,new,\nE2800000000000000000000A,,SKU-1,new,\n"),
        );
        site.import("grns", "grn,qc,sku,expected\nG-1,accepted,SKU-1,5\n");
        site
    }

    fn import(&self, kind: &str, text: &str) {
        use clap::ValueEnum;
        let kind = ledger::import::Kind::from_str(kind, false).unwrap();
        let path = self.data.join(format!("{kind:?}.csv"));
        std::fs::write(&path, text).unwrap();
        self.db
            .call_blocking(|conn| ledger::import::import(conn, kind, &path, now()))
            .unwrap();
    }

    async fn post(&self, path: &str, token: &str, body: Value) -> (u16, Value) {
        let response = self
            .client
            .post(format!("{}{path}", self.base))
            .bearer_auth(token)
            .json(&body)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    /// A GET as the admin that must answer 200 with JSON: the body.
    async fn get(&self, path: &str) -> Value {
        let (status, text) = get_text_at(&self.client, &self.base, path, &self.admin).await;
        assert_eq!(status, 200, "GET {path}: {text}");
        serde_json::from_str(&text).unwrap()
    }

    async fn add_printer(&self, id: &str, stand_in: &StandIn) {
        let (status, body) = self
            .post(
                "/v1/site/printers",
                &self.admin.clone(),
                json!({"printer_id": id, "address": stand_in.address()}),
            )
            .await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["address"], stand_in.address());
    }

    async fn print(&self, printer: &str, body: Value) -> Value {
        let (status, job) = self
            .post(
                &format!("/v1/site/printers/{printer}/print"),
                &self.admin.clone(),
                body,
            )
            .await;
        assert_eq!(status, 202, "{job}");
        job
    }

    /// Waits until job `job_id` is in `state`; returns it.
    async fn job_in(&self, job_id: &str, state: &str) -> Value {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        loop {
            let job = self.get(&format!("/v1/site/print-jobs/{job_id}")).await;
            if job["state"] == state {
                return job;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "job {job_id} never reached {state}: {job}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The printer's row of the site's status.
    async fn printer_status(&self, id: &str) -> Value {
        let status = self.get("/v1/site/status").await;
        status["printers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["printer_id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("no printer {id} in {status}"))
    }

    /// Waits until a poll of `id` has failed since it last answered.
    async fn until_unheard(&self, id: &str) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        while !self.printer_status(id).await["last_error"].is_string() {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the site never missed printer {id}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// A GET with `token` (a device's): status and body (null when the
    /// body is not JSON).
    async fn get_as(&self, path: &str, token: &str) -> (u16, Value) {
        let (status, text) = get_text_at(&self.client, &self.base, path, token).await;
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    fn count(&self, sql: &str) -> i64 {
        self.db
            .call_blocking(|conn| conn.query_row(sql, [], |row| row.get(0)))
            .unwrap()
    }
}

impl Drop for PrintSite {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}

fn now() -> UnixMs {
    ledger::wall_clock()
}

#[test]
fn each_label_is_its_fixture_byte_for_byte() {
    let bin = zpl::format(
        "JOB-0001",
        &Label::Bin {
            bin: "B-12-03".into(),
        },
        2,
    )
    .unwrap();
    assert_eq!(bin.as_bytes(), fixture("bin_label.zpl"));
    let unit = |encode| Label::Unit {
        epc: EPC.to_lowercase(),
        sku: Some("SKU-1".into()),
        serial: Some("SN-0001".into()),
        gs1: None,
        encode,
    };
    let plain = zpl::format("JOB-0002", &unit(false), 1).unwrap();
    assert_eq!(plain.as_bytes(), fixture("unit_label.zpl"));
    let encoded = zpl::format("job-0003", &unit(true), 1).unwrap();
    assert_eq!(encoded.as_bytes(), fixture("unit_label_encode.zpl"));

    let (status, used) = zpl::parse_host_status(&fixture("host_status_paper_out_head_open.bin"))
        .unwrap()
        .unwrap();
    assert_eq!(used, fixture("host_status_paper_out_head_open.bin").len());
    assert!(status.paper_out && status.head_open);
    assert!(!status.paused && !status.ribbon_out);
    let (read, _) = zpl::parse_verification(&fixture("verification_job_0003.txt"), "job-0003")
        .unwrap()
        .unwrap();
    assert_eq!(read, EPC);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_polled_printer_is_heard_and_silent_past_300_s_is_offline_at_p2() {
    let site = PrintSite::start().await;
    let mut stand_in = StandIn::start().await;
    site.add_printer("ZT-1", &stand_in).await;
    stand_in
        .until("two host status answers", |s| s.status_answers() >= 2)
        .await;
    // Silent from now on: the last answer recorded stays the last.
    stand_in.offline();
    site.until_unheard("ZT-1").await;
    let heard_at = site
        .db
        .call_blocking(|conn| ledger::devices::last_seen(conn, "ZT-1"))
        .unwrap()
        .expect("the printer's answers are recorded as heard");
    assert_eq!(heard_at.source, store::SOURCE_PRINTER);

    let at = |ms: i64| {
        site.db
            .call_blocking(|conn| status::devices(conn, UnixMs(heard_at.last_seen_at.0 + ms)))
            .unwrap()
            .into_iter()
            .find(|d| d.device_id == "ZT-1")
            .unwrap()
    };
    let fresh = at(0);
    assert!(fresh.online && fresh.alert.is_none());
    assert_eq!(fresh.profile, "zt411r");
    let silent = at(300_001);
    assert!(!silent.online);
    assert_eq!(silent.alert, Some(Alert::P2));
    assert_eq!(
        silent.offline_since,
        Some(UnixMs(heard_at.last_seen_at.0 + 300_000))
    );

    // Nothing about the printer shows among the terminals.
    let view = site.get("/v1/site/status").await;
    assert!(view["terminals"].as_array().unwrap().is_empty(), "{view}");
    let printer = site.printer_status("ZT-1").await;
    assert_eq!(printer["faults"], json!([]));
    assert_eq!(printer["alert"], Value::Null);
}

#[tokio::test(flavor = "multi_thread")]
async fn paper_out_and_head_open_show_raise_p2_and_hold_jobs_until_cleared() {
    let site = PrintSite::start().await;
    let stand_in = StandIn::start().await;
    stand_in.set_faults(Faults {
        paper_out: true,
        head_open: true,
        ..Faults::default()
    });
    site.add_printer("ZT-1", &stand_in).await;
    stand_in
        .until("a host status", |s| s.status_answers() >= 1)
        .await;
    let job = site
        .print(
            "ZT-1",
            json!({"label": "bin", "bin": "B-12-03", "job_id": "JOB-HELD"}),
        )
        .await;
    assert_eq!(job["state"], "pending");
    let answers = stand_in.status_answers();
    stand_in
        .until("three more polls", |s| s.status_answers() >= answers + 3)
        .await;
    let printer = site.printer_status("ZT-1").await;
    assert_eq!(
        printer["faults"],
        json!(["paper_out", "head_open"]),
        "{printer}"
    );
    assert_eq!(printer["alert"], "P2");
    assert_eq!(printer["jobs_pending"], 1);
    assert_eq!(
        stand_in.printed_of("JOB-HELD"),
        0,
        "held while paper is out"
    );

    stand_in.set_faults(Faults::default());
    site.job_in("JOB-HELD", "printed").await;
    assert_eq!(stand_in.printed_of("JOB-HELD"), 1);
    let printer = site.printer_status("ZT-1").await;
    assert_eq!(printer["faults"], json!([]));
    assert_eq!(printer["jobs_pending"], 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_printer_gets_each_labels_fixture_bytes() {
    let site = PrintSite::start().await;
    let stand_in = StandIn::start().await;
    site.add_printer("ZT-1", &stand_in).await;
    site.print(
        "ZT-1",
        json!({"label": "bin", "bin": "B-12-03", "copies": 2, "job_id": "JOB-0001"}),
    )
    .await;
    site.print(
        "ZT-1",
        json!({"label": "unit", "epc": EPC, "job_id": "JOB-0002"}),
    )
    .await;
    site.print(
        "ZT-1",
        json!({"label": "unit", "epc": EPC, "encode": true, "job_id": "job-0003"}),
    )
    .await;
    site.job_in("job-0003", "printed").await;
    let printed = stand_in.printed();
    let bytes: Vec<&[u8]> = printed.iter().map(|p| p.zpl.as_slice()).collect();
    assert_eq!(
        bytes,
        [
            fixture("bin_label.zpl").as_slice(),
            fixture("unit_label.zpl").as_slice(),
            fixture("unit_label_encode.zpl").as_slice(),
        ]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_encoded_tag_posts_encode_only_when_it_reads_back_as_written() {
    let site = PrintSite::start().await;
    let stand_in = StandIn::start().await;
    site.add_printer("ZT-1", &stand_in).await;

    // Verified: the ENCODE hop posts under the job's own key.
    let job = site
        .print(
            "ZT-1",
            json!({"label": "unit", "epc": EPC, "encode": true, "job_id": "ENC-1"}),
        )
        .await;
    assert_eq!(job["state"], "pending");
    let job = site.job_in("ENC-1", "printed").await;
    assert_eq!(job["read_back"], EPC);
    let key = store::encode_key("ENC-1");
    let hop = site
        .db
        .call_blocking(|conn| ledger::hops::by_key(conn, "ZT-1", &key))
        .unwrap()
        .expect("the ENCODE hop");
    assert_eq!(job["hop_id"], hop.hop_id);
    assert_eq!(
        site.count("SELECT count(*) FROM hops WHERE kind = 'ENCODE'"),
        1
    );
    assert_eq!(stand_in.printed()[0].written.as_deref(), Some(EPC));

    // A wrong read-back and a void tag: refused, for a person; no hop.
    stand_in.set_faults(Faults {
        wrong_read_back: Some("E2800000000000000000FFFF".into()),
        ..Faults::default()
    });
    site.print(
        "ZT-1",
        json!({"label": "unit", "epc": EPC, "encode": true, "job_id": "ENC-2"}),
    )
    .await;
    let refused = site.job_in("ENC-2", "refused").await;
    assert_eq!(refused["reason"], "read_back_mismatch");
    assert_eq!(refused["read_back"], "E2800000000000000000FFFF");
    stand_in.set_faults(Faults {
        void_tag: true,
        ..Faults::default()
    });
    site.print(
        "ZT-1",
        json!({"label": "unit", "epc": EPC, "encode": true, "job_id": "ENC-3"}),
    )
    .await;
    assert_eq!(site.job_in("ENC-3", "refused").await["reason"], "void_tag");
    assert_eq!(
        site.count("SELECT count(*) FROM hops WHERE kind = 'ENCODE'"),
        1
    );
    let decisions = site.get("/v1/site/status").await["decisions"]["print_jobs"].clone();
    let listed: Vec<&str> = decisions
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["job_id"].as_str().unwrap())
        .collect();
    assert_eq!(listed, ["ENC-2", "ENC-3"]);

    // A person reprints one on a good tag and dismisses the other.
    stand_in.set_faults(Faults::default());
    let (status, _) = site
        .post(
            "/v1/site/print-jobs/ENC-2/reprint",
            &site.admin.clone(),
            json!({}),
        )
        .await;
    assert_eq!(status, 200);
    site.job_in("ENC-2", "printed").await;
    let (status, _) = site
        .post(
            "/v1/site/print-jobs/ENC-3/dismiss",
            &site.admin.clone(),
            json!({}),
        )
        .await;
    assert_eq!(status, 200);
    let (status, body) = site
        .post(
            "/v1/site/print-jobs/ENC-3/dismiss",
            &site.admin.clone(),
            json!({}),
        )
        .await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(
        site.count("SELECT count(*) FROM hops WHERE kind = 'ENCODE'"),
        2
    );
    assert_eq!(stand_in.printed_of("ENC-3"), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_job_accepted_while_the_printer_is_offline_prints_once_when_it_returns() {
    let site = PrintSite::start().await;
    let mut stand_in = StandIn::start().await;
    site.add_printer("ZT-1", &stand_in).await;
    stand_in
        .until("a host status", |s| s.status_answers() >= 1)
        .await;
    stand_in.offline();
    site.until_unheard("ZT-1").await;
    let job = site
        .print(
            "ZT-1",
            json!({"label": "bin", "bin": "B-12-03", "job_id": "JOB-OFF"}),
        )
        .await;
    assert_eq!(job["state"], "pending");
    // Several polls miss it; the job waits in the log.
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(site.job_in("JOB-OFF", "pending").await["attempts"], 0);

    stand_in.online();
    let printed = site.job_in("JOB-OFF", "printed").await;
    assert_eq!(printed["attempts"], 1);
    let answers = stand_in.status_answers();
    stand_in
        .until("three more polls", |s| s.status_answers() >= answers + 3)
        .await;
    assert_eq!(stand_in.printed_of("JOB-OFF"), 1, "printed once");

    // The same request again is the same job, not a second label.
    let again = site
        .print(
            "ZT-1",
            json!({"label": "bin", "bin": "B-12-03", "job_id": "JOB-OFF"}),
        )
        .await;
    assert_eq!(again["state"], "printed");
    let (status, body) = site
        .post(
            "/v1/site/printers/ZT-1/print",
            &site.admin.clone(),
            json!({"label": "bin", "bin": "B-12-03", "copies": 3, "job_id": "JOB-OFF"}),
        )
        .await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(stand_in.printed_of("JOB-OFF"), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_connection_dropped_mid_job_is_never_printed_twice() {
    let site = PrintSite::start().await;
    let stand_in = StandIn::start().await;
    site.add_printer("ZT-1", &stand_in).await;
    stand_in
        .until("a host status", |s| s.status_answers() >= 1)
        .await;
    stand_in.set_faults(Faults {
        drop_next_job: true,
        ..Faults::default()
    });
    site.print(
        "ZT-1",
        json!({"label": "bin", "bin": "B-12-03", "job_id": "JOB-DROP"}),
    )
    .await;
    let doubtful = site.job_in("JOB-DROP", "in_doubt").await;
    assert_eq!(doubtful["reason"], "no_answer");
    let answers = stand_in.status_answers();
    stand_in
        .until("three more polls", |s| s.status_answers() >= answers + 3)
        .await;
    assert_eq!(stand_in.printed_of("JOB-DROP"), 0);
    assert_eq!(site.job_in("JOB-DROP", "in_doubt").await["attempts"], 1);
    let listed = site.get("/v1/site/status").await["decisions"]["print_jobs"].clone();
    assert_eq!(listed[0]["job_id"], "JOB-DROP");

    // A person who sees no label reprints it: once.
    let (status, _) = site
        .post(
            "/v1/site/print-jobs/JOB-DROP/reprint",
            &site.admin.clone(),
            json!({}),
        )
        .await;
    assert_eq!(status, 200);
    site.job_in("JOB-DROP", "printed").await;
    assert_eq!(stand_in.printed_of("JOB-DROP"), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_handheld_prints_only_while_receiving_and_bad_requests_are_refused() {
    let site = PrintSite::start().await;
    let stand_in = StandIn::start().await;
    site.add_printer("ZT-1", &stand_in).await;
    let token = site
        .db
        .call_blocking(|conn| ledger::devices::add(conn, "HH-1", Profile::Mc3390xr, true, now()))
        .unwrap();
    let unit = json!({"label": "unit", "epc": EPC, "encode": true});
    let (status, body) = site
        .post("/v1/site/printers/ZT-1/print", &token, unit.clone())
        .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (403, Some("PRINT_NOT_ALLOWED"))
    );

    let mut hh = Handheld::new("HH-1", token.clone());
    let open = hh.item(
        "open_session",
        json!({"operator_id": "op-1", "mode": "receive", "context": {"grn": "G-1"}}),
    );
    let sync = json!({"device_id": "HH-1", "sent_at": now().to_string(), "items": [open]});
    let (status, body) = site.post("/v1/sync", &token, sync).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["results"][0]["outcome"], "applied", "{body}");

    let (status, job) = site
        .post("/v1/site/printers/ZT-1/print", &token, unit)
        .await;
    assert_eq!(status, 202, "{job}");
    assert_eq!(job["requested_by"], "HH-1");
    site.job_in(job["job_id"].as_str().unwrap(), "printed")
        .await;
    let (status, _) = site
        .post(
            "/v1/site/printers/ZT-1/print",
            &token,
            json!({"label": "bin", "bin": "B-12-03"}),
        )
        .await;
    assert_eq!(status, 403, "a handheld prints unit labels only");

    let admin = site.admin.clone();
    for (body, status, code) in [
        (
            json!({"label": "unit", "epc": "NOT-HEX"}),
            400,
            "INVALID_LABEL",
        ),
        (
            json!({"label": "unit", "epc": EPC, "encode": true, "copies": 2}),
            400,
            "INVALID_LABEL",
        ),
        (
            json!({"label": "bin", "bin": "B-12-03", "encode": true}),
            400,
            "INVALID_LABEL",
        ),
        (
            json!({"label": "bin", "bin": "B-12-03", "copies": 101}),
            400,
            "INVALID_LABEL",
        ),
        (
            json!({"label": "bin", "bin": "NO-SUCH-BIN"}),
            404,
            "BIN_NOT_FOUND",
        ),
        (
            json!({"label": "unit", "epc": "E2800000000000000000BEEF"}),
            404,
            "UNIT_NOT_FOUND",
        ),
    ] {
        let (got, answer) = site
            .post("/v1/site/printers/ZT-1/print", &admin, body.clone())
            .await;
        assert_eq!(
            (got, answer["code"].as_str()),
            (status, Some(code)),
            "{body}: {answer}"
        );
    }
    let (status, answer) = site
        .post(
            "/v1/site/printers/NO-PRINTER/print",
            &admin,
            json!({"label": "bin", "bin": "B-12-03"}),
        )
        .await;
    assert_eq!(
        (status, answer["code"].as_str()),
        (404, Some("PRINTER_NOT_FOUND"))
    );
    let (status, _) = site
        .post(
            "/v1/site/printers",
            &admin,
            json!({"printer_id": "ZT-2", "address": "host:99999"}),
        )
        .await;
    assert_eq!(status, 400);
    assert_eq!(
        site.count("SELECT count(*) FROM print_jobs"),
        1,
        "nothing refused was kept"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_receive_that_encodes_at_its_stations_printer_posts_encode_from_the_read_back() {
    let site = PrintSite::start().await;
    let stand_in = StandIn::start().await;
    let token = site
        .db
        .call_blocking(|conn| ledger::devices::add(conn, "HH-1", Profile::Rfd40, true, now()))
        .unwrap();
    let (status, body) = site
        .post(
            "/v1/site/printers",
            &site.admin.clone(),
            json!({"printer_id": "ZT-1", "address": stand_in.address(), "stations": ["HH-1"]}),
        )
        .await;
    assert_eq!(status, 200, "{body}");

    const NEW_EPC: &str = "E2800000000000000000000B";
    let mut hh = Handheld::new("HH-1", token.clone());
    let open = hh.item(
        "open_session",
        json!({"operator_id": "op-1", "mode": "receive", "context": {"grn": "G-1"}}),
    );
    let scan = hh.item(
        "scan",
        json!({"mode": "receive", "grn": "G-1", "epc": NEW_EPC, "sku": "SKU-1", "encode": true}),
    );
    let scan_key = scan["key"].as_str().unwrap().to_owned();
    let sync = json!({"device_id": "HH-1", "sent_at": now().to_string(), "items": [open, scan]});
    let (status, body) = site.post("/v1/sync", &token, sync).await;
    assert_eq!(status, 200, "{body}");
    let result = &body["results"][1];
    assert_eq!(result["outcome"], "applied", "{body}");
    assert_eq!(
        result["hop_ids"].as_array().unwrap().len(),
        1,
        "RECEIVE only, for now"
    );

    let job_id = ledger::modes::derived_key(&["HH-1", &scan_key, "PRINT"]);
    let job = site.job_in(&job_id, "printed").await;
    assert_eq!(job["requested_by"], "HH-1");
    assert_eq!(job["read_back"], NEW_EPC);
    assert_eq!(stand_in.printed_of(&job_id), 1);
    assert_eq!(stand_in.printed()[0].written.as_deref(), Some(NEW_EPC));
    assert_eq!(
        site.count("SELECT count(*) FROM hops WHERE kind = 'ENCODE' AND device_id = 'ZT-1'"),
        1
    );
    assert_eq!(
        site.count("SELECT count(*) FROM hops WHERE kind = 'ENCODE'"),
        1
    );
}

#[tokio::test]
async fn a_handheld_reads_its_stations_printer_and_each_receive_label_by_its_scans_key() {
    let site = PrintSite::start().await;
    let mut stand_in = StandIn::start().await;
    let token = site
        .db
        .call_blocking(|conn| ledger::devices::add(conn, "HH-1", Profile::Rfd40, true, now()))
        .unwrap();
    let other = site
        .db
        .call_blocking(|conn| ledger::devices::add(conn, "HH-2", Profile::Rfd40, true, now()))
        .unwrap();
    let (status, body) = site
        .post(
            "/v1/site/printers",
            &site.admin.clone(),
            json!({"printer_id": "ZT-1", "address": stand_in.address(), "stations": ["HH-1"]}),
        )
        .await;
    assert_eq!(status, 200, "{body}");

    // The station's printer, once the site has heard it.
    stand_in
        .until("a host status answer", |s| s.status_answers() > 0)
        .await;
    let printer = loop {
        let (status, printer) = site.get_as("/v1/devices/HH-1/printer", &token).await;
        assert_eq!(status, 200, "{printer}");
        if printer["offline"] == false {
            break printer;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(printer["printer_id"], "ZT-1");
    assert_eq!(printer["faults"], json!([]));
    let (status, body) = site.get_as("/v1/devices/HH-2/printer", &other).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (404, Some("PRINTER_NOT_FOUND"))
    );
    let (status, body) = site.get_as("/v1/devices/HH-1/printer", &other).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (403, Some("DEVICE_MISMATCH")),
        "a device reads only its own"
    );
    let (status, _) = site.get_as("/v1/devices/HH-1/printer", "nope").await;
    assert_eq!(status, 401);

    // A tag that reads back wrong: the handheld reads the refusal by its
    // scan's key, and no ENCODE posts.
    stand_in.set_faults(Faults {
        wrong_read_back: Some("E28000000000000000000099".into()),
        ..Faults::default()
    });
    let mut hh = Handheld::new("HH-1", token.clone());
    let open = hh.item(
        "open_session",
        json!({"operator_id": "op-1", "mode": "receive", "context": {"grn": "G-1"}}),
    );
    let scan = hh.item(
        "scan",
        json!({"mode": "receive", "grn": "G-1", "epc": "E2800000000000000000000C", "sku": "SKU-1", "encode": true}),
    );
    let wrong_key = scan["key"].as_str().unwrap().to_owned();
    let sync = json!({"device_id": "HH-1", "sent_at": now().to_string(), "items": [open, scan]});
    let (status, body) = site.post("/v1/sync", &token, sync).await;
    assert_eq!(status, 200, "{body}");
    let path = format!("/v1/devices/HH-1/print-jobs/{wrong_key}");
    let label = loop {
        let (status, label) = site.get_as(&path, &token).await;
        assert_eq!(status, 200, "{label}");
        if label["job"]["state"] != "pending" && label["job"]["state"] != "sending" {
            break label;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(label["job"]["state"], "refused", "{label}");
    assert_eq!(label["job"]["reason"], "read_back_mismatch");
    assert_eq!(label["job"]["read_back"], "E28000000000000000000099");
    assert_eq!(label["job"]["subject"], "E2800000000000000000000C");
    assert_eq!(label["printer"]["printer_id"], "ZT-1");
    assert_eq!(
        site.count("SELECT count(*) FROM hops WHERE kind = 'ENCODE'"),
        0
    );
    let (status, _) = site.get_as(&path, &other).await;
    assert_eq!(status, 403);

    // The printer off the network: a label waits, and says why.
    stand_in.set_faults(Faults::default());
    stand_in.offline();
    site.until_unheard("ZT-1").await;
    let scan = hh.item(
        "scan",
        json!({"mode": "receive", "grn": "G-1", "epc": "E2800000000000000000000D", "sku": "SKU-1", "encode": true}),
    );
    let waiting_key = scan["key"].as_str().unwrap().to_owned();
    let sync = json!({"device_id": "HH-1", "sent_at": now().to_string(), "items": [scan]});
    let (status, body) = site.post("/v1/sync", &token, sync).await;
    assert_eq!(status, 200, "{body}");
    let path = format!("/v1/devices/HH-1/print-jobs/{waiting_key}");
    let (status, label) = site.get_as(&path, &token).await;
    assert_eq!(status, 200, "{label}");
    assert_eq!(label["job"]["state"], "pending", "{label}");
    assert!(label["printer"]["status_at"].is_string(), "{label}");
    assert!(
        label["printer"]["last_error"].is_string(),
        "the site says it could not reach the printer: {label}"
    );
    // Back: it prints, verified, and its ENCODE posts.
    stand_in.online();
    let label = loop {
        let (_, label) = site.get_as(&path, &token).await;
        if label["job"]["state"] == "printed" {
            break label;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(label["job"]["hop_id"].is_number(), "{label}");
    assert_eq!(
        site.count("SELECT count(*) FROM hops WHERE kind = 'ENCODE'"),
        1
    );

    // A scan that queued no label, and a key that is not one.
    let unknown = "/v1/devices/HH-1/print-jobs/0b7c2f1e-9d4a-4c1b-8e2f-3a5d6c7b8e9f";
    let (status, body) = site.get_as(unknown, &token).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (404, Some("JOB_NOT_FOUND"))
    );
    let (status, body) = site
        .get_as("/v1/devices/HH-1/print-jobs/not-a-key", &token)
        .await;
    assert_eq!(status, 400, "{body}");
}

#[test]
fn printer_add_on_the_command_line_registers_it_at_port_9100_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let data = backend::new_site(dir.path());
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_stockhop-site"))
            .args(args)
            .arg("--data")
            .arg(&data)
            .args(backend::database_args(&data))
            .output()
            .unwrap()
    };
    let added = run(&["printer", "add", "ZT-9", "--address", "127.0.0.1"]);
    assert!(
        added.status.success(),
        "{}",
        String::from_utf8_lossy(&added.stderr)
    );
    let again = run(&["printer", "add", "ZT-9", "--address", "127.0.0.1:6101"]);
    assert!(!again.status.success());
    let bad = run(&["printer", "add", "ZT-8", "--address", "printer:0"]);
    assert!(!bad.status.success());
    let db = backend::open_db(&data);
    let printers = db.call_blocking(|conn| store::list(conn)).unwrap();
    assert_eq!(
        printers,
        [store::Printer {
            printer_id: "ZT-9".into(),
            host: "127.0.0.1".into(),
            port: 9100
        }]
    );
    drop(db);

    // Moved to another address, and a station prints at it from then on.
    let handheld = run(&["device", "add", "HH-1", "--profile", "mc3390xr"]);
    assert!(handheld.status.success());
    let moved = run(&[
        "printer",
        "set",
        "ZT-9",
        "--address",
        "127.0.0.1:6101",
        "--station",
        "HH-1",
    ]);
    assert!(
        moved.status.success(),
        "{}",
        String::from_utf8_lossy(&moved.stderr)
    );
    for refused in [
        run(&["printer", "set", "ZT-9"]),
        run(&["printer", "set", "ZT-7", "--address", "127.0.0.1"]),
        run(&["printer", "set", "ZT-9", "--address", "printer:0"]),
        run(&["printer", "set", "ZT-9", "--station", "NOBODY"]),
    ] {
        assert!(!refused.status.success());
    }
    let db = backend::open_db(&data);
    let (printers, station) = db
        .call_blocking(|conn| {
            let station: String = conn.query_row(
                "SELECT printer_id FROM printer_stations WHERE device_id = 'HH-1'",
                [],
                |row| row.get(0),
            )?;
            Ok::<_, stockhop_site::store::sql::Error>((store::list(conn)?, station))
        })
        .unwrap();
    assert_eq!(printers[0].address(), "127.0.0.1:6101");
    assert_eq!(station, "ZT-9");
    drop(db);

    // Revoked, it is out of service: no longer polled or listed.
    assert!(run(&["device", "revoke", "ZT-9"]).status.success());
    let db = backend::open_db(&data);
    assert_eq!(db.call_blocking(|conn| store::list(conn)).unwrap(), []);
}
