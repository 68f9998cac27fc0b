//! Running the programs xtask drives: echoed, captured or held back until
//! they fail, and the lines it prints around them.

use std::process::Command;

use anyhow::{bail, Context, Result};

/// Runs a command with its output held back, shown only when it fails.
pub fn quiet(cmd: &mut Command) -> Result<()> {
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

pub fn announce(what: &str) {
    println!("xtask: installing {what}");
}

pub fn step(what: &str) {
    println!("\n== {what}");
}

pub fn is_root() -> bool {
    capture(Command::new("id").arg("-u")).is_ok_and(|uid| uid.trim() == "0")
}

pub fn version_output(program: &str) -> Option<String> {
    let out = Command::new(program).arg("--version").output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

pub fn run(cmd: &mut Command) -> Result<()> {
    let status = cmd.status().with_context(|| format!("starting {cmd:?}"))?;
    if !status.success() {
        bail!("{cmd:?} failed: {status}");
    }
    Ok(())
}

pub fn capture(cmd: &mut Command) -> Result<String> {
    let out = cmd.output().with_context(|| format!("starting {cmd:?}"))?;
    if !out.status.success() {
        bail!("{cmd:?} failed: {}", out.status);
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}
