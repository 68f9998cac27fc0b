//! A handheld's rescue file imported at the site (`POST /v1/admin/rescue`
//! and `stockhop-site rescue import`): checked whole, then applied through
//! sync's code exactly once by key, in `client_seq` order per session.

use std::process::Command;
use std::sync::atomic::{AtomicI64, Ordering};

use proptest::prelude::*;
use serde_json::{json, Value};
use stockhop::rescue::{self, token_digest, Header};
use stockhop::time::UnixMs;
use stockhop::wire::{ItemOutcome, SyncItem};
use stockhop_site::ledger::{self, sync};

use crate::backend;
use crate::ledger_common::{now, Handheld, Site};

fn admin_token(site: &Site) -> String {
    site.db
        .call_blocking(|conn| stockhop_site::view::admin::add(conn, "ops", now()))
        .unwrap()
}

/// The file `hh`'s worker would write for `items`, signed with its token.
fn file_of(hh: &Handheld, items: &[Value]) -> Vec<u8> {
    signed_with(&hh.device_id, &hh.token, items)
}

fn signed_with(device_id: &str, token: &str, items: &[Value]) -> Vec<u8> {
    let items: Vec<SyncItem> = items
        .iter()
        .map(|item| serde_json::from_value(item.clone()).unwrap())
        .collect();
    let header = Header {
        device_id: device_id.into(),
        build: "test-build".into(),
        exported_at: now(),
    };
    rescue::write(&header, &items, &token_digest(token))
}

async fn import(site: &Site, admin: &str, bytes: Vec<u8>) -> (u16, Value) {
    site.post_raw("/v1/admin/rescue", Some(admin), bytes).await
}

/// Imports a file that must be taken; returns the answer.
async fn imported(site: &Site, admin: &str, bytes: Vec<u8>) -> Value {
    let (status, answer) = import(site, admin, bytes).await;
    assert_eq!(status, 200, "{answer}");
    answer
}

fn counts(answer: &Value) -> [u64; 4] {
    ["items", "applied", "replayed", "rejected"].map(|field| answer[field].as_u64().unwrap())
}

/// A session of an open and `scans` put-aways into B-1 of units
/// EPC-`first`, EPC-`first + 1`, …, each captured a millisecond or more
/// after the one before, as on a handheld (the import orders sessions by
/// when their first item was queued).
fn capture(hh: &mut Handheld, first: usize, scans: usize) -> Vec<Value> {
    let open = json!({"operator_id": "op-1", "mode": "put_away", "context": {}});
    let mut items = vec![hh.item_at("open_session", open, tick())];
    items.extend((first..first + scans).map(|i| {
        let body = json!({"mode": "put_away", "epc": format!("EPC-{i}"), "bin": "B-1"});
        hh.item_at("scan", body, tick())
    }));
    items
}

fn close(hh: &mut Handheld) -> Value {
    hh.item_at("close_session", json!({}), tick())
}

/// The wall clock, but never the same instant twice.
fn tick() -> UnixMs {
    static LAST: AtomicI64 = AtomicI64::new(0);
    let now = now().0;
    let prev = LAST.fetch_max(now, Ordering::SeqCst);
    if prev >= now {
        UnixMs(LAST.fetch_add(1, Ordering::SeqCst) + 1)
    } else {
        UnixMs(now)
    }
}

/// The session's hops as the ledger holds them, in applied order: each
/// hop's client_seq.
fn applied_order(site: &Site, session: &str) -> Vec<i64> {
    let session = session.to_owned();
    site.db
        .call_blocking(move |conn| {
            conn.prepare("SELECT client_seq FROM hops WHERE session_id = ?1 ORDER BY hop_id")?
                .query_map([session.as_str()], |row| row.get(0))?
                .collect::<Result<Vec<i64>, _>>()
        })
        .unwrap()
}

