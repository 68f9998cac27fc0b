//! `cargo xtask test`: every suite in order, stopping at the first
//! failure, with the pass and fail counts scraped from each runner's own
//! summary lines and tallied per suite.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};

use crate::benches;
use crate::disk::Disk;
use crate::postgres::{postgres_bin_dir, Postgres, BACKEND_VAR, POSTGRES_URL_VAR};
use crate::process::{run, step};
use crate::project::Project;
use crate::setup::Needs;

/// The site's integration tests, one binary (`site/tests/site/`) with a
/// module a suite.
const SITE_TESTS: &str = "site";

/// The suites of [`SITE_TESTS`] that `cargo xtask test` runs a second time
/// with the ledger on PostgreSQL, each selected by its module path: every
/// suite whose ledger goes through the test backend helper
/// (`site/tests/site/backend/`).
const POSTGRES_SUITES: &[&str] = &[
    "ledger_sync",
    "ledger_rules",
    "ledger_modes",
    "ledger_reference",
    "ledger_terminal",
    "ledger_admission",
    "ledger_crash",
    "ledger_cli",
    "site_view",
    "ledger_decisions",
    "ledger_rejections",
    "ledger_labels",
    "alerts",
    "central",
    "printers",
    "data_api",
    "rescue",
];

/// Seeds of the simulation every test run covers: about 22 s on two cores.
const SIM_SEEDS_IN_TEST: u64 = 2_000;

/// Pass and fail counts gathered from the test runners' own summary lines.
#[derive(Default)]
struct Tally {
    passed: u64,
    failed: u64,
    suites: Vec<(String, u64, u64)>,
}

impl Tally {
    /// Counts of one run of `suite`, added to the runs of it before.
    fn add(&mut self, suite: &str, passed: u64, failed: u64) {
        self.passed += passed;
        self.failed += failed;
        match self.suites.iter_mut().find(|(name, _, _)| name == suite) {
            Some((_, p, f)) => {
                *p += passed;
                *f += failed;
            }
            None => self.suites.push((suite.to_owned(), passed, failed)),
        }
    }
}

impl Project {
    pub fn test(&self) -> Result<()> {
        self.setup(Needs::All)?;
        let disk = Disk {
            places: vec![
                ("the build directory", self.target_dir()?),
                (
                    "the temp directory (PostgreSQL's test cluster)",
                    std::env::temp_dir(),
                ),
            ],
        };
        disk.report();
        self.test_steps().map_err(|err| disk.explain(err))
    }

