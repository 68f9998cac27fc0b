//! The OpenAPI document fuzzed against a live site: schemathesis, pinned
//! and installed from PyPI into a virtualenv under the build directory,
//! runs every check (`--checks all`) with a device's token and then an
//! admin's against `stockhop-site serve` on a fresh data directory on
//! loopback, seeded with bins, units and operators. A failure of any
//! check fails the test run.
//!
//! Its configuration (`tests/schemathesis/schemathesis.toml`) names each
//! operation where a rule spans what a schema can state, and the status
//! the site answers for it; its hooks (`tests/schemathesis/hooks.py`) draw
//! the two formats the document names, `identifier` and `host-port`.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::process::{announce, capture, run, version_output};
use crate::project::Project;

/// The schemathesis release installed and run (`pip install
/// schemathesis==…`): its checks and command line are those of this one.
pub const SCHEMATHESIS_VERSION: &str = "4.32.5";

/// Test cases drawn per operation and phase (`--max-examples`): with 58
/// operations, about 3,900 requests a pass, and both passes take about
/// two minutes on two cores (each pass prints its time).
const MAX_EXAMPLES: u32 = 40;

/// The fuzzer's seed, fixed so a run is repeatable: a failure it finds is
/// found again by the next run of the same tree.
const SEED: u64 = 20_261_206;

/// How long the site may take to answer its first request.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// What the fuzzing found: test cases passed and failures.
pub struct Fuzzed {
    pub passed: u64,
    pub failed: u64,
}

impl Project {
    /// The virtualenv schemathesis is installed in.
    fn schemathesis_env(&self) -> Result<PathBuf> {
        Ok(self.target_dir()?.join("schemathesis"))
    }

    /// Installs schemathesis [`SCHEMATHESIS_VERSION`] into its virtualenv
    /// unless that version is there.
    pub fn ensure_schemathesis(&self) -> Result<()> {
        let env = self.schemathesis_env()?;
        let st = env.join("bin/st");
        let installed = version_output(&st.to_string_lossy())
            .is_some_and(|v| v.split_whitespace().any(|w| w == SCHEMATHESIS_VERSION));
        if installed {
            return Ok(());
        }
        announce(&format!(
            "schemathesis {SCHEMATHESIS_VERSION} (pip, into {})",
            env.display()
        ));
        run(self.cmd("python3").arg("-m").arg("venv").arg(&env))?;
        run(self.cmd(&env.join("bin/pip").to_string_lossy()).args([
            "install",
            "--quiet",
            "--disable-pip-version-check",
            &format!("schemathesis=={SCHEMATHESIS_VERSION}"),
        ]))
    }

    /// `cargo xtask fuzz-openapi`: both passes, against the site binary
    /// `cargo build` last made (`target/debug/stockhop-site`).
    pub fn fuzz_openapi_alone(&self) -> Result<()> {
        let fuzzed = self.fuzz_openapi()?;
        println!(
            "OpenAPI fuzzing: {} passed, {} failed",
            fuzzed.passed, fuzzed.failed
        );
        Ok(())
    }

    /// Both passes against one live site: a device's token, then an
    /// admin's. The site binary is the one the end-to-end step built.
    pub fn fuzz_openapi(&self) -> Result<Fuzzed> {
        self.ensure_schemathesis()?;
        let site_bin = self.target_dir()?.join("debug/stockhop-site");
        let work = tempfile::tempdir().context("a temp directory for the fuzzed site")?;
        let data = work.path().join("data");
        // An existing empty folder: the site's commands set a site up there.
        std::fs::create_dir_all(&data)?;
        let tokens = seed(&site_bin, work.path(), &data)?;
        let mut site = Served::start(&site_bin, &data, &self.root.join("www"), work.path())?;
        let document = format!("{}/v1/openapi.json", site.base);
        let mut fuzzed = Fuzzed {
            passed: 0,
            failed: 0,
        };
        // Every operation is fuzzed in both passes; none is left out.
        // `POST /v1/site/logout` ends only a browser's session (a bearer
        // token is not a session and stays valid), and no operation
        // rotates the admin's token or stops the server, so the run keeps
        // its tokens throughout.
        let passes = [
            ("a device's token", tokens.device.as_str(), &[][..]),
            // With an admin's token, the `ignored_auth` check sends each
            // operation a made-up token once it has answered 2xx: on the
            // view's and data endpoints those count as failed sign-ins,
            // and past ten a minute from one address the sign-in throttle
            // answers 429 (DESIGN §13) where the check expects 401. The
            // device pass runs the check on every operation it reaches,
            // and the site's trust suite asks every secured operation
            // without a token (401 before any input is read).
            (
                "an admin's token",
                tokens.admin.as_str(),
                &["--exclude-checks", "ignored_auth"][..],
            ),
        ];
        for (who, token, extra) in passes {
            let started = Instant::now();
            let mut cmd = Command::new(self.schemathesis_env()?.join("bin/st"));
            cmd.current_dir(work.path())
                .env(
                    "SCHEMATHESIS_HOOKS",
                    self.root.join("tests/schemathesis/hooks.py"),
                )
                .arg("--config-file")
                .arg(self.root.join("tests/schemathesis/schemathesis.toml"))
                .args(["--no-color", "run", &document, "--checks", "all"])
                .args(extra)
                .args(["--max-examples", &MAX_EXAMPLES.to_string()])
                .args(["--seed", &SEED.to_string()])
                .args(["--workers", "2", "--generation-database", "none"])
                .args(["--wait-for-schema", &START_TIMEOUT.as_secs().to_string()])
                .args(["--header", &format!("Authorization: Bearer {token}")]);
            let (passed, failed, ok) = fuzz_pass(&mut cmd)?;
            println!(
                "xtask: schemathesis with {who}: {passed} test cases passed, {failed} failures, in {:.0} s",
                started.elapsed().as_secs_f64()
            );
            fuzzed.passed += passed;
            fuzzed.failed += failed;
            if !ok {
                site.stop();
                // Kept, with the site's data and log, to look into.
                let kept = work.keep();
                bail!(
                    "schemathesis with {who} found {failed} failures against the OpenAPI document (the site's data and log are kept in {})",
                    kept.display()
                );
            }
        }
        site.stop();
        Ok(fuzzed)
    }
}

