//! The command line of `cargo xtask`, as clap reads it.

use clap::{Parser, Subcommand};

use crate::run::FUZZ_SECONDS_DEFAULT;

/// The project's build, serve and test entry point.
#[derive(Parser)]
#[command(
    name = "xtask",
    bin_name = "cargo xtask",
    arg_required_else_help = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Install the toolchain a fresh machine lacks.
    Setup,
    /// Build the wasm package into www/pkg, optimise it and check its size
    /// against wasm-pack.toml's [budget].
    BuildWasm,
    /// Setup, build-wasm, then run `stockhop-site serve --www www` with the
    /// arguments after `--` (e.g. `cargo xtask serve -- --tls-name stockhop.lan`).
    Serve {
        /// Passed on to `stockhop-site serve`.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// The seeded simulation: `cargo xtask sim [--seeds N] [--from S] [--verbose]`
    /// (`cargo xtask sim -- --help` lists the simulation's own options).
    Sim {
        /// Passed on to the simulation.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Run one parser's fuzz target (cargo fuzz on the nightly toolchain;
    /// targets in fuzz/fuzz_targets).
    Fuzz {
        /// The target's name: fuzz/fuzz_targets/TARGET.rs.
        target: String,
        /// How long to run it.
        #[arg(long, value_name = "N", default_value_t = FUZZ_SECONDS_DEFAULT)]
        seconds: u64,
    },
    /// The test run's OpenAPI step alone: schemathesis against a live
    /// `stockhop-site serve` (the binary `cargo build` last made), with
    /// both token kinds.
    FuzzOpenapi,
    /// A throwaway PostgreSQL cluster on loopback for running a ledger suite
    /// by hand: prints its URL, stops and deletes it on Ctrl-C.
    Postgres,
    /// Setup, then fmt, clippy (native + wasm32), native tests, the ledger
    /// suites again on PostgreSQL, the simulation (2,000 seeds), the browser
    /// suite (wasm-pack test), the end-to-end suite, the OpenAPI fuzzing
    /// (schemathesis) and every benchmark in its quick mode.
    Test,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Command {
        let mut argv = vec!["xtask"];
        argv.extend(args);
        Cli::try_parse_from(argv).unwrap().command
    }

    #[test]
    fn serve_takes_the_servers_arguments_after_the_separator_or_without_it() {
        for args in [
            &["serve", "--", "--tls-name", "stockhop.lan"][..],
            &["serve", "--tls-name", "stockhop.lan"],
        ] {
            let Command::Serve { args } = parse(args) else {
                panic!("not serve")
            };
            assert_eq!(args, ["--tls-name", "stockhop.lan"]);
        }
    }

    #[test]
    fn sim_passes_its_options_on() {
        let Command::Sim { args } = parse(&["sim", "--seeds", "5", "--from", "7", "--verbose"])
        else {
            panic!("not sim")
        };
        assert_eq!(args, ["--seeds", "5", "--from", "7", "--verbose"]);
    }

    #[test]
    fn fuzz_runs_ten_minutes_unless_told() {
        let Command::Fuzz { target, seconds } = parse(&["fuzz", "terminal_request"]) else {
            panic!("not fuzz")
        };
        assert_eq!((target.as_str(), seconds), ("terminal_request", 600));
        let Command::Fuzz { seconds, .. } = parse(&["fuzz", "x", "--seconds", "3600"]) else {
            panic!("not fuzz")
        };
        assert_eq!(seconds, 3600);
    }

    #[test]
    fn a_bare_or_unknown_command_is_a_usage_error() {
        assert!(Cli::try_parse_from(["xtask"]).is_err());
        assert!(Cli::try_parse_from(["xtask", "deploy"]).is_err());
    }
}