    fn test_steps(&self) -> Result<()> {
        let mut tally = Tally::default();

        step("cargo fmt --check");
        run(self.cmd("cargo").args(["fmt", "--all", "--", "--check"]))?;
        step("cargo clippy (native)");
        run(self.cmd("cargo").args([
            "clippy",
            "--workspace",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ]))?;
        step("cargo clippy (wasm32)");
        run(self.cmd("cargo").args([
            "clippy",
            "--package",
            "stockhop",
            "--target",
            "wasm32-unknown-unknown",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ]))?;

        step("Prometheus alerting rules (promtool check rules, promtool test rules)");
        let rules = self.root.join("deploy/prometheus");
        run(self
            .cmd("promtool")
            .args(["check", "rules", "stockhop-alerts.yml"])
            .current_dir(&rules))?;
        run(self
            .cmd("promtool")
            .args(["test", "rules", "stockhop-alerts.test.yml"])
            .current_dir(&rules))?;

        step("PostgreSQL (a throwaway cluster for the ledger suites)");
        let bin = postgres_bin_dir().context("PostgreSQL's initdb is not installed")?;
        // Stopped and deleted when this returns, passed or failed.
        let postgres = Postgres::start(&bin)?;
        let postgres_url = postgres.url();
        println!("xtask: PostgreSQL on {postgres_url}");

        step("native tests (cargo test)");
        counted(
            self.cmd("cargo")
                .args(["test", "--workspace"])
                .env_remove(BACKEND_VAR)
                .env(POSTGRES_URL_VAR, &postgres_url),
            "native",
            &mut tally,
        )
        .map_err(|err| postgres.explain(err))?;

        postgres.drop_test_databases()?;

        step("native tests on PostgreSQL (the ledger suites again)");
        // A suite at a time, its databases dropped after it, so the
        // cluster holds one suite's databases (about 9 MB each) rather than
        // every suite's at once. `--workspace`, as in the step before, so
        // cargo resolves the same features and reuses that step's build
        // rather than building every dependency again for one package.
        for suite in POSTGRES_SUITES {
            let mut cmd = self.cmd("cargo");
            cmd.args(["test", "--workspace", "--test", SITE_TESTS, "--"])
                .arg(suite_filter(suite))
                .env(BACKEND_VAR, "postgres")
                .env(POSTGRES_URL_VAR, &postgres_url);
            let before = tally.passed;
            counted(&mut cmd, "native on PostgreSQL", &mut tally)
                .map_err(|err| postgres.explain(err))?;
            if tally.passed == before {
                bail!("no test of the site's suite {suite} ran on PostgreSQL: is `{}` still a module of site/tests/site/?", suite_filter(suite));
            }
            postgres.drop_test_databases()?;
        }
        postgres.warn_of_crashes();

        step("simulation (seeded handhelds, network faults and the ledger)");
        let mut cmd = self.sim_cmd();
        cmd.args(["--seeds", &SIM_SEEDS_IN_TEST.to_string(), "--from", "1"]);
        counted(&mut cmd, "simulation", &mut tally)?;

        step("browser tests (wasm-pack test, headless Chromium: page and service worker)");
        self.write_webdriver_json()?;
        let t = &self.settings.test;
        let mut cmd = self.cmd("wasm-pack");
        cmd.arg("test");
        if t.headless {
            cmd.arg("--headless");
        }
        cmd.arg(format!("--{}", t.browser))
            .arg("--chromedriver")
            .arg(&t.chromedriver)
            .env("WASM_BINDGEN_TEST_TIMEOUT", t.timeout_secs.to_string());
        counted(&mut cmd, "browser", &mut tally)?;

        step("end-to-end tests (stockhop-site serve + the PWA in headless Chromium)");
        self.build_wasm()?;
        // The workspace's features again, so the native steps' build of
        // the dependencies serves this one.
        run(self.cmd("cargo").args(["build", "--workspace", "--bins"]))?;
        let mut cmd = self.cmd("node");
        cmd.args(["--test", "--test-concurrency=1", "--test-reporter=tap"]);
        let mut specs: Vec<PathBuf> = std::fs::read_dir(self.root.join("tests/e2e"))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.to_string_lossy().ends_with(".test.mjs"))
            .collect();
        specs.sort();
        if specs.is_empty() {
            bail!("no end-to-end specs in tests/e2e");
        }
        cmd.args(&specs)
            .env(
                "STOCKHOP_SITE_BIN",
                self.target_dir()?.join("debug/stockhop-site"),
            )
            .env("STOCKHOP_WWW", self.root.join("www"))
            .env("STOCKHOP_CHROMIUM", &t.chromium)
            .env("STOCKHOP_CHROMIUM_ARGS", t.chromium_args.join(" "))
            .env("STOCKHOP_ARTIFACTS", self.root.join("artifacts"));
        counted(&mut cmd, "end-to-end", &mut tally)?;

        step("OpenAPI fuzzing (schemathesis --checks all, both token kinds, a live site)");
        let fuzzed = self.fuzz_openapi()?;
        tally.add("OpenAPI fuzzing (test cases)", fuzzed.passed, fuzzed.failed);

        step("benchmarks, quick mode (every bench: its own paths at small sizes, its tables)");
        let ran = benches::run_quick(self.quick_benches(&postgres_url)?, &self.target_dir()?)?;
        tally.add("benchmarks (quick mode)", ran, 0);

        println!();
        for (suite, passed, failed) in &tally.suites {
            println!("xtask: {suite}: {passed} passed, {failed} failed");
        }
        if tally.passed == 0 || tally.suites.iter().any(|(_, passed, _)| *passed == 0) {
            bail!("a suite ran no test");
        }
        println!("tests: {} passed, {} failed", tally.passed, tally.failed);
        if tally.failed > 0 {
            bail!("{} tests failed", tally.failed);
        }
        Ok(())
    }

    /// Every bench, built and ready to run in its quick mode: the site
    /// benches in the `dev` profile over the native steps' build (with the
    /// test cluster for the PostgreSQL parts), then the node benches over
    /// the wasm package and the site binary the end-to-end step built.
    fn quick_benches(&self, postgres_url: &str) -> Result<Vec<benches::Bench>> {
        let site = benches::site_benches(&self.root)?;
        let mut build = self.cmd("cargo");
        build.args(["bench", "--workspace", "--profile", "dev", "--no-run"]);
        for name in &site {
            build.args(["--bench", name]);
        }
        run(&mut build)?;
        let mut all = Vec::new();
        for name in site {
            let mut command = self.cmd("cargo");
            command
                .args(["bench", "--workspace", "--profile", "dev", "--bench", &name])
                .env(POSTGRES_URL_VAR, postgres_url)
                .env("STOCKHOP_BENCH_POSTGRES", postgres_url);
            all.push(benches::Bench { name, command });
        }
        let site_bin = self.target_dir()?.join("debug/stockhop-site");
        for script in benches::node_benches(&self.root)? {
            let name = script
                .file_stem()
                .and_then(|stem| stem.to_str())
                .context("a bench script's name")?
                .to_owned();
            let mut command = self.cmd("node");
            command
                .arg(&script)
                .current_dir(self.root.join("bench"))
                .env("STOCKHOP_SITE_BIN", &site_bin);
            all.push(benches::Bench { name, command });
        }
        Ok(all)
    }

    /// wasm-bindgen's test runner reads the browser's capabilities from
    /// `webdriver.json` in the crate root; it is generated from
    /// wasm-pack.toml so that file stays the one place for the flags.
    fn write_webdriver_json(&self) -> Result<()> {
        let t = &self.settings.test;
        let capabilities = serde_json::json!({
            "goog:chromeOptions": {
                "binary": t.chromium,
                "args": t.chromium_args,
            }
        });
        std::fs::write(
            self.root.join("webdriver.json"),
            format!("{capabilities}\n"),
        )
        .context("writing webdriver.json")
    }
}

