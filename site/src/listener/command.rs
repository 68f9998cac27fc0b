//! Commands the site hands an iclock terminal, sans-IO: the backfill's
//! line, the heartbeat poll's answer that carries commands, and the
//! terminal's `devicecmd` results.
//!
//! PUSH terminals take commands only as the answer to their heartbeat poll
//! (`GET /iclock/getrequest`, every few seconds): one `C:<id>:<command>` a
//! line instead of `OK`. A backfill asks for the attendance records of a
//! time range again, `DATA QUERY ATTLOG StartTime=<T><TAB>EndTime=<T>`
//! with both times in the terminal's local time as PUSH SDK 3.x writes them
//! (`YYYY-MM-DDThh:mm:ss`). The records come back as ordinary `cdata`
//! uploads, and the terminal reports the command's end on
//! `POST /iclock/devicecmd` as `ID=<id>&Return=<code>&CMD=<name>`, one a
//! line: `0` done, `-4` done with no records in the range, any other code
//! a failure. The SQL that keeps commands is [`super::queue`]'s.

use stockhop::time::{Millis, UnixMs};

use super::http_message::query_param;
use super::iclock;
use super::zone::TerminalZone;

/// A command handed out and not answered within this long is handed out
/// again on the next poll: the poll's answer may have been lost, and a
/// terminal answers a backfill well within it.
pub const RESEND_AFTER: Millis = Millis::from_secs(10 * 60);
/// Commands one poll's answer carries at most, oldest first: a terminal
/// works through them one by one, and the rest follow on later polls.
pub const MAX_COMMANDS_PER_POLL: usize = 8;
/// Lines of one `devicecmd` body read at most: a terminal answers the
/// commands it was handed, a handful a poll.
pub const MAX_RESULTS_PER_BODY: usize = 64;

/// `Return` of a query that found no records in its range.
pub const RETURN_NO_DATA: i64 = -4;

/// What became of a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CommandState {
    /// Waiting for the terminal's next poll.
    Pending,
    /// Handed out; the terminal has not answered yet.
    Sent,
    /// Answered `Return=0`, or `-4` (no records in the range).
    Done,
    /// Answered with any other code.
    Failed,
}

impl CommandState {
    pub fn as_str(self) -> &'static str {
        match self {
            CommandState::Pending => "pending",
            CommandState::Sent => "sent",
            CommandState::Done => "done",
            CommandState::Failed => "failed",
        }
    }

    pub fn parse(text: &str) -> Option<CommandState> {
        [
            CommandState::Pending,
            CommandState::Sent,
            CommandState::Done,
            CommandState::Failed,
        ]
        .into_iter()
        .find(|state| state.as_str() == text)
    }

    /// The state a terminal's `Return` code settles a command in.
    pub fn of_return(code: i64) -> CommandState {
        match code {
            0 | RETURN_NO_DATA => CommandState::Done,
            _ => CommandState::Failed,
        }
    }
}

/// Why a backfill was not queued.
#[derive(Debug, thiserror::Error)]
pub enum BackfillError {
    #[error("the range is reversed or empty: its start ({from}) must be before its end ({to})")]
    Reversed { from: String, to: String },
    #[error("the range starts at {from}, after now ({now}): a terminal has no records of it yet")]
    Ahead { from: String, now: String },
    #[error("no ZKTeco iclock terminal {0:?} has polled this site's listener, and only those take a backfill: check the serial (the site's view, and `terminals` in GET /v1/site/status, list the terminals it has seen, each with its source)")]
    UnknownSerial(String),
    #[error(transparent)]
    Queue(#[from] super::queue::QueueError),
}

impl From<crate::store::db::DbError> for BackfillError {
    fn from(err: crate::store::db::DbError) -> BackfillError {
        BackfillError::Queue(err.into())
    }
}

/// The backfill's command for the records captured from `from` to `to`,
/// in the terminal's local time.
pub fn attlog_query(from: UnixMs, to: UnixMs, zone: &TerminalZone) -> String {
    format!(
        "DATA QUERY ATTLOG StartTime={}\tEndTime={}",
        local_time(from, zone),
        local_time(to, zone)
    )
}

/// `at` on the terminal's clock, as `YYYY-MM-DDThh:mm:ss`.
fn local_time(at: UnixMs, zone: &TerminalZone) -> String {
    let local = zone.utc_to_local(at);
    jiff::Timestamp::from_millisecond(local.0)
        .unwrap_or(jiff::Timestamp::UNIX_EPOCH)
        .strftime("%Y-%m-%dT%H:%M:%S")
        .to_string()
}

/// A command as a poll's answer carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandedOut {
    pub id: i64,
    pub command: String,
}

