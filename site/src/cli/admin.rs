//! `stockhop-site admin …`: the people who may open the site's view.

use std::path::PathBuf;

use clap::Subcommand;
use stockhop_site::ledger::{self};
use stockhop_site::view;

use super::*;

#[derive(Subcommand)]
pub(super) enum AdminCommand {
    /// Add an admin; prints its token (and nothing else) on stdout. The
    /// site keeps only its SHA-256.
    Add {
        name: String,
        #[arg(long, env = "STOCKHOP_DATA", default_value = "./stockhop-data")]
        data: PathBuf,
    },
    /// List the admins, one a line: name and when it was added.
    List {
        #[arg(long, env = "STOCKHOP_DATA", default_value = "./stockhop-data")]
        data: PathBuf,
    },
    /// Revoke an admin: its token and its signed-in sessions stop working.
    Revoke {
        name: String,
        #[arg(long, env = "STOCKHOP_DATA", default_value = "./stockhop-data")]
        data: PathBuf,
    },
}

pub(super) fn admins(command: AdminCommand, database: Option<&str>) -> anyhow::Result<()> {
    let now = ledger::wall_clock();
    match command {
        AdminCommand::Add { name, data } => {
            let db = open(&data, database)?;
            let token = db
                .call_blocking(|conn| view::admin::add(conn, &name, now))
                .map_err(|err| anyhow::anyhow!("adding admin {name}: {err}"))?;
            println!("{token}");
            Ok(())
        }
        AdminCommand::List { data } => {
            let db = open(&data, database)?;
            for admin in db.call_blocking(|conn| view::admin::list(conn))? {
                println!("{}\t{}", admin.name, admin.added_at);
            }
            Ok(())
        }
        AdminCommand::Revoke { name, data } => {
            let db = open(&data, database)?;
            db.call_blocking(|conn| view::admin::revoke(conn, &name))
                .map_err(|err| anyhow::anyhow!("revoking admin {name}: {err}"))?;
            tracing::info!(%name, "admin revoked");
            Ok(())
        }
    }
}
