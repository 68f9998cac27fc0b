//! The ledger's command line, run as the built binary.

use crate::backend;

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn command(args: &[&str], data: &std::path::Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_stockhop-site"));
    command
        .args(args)
        .arg("--data")
        .arg(data)
        .args(backend::database_args(data))
        .env("RUST_LOG", "info");
    command
}

fn run(args: &[&str], data: &std::path::Path) -> Output {
    command(args, data).output().unwrap()
}

/// Runs a command with `input` on its standard input.
fn run_with_stdin(args: &[&str], data: &std::path::Path, input: &[u8]) -> Output {
    let mut child = command(args, data)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

/// A data directory with a site in it, as the server's first start leaves.
fn new_site() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    drop(backend::open_db(dir.path()));
    dir
}

#[test]
fn a_command_without_a_site_refuses_names_the_path_and_makes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mistyped = dir.path().join("stockhop-dta");
    let database = mistyped.join(stockhop_site::store::db::DB_FILE);
    for args in [
        &["device", "add", "HH-1", "--profile", "mc3390xr"][..],
        &["admin", "list"],
        &["period", "close", "2026-11-01T00:00:00Z"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_stockhop-site"))
            .args(args)
            .arg("--data")
            .arg(&mistyped)
            .env_remove("STOCKHOP_DATABASE")
            .output()
            .unwrap();
        assert!(!out.status.success(), "{args:?} ran without a site");
        assert!(out.stdout.is_empty());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(&format!("no site database at {}", database.display()))
                && stderr.contains("--data DIR")
                && stderr.contains("stockhop-site serve"),
            "{stderr}"
        );
        assert!(!mistyped.exists(), "{args:?} made a site");
    }
    // Without --data the default directory is taken, and refused the same.
    let out = Command::new(env!("CARGO_BIN_EXE_stockhop-site"))
        .args(["admin", "list"])
        .current_dir(dir.path())
        .env_remove("STOCKHOP_DATA")
        .env_remove("STOCKHOP_DATABASE")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no site database at ./stockhop-data/"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!dir.path().join("stockhop-data").exists());
    // A folder made to set a site up before its first start is a site.
    let empty = dir.path().join("new-site");
    std::fs::create_dir(&empty).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_stockhop-site"))
        .args(["admin", "list", "--data"])
        .arg(&empty)
        .env_remove("STOCKHOP_DATABASE")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(empty.join(stockhop_site::store::db::DB_FILE).exists());
}