#[tokio::test]
async fn a_file_with_items_the_device_already_delivered_applies_the_rest_once_counting_replays() {
    let site = Site::start_stocked().await;
    let admin = admin_token(&site);
    let mut hh = site.handheld("HH-1").await;
    let items = capture(&mut hh, 0, 4);
    site.sync_applied(&hh, &items[..3]).await;

    let answer = imported(&site, &admin, file_of(&hh, &items)).await;
    assert_eq!(counts(&answer), [5, 2, 3, 0], "{answer}");
    assert_eq!(answer["buffered"], 0);
    assert_eq!(site.count("SELECT count(*) FROM hops"), 4);
    assert_eq!(
        applied_order(&site, &hh.session.to_string()),
        vec![2, 3, 4, 5]
    );
    // The device, reconnecting, finds every item answered: nothing twice.
    let results = site.sync_ok(&hh, &items).await;
    assert!(results
        .iter()
        .all(|r| r["outcome"] == "applied" && r["replayed"] == true));
    assert_eq!(site.count("SELECT count(*) FROM hops"), 4);
    site.stop().await;
}

#[tokio::test]
async fn a_shuffled_file_applies_in_client_seq_order_per_session_oldest_session_first() {
    let site = Site::start_stocked().await;
    let admin = admin_token(&site);
    let mut hh = site.handheld("HH-1").await;
    let mut first = capture(&mut hh, 0, 3);
    first.push(close(&mut hh));
    let first_session = hh.session.to_string();
    hh.new_session();
    let second = capture(&mut hh, 10, 2);
    let second_session = hh.session.to_string();
    // The second session first, each backwards: the order a careless
    // export could write.
    let shuffled: Vec<Value> = second
        .iter()
        .rev()
        .chain(first.iter().rev())
        .cloned()
        .collect();

    let answer = imported(&site, &admin, file_of(&hh, &shuffled)).await;
    assert_eq!(counts(&answer), [8, 8, 0, 0], "{answer}");
    assert_eq!(applied_order(&site, &first_session), vec![2, 3, 4]);
    assert_eq!(applied_order(&site, &second_session), vec![2, 3]);
    site.stop().await;
}

#[tokio::test]
async fn importing_the_same_file_again_changes_nothing_and_answers_replays() {
    let site = Site::start_stocked().await;
    let admin = admin_token(&site);
    let mut hh = site.handheld("HH-1").await;
    let items = capture(&mut hh, 0, 3);
    let file = file_of(&hh, &items);

    assert_eq!(
        counts(&imported(&site, &admin, file.clone()).await),
        [4, 4, 0, 0]
    );
    let hops = site.count("SELECT count(*) FROM hops");
    let versions = site.count("SELECT CAST(sum(version) AS BIGINT) FROM units");
    assert_eq!(counts(&imported(&site, &admin, file).await), [4, 0, 4, 0]);
    assert_eq!(site.count("SELECT count(*) FROM hops"), hops);
    assert_eq!(
        site.count("SELECT CAST(sum(version) AS BIGINT) FROM units"),
        versions
    );
    assert_eq!(
        site.count("SELECT count(*) FROM rescues"),
        2,
        "each import is recorded"
    );
    site.stop().await;
}

#[tokio::test]
async fn refusals_are_recorded_as_sync_records_them_and_a_gap_leaves_items_buffered() {
    let site = Site::start_stocked().await;
    let admin = admin_token(&site);
    let mut hh = site.handheld("HH-1").await;
    let mut items = capture(&mut hh, 0, 2);
    // A unit the site does not know: refused, as sync refuses it.
    items.push(hh.scan("EPC-NONE", "B-1"));
    items.push(close(&mut hh));
    let answer = imported(&site, &admin, file_of(&hh, &items)).await;
    assert_eq!(counts(&answer), [5, 4, 0, 1], "{answer}");

    // Items behind a client_seq the file does not hold wait for it.
    let mut later = Handheld::new("HH-1", hh.token.clone());
    let gapped = capture(&mut later, 10, 3);
    let answer = imported(&site, &admin, file_of(&later, &gapped[1..])).await;
    assert_eq!(counts(&answer), [3, 0, 0, 3], "{answer}");
    assert_eq!(answer["buffered"], 3);
    // The device's own open fills the gap: they apply behind it, once.
    site.sync_applied(&later, &gapped[..1]).await;
    assert_eq!(
        applied_order(&site, &later.session.to_string()),
        vec![2, 3, 4]
    );
    site.stop().await;
}

