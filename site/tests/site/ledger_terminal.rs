//! Terminal records into the ledger: in process, as the listener's
//! forwarder calls it, and over the HMAC-signed HTTP endpoint.

mod backfill;

use crate::backend;

use crate::ledger_common::{key, now, Site, TERMINAL_SECRET};
use serde_json::json;
use stockhop::time::{Millis, UnixMs};
use stockhop_site::ledger::{devices, terminal};
use stockhop_site::terminal_wire::{
    Repeat, RuleOutcome, TerminalBatch, TerminalBatchResponse, TerminalEventKind,
    TerminalHeartbeat, TerminalRecord, TerminalSource, MAX_RECORDS_PER_BATCH, SIGNATURE_HEADER,
    TERMINAL_EVENTS_PATH, TIMESTAMP_HEADER,
};

fn record(kind: TerminalEventKind, subject: &str, outcome: RuleOutcome) -> TerminalRecord {
    let occurred_at = UnixMs(now().0 - 2_000);
    TerminalRecord {
        key: key().parse().unwrap(),
        source: TerminalSource::Zebra,
        device_serial: "FX90-1".into(),
        kind,
        subject: subject.into(),
        occurred_at,
        queued_at: occurred_at.plus(Millis(40)),
        rule_outcome: outcome,
        raw: format!("{{\"epc\":\"{subject}\"}}"),
        repeat: None,
    }
}

/// The `number`th repeat of `accepted`, read `number` × 100 ms after it,
/// as the listener forwards it.
fn repeat_of(accepted: &TerminalRecord, number: u32) -> TerminalRecord {
    let occurred_at = accepted.occurred_at.plus(Millis(100 * u64::from(number)));
    TerminalRecord {
        occurred_at,
        queued_at: occurred_at.plus(Millis(40)),
        repeat: Some(Repeat {
            of: accepted.key,
            number,
        }),
        ..record(accepted.kind, &accepted.subject, RuleOutcome::Duplicate)
    }
}

/// The bytes the ledger's tables for terminal records hold, their indexes
/// with them: SQLite's pages in use (`dbstat`), PostgreSQL's relation sizes.
fn terminal_bytes(site: &Site) -> i64 {
    if backend::postgres_requested() {
        site.count(
            "SELECT (pg_total_relation_size('terminal_events') + pg_total_relation_size('terminal_repeats')
                     + pg_total_relation_size('receipts'))::bigint",
        )
    } else {
        site.count(
            "SELECT coalesce(sum(d.pgsize), 0) FROM dbstat AS d JOIN sqlite_schema AS s ON s.name = d.name
             WHERE s.tbl_name IN ('terminal_events', 'terminal_repeats', 'receipts')",
        )
    }
}

fn ingest_at(site: &Site, records: Vec<TerminalRecord>, at: UnixMs) -> TerminalBatchResponse {
    let batch = TerminalBatch {
        records,
        heartbeats: vec![],
    };
    site.db
        .call_blocking(move |conn| terminal::ingest(conn, &batch, at))
        .unwrap()
}

/// (repeats, last repeat's capture) the ledger holds for `key`.
fn repeats_of(site: &Site, key: &str) -> (i64, i64) {
    (
        site.count(&format!(
            "SELECT coalesce(max(repeats), 0) FROM terminal_repeats WHERE key = '{key}'"
        )),
        site.count(&format!(
            "SELECT coalesce(max(last_repeat_at), 0) FROM terminal_repeats WHERE key = '{key}'"
        )),
    )
}

/// What a reader of the ledger counts of terminal records: events, their
/// receipts, gate hops.
fn terminal_counts(site: &Site) -> (i64, i64, i64) {
    (
        site.count("SELECT count(*) FROM terminal_events"),
        site.count(&format!(
            "SELECT count(*) FROM receipts WHERE scope = '{}'",
            terminal::TERMINAL_SCOPE
        )),
        site.count("SELECT count(*) FROM hops WHERE kind = 'GATE_READ'"),
    )
}

/// A repeat is folded into the event it repeats at the cost of a count:
/// this bounds what a repeat may add to the ledger's terminal tables, far
/// under what one cost as an event of its own (its raw body, its receipt,
/// over 300 bytes). PostgreSQL's slack is an update's dead row versions
/// until a page is pruned, and the free-space and visibility maps.
const MAX_BYTES_PER_REPEAT: i64 = 32;

