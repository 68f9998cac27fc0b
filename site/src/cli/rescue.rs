//! `stockhop-site rescue import FILE`: a handheld's rescue file imported
//! through the ledger's sync code, one request's worth of items at a time
//! on the site's database, so a serving site keeps syncing meanwhile.

use std::io::Read;
use std::path::{Path, PathBuf};

use stockhop::rescue::MAX_FILE_BYTES;
use stockhop_site::ledger::{self, rescue::RescueCounts};

use super::open;

#[derive(clap::Subcommand)]
pub(super) enum RescueCommand {
    /// Import the file a handheld exported from its queue screen
    /// (stockhop-rescue-<device>-<instant>.jsonl): its signature is
    /// checked against the device's token (a revoked device's last token
    /// counts), then each item applies once, as if the device had sent it;
    /// an item the site has already answers as replayed. A file that fails
    /// the check imports nothing.
    Import {
        file: PathBuf,
        #[arg(long, env = "STOCKHOP_DATA", default_value = "./stockhop-data")]
        data: PathBuf,
    },
}

pub(super) fn rescue(command: RescueCommand, database: Option<&str>) -> anyhow::Result<()> {
    let RescueCommand::Import { file, data } = command;
    let db = open(&data, database)?;
    let bytes = read_bounded(&file)?;
    let name = file.display().to_string();
    let imported = db.call_blocking(|conn| {
        let mut plan = ledger::rescue::verify(conn, &bytes)?;
        for index in 0..plan.requests() {
            plan.run_request(conn, index, ledger::wall_clock())?;
        }
        plan.finish(conn, ledger::wall_clock())
    });
    match imported {
        Ok(imported) => {
            println!(
                "{name}: {}",
                in_words(&imported.device_id, &imported.counts)
            );
            Ok(())
        }
        Err(ledger::LedgerError::Refused(refusal)) => {
            // The reason alone, for the person holding the file.
            eprintln!("{name}: {}", refusal.message);
            std::process::exit(1);
        }
        Err(err) => Err(anyhow::anyhow!("importing {name}: {err}")),
    }
}

/// The file, refused when it is larger than any rescue file can be.
fn read_bounded(file: &Path) -> anyhow::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    std::fs::File::open(file)
        .map_err(|err| anyhow::anyhow!("{}: {err}", file.display()))?
        .take(MAX_FILE_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|err| anyhow::anyhow!("{}: {err}", file.display()))?;
    Ok(bytes)
}

/// The answer as a sentence: `HH-0042: 120 items, 100 applied, 15 already
/// at the site (replayed), 5 refused (2 of them waiting for an earlier
/// item)`.
fn in_words(device_id: &str, counts: &RescueCounts) -> String {
    let plural = |n: u64, one: &str, many: &str| {
        if n == 1 {
            format!("1 {one}")
        } else {
            format!("{n} {many}")
        }
    };
    let mut words = format!(
        "{device_id}: {}, {} applied, {} already at the site (replayed), {} refused",
        plural(counts.items, "item", "items"),
        counts.applied,
        counts.replayed,
        counts.rejected,
    );
    if counts.buffered > 0 {
        words.push_str(&format!(
            " ({} of them waiting for an earlier item of their session; they apply when it arrives)",
            counts.buffered
        ));
    }
    words
}
