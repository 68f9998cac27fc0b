//! `cargo xtask setup`: installs what a fresh machine lacks, printing each
//! install. Every check is a version probe or a file test, so a machine
//! that has everything pays a few milliseconds per tool. Tools come only
//! from the package registries: crates.io (`cargo install`), Debian
//! (`apt-get`), npm and PyPI (`pip`, into a virtualenv).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::postgres::postgres_bin_dir;
use crate::process::{announce, capture, is_root, run, version_output};
use crate::project::Project;

#[derive(Clone, Copy, PartialEq)]
pub enum Needs {
    /// Serving: the wasm build tools.
    Build,
    /// Testing: the build tools, the browser, the end-to-end driver and
    /// PostgreSQL.
    All,
}

impl Project {
    /// Installs what is missing. Each check is a version probe, so a
    /// machine that has everything pays a few milliseconds per tool.
    pub fn setup(&self, needs: Needs) -> Result<()> {
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
        let build_tools = self.root.join("xtask/npm");
        if (self.settings.wasm_opt.enabled && version_output(&self.wasm_opt_path()).is_none())
            || !npm_dependencies_installed(&build_tools)?
        {
            announce("binaryen's wasm-opt and the shell's @fluent/bundle (npm ci in xtask/npm)");
            run(self
                .cmd("npm")
                .args(["ci", "--no-audit", "--no-fund"])
                .current_dir(&build_tools))?;
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
            // The OpenAPI fuzzer (pip, into a virtualenv in the build
            // directory).
            self.ensure_schemathesis()?;
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
    pub fn ensure_postgres(&self) -> Result<PathBuf> {
        if let Some(bin) = postgres_bin_dir() {
            return Ok(bin);
        }
        self.apt_install(&["postgresql"])?;
        postgres_bin_dir()
            .context("`postgresql` is installed but initdb is not where Debian puts it")
    }
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