#[tokio::test]
async fn a_stream_of_repeats_folds_into_the_read_it_repeats_and_costs_the_ledger_nearly_nothing() {
    let site = Site::start_stocked().await;
    site.import("units", "epc,code,sku,state,bin\nEPC-KNOWN,,SKU-1,new,\n");
    let accepted = record(
        TerminalEventKind::TagRead,
        "EPC-KNOWN",
        RuleOutcome::Accepted,
    );
    let first = ingest_at(
        &site,
        vec![accepted.clone(), repeat_of(&accepted, 1)],
        now(),
    );
    assert!(first.results.iter().all(|r| r.status == 200 && !r.replayed));
    assert_eq!(first.results[0].hop_ids.len(), 1, "the read books its hop");
    assert!(
        first.results[1].hop_ids.is_empty(),
        "a repeat books nothing"
    );
    let one = terminal_bytes(&site);
    assert_eq!(terminal_counts(&site), (1, 1, 1));

    const REPEATS: u32 = 2_000;
    let repeats: Vec<TerminalRecord> = (2..=REPEATS + 1).map(|n| repeat_of(&accepted, n)).collect();
    for batch in repeats.chunks(MAX_RECORDS_PER_BATCH) {
        let answer = ingest_at(&site, batch.to_vec(), now());
        assert!(answer
            .results
            .iter()
            .all(|r| r.status == 200 && !r.replayed && r.hop_ids.is_empty()));
    }
    let many = terminal_bytes(&site);
    assert_eq!(
        terminal_counts(&site),
        (1, 1, 1),
        "no event, receipt or hop of their own"
    );
    let key = accepted.key.to_string();
    assert_eq!(
        repeats_of(&site, &key),
        (
            i64::from(REPEATS) + 1,
            repeats.last().unwrap().occurred_at.0
        ),
        "every repeat counted once on the read, with the last one's instant"
    );
    assert!(
        many - one <= i64::from(REPEATS) * MAX_BYTES_PER_REPEAT,
        "{REPEATS} more repeats grew the terminal tables from {one} to {many} bytes"
    );
}

#[tokio::test]
async fn a_resent_batch_of_repeats_changes_nothing() {
    let site = Site::start_stocked().await;
    site.import("units", "epc,code,sku,state,bin\nEPC-KNOWN,,SKU-1,new,\n");
    let accepted = record(
        TerminalEventKind::TagRead,
        "EPC-KNOWN",
        RuleOutcome::Accepted,
    );
    let batch: Vec<TerminalRecord> = std::iter::once(accepted.clone())
        .chain((1..=3).map(|n| repeat_of(&accepted, n)))
        .collect();
    let first = ingest_at(&site, batch.clone(), now());
    assert!(first.results.iter().all(|r| r.status == 200 && !r.replayed));
    let key = accepted.key.to_string();
    let held = repeats_of(&site, &key);
    assert_eq!(held, (3, batch[3].occurred_at.0));
    let counts = terminal_counts(&site);
    let bytes = terminal_bytes(&site);

    let again = ingest_at(&site, batch.clone(), now());
    for (a, b) in first.results.iter().zip(&again.results) {
        assert_eq!((b.status, &b.hop_ids), (a.status, &a.hop_ids));
        assert!(b.replayed, "the ledger held all of it already");
    }
    let late = ingest_at(&site, vec![batch[2].clone()], now());
    assert!(late.results[0].replayed, "an earlier repeat resent alone");
    assert_eq!(repeats_of(&site, &key), held, "counted once");
    assert_eq!(terminal_counts(&site), counts);
    if !backend::postgres_requested() {
        assert_eq!(terminal_bytes(&site), bytes, "not a page more");
    }
}