#[test]
fn device_add_prints_only_the_token_which_is_stored_hashed() {
    let dir = new_site();
    let out = run(
        &["device", "add", "HH-0042", "--profile", "mc3390xr"],
        dir.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let token = stdout.strip_suffix('\n').unwrap();
    assert_eq!(token.len(), 64);
    assert!(token.chars().all(|c| c.is_ascii_hexdigit()));

    let db = backend::open_db(dir.path());
    let (stored, commissioned): (String, bool) = db.call_blocking(|conn| {
        conn.query_row(
            "SELECT token_sha256, commissioned FROM devices WHERE device_id = 'HH-0042'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap()
    });
    assert_eq!(stored, stockhop_site::ledger::auth::token_hash(token));
    assert_ne!(stored, token);
    assert!(!commissioned);
    let device = db
        .call_blocking(|conn| stockhop_site::ledger::devices::authenticate(conn, token))
        .unwrap()
        .unwrap();
    assert_eq!(device.device_id, "HH-0042");
    drop(db);

    let again = run(
        &["device", "add", "HH-0042", "--profile", "rfd40"],
        dir.path(),
    );
    assert!(!again.status.success(), "a device id is added once");
    assert!(again.stdout.is_empty());
    let bad_profile = run(&["device", "add", "HH-9", "--profile", "tc52"], dir.path());
    assert!(!bad_profile.status.success());

    let commission = run(&["device", "commission", "HH-0042"], dir.path());
    assert!(commission.status.success());
    assert!(commission.stdout.is_empty());
    let missing = run(&["device", "commission", "HH-NOPE"], dir.path());
    assert!(!missing.status.success());
    let db = backend::open_db(dir.path());
    let commissioned: bool = db.call_blocking(|conn| {
        conn.query_row(
            "SELECT commissioned FROM devices WHERE device_id = 'HH-0042'",
            [],
            |r| r.get(0),
        )
        .unwrap()
    });
    assert!(commissioned);
}

#[test]
fn device_add_commissioned_and_period_close_from_the_command_line() {
    let dir = new_site();
    let out = run(
        &[
            "device",
            "add",
            "FX-1",
            "--profile",
            "fxr90",
            "--commissioned",
        ],
        dir.path(),
    );
    assert!(out.status.success());
    let close = run(&["period", "close", "2026-11-01T00:00:00Z"], dir.path());
    assert!(
        close.status.success(),
        "{}",
        String::from_utf8_lossy(&close.stderr)
    );
    let backwards = run(&["period", "close", "2026-10-01T00:00:00Z"], dir.path());
    assert!(!backwards.status.success());
    let garbage = run(&["period", "close", "November"], dir.path());
    assert!(!garbage.status.success());
    let db = backend::open_db(dir.path());
    let until = db
        .call_blocking(|conn| stockhop_site::ledger::periods::closed_until(conn))
        .unwrap();
    assert_eq!(
        until,
        Some(stockhop::time::UnixMs::parse_rfc3339("2026-11-01T00:00:00Z").unwrap())
    );
    let commissioned: bool = db.call_blocking(|conn| {
        conn.query_row("SELECT commissioned FROM devices", [], |r| r.get(0))
            .unwrap()
    });
    assert!(commissioned);
}

#[test]
fn a_failing_command_says_why_in_one_line_without_a_backtrace() {
    let dir = new_site();
    for args in [
        &["count", "open", "--location", "L-1", "--zone", "Z-9"][..],
        &["count", "approve", "C-404404"],
        &["period", "close", "November"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_stockhop-site"))
            .args(args)
            .arg("--data")
            .arg(dir.path())
            .args(backend::database_args(dir.path()))
            .env("RUST_BACKTRACE", "1")
            .env("RUST_LIB_BACKTRACE", "1")
            .env("RUST_LOG", "warn")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !stderr.to_lowercase().contains("backtrace"),
            "{args:?}: {stderr}"
        );
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{args:?}: {stderr}");
        assert!(lines[0].starts_with("error: "), "{args:?}: {stderr}");
    }
}

#[test]
fn an_empty_file_or_a_folder_to_import_is_named_for_what_it_is() {
    let dir = new_site();
    let empty = dir.path().join("bins.csv");
    std::fs::write(&empty, "").unwrap();
    let out = run(&["import", "bins", empty.to_str().unwrap()], dir.path());
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("the file is empty: its first line names the columns (bin,zone,location)"),
        "{stderr}"
    );
    let folder = dir.path().join("exports");
    std::fs::create_dir(&folder).unwrap();
    let out = run(&["import", "bins", folder.to_str().unwrap()], dir.path());
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("is a folder, not a file"), "{stderr}");
    assert!(!stderr.contains(":1:"), "no line of a folder: {stderr}");
}

