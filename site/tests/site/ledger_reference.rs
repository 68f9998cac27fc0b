//! Reference data: the CSV importer and the supervisor's commands, run as
//! the built binary against a real SQLite file, and the handheld's read
//! side (`GET /v1/reference` pages and changes, one unit, GRN, manifest or
//! count) over real HTTP on loopback.

use crate::backend;
use crate::ledger_common;

use std::path::Path;
use std::process::{Command, Output};

use ledger_common::Site;
use serde_json::{json, Value};
use stockhop_site::ledger::devices::Profile;

fn site_command(args: &[&str], data: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_stockhop-site"))
        .args(args)
        .arg("--data")
        .arg(data)
        .args(backend::database_args(data))
        .env("RUST_LOG", "warn")
        .output()
        .unwrap()
}

/// Writes `text` to `dir/name` and imports it as `kind` with the binary.
fn import(dir: &Path, data: &Path, kind: &str, name: &str, text: &str) -> (bool, String) {
    let file = dir.join(name);
    std::fs::write(&file, text).unwrap();
    let out = site_command(&["import", kind, file.to_str().unwrap()], data);
    assert!(out.stdout.is_empty(), "import prints nothing on stdout");
    (
        out.status.success(),
        String::from_utf8(out.stderr).unwrap().trim().to_owned(),
    )
}

fn scalar(data: &Path, sql: &str) -> i64 {
    let db = backend::open_db(data);
    db.call_blocking(|conn| conn.query_row(sql, [], |row| row.get(0)))
        .unwrap()
}

const BINS: &str = "bin,zone,location\nA-1,Z-A,L-1\nA-2,Z-A,L-1\n";
const UNITS: &str = "epc,code,sku,state,bin\nU-1,C-1,SKU-1,in_stock,A-1\nU-2,,SKU-1,new,\n";

#[test]
fn a_good_file_imports_and_importing_it_again_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let data = backend::new_site(dir.path());
    let (ok, stderr) = import(dir.path(), &data, "bins", "bins.csv", BINS);
    assert!(ok, "{stderr}");
    assert!(stderr.ends_with("bins.csv: 2 rows, 2 changed"), "{stderr}");
    let (ok, stderr) = import(dir.path(), &data, "units", "units.csv", UNITS);
    assert!(ok, "{stderr}");
    let clock = "SELECT seq FROM reference_clock";
    let before = scalar(&data, clock);

    for (kind, text) in [("bins", BINS), ("units", UNITS)] {
        let (ok, stderr) = import(dir.path(), &data, kind, "again.csv", text);
        assert!(ok, "{stderr}");
        assert!(stderr.ends_with("2 rows, 0 changed"), "{stderr}");
    }
    assert_eq!(
        scalar(&data, clock),
        before,
        "no row changed, so none is sent again"
    );
    assert_eq!(
        scalar(&data, "SELECT CAST(sum(version) AS BIGINT) FROM units"),
        2
    );

    // Columns in another order, with spaces around values and a
    // spreadsheet's byte-order mark, read the same.
    let reordered = "\u{feff}sku, state ,epc,bin,code\nSKU-1, in_stock ,U-1,A-1,C-1\n";
    let (ok, stderr) = import(dir.path(), &data, "units", "reordered.csv", reordered);
    assert!(ok, "{stderr}");
    assert!(stderr.ends_with("1 row, 0 changed"), "{stderr}");
}

#[test]
fn an_imported_epc_is_spelled_as_the_handheld_scans_it() {
    let dir = tempfile::tempdir().unwrap();
    let data = backend::new_site(dir.path());
    import(dir.path(), &data, "bins", "bins.csv", BINS);
    // A tag's EPC in lower case, as many exports write it; the handheld
    // sends a read of it in upper case.
    let units = "epc,code,sku,state,bin\n3034257bf400000000000001,,SKU-1,in_stock,A-1\n";
    let (ok, stderr) = import(dir.path(), &data, "units", "units.csv", units);
    assert!(ok, "{stderr}");
    assert_eq!(
        scalar(
            &data,
            "SELECT count(*) FROM units WHERE epc = '3034257BF400000000000001'"
        ),
        1
    );
    // The same file again is the same unit, not a second spelling of it.
    let (ok, stderr) = import(dir.path(), &data, "units", "again.csv", units);
    assert!(ok, "{stderr}");
    assert!(stderr.ends_with("1 row, 0 changed"), "{stderr}");
    assert_eq!(scalar(&data, "SELECT count(*) FROM units"), 1);
}

#[test]
fn a_file_with_more_bad_rows_than_are_listed_says_the_import_stopped_there() {
    let dir = tempfile::tempdir().unwrap();
    let data = backend::new_site(dir.path());
    // 150 units in a bin the site does not know.
    let units: String = std::iter::once("epc,code,sku,state,bin\n".to_owned())
        .chain((0..150).map(|n| format!("U-{n},,SKU-1,in_stock,NOWHERE\n")))
        .collect();
    let (ok, stderr) = import(dir.path(), &data, "units", "units.csv", &units);
    assert!(!ok);
    let lines: Vec<&str> = stderr.lines().collect();
    let listed = lines.iter().filter(|l| l.contains("unknown bin")).count();
    assert_eq!(
        listed,
        stockhop_site::ledger::import::MAX_IMPORT_ERRORS,
        "{stderr}"
    );
    assert!(
        lines.iter().any(|l| l
            .ends_with("stopped at the first 100 errors; the rest of the file was not checked")),
        "{stderr}"
    );
    assert_eq!(scalar(&data, "SELECT count(*) FROM units"), 0);
}

