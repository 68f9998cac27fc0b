//! The project's build, serve and test entry point: `cargo xtask <command>`.
//!
//! It installs what a fresh machine lacks (printing each install), builds the
//! wasm package as `wasm-pack.toml` says, and runs the site server or every
//! test suite (the ledger suites twice: on SQLite, then on a throwaway
//! PostgreSQL cluster). Every step is idempotent and quick when its tool is
//! already there. Nothing is downloaded from outside the package registries:
//! tools come from crates.io (`cargo install`), Debian (`apt-get`) and npm.

use std::process::ExitCode;

use clap::Parser;

mod benches;
mod cli;
mod disk;
mod postgres;
mod process;
mod project;
mod run;
mod schemathesis;
mod setup;
mod test_run;
mod wasm;

use cli::{Cli, Command};
use project::Project;
use setup::Needs;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = Project::load().and_then(|project| match cli.command {
        Command::Setup => project.setup(Needs::All),
        Command::BuildWasm => project
            .setup(Needs::Build)
            .and_then(|()| project.build_wasm()),
        Command::Serve { args } => project.serve(&args),
        Command::Sim { args } => project.sim(&args),
        Command::Fuzz { target, seconds } => project.fuzz(&target, seconds),
        Command::FuzzOpenapi => project.fuzz_openapi_alone(),
        Command::Postgres => project.postgres(),
        Command::Test => project.without_incremental().test(),
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("xtask: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