/// The poll's answer for `commands`: one `C:<id>:<command>` a line; `OK`
/// when there are none.
pub fn poll_body(commands: &[HandedOut]) -> Vec<u8> {
    if commands.is_empty() {
        return iclock::OK.to_vec();
    }
    commands
        .iter()
        .map(|c| format!("C:{}:{}\n", c.id, c.command))
        .collect::<String>()
        .into_bytes()
}

/// One line of a `devicecmd` body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandResult {
    pub id: i64,
    pub code: i64,
}

/// The results a `devicecmd` body reports, at most
/// [`MAX_RESULTS_PER_BODY`]; lines that name no numeric `ID` and `Return`
/// (a command the site did not hand out) are left to the raw body kept
/// beside them.
pub fn parse_results(body: &[u8]) -> Vec<CommandResult> {
    iclock::lines(body)
        .filter_map(|line| {
            let line = std::str::from_utf8(line).ok()?.trim();
            let id = query_param(line, "ID")?.trim().parse().ok()?;
            let code = query_param(line, "Return")?.trim().parse().ok()?;
            Some(CommandResult { id, code })
        })
        .take(MAX_RESULTS_PER_BODY)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_backfill_names_its_range_in_the_terminals_local_time() {
        let from = UnixMs::parse_rfc3339("2026-03-01T06:00:00Z").unwrap();
        let to = UnixMs::parse_rfc3339("2026-03-01T18:30:00Z").unwrap();
        let zone = TerminalZone::parse("+05:30").unwrap();
        assert_eq!(
            attlog_query(from, to, &zone),
            "DATA QUERY ATTLOG StartTime=2026-03-01T11:30:00\tEndTime=2026-03-02T00:00:00"
        );
        let berlin = TerminalZone::parse("Europe/Berlin").unwrap();
        let summer = UnixMs::parse_rfc3339("2026-07-01T06:00:00Z").unwrap();
        assert_eq!(
            attlog_query(summer, summer.plus(Millis::from_secs(60)), &berlin),
            "DATA QUERY ATTLOG StartTime=2026-07-01T08:00:00\tEndTime=2026-07-01T08:01:00"
        );
    }

    #[test]
    fn a_poll_carries_one_command_a_line_or_ok() {
        assert_eq!(poll_body(&[]), b"OK");
        let body = poll_body(&[
            HandedOut {
                id: 7,
                command: "DATA QUERY ATTLOG StartTime=a\tEndTime=b".into(),
            },
            HandedOut {
                id: 9,
                command: "CHECK".into(),
            },
        ]);
        assert_eq!(
            body,
            b"C:7:DATA QUERY ATTLOG StartTime=a\tEndTime=b\nC:9:CHECK\n"
        );
    }

    #[test]
    fn devicecmd_results_are_read_line_by_line_and_others_left_raw() {
        let body = b"ID=7&Return=0&CMD=DATA\r\nID=8&Return=-4&CMD=DATA\nID=abc&Return=0\nnonsense\nID=9&Return=-1002&CMD=DATA";
        assert_eq!(
            parse_results(body),
            [
                CommandResult { id: 7, code: 0 },
                CommandResult { id: 8, code: -4 },
                CommandResult { id: 9, code: -1002 },
            ]
        );
    }

    #[test]
    fn return_codes_settle_done_no_data_or_failed() {
        assert_eq!(CommandState::of_return(0), CommandState::Done);
        assert_eq!(CommandState::of_return(-4), CommandState::Done);
        assert_eq!(CommandState::of_return(-1), CommandState::Failed);
        assert_eq!(CommandState::of_return(-1002), CommandState::Failed);
    }
}
