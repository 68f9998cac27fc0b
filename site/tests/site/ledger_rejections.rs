//! The rejection summaries (SQLite, and PostgreSQL with
//! `STOCKHOP_TEST_BACKEND=postgres`): after any mix of applied, rejected,
//! held-then-rejected, acknowledged and dismissed items they equal a count
//! over the receipts; the migration that made them counts what was there
//! before; a device that keeps producing rejections is shown as rejecting
//! in the status, `/metrics` and the site's alert conditions.

use proptest::prelude::*;
use serde_json::{json, Value};
use stockhop::time::UnixMs;
use stockhop_site::ledger::{self, rejections, sync};
use stockhop_site::store::db::Db;
use stockhop_site::view;

use crate::backend;
use crate::ledger_common::{now, Handheld, Site};

/// The correction list's rows as the site read them before the summaries:
/// final answers whose outcome is `rejected`.
const REJECTED: &str = "r.state = 'final'
      AND CASE WHEN json_valid(r.response) THEN json_extract(r.response, '$.outcome') END = 'rejected'";

const SETTLED: &str = "EXISTS (SELECT 1 FROM decision_log d
                      WHERE d.decision_id = 'item:' || r.scope || ':' || r.key)";

/// Each (device, reason) with its rejected, unsettled and newest receipt
/// instant, counted over the receipts.
fn counted(db: &Db) -> Vec<(String, String, i64, i64, i64)> {
    let sql = format!(
        "SELECT r.scope, coalesce(json_extract(r.response, '$.reason'), ''),
                CAST(count(*) AS BIGINT),
                CAST(sum(CASE WHEN {SETTLED} THEN 0 ELSE 1 END) AS BIGINT),
                max(r.received_at)
         FROM receipts r WHERE {REJECTED}
         GROUP BY r.scope, coalesce(json_extract(r.response, '$.reason'), '')
         ORDER BY 1, 2"
    );
    rows(db, &sql)
}

/// The same, as the summary table holds it.
fn summarised(db: &Db) -> Vec<(String, String, i64, i64, i64)> {
    rows(
        db,
        "SELECT device_id, reason, rejected, unsettled, last_received_at
         FROM rejection_summary ORDER BY 1, 2",
    )
}

fn rows(db: &Db, sql: &str) -> Vec<(String, String, i64, i64, i64)> {
    db.call_blocking(|conn| {
        conn.prepare(sql)
            .unwrap()
            .query_map([], |row| {
                Ok((
                    row.get(0)?,
                    row.get(1)?,
                    row.get(2)?,
                    row.get(3)?,
                    row.get(4)?,
                ))
            })
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap()
    })
}

/// Rejected items a device within the window at `now`, counted over the
/// receipts.
fn counted_recent(db: &Db, device_id: &str, at: UnixMs) -> i64 {
    let minute = rejections::minute_of(at);
    let sql = format!(
        "SELECT count(*) FROM receipts r WHERE {REJECTED} AND r.scope = ?1
           AND r.received_at >= ?2 AND r.received_at < ?3"
    );
    db.call_blocking(|conn| {
        conn.query_row(
            &sql,
            stockhop_site::params![
                device_id,
                (minute - rejections::WINDOW_MINUTES + 1) * 60_000,
                (minute + 1) * 60_000
            ],
            |row| row.get(0),
        )
    })
    .unwrap()
}

/// One step of two handhelds and a supervisor.
#[derive(Debug, Clone)]
enum Step {
    /// A put-away scan, received `minutes_ago` before the check: of a
    /// known unit or not, into a known bin or not; with `held`, sent after
    /// the scan behind it, so it waits for its turn and is answered by the
    /// drain.
    Scan {
        device: usize,
        unit: Option<usize>,
        known_bin: bool,
        held: bool,
        minutes_ago: i64,
    },
    /// The handheld acknowledges one of its rejected items (or one the
    /// site never received, itself rejected), or re-scans it.
    Acknowledge {
        device: usize,
        which: prop::sample::Index,
        rescan: bool,
    },
    /// The supervisor dismisses one open rejected item.
    Dismiss(prop::sample::Index),
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    let step = prop_oneof![
        4 => (0..2_usize, proptest::option::of(0..6_usize), any::<bool>(), any::<bool>(), 0..12_i64)
            .prop_map(|(device, unit, known_bin, held, minutes_ago)| Step::Scan {
                device,
                unit,
                known_bin,
                held,
                minutes_ago,
            }),
        1 => (0..2_usize, any::<prop::sample::Index>(), any::<bool>())
            .prop_map(|(device, which, rescan)| Step::Acknowledge { device, which, rescan }),
        1 => any::<prop::sample::Index>().prop_map(Step::Dismiss),
    ];
    prop::collection::vec(step, 1..30)
}

