//! What an import through the admin API costs the site beside its rows:
//!
//! 1. the site's peak memory (VmHWM) while three 200 MB CSV bodies arrive
//!    at once (every row of them bad, so each is refused after its first
//!    errors and the figure is the bodies', not the staging's), beside its
//!    memory before them;
//! 2. the ledger's file before and after a refused 200 MB import (every row
//!    staged, the last one bad), each read with the site stopped, so its
//!    write-ahead log is written back.
//!
//! `stockhop-site serve` as a site runs it; curl sends the bodies from
//! files (`-T`, streamed), so the client's memory is not the site's.
//! Prints a table; asserts nothing.
//!
//! `cargo bench -p stockhop-site --profile site --bench import_memory`
//! (`STOCKHOP_BENCH_QUICK=1`: 20 MB bodies, see `support`)

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod support;

/// Bytes of each body: 200 MB as the reproduction had (20 MB in
/// the quick mode).
fn body_bytes() -> usize {
    support::scaled(200_000_000, 20_000_000)
}
/// Imports sent at once in the memory phase.
const AT_ONCE: usize = 3;
/// How long the site may take to start listening.
const START_WAIT: Duration = Duration::from_secs(60);
/// How long one import may take to be answered.
const IMPORT_WAIT: Duration = Duration::from_secs(1_800);

fn main() {
    support::announce("import_memory");
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let www = dir.path().join("www");
    std::fs::create_dir_all(www.join("pkg")).unwrap();
    // An empty folder: the first command sets a site up there.
    std::fs::create_dir_all(&data).unwrap();
    let admin = admin_token(&data);

    // Every row bad (a unit state that is no state): refused after the
    // first errors, once the body is in.
    let bad = dir.path().join("bad.csv");
    write_units(&bad, body_bytes(), |_| "not-a-state");
    // Every row good but the last: all staged, then refused.
    let refused = dir.path().join("refused.csv");
    let rows = write_units(&refused, body_bytes(), |_| "new");
    append(&refused, "REFUSED-LAST,,SKU-1,not-a-state,\n");

    let site = Site::start(&data, &www);
    let quiet_kib = site.status_kib("VmRSS");
    let started = Instant::now();
    let sends: Vec<_> = (0..AT_ONCE).map(|_| site.put_units(&admin, &bad)).collect();
    let answers: Vec<String> = sends.into_iter().map(wait_answer).collect();
    let memory_took = started.elapsed();
    let peak_kib = site.status_kib("VmHWM");
    site.stop();

    let before = file_bytes(&data);
    let site = Site::start(&data, &www);
    let started = Instant::now();
    let refused_answer = wait_answer(site.put_units(&admin, &refused));
    let refusal_took = started.elapsed();
    site.stop();
    let after = file_bytes(&data);

    let mb = |bytes: u64| bytes as f64 / 1_000_000.0;
    println!();
    println!(
        "admin API imports of {:.0} MB CSV bodies, stockhop-site serve on SQLite",
        mb(body_bytes() as u64)
    );
    println!(
        "| {:<58} | {:>12} | {:>12} | {:>10} |",
        "measure", "at rest", "with imports", "took s"
    );
    println!("|{:-<60}|{:->14}|{:->14}|{:->12}|", "", "", "", "");
    println!(
        "| {:<58} | {:>12} | {:>12.1} | {:>10.1} |",
        format!("site RSS MB (peak with {AT_ONCE} imports at once)"),
        format!("{:.1}", quiet_kib as f64 / 1024.0),
        peak_kib as f64 / 1024.0,
        memory_took.as_secs_f64()
    );
    println!(
        "| {:<58} | {:>12.1} | {:>12.1} | {:>10.1} |",
        format!("ledger file MB (after a refused import, {rows} rows)"),
        mb(before),
        mb(after),
        refusal_took.as_secs_f64()
    );
    println!("answers: {answers:?} then {refused_answer}");
    println!();
}

