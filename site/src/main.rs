//! `stockhop-site`: the site server's command line (the commands are
//! [`cli`]; this file starts the logs and reports a failure).

mod cli;

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Parser;

use cli::{Cli, LogFormat};

fn init_logs(format: LogFormat) {
    let logs = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr);
    match format {
        // Colour only for a person at a terminal: a site server's stderr
        // usually goes to a file or the journal.
        LogFormat::Text => logs.with_ansi(std::io::stderr().is_terminal()).init(),
        LogFormat::Json => logs.json().with_ansi(false).init(),
    }
}

/// A command that fails says why on stderr, as one line of its causes
/// (`opening a count of L-1/Z-9: no bins in zone …`), and exits 1. Never
/// the `Debug` form `main` returning an error would print: with
/// `RUST_BACKTRACE` set (as a shell or a service manager may leave it),
/// that adds a stack backtrace a site engineer cannot act on.
fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logs(cli.log_format);
    match cli::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
