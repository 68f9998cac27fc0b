//! The ledger's books from the command line: `grn resolve` (a GRN's
//! lines accepted as they stand) and `period close` (the books closed up
//! to an instant).

use std::path::PathBuf;

use anyhow::Context;
use clap::Subcommand;
use stockhop::time::UnixMs;
use stockhop_site::ledger;

use super::open;

#[derive(Subcommand)]
pub(super) enum GrnCommand {
    /// Accept a GRN's short and excess lines as they stand: it is complete.
    Resolve {
        grn: String,
        #[arg(long, env = "STOCKHOP_DATA", default_value = "./stockhop-data")]
        data: PathBuf,
    },
}

#[derive(Subcommand)]
pub(super) enum PeriodCommand {
    /// Close the books up to UNTIL (RFC 3339): later hops captured before
    /// it are booked at UNTIL.
    Close {
        until: String,
        #[arg(long, env = "STOCKHOP_DATA", default_value = "./stockhop-data")]
        data: PathBuf,
    },
}

pub(super) fn grn(command: GrnCommand, database: Option<&str>) -> anyhow::Result<()> {
    match command {
        GrnCommand::Resolve { grn, data } => {
            let db = open(&data, database)?;
            let hops = db
                .call_blocking(|conn| {
                    ledger::modes::receive::resolve(
                        conn,
                        &grn,
                        "resolved from the command line",
                        ledger::wall_clock(),
                    )
                })
                .map_err(|err| anyhow::anyhow!("resolving GRN {grn}: {err}"))?;
            let lines = match hops.len() {
                1 => "1 line".to_owned(),
                n => format!("{n} lines"),
            };
            eprintln!("GRN {grn} is complete: {lines} booked as ADJUST hops");
            Ok(())
        }
    }
}

pub(super) fn period(command: PeriodCommand, database: Option<&str>) -> anyhow::Result<()> {
    match command {
        PeriodCommand::Close { until, data } => {
            let until = UnixMs::parse_rfc3339(&until).context("reading UNTIL")?;
            let db = open(&data, database)?;
            db.call_blocking(|conn| ledger::periods::close(conn, until, ledger::wall_clock()))
                .map_err(|err| anyhow::anyhow!("{err}"))?;
            tracing::info!(%until, "period closed");
            Ok(())
        }
    }
}