/// The tokens the fuzzer sends.
struct Tokens {
    device: String,
    admin: String,
}

/// Reference data (two bins, a unit, an operator), an admin and a device,
/// put in `data` through the site's own commands.
fn seed(site_bin: &Path, work: &Path, data: &Path) -> Result<Tokens> {
    let files = [
        ("bins", "bin,zone,location\nA-01,Z-A,L-1\nA-02,Z-A,L-1\n"),
        (
            "units",
            "epc,code,sku,state,bin\n3034257BF7194E4000000001,,SKU-1,in_stock,A-01\n",
        ),
        ("operators", "badge,name\nB-1,Ann\n"),
    ];
    let site = |args: &[&str]| -> Result<String> {
        let mut cmd = Command::new(site_bin);
        cmd.args(args).arg("--data").arg(data).stderr(Stdio::null());
        Ok(capture(&mut cmd)?.trim().to_owned())
    };
    for (kind, csv) in files {
        let file = work.join(format!("{kind}.csv"));
        std::fs::write(&file, csv)?;
        site(&["import", kind, &file.to_string_lossy()])?;
    }
    let admin = site(&["admin", "add", "fuzzer"])?;
    let device = site(&["device", "add", "HH-FUZZ", "--profile", "fxr90"])?;
    Ok(Tokens { device, admin })
}

/// `stockhop-site serve` on loopback ports the system gives it.
struct Served {
    child: Child,
    base: String,
    log: PathBuf,
}

impl Served {
    fn start(site_bin: &Path, data: &Path, www: &Path, work: &Path) -> Result<Served> {
        let log = work.join("site.log");
        let child = Command::new(site_bin)
            .args(["serve", "--data"])
            .arg(data)
            .args(["--http", "127.0.0.1:0", "--https", "127.0.0.1:0"])
            .args([
                "--terminal-http",
                "127.0.0.1:0",
                "--terminal-tcp",
                "127.0.0.1:0",
            ])
            .arg("--www")
            .arg(www)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log)?)
            .spawn()
            .context("starting stockhop-site serve")?;
        let mut served = Served {
            child,
            base: String::new(),
            log,
        };
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            let text = std::fs::read_to_string(&served.log).unwrap_or_default();
            let marker = "site server listening (http) addr=";
            if let Some(at) = text.find(marker) {
                let addr: String = text[at + marker.len()..]
                    .chars()
                    .take_while(|c| !c.is_whitespace())
                    .collect();
                served.base = format!("http://{addr}");
                return Ok(served);
            }
            if served.child.try_wait()?.is_some() || Instant::now() > deadline {
                served.stop();
                bail!("the fuzzed site did not start:\n{text}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Runs one pass, echoing its output: the test cases that passed, the
/// failures it found, and whether it passed.
fn fuzz_pass(cmd: &mut Command) -> Result<(u64, u64, bool)> {
    let mut child = cmd
        .stdout(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {cmd:?}"))?;
    let stdout = child.stdout.take().context("schemathesis's stdout")?;
    let mut cases = None;
    for line in BufReader::new(stdout).lines() {
        let line = line?;
        println!("{line}");
        if let Some(counts) = summary_counts(&line) {
            cases = Some(counts);
        }
    }
    let ok = child.wait()?.success();
    let (generated, failing) = cases.unwrap_or((0, u64::from(!ok)));
    let failed = if ok { 0 } else { failing.max(1) };
    Ok((generated.saturating_sub(failing), failed, ok))
}

/// The counts of schemathesis's closing `Test cases:` line, `N generated,
/// N passed` or `N generated, N found M unique failures[, …]`: the cases
/// drawn and the failures found.
fn summary_counts(line: &str) -> Option<(u64, u64)> {
    let line = line.trim();
    let generated = line.split_once(" generated, ")?;
    let total: u64 = generated.0.trim().parse().ok()?;
    let failures = generated
        .1
        .split_once(" unique failures")
        .and_then(|(before, _)| before.rsplit(' ').next()?.parse().ok())
        .unwrap_or(0);
    Some((total, failures))
}

#[cfg(test)]
mod tests {
    use super::summary_counts;

    #[test]
    fn reads_the_closing_counts() {
        assert_eq!(
            summary_counts("  2498 generated, 2498 passed"),
            Some((2498, 0))
        );
        assert_eq!(
            summary_counts("  1786 generated, 21 found 22 unique failures, 25 skipped"),
            Some((1786, 22))
        );
        assert_eq!(summary_counts("Seed: 123"), None);
    }
}
