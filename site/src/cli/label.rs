//! `stockhop-site label …`: what a label says, read as the site and its
//! handhelds read it (a site engineer's check of a supplier's labels), and
//! the site's setting for the character its scanners send for the GS1
//! group separator.

use std::path::PathBuf;

use clap::Subcommand;
use stockhop::gs1::{self, Separator};
use stockhop_site::ledger::{self, labels};
use stockhop_site::site_clock::SiteZone;

use super::*;

#[derive(Subcommand)]
pub(super) enum LabelCommand {
    /// Print what a scanned label says as JSON: its kind, its elements and
    /// the keys it names, with the unit it names when --data names a site
    /// that knows it. A label that does not parse prints
    /// {"error","ai","message"} and exits 1.
    Read {
        /// The text as the scanner sends it: a GS1 element string (with or
        /// without a symbology identifier such as ]C1, the group separator
        /// as ASCII 29 or the site's substitute), the bracketed form
        /// (01)09521101530001(21)7, a Digital Link URI or an EPC in hex.
        text: String,
        /// The site whose separator substitute reads the label and whose
        /// units it may name; without it, `~` and no unit.
        #[arg(long, env = "STOCKHOP_DATA")]
        data: Option<PathBuf>,
    },
    /// Print the character the site's scanners send for the group
    /// separator (ASCII 29), or set it: one character no GS1 value can
    /// hold (the default is `~`). Handhelds take it with the reference
    /// data.
    Separator {
        /// The new substitute; without it, the one set is printed.
        char: Option<char>,
        #[arg(long, env = "STOCKHOP_DATA", default_value = "./stockhop-data")]
        data: PathBuf,
    },
}

pub(super) fn label(command: LabelCommand, database: Option<&str>) -> anyhow::Result<()> {
    match command {
        LabelCommand::Read { text, data } => {
            let now = ledger::wall_clock();
            let read = match data {
                Some(data) => open(&data, database)?
                    .call_blocking(|conn| labels::read_at_site(conn, &text, now))?,
                None => {
                    let options = gs1::ReadOptions::new(labels::today(&SiteZone::machine(), now));
                    gs1::read(&text, &options).map(|label| labels::LabelRead { label, unit: None })
                }
            };
            match read {
                Ok(json) => {
                    println!("{}", serde_json::to_string(&json)?);
                    Ok(())
                }
                Err(refused) => {
                    println!("{}", serde_json::to_string(&refused)?);
                    std::process::exit(1);
                }
            }
        }
        LabelCommand::Separator { char, data } => {
            let db = open(&data, database)?;
            match char {
                Some(c) => {
                    let separator = Separator::new(c)?;
                    db.call_blocking(|conn| labels::set_separator(conn, separator))?;
                    eprintln!(
                        "scanners' {c} now stands for the group separator; handhelds take it with their next reference data"
                    );
                }
                None => println!(
                    "{}",
                    db.call_blocking(|conn| labels::separator(conn))?.char()
                ),
            }
            Ok(())
        }
    }
}
