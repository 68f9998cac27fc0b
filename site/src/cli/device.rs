//! `stockhop-site device …`: the handhelds (and printers) that may sync
//! with the site: add, commission, list, link, revoke, close a session.

use std::path::PathBuf;

use clap::Subcommand;
use stockhop_site::ledger::{self, devices::Profile};
use stockhop_site::store::db::Db;
use stockhop_site::view;

use super::*;

#[derive(Subcommand)]
pub(super) enum DeviceCommand {
    /// Add a device; prints its bearer token (and nothing else) on
    /// stdout, and its setup link (to open on the handheld) on stderr.
    Add {
        device_id: String,
        #[arg(long, value_enum)]
        profile: Profile,
        /// Post its items for real at once (otherwise they land as simulation).
        #[arg(long)]
        commissioned: bool,
        #[arg(long, env = "STOCKHOP_DATA", default_value = "./stockhop-data")]
        data: PathBuf,
        /// The site's HTTPS address for the setup link (default: the one
        /// `serve` recorded, else from --https and the first --tls-name).
        #[arg(long, env = "STOCKHOP_SITE_URL")]
        site_url: Option<String>,
        #[command(flatten)]
        https: HttpsArgs,
    },
    /// Commission a device: its items post for real from now on.
    Commission {
        device_id: String,
        #[arg(long, env = "STOCKHOP_DATA", default_value = "./stockhop-data")]
        data: PathBuf,
    },
    /// List the devices, one a line: id, profile, commissioned or not,
    /// when added, and when revoked.
    List {
        #[arg(long, env = "STOCKHOP_DATA", default_value = "./stockhop-data")]
        data: PathBuf,
    },
    /// Print a device's setup link again, with a new token (the site keeps
    /// only tokens' hashes): the old link and token stop working.
    Link {
        device_id: String,
        #[arg(long, env = "STOCKHOP_DATA", default_value = "./stockhop-data")]
        data: PathBuf,
        /// The site's HTTPS address for the link (default: the one `serve`
        /// recorded, else from --https and the first --tls-name).
        #[arg(long, env = "STOCKHOP_SITE_URL")]
        site_url: Option<String>,
        #[command(flatten)]
        https: HttpsArgs,
    },
    /// Revoke a device: its token stops working at once; its hops stay.
    Revoke {
        device_id: String,
        #[arg(long, env = "STOCKHOP_DATA", default_value = "./stockhop-data")]
        data: PathBuf,
    },
    /// Close the session a device has open (a handheld reset or broken
    /// mid-shift), with its mode's closing work: its operator can open a
    /// session again.
    CloseSession {
        device_id: String,
        #[arg(long, env = "STOCKHOP_DATA", default_value = "./stockhop-data")]
        data: PathBuf,
    },
}

pub(super) fn device(command: DeviceCommand, database: Option<&str>) -> anyhow::Result<()> {
    match command {
        DeviceCommand::Add {
            device_id,
            profile,
            commissioned,
            data,
            site_url,
            https,
        } => {
            let db = open(&data, database)?;
            let token = db
                .call_blocking(|conn| {
                    ledger::devices::add(
                        conn,
                        &device_id,
                        profile,
                        commissioned,
                        ledger::wall_clock(),
                    )
                })
                .map_err(|err| anyhow::anyhow!("adding device {device_id}: {err}"))?;
            println!("{token}");
            let site = link_site(&db, site_url, &https)?;
            let link = view::enroll::setup_link(&site, &device_id, &token);
            eprintln!("setup link for {device_id}: {link}");
            Ok(())
        }
        DeviceCommand::List { data } => {
            let db = open(&data, database)?;
            for device in db.call_blocking(|conn| ledger::devices::list(conn))? {
                let revoked = device.revoked_at.map_or_else(String::new, |at| {
                    match device.queued_when_revoked.filter(|&n| n > 0) {
                        Some(n) => format!(
                            "\trevoked {at} with {n} items queued: import its rescue file \
                             (stockhop-site rescue import)"
                        ),
                        None => format!("\trevoked {at}"),
                    }
                });
                println!(
                    "{}\t{}\t{}\t{}{revoked}",
                    device.device_id,
                    device.profile,
                    if device.commissioned {
                        "commissioned"
                    } else {
                        "simulation"
                    },
                    device.added_at,
                );
            }
            Ok(())
        }
        DeviceCommand::Link {
            device_id,
            data,
            site_url,
            https,
        } => {
            let db = open(&data, database)?;
            let token = db
                .call_blocking(|conn| ledger::devices::relink(conn, &device_id))
                .map_err(|err| anyhow::anyhow!("linking device {device_id}: {err}"))?;
            let site = link_site(&db, site_url, &https)?;
            println!("{}", view::enroll::setup_link(&site, &device_id, &token));
            eprintln!("the earlier setup link and token of {device_id} no longer work");
            Ok(())
        }
        DeviceCommand::Revoke { device_id, data } => {
            let db = open(&data, database)?;
            db.call_blocking(|conn| {
                ledger::devices::revoke(conn, &device_id, ledger::wall_clock())
            })
            .map_err(|err| anyhow::anyhow!("revoking {device_id}: {err}"))?;
            eprintln!("device {device_id} revoked: its token no longer works");
            Ok(())
        }
        DeviceCommand::CloseSession { device_id, data } => {
            let db = open(&data, database)?;
            let closed = db
                .call_blocking(|conn| {
                    ledger::session_close::close_for_device(conn, &device_id, ledger::wall_clock())
                })
                .map_err(|err| anyhow::anyhow!("closing {device_id}'s session: {err}"))?;
            eprintln!(
                "session {} of {device_id} ({} by {}) closed: its operator can open a session again",
                closed.session_id,
                closed.mode.as_deref().unwrap_or("no mode"),
                closed.operator_id.as_deref().unwrap_or("no operator"),
            );
            Ok(())
        }
        DeviceCommand::Commission { device_id, data } => {
            let db = open(&data, database)?;
            db.call_blocking(|conn| ledger::devices::commission(conn, &device_id))
                .map_err(|err| anyhow::anyhow!("commissioning {device_id}: {err}"))?;
            tracing::info!(%device_id, "device commissioned");
            Ok(())
        }
    }
}

/// Where a setup link points: --site-url, else the address `serve`
/// recorded at its last start (the port it really serves), else one made
/// from --https and --tls-name, saying so.
pub(super) fn link_site(
    db: &Db,
    site_url: Option<String>,
    https: &HttpsArgs,
) -> anyhow::Result<String> {
    if let Some(site) = site_url {
        return Ok(site);
    }
    if let Some(site) = db.call_blocking(|conn| view::enroll::remembered_site_url(conn))? {
        return Ok(site);
    }
    let site = https.site_url(https.https.port());
    eprintln!(
        "the site has not been served from this data yet: the link assumes {site} (--https {}); give --site-url if it serves elsewhere",
        https.https
    );
    Ok(site)
}