const DEVICES: [&str; 2] = ["HH-1", "HH-2"];

fn import(db: &Db, dir: &std::path::Path, kind: &str, text: &str) {
    use clap::ValueEnum;
    let kind = ledger::import::Kind::from_str(kind, false).unwrap();
    let path = dir.join(format!("{kind:?}.csv"));
    std::fs::write(&path, text).unwrap();
    db.call_blocking(|conn| ledger::import::import(conn, kind, &path, now()))
        .unwrap();
}

fn run_steps(steps: &[Step], case: usize) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let db = backend::open_db(&dir.path().join(format!("data-{case}")));
    import(&db, dir.path(), "bins", "bin,zone,location\nB-1,Z-1,L-1\n");
    let units: String = (0..6).map(|i| format!("EPC-{i},,SKU-1,new,\n")).collect();
    import(
        &db,
        dir.path(),
        "units",
        &format!("epc,code,sku,state,bin\n{units}"),
    );
    let checked_at = now();
    let mut handhelds: Vec<Handheld> = DEVICES
        .iter()
        .map(|id| {
            let token = db
                .call_blocking(|conn| {
                    ledger::devices::add(conn, id, ledger::devices::Profile::Mc3390xr, true, now())
                })
                .unwrap();
            Handheld::new(id, token)
        })
        .collect();
    let send = |device_id: &str, items: &[Value], at: UnixMs| -> Vec<Value> {
        let device = db
            .call_blocking(|conn| ledger::devices::find(conn, device_id))
            .unwrap();
        let incoming: Vec<_> = items
            .iter()
            .map(|item| sync::Incoming::from_value(item).unwrap())
            .collect();
        let held = vec![false; incoming.len()];
        let results = db
            .call_blocking(|conn| {
                let ran = sync::run_parked(conn, &device, at, &incoming, &held, at)?;
                let mut parked = ran.parked;
                while !parked.is_empty() {
                    parked = sync::drain_parked(conn, &device, &parked, at)?;
                }
                Ok::<_, ledger::LedgerError>(ran.results)
            })
            .unwrap();
        results
            .iter()
            .map(|r| serde_json::to_value(r).unwrap())
            .collect()
    };
    let start = UnixMs(checked_at.0 - 13 * 60_000);
    for hh in &mut handhelds {
        let open = hh.item_at(
            "open_session",
            json!({"operator_id": "op-1", "mode": "put_away", "context": {}}),
            start,
        );
        send(&hh.device_id, &[open], start);
    }
    // The rejected items each device has had answered, by key.
    let mut rejected: Vec<Vec<String>> = vec![Vec::new(); DEVICES.len()];
    for step in steps {
        match step {
            Step::Scan {
                device,
                unit,
                known_bin,
                held,
                minutes_ago,
            } => {
                let at = UnixMs(checked_at.0 - minutes_ago * 60_000);
                let hh = &mut handhelds[*device];
                let epc = unit.map_or_else(|| "NOT-A-UNIT".to_owned(), |u| format!("EPC-{u}"));
                let bin = if *known_bin { "B-1" } else { "NOT-A-BIN" };
                let body = json!({"mode": "put_away", "epc": epc, "bin": bin});
                let first = hh.item_at("scan", body.clone(), at);
                let items = if *held {
                    // The one behind it first: it waits, and is answered
                    // when `first` arrives.
                    let second = hh.item_at("scan", body, at);
                    let mut answers = send(&hh.device_id, std::slice::from_ref(&second), at);
                    answers.extend(send(&hh.device_id, &[first], at));
                    answers.extend(send(&hh.device_id, &[second], at));
                    answers
                } else {
                    send(&hh.device_id, &[first], at)
                };
                for answer in items {
                    let key = answer["key"].as_str().unwrap().to_owned();
                    if answer["outcome"] == "rejected" && !rejected[*device].contains(&key) {
                        rejected[*device].push(key);
                    }
                }
            }
            Step::Acknowledge {
                device,
                which,
                rescan,
            } => {
                let hh = &mut handhelds[*device];
                let target = if rejected[*device].is_empty() {
                    crate::ledger_common::key()
                } else {
                    rejected[*device][which.index(rejected[*device].len())].clone()
                };
                let mut body = json!({"target_key": target});
                if *rescan {
                    body["rescan_key"] = json!(crate::ledger_common::key());
                }
                let ack = hh.item_at("acknowledge", body, checked_at);
                for answer in send(&hh.device_id, &[ack], checked_at) {
                    if answer["outcome"] == "rejected" {
                        rejected[*device].push(answer["key"].as_str().unwrap().to_owned());
                    }
                }
            }
            Step::Dismiss(which) => {
                let open = db
                    .call_blocking(|conn| view::workbench::open(conn, &[]))
                    .unwrap();
                let items: Vec<_> = open
                    .into_iter()
                    .filter(|d| d.id.starts_with("item:"))
                    .collect();
                if items.is_empty() {
                    continue;
                }
                let decision = items[which.index(items.len())].clone();
                db.call_blocking(|conn| {
                    view::workbench::settle(
                        conn,
                        &decision,
                        &view::workbench::Settle {
                            action: "dismiss".into(),
                            note: "seen".into(),
                        },
                        "supervisor",
                        checked_at,
                    )
                })
                .unwrap();
            }
        }
    }
    prop_assert_eq!(summarised(&db), counted(&db));
    let summary = db
        .call_blocking(|conn| rejections::summary(conn, checked_at))
        .unwrap();
    for device_id in DEVICES {
        let recent = summary
            .by_device
            .iter()
            .find(|d| d.device_id == device_id)
            .map_or(0, |d| d.recent);
        prop_assert_eq!(
            recent,
            counted_recent(&db, device_id, checked_at),
            "{}",
            device_id
        );
    }
    let open = db
        .call_blocking(|conn| view::decisions::pending(conn))
        .unwrap();
    let total: i64 = db
        .call_blocking(|conn| {
            conn.query_row(
                &format!("SELECT count(*) FROM receipts r WHERE {REJECTED} AND NOT {SETTLED}"),
                [],
                |row| row.get(0),
            )
        })
        .unwrap();
    prop_assert_eq!(open.corrections_total, total);
    prop_assert_eq!(summary.unsettled, total);
    prop_assert_eq!(open.corrections.len() as i64, total.min(100));
    Ok(())
}