/// Asserts a refusal that imported nothing.
async fn refused_whole(site: &Site, admin: &str, bytes: Vec<u8>, says: &str) {
    let (status, answer) = import(site, admin, bytes).await;
    assert_eq!(status, 422, "{answer}");
    assert_eq!(answer["code"], "RESCUE_UNVERIFIED");
    let message = answer["message"].as_str().unwrap();
    assert!(message.contains(says), "{message}");
    assert!(message.contains("nothing imported"), "{message}");
    assert_eq!(site.count("SELECT count(*) FROM receipts"), 0);
    assert_eq!(site.count("SELECT count(*) FROM hops"), 0);
    assert_eq!(site.count("SELECT count(*) FROM rescues"), 0);
}

#[tokio::test]
async fn tampered_foreign_truncated_and_non_files_are_refused_whole_with_nothing_applied() {
    let site = Site::start_stocked().await;
    let admin = admin_token(&site);
    let mut hh = site.handheld("HH-1").await;
    let other = site.add_device("HH-2", true);
    let items = capture(&mut hh, 0, 3);
    let file = file_of(&hh, &items);

    // An item changed, with the trailer's SHA-256 made to match again:
    // only the HMAC can tell.
    let text = String::from_utf8(file.clone()).unwrap();
    let body_end = text.trim_end().rfind('\n').unwrap() + 1;
    let changed = text[..body_end].replace("\"bin\":\"B-1\"", "\"bin\":\"B-2\"");
    let trailer: Value = serde_json::from_str(&text[body_end..]).unwrap();
    let sha = {
        use sha2::Digest;
        hex::encode(sha2::Sha256::digest(changed.as_bytes()))
    };
    let tampered = format!(
        "{changed}{}\n",
        json!({"sha256": sha, "hmac": trailer["hmac"]})
    );
    refused_whole(
        &site,
        &admin,
        tampered.into_bytes(),
        "signature does not hold",
    )
    .await;

    // A byte flipped anywhere.
    let mut flipped = file.clone();
    flipped[40] ^= 0x01;
    let (status, _) = import(&site, &admin, flipped).await;
    assert_eq!(status, 422);

    // Another device's token signed it, in HH-1's name.
    let foreign = signed_with("HH-1", &other, &items);
    refused_whole(&site, &admin, foreign, "signature does not hold").await;

    // A device the site does not know.
    let unknown = signed_with("HH-404", &hh.token, &items);
    refused_whole(&site, &admin, unknown, "does not know").await;

    // Cut short, at a line's end and mid-line.
    let cut = text.match_indices('\n').nth(2).unwrap().0 + 1;
    refused_whole(&site, &admin, file[..cut].to_vec(), "not a rescue file").await;
    refused_whole(&site, &admin, file[..file.len() - 3].to_vec(), "cut short").await;

    // Not a file at all: a sync request, plain text, nothing.
    let request = json!({"device_id": "HH-1", "sent_at": now().to_string(), "items": items});
    refused_whole(
        &site,
        &admin,
        request.to_string().into_bytes(),
        "not a rescue file",
    )
    .await;
    refused_whole(&site, &admin, b"hello\n".to_vec(), "not a rescue file").await;
    refused_whole(&site, &admin, Vec::new(), "not a rescue file").await;
    site.stop().await;
}

#[tokio::test]
async fn an_import_takes_an_admins_token_not_a_devices() {
    let site = Site::start_stocked().await;
    let mut hh = site.handheld("HH-1").await;
    let items = capture(&mut hh, 0, 1);
    let (status, _) = import(&site, &hh.token, file_of(&hh, &items)).await;
    assert_eq!(status, 403);
    let (status, _) = site
        .post_raw("/v1/admin/rescue", None, file_of(&hh, &items))
        .await;
    assert_eq!(status, 401);
    assert_eq!(site.count("SELECT count(*) FROM receipts"), 0);
    site.stop().await;
}

