//! The commands that run something of the project's for a person: the
//! site server (`serve`), the seeded simulation (`sim`) and one parser's
//! fuzz target (`fuzz`).

use std::process::Command;

use anyhow::{bail, Result};

use crate::process::{announce, capture, run, step};
use crate::project::Project;
use crate::setup::Needs;

/// How long `cargo xtask fuzz` runs a target unless told.
pub const FUZZ_SECONDS_DEFAULT: u64 = 600;

impl Project {
    /// `stockhop-site serve` with the PWA from `www/`, built first, and
    /// `args` passed on.
    pub fn serve(&self, args: &[String]) -> Result<()> {
        self.setup(Needs::Build)?;
        self.build_wasm()?;
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
        .args(args);
        run(&mut cmd)
    }

    /// The simulation, built in the site's optimised profile (a campaign
    /// runs thousands of seeds), with `args` passed on.
    pub fn sim(&self, args: &[String]) -> Result<()> {
        step("the simulation (built first with the site profile: minutes on a first run)");
        let mut cmd = self.sim_cmd();
        cmd.args(args);
        run(&mut cmd)
    }

    pub fn sim_cmd(&self) -> Command {
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
    pub fn fuzz(&self, target: &str, seconds: u64) -> Result<()> {
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
}
