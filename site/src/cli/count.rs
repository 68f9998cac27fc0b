//! `stockhop-site count …`: open, cancel and approve cycle counts.

use std::path::PathBuf;

use clap::Subcommand;
use stockhop_site::ledger::{self};

use super::*;

#[derive(Subcommand)]
pub(super) enum CountCommand {
    /// Open a count for a zone of a location, or for one bin of it, with
    /// the snapshot of the units expected there; prints its count_id (and
    /// nothing else).
    Open {
        #[arg(long)]
        location: String,
        #[arg(long)]
        zone: String,
        /// Count only this bin of the zone (the rest of the zone is left
        /// alone).
        #[arg(long)]
        bin: Option<String>,
        #[arg(long, env = "STOCKHOP_DATA", default_value = "./stockhop-data")]
        data: PathBuf,
    },
    /// Cancel a count opened by mistake: it closes and is never approved;
    /// nothing it counted posts.
    Cancel {
        count_id: String,
        #[arg(long, env = "STOCKHOP_DATA", default_value = "./stockhop-data")]
        data: PathBuf,
    },
    /// Post a closed count's variance: missing units become missing,
    /// unexpected ones move into the bin they were counted in.
    Approve {
        count_id: String,
        #[arg(long, env = "STOCKHOP_DATA", default_value = "./stockhop-data")]
        data: PathBuf,
    },
}

pub(super) fn count(command: CountCommand, database: Option<&str>) -> anyhow::Result<()> {
    use ledger::modes::cycle_count;
    match command {
        CountCommand::Open {
            location,
            zone,
            bin,
            data,
        } => {
            let db = open(&data, database)?;
            let opened = db
                .call_blocking(|conn| {
                    let now = ledger::wall_clock();
                    cycle_count::open_told(conn, &location, &zone, bin.as_deref(), now)
                })
                .map_err(|err| {
                    let place = cycle_count::place(&location, &zone, bin.as_deref());
                    anyhow::anyhow!("opening a count of {place}: {err}")
                })?;
            // Opened all the same; the warning is the one the admin API
            // answers.
            if let Some(warning) = &opened.warning {
                eprintln!("warning: {warning}");
            }
            // The id alone on its line, for scripts (`$(stockhop-site count open …)`).
            println!("{}", opened.count_id);
            Ok(())
        }
        CountCommand::Cancel { count_id, data } => {
            let db = open(&data, database)?;
            db.call_blocking(|conn| cycle_count::cancel(conn, &count_id, ledger::wall_clock()))
                .map_err(|err| anyhow::anyhow!("cancelling count {count_id}: {err}"))?;
            eprintln!("count {count_id} is cancelled: nothing it counted posts");
            Ok(())
        }
        CountCommand::Approve { count_id, data } => {
            let db = open(&data, database)?;
            let approval = db
                .call_blocking(|conn| cycle_count::approve(conn, &count_id, ledger::wall_clock()))
                .map_err(|err| anyhow::anyhow!("approving count {count_id}: {err}"))?;
            eprintln!(
                "count {count_id} approved: {} adjustments posted",
                approval.hop_ids.len()
            );
            for epc in &approval.moved_since {
                eprintln!("  {epc} was not seen but moved after the count opened: left as it is");
            }
            Ok(())
        }
    }
}