#[tokio::test]
async fn a_revoked_devices_file_signed_with_its_last_token_is_accepted() {
    let site = Site::start_stocked().await;
    let admin = admin_token(&site);
    let mut hh = site.handheld("HH-1").await;
    let items = capture(&mut hh, 0, 2);
    let beat = json!({"sent_at": now().to_string(), "queue_depth": 3, "app_version": "x"});
    let (status, _) = site
        .post_raw(
            "/v1/devices/HH-1/heartbeat",
            Some(&hh.token),
            beat.to_string().into_bytes(),
        )
        .await;
    assert_eq!(status, 200);
    let (status, _) = site
        .post_raw("/v1/admin/devices/HH-1/revoke", Some(&admin), Vec::new())
        .await;
    assert_eq!(status, 204);
    // Its token syncs no more, and the device list says it left items.
    assert_eq!(site.sync(&hh, &items).await.0, 401);
    let (_, devices) = site.get("/v1/admin/devices", &admin).await;
    let listed = devices
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["device_id"] == "HH-1")
        .unwrap();
    assert_eq!(listed["queued_when_revoked"], 3, "{listed}");

    // The site's view says so too, until its file comes in.
    let (_, status) = site.get("/v1/site/status", &admin).await;
    assert_eq!(status["stranded"][0]["device_id"], "HH-1", "{status}");
    assert_eq!(status["stranded"][0]["queued"], 3);
    assert!(status["stranded"][0]["rescued_at"].is_null());

    let answer = imported(&site, &admin, file_of(&hh, &items)).await;
    assert_eq!(counts(&answer), [3, 3, 0, 0], "{answer}");
    assert_eq!(site.count("SELECT count(*) FROM hops"), 2);
    let (_, status) = site.get("/v1/site/status", &admin).await;
    assert!(status["stranded"][0]["rescued_at"].is_string(), "{status}");
    let rescue = &status["rescues"][0];
    assert_eq!(
        (
            &rescue["device_id"],
            &rescue["applied"],
            &rescue["replayed"],
            &rescue["rejected"]
        ),
        (&json!("HH-1"), &json!(3), &json!(0), &json!(0))
    );
    site.stop().await;
}

#[tokio::test]
async fn the_command_imports_a_file_and_says_what_it_did_in_words() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let site = Site::start_on(data.clone()).await;
    site.stock();
    let mut hh = site.handheld("HH-1").await;
    let items = capture(&mut hh, 0, 2);
    site.sync_applied(&hh, &items[..1]).await;
    let file = dir.path().join("stockhop-rescue-HH-1.jsonl");
    std::fs::write(&file, file_of(&hh, &items)).unwrap();
    let rescue = |path: &std::path::Path| {
        Command::new(env!("CARGO_BIN_EXE_stockhop-site"))
            .args(["rescue", "import"])
            .arg(path)
            .arg("--data")
            .arg(&data)
            .args(backend::database_args(&data))
            .output()
            .unwrap()
    };
    let out = rescue(&file);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        said.contains("HH-1: 3 items, 2 applied, 1 already at the site (replayed), 0 refused"),
        "{said}"
    );

    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, b"{}\n").unwrap();
    let out = rescue(&bad);
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("not a rescue file, nothing imported"),
        "{said}"
    );
    site.stop().await;
}

/// The items the handheld of the property captures: a session of an open,
/// three scans and a close, and one of an open and two scans.
const CAPTURED: usize = 8;

/// One step of a handheld and its site. The device drains in order from
/// the first item it has no answer for (its frontier), and an answer may
/// be lost on the way, so it sends those items again; an export writes
/// every item from the frontier up to what it has captured so far, in any
/// order; any file written so far may be imported, once or again.
#[derive(Debug, Clone)]
enum Step {
    Sync { take: usize, answer_lost: bool },
    Export { captured: usize, order: Vec<usize> },
    Import(prop::sample::Index),
}

fn steps(items: usize) -> impl Strategy<Value = Vec<Step>> {
    let all: Vec<usize> = (0..items).collect();
    let step = prop_oneof![
        (1..=items, any::<bool>()).prop_map(|(take, answer_lost)| Step::Sync { take, answer_lost }),
        (0..=items, Just(all).prop_shuffle())
            .prop_map(|(captured, order)| Step::Export { captured, order }),
        any::<prop::sample::Index>().prop_map(Step::Import),
    ];
    prop::collection::vec(step, 1..8)
}