proptest! {
    // Each case is a fresh ledger: a few dozen cover the mixes without a
    // long suite.
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn the_summaries_equal_a_count_over_the_receipts_after_any_mix_of_items(steps in steps()) {
        static CASE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let case = CASE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        run_steps(&steps, case)?;
    }
}

/// Receipts as a site held them before the summaries: rejected ones of two
/// devices and reasons (settled and not), applied ones, a buffered one.
const OLD_RECEIPTS: &[(&str, &str, &str, i64, &str)] = &[
    // scope, key, state, received_at, response
    (
        "HH-1",
        "k1",
        "final",
        1_000,
        r#"{"key":"k1","outcome":"rejected","reason":"unknown_unit"}"#,
    ),
    (
        "HH-1",
        "k2",
        "final",
        5_000,
        r#"{"key":"k2","outcome":"rejected","reason":"unknown_unit"}"#,
    ),
    (
        "HH-1",
        "k3",
        "final",
        3_000,
        r#"{"key":"k3","outcome":"rejected","reason":"unknown_bin"}"#,
    ),
    (
        "HH-1",
        "k4",
        "final",
        4_000,
        r#"{"key":"k4","outcome":"applied"}"#,
    ),
    (
        "HH-2",
        "k5",
        "final",
        2_000,
        r#"{"key":"k5","outcome":"rejected","reason":"unknown_unit"}"#,
    ),
    (
        "HH-2",
        "k6",
        "final",
        9_000,
        r#"{"key":"k6","outcome":"rejected"}"#,
    ),
    ("HH-2", "k7", "buffered", 8_000, ""),
];

