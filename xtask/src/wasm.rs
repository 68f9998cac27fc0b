//! `cargo xtask build-wasm`: the wasm package built as `wasm-pack.toml`
//! says, optimised with binaryen's `wasm-opt`, its source paths remapped,
//! and held to its size ceilings (`[budget]`); and the shell's npm
//! modules (`@fluent/bundle`, pinned in `xtask/npm/package.json`) copied
//! into `www/vendor/` as the ES modules the shell imports.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::process::{run, step};
use crate::project::Project;

/// The npm packages the shell imports in the browser, the folder of
/// `www/vendor/` each is copied to, and the modules of its `esm/` build
/// the shell's import graph reaches (`www/shell.json` lists the same; a
/// type-only module is left out: nothing loads it).
const SHELL_MODULES: [(&str, &str, &[&str]); 1] = [(
    "@fluent/bundle",
    "fluent-bundle",
    &[
        "index.js",
        "bundle.js",
        "resource.js",
        "types.js",
        "resolver.js",
        "scope.js",
        "builtins.js",
        "memoizer.js",
    ],
)];

impl Project {
    /// Builds the wasm package into the PWA and optimises it.
    pub fn build_wasm(&self) -> Result<()> {
        self.vendor_shell_modules()?;
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

    /// Copies each npm package the shell imports (the modules of its ES
    /// module build it loads) from `xtask/npm/node_modules` into
    /// `www/vendor/`, where `www/shell.json` lists them for the service
    /// worker to cache.
    fn vendor_shell_modules(&self) -> Result<()> {
        for (package, folder, modules) in SHELL_MODULES {
            let from = self
                .root
                .join("xtask/npm/node_modules")
                .join(package)
                .join("esm");
            let to = self.root.join("www/vendor").join(folder);
            if !from.is_dir() {
                bail!(
                    "{} is missing: run `cargo xtask setup` (npm ci in xtask/npm)",
                    from.display()
                );
            }
            step(&format!("vendor {package} into www/vendor/{folder}"));
            std::fs::create_dir_all(&to)?;
            for module in modules {
                std::fs::copy(from.join(module), to.join(module))
                    .with_context(|| format!("copying {package}'s esm/{module}"))?;
            }
        }
        Ok(())
    }

    /// Fails the build when the module is over a ceiling of
    /// `wasm-pack.toml`'s `[budget]`, raw or gzipped (level 9, as a
    /// server would compress it).
    fn check_budget(&self, wasm: &Path) -> Result<()> {
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
}