/// Runs a test command, echoing its output, and adds the counts from its
/// runner's summary lines (`test result: … N passed; M failed` for Rust
/// test harnesses, `# pass N` / `# fail N` for node's TAP reporter).
fn counted(cmd: &mut Command, suite: &str, tally: &mut Tally) -> Result<()> {
    let mut child = cmd
        .stdout(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {cmd:?}"))?;
    let stdout = child.stdout.take().context("child stdout")?;
    let (mut passed, mut failed) = (0, 0);
    for line in BufReader::new(stdout).lines() {
        let line = line?;
        println!("{line}");
        if let Some(rest) = line.trim().strip_prefix("test result: ") {
            passed += number_before(rest, " passed");
            failed += number_before(rest, " failed");
        } else if let Some(n) = line.strip_prefix("# pass ") {
            passed += n.trim().parse::<u64>().unwrap_or(0);
        } else if let Some(n) = line.strip_prefix("# fail ") {
            failed += n.trim().parse::<u64>().unwrap_or(0);
        } else if let Some(rest) = line
            .strip_prefix("sim: ")
            .filter(|r| r.contains(" seeds from "))
        {
            // `sim: N seeds from S, V violations`: a seed is a test.
            let violations = number_before(rest, " violations");
            passed += number_before(rest, " seeds").saturating_sub(violations);
            failed += violations;
        }
    }
    let status = child.wait()?;
    tally.add(suite, passed, failed);
    if !status.success() {
        bail!("{suite} tests failed ({passed} passed, {failed} failed): {status}");
    }
    Ok(())
}

/// The test-name filter that selects one suite of the site's test binary:
/// its module path, `ledger_sync::` (a test's name there is
/// `ledger_sync::a_replay_…`).
fn suite_filter(suite: &str) -> String {
    format!("{suite}::")
}

/// The number written just before `marker` in `text` (`"3 passed"` → 3).
fn number_before(text: &str, marker: &str) -> u64 {
    text.find(marker)
        .and_then(|end| {
            let start = text[..end]
                .rfind(|c: char| !c.is_ascii_digit())
                .map_or(0, |i| i + 1);
            text[start..end].parse().ok()
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_counts_from_runner_summaries() {
        let line =
            "ok. 17 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s";
        assert_eq!(number_before(line, " passed"), 17);
        assert_eq!(number_before(line, " failed"), 2);
        assert_eq!(number_before("nothing here", " passed"), 0);
    }

    #[test]
    fn a_filtered_run_counts_only_what_ran() {
        let line = "test result: ok. 9 passed; 0 failed; 0 ignored; 0 measured; 237 filtered out; finished in 4.20s";
        let rest = line.strip_prefix("test result: ").unwrap();
        assert_eq!(number_before(rest, " passed"), 9);
        assert_eq!(number_before(rest, " failed"), 0);
    }

    #[test]
    fn each_postgres_suite_is_a_module_of_the_site_tests() {
        let main = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../site/tests")
                .join(SITE_TESTS)
                .join("main.rs"),
        )
        .unwrap();
        for suite in POSTGRES_SUITES {
            assert!(
                main.lines().any(|line| line == format!("mod {suite};")),
                "{suite} is not a module of site/tests/{SITE_TESTS}/main.rs"
            );
            assert_eq!(suite_filter(suite), format!("{suite}::"));
        }
    }

    #[test]
    fn runs_of_one_suite_add_up_under_its_name() {
        let mut tally = Tally::default();
        tally.add("native", 10, 0);
        tally.add("native on PostgreSQL", 4, 1);
        tally.add("native on PostgreSQL", 6, 0);
        assert_eq!(
            tally.suites,
            [
                ("native".to_owned(), 10, 0),
                ("native on PostgreSQL".to_owned(), 10, 1)
            ]
        );
        assert_eq!((tally.passed, tally.failed), (20, 1));
    }
}