#[test]
fn a_row_that_changes_a_unit_bumps_its_version_and_only_that_units() {
    let dir = tempfile::tempdir().unwrap();
    let data = backend::new_site(dir.path());
    import(dir.path(), &data, "bins", "bins.csv", BINS);
    import(dir.path(), &data, "units", "units.csv", UNITS);
    let moved = "epc,code,sku,state,bin\nU-1,C-1,SKU-1,in_stock,A-2\nU-2,,SKU-1,new,\n";
    let (ok, stderr) = import(dir.path(), &data, "units", "moved.csv", moved);
    assert!(ok, "{stderr}");
    assert!(stderr.ends_with("2 rows, 1 changed"), "{stderr}");
    assert_eq!(
        scalar(&data, "SELECT version FROM units WHERE epc = 'U-1'"),
        2
    );
    assert_eq!(
        scalar(&data, "SELECT version FROM units WHERE epc = 'U-2'"),
        1
    );
    assert_eq!(
        scalar(
            &data,
            "SELECT count(*) FROM units WHERE epc = 'U-1' AND bin = 'A-2'"
        ),
        1
    );
}

#[test]
fn a_bad_row_fails_the_whole_file_with_file_line_and_reason_and_imports_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let data = backend::new_site(dir.path());
    import(dir.path(), &data, "bins", "bins.csv", BINS);
    let cases = [
        (
            "units",
            "epc,code,sku,state,bin\nN-1,,SKU-1,new,\nN-2,,SKU-1,new,\nN-3,,SKU-1,lost,\n",
            4,
            "state \"lost\" is not one of",
        ),
        (
            "units",
            "epc,code,sku,state,bin\nN-1,,SKU-1,new,\nN-2,,SKU-1,in_stock,Z-9\n",
            3,
            "unknown bin \"Z-9\"",
        ),
        (
            "units",
            "epc,code,sku,state,bin\nN-1,,SKU-1,new,\nN-1,,SKU-2,new,\n",
            3,
            "epc \"N-1\" is already on line 2",
        ),
        (
            "units",
            "epc,code,sku,state,bin\nN-1,K-1,SKU-1,new,\nN-2,K-1,SKU-1,new,\n",
            3,
            "code \"K-1\" is already on line 2",
        ),
        (
            "units",
            "epc,code,sku,state,bin\nN-1,,,new,\n",
            2,
            "sku is empty",
        ),
        (
            "units",
            "epc,code,sku,state\nN-1,,SKU-1,new\n",
            1,
            "the header names no \"bin\" column",
        ),
        (
            "units",
            "epc,code,sku,state,bin\nN-1,,SKU-1,new\n",
            2,
            "this line has 4 fields where the header names 5 (epc,code,sku,state,bin): a value is missing",
        ),
        (
            "grns",
            "grn,qc,sku,expected\nG-1,accepted,SKU-1,2\nG-1,held,SKU-2,1\n",
            3,
            "qc \"held\" differs from \"accepted\" on line 2",
        ),
        (
            "grns",
            "grn,qc,sku,expected\nG-1,accepted,SKU-1,two\n",
            2,
            "expected \"two\" is not a whole number",
        ),
        (
            "grns",
            "grn,qc,sku,expected\nG-1,pending,SKU-1,1\n",
            2,
            "qc \"pending\" is not one of",
        ),
        (
            "manifests",
            "manifest,state,epc\nM-1,packing,GHOST\n",
            2,
            "unknown unit \"GHOST\"",
        ),
        (
            "manifests",
            "manifest,state,epc\nM-1,shipped,U-1\n",
            2,
            "state \"shipped\" is not one of",
        ),
        (
            "bins",
            "bin,zone,location\nB-9,Z-B,L-1\nB-9,Z-C,L-1\n",
            3,
            "bin \"B-9\" is already on line 2",
        ),
        (
            "operators",
            "badge,name\nOP-1,Ann Lee\nOP-1,Bo Chen\n",
            3,
            "badge \"OP-1\" is already on line 2",
        ),
        (
            "operators",
            "badge,name\nOP-1,Ann Lee\nOP-2,\n",
            3,
            "name is empty",
        ),
        (
            "operators",
            "badge,name\nOP-1,\"Ann\u{7}Lee\"\n",
            2,
            "name must not contain control characters",
        ),
        (
            "operators",
            "badge\nOP-1\n",
            1,
            "the header names no \"name\" column",
        ),
        (
            "operators",
            "badge,name,language\nOP-1,Ann Lee,de\nOP-2,Bo Chen,en_US\n",
            3,
            "language \"en_US\" is not a BCP 47 language tag",
        ),
        (
            "operators",
            "badge,name,language\nOP-2,Bo Chen,pt_BR\n",
            2,
            "write it with hyphens, \"pt-BR\"",
        ),
        (
            "operators",
            "badge,name,language\nOP-1,Ann Lee,Deutsch\n",
            2,
            "language \"Deutsch\" is not a BCP 47 language tag",
        ),
    ];
    for (kind, text, line, reason) in cases {
        let name = format!("{kind}-bad.csv");
        let (ok, stderr) = import(dir.path(), &data, kind, &name, text);
        assert!(!ok, "{kind}: {text}");
        let path = dir.path().join(&name);
        let prefix = format!("{}:{line}: ", path.display());
        assert!(
            stderr.starts_with(&prefix),
            "expected {prefix}{reason}, got {stderr}"
        );
        assert!(
            stderr.contains(reason),
            "expected {prefix}{reason}, got {stderr}"
        );
    }
    // A row's check against the ledger (an unknown bin, line 2) is found
    // after a later row's parse error (line 3); both are told in line
    // order.
    let (ok, stderr) = import(
        dir.path(),
        &data,
        "units",
        "units-two-bad.csv",
        "epc,code,sku,state,bin\nN-1,,SKU-1,in_stock,Z-9\nN-2,,SKU-1,lost,\n",
    );
    assert!(!ok);
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|line| line.contains("units-two-bad.csv:"))
        .collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    assert!(lines[0].contains(".csv:2: unknown bin"), "{stderr}");
    assert!(lines[1].contains(".csv:3: state \"lost\""), "{stderr}");
    for table in [
        "units",
        "grns",
        "grn_lines",
        "manifests",
        "manifest_units",
        "operators",
    ] {
        assert_eq!(
            scalar(&data, &format!("SELECT count(*) FROM {table}")),
            0,
            "{table}"
        );
    }
    assert_eq!(scalar(&data, "SELECT count(*) FROM bins"), 2);
    let missing = site_command(&["import", "units", "/nonexistent/units.csv"], &data);
    assert!(!missing.status.success());
}