#[test]
fn the_migration_counts_the_receipts_already_held() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let before = 26;
    let insert_receipt = "INSERT INTO receipts (scope, key, command, request_hash, state,
                              received_at, skew_ms, response)
                          VALUES ($1, $2, 'scan', 'h', $3, $4, 0, $5)";
    let insert_settled = "INSERT INTO decision_log (decision_id, kind, action, settled_by, note,
                              settled_at, hop_ids, summary)
                          VALUES ($1, 'rejected_item', 'acknowledge', 'device:HH-1', '', 1, '[]', '')";
    let settled = ["item:HH-1:k2", "item:HH-2:k6"];
    // The schema as it stood before the summaries, with those rows.
    match backend::database_for(&data) {
        None => {
            let mut conn =
                rusqlite::Connection::open(data.join(stockhop_site::store::db::DB_FILE)).unwrap();
            for migration in &stockhop_site::store::db::MIGRATIONS[..before] {
                conn.execute_batch(migration.sql).unwrap();
            }
            conn.pragma_update(None, "user_version", before as i64)
                .unwrap();
            let tx = conn.transaction().unwrap();
            for (scope, key, state, at, response) in OLD_RECEIPTS {
                let response = (!response.is_empty()).then_some(*response);
                tx.execute(
                    &insert_receipt.replace('$', "?"),
                    rusqlite::params![scope, key, state, at, response],
                )
                .unwrap();
            }
            for id in settled {
                tx.execute(&insert_settled.replace('$', "?"), [id]).unwrap();
            }
            tx.commit().unwrap();
        }
        Some(url) => {
            let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
            let mut tx = client.transaction().unwrap();
            for migration in &stockhop_site::store::db::MIGRATIONS_POSTGRES[..before] {
                tx.batch_execute(migration.sql).unwrap();
            }
            tx.batch_execute(&format!(
                "CREATE TABLE stockhop_schema (
                     id      BIGINT PRIMARY KEY CHECK (id = 1),
                     version BIGINT NOT NULL CHECK (version >= 0));
                 INSERT INTO stockhop_schema (id, version) VALUES (1, {before})"
            ))
            .unwrap();
            for (scope, key, state, at, response) in OLD_RECEIPTS {
                let response = (!response.is_empty()).then_some(*response);
                tx.execute(insert_receipt, &[scope, key, state, at, &response])
                    .unwrap();
            }
            for id in settled {
                tx.execute(insert_settled, &[&id]).unwrap();
            }
            tx.commit().unwrap();
        }
    }
    let db = backend::open_db(&data);
    let row = |device: &str, reason: &str, rejected, unsettled, last| {
        (
            device.to_owned(),
            reason.to_owned(),
            rejected,
            unsettled,
            last,
        )
    };
    assert_eq!(
        summarised(&db),
        vec![
            row("HH-1", "unknown_bin", 1, 1, 3_000),
            row("HH-1", "unknown_unit", 2, 1, 5_000),
            row("HH-2", "", 1, 0, 9_000),
            row("HH-2", "unknown_unit", 1, 1, 2_000),
        ]
    );
    assert_eq!(summarised(&db), counted(&db));
    // Instants far in the past: no minute of the rate window.
    assert_eq!(
        db.call_blocking(|conn| conn.query_row(
            "SELECT count(*) FROM rejection_minutes",
            [],
            |row| row.get::<_, i64>(0)
        ))
        .unwrap(),
        0
    );
}