/// Runs `steps` over a fresh ledger, then the device's full drain, and
/// checks that every item applied exactly once.
fn run_steps(steps: &[Step], seq: usize) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let db = backend::open_db(&dir.path().join(format!("data-{seq}")));
    let token = db
        .call_blocking(|conn| {
            ledger::devices::add(
                conn,
                "HH-1",
                ledger::devices::Profile::Mc3390xr,
                true,
                now(),
            )
        })
        .unwrap();
    let bins: String = (1..=2).map(|i| format!("B-{i},Z-1,L-1\n")).collect();
    let units: String = (0..6).map(|i| format!("EPC-{i},,SKU-1,new,\n")).collect();
    for (kind, text) in [
        ("bins", format!("bin,zone,location\n{bins}")),
        ("units", format!("epc,code,sku,state,bin\n{units}")),
    ] {
        use clap::ValueEnum;
        let kind = ledger::import::Kind::from_str(kind, false).unwrap();
        let path = dir.path().join(format!("{kind:?}.csv"));
        std::fs::write(&path, text).unwrap();
        db.call_blocking(|conn| ledger::import::import(conn, kind, &path, now()))
            .unwrap();
    }
    let mut hh = Handheld::new("HH-1", token);
    let mut items = capture(&mut hh, 0, 3);
    items.push(close(&mut hh));
    hh.new_session();
    items.extend(capture(&mut hh, 3, 2));
    assert_eq!(items.len(), CAPTURED);
    let device = db
        .call_blocking(|conn| ledger::devices::find(conn, "HH-1"))
        .unwrap();
    let send = |chosen: &[usize]| {
        let incoming: Vec<_> = chosen
            .iter()
            .map(|&i| sync::Incoming::from_value(&items[i]).unwrap())
            .collect();
        let held = vec![false; incoming.len()];
        db.call_blocking(|conn| {
            let ran = sync::run_parked(conn, &device, now(), &incoming, &held, now())?;
            let mut parked = ran.parked;
            while !parked.is_empty() {
                parked = sync::drain_parked(conn, &device, &parked, now())?;
            }
            Ok::<_, ledger::LedgerError>(ran.results)
        })
        .unwrap()
    };
    let mut frontier = 0;
    let mut files: Vec<Vec<u8>> = Vec::new();
    for step in steps {
        match step {
            Step::Sync { take, answer_lost } => {
                let upto = (frontier + take).min(items.len());
                send(&(frontier..upto).collect::<Vec<_>>());
                if !answer_lost {
                    frontier = upto;
                }
            }
            Step::Export { captured, order } => {
                let mut chosen: Vec<usize> = (frontier..(*captured).max(frontier)).collect();
                chosen.sort_by_key(|i| order.iter().position(|o| o == i));
                let picked: Vec<Value> = chosen.iter().map(|&i| items[i].clone()).collect();
                files.push(file_of(&hh, &picked));
            }
            Step::Import(which) => {
                if files.is_empty() {
                    continue;
                }
                let bytes = files[which.index(files.len())].clone();
                let counts = db
                    .call_blocking(|conn| ledger::rescue::import(conn, &bytes, now()))
                    .unwrap()
                    .counts;
                prop_assert_eq!(
                    counts.items,
                    counts.applied + counts.rejected + counts.replayed
                );
                prop_assert_eq!(counts.rejected, 0, "{:?}", counts);
            }
        }
    }
    // The device reconnects and drains everything it holds.
    let all: Vec<usize> = (0..items.len()).collect();
    let results = send(&all);
    for result in &results {
        prop_assert_eq!(result.outcome, Some(ItemOutcome::Applied), "{:?}", result);
    }
    let count = |sql: &str| -> i64 {
        db.call_blocking(|conn| conn.query_row(sql, [], |row| row.get(0)))
            .unwrap()
    };
    // Five scans of five units, each one hop.
    prop_assert_eq!(count("SELECT count(*) FROM hops"), 5);
    prop_assert_eq!(count("SELECT count(DISTINCT key) FROM hops"), 5);
    prop_assert_eq!(count("SELECT count(*) FROM units WHERE bin = 'B-1'"), 5);
    prop_assert_eq!(
        count("SELECT count(*) FROM receipts WHERE state <> 'final'"),
        0
    );
    Ok(())
}

proptest! {
    // Each case is a fresh ledger: a few dozen cover the shapes (parts,
    // repeats, gaps, both sessions) without a long suite.
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn any_interleaving_of_device_sync_and_file_import_applies_each_item_exactly_once(
        steps in steps(CAPTURED)
    ) {
        static CASE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let seq = CASE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        run_steps(&steps, seq)?;
    }
}
