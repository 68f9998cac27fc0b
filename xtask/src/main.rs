//! The project's build, serve and test entry point: `cargo xtask <command>`.
//!
//! It installs what a fresh machine lacks (printing each install), builds the
//! wasm package as `wasm-pack.toml` says, and runs the site server or every
//! test suite (the ledger suites twice: on SQLite, then on a throwaway
//! PostgreSQL cluster). Every step is idempotent and quick when its tool is
//! already there. Nothing is downloaded from outside the package registries:
//! tools come from crates.io (`cargo install`), Debian (`apt-get`) and npm.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use anyhow::{bail, Context, Result};
use serde::Deserialize;

mod benches;

const USAGE: &str = "\
usage: cargo xtask <command> [-- args]

commands:
  setup        install the toolchain a fresh machine lacks
  build-wasm   build the wasm package into www/pkg (and optimise it)
  serve        setup, build-wasm, then run `stockhop-site serve` (args after --)
  sim          the seeded simulation: `cargo xtask sim [--seeds N] [--from S]`
  fuzz         one parser's fuzz target: `cargo xtask fuzz TARGET [--seconds N]`
               (cargo fuzz on the nightly toolchain; targets in fuzz/fuzz_targets)
  postgres     a throwaway PostgreSQL cluster on loopback for running a ledger
               suite by hand: prints its URL, stops and deletes it on Ctrl-C
  test         setup, then fmt, clippy (native + wasm32), native tests, the
               ledger suites again on PostgreSQL, the simulation (2,000
               seeds), the browser suite (wasm-pack test), the end-to-end
               suite and every benchmark in its quick mode";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("setup") => Project::load().and_then(|p| p.setup(Needs::All)),
        Some("build-wasm") => {
            Project::load().and_then(|p| p.setup(Needs::Build).and_then(|()| p.build_wasm()))
        }
        Some("serve") => Project::load().and_then(|p| p.serve(&args[1..])),
        Some("sim") => Project::load().and_then(|p| p.sim(&args[1..])),
        Some("fuzz") => Project::load().and_then(|p| p.fuzz(&args[1..])),
        Some("postgres") => Project::load().and_then(|p| p.postgres()),
        Some("test") => Project::load().and_then(|p| p.without_incremental().test()),
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("xtask: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// `wasm-pack.toml`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Settings {
    build: BuildSettings,
    wasm_opt: WasmOptSettings,
    budget: BudgetSettings,
    test: TestSettings,
    tools: ToolSettings,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BuildSettings {
    target: String,
    out_dir: PathBuf,
    profile: String,
    typescript: bool,
}

/// The optimised module's size ceilings, checked by `build-wasm`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BudgetSettings {
    max_kib: u64,
    max_gzip_kib: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WasmOptSettings {
    enabled: bool,
    path: String,
    args: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TestSettings {
    browser: String,
    headless: bool,
    chromedriver: PathBuf,
    chromium: PathBuf,
    chromium_args: Vec<String>,
    timeout_secs: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolSettings {
    wasm_pack_version: String,
}

struct Project {
    root: PathBuf,
    settings: Settings,
    /// The `wasm-bindgen` version Cargo.lock pins.
    wasm_bindgen_version: String,
    /// Whether cargo keeps incremental state (`CARGO_INCREMENTAL`, unless
    /// the caller set it).
    incremental: bool,
}

#[derive(Clone, Copy, PartialEq)]
enum Needs {
    /// Serving: the wasm build tools.
    Build,
    /// Testing: the build tools, the browser, the end-to-end driver and
    /// PostgreSQL.
    All,
}

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
    fn load() -> Result<Project> {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .context("xtask lives inside the repository")?
            .to_owned();
        let text = std::fs::read_to_string(root.join("wasm-pack.toml"))
            .context("reading wasm-pack.toml")?;
        let settings: Settings = toml::from_str(&text).context("parsing wasm-pack.toml")?;
        let lock =
            std::fs::read_to_string(root.join("Cargo.lock")).context("reading Cargo.lock")?;
        let wasm_bindgen_version =
            locked_version(&lock, "wasm-bindgen").context("wasm-bindgen is not in Cargo.lock")?;
        Ok(Project {
            root,
            settings,
            wasm_bindgen_version,
            incremental: true,
        })
    }

    /// For a whole test run: cargo keeps no incremental state, which a
    /// run from a clean checkout never reads again and which was a third
    /// of what the run wrote to disk (about 1.4 GiB of 4.2, measured with it on).
    fn without_incremental(self) -> Project {
        Project {
            incremental: false,
            ..self
        }
    }

    fn cmd(&self, program: &str) -> Command {
        let mut cmd = Command::new(program);
        cmd.current_dir(&self.root);
        if !self.incremental && std::env::var_os("CARGO_INCREMENTAL").is_none() {
            cmd.env("CARGO_INCREMENTAL", "0");
        }
        cmd
    }

    /// Installs what is missing. Each check is a version probe, so a
    /// machine that has everything pays a few milliseconds per tool.
    fn setup(&self, needs: Needs) -> Result<()> {
        let installed = capture(self.cmd("rustup").args(["target", "list", "--installed"]))?;
        if !installed
            .lines()
            .any(|l| l.trim() == "wasm32-unknown-unknown")
        {
            announce("the wasm32-unknown-unknown target (rustup)");
            run(self
                .cmd("rustup")
                .args(["target", "add", "wasm32-unknown-unknown"]))?;
        }
        let components = capture(
            self.cmd("rustup")
                .args(["component", "list", "--installed"]),
        )?;
        for component in ["clippy", "rustfmt"] {
            if !components.lines().any(|l| l.starts_with(component)) {
                announce(&format!("the {component} component (rustup)"));
                run(self.cmd("rustup").args(["component", "add", component]))?;
            }
        }
        let wanted_pack = &self.settings.tools.wasm_pack_version;
        if !version_output("wasm-pack").is_some_and(|v| v.contains(wanted_pack.as_str())) {
            announce(&format!("wasm-pack {wanted_pack} (cargo install)"));
            run(self.cmd("cargo").args([
                "install",
                "--locked",
                "wasm-pack",
                "--version",
                wanted_pack,
            ]))?;
        }
        let wanted_bindgen = &self.wasm_bindgen_version;
        if !version_output("wasm-bindgen")
            .is_some_and(|v| v.split_whitespace().any(|w| w == wanted_bindgen))
        {
            // Without --locked: the CLI's own lock file names a crate
            // version the registry no longer serves.
            announce(&format!(
                "wasm-bindgen-cli {wanted_bindgen}, matching Cargo.lock (cargo install)"
            ));
            run(self.cmd("cargo").args([
                "install",
                "--force",
                "wasm-bindgen-cli",
                "--version",
                wanted_bindgen,
            ]))?;
        }
        let mut debian = Vec::new();
        if version_output("node").is_none() {
            debian.extend(["nodejs", "npm"]);
        }
        if needs == Needs::All {
            if !self.settings.test.chromium.exists() {
                debian.push("chromium");
            }
            if !self.settings.test.chromedriver.exists() {
                debian.push("chromium-driver");
            }
            // certutil: the HTTPS end-to-end test makes Chromium trust the
            // site CA through an NSS database, as a device trusts it once.
            if !on_path("certutil") {
                debian.push("libnss3-tools");
            }
            // The ledger suites' second backend: initdb and pg_ctl for a
            // throwaway cluster (Debian's server package; its own cluster
            // is not used).
            if postgres_bin_dir().is_none() {
                debian.push("postgresql");
            }
            // promtool checks the shipped Prometheus alerting rules.
            if !on_path("promtool") {
                debian.push("prometheus");
            }
        }
        if !debian.is_empty() {
            self.apt_install(&debian)?;
        }
        if self.settings.wasm_opt.enabled && version_output(&self.wasm_opt_path()).is_none() {
            announce("binaryen's wasm-opt (npm ci in xtask/npm)");
            run(self
                .cmd("npm")
                .args(["ci", "--no-audit", "--no-fund"])
                .current_dir(self.root.join("xtask/npm")))?;
        }
        if needs == Needs::All {
            let e2e = self.root.join("tests/e2e");
            if !npm_dependencies_installed(&e2e)? {
                announce(
                    "the end-to-end driver playwright-core and jsQR (npm ci, no browser download)",
                );
                run(self
                    .cmd("npm")
                    .args(["ci", "--no-audit", "--no-fund"])
                    .current_dir(&e2e))?;
            }
            let bench = self.root.join("bench");
            if !npm_dependencies_installed(&bench)? {
                announce("the node benches' playwright-core and binaryen (npm ci in bench)");
                run(self
                    .cmd("npm")
                    .args(["ci", "--no-audit", "--no-fund"])
                    .current_dir(&bench))?;
            }
        }
        Ok(())
    }

    /// Installs Debian packages, announcing them (through sudo when not
    /// root).
    fn apt_install(&self, packages: &[&str]) -> Result<()> {
        announce(&format!("{} (apt-get)", packages.join(", ")));
        let sudo = !is_root();
        let apt = |args: &[&str]| {
            let mut cmd = if sudo {
                self.cmd("sudo")
            } else {
                self.cmd("apt-get")
            };
            if sudo {
                cmd.arg("apt-get");
            }
            cmd.args(args).env("DEBIAN_FRONTEND", "noninteractive");
            run(&mut cmd)
        };
        apt(&["update"])?;
        let mut install = vec!["install", "-y", "--no-install-recommends"];
        install.extend(packages);
        apt(&install)
    }

    /// The directory of PostgreSQL's server programs, installing Debian's
    /// `postgresql` first when there is none.
    fn ensure_postgres(&self) -> Result<PathBuf> {
        if let Some(bin) = postgres_bin_dir() {
            return Ok(bin);
        }
        self.apt_install(&["postgresql"])?;
        postgres_bin_dir()
            .context("`postgresql` is installed but initdb is not where Debian puts it")
    }

    /// `cargo xtask postgres`: a throwaway cluster for running a ledger
    /// suite by hand, until Ctrl-C stops it and deletes its directory.
    fn postgres(&self) -> Result<()> {
        let cluster = Postgres::start(&self.ensure_postgres()?)?;
        let url = cluster.url();
        println!(
            "xtask: PostgreSQL on {url} (data in {})",
            cluster.dir.path().display()
        );
        println!("xtask: run a ledger suite on it from another shell:");
        println!(
            "  {BACKEND_VAR}=postgres {POSTGRES_URL_VAR}={url} cargo test -p stockhop-site --test ledger_rules"
        );
        println!("xtask: Ctrl-C stops it and deletes its directory");
        // The Ctrl-C handler `Postgres::start` installed stops the cluster
        // and ends the process.
        loop {
            std::thread::park();
        }
    }

    /// Cargo's target directory as cargo itself resolves it
    /// (`CARGO_TARGET_DIR`, `build.target-dir`, or `target/`).
    fn target_dir(&self) -> Result<PathBuf> {
        let metadata =
            capture(
                self.cmd("cargo")
                    .args(["metadata", "--format-version", "1", "--no-deps"]),
            )?;
        let metadata: serde_json::Value =
            serde_json::from_str(&metadata).context("reading `cargo metadata`")?;
        metadata["target_directory"]
            .as_str()
            .map(PathBuf::from)
            .context("`cargo metadata` names no target directory")
    }

    /// The wasm-opt executable wasm-pack.toml names, resolved against the
    /// repository root when it is a relative path.
    fn wasm_opt_path(&self) -> String {
        let path = &self.settings.wasm_opt.path;
        if path.contains('/') {
            self.root.join(path).to_string_lossy().into_owned()
        } else {
            path.clone()
        }
    }

    /// Builds the wasm package into the PWA and optimises it.
    fn build_wasm(&self) -> Result<()> {
        let build = &self.settings.build;
        let mut cmd = self.cmd("wasm-pack");
        cmd.args(["build", "--target", &build.target, "--out-dir"])
            .arg(self.root.join(&build.out_dir))
            .arg(format!("--{}", build.profile));
        if !build.typescript {
            cmd.arg("--no-typescript");
        }
        cmd.env("CARGO_ENCODED_RUSTFLAGS", self.shipped_rustflags());
        step("wasm-pack build");
        run(&mut cmd)?;
        let wasm = self.root.join(&build.out_dir).join("stockhop_bg.wasm");
        if self.settings.wasm_opt.enabled {
            step("wasm-opt");
            let before = std::fs::metadata(&wasm)?.len();
            let optimised = wasm.with_extension("opt.wasm");
            run(self
                .cmd(&self.wasm_opt_path())
                .args(&self.settings.wasm_opt.args)
                .arg(&wasm)
                .arg("-o")
                .arg(&optimised))?;
            std::fs::rename(&optimised, &wasm)?;
            let after = std::fs::metadata(&wasm)?.len();
            println!("xtask: stockhop_bg.wasm {before} -> {after} bytes");
        }
        self.check_budget(&wasm)?;
        Ok(())
    }

    /// Fails the build when the module is over a ceiling of
    /// `wasm-pack.toml`'s `[budget]`, raw or gzipped (level 9, as a
    /// server would compress it).
    fn check_budget(&self, wasm: &std::path::Path) -> Result<()> {
        use std::io::Write;
        let module = std::fs::read(wasm)?;
        let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        gzip.write_all(&module)?;
        let gzipped = gzip.finish()?.len() as u64;
        let raw = module.len() as u64;
        let budget = &self.settings.budget;
        println!(
            "xtask: stockhop_bg.wasm {:.1} KiB raw (ceiling {} KiB), {:.1} KiB gzipped (ceiling {} KiB)",
            raw as f64 / 1024.0,
            budget.max_kib,
            gzipped as f64 / 1024.0,
            budget.max_gzip_kib
        );
        if raw > budget.max_kib * 1024 || gzipped > budget.max_gzip_kib * 1024 {
            bail!(
                "stockhop_bg.wasm is over its size budget ({raw} bytes raw, {gzipped} gzipped; \
                 ceilings {} KiB and {} KiB in wasm-pack.toml)",
                budget.max_kib,
                budget.max_gzip_kib
            );
        }
        Ok(())
    }

    /// Compiler flags for the module that ships to handhelds: the caller's
    /// own `RUSTFLAGS`, plus path remaps so the source paths panic
    /// locations carry name crates and files, not the build machine's
    /// directories (the module is smaller and the same on every machine).
    /// rustc applies the last prefix that matches, so the longer ones follow.
    /// Encoded (0x1f-separated) so a directory with a space stays whole.
    fn shipped_rustflags(&self) -> String {
        let mut flags: Vec<String> = std::env::var("RUSTFLAGS")
            .unwrap_or_default()
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        let cargo_home = std::env::var_os("CARGO_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cargo")));
        if let Some(cargo_home) = cargo_home {
            // Each registry's own directory (`index.crates.io-<hash>`) goes
            // too: its 40 characters repeat in every dependency's location.
            let registry = cargo_home.join("registry").join("src");
            flags.push(format!("--remap-path-prefix={}=crates", registry.display()));
            if let Ok(indexes) = std::fs::read_dir(&registry) {
                for index in indexes.flatten() {
                    flags.push(format!(
                        "--remap-path-prefix={}=crates",
                        index.path().display()
                    ));
                }
            }
        }
        flags.push(format!(
            "--remap-path-prefix={}=stockhop",
            self.root.display()
        ));
        flags.join("\u{1f}")
    }

    fn serve(&self, args: &[String]) -> Result<()> {
        self.setup(Needs::Build)?;
        self.build_wasm()?;
        let extra = match args.first().map(String::as_str) {
            Some("--") => &args[1..],
            _ => args,
        };
        step("stockhop-site serve");
        let mut cmd = self.cmd("cargo");
        cmd.args([
            "run",
            "--profile",
            "site",
            "--package",
            "stockhop-site",
            "--",
            "serve",
            "--www",
        ])
        .arg(self.root.join("www"))
        .args(extra);
        run(&mut cmd)
    }

    /// The simulation, built in the site's optimised profile (a campaign
    /// runs thousands of seeds), with `args` passed on.
    fn sim(&self, args: &[String]) -> Result<()> {
        let mut cmd = self.sim_cmd();
        cmd.args(args);
        run(&mut cmd)
    }

    fn sim_cmd(&self) -> Command {
        let mut cmd = self.cmd("cargo");
        cmd.args([
            "run",
            "--quiet",
            "--profile",
            "site",
            "--package",
            "stockhop-sim",
            "--",
        ]);
        cmd
    }

    /// Runs one fuzz target for `--seconds` (default 600) from its
    /// committed corpus (`fuzz/corpus/TARGET`, read only): new inputs go to
    /// `target/fuzz/corpus/TARGET`, a crashing input to
    /// `target/fuzz/artifacts/TARGET/`. Without sanitizers (the parsers are
    /// safe Rust: a finding is a panic or a failed assertion) and with
    /// debug assertions, so an overflow is a finding too.
    fn fuzz(&self, args: &[String]) -> Result<()> {
        let (target, seconds) = match args {
            [target] => (target, FUZZ_SECONDS_DEFAULT),
            [target, flag, n] if flag == "--seconds" => (
                target,
                n.parse::<u64>()
                    .with_context(|| format!("--seconds {n:?}: expected a whole number"))?,
            ),
            _ => bail!("usage: cargo xtask fuzz TARGET [--seconds N]"),
        };
        let source = self
            .root
            .join("fuzz/fuzz_targets")
            .join(format!("{target}.rs"));
        if !source.exists() {
            bail!("no fuzz target {target:?} (fuzz/fuzz_targets/{target}.rs)");
        }
        let toolchains = capture(self.cmd("rustup").args(["toolchain", "list"]))?;
        if !toolchains.lines().any(|l| l.starts_with("nightly")) {
            bail!("cargo fuzz needs the nightly toolchain (`rustup toolchain install nightly`)");
        }
        if !capture(self.cmd("cargo").args(["--list"]))?
            .lines()
            .any(|l| l.trim().starts_with("fuzz"))
        {
            announce("cargo-fuzz (cargo install)");
            run(self
                .cmd("cargo")
                .args(["install", "--locked", "cargo-fuzz"]))?;
        }
        let work = self.root.join("target/fuzz/corpus").join(target);
        let artifacts = self.root.join("target/fuzz/artifacts").join(target);
        std::fs::create_dir_all(&work)?;
        std::fs::create_dir_all(&artifacts)?;
        run(self
            .cmd("cargo")
            .current_dir(self.root.join("fuzz"))
            .args(["+nightly", "fuzz", "run", target])
            .args(["--sanitizer", "none", "--debug-assertions"])
            .arg(&work)
            .arg(self.root.join("fuzz/corpus").join(target))
            .arg("--")
            .arg(format!("-max_total_time={seconds}"))
            .arg(format!("-artifact_prefix={}/", artifacts.display()))
            .arg("-print_final_stats=1"))
    }

    fn test(&self) -> Result<()> {
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
        // all 82 tests' at once. `--workspace`, as in the step before, so
        // cargo resolves the same features and reuses that step's build
        // rather than building every dependency again for one package.
        for suite in POSTGRES_SUITES {
            let mut cmd = self.cmd("cargo");
            cmd.args(["test", "--workspace", "--test", suite])
                .env(BACKEND_VAR, "postgres")
                .env(POSTGRES_URL_VAR, &postgres_url);
            counted(&mut cmd, "native on PostgreSQL", &mut tally)
                .map_err(|err| postgres.explain(err))?;
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

/// The site test binaries `cargo xtask test` runs a second time with the
/// ledger on PostgreSQL: every suite whose ledger goes through the test
/// backend helper (`site/tests/backend/`).
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
    "alerts",
    "central",
    "printers",
    "data_api",
];

/// A little more than one whole `cargo xtask test` writes from a clean
/// checkout (about 3.4 GiB of build, up to 0.3 GiB of test cluster): with
/// less free the run says so before it starts.
const TEST_DISK_WANTED_BYTES: u64 = 5 << 30;
/// Free space under which a failed step is put down to a full disk, as a
/// build or a PostgreSQL WAL write fails on one.
const DISK_NEARLY_FULL_BYTES: u64 = 512 << 20;

/// The places a test run writes to, and how much room each has.
struct Disk {
    places: Vec<(&'static str, PathBuf)>,
}

impl Disk {
    /// Bytes free to this user on the filesystem of each place (of its
    /// nearest existing ancestor, as the build directory may not exist yet).
    fn free(&self) -> Vec<(&'static str, &Path, Option<u64>)> {
        self.places
            .iter()
            .map(|(what, path)| {
                let existing = path.ancestors().find(|p| p.exists()).unwrap_or(path);
                (*what, path.as_path(), fs4::available_space(existing).ok())
            })
            .collect()
    }

    fn report(&self) {
        for (what, path, free) in self.free() {
            let Some(free) = free else {
                println!(
                    "xtask: cannot tell the free space of {what} ({})",
                    path.display()
                );
                continue;
            };
            println!("xtask: {} free for {what} ({})", gib(free), path.display());
            if free < TEST_DISK_WANTED_BYTES {
                println!(
                    "xtask: warning: a whole test run from a clean checkout writes about {}; \
                     a step may fail for want of disk",
                    gib(TEST_DISK_WANTED_BYTES)
                );
            }
        }
    }

    /// `err`, with the free space of any place that is nearly full.
    fn explain(&self, err: anyhow::Error) -> anyhow::Error {
        let full: Vec<String> = self
            .free()
            .into_iter()
            .filter_map(|(what, path, free)| {
                let free = free.filter(|&f| f < DISK_NEARLY_FULL_BYTES)?;
                Some(format!(
                    "{what} ({}) has {} free",
                    path.display(),
                    gib(free)
                ))
            })
            .collect();
        if full.is_empty() {
            return err;
        }
        err.context(format!(
            "the disk is nearly full: {}; a build or a database write that fails there fails the step",
            full.join(", ")
        ))
    }
}

fn gib(bytes: u64) -> String {
    format!("{:.2} GiB", bytes as f64 / f64::from(1u32 << 30))
}

/// The test cluster's WAL: a checkpoint at least every 96 MB written,
/// and no more than 32 MB of old segments kept for reuse.
const TEST_MAX_WAL_SIZE: &str = "96MB";
const TEST_MIN_WAL_SIZE: &str = "32MB";
/// What marks a line of the server's log worth showing when a suite
/// fails: a crash, a restart, a shutdown or a fatal error.
const SERVER_LOG_NOTABLE: &[&str] = &[
    "PANIC:",
    "FATAL:",
    "was terminated by signal",
    "terminating any other active server processes",
    "all server processes terminated",
    "database system was interrupted",
    "database system is shut down",
    "received fast shutdown request",
    "received immediate shutdown request",
    "No space left on device",
];
/// What marks a crash (and the restart it forces) in the server's log.
const SERVER_LOG_CRASH: &[&str] = &[
    "PANIC:",
    "was terminated by signal",
    "terminating any other active server processes",
    "No space left on device",
];
/// At most this many of those lines, the latest: enough to see a crash
/// and the restart after it without burying the test output.
const SERVER_LOG_LINES_SHOWN: usize = 40;

/// Which backend the ledger suites run on (`postgres`; SQLite unset).
const BACKEND_VAR: &str = "STOCKHOP_TEST_BACKEND";
/// The throwaway cluster's admin URL, for the suites to create their
/// databases on.
const POSTGRES_URL_VAR: &str = "STOCKHOP_TEST_POSTGRES";
/// Where Debian keeps each PostgreSQL major version's server programs.
const DEBIAN_POSTGRES_DIR: &str = "/usr/lib/postgresql";
/// The major version the site's ledger targets, taken first when a
/// machine has several.
const POSTGRES_MAJOR: &str = "15";
/// The cluster's superuser (initdb `-U`), the same whoever runs xtask.
const POSTGRES_ROLE: &str = "postgres";
/// The system account the server runs as when xtask is root (initdb
/// refuses root); Debian's package creates it.
const POSTGRES_OS_USER: &str = "postgres";
/// Tries at starting the server: the free port picked may be taken by
/// another process before the server binds it.
const POSTGRES_START_TRIES: u32 = 5;

/// The programs of the newest PostgreSQL installed: Debian's
/// `/usr/lib/postgresql/15/bin` first, else the highest version there,
/// else the directory of an `initdb` on PATH (other systems).
fn postgres_bin_dir() -> Option<PathBuf> {
    let debian = Path::new(DEBIAN_POSTGRES_DIR);
    let preferred = debian.join(POSTGRES_MAJOR).join("bin");
    if preferred.join("initdb").is_file() {
        return Some(preferred);
    }
    let newest = std::fs::read_dir(debian).ok().and_then(|versions| {
        versions
            .flatten()
            .filter_map(|entry| {
                let major: u32 = entry.file_name().to_str()?.parse().ok()?;
                let bin = entry.path().join("bin");
                bin.join("initdb").is_file().then_some((major, bin))
            })
            .max()
            .map(|(_, bin)| bin)
    });
    newest.or_else(|| {
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path).find(|dir| dir.join("initdb").is_file())
    })
}

/// A PostgreSQL server run by xtask: its programs, data directory and
/// the account it runs as. Cloned into the Ctrl-C handler.
#[derive(Clone)]
struct Server {
    bin: PathBuf,
    /// The temporary directory: the data directory `data/`, the log and
    /// the server's Unix socket.
    home: PathBuf,
    as_postgres: bool,
}

impl Server {
    /// One of the server's programs, run as the server's account from
    /// its directory (the account may not enter the caller's).
    fn tool(&self, name: &str) -> Command {
        let program = self.bin.join(name);
        let mut cmd = if self.as_postgres {
            let mut cmd = Command::new("runuser");
            cmd.args(["-u", POSTGRES_OS_USER, "--"]).arg(program);
            cmd
        } else {
            Command::new(program)
        };
        cmd.current_dir(&self.home);
        cmd
    }

    fn data(&self) -> PathBuf {
        self.home.join("data")
    }

    fn log(&self) -> PathBuf {
        self.home.join("server.log")
    }

    /// Stops the server if it runs (its pid file is there).
    fn stop(&self) -> Result<()> {
        if !self.data().join("postmaster.pid").exists() {
            return Ok(());
        }
        quiet(
            self.tool("pg_ctl")
                .arg("-D")
                .arg(self.data())
                .args(["stop", "-m", "fast", "-w"]),
        )
    }
}

/// A throwaway PostgreSQL cluster on a loopback port, trusting every
/// local connection. Dropping it stops the server and deletes its
/// directory; so does Ctrl-C (or SIGTERM) while it runs.
struct Postgres {
    server: Server,
    port: u16,
    /// Deleted after `drop` has stopped the server.
    dir: tempfile::TempDir,
}

impl Postgres {
    fn start(bin: &Path) -> Result<Postgres> {
        let dir = tempfile::Builder::new()
            .prefix("stockhop-postgres-")
            .tempdir()
            .context("creating the cluster's temporary directory")?;
        let as_postgres = is_root();
        if as_postgres {
            run(Command::new("chown")
                .arg(format!("{POSTGRES_OS_USER}:"))
                .arg(dir.path()))?;
        }
        let server = Server {
            bin: bin.to_owned(),
            home: dir.path().to_owned(),
            as_postgres,
        };
        // `--no-locale`: byte-order collation, as SQLite's BINARY.
        // `--no-sync`: the cluster lives for one run.
        quiet(
            server
                .tool("initdb")
                .args(["-A", "trust", "-U", POSTGRES_ROLE, "-E", "UTF8"])
                .args(["--no-locale", "--no-sync", "-D"])
                .arg(server.data()),
        )
        .context("initdb")?;
        let mut cluster = Postgres {
            server,
            port: 0,
            dir,
        };
        let handler = cluster.server.clone();
        ctrlc::set_handler(move || {
            if let Err(err) = handler.stop() {
                eprintln!("xtask: stopping PostgreSQL: {err:#}");
            }
            let _ = std::fs::remove_dir_all(&handler.home);
            eprintln!("xtask: PostgreSQL stopped and its directory deleted");
            std::process::exit(130);
        })
        .context("installing the Ctrl-C handler")?;
        let mut tries = 0;
        loop {
            tries += 1;
            cluster.port = free_loopback_port()?;
            // fsync off: nothing in a throwaway cluster outlives the run.
            // The least WAL, and little of it kept: a run creates a
            // database for each test, and the default keeps up to 1 GB
            // of WAL beside them on what may be a nearly full disk.
            let options = format!(
                "-p {} -k '{}' -c listen_addresses=127.0.0.1 -c fsync=off \
                 -c wal_level=minimal -c max_wal_senders=0 \
                 -c max_wal_size={TEST_MAX_WAL_SIZE} -c min_wal_size={TEST_MIN_WAL_SIZE}",
                cluster.port,
                cluster.server.home.display()
            );
            let started = quiet(
                cluster
                    .server
                    .tool("pg_ctl")
                    .arg("-D")
                    .arg(cluster.server.data())
                    .arg("-l")
                    .arg(cluster.server.log())
                    .args(["-o", &options, "-w", "start"]),
            );
            match started {
                Ok(()) => return Ok(cluster),
                Err(err) if tries >= POSTGRES_START_TRIES => {
                    let log = std::fs::read_to_string(cluster.server.log()).unwrap_or_default();
                    return Err(err.context(format!("starting PostgreSQL; its log:\n{log}")));
                }
                Err(_) => {}
            }
        }
    }

    /// Drops every database the suites created (named
    /// `stockhop_t_…` by the tests' backend helper), each about 7.5 MB
    /// of template: done before the ledger suites' run on PostgreSQL and
    /// after each suite of it, so the cluster holds one suite's at most.
    fn drop_test_databases(&self) -> Result<()> {
        self.psql(
            "SELECT format('DROP DATABASE %I WITH (FORCE)', datname) \
             FROM pg_database WHERE datname LIKE 'stockhop\\_t\\_%' \\gexec",
        )
        .context("dropping the suites' databases")?;
        Ok(())
    }

    /// Runs `script` with psql as the admin role on the `postgres`
    /// database, stopping at the first error; its unaligned output.
    fn psql(&self, script: &str) -> Result<String> {
        use std::io::Write;
        let mut cmd = self.server.tool("psql");
        cmd.args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"])
            .args(["-U", POSTGRES_ROLE, "-h"])
            .arg(&self.server.home)
            .args(["-p", &self.port.to_string(), "-d", "postgres"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().with_context(|| format!("starting {cmd:?}"))?;
        let mut stdin = child.stdin.take().context("psql's stdin")?;
        stdin.write_all(script.as_bytes())?;
        stdin.write_all(b"\n")?;
        drop(stdin);
        let out = child.wait_with_output()?;
        if !out.status.success() {
            bail!(
                "psql exited with {}: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Says so when a process of the server crashed during the run, even
    /// though every suite passed (the suites wait out a restart).
    fn warn_of_crashes(&self) {
        let crashes = self.log_lines(SERVER_LOG_CRASH);
        if !crashes.is_empty() {
            println!(
                "xtask: warning: a PostgreSQL server process crashed during the run; from {}:\n{}",
                self.server.log().display(),
                crashes.join("\n")
            );
        }
    }

    /// `err` with what the server's log says of crashes, restarts and
    /// fatal errors, so a suite that failed because the server did can
    /// be told from one that failed on its own.
    fn explain(&self, err: anyhow::Error) -> anyhow::Error {
        let notable = self.log_lines(SERVER_LOG_NOTABLE);
        let shown = &notable[notable.len().saturating_sub(SERVER_LOG_LINES_SHOWN)..];
        if shown.is_empty() {
            return err.context("the PostgreSQL server logged no crash, restart or fatal error");
        }
        err.context(format!(
            "the PostgreSQL server's log ({}), its last {} crash, restart and fatal lines:\n{}",
            self.server.log().display(),
            shown.len(),
            shown.join("\n")
        ))
    }

    /// The lines of the server's log that hold any of `markers`.
    fn log_lines(&self, markers: &[&str]) -> Vec<String> {
        let log = std::fs::read_to_string(self.server.log()).unwrap_or_default();
        log.lines()
            .filter(|line| markers.iter().any(|marker| line.contains(marker)))
            .map(str::to_owned)
            .collect()
    }

    /// The admin URL the suites create their databases with.
    fn url(&self) -> String {
        format!(
            "postgres://{POSTGRES_ROLE}@127.0.0.1:{}/postgres",
            self.port
        )
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        if let Err(err) = self.server.stop() {
            eprintln!("xtask: stopping PostgreSQL: {err:#}");
        }
    }
}

/// A loopback port nothing listens on now (the system's pick, released).
fn free_loopback_port() -> Result<u16> {
    let listener =
        std::net::TcpListener::bind(("127.0.0.1", 0)).context("finding a free loopback port")?;
    Ok(listener.local_addr()?.port())
}

/// Runs a command with its output held back, shown only when it fails.
fn quiet(cmd: &mut Command) -> Result<()> {
    let out = cmd.output().with_context(|| format!("starting {cmd:?}"))?;
    if !out.status.success() {
        bail!(
            "{cmd:?} failed: {}\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(())
}

/// Whether every dependency and devDependency in `dir/package.json` is in its
/// `node_modules` (a package added since the last `npm ci` is not).
fn npm_dependencies_installed(dir: &Path) -> Result<bool> {
    let manifest = std::fs::read_to_string(dir.join("package.json"))
        .with_context(|| format!("reading {}", dir.join("package.json").display()))?;
    let manifest: serde_json::Value = serde_json::from_str(&manifest)
        .with_context(|| format!("parsing {}", dir.join("package.json").display()))?;
    Ok(["dependencies", "devDependencies"]
        .iter()
        .filter_map(|section| manifest[section].as_object())
        .flatten()
        .all(|(name, _)| {
            dir.join("node_modules")
                .join(name)
                .join("package.json")
                .exists()
        }))
}

/// Whether an executable `name` is on PATH.
fn on_path(name: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(name).is_file()))
}

/// The version of `name` in a Cargo.lock.
fn locked_version(lock: &str, name: &str) -> Option<String> {
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line.trim() == format!("name = \"{name}\"") {
            let version = lines
                .next()?
                .trim()
                .strip_prefix("version = \"")?
                .strip_suffix('"')?;
            return Some(version.to_owned());
        }
    }
    None
}

/// How long `cargo xtask fuzz` runs a target unless told.
const FUZZ_SECONDS_DEFAULT: u64 = 600;

fn announce(what: &str) {
    println!("xtask: installing {what}");
}

fn step(what: &str) {
    println!("\n== {what}");
}

fn is_root() -> bool {
    capture(Command::new("id").arg("-u")).is_ok_and(|uid| uid.trim() == "0")
}

fn version_output(program: &str) -> Option<String> {
    let out = Command::new(program).arg("--version").output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

fn run(cmd: &mut Command) -> Result<()> {
    let status = cmd.status().with_context(|| format!("starting {cmd:?}"))?;
    if !status.success() {
        bail!("{cmd:?} failed: {status}");
    }
    Ok(())
}

fn capture(cmd: &mut Command) -> Result<String> {
    let out = cmd.output().with_context(|| format!("starting {cmd:?}"))?;
    if !out.status.success() {
        bail!("{cmd:?} failed: {}", out.status);
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
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

/// Seeds of the simulation every test run covers: about 22 s on two cores.
const SIM_SEEDS_IN_TEST: u64 = 2_000;

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

    #[test]
    fn finds_the_locked_version() {
        let lock = "[[package]]\nname = \"wasm-bindgen\"\nversion = \"0.2.130\"\n";
        assert_eq!(
            locked_version(lock, "wasm-bindgen").as_deref(),
            Some("0.2.130")
        );
        assert_eq!(locked_version(lock, "serde"), None);
    }

    #[test]
    fn a_throwaway_cluster_listens_on_loopback_drops_only_the_suites_databases_and_is_gone_after_drop(
    ) {
        let bin = postgres_bin_dir()
            .expect("PostgreSQL's initdb (`cargo xtask setup` installs Debian's postgresql)");
        let cluster = Postgres::start(&bin).unwrap();
        let home = cluster.dir.path().to_owned();
        let url = cluster.url();
        assert!(
            url.starts_with(&format!("postgres://{POSTGRES_ROLE}@127.0.0.1:")),
            "{url}"
        );
        let address = ("127.0.0.1", cluster.port);
        std::net::TcpStream::connect(address).unwrap();

        cluster
            .psql("CREATE DATABASE stockhop_t_0a1b;\nCREATE DATABASE stockhop_tx;")
            .unwrap();
        cluster.drop_test_databases().unwrap();
        let left = cluster
            .psql("SELECT datname FROM pg_database WHERE datname LIKE 'stockhop%'")
            .unwrap();
        assert_eq!(left.trim(), "stockhop_tx", "only the suites' databases go");
        let said = format!("{:#}", cluster.explain(anyhow::anyhow!("a suite failed")));
        assert!(
            said.contains("logged no crash") && said.ends_with("a suite failed"),
            "{said}"
        );

        drop(cluster);
        assert!(!home.exists(), "the directory is deleted");
        assert!(
            std::net::TcpStream::connect(address).is_err(),
            "the server is stopped"
        );
    }

    #[test]
    fn the_settings_file_parses() {
        let project = Project::load().unwrap();
        assert_eq!(
            project.settings.build.out_dir,
            std::path::Path::new("www/pkg")
        );
        assert!(!project.wasm_bindgen_version.is_empty());
    }
}
