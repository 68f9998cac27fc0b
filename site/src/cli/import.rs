//! `stockhop-site import KIND FILE`: reference data from a CSV file, all
//! or nothing, turn by turn on the site's database so a serving site keeps
//! syncing meanwhile.

use std::io::IsTerminal;
use std::path::Path;

use stockhop_site::ledger;

use super::open;

pub(super) fn import(
    kind: ledger::import::Kind,
    file: &Path,
    data: &Path,
    database: Option<&str>,
) -> anyhow::Result<()> {
    let db = open(data, database)?;
    if file.as_os_str() == ledger::import::STDIN_ARG && std::io::stdin().is_terminal() {
        // Typed by hand, or a forgotten `< FILE`: say what ends it.
        eprintln!(
            "reading {} CSV from standard input ({}); end it with Ctrl-D",
            kind.name(),
            kind.columns().join(",")
        );
    }
    // Turn by turn on the site's database, resting between turns,
    // so a serving site keeps syncing meanwhile.
    let mut name = file.display().to_string();
    let imported = ledger::import::open_input(file).and_then(|(named, input)| {
        name = named;
        ledger::import::run(
            &db,
            kind,
            &name,
            ledger::import::Source::Csv(input),
            &ledger::wall_clock,
        )
    });
    match imported {
        Ok(summary) => {
            let rows = match summary.rows {
                1 => "1 row".to_owned(),
                n => format!("{n} rows"),
            };
            eprintln!("{name}: {rows}, {} changed", summary.changed);
            Ok(())
        }
        // The reason alone, as FILE:LINE: reason, for the person
        // fixing the file (anyhow would prefix it with "Error: ").
        Err(err) => {
            eprintln!("{err}");
            if matches!(
                err,
                ledger::import::ImportError::Invalid { .. }
                    | ledger::import::ImportError::NotCsv { .. }
            ) {
                eprintln!("nothing was imported: fix the file and import it again");
            }
            std::process::exit(1);
        }
    }
}