/// Adds an admin to the site in `data`; its token.
fn admin_token(data: &Path) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_stockhop-site"))
        .args(["admin", "add", "bench", "--data"])
        .arg(data)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

/// Writes a units CSV of about `bytes` to `path`, each row's state from
/// `state`; how many rows.
fn write_units(path: &Path, bytes: usize, state: impl Fn(usize) -> &'static str) -> usize {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut written = out.write(b"epc,code,sku,state,bin\n").unwrap();
    let mut rows = 0;
    while written < bytes {
        let row = format!(
            "BENCH-EPC-{rows:012},CODE-{rows:012},SKU-1,{},\n",
            state(rows)
        );
        out.write_all(row.as_bytes()).unwrap();
        written += row.len();
        rows += 1;
    }
    out.flush().unwrap();
    rows
}

fn append(path: &Path, text: &str) {
    let mut file = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    file.write_all(text.as_bytes()).unwrap();
}

/// The ledger's file and its write-ahead log, in bytes.
fn file_bytes(data: &Path) -> u64 {
    ["stockhop.sqlite", "stockhop.sqlite-wal"]
        .iter()
        .filter_map(|name| std::fs::metadata(data.join(name)).ok())
        .map(|meta| meta.len())
        .sum()
}

fn wait_answer(mut send: Child) -> String {
    let started = Instant::now();
    while started.elapsed() < IMPORT_WAIT {
        if send.try_wait().unwrap().is_some() {
            let output = send.wait_with_output().unwrap();
            return String::from_utf8_lossy(&output.stdout).into_owned();
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = send.kill();
    panic!("an import was not answered within {IMPORT_WAIT:?}");
}

struct Site {
    child: Child,
    base: String,
}

impl Site {
    fn start(data: &Path, www: &PathBuf) -> Site {
        let mut child = Command::new(env!("CARGO_BIN_EXE_stockhop-site"))
            .args(["--log-format", "json", "serve"])
            .args(["--http", "127.0.0.1:0", "--https", "127.0.0.1:0"])
            .args(["--terminal-http", "127.0.0.1:0"])
            .args(["--terminal-tcp", "127.0.0.1:0"])
            .arg("--data")
            .arg(data)
            .arg("--www")
            .arg(www)
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starting stockhop-site serve");
        let stderr = BufReader::new(child.stderr.take().unwrap());
        let (found, address) = std::sync::mpsc::channel();
        // Reads the log to its end, so the site never blocks on a full pipe.
        std::thread::spawn(move || {
            for line in stderr.lines() {
                let Ok(line) = line else { break };
                let Ok(entry) = serde_json::from_str::<serde_json::Value>(&line) else {
                    continue;
                };
                let fields = &entry["fields"];
                if fields["message"] == "site server listening (http)" {
                    let _ = found.send(fields["addr"].as_str().unwrap().to_owned());
                }
            }
        });
        let addr = address
            .recv_timeout(START_WAIT)
            .expect("the site did not start listening");
        Site {
            child,
            base: format!("http://{addr}"),
        }
    }

    /// `PUT /v1/admin/reference/units` of the file at `path`, by curl.
    fn put_units(&self, admin: &str, path: &Path) -> Child {
        Command::new("curl")
            .args(["-s", "-o", "/dev/null", "-w", "%{http_code}"])
            .args(["-H", &format!("Authorization: Bearer {admin}")])
            .args(["-H", "Content-Type: text/csv", "-T"])
            .arg(path)
            .arg(format!("{}/v1/admin/reference/units", self.base))
            .stdout(Stdio::piped())
            .spawn()
            .expect("curl")
    }

    /// A line of the site's `/proc/PID/status`, in KiB.
    fn status_kib(&self, field: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|line| line.strip_prefix(&format!("{field}:")))
            .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap()
    }

    /// Stops the site as its service manager would, and waits for it.
    fn stop(mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }
}