#[tokio::test]
async fn a_read_after_the_window_books_as_before_and_the_feed_and_view_say_what_the_ledger_holds() {
    let site = Site::start_stocked().await;
    site.import("units", "epc,code,sku,state,bin\nEPC-KNOWN,,SKU-1,new,\n");
    let admin = site
        .db
        .call_blocking(|conn| stockhop_site::view::admin::add(conn, "ops", now()))
        .unwrap();
    let accepted = record(
        TerminalEventKind::TagRead,
        "EPC-KNOWN",
        RuleOutcome::Accepted,
    );
    let repeats: Vec<TerminalRecord> = (1..=20).map(|n| repeat_of(&accepted, n)).collect();
    // The next read the listener accepts: 6 s later, past the 5 s window.
    let later_at = accepted.occurred_at.plus(Millis(6_000));
    let later = TerminalRecord {
        occurred_at: later_at,
        queued_at: later_at.plus(Millis(40)),
        ..record(
            TerminalEventKind::TagRead,
            "EPC-KNOWN",
            RuleOutcome::Accepted,
        )
    };
    let mut batch = vec![accepted.clone()];
    batch.extend(repeats.iter().cloned());
    batch.push(later.clone());
    batch.push(repeat_of(&later, 1));
    let answer = ingest_at(&site, batch, now().plus(Millis(7_000)));
    assert!(answer.results.iter().all(|r| r.status == 200));
    let booked: Vec<i64> = answer
        .results
        .iter()
        .flat_map(|r| r.hop_ids.clone())
        .collect();
    assert_eq!(
        booked.len(),
        2,
        "each accepted read books its hop, no repeat does"
    );
    assert_eq!(
        answer.results[21].hop_ids.len(),
        1,
        "the read after the window"
    );
    assert_eq!(terminal_counts(&site), (2, 2, 2));
    assert_eq!(repeats_of(&site, &accepted.key.to_string()).0, 20);
    assert_eq!(repeats_of(&site, &later.key.to_string()).0, 1);

    // The hop feed lists the two gate reads, under their reads' keys.
    let (status, page) = site.get("/v1/hops?limit=100", &admin).await;
    assert_eq!(status, 200, "{page}");
    let mut gate_keys: Vec<String> = page["hops"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|hop| hop["kind"] == "GATE_READ")
        .map(|hop| hop["key"].as_str().unwrap().to_owned())
        .collect();
    gate_keys.sort();
    let mut expected = vec![accepted.key.to_string(), later.key.to_string()];
    expected.sort();
    assert_eq!(gate_keys, expected);

    // The view: the portal was last seen at its newest record's queue
    // write, a folded repeat's.
    let (status, view) = site.get("/v1/site/status", &admin).await;
    assert_eq!(status, 200, "{view}");
    let portal = view["terminals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["device_id"] == "FX90-1")
        .unwrap_or_else(|| panic!("the portal on the view: {view}"));
    assert_eq!(
        portal["last_seen_at"],
        json!(repeat_of(&later, 1).queued_at.to_string())
    );
}

#[tokio::test]
async fn a_repeat_of_a_read_the_ledger_does_not_hold_is_kept_as_its_own_event() {
    let site = Site::start_stocked().await;
    let accepted = record(TerminalEventKind::TagRead, "EPC-1", RuleOutcome::Accepted);
    // Its read not here yet (set aside at the listener), or another
    // terminal's read of another tag: nothing to fold into.
    let orphan = repeat_of(&accepted, 1);
    let elsewhere = TerminalRecord {
        device_serial: "FX90-2".into(),
        ..repeat_of(&accepted, 2)
    };
    let first = ingest_at(&site, vec![orphan.clone()], now());
    assert_eq!(
        (first.results[0].status, first.results[0].replayed),
        (200, false)
    );
    ingest_at(&site, vec![accepted.clone(), elsewhere], now());
    assert_eq!(
        site.count("SELECT count(*) FROM terminal_events WHERE rule_outcome = 'duplicate'"),
        2,
        "kept as duplicates always were"
    );
    assert_eq!(repeats_of(&site, &accepted.key.to_string()), (0, 0));
    let again = ingest_at(&site, vec![orphan], now());
    assert!(again.results[0].replayed, "its receipt answers the resend");
    assert_eq!(repeats_of(&site, &accepted.key.to_string()), (0, 0));
    assert_eq!(terminal_counts(&site), (3, 3, 1), "the read books its hop");
}

#[tokio::test]
async fn a_gate_read_of_a_known_unit_records_an_observing_hop_and_replays_as_replayed() {
    let site = Site::start_stocked().await;
    site.import("units", "epc,code,sku,state,bin\nEPC-KNOWN,,SKU-1,new,\n");
    let mut hh = site.handheld("HH-1").await;
    let items = [hh.open("op-1"), hh.scan("EPC-KNOWN", "B-1")];
    site.sync_ok(&hh, &items).await;

    let batch = TerminalBatch {
        records: vec![
            record(
                TerminalEventKind::TagRead,
                "EPC-KNOWN",
                RuleOutcome::Accepted,
            ),
            record(
                TerminalEventKind::TagRead,
                "EPC-UNKNOWN",
                RuleOutcome::Accepted,
            ),
            record(
                TerminalEventKind::TagRead,
                "EPC-KNOWN",
                RuleOutcome::Duplicate,
            ),
            TerminalRecord {
                source: TerminalSource::Iclock,
                device_serial: "CQZ7224460246".into(),
                raw: "1\t2026-11-29 10:00:00\t0\t1\t\t0\t0".into(),
                ..record(TerminalEventKind::Attendance, "1", RuleOutcome::Accepted)
            },
        ],
        heartbeats: vec![TerminalHeartbeat {
            device_serial: "CQZ7224460246".into(),
            source: TerminalSource::Iclock,
            seen_at: now(),
        }],
    };
    let at = now();
    let ingest = |batch: TerminalBatch| {
        site.db
            .call_blocking(move |conn| terminal::ingest(conn, &batch, at))
            .unwrap()
    };
    let first = ingest(batch.clone());
    assert!(first.results.iter().all(|r| r.status == 200 && !r.replayed));
    assert_eq!(
        first.results[0].hop_ids.len(),
        1,
        "known unit: a GATE_READ hop"
    );
    assert!(first.results[1..].iter().all(|r| r.hop_ids.is_empty()));
    assert_eq!(
        site.count(
            "SELECT count(*) FROM hops WHERE kind = 'GATE_READ' AND source_mode = 'terminal'"
        ),
        1
    );
    assert_eq!(site.count("SELECT count(*) FROM terminal_events"), 4);
    assert_eq!(
        site.count("SELECT count(*) FROM terminal_events WHERE rule_outcome = 'duplicate'"),
        1
    );
    assert_eq!(
        site.count("SELECT version FROM units WHERE epc = 'EPC-KNOWN'"),
        2,
        "imported at 1, put away once; an observing hop moves nothing"
    );

    let again = ingest(batch.clone());
    for (a, b) in first.results.iter().zip(&again.results) {
        assert!(b.replayed);
        assert_eq!(a.hop_ids, b.hop_ids);
    }
    assert_eq!(site.count("SELECT count(*) FROM terminal_events"), 4);

    let mut changed = batch.records[0].clone();
    changed.subject = "EPC-OTHER".into();
    let reused = ingest(TerminalBatch {
        records: vec![changed],
        heartbeats: vec![],
    });
    assert_eq!(reused.results[0].status, 409);
    assert_eq!(
        reused.results[0].code.as_deref(),
        Some("IDEMPOTENCY_KEY_REUSED")
    );

    let seen = site
        .db
        .call_blocking(|conn| devices::last_seen(conn, "CQZ7224460246"))
        .unwrap()
        .unwrap();
    assert_eq!(seen.source, "iclock");
    assert!(site
        .db
        .call_blocking(|conn| devices::last_seen(conn, "FX90-1"))
        .unwrap()
        .is_some());
}

/// A Zebra reader's EPC in lower case names the unit imported (and
/// scanned by handhelds) in upper case.
#[tokio::test]
async fn a_gate_read_in_lower_case_names_the_unit_imported_in_upper_case() {
    let site = Site::start_stocked().await;
    site.import(
        "units",
        "epc,code,sku,state,bin\ne2806894000040017790e471,,SKU-1,in_stock,B-1\n",
    );
    assert_eq!(
        site.count("SELECT count(*) FROM units WHERE epc = 'E2806894000040017790E471'"),
        1,
        "the import keeps the handheld's spelling"
    );
    let batch = TerminalBatch {
        records: vec![record(
            TerminalEventKind::TagRead,
            "e2806894000040017790e471",
            RuleOutcome::Accepted,
        )],
        heartbeats: vec![],
    };
    let at = now();
    let answer = site
        .db
        .call_blocking(move |conn| terminal::ingest(conn, &batch, at))
        .unwrap();
    assert_eq!(answer.results[0].hop_ids.len(), 1, "{:?}", answer.results);
    assert_eq!(
        site.count(
            "SELECT count(*) FROM hops h JOIN units u ON u.unit_id = h.unit_id
             WHERE h.kind = 'GATE_READ' AND u.epc = 'E2806894000040017790E471'"
        ),
        1
    );
}

#[tokio::test]
async fn the_terminal_endpoint_takes_only_fresh_correctly_signed_batches() {
    let site = Site::start().await;
    let batch = TerminalBatch {
        records: vec![record(
            TerminalEventKind::Attendance,
            "7",
            RuleOutcome::Accepted,
        )],
        heartbeats: vec![],
    };
    let body = serde_json::to_vec(&batch).unwrap();
    let post = |timestamp: i64, signature: String, body: Vec<u8>| {
        site.client
            .post(format!("{}{TERMINAL_EVENTS_PATH}", site.base))
            .header(TIMESTAMP_HEADER, timestamp.to_string())
            .header(SIGNATURE_HEADER, signature)
            .body(body)
            .send()
    };
    let ts = now().0 / 1000;
    let secret = TERMINAL_SECRET.as_bytes();

    let ok = post(ts, terminal::sign(secret, ts, &body), body.clone())
        .await
        .unwrap();
    assert_eq!(ok.status(), 200);
    let answer: serde_json::Value = ok.json().await.unwrap();
    assert_eq!(answer["results"][0]["status"], 200);
    let again = post(ts, terminal::sign(secret, ts, &body), body.clone())
        .await
        .unwrap();
    let answer: serde_json::Value = again.json().await.unwrap();
    assert_eq!(answer["results"][0]["replayed"], true);

    let bad = post(ts, terminal::sign(b"wrong", ts, &body), body.clone())
        .await
        .unwrap();
    assert_eq!(bad.status(), 401);
    let old_ts = ts - 301;
    let old = post(old_ts, terminal::sign(secret, old_ts, &body), body.clone())
        .await
        .unwrap();
    assert_eq!(old.status(), 401);
    let unsigned = site
        .client
        .post(format!("{}{TERMINAL_EVENTS_PATH}", site.base))
        .body(body.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(unsigned.status(), 401);
    assert_eq!(site.count("SELECT count(*) FROM terminal_events"), 1);
}

#[tokio::test]
async fn without_a_secret_the_terminal_endpoint_is_not_there() {
    let dir = tempfile::tempdir().unwrap();
    let db = backend::open_db(dir.path());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let state = stockhop_site::AppState {
        db,
        www_dir: dir.path().join("www"),
        ledger: Default::default(),
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(stockhop_site::serve(listener, state, async {
        let _ = stopped.await;
    }));
    let ts = now().0 / 1000;
    let body = json!({"records": []}).to_string();
    let response = reqwest::Client::new()
        .post(format!("{base}{TERMINAL_EVENTS_PATH}"))
        .header(TIMESTAMP_HEADER, ts.to_string())
        .header(SIGNATURE_HEADER, terminal::sign(b"", ts, body.as_bytes()))
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
    stop.send(()).unwrap();
    task.await.unwrap().unwrap();
}

#[tokio::test]
async fn the_in_process_forwarder_path_runs_on_the_database_thread() {
    let site = Site::start().await;
    let batch = TerminalBatch {
        records: vec![record(
            TerminalEventKind::Attendance,
            "9",
            RuleOutcome::Stale,
        )],
        heartbeats: vec![],
    };
    let answer = terminal::ingest_into(&site.db, batch.clone(), now())
        .await
        .unwrap();
    assert_eq!(answer.results[0].status, 200);
    let again = terminal::ingest_into(&site.db, batch, now()).await.unwrap();
    assert!(again.results[0].replayed);
    let too_many = TerminalBatch {
        records: (0..51)
            .map(|_| record(TerminalEventKind::Attendance, "9", RuleOutcome::Accepted))
            .collect(),
        heartbeats: vec![],
    };
    let refused = terminal::ingest_into(&site.db, too_many, now())
        .await
        .unwrap_err();
    assert!(!refused.is_retryable());
    assert_eq!(
        site.count("SELECT count(*) FROM terminal_events WHERE rule_outcome = 'stale'"),
        1
    );
}

#[tokio::test]
async fn a_terminal_that_is_not_commissioned_records_its_reads_as_simulation() {
    let site = Site::start_stocked().await;
    site.add_device_as("GATE-T", devices::Profile::Fxr90, false);
    let read = |serial: &str| TerminalRecord {
        device_serial: serial.into(),
        ..record(TerminalEventKind::TagRead, "EPC-1", RuleOutcome::Accepted)
    };
    let at = now();
    let ingest = |batch: TerminalBatch| {
        site.db
            .call_blocking(move |conn| terminal::ingest(conn, &batch, at))
            .unwrap()
    };
    let training = ingest(TerminalBatch {
        records: vec![read("GATE-T")],
        heartbeats: vec![],
    });
    assert_eq!(training.results[0].status, 200);
    let hop = training.results[0].hop_ids[0];
    assert_eq!(
        site.count(&format!(
            "SELECT count(*) FROM hops WHERE hop_id = {hop} AND source_mode = 'sim' AND kind = 'GATE_READ'"
        )),
        1,
        "recorded, as simulation"
    );

    site.db
        .call_blocking(|conn| devices::commission(conn, "GATE-T"))
        .unwrap();
    let live = ingest(TerminalBatch {
        records: vec![read("GATE-T"), read("FX90-UNENROLLED")],
        heartbeats: vec![],
    });
    for result in &live.results {
        let hop = result.hop_ids[0];
        assert_eq!(
            site.count(&format!(
                "SELECT count(*) FROM hops WHERE hop_id = {hop} AND source_mode = 'terminal'"
            )),
            1,
            "a commissioned gate, and one the site has no device for, post as terminals"
        );
    }
    assert_eq!(
        site.count("SELECT version FROM units WHERE epc = 'EPC-1'"),
        1,
        "a gate read observes; it moves nothing either way"
    );
}
