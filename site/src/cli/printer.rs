//! `stockhop-site printer …`: the network label printers.

use std::path::PathBuf;

use clap::Subcommand;
use stockhop_site::ledger::{self, devices::Profile};

use super::open;

#[derive(Subcommand)]
pub(super) enum PrinterCommand {
    /// Add a label printer at HOST:PORT (port 9100 when not given); the
    /// site asks its host status every 30 s while serving.
    Add {
        printer_id: String,
        #[arg(long)]
        address: String,
        #[arg(long, value_enum, default_value = "zt411r")]
        profile: Profile,
        /// A handheld whose station prints here (receive with encode);
        /// repeat for several.
        #[arg(long = "station")]
        stations: Vec<String>,
        #[arg(long, env = "STOCKHOP_DATA", default_value = "./stockhop-data")]
        data: PathBuf,
    },
    /// Move a printer to another address, or have more stations print at
    /// it (`device revoke ID` takes a printer out of service).
    Set {
        printer_id: String,
        /// Its new HOST:PORT (port 9100 when not given).
        #[arg(long)]
        address: Option<String>,
        /// A handheld whose station prints here from now on; repeat for
        /// several.
        #[arg(long = "station")]
        stations: Vec<String>,
        #[arg(long, env = "STOCKHOP_DATA", default_value = "./stockhop-data")]
        data: PathBuf,
    },
}

pub(super) fn printer(command: PrinterCommand, database: Option<&str>) -> anyhow::Result<()> {
    match command {
        PrinterCommand::Add {
            printer_id,
            address,
            profile,
            stations,
            data,
        } => {
            let db = open(&data, database)?;
            let printer = db
                .call_blocking(|conn| {
                    stockhop_site::printers::store::add(
                        conn,
                        &printer_id,
                        &address,
                        profile,
                        &stations,
                        ledger::wall_clock(),
                    )
                })
                .map_err(|err| anyhow::anyhow!("adding printer {printer_id}: {err}"))?;
            eprintln!("printer {printer_id} at {}", printer.address());
            Ok(())
        }
        PrinterCommand::Set {
            printer_id,
            address,
            stations,
            data,
        } => {
            if address.is_none() && stations.is_empty() {
                anyhow::bail!("printer set {printer_id}: give --address, --station or both");
            }
            let db = open(&data, database)?;
            let printer = db
                .call_blocking(|conn| {
                    stockhop_site::printers::store::update(
                        conn,
                        &printer_id,
                        address.as_deref(),
                        &stations,
                    )
                })
                .map_err(|err| anyhow::anyhow!("changing printer {printer_id}: {err}"))?;
            eprintln!("printer {printer_id} at {}", printer.address());
            Ok(())
        }
    }
}
