//! Every benchmark the README lists, run in its quick mode by `cargo xtask
//! test`, so a bench that panics, hangs or prints no table fails the test
//! run rather than rotting while its old figures stay quoted.
//!
//! The quick mode (`STOCKHOP_BENCH_QUICK=1`) runs a bench's own code paths
//! at small sizes and one round and prints the same tables; its figures are
//! not the ones to quote. The site benches build in the `dev` profile here,
//! so they reuse the native test step's build of every dependency rather
//! than building all of them again optimised; a full run uses the `site`
//! profile, as the README says.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

/// The variable every bench reads for its quick mode.
pub const QUICK_VAR: &str = "STOCKHOP_BENCH_QUICK";

/// How long one bench may run in the quick mode before it counts as hung:
/// each takes seconds on a 2-core machine, so a minute is far past any of
/// them on a slow one.
const QUICK_RUN_LIMIT: Duration = Duration::from_secs(60);

/// How often a running bench is checked for having ended.
const POLL_EVERY: Duration = Duration::from_millis(100);

/// One bench: its name and the command that runs it.
pub struct Bench {
    pub name: String,
    pub command: Command,
}

/// The site benches (`site/benches/*.rs`, one binary each), in name order.
pub fn site_benches(root: &Path) -> Result<Vec<String>> {
    let mut names: Vec<String> = std::fs::read_dir(root.join("site/benches"))?
        .filter_map(|entry| {
            let path = entry.ok()?.path();
            (path.extension()? == "rs")
                .then(|| path.file_stem()?.to_str().map(str::to_owned))
                .flatten()
        })
        .collect();
    names.sort();
    if names.is_empty() {
        bail!("no site benches in site/benches");
    }
    Ok(names)
}

/// The node benches (`bench/*.mjs`), in name order.
pub fn node_benches(root: &Path) -> Result<Vec<PathBuf>> {
    let mut scripts: Vec<PathBuf> = std::fs::read_dir(root.join("bench"))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "mjs"))
        .collect();
    scripts.sort();
    Ok(scripts)
}

/// Runs each bench in the quick mode, echoing its output; fails on the
/// first that exits unsuccessfully, outlives [`QUICK_RUN_LIMIT`] or prints
/// no table. Returns how many ran.
pub fn run_quick(benches: Vec<Bench>, scratch: &Path) -> Result<u64> {
    let started = Instant::now();
    let mut ran = 0;
    for Bench { name, mut command } in benches {
        let output = scratch.join(format!("bench-{name}.out"));
        let file = std::fs::File::create(&output)?;
        let began = Instant::now();
        let mut child = command
            .env(QUICK_VAR, "1")
            .stdout(Stdio::from(file.try_clone()?))
            .stderr(Stdio::from(file))
            .spawn()
            .with_context(|| format!("starting bench {name}: {command:?}"))?;
        let status = loop {
            if let Some(status) = child.try_wait()? {
                break Some(status);
            }
            if began.elapsed() > QUICK_RUN_LIMIT {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(POLL_EVERY);
        };
        let text = std::fs::read_to_string(&output).unwrap_or_default();
        print!("{text}");
        let Some(status) = status else {
            bail!(
                "bench {name} still running after {} s in the quick mode (killed)",
                QUICK_RUN_LIMIT.as_secs()
            );
        };
        if !status.success() {
            bail!("bench {name} failed in the quick mode: {status}");
        }
        if !prints_a_table(&text) {
            bail!("bench {name} printed no table in the quick mode");
        }
        println!(
            "xtask: bench {name}: table printed in {:.1} s",
            began.elapsed().as_secs_f64()
        );
        ran += 1;
    }
    println!(
        "xtask: {ran} benches in the quick mode in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(ran)
}

/// Whether `text` holds a Markdown table: a header separator row such as
/// `|---|---|` or `|------|----:|`.
fn prints_a_table(text: &str) -> bool {
    text.lines().any(|line| {
        let line = line.trim();
        line.len() > 2
            && line.starts_with("|-")
            && line.ends_with('|')
            && line.chars().all(|c| matches!(c, '|' | '-' | ':' | ' '))
    })
}

#[cfg(test)]
mod tests {
    use super::prints_a_table;

    #[test]
    fn a_table_is_its_separator_row() {
        assert!(prints_a_table("| a | b |\n|---|---:|\n| 1 | 2 |\n"));
        assert!(prints_a_table("head\n|--------|-----|\n"));
        assert!(!prints_a_table("p99 under junk / quiet p99: 1.2x\n"));
        assert!(!prints_a_table(
            "thread 'main' panicked at site/benches/hostile.rs\n"
        ));
        assert!(!prints_a_table("| a | b |\n"));
    }
}
