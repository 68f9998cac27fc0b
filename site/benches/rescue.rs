//! A rescue file's import against sync on the same machine: 10,000 scans
//! (ten sessions of an open, 999 put-aways and a close) applied to a fresh
//! SQLite ledger (WAL, synchronous=FULL) once as the device's own sync
//! requests of 50 (`ledger::sync`, as the handler runs them, without HTTP)
//! and once as one rescue file (`ledger::rescue::import`, as the command
//! runs it). Prints the file's size, the time to write and to read and
//! verify it, and each path's items a second; asserts nothing.
//!
//! `cargo bench -p stockhop-site --profile site --bench rescue`
//! (`STOCKHOP_BENCH_QUICK=1`: 1,000 scans, sessions of 100)

use std::time::Instant;

use stockhop::key::IdempotencyKey;
use stockhop::rescue::{self, Header};
use stockhop::time::UnixMs;
use stockhop::wire::{Command, SyncItem, MAX_ITEMS_PER_REQUEST};
use stockhop_site::ledger::{self, devices::Profile, import, sync};
use stockhop_site::store::db::Db;

mod support;

/// Scans in the run: the figure (a tenth in the quick mode).
fn scans() -> usize {
    support::scaled(10_000, 1_000)
}

/// Scans a session: a shift's worth of put-aways before the operator
/// closes it (a tenth in the quick mode).
fn scans_a_session() -> usize {
    support::scaled(1_000, 100)
}

fn fresh(dir: &std::path::Path) -> (Db, String) {
    let db = stockhop_site::site::open_or_make(dir, None).unwrap();
    let units: String = (0..scans())
        .map(|i| format!("EPC-{i},,SKU-1,new,\n"))
        .collect();
    for (kind, name, text) in [
        (
            import::Kind::Bins,
            "bins.csv",
            "bin,zone,location\nB-1,Z-1,L-1\n".to_owned(),
        ),
        (
            import::Kind::Units,
            "units.csv",
            format!("epc,code,sku,state,bin\n{units}"),
        ),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        db.call_blocking(|conn| import::import(conn, kind, &path, ledger::wall_clock()))
            .unwrap();
    }
    let token = db
        .call_blocking(|conn| {
            ledger::devices::add(conn, "HH-1", Profile::Mc3390xr, true, ledger::wall_clock())
        })
        .unwrap();
    (db, token)
}

fn items(at: UnixMs) -> Vec<SyncItem> {
    let mut items = Vec::new();
    for (s, epcs) in (0..scans())
        .collect::<Vec<_>>()
        .chunks(scans_a_session())
        .enumerate()
    {
        let session = *IdempotencyKey::mint().unwrap().as_uuid();
        let mut seq = 0;
        let mut item = |command, body| {
            seq += 1;
            let when = UnixMs(at.0 + (s * 10_000 + seq) as i64);
            SyncItem {
                key: IdempotencyKey::mint().unwrap(),
                session_id: session,
                client_seq: seq as u64,
                command,
                occurred_at: when,
                queued_at: when,
                body,
            }
        };
        items.push(item(
            Command::OpenSession,
            serde_json::json!({"operator_id": "op-1", "mode": "put_away", "context": {}}),
        ));
        for i in epcs {
            items.push(item(
                Command::Scan,
                serde_json::json!({"mode": "put_away", "epc": format!("EPC-{i}"), "bin": "B-1"}),
            ));
        }
        items.push(item(Command::CloseSession, serde_json::json!({})));
    }
    items
}

fn main() {
    support::announce("rescue");
    let at = UnixMs(ledger::wall_clock().0 - 3_600_000);
    let items = items(at);

    let dir = tempfile::tempdir().unwrap();
    let (db, token) = fresh(dir.path());
    let device = db
        .call_blocking(|conn| ledger::devices::find(conn, "HH-1"))
        .unwrap();
    let started = Instant::now();
    for chunk in items.chunks(MAX_ITEMS_PER_REQUEST) {
        let incoming: Vec<_> = chunk
            .iter()
            .map(|item| sync::Incoming::from_value(&serde_json::to_value(item).unwrap()).unwrap())
            .collect();
        let held = vec![false; incoming.len()];
        db.call_blocking(|conn| {
            let now = ledger::wall_clock();
            sync::run(conn, &device, now, &incoming, &held, now)
        })
        .unwrap();
    }
    let sync_s = started.elapsed().as_secs_f64();

    let header = Header {
        device_id: "HH-1".into(),
        build: "bench".into(),
        exported_at: ledger::wall_clock(),
    };
    let started = Instant::now();
    let file = rescue::write(&header, &items, &rescue::token_digest(&token));
    let write_ms = started.elapsed().as_secs_f64() * 1e3;
    let started = Instant::now();
    let read = rescue::read(&file).unwrap();
    assert!(rescue::verify(&read, &rescue::token_digest(&token)));
    let read_ms = started.elapsed().as_secs_f64() * 1e3;

    let dir = tempfile::tempdir().unwrap();
    let (db, token) = fresh(dir.path());
    // The same items, signed with this ledger's token for the device.
    let file = rescue::write(&header, &items, &rescue::token_digest(&token));
    let started = Instant::now();
    let counts = db
        .call_blocking(|conn| ledger::rescue::import(conn, &file, ledger::wall_clock()))
        .unwrap()
        .counts;
    let import_s = started.elapsed().as_secs_f64();
    assert_eq!(counts.applied as usize, items.len(), "{counts:?}");
    let again = Instant::now();
    let counts = db
        .call_blocking(|conn| ledger::rescue::import(conn, &file, ledger::wall_clock()))
        .unwrap()
        .counts;
    let again_s = again.elapsed().as_secs_f64();
    assert_eq!(counts.replayed as usize, items.len(), "{counts:?}");

    let n = items.len() as f64;
    println!(
        "rescue file: {} items, {} bytes ({:.0} B an item); written in {write_ms:.1} ms, read and verified in {read_ms:.1} ms",
        items.len(),
        file.len(),
        file.len() as f64 / n
    );
    println!();
    println!(
        "| {:<44} | {:>9} | {:>9} |",
        "path (SQLite WAL, synchronous=FULL)", "seconds", "items/s"
    );
    println!("|{:-<46}|{:->11}|{:->11}|", "", "", "");
    for (path, seconds) in [
        ("baseline: the device's sync, requests of 50", sync_s),
        ("rescue import", import_s),
        ("rescue import again (every item replayed)", again_s),
    ] {
        println!("| {path:<44} | {seconds:>9.2} | {:>9.0} |", n / seconds);
    }
}
