//! The project xtask works on: the repository root, `wasm-pack.toml`'s
//! settings, the pinned `wasm-bindgen` version, and the commands it runs
//! there.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, Result};
use serde::Deserialize;

use crate::process::capture;

/// `wasm-pack.toml`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    pub build: BuildSettings,
    pub wasm_opt: WasmOptSettings,
    pub budget: BudgetSettings,
    pub test: TestSettings,
    pub tools: ToolSettings,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BuildSettings {
    pub target: String,
    pub out_dir: PathBuf,
    pub profile: String,
    pub typescript: bool,
}

/// The optimised module's size ceilings, checked by `build-wasm`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BudgetSettings {
    pub max_kib: u64,
    pub max_gzip_kib: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WasmOptSettings {
    pub enabled: bool,
    pub path: String,
    pub args: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestSettings {
    pub browser: String,
    pub headless: bool,
    pub chromedriver: PathBuf,
    pub chromium: PathBuf,
    pub chromium_args: Vec<String>,
    pub timeout_secs: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolSettings {
    pub wasm_pack_version: String,
}

pub struct Project {
    pub root: PathBuf,
    pub settings: Settings,
    /// The `wasm-bindgen` version Cargo.lock pins.
    pub wasm_bindgen_version: String,
    /// Whether cargo keeps incremental state (`CARGO_INCREMENTAL`, unless
    /// the caller set it).
    pub incremental: bool,
}

impl Project {
    pub fn load() -> Result<Project> {
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
    pub fn without_incremental(self) -> Project {
        Project {
            incremental: false,
            ..self
        }
    }

    pub fn cmd(&self, program: &str) -> Command {
        let mut cmd = Command::new(program);
        cmd.current_dir(&self.root);
        if !self.incremental && std::env::var_os("CARGO_INCREMENTAL").is_none() {
            cmd.env("CARGO_INCREMENTAL", "0");
        }
        cmd
    }

    /// Cargo's target directory as cargo itself resolves it
    /// (`CARGO_TARGET_DIR`, `build.target-dir`, or `target/`).
    pub fn target_dir(&self) -> Result<PathBuf> {
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
    pub fn wasm_opt_path(&self) -> String {
        let path = &self.settings.wasm_opt.path;
        if path.contains('/') {
            self.root.join(path).to_string_lossy().into_owned()
        } else {
            path.clone()
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn the_settings_file_parses() {
        let project = Project::load().unwrap();
        assert_eq!(
            project.settings.build.out_dir,
            std::path::Path::new("www/pkg")
        );
        assert!(!project.wasm_bindgen_version.is_empty());
    }
}