/// A spreadsheet's file saved with `;` between its fields (with its BOM
/// and CRLF line ends, as Excel writes it in locales whose decimal mark is
/// a comma), or with tabs, or JSON saved as the file, is refused at line 1
/// saying what to change, as the endpoint says it; nothing is imported.
#[test]
fn a_file_to_import_separated_by_semicolons_or_tabs_or_json_says_what_to_change() {
    let dir = new_site();
    let refused = |name: &str, text: &str| {
        let file = dir.path().join(name);
        std::fs::write(&file, text).unwrap();
        let out = run(&["import", "bins", file.to_str().unwrap()], dir.path());
        assert_eq!(out.status.code(), Some(1), "{name}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        let told = format!("{}:1: ", file.display());
        let line = stderr
            .lines()
            .find(|line| line.starts_with(&told))
            .unwrap_or_else(|| panic!("{name}: no line 1 told: {stderr}"));
        line[told.len()..].to_owned()
    };
    assert_eq!(
        refused("excel.csv", "\u{feff}bin;zone;location\r\nA-1;Z;L\r\n"),
        "the header is separated by ';', not commas: save the file as CSV with commas \
         (bin,zone,location)"
    );
    assert_eq!(
        refused("tabs.csv", "bin\tzone\tlocation\nA-1\tZ\tL\n"),
        "the header is separated by tabs, not commas: save the file as CSV with commas \
         (bin,zone,location)"
    );
    assert_eq!(
        refused(
            "bins.json",
            "[\n  {\"bin\": \"A-1\", \"zone\": \"Z\", \"location\": \"L\"}\n]\n"
        ),
        "the file is JSON, not CSV: save it as CSV with a header row (bin,zone,location), \
         or send the JSON array to PUT /v1/admin/reference/bins as application/json"
    );
    let db = backend::open_db(dir.path());
    let bins: i64 = db.call_blocking(|conn| {
        conn.query_row("SELECT count(*) FROM bins", [], |r| r.get(0))
            .unwrap()
    });
    assert_eq!(bins, 0, "nothing imported");
    drop(db);
    // The same file saved with commas imports.
    let commas = dir.path().join("commas.csv");
    std::fs::write(&commas, "\u{feff}bin,zone,location\r\nA-1,Z,L\r\n").unwrap();
    let out = run(&["import", "bins", commas.to_str().unwrap()], dir.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `import KIND -` reads standard input, as Unix tools take `-`, so an
/// export can be piped in; messages name it `stdin`.
#[test]
fn an_import_of_dash_reads_standard_input_and_names_it_stdin() {
    let dir = new_site();
    let out = run_with_stdin(
        &["import", "bins", "-"],
        dir.path(),
        b"bin,zone,location\nA-1,Z,L\nA-2,Z,L\n",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(out.stdout.is_empty(), "import prints nothing on stdout");
    assert!(stderr.contains("stdin: 2 rows, 2 changed"), "{stderr}");
    let out = run_with_stdin(
        &["import", "bins", "-"],
        dir.path(),
        b"bin,zone,location\nA-3,Z,L\n,Z,L\n",
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("stdin:3: bin is empty"), "{stderr}");
    let db = backend::open_db(dir.path());
    let bins: i64 = db.call_blocking(|conn| {
        conn.query_row("SELECT count(*) FROM bins", [], |r| r.get(0))
            .unwrap()
    });
    assert_eq!(bins, 2, "the bad file imported nothing");
}

/// A file Excel saved as its plain "CSV" on Windows (Windows-1252: "é" is
/// the byte 0xE9) is refused at that line saying the file is not UTF-8
/// and how to save it as UTF-8, as the endpoint says it.
#[test]
fn a_file_to_import_that_is_not_utf8_says_its_line_and_to_save_it_as_utf8() {
    let dir = new_site();
    let file = dir.path().join("bins.csv");
    std::fs::write(
        &file,
        b"bin,zone,location\r\nA-1,Z,L\r\nA-2,Entr\xe9e,L\r\n",
    )
    .unwrap();
    let out = run(&["import", "bins", file.to_str().unwrap()], dir.path());
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    let told = format!(
        "{}:3: the file is not UTF-8: the \"zone\" field of this line",
        file.display()
    );
    assert!(stderr.contains(&told), "{stderr}");
    assert!(
        stderr.contains("\"CSV UTF-8 (Comma delimited)\""),
        "{stderr}"
    );
}

/// A restore keeps who may sync as the newer ledger had it: a device
/// revoked after the backup was made stays revoked, and one given a new
/// token after it keeps refusing the token the backup knew; both are named
/// on stderr. (SQLite only: a PostgreSQL ledger is restored with
/// pg_restore, which the command says.)
#[test]
fn a_restore_keeps_revocations_and_new_tokens_made_after_the_backup() {
    let dir = new_site();
    let add = |id: &str| {
        let out = run(&["device", "add", id, "--profile", "mc3390xr"], dir.path());
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    };
    add("HH-STOLEN");
    add("HH-RELINKED");
    add("HH-KEPT");
    let backup = dir.path().join("site.backup");
    let made = run(&["backup", backup.to_str().unwrap()], dir.path());
    if backend::postgres_requested() {
        assert!(
            !made.status.success(),
            "a PostgreSQL ledger is backed up with pg_dump"
        );
        return;
    }
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    assert!(run(&["device", "revoke", "HH-STOLEN"], dir.path())
        .status
        .success());
    assert!(run(&["device", "link", "HH-RELINKED"], dir.path())
        .status
        .success());
    let newcomer_token = add("HH-NEW");

    let restored = run(&["restore", backup.to_str().unwrap()], dir.path());
    let stderr = String::from_utf8_lossy(&restored.stderr);
    assert!(restored.status.success(), "{stderr}");
    assert!(
        stderr.contains("HH-STOLEN was revoked after the backup was made"),
        "{stderr}"
    );
    assert!(
        stderr.contains("HH-RELINKED was given a new token"),
        "{stderr}"
    );
    assert!(!stderr.contains("HH-KEPT"), "{stderr}");
    assert!(
        stderr.contains("HH-NEW was added after the backup was made"),
        "{stderr}"
    );

    let db = backend::open_db(dir.path());
    let (revoked, stolen_token, relinked_token): (i64, String, String) = db.call_blocking(|conn| {
        conn.query_row(
            "SELECT (SELECT count(*) FROM device_revocations WHERE device_id = 'HH-STOLEN'),
                    (SELECT token_sha256 FROM devices WHERE device_id = 'HH-STOLEN'),
                    (SELECT token_sha256 FROM devices WHERE device_id = 'HH-RELINKED')",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap()
    });
    assert_eq!(revoked, 1);
    assert_eq!(stolen_token, "revoked:HH-STOLEN");
    let newcomer = db.call_blocking(|conn| {
        stockhop_site::ledger::devices::authenticate(conn, &newcomer_token).unwrap()
    });
    assert_eq!(
        newcomer.map(|device| device.device_id),
        Some("HH-NEW".to_owned()),
        "a device added after the backup still syncs with its token"
    );
    let before = {
        let kept = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| {
                p.to_string_lossy().contains(".before-restore-")
                    && !p.to_string_lossy().ends_with("-wal")
            })
            .expect("the replaced ledger is kept aside");
        let conn = rusqlite::Connection::open(kept).unwrap();
        conn.query_row(
            "SELECT token_sha256 FROM devices WHERE device_id = 'HH-RELINKED'",
            [],
            |r| r.get::<_, String>(0),
        )
        .unwrap()
    };
    assert_eq!(
        relinked_token, before,
        "the newer token's hash, not the backup's"
    );
    let listed = run(&["device", "list"], dir.path());
    let listed = String::from_utf8_lossy(&listed.stdout);
    let stolen = listed
        .lines()
        .find(|l| l.contains("HH-STOLEN"))
        .unwrap_or_default();
    assert!(stolen.contains("revoked"), "{listed}");
}

/// A backup is readable by its owner only, and a restore keeps who may
/// sign in to the site's view as the newer ledger had it: an admin added
/// after the backup was made still signs in, one revoked after it does
/// not, both named on stderr. A site with no central is not told about
/// one. (SQLite only, as above.)
#[test]
fn a_restore_keeps_admins_added_and_revoked_after_the_backup_and_the_backup_is_private() {
    use std::os::unix::fs::PermissionsExt;
    if backend::postgres_requested() {
        return;
    }
    let dir = new_site();
    let admin = |verb: &str, name: &str| {
        let out = run(&["admin", verb, name], dir.path());
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    };
    admin("add", "ana");
    let leaver_token = admin("add", "leaver");
    let backup = dir.path().join("site.backup");
    let made = run(&["backup", backup.to_str().unwrap()], dir.path());
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let mode = std::fs::metadata(&backup).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the backup is its owner's alone: {mode:o}");
    let newcomer_token = admin("add", "newcomer");
    admin("revoke", "leaver");

    let restored = run(&["restore", backup.to_str().unwrap()], dir.path());
    let stderr = String::from_utf8_lossy(&restored.stderr);
    assert!(restored.status.success(), "{stderr}");
    assert!(
        stderr.contains("admin newcomer was added after the backup was made"),
        "{stderr}"
    );
    assert!(
        stderr.contains("admin leaver was revoked after the backup was made"),
        "{stderr}"
    );
    assert!(!stderr.contains("central"), "no central here: {stderr}");

    let listed = run(&["admin", "list"], dir.path());
    let names: Vec<String> = String::from_utf8_lossy(&listed.stdout)
        .lines()
        .map(|l| l.split('\t').next().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(names, ["ana", "newcomer"]);
    let db = backend::open_db(dir.path());
    let signed_in = db.call_blocking(|conn| {
        (
            stockhop_site::view::admin::authenticate(conn, &newcomer_token).unwrap(),
            stockhop_site::view::admin::authenticate(conn, &leaver_token).unwrap(),
        )
    });
    assert_eq!(signed_in, (Some("newcomer".to_owned()), None));
}

/// A restore refuses a file that is not a ledger the site wrote (another
/// SQLite database, a rescue file), saying so, and changes nothing: the
/// ledger, its devices and their tokens stay as they were.
#[test]
fn a_restore_of_a_file_that_is_not_a_backup_is_refused_and_changes_nothing() {
    if backend::postgres_requested() {
        return;
    }
    let dir = new_site();
    let out = run(
        &["device", "add", "HH-1", "--profile", "mc3390xr"],
        dir.path(),
    );
    assert!(out.status.success());
    let other = dir.path().join("other.sqlite");
    rusqlite::Connection::open(&other)
        .unwrap()
        .execute_batch("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1);")
        .unwrap();
    let rescue = dir.path().join("stockhop-rescue-HH-1.jsonl");
    std::fs::write(&rescue, "{\"format\":\"stockhop-rescue/1\"}\n").unwrap();
    for (file, why) in [
        (&other, "an SQLite database without the ledger's tables"),
        (&rescue, "not an SQLite database"),
    ] {
        let out = run(&["restore", file.to_str().unwrap()], dir.path());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains("is not a Stockhop backup") && stderr.contains(why),
            "{stderr}"
        );
    }
    let kept_aside = std::fs::read_dir(dir.path()).unwrap().any(|e| {
        e.unwrap()
            .path()
            .to_string_lossy()
            .contains(".before-restore-")
    });
    assert!(!kept_aside, "nothing was moved");
    let listed = run(&["device", "list"], dir.path());
    assert!(String::from_utf8_lossy(&listed.stdout).contains("HH-1"));
}