#[test]
fn supervisors_open_and_approve_counts_and_resolve_grns_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let data = backend::new_site(dir.path());
    import(dir.path(), &data, "bins", "bins.csv", BINS);
    import(dir.path(), &data, "units", "units.csv", UNITS);
    import(
        dir.path(),
        &data,
        "grns",
        "grns.csv",
        "grn,qc,sku,expected\nG-1,accepted,SKU-1,1\n",
    );

    let opened = site_command(
        &["count", "open", "--location", "L-1", "--zone", "Z-A"],
        &data,
    );
    assert!(
        opened.status.success(),
        "{}",
        String::from_utf8_lossy(&opened.stderr)
    );
    let count_id = String::from_utf8(opened.stdout).unwrap().trim().to_owned();
    assert_eq!(count_id, "C-000001");
    let second = site_command(
        &["count", "open", "--location", "L-1", "--zone", "Z-A"],
        &data,
    );
    assert!(!second.status.success(), "one open count per zone");
    let nowhere = site_command(
        &["count", "open", "--location", "L-1", "--zone", "Z-9"],
        &data,
    );
    assert!(!nowhere.status.success(), "a zone without bins");
    assert_eq!(
        scalar(
            &data,
            "SELECT count(*) FROM count_expected WHERE count_id = 'C-000001'"
        ),
        1,
        "U-1 is in stock in Z-A"
    );

    let early = site_command(&["count", "approve", &count_id], &data);
    assert!(!early.status.success());
    assert!(String::from_utf8_lossy(&early.stderr).contains("still open"));
    let db = backend::open_db(&data);
    db.call_blocking(|conn| {
        stockhop_site::ledger::modes::cycle_count::close(conn, &count_id, stockhop::time::UnixMs(0))
    })
    .unwrap();
    drop(db);
    let approved = site_command(&["count", "approve", &count_id], &data);
    assert!(
        approved.status.success(),
        "{}",
        String::from_utf8_lossy(&approved.stderr)
    );
    assert!(approved.stdout.is_empty());
    assert_eq!(
        scalar(
            &data,
            "SELECT count(*) FROM units WHERE epc = 'U-1' AND state = 'missing' AND version = 2"
        ),
        1
    );
    assert_eq!(
        scalar(&data, "SELECT count(*) FROM hops WHERE kind = 'ADJUST'"),
        1
    );

    let open_grn = site_command(&["grn", "resolve", "G-1"], &data);
    assert!(
        !open_grn.status.success(),
        "an open GRN has nothing to resolve"
    );
    let unknown = site_command(&["grn", "resolve", "G-404"], &data);
    assert!(!unknown.status.success());
    let db = backend::open_db(&data);
    db.call_blocking(|conn| stockhop_site::ledger::grns::settle(conn, "G-1"))
        .unwrap();
    drop(db);
    let resolved = site_command(&["grn", "resolve", "G-1"], &data);
    assert!(
        resolved.status.success(),
        "{}",
        String::from_utf8_lossy(&resolved.stderr)
    );
    assert_eq!(
        scalar(&data, "SELECT count(*) FROM grns WHERE state = 'complete'"),
        1
    );
}

