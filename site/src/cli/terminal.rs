//! `stockhop-site terminal …`: the fixed terminals that push to the
//! site's listener.

use std::path::PathBuf;

use clap::Subcommand;
use stockhop::time::UnixMs;
use stockhop_site::ledger;
use stockhop_site::listener::command::BackfillError;
use stockhop_site::listener::queue;

use super::*;

#[derive(Subcommand)]
pub(super) enum TerminalCommand {
    /// Ask an iclock terminal for its attendance records of a time range
    /// again (after a listener outage or a lost batch). The command is
    /// handed out on the terminal's next poll; the records arrive as
    /// ordinary uploads, and records the site already keeps change nothing.
    Backfill {
        /// The terminal's serial number (`SN`).
        serial: String,
        /// The first instant of the range, RFC 3339 (2026-03-01T06:00:00Z).
        #[arg(long, value_parser = instant)]
        from: UnixMs,
        /// The end of the range, RFC 3339; written in the terminal's own
        /// time zone when the command is handed out.
        #[arg(long, value_parser = instant)]
        to: UnixMs,
        #[arg(long, env = "STOCKHOP_DATA", default_value = "./stockhop-data")]
        data: PathBuf,
    },
    /// List a terminal's commands, newest first: id, state, return code,
    /// when queued, the command.
    Commands {
        serial: String,
        #[arg(long, env = "STOCKHOP_DATA", default_value = "./stockhop-data")]
        data: PathBuf,
    },
}

fn instant(text: &str) -> Result<UnixMs, String> {
    UnixMs::parse_rfc3339(text).map_err(|err| {
        format!("not an RFC 3339 instant ({err}): write it as 2026-03-01T06:00:00Z or 2026-03-01T07:00:00+01:00")
    })
}

pub(super) fn terminal(command: TerminalCommand, database: Option<&str>) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread().build()?;
    match command {
        TerminalCommand::Backfill {
            serial,
            from,
            to,
            data,
        } => {
            let db = open(&data, database)?;
            let now = ledger::wall_clock();
            let for_serial = serial.clone();
            let queued = runtime
                .block_on(db.call_local(move |conn| {
                    queue::queue_backfill(conn, &for_serial, from, to, now)
                }))
                .map_err(|err: BackfillError| anyhow::anyhow!("{err}"))?;
            // The instants as given: the line itself is written in the
            // terminal's own zone when the listener hands it out, so a
            // line printed here could show other clock times than the
            // terminal gets (`terminal commands` shows the line sent).
            println!(
                "queued command {} for terminal {serial}: its attendance records from {from} to {to}",
                queued.id
            );
            println!(
                "it is handed out on the terminal's next poll; `stockhop-site terminal commands {serial} --data {}` shows when it is answered",
                data.display()
            );
            Ok(())
        }
        TerminalCommand::Commands { serial, data } => {
            let db = open(&data, database)?;
            let for_serial = serial.clone();
            let commands = runtime
                .block_on(db.read_local(move |conn| queue::commands(conn, &for_serial)))
                .map_err(|err: BackfillError| anyhow::anyhow!("{err}"))?;
            if commands.is_empty() {
                println!("no commands for terminal {serial}");
            }
            for c in commands {
                let code = c
                    .return_code
                    .map_or_else(|| "-".to_owned(), |code| code.to_string());
                println!(
                    "{}\t{}\t{code}\t{}\t{}",
                    c.id,
                    c.state.as_str(),
                    c.created_at,
                    c.command.replace('\t', "<TAB>")
                );
            }
            Ok(())
        }
    }
}