#[tokio::test]
async fn a_device_that_keeps_producing_rejections_is_shown_and_alerted_as_rejecting() {
    let site = Site::start_stocked().await;
    let admin = site
        .db
        .call_blocking(|conn| view::admin::add(conn, "supervisor", now()))
        .unwrap();
    let mut flooding = site.handheld("HH-1").await;
    let mut working = site.handheld("HH-2").await;
    let at_least = rejections::REJECTING_AT_LEAST as usize;
    let open = flooding.open("op-1");
    site.sync_applied(&flooding, &[open]).await;
    let scans: Vec<Value> = (0..at_least)
        .map(|n| flooding.scan(&format!("UNKNOWN-{n}"), "B-1"))
        .collect();
    // In requests of as many items as a handheld sends.
    for chunk in scans.chunks(stockhop::wire::MAX_ITEMS_PER_REQUEST) {
        let results = site.sync_ok(&flooding, chunk).await;
        assert!(
            results.iter().all(|r| r["reason"] == "unknown_unit"),
            "{results:?}"
        );
    }
    // A device with a few refusals among its work is not rejecting.
    let items = [
        working.open("op-2"),
        working.scan("EPC-1", "B-1"),
        working.scan("UNKNOWN-X", "B-1"),
    ];
    site.sync_ok(&working, &items).await;

    let (code, status) = site.get("/v1/site/status", &admin).await;
    assert_eq!(code, 200, "{status}");
    let shown = &status["rejections"];
    assert_eq!(shown["rejected"], at_least + 1, "{shown}");
    assert_eq!(shown["unsettled"], at_least + 1);
    assert_eq!(status["decisions"]["corrections_total"], at_least + 1);
    assert_eq!(
        shown["by_reason"],
        json!([{"reason": "unknown_unit", "rejected": at_least + 1, "unsettled": at_least + 1}])
    );
    assert_eq!(shown["window_minutes"], rejections::WINDOW_MINUTES);
    assert_eq!(shown["rejecting_at_least"], rejections::REJECTING_AT_LEAST);
    let rejecting = shown["rejecting"].as_array().unwrap();
    assert_eq!(rejecting.len(), 1, "{shown}");
    assert_eq!(rejecting[0]["device_id"], "HH-1");
    assert_eq!(rejecting[0]["recent"], at_least);
    assert_eq!(
        rejecting[0]["per_minute"],
        rejections::REJECTING_AT_LEAST / rejections::WINDOW_MINUTES
    );
    assert_eq!(rejecting[0]["top_reason"], "unknown_unit");

    // The site's own alert conditions raise it, and /metrics says so.
    let parsed: view::status::SiteStatus = serde_json::from_value(status.clone()).unwrap();
    let zone = stockhop_site::site_clock::SiteZone::utc();
    let holding = view::alerts::conditions::evaluate(&parsed, None, &zone, now());
    let raised: Vec<_> = holding
        .iter()
        .filter(|c| c.name == view::alerts::conditions::names::DEVICE_REJECTING)
        .collect();
    assert_eq!(raised.len(), 1, "{holding:?}");
    assert_eq!(raised[0].device_id.as_deref(), Some("HH-1"));
    assert_eq!(
        raised[0].priority,
        view::alerts::conditions::REJECTING_PRIORITY
    );
    let (code, metrics) = site.get_text("/metrics", &admin).await;
    assert_eq!(code, 200);
    assert!(
        metrics.contains("stockhop_device_rejecting{device_id=\"HH-1\"} 1"),
        "{metrics}"
    );
    assert!(metrics.contains("stockhop_device_rejecting{device_id=\"HH-2\"} 0"));
    assert!(metrics.contains(&format!(
        "stockhop_rejected_items{{reason=\"unknown_unit\"}} {}",
        at_least + 1
    )));

    // Acknowledged on the handheld: out of the unsettled counts at once.
    let ack = working.item("acknowledge", json!({"target_key": items[2]["key"]}));
    site.sync_applied(&working, &[ack]).await;
    let (_, status) = site.get("/v1/site/status", &admin).await;
    assert_eq!(status["rejections"]["unsettled"], at_least);
    assert_eq!(status["decisions"]["corrections_total"], at_least);
    assert_eq!(status["rejections"]["rejected"], at_least + 1);
    site.stop().await;
}