#[test]
fn a_count_of_a_place_with_no_units_opens_with_a_warning_and_prints_its_id_on_a_line() {
    let dir = tempfile::tempdir().unwrap();
    let data = backend::new_site(dir.path());
    // Z-A holds U-1 (in A-1); Z-E's one bin holds nothing; U-3 in A-2 is
    // dispatched, so A-2 holds no unit a count expects either.
    import(
        dir.path(),
        &data,
        "bins",
        "bins.csv",
        "bin,zone,location\nA-1,Z-A,L-1\nA-2,Z-A,L-1\nE-1,Z-E,L-1\n",
    );
    import(
        dir.path(),
        &data,
        "units",
        "units.csv",
        "epc,code,sku,state,bin\nU-1,,SKU-1,in_stock,A-1\nU-3,,SKU-1,dispatched,A-2\n",
    );
    let open = |place: &[&str]| {
        let out = site_command(
            &[&["count", "open", "--location", "L-1"], place].concat(),
            &data,
        );
        assert!(
            out.status.success(),
            "an empty place is counted all the same (strays are found so): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        (
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };

    let (stdout, stderr) = open(&["--zone", "Z-E"]);
    assert_eq!(stdout, "C-000001\n", "the id alone, on its own line");
    assert!(
        stderr.contains("warning: L-1/Z-E holds no units the site knows")
            && stderr.contains("count C-000001 expects nothing"),
        "{stderr}"
    );
    let (stdout, stderr) = open(&["--zone", "Z-A", "--bin", "A-2"]);
    assert_eq!(stdout, "C-000002\n");
    assert!(
        stderr.contains("warning: L-1/Z-A/A-2 holds no units the site knows"),
        "{stderr}"
    );
    let (stdout, stderr) = open(&["--zone", "Z-A", "--bin", "A-1"]);
    assert_eq!(stdout, "C-000003\n");
    assert!(!stderr.contains("warning"), "A-1 holds U-1: {stderr}");
    assert_eq!(
        scalar(&data, "SELECT count(*) FROM counts WHERE state = 'open'"),
        3,
        "every one of them opened"
    );
}

#[test]
fn supervisors_count_one_bin_and_cancel_a_count_opened_by_mistake() {
    let dir = tempfile::tempdir().unwrap();
    let data = backend::new_site(dir.path());
    import(dir.path(), &data, "bins", "bins.csv", BINS);
    import(dir.path(), &data, "units", "units.csv", UNITS);
    let count = |args: &[&str]| {
        let out = site_command(&[&["count"], args].concat(), &data);
        (
            out.status.success(),
            String::from_utf8(out.stdout).unwrap().trim().to_owned(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let zone = ["open", "--location", "L-1", "--zone", "Z-A"];
    let (ok, a1, stderr) = count(&[&zone[..], &["--bin", "A-1"]].concat());
    assert!(ok, "{stderr}");
    let (ok, a2, stderr) = count(&[&zone[..], &["--bin", "A-2"]].concat());
    assert!(ok, "two bins of a zone are counted apart: {stderr}");
    assert_eq!(
        scalar(
            &data,
            &format!("SELECT count(*) FROM count_expected WHERE count_id = '{a1}'")
        ),
        1,
        "U-1 is in A-1"
    );
    assert_eq!(
        scalar(
            &data,
            &format!("SELECT count(*) FROM count_expected WHERE count_id = '{a2}'")
        ),
        0
    );
    let (ok, _, stderr) = count(&[&zone[..], &["--bin", "A-1"]].concat());
    assert!(!ok && stderr.contains("COUNT_ALREADY_OPEN"), "{stderr}");
    let (ok, _, stderr) = count(&zone);
    assert!(
        !ok && stderr.contains("COUNT_ALREADY_OPEN"),
        "the zone's count waits for its bins' counts: {stderr}"
    );
    for (bin, why) in [("A-9", "no bin"), ("A-1 ", "no bin")] {
        let (ok, _, stderr) = count(&[&zone[..], &["--bin", bin]].concat());
        assert!(!ok && stderr.contains(why), "{bin}: {stderr}");
    }
    let (ok, _, stderr) = count(&["open", "--location", "L-1", "--zone", "Z-B", "--bin", "A-1"]);
    assert!(!ok && stderr.contains("is in zone \"Z-A\""), "{stderr}");

    // Cancelled, a count closes, is never approved, and frees its place.
    let (ok, _, stderr) = count(&["cancel", &a1]);
    assert!(ok, "{stderr}");
    assert!(stderr.contains("cancelled"), "{stderr}");
    let (ok, _, stderr) = count(&["cancel", &a1]);
    assert!(ok, "cancelling again changes nothing: {stderr}");
    let (ok, _, stderr) = count(&["approve", &a1]);
    assert!(!ok && stderr.contains("cancelled"), "{stderr}");
    let (ok, _, _) = count(&["cancel", "C-404404"]);
    assert!(!ok);
    let (ok, _, stderr) = count(&["cancel", &a2]);
    assert!(ok, "{stderr}");
    let (ok, zone_count, stderr) = count(&zone);
    assert!(ok, "{stderr}");
    assert_eq!(
        scalar(&data, "SELECT count(*) FROM hops WHERE kind = 'ADJUST'"),
        0
    );
    assert_eq!(
        scalar(&data, "SELECT count(*) FROM units WHERE state = 'missing'"),
        0,
        "nothing a cancelled count saw posts"
    );
    let db = backend::open_db(&data);
    db.call_blocking(|conn| {
        stockhop_site::ledger::modes::cycle_count::close(
            conn,
            &zone_count,
            stockhop::time::UnixMs(0),
        )
    })
    .unwrap();
    drop(db);
    let (ok, _, _) = count(&["approve", &zone_count]);
    assert!(ok);
    let (ok, _, stderr) = count(&["cancel", &zone_count]);
    assert!(
        !ok && stderr.contains("COUNT_APPROVED"),
        "an approved count has posted: {stderr}"
    );
}

#[tokio::test]
async fn operators_reach_handhelds_with_the_reference_data_and_their_changes() {
    let site = Site::start().await;
    let hh = site.handheld("HH-1").await;
    let imported = site.import("operators", "badge,name\nOP-1,Ann Lee\nOP-2,Bo Chen\n");
    assert_eq!((imported.rows, imported.changed), (2, 2));
    let again = site.import("operators", "badge,name\nOP-1,Ann Lee\nOP-2,Bo Chen\n");
    assert_eq!(again.changed, 0, "the same rows change nothing");
    let all = pages(&site, &hh.token, None, 100).await;
    assert_eq!(
        rows(&all, "operators"),
        [
            json!({"badge": "OP-1", "name": "Ann Lee"}),
            json!({"badge": "OP-2", "name": "Bo Chen"})
        ]
    );
    let cursor = all.last().unwrap()["cursor"].as_str().unwrap().to_owned();
    site.import("operators", "badge,name\nOP-2,Bo Chen-Park\nOP-3,Cy Diaz\n");
    let changes = pages(&site, &hh.token, Some(cursor), 100).await;
    assert_eq!(
        rows(&changes, "operators"),
        [
            json!({"badge": "OP-2", "name": "Bo Chen-Park"}),
            json!({"badge": "OP-3", "name": "Cy Diaz"})
        ]
    );
}

#[tokio::test]
async fn an_operators_language_reaches_handhelds_and_a_file_without_the_column_keeps_it() {
    let site = Site::start().await;
    let hh = site.handheld("HH-1").await;
    // Tags in any case are kept in their canonical one; an empty value is
    // no language.
    let imported = site.import(
        "operators",
        "badge,name,language\nOP-1,Anna Weber,de\nOP-2,Samir Haddad,AR\nOP-3,Ewa Nowak,pl-pl\nOP-4,Cy Diaz,\n",
    );
    assert_eq!((imported.rows, imported.changed), (4, 4));
    let all = pages(&site, &hh.token, None, 100).await;
    assert_eq!(
        rows(&all, "operators"),
        [
            json!({"badge": "OP-1", "name": "Anna Weber", "language": "de"}),
            json!({"badge": "OP-2", "name": "Samir Haddad", "language": "ar"}),
            json!({"badge": "OP-3", "name": "Ewa Nowak", "language": "pl-PL"}),
            json!({"badge": "OP-4", "name": "Cy Diaz"})
        ]
    );
    // A file without the column renames and keeps each language.
    let cursor = all.last().unwrap()["cursor"].as_str().unwrap().to_owned();
    let renamed = site.import(
        "operators",
        "badge,name\nOP-1,Anna Weber-Lang\nOP-4,Cy Diaz\n",
    );
    assert_eq!(renamed.changed, 1, "OP-4 is as it was");
    let changes = pages(&site, &hh.token, Some(cursor), 100).await;
    assert_eq!(
        rows(&changes, "operators"),
        [json!({"badge": "OP-1", "name": "Anna Weber-Lang", "language": "de"})]
    );
    // A change of language alone is a change handhelds fetch; an empty
    // value takes the language away.
    let cursor = changes.last().unwrap()["cursor"]
        .as_str()
        .unwrap()
        .to_owned();
    let relanguaged = site.import(
        "operators",
        "badge,name,language\nOP-2,Samir Haddad,es\nOP-3,Ewa Nowak,\n",
    );
    assert_eq!(relanguaged.changed, 2);
    let changes = pages(&site, &hh.token, Some(cursor), 100).await;
    assert_eq!(
        rows(&changes, "operators"),
        [
            json!({"badge": "OP-2", "name": "Samir Haddad", "language": "es"}),
            json!({"badge": "OP-3", "name": "Ewa Nowak"})
        ]
    );
}

#[tokio::test]
async fn a_malformed_language_refuses_its_line_and_imports_nothing() {
    let site = Site::start().await;
    site.import("operators", "badge,name,language\nOP-1,Anna Weber,de\n");
    let refused = site
        .try_import(
            "operators",
            "badge,name,language\nOP-1,Anna Weber,pl\nOP-2,Bo Chen,english\nOP-3,Cy Diaz,x-\n",
        )
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains(":3: language \"english\" is not a BCP 47"),
        "{refused}"
    );
    assert!(
        refused.contains(":4: language \"x-\" is not a BCP 47"),
        "{refused}"
    );
    let hh = site.handheld("HH-1").await;
    let all = pages(&site, &hh.token, None, 100).await;
    assert_eq!(
        rows(&all, "operators"),
        [json!({"badge": "OP-1", "name": "Anna Weber", "language": "de"})],
        "nothing of the refused file is taken"
    );
}

#[tokio::test]
async fn a_device_learns_whether_it_is_commissioned_from_every_reference_page() {
    let site = Site::start().await;
    let token = site.add_device("HH-TRAINEE", false);
    let (status, first) = site.get("/v1/reference", &token).await;
    assert_eq!(status, 200);
    assert_eq!(first["device"]["commissioned"], false, "{first}");
    site.db
        .call_blocking(|conn| stockhop_site::ledger::devices::commission(conn, "HH-TRAINEE"))
        .unwrap();
    let (_, after) = site.get("/v1/reference", &token).await;
    assert_eq!(after["device"]["commissioned"], true, "{after}");
}

#[tokio::test]
async fn a_count_of_one_bin_and_a_cancelled_count_reach_handhelds_as_they_are() {
    let site = Site::start().await;
    site.import("bins", BINS);
    site.import("units", UNITS);
    let hh = site.handheld("HH-1").await;
    let count_id = count_bin_a1(&site);
    let all = pages(&site, &hh.token, None, 100).await;
    assert_eq!(
        rows(&all, "counts"),
        [
            json!({"count_id": count_id, "location": "L-1", "zone": "Z-A", "bin": "A-1", "state": "open"})
        ]
    );
    let cursor = all.last().unwrap()["cursor"].as_str().unwrap().to_owned();
    site.db
        .call_blocking(|conn| {
            stockhop_site::ledger::modes::cycle_count::cancel(conn, &count_id, ledger_common::now())
        })
        .unwrap();
    let changes = pages(&site, &hh.token, Some(cursor), 100).await;
    assert_eq!(
        rows(&changes, "counts"),
        [
            json!({"count_id": count_id, "location": "L-1", "zone": "Z-A", "bin": "A-1", "state": "cancelled"})
        ]
    );
    let figures = ledger_common::count_figures(&site, &hh.token, &count_id).await;
    assert_eq!(
        figures,
        json!({"count_id": count_id, "location": "L-1", "zone": "Z-A", "bin": "A-1",
               "state": "cancelled", "expected": 1, "seen": 0, "missing": ["U-1"], "unexpected": []})
    );
}

/// Opens a count of bin A-1 alone (zone Z-A of location L-1); its id.
fn count_bin_a1(site: &Site) -> String {
    site.db
        .call_blocking(|conn| {
            stockhop_site::ledger::modes::cycle_count::open_place(
                conn,
                "L-1",
                "Z-A",
                Some("A-1"),
                ledger_common::now(),
            )
        })
        .unwrap()
}

/// A put-away session of `hh`'s that puts unit U-2 (version 1) in bin A-2.
async fn put_away_u2_in_a2(site: &Site, hh: &mut ledger_common::Handheld) {
    let items = [
        hh.item(
            "open_session",
            json!({"operator_id": "op-1", "mode": "put_away", "context": {}}),
        ),
        hh.item(
            "scan",
            json!({"mode": "put_away", "epc": "U-2", "bin": "A-2", "unit_version": 1}),
        ),
        hh.item("close_session", json!({})),
    ];
    site.sync_ok(hh, &items).await;
}

/// An admin's token, and the first page of the hop feed as it reads it.
async fn hop_feed(site: &Site) -> (String, Value) {
    let admin = site
        .db
        .call_blocking(|conn| stockhop_site::view::admin::add(conn, "ops", ledger_common::now()))
        .unwrap();
    let (status, feed) = site.get("/v1/hops?limit=1000", &admin).await;
    assert_eq!(status, 200, "{feed}");
    (admin, feed)
}

/// Reads every page after `cursor`, `limit` rows at a time; returns the
/// pages.
async fn pages(site: &Site, token: &str, mut cursor: Option<String>, limit: usize) -> Vec<Value> {
    let mut pages = Vec::new();
    loop {
        let path = match &cursor {
            Some(cursor) => format!("/v1/reference?after={cursor}&limit={limit}"),
            None => format!("/v1/reference?limit={limit}"),
        };
        let (status, page) = site.get(&path, token).await;
        assert_eq!(status, 200, "{page}");
        cursor = Some(page["cursor"].as_str().unwrap().to_owned());
        let more = page["more"].as_bool().unwrap();
        pages.push(page);
        if !more {
            return pages;
        }
    }
}

fn rows(pages: &[Value], table: &str) -> Vec<Value> {
    pages
        .iter()
        .flat_map(|page| page[table].as_array().unwrap().clone())
        .collect()
}

#[tokio::test]
async fn the_reference_cache_pages_through_everything_then_only_what_changed_after_its_cursor() {
    let site = Site::start().await;
    site.import("bins", BINS);
    site.import("units", UNITS);
    site.import(
        "grns",
        "grn,qc,sku,expected\nG-1,accepted,SKU-1,2\nG-1,accepted,SKU-2,1\n",
    );
    let count_id = site
        .db
        .call_blocking(|conn| {
            stockhop_site::ledger::modes::cycle_count::open(
                conn,
                "L-1",
                "Z-A",
                ledger_common::now(),
            )
        })
        .unwrap();
    let mut hh = site.handheld("HH-1").await;

    let all = pages(&site, &hh.token, None, 2).await;
    assert_eq!(all.len(), 3, "6 rows, 2 a page");
    assert!(all[..2].iter().all(|page| page["more"] == true));
    assert_eq!(
        rows(&all, "bins"),
        [
            json!({"bin": "A-1", "zone": "Z-A", "location": "L-1"}),
            json!({"bin": "A-2", "zone": "Z-A", "location": "L-1"})
        ]
    );
    assert_eq!(
        rows(&all, "units"),
        [
            json!({"epc": "U-1", "code": "C-1", "sku": "SKU-1", "state": "in_stock", "bin": "A-1", "version": 1}),
            json!({"epc": "U-2", "code": null, "sku": "SKU-1", "state": "new", "bin": null, "version": 1}),
        ]
    );
    assert_eq!(
        rows(&all, "grns"),
        [
            json!({"grn": "G-1", "qc": "accepted", "state": "open", "lines": [
            {"sku": "SKU-1", "expected": 2, "received": 0}, {"sku": "SKU-2", "expected": 1, "received": 0}]})
        ]
    );
    assert_eq!(
        rows(&all, "counts"),
        [
            json!({"count_id": count_id, "location": "L-1", "zone": "Z-A", "bin": null, "state": "open"})
        ]
    );
    let cursor = all.last().unwrap()["cursor"].as_str().unwrap().to_owned();

    // Nothing changed: an empty page that keeps the cursor.
    let (_, idle) = site
        .get(&format!("/v1/reference?after={cursor}"), &hh.token)
        .await;
    assert_eq!(
        idle,
        json!({"cursor": cursor, "more": false, "bins": [], "units": [], "grns": [], "counts": [],
               "operators": [], "skus": [], "gs1_separator": "~", "device": all[0]["device"]})
    );

    // A put-away and a receive change a unit and a GRN line: only those come back.
    put_away_u2_in_a2(&site, &mut hh).await;
    let changes = pages(&site, &hh.token, Some(cursor.clone()), 100).await;
    assert_eq!(changes.len(), 1);
    assert_eq!(
        rows(&changes, "units"),
        [
            json!({"epc": "U-2", "code": null, "sku": "SKU-1", "state": "in_stock", "bin": "A-2", "version": 2})
        ]
    );
    assert!(
        rows(&changes, "bins").is_empty()
            && rows(&changes, "grns").is_empty()
            && rows(&changes, "counts").is_empty()
    );
    assert_ne!(changes[0]["cursor"], json!(cursor));

    // The same objects one at a time.
    let (status, unit) = site.get("/v1/units/U-2", &hh.token).await;
    assert_eq!((status, &unit["version"]), (200, &json!(2)));
    let (status, grn) = site.get("/v1/grns/G-1", &hh.token).await;
    assert_eq!((status, &grn), (200, &rows(&all, "grns")[0]));
    for missing in [
        "/v1/units/U-404",
        "/v1/grns/G-404",
        "/v1/manifests/M-404",
        "/v1/counts/C-404",
    ] {
        let (status, body) = site.get(missing, &hh.token).await;
        assert_eq!(
            (status, body["code"].as_str()),
            (404, Some("NOT_FOUND")),
            "{missing}"
        );
    }
}

#[tokio::test]
async fn the_read_side_wants_a_device_token_and_a_cursor_it_answered() {
    let site = Site::start().await;
    let hh = site.handheld("HH-1").await;
    for path in [
        "/v1/reference",
        "/v1/units/U-1",
        "/v1/grns/G-1",
        "/v1/manifests/M-1",
        "/v1/counts/C-1",
    ] {
        let (status, body) = site.get(path, "not-a-token").await;
        assert_eq!(
            (status, body["code"].as_str()),
            (401, Some("UNAUTHORIZED")),
            "{path}"
        );
    }
    for path in ["/v1/reference?after=yesterday", "/v1/reference?after=-1"] {
        let (status, body) = site.get(path, &hh.token).await;
        assert_eq!(
            (status, body["code"].as_str()),
            (400, Some("INVALID_CURSOR")),
            "{path}"
        );
    }
    for path in [
        "/v1/reference?limit=0",
        "/v1/reference?limit=2001",
        "/v1/reference?limit=many",
    ] {
        assert_eq!(site.get(path, &hh.token).await.0, 400, "{path}");
    }
    let (status, empty) = site.get("/v1/reference", &hh.token).await;
    assert_eq!(status, 200);
    assert_eq!(
        empty,
        json!({"cursor": "0", "more": false, "bins": [], "units": [], "grns": [], "counts": [],
               "operators": [], "skus": [], "gs1_separator": "~",
               "device": {"device_id": "HH-1", "profile": "mc3390xr",
                          "modes": ["cycle_count", "receive", "dispatch_verify", "put_away", "find_unit"],
                          "encode": true, "commissioned": true}})
    );
}

#[tokio::test]
async fn every_reference_page_tells_the_device_its_profile_the_modes_it_opens_and_whether_it_encodes(
) {
    let site = Site::start().await;
    site.import("bins", BINS);
    let handheld_modes = json!([
        "cycle_count",
        "receive",
        "dispatch_verify",
        "put_away",
        "find_unit"
    ]);
    for (device_id, profile, modes, encode) in [
        ("HH-1", Profile::Mc3390xr, handheld_modes.clone(), true),
        ("SLED-1", Profile::Rfd40, handheld_modes.clone(), true),
        ("GATE-1", Profile::Fxr90, json!([]), false),
        ("PRN-1", Profile::Zt411r, json!([]), true),
    ] {
        let token = site.add_device_as(device_id, profile, true);
        let first = pages(&site, &token, None, 1).await;
        assert_eq!(first.len(), 2, "two bins, a page each");
        for page in &first {
            assert_eq!(
                page["device"],
                json!({"device_id": device_id, "profile": profile.as_str(),
                       "modes": modes, "encode": encode, "commissioned": true}),
                "{device_id}"
            );
        }
        // The rows are the same whoever reads them.
        assert_eq!(rows(&first, "bins").len(), 2);
    }
}

/// A units file that moves a unit the floor has moved since (an older copy
/// of the ERP's list, pushed again) books the move as an `ADJUST` hop of
/// the site, so stock never changes without a hop and the feed tells the
/// ERP of it; the same file once more moves nothing and books nothing.
#[tokio::test]
async fn a_units_file_that_moves_a_unit_books_the_move_as_a_hop_the_feed_lists() {
    let site = Site::start().await;
    site.import("bins", BINS);
    site.import("units", UNITS);
    let mut hh = site.handheld("HH-1").await;
    put_away_u2_in_a2(&site, &mut hh).await;
    let hops = site.count("SELECT count(*) FROM hops");

    // The file as first imported: U-2 new and in no bin again.
    assert_eq!(site.import("units", UNITS).changed, 1);
    assert_eq!(site.count("SELECT count(*) FROM hops"), hops + 1);
    let (unit, hop) = site
        .db
        .call_blocking(|conn| {
            let unit: (String, Option<String>, i64) = conn.query_row(
                "SELECT state, bin, version FROM units WHERE epc = 'U-2'",
                [],
                |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
            )?;
            let hop: (
                String,
                String,
                String,
                Option<String>,
                Option<String>,
                i64,
                String,
            ) = conn.query_row(
                "SELECT device_id, command, kind, from_bin, to_bin, unit_version, facts
                     FROM hops ORDER BY hop_id DESC LIMIT 1",
                [],
                |row| {
                    Ok((
                        row.get(0)?,
                        row.get(1)?,
                        row.get(2)?,
                        row.get(3)?,
                        row.get(4)?,
                        row.get(5)?,
                        row.get(6)?,
                    ))
                },
            )?;
            Ok::<_, stockhop_site::store::sql::Error>((unit, hop))
        })
        .unwrap();
    assert_eq!(unit, ("new".to_owned(), None, 3));
    let (device, command, kind, from_bin, to_bin, version, facts) = hop;
    assert_eq!(
        (device.as_str(), command.as_str(), kind.as_str()),
        ("site", "import", "ADJUST")
    );
    assert_eq!(
        (from_bin.as_deref(), to_bin, version),
        (Some("A-2"), None, 3)
    );
    let facts: Value = serde_json::from_str(&facts).unwrap();
    assert_eq!(
        (
            &facts["epc"],
            &facts["line"],
            &facts["from_state"],
            &facts["state"]
        ),
        (&json!("U-2"), &json!(3), &json!("in_stock"), &json!("new"))
    );

    // The ERP reads it back from the feed as the ledger holds it (`bin`,
    // as for every hop that leaves a unit in no bin, the one it left).
    let (_, feed) = hop_feed(&site).await;
    let last = feed["hops"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        (&last["kind"], &last["command"], &last["device_id"]),
        (&json!("ADJUST"), &json!("import"), &json!("site")),
        "{last}"
    );
    assert_eq!(
        (&last["epc"], &last["from_bin"], &last["bin"]),
        (&json!("U-2"), &json!("A-2"), &json!("A-2")),
        "{last}"
    );
    // `to_bin` tells it left every bin; no count's variance.
    assert_eq!(
        (&last["to_bin"], &last["variance"]),
        (&Value::Null, &Value::Null),
        "{last}"
    );

    // Once more: nothing moves, no hop.
    assert_eq!(site.import("units", UNITS).changed, 0);
    assert_eq!(site.count("SELECT count(*) FROM hops"), hops + 1);
    site.stop().await;
}

/// A count's approval books a unit it did not see as `missing`: the feed
/// and its CSV say so (`variance`), with the bin the ledger keeps it in
/// (`to_bin`), as the ledger holds them.
#[tokio::test]
async fn the_feed_tells_a_unit_counted_missing_by_its_variance_as_the_ledger_holds_it() {
    let site = Site::start().await;
    site.import("bins", BINS);
    site.import("units", UNITS);
    let count_id = site
        .db
        .call_blocking(|conn| {
            let id = stockhop_site::ledger::modes::cycle_count::open(
                conn,
                "L-1",
                "Z-A",
                ledger_common::now(),
            )?;
            stockhop_site::ledger::modes::cycle_count::close(conn, &id, ledger_common::now())?;
            stockhop_site::ledger::modes::cycle_count::approve(conn, &id, ledger_common::now())?;
            Ok::<_, stockhop_site::ledger::LedgerError>(id)
        })
        .unwrap();
    let (state, bin, facts) = site
        .db
        .call_blocking(|conn| {
            let unit: (String, Option<String>) = conn.query_row(
                "SELECT state, bin FROM units WHERE epc = 'U-1'",
                [],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )?;
            let facts: String = conn.query_row(
                "SELECT facts FROM hops WHERE kind = 'ADJUST' ORDER BY hop_id DESC LIMIT 1",
                [],
                |row| row.get(0),
            )?;
            Ok::<_, stockhop_site::store::sql::Error>((unit.0, unit.1, facts))
        })
        .unwrap();
    assert_eq!(state, "missing");
    let facts: Value = serde_json::from_str(&facts).unwrap();
    assert_eq!(facts["variance"], "missing");

    let (admin, feed) = hop_feed(&site).await;
    let hop = feed["hops"]
        .as_array()
        .unwrap()
        .iter()
        .find(|hop| hop["kind"] == "ADJUST" && hop["epc"] == "U-1")
        .unwrap_or_else(|| panic!("no ADJUST of U-1 in {feed}"))
        .clone();
    assert_eq!(
        (&hop["variance"], &hop["to_bin"], &hop["count_id"]),
        (&json!("missing"), &json!(bin), &json!(count_id)),
        "{hop}"
    );

    let (status, csv) = site
        .get_text(
            "/v1/hops.csv?from=2000-01-01T00:00:00Z&to=2100-01-01T00:00:00Z",
            &admin,
        )
        .await;
    assert_eq!(status, 200, "{csv}");
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let column = |name: &str| {
        header
            .iter()
            .position(|c| *c == name)
            .unwrap_or_else(|| panic!("no {name} column in {header:?}"))
    };
    let (to_bin, variance, sku) = (column("to_bin"), column("variance"), column("sku"));
    let row = lines
        .map(|line| line.split(',').collect::<Vec<_>>())
        .find(|cells| cells[3] == "ADJUST" && cells[10] == "U-1")
        .unwrap_or_else(|| panic!("no ADJUST of U-1 in {csv}"));
    assert_eq!(
        [row[to_bin], row[variance]],
        [bin.as_deref().unwrap_or(""), "missing"]
    );
    assert_eq!(
        row[sku],
        hop["sku"].as_str().unwrap_or(""),
        "the unit's SKU"
    );
    site.stop().await;
}

/// Every table of a read's pages, rows in the order they came.
fn tables(pages: &[Value]) -> Value {
    json!({
        "bins": rows(pages, "bins"),
        "units": rows(pages, "units"),
        "grns": rows(pages, "grns"),
        "counts": rows(pages, "counts"),
        "operators": rows(pages, "operators"),
    })
}

/// While an import applies, a handheld that reads from the start (a new
/// one, or one catching up) gets the site as it stood at the import's
/// flip: a row changed since, by the import's turns or by a sync or a
/// supervisor, comes in its old place as it was, not missing. Once the
/// import ends, the changes come after the cursor, and the rows it kept
/// are swept.
#[tokio::test]
async fn while_an_import_applies_a_handheld_reading_from_the_start_sees_the_site_as_at_its_flip() {
    let site = Site::start().await;
    site.import("bins", BINS);
    site.import("units", UNITS);
    site.import("operators", "badge,name\nop-1,Ann Lee\nOP-2,Bo Chen\n");
    site.import("grns", "grn,qc,sku,expected\nG-1,accepted,SKU-1,2\n");
    let count_id = count_bin_a1(&site);
    let mut hh = site.handheld("HH-1").await;
    let reader = site.add_device("HH-NEW", true);
    let at_flip = pages(&site, &reader, None, 2).await;
    let cursor = at_flip.last().unwrap()["cursor"]
        .as_str()
        .unwrap()
        .to_owned();

    // An import flips, as `import` leaves it between its turns.
    let now = ledger_common::now().0;
    site.db
        .call_blocking(move |conn| {
            conn.execute(
                "INSERT INTO imports (import_id, kind, state, source, started_at, touched_at, watermark)
                 VALUES (900, 'bins', 'applying', 'test', ?1, ?1, (SELECT seq FROM reference_clock))",
                [now],
            )
        })
        .unwrap();
    // Its turns change a bin, an operator and a GRN (a line, then another
    // line and its head); a sync moves a unit; a supervisor cancels a count.
    for sql in [
        "UPDATE bins SET zone = 'Z-B' WHERE bin = 'A-2'",
        "UPDATE operators SET name = 'Bo Chen-Park' WHERE badge = 'OP-2'",
        "UPDATE grn_lines SET expected = 5 WHERE grn = 'G-1'",
        "INSERT INTO grn_lines (grn, sku, expected, received) VALUES ('G-1', 'SKU-0', 1, 0)",
        "UPDATE grns SET qc = 'held' WHERE grn = 'G-1'",
    ] {
        site.db
            .call_blocking(move |conn| conn.execute(sql, []))
            .unwrap();
    }
    put_away_u2_in_a2(&site, &mut hh).await;
    site.db
        .call_blocking({
            let count_id = count_id.clone();
            move |conn| {
                stockhop_site::ledger::modes::cycle_count::cancel(
                    conn,
                    &count_id,
                    ledger_common::now(),
                )
            }
        })
        .unwrap();

    let during = pages(&site, &reader, None, 2).await;
    assert_eq!(
        tables(&during),
        tables(&at_flip),
        "a read from the start during the import shows the site as at its flip"
    );
    assert_eq!(
        tables(&pages(&site, &reader, Some(cursor.clone()), 2).await),
        tables(&[]),
        "nothing past the flip shows before the import ends"
    );
    assert_eq!(site.count("SELECT count(*) FROM import_before"), 5);

    // The import ends.
    site.db
        .call_blocking(|conn| conn.execute("DELETE FROM imports WHERE import_id = 900", []))
        .unwrap();
    let changes = tables(&pages(&site, &reader, Some(cursor), 2).await);
    assert_eq!(
        changes["bins"],
        json!([{"bin": "A-2", "zone": "Z-B", "location": "L-1"}])
    );
    assert_eq!(
        changes["operators"],
        json!([{"badge": "OP-2", "name": "Bo Chen-Park"}])
    );
    assert_eq!(
        changes["grns"],
        json!([{"grn": "G-1", "qc": "held", "state": "open", "lines": [
            {"sku": "SKU-0", "expected": 1, "received": 0},
            {"sku": "SKU-1", "expected": 5, "received": 0}]}])
    );
    assert_eq!(changes["units"].as_array().unwrap().len(), 1, "{changes}");
    assert_eq!(changes["units"][0]["bin"], "A-2");
    assert_eq!(changes["counts"][0]["state"], "cancelled");
    let after = tables(&pages(&site, &reader, None, 2).await);
    for table in ["bins", "units", "grns", "counts", "operators"] {
        assert_eq!(
            after[table].as_array().unwrap().len(),
            tables(&at_flip)[table].as_array().unwrap().len(),
            "{table}: each row once, as it is now"
        );
    }

    // The next import sweeps the rows this one kept.
    site.import("bins", BINS);
    assert_eq!(site.count("SELECT count(*) FROM import_before"), 0);
    site.stop().await;
}
