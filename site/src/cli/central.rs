//! `stockhop-site central …`: on a central, the sites that forward to it.

use std::path::PathBuf;

use clap::Subcommand;
use stockhop_site::ledger;

use super::open;

#[derive(Subcommand)]
pub(super) enum CentralCommand {
    /// Give a site its own secret; prints it (and nothing else) on stdout,
    /// the one time it is shown. The site signs with it (its
    /// --central-secret); the central then takes that site's batches only
    /// when that secret signed them.
    AddSite {
        site_id: String,
        #[arg(long, env = "STOCKHOP_DATA", default_value = "./stockhop-data")]
        data: PathBuf,
    },
}

pub(super) fn central(command: CentralCommand, database: Option<&str>) -> anyhow::Result<()> {
    match command {
        CentralCommand::AddSite { site_id, data } => {
            let db = open(&data, database)?;
            let secret = db
                .call_blocking(|conn| {
                    stockhop_site::central::secrets::add(conn, &site_id, ledger::wall_clock())
                })
                .map_err(|err| anyhow::anyhow!("adding site {site_id}: {err}"))?;
            println!("{secret}");
            Ok(())
        }
    }
}
