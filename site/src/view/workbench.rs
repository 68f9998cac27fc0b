//! The decision workbench: every decision waiting for a person, with the
//! context to make it (device, operator, mode, EPC, bin, GRN or manifest
//! line, the reason in words, when it was captured and recorded), and how
//! each is settled: dismissed with a note, or corrected by posting what
//! puts the ledger right through the ledger's own rules
//! ([`crate::ledger::corrections`], a count's approval, a GRN's booking).
//! Every settlement is a row of [`decision_log`]; a settled decision
//! leaves the open list.
//!
//! Five kinds: count variances, GRNs to resolve, rejected items, late
//! undos (an undo the handheld could not make: the supervisor reverses the
//! scan) and terminal records the listener dead-lettered.

use serde::{Deserialize, Serialize};
use stockhop::time::UnixMs;

use crate::ledger::decision_log::{self, actions, kinds, Entry, Subject};
use crate::ledger::modes::{cycle_count, derived_key, reasons as mode_reasons, receive};
use crate::ledger::{codes, corrections, counts, grns, hops, rejections, LedgerError, Refusal};
use crate::listener::queue::DeadLetter;
use crate::store::sql::{params, Connection, OptionalExtension};
use stockhop::reason as sync_reasons;

/// Decisions of one kind the open list carries; the rest wait their turn.
pub const MAX_LISTED_PER_KIND: usize = 100;

/// One line of a GRN to resolve, with the tags received on it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct GrnLineIssue {
    pub sku: String,
    pub expected: u64,
    pub received: u64,
    pub short: u64,
    pub excess: u64,
    /// The EPCs received on the line.
    pub tags: Vec<String>,
}

/// A decision waiting for a person, with its context.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Decision {
    pub id: String,
    pub kind: String,
    /// What waits, in one sentence; the reason is not repeated here (it is
    /// `reason_words`).
    pub summary: String,
    /// The ledger's reason code, where there is one.
    pub reason: Option<String>,
    /// The reason in words.
    pub reason_words: Option<String>,
    pub device_id: Option<String>,
    pub operator_id: Option<String>,
    pub mode: Option<String>,
    pub command: Option<String>,
    pub client_seq: Option<u64>,
    pub epc: Option<String>,
    pub bin: Option<String>,
    pub grn: Option<String>,
    pub manifest: Option<String>,
    pub count_id: Option<String>,
    /// A GRN's short and over lines.
    pub lines: Vec<GrnLineIssue>,
    /// A count's expected units not seen, and units seen not expected.
    pub missing: Vec<String>,
    pub unexpected: Vec<String>,
    /// When the device (or terminal) captured it.
    #[schema(value_type = Option<String>, format = DateTime)]
    pub captured_at: Option<UnixMs>,
    /// When the site recorded it.
    #[schema(value_type = Option<String>, format = DateTime)]
    pub recorded_at: Option<UnixMs>,
    /// What settles it: `dismiss` always, `correct` where a correction
    /// exists.
    pub actions: Vec<String>,
    /// What each action would do, in words: its effect only, since a page
    /// puts them after the action's own label (`Dismiss: the refusal
    /// stands and nothing is posted.`).
    pub dismiss_words: String,
    pub correct_words: Option<String>,
    /// The view catalogue's message for `summary`, `reason_words` (when
    /// there is no `reason`), `dismiss_words` and `correct_words`, so a
    /// page shows them in its reader's language; each formats with
    /// `args`. Null where the words have no message: show the English.
    pub summary_id: Option<String>,
    pub reason_words_id: Option<String>,
    pub dismiss_id: Option<String>,
    pub correct_id: Option<String>,
    /// The values those messages name, by the message's variable: codes
    /// (a mode, a record kind, a command) as the ledger writes them, for
    /// the page to put in words; unit counts as numbers; a scan's number
    /// as text (`?` when the item carried none).
    #[schema(value_type = Object)]
    pub args: serde_json::Map<String, serde_json::Value>,
}

/// Names a message of the site view's catalogue (the catalogues' checker
/// reads the literal).
fn msg(id: &str) -> Option<String> {
    Some(id.to_owned())
}

/// The arguments of a decision's messages, from a JSON object literal.
fn args(value: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
    match value {
        serde_json::Value::Object(map) => map,
        _ => serde_json::Map::new(),
    }
}

impl Decision {
    fn new(id: String, kind: &str, summary: String) -> Decision {
        Decision {
            id,
            kind: kind.to_owned(),
            summary,
            reason: None,
            reason_words: None,
            device_id: None,
            operator_id: None,
            mode: None,
            command: None,
            client_seq: None,
            epc: None,
            bin: None,
            grn: None,
            manifest: None,
            count_id: None,
            lines: Vec::new(),
            missing: Vec::new(),
            unexpected: Vec::new(),
            captured_at: None,
            recorded_at: None,
            actions: vec![actions::DISMISS.to_owned()],
            dismiss_words: "it stays as it stands.".to_owned(),
            correct_words: None,
            summary_id: None,
            reason_words_id: None,
            dismiss_id: None,
            correct_id: None,
            args: serde_json::Map::new(),
        }
    }

    fn correctable(mut self, words: String, id: Option<String>) -> Decision {
        self.actions.push(actions::CORRECT.to_owned());
        self.correct_words = Some(words);
        self.correct_id = id;
        self
    }

    /// The summary with its reason, for the decision log, which shows one
    /// line an entry.
    fn logged_summary(&self) -> String {
        match &self.reason_words {
            Some(why) => format!("{}: {why}", self.summary.trim_end_matches('.')),
            None => self.summary.clone(),
        }
    }
}

/// A reason code in words, for the person deciding.
pub fn reason_words(reason: &str) -> String {
    match reason {
        sync_reasons::STALE_STATE => "the unit changed on the site after the handheld read it",
        mode_reasons::UNKNOWN_BIN => "the bin label is not a bin the site knows",
        mode_reasons::UNKNOWN_UNIT => "the tag is not a unit the site knows",
        mode_reasons::UNIT_STATE => "the unit is not new or in stock (dispatched or missing)",
        mode_reasons::GRN_NOT_ACCEPTED => "the GRN is unknown, or held or rejected by QC",
        mode_reasons::NOT_ON_GRN => "the unit's SKU is not a line of the GRN",
        mode_reasons::EXCESS_LINE => "the GRN line had already received all it expects",
        mode_reasons::ALREADY_RECEIVED => "the unit was received before",
        mode_reasons::COUNT_NOT_OPEN => "the count is not open",
        mode_reasons::MANIFEST_NOT_READY => "the manifest is not packing or dispatched",
        mode_reasons::NOT_ON_MANIFEST => "the tag is not on the manifest",
        mode_reasons::MODE_NOT_ALLOWED => "the device's profile cannot run this mode",
        mode_reasons::READ_ONLY_MODE => "find a unit only reads; nothing was posted",
        sync_reasons::UNDO_WINDOW_EXPIRED => "the undo came more than 120 s after the scan",
        sync_reasons::TARGET_NOT_UNDOABLE => "the handheld cannot undo a scan of this mode",
        sync_reasons::SESSION_NOT_OPEN => "the session was never opened",
        sync_reasons::SESSION_ALREADY_OPENED => "the session was opened already",
        sync_reasons::SESSION_ALREADY_CLOSED => "the session was closed already",
        sync_reasons::SESSION_CLOSED => {
            "it was scanned after a supervisor closed its session at the site"
        }
        sync_reasons::UNKNOWN_TARGET => "it names an item the site never received",
        sync_reasons::CANNOT_UNDO_AN_UNDO => "an undo cannot be undone",
        sync_reasons::TARGET_REJECTED => "the scan it undoes was itself refused",
        sync_reasons::TARGET_NOT_APPLIED => "the scan it undoes has not been applied",
        sync_reasons::TARGET_NOT_REJECTED => "the item it acknowledges was not refused",
        sync_reasons::UNKNOWN_OPERATOR => "the badge is not on the site's list of operators",
        other => return format!("refused ({other})"),
    }
    .to_owned()
}

/// The rows of the open list: final answers whose outcome is `rejected`
/// (the partial index `receipts_rejected` holds just these), not settled.
const OPEN_REJECTED: &str = "r.state = 'final'
      AND CASE WHEN json_valid(r.response) THEN json_extract(r.response, '$.outcome') END = 'rejected'
      AND NOT EXISTS (SELECT 1 FROM decision_log d
                      WHERE d.decision_id = 'item:' || r.scope || ':' || r.key)";

/// Every open decision: counts, GRNs, rejected items and late undos, then
/// the terminal records among `dead_letters` (read from the listener's
/// queue) that nobody settled.
pub fn open(
    conn: &Connection,
    dead_letters: &[DeadLetter],
) -> crate::store::sql::Result<Vec<Decision>> {
    let mut open = count_decisions(conn)?;
    open.extend(grn_decisions(conn)?);
    open.extend(item_decisions(conn, None)?);
    open.extend(terminal_decisions(conn, dead_letters)?);
    Ok(open)
}

fn count_decisions(conn: &Connection) -> crate::store::sql::Result<Vec<Decision>> {
    let rows = counts::awaiting_approval(conn, None, MAX_LISTED_PER_KIND)?;
    let mut decisions = Vec::with_capacity(rows.len());
    for (count_id, closed_at) in rows {
        if let Some(decision) = count_decision(conn, &count_id, closed_at)? {
            decisions.push(decision);
        }
    }
    Ok(decisions)
}

fn count_decision(
    conn: &Connection,
    count_id: &str,
    closed_at: Option<UnixMs>,
) -> crate::store::sql::Result<Option<Decision>> {
    let Some(view) = counts::view(conn, count_id)? else {
        return Ok(None);
    };
    // A count of one bin names it: two counts of one zone differ by it.
    let place = match &view.bin {
        Some(bin) => format!("bin {bin} in {} / {}", view.location, view.zone),
        None => format!("{} / {}", view.location, view.zone),
    };
    let summary = format!(
        "Count {} of {place}: {} missing, {} unexpected",
        view.count_id,
        view.missing.len(),
        view.unexpected.len()
    );
    let mut decision = Decision::new(
        decision_log::count_id(count_id),
        kinds::COUNT_VARIANCE,
        summary,
    );
    decision.count_id = Some(view.count_id.clone());
    decision.bin = view.bin.clone();
    decision.mode = Some("cycle_count".to_owned());
    decision.recorded_at = closed_at;
    let matches = view.missing.is_empty() && view.unexpected.is_empty();
    decision.reason_words = Some(if matches {
        "the count found every expected unit and nothing else".to_owned()
    } else {
        "the count differs from the stock the site expected in the zone".to_owned()
    });
    decision.summary_id = match &view.bin {
        Some(_) => msg("decision-count-bin"),
        None => msg("decision-count"),
    };
    decision.reason_words_id = if matches {
        msg("decision-count-matches")
    } else {
        msg("decision-count-differs")
    };
    decision.dismiss_id = msg("decision-count-dismiss");
    decision.args = args(serde_json::json!({
        "count": view.count_id, "location": view.location, "zone": view.zone,
        "bin": view.bin, "missing": view.missing.len(), "unexpected": view.unexpected.len(),
    }));
    decision.dismiss_words =
        "the stock stays as it stands: the count stays unapproved and posts nothing.".to_owned();
    let correct = format!(
        "{} missing unit(s) become missing, {} unexpected unit(s) move into the bin they were counted in (ADJUST hops).",
        view.missing.len(),
        view.unexpected.len()
    );
    decision.missing = view.missing;
    decision.unexpected = view.unexpected;
    Ok(Some(
        decision.correctable(correct, msg("decision-count-correct")),
    ))
}

fn grn_decisions(conn: &Connection) -> crate::store::sql::Result<Vec<Decision>> {
    let ids = conn
        .prepare_cached(
            "SELECT g.grn FROM grns g
             WHERE g.state = ?1 AND NOT EXISTS
                   (SELECT 1 FROM decision_log d WHERE d.decision_id = 'grn:' || g.grn)
             ORDER BY g.grn LIMIT ?2",
        )?
        .query_map(
            params![grns::states::NEEDS_RESOLUTION, MAX_LISTED_PER_KIND as i64],
            |row| row.get::<_, String>(0),
        )?
        .collect::<crate::store::sql::Result<Vec<_>>>()?;
    let mut decisions = Vec::with_capacity(ids.len());
    for grn in ids {
        if let Some(decision) = grn_decision(conn, &grn)? {
            decisions.push(decision);
        }
    }
    Ok(decisions)
}

fn grn_decision(conn: &Connection, grn: &str) -> crate::store::sql::Result<Option<Decision>> {
    let Some(found) = grns::find(conn, grn)? else {
        return Ok(None);
    };
    let mut lines = Vec::new();
    for line in found.lines.iter().filter(|l| l.expected != l.received) {
        let tags = conn
            .prepare_cached(
                "SELECT u.epc FROM grn_receipts gr JOIN units u ON u.unit_id = gr.unit_id
                 WHERE gr.grn = ?1 AND gr.sku = ?2 ORDER BY gr.hop_id",
            )?
            .query_map([grn, line.sku.as_str()], |row| {
                row.get::<_, Option<String>>(0)
            })?
            .filter_map(|epc| epc.transpose())
            .collect::<crate::store::sql::Result<Vec<_>>>()?;
        lines.push(GrnLineIssue {
            sku: line.sku.clone(),
            expected: line.expected,
            received: line.received,
            short: line.expected.saturating_sub(line.received),
            excess: line.received.saturating_sub(line.expected),
            tags,
        });
    }
    let described: Vec<String> = lines
        .iter()
        .map(|l| {
            let off = if l.short > 0 {
                format!("short {}", l.short)
            } else {
                format!("over {}", l.excess)
            };
            format!("{} {} of {} received, {off}", l.sku, l.received, l.expected)
        })
        .collect();
    let mut decision = Decision::new(
        decision_log::grn_id(grn),
        kinds::GRN_RESOLUTION,
        format!("GRN {grn}: {}", described.join("; ")),
    );
    decision.grn = Some(grn.to_owned());
    decision.mode = Some("receive".to_owned());
    decision.reason_words =
        Some("the GRN was closed with lines that did not receive what they expect".to_owned());
    decision.summary_id = msg("decision-grn");
    decision.reason_words_id = msg("decision-grn-why");
    decision.dismiss_id = msg("decision-grn-dismiss");
    decision.args = args(serde_json::json!({
        "grn": grn, "lines": lines.len(),
        "short": lines.iter().map(|l| l.short).sum::<u64>(),
        "excess": lines.iter().map(|l| l.excess).sum::<u64>(),
    }));
    // Who received on it last, and when.
    let last = conn
        .prepare_cached(
            "SELECT h.device_id, s.operator_id, h.occurred_at, h.recorded_at
             FROM grn_receipts gr JOIN hops h ON h.hop_id = gr.hop_id
             LEFT JOIN sessions s ON s.session_id = h.session_id
             WHERE gr.grn = ?1 ORDER BY h.hop_id DESC LIMIT 1",
        )?
        .query_row([grn], |row| {
            Ok((
                row.get::<_, String>(0)?,
                row.get::<_, Option<String>>(1)?,
                row.get::<_, i64>(2)?,
                row.get::<_, i64>(3)?,
            ))
        })
        .optional()?;
    if let Some((device_id, operator_id, captured, recorded)) = last {
        decision.device_id = Some(device_id);
        decision.operator_id = operator_id;
        decision.captured_at = Some(UnixMs(captured));
        decision.recorded_at = Some(UnixMs(recorded));
    }
    // Resolving a GRN is one operation, whoever does it: accepting it as
    // received books each short or over line.
    decision.dismiss_words = "the GRN is complete as received: each short or over line is \
                              booked as an ADJUST hop with its SKU and quantity."
        .to_owned();
    decision.lines = lines;
    Ok(Some(decision))
}

/// What an item receipt row holds for a decision.
struct RejectedRow {
    device_id: String,
    key: String,
    client_seq: Option<i64>,
    command: String,
    received_at: i64,
    item: Option<String>,
    reason: Option<String>,
    operator_id: Option<String>,
    mode: Option<String>,
    context: Option<String>,
}

/// The rejected items nobody settled, newest first; with `only`, that one
/// item (by device and key).
fn item_decisions(
    conn: &Connection,
    only: Option<(&str, &str)>,
) -> crate::store::sql::Result<Vec<Decision>> {
    let select = |filter: &str| {
        format!(
            "SELECT r.scope, r.key, r.client_seq, r.command, r.received_at, r.item,
                    json_extract(r.response, '$.reason'), s.operator_id, s.mode, s.context
             FROM receipts r LEFT JOIN sessions s ON s.session_id = r.session_id
             WHERE {OPEN_REJECTED} {filter}
             ORDER BY r.received_at DESC LIMIT ?1"
        )
    };
    let read = |row: &crate::store::sql::Row<'_>| {
        Ok(RejectedRow {
            device_id: row.get(0)?,
            key: row.get(1)?,
            client_seq: row.get(2)?,
            command: row.get(3)?,
            received_at: row.get(4)?,
            item: row.get(5)?,
            reason: row.get(6)?,
            operator_id: row.get(7)?,
            mode: row.get(8)?,
            context: row.get(9)?,
        })
    };
    let rows = match only {
        Some((device_id, key)) => conn
            .prepare_cached(&select("AND r.scope = ?2 AND r.key = ?3"))?
            .query_map(params![1_i64, device_id, key], read)?
            .collect::<crate::store::sql::Result<Vec<_>>>()?,
        // Nothing unsettled (as the rejection summaries count it): no
        // walk past the settled ones.
        None if rejections::unsettled(conn)? == 0 => Vec::new(),
        None => conn
            .prepare_cached(&select(""))?
            .query_map([MAX_LISTED_PER_KIND as i64], read)?
            .collect::<crate::store::sql::Result<Vec<_>>>()?,
    };
    rows.into_iter()
        .map(|row| item_decision(conn, row))
        .collect()
}

fn text(value: &serde_json::Value, name: &str) -> Option<String> {
    value.get(name)?.as_str().map(str::to_owned)
}

fn item_decision(conn: &Connection, row: RejectedRow) -> crate::store::sql::Result<Decision> {
    let item: serde_json::Value = row
        .item
        .as_deref()
        .and_then(|text| serde_json::from_str(text).ok())
        .unwrap_or_default();
    let body = item.get("body").cloned().unwrap_or_default();
    let context: serde_json::Value = row
        .context
        .as_deref()
        .and_then(|text| serde_json::from_str(text).ok())
        .unwrap_or_default();
    let late_undo = row.command == "undo"
        && matches!(
            row.reason.as_deref(),
            Some(sync_reasons::UNDO_WINDOW_EXPIRED | sync_reasons::TARGET_NOT_UNDOABLE)
        );
    let kind = if late_undo {
        kinds::LATE_UNDO
    } else {
        kinds::REJECTED_ITEM
    };
    let reason = row.reason.clone().unwrap_or_default();
    let mut decision = Decision::new(
        decision_log::item_id(&row.device_id, &row.key),
        kind,
        String::new(),
    );
    decision.reason_words = Some(reason_words(&reason));
    decision.reason = row.reason;
    decision.device_id = Some(row.device_id.clone());
    decision.operator_id = row.operator_id.or_else(|| text(&body, "operator_id"));
    decision.mode = text(&body, "mode").or(row.mode);
    decision.command = Some(row.command.clone());
    decision.client_seq = row.client_seq.map(|seq| seq as u64);
    decision.epc = text(&body, "epc").or_else(|| text(&body, "code"));
    decision.bin = text(&body, "bin");
    let named = |name: &str| {
        text(&body, name)
            .or_else(|| body.get("context").and_then(|c| text(c, name)))
            .or_else(|| text(&context, name))
    };
    decision.grn = named("grn");
    decision.manifest = named("manifest");
    decision.count_id = named("count_id");
    decision.captured_at =
        text(&item, "occurred_at").and_then(|at| UnixMs::parse_rfc3339(&at).ok());
    decision.recorded_at = Some(UnixMs(row.received_at));
    let seq = decision
        .client_seq
        .map_or_else(|| "?".to_owned(), |seq| seq.to_string());
    if late_undo {
        // The scan it meant to undo: what a correction reverses.
        let target = text(&body, "target_key").unwrap_or_default();
        let hop = hops::by_key(conn, &row.device_id, &target)?;
        if let Some(hop) = &hop {
            decision.mode = hop.mode.clone().or(decision.mode);
            decision.bin = hop.to_bin.clone().or(decision.bin);
            if let Some(unit_id) = hop.unit_id {
                decision.epc = crate::ledger::units::get(conn, unit_id)?
                    .and_then(|unit| unit.epc)
                    .or(decision.epc);
            }
        }
        let what = decision.epc.as_deref().unwrap_or("a unit");
        let mode = decision.mode.as_deref().unwrap_or("a scan");
        decision.summary = format!(
            "Undo #{seq} of {what} ({mode}) on {} could not be made.",
            row.device_id
        );
        decision.dismiss_words = "the scan stands as recorded.".to_owned();
        decision.summary_id = msg("decision-late-undo");
        decision.dismiss_id = msg("decision-late-undo-dismiss");
        decision.args = args(serde_json::json!({
            "seq": seq, "unit": decision.epc.as_deref().unwrap_or("?"),
            "mode": decision.mode.as_deref().unwrap_or("?"), "device": row.device_id,
        }));
        let reversible = match &hop {
            Some(hop) => corrections::reversible(conn, hop)?,
            None => false,
        };
        if reversible {
            let (words, id) = match decision.mode.as_deref() {
                Some("receive") => (
                    format!("the receive is reversed: {what} leaves its GRN line."),
                    msg("decision-late-undo-receive"),
                ),
                Some("dispatch_verify") => (
                    format!(
                    "the dispatch is reversed: {what} is back in its bin and unverified on the manifest."
                ),
                    msg("decision-late-undo-dispatch"),
                ),
                Some("cycle_count") => (
                    format!("the count scan is reversed: {what} is no longer counted."),
                    msg("decision-late-undo-count"),
                ),
                _ => (
                    format!("the put-away is reversed: {what} goes back where it was."),
                    msg("decision-late-undo-put-away"),
                ),
            };
            decision = decision.correctable(words, id);
        }
        return Ok(decision);
    }
    let what = decision
        .epc
        .clone()
        .unwrap_or_else(|| row.command.replace('_', " "));
    let mode = decision
        .mode
        .as_deref()
        .unwrap_or("no mode")
        .replace('_', " ");
    decision.summary = format!(
        "{} #{seq} ({what}, {mode}) on {} was refused.",
        row.command.replace('_', " "),
        row.device_id
    );
    decision.dismiss_words = "the refusal stands and nothing is posted.".to_owned();
    decision.summary_id = msg("decision-item");
    decision.dismiss_id = msg("decision-item-dismiss");
    decision.args = args(serde_json::json!({
        "command": row.command, "seq": seq, "unit": decision.epc.as_deref().unwrap_or("–"),
        "mode": decision.mode.as_deref().unwrap_or("?"), "device": row.device_id,
        "bin": decision.bin,
    }));
    let puts_away = row.command == "scan"
        && decision.mode.as_deref() == Some("put_away")
        && matches!(
            reason.as_str(),
            sync_reasons::STALE_STATE | mode_reasons::UNIT_STATE
        );
    let placeable = match (&decision.epc, &decision.bin) {
        (Some(epc), Some(bin)) if puts_away => corrections::placeable(conn, epc, bin)?,
        _ => false,
    };
    if let (true, Some(epc), Some(bin)) = (placeable, &decision.epc, &decision.bin) {
        let words = format!("{epc} is in stock in bin {bin} (an ADJUST hop).");
        decision = decision.correctable(words, msg("decision-item-correct"));
    }
    Ok(decision)
}

fn terminal_decisions(
    conn: &Connection,
    dead_letters: &[DeadLetter],
) -> crate::store::sql::Result<Vec<Decision>> {
    let mut decisions = Vec::new();
    for dead in dead_letters {
        let id = decision_log::terminal_id(dead.seq);
        if decision_log::is_settled(conn, &id)? {
            continue;
        }
        decisions.push(terminal_decision(dead));
        if decisions.len() == MAX_LISTED_PER_KIND {
            break;
        }
    }
    Ok(decisions)
}

fn terminal_decision(dead: &DeadLetter) -> Decision {
    let status = dead
        .status
        .map_or_else(|| "no answer".to_owned(), |s| format!("HTTP {s}"));
    let answer = dead.body.clone().unwrap_or_default();
    let mut decision = Decision::new(
        decision_log::terminal_id(dead.seq),
        kinds::TERMINAL_FAILED,
        format!(
            "{} record of {} from terminal {} was refused by the ledger ({status})",
            dead.kind.replace('_', " "),
            dead.subject,
            dead.device_serial
        ),
    );
    decision.device_id = Some(dead.device_serial.clone());
    decision.epc = (dead.kind == "tag_read").then(|| dead.subject.clone());
    decision.recorded_at = Some(dead.queued_at);
    decision.reason_words = Some(format!(
        "the ledger refused it for good ({status}): {answer}"
    ));
    decision.dismiss_words = "the record stays refused.".to_owned();
    decision.summary_id = match dead.status {
        Some(_) => msg("decision-terminal"),
        None => msg("decision-terminal-unanswered"),
    };
    decision.reason_words_id = match dead.status {
        Some(_) => msg("decision-terminal-why"),
        None => msg("decision-terminal-why-unanswered"),
    };
    decision.dismiss_id = msg("decision-terminal-dismiss");
    decision.args = args(serde_json::json!({
        "kind": dead.kind, "subject": dead.subject, "terminal": dead.device_serial,
        "status": dead.status, "answer": answer,
    }));
    decision.correctable(
        "the record goes to the ledger again (once what refused it is fixed, e.g. the terminal commissioned)."
            .to_owned(),
        msg("decision-terminal-correct"),
    )
}

/// The open decision `id` names, read again (from `dead_letters` for a
/// terminal record); `None` when it is settled or does not exist.
pub fn find_open(
    conn: &Connection,
    id: &str,
    dead_letters: &[DeadLetter],
) -> crate::store::sql::Result<Option<Decision>> {
    if decision_log::is_settled(conn, id)? {
        return Ok(None);
    }
    Ok(match Subject::parse(id) {
        Some(Subject::Count(count_id)) => {
            match counts::awaiting_approval(conn, Some(&count_id), 1)?.pop() {
                Some((count_id, closed_at)) => count_decision(conn, &count_id, closed_at)?,
                None => None,
            }
        }
        Some(Subject::Grn(grn)) => match grns::find(conn, &grn)? {
            Some(found) if found.state == grns::states::NEEDS_RESOLUTION => {
                grn_decision(conn, &grn)?
            }
            _ => None,
        },
        Some(Subject::Item { device_id, key }) => {
            item_decisions(conn, Some((&device_id, &key)))?.pop()
        }
        Some(Subject::Terminal(seq)) => dead_letters
            .iter()
            .find(|dead| dead.seq == seq)
            .map(terminal_decision),
        None => None,
    })
}

/// How a person settles a decision.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, utoipa::ToSchema)]
pub struct Settle {
    pub action: String,
    #[serde(default)]
    pub note: String,
}

fn refused(status: u16, code: &'static str, message: impl Into<String>) -> LedgerError {
    LedgerError::Refused(Refusal::new(status, code, message))
}

/// Checks a settlement before anything is read: the action is one of
/// dismiss and correct, the note within [`decision_log::MAX_NOTE_CHARS`].
pub fn check(settle: &Settle) -> Result<(), LedgerError> {
    if settle.action != actions::DISMISS && settle.action != actions::CORRECT {
        return Err(refused(
            400,
            stockhop::wire::codes::MALFORMED_REQUEST,
            "action is dismiss or correct",
        ));
    }
    let note = settle.note.trim();
    if note.chars().count() > decision_log::MAX_NOTE_CHARS || note.chars().any(char::is_control) {
        return Err(refused(
            400,
            stockhop::wire::codes::MALFORMED_REQUEST,
            format!(
                "note is at most {} characters, without control characters",
                decision_log::MAX_NOTE_CHARS
            ),
        ));
    }
    Ok(())
}

/// Settles the open decision `decision` on behalf of `admin` at `now`,
/// in the caller's transaction: the correction's hops (for `correct`) and
/// the log's row commit together. A terminal record's resend is the
/// caller's (it lives in the listener's own database).
pub fn settle(
    conn: &Connection,
    decision: &Decision,
    settle: &Settle,
    admin: &str,
    now: UnixMs,
) -> Result<Entry, LedgerError> {
    let correct = settle.action == actions::CORRECT;
    if correct && !decision.actions.iter().any(|a| a == actions::CORRECT) {
        return Err(refused(
            409,
            codes::NOT_CORRECTABLE,
            format!("{} has no correction: dismiss it with a note", decision.id),
        ));
    }
    let note = settle.note.trim().to_owned();
    let key = derived_key(&[&decision.id, actions::CORRECT]);
    let facts = serde_json::json!({"decision": decision.id, "admin": admin, "note": note});
    let mut hop_ids = Vec::new();
    match Subject::parse(&decision.id) {
        Some(Subject::Count(count_id)) if correct => {
            hop_ids = cycle_count::approve(conn, &count_id, now)?.hop_ids;
        }
        Some(Subject::Grn(grn)) => hop_ids = receive::resolve(conn, &grn, &note, now)?,
        Some(Subject::Item { device_id, .. }) if correct => {
            if decision.kind == kinds::LATE_UNDO {
                let target = item_target(conn, decision)?;
                let original = hops::by_key(conn, &device_id, &target)?.ok_or_else(|| {
                    refused(
                        409,
                        codes::NOT_CORRECTABLE,
                        "the scan it undoes posted no hop",
                    )
                })?;
                hop_ids.push(corrections::compensate(conn, &original, &key, &facts, now)?);
            } else {
                let (Some(epc), Some(bin)) = (&decision.epc, &decision.bin) else {
                    return Err(refused(
                        409,
                        codes::NOT_CORRECTABLE,
                        "no unit or bin to confirm",
                    ));
                };
                hop_ids.push(corrections::place(conn, epc, bin, &key, &facts, now)?);
            }
        }
        _ => {}
    }
    let entry = Entry {
        decision_id: decision.id.clone(),
        kind: decision.kind.clone(),
        action: settle.action.clone(),
        settled_by: admin.to_owned(),
        note,
        settled_at: now,
        hop_ids,
        summary: decision.logged_summary(),
    };
    decision_log::record(conn, &entry)?;
    Ok(entry)
}

/// The key of the scan a late undo names, from its stored body.
fn item_target(conn: &Connection, decision: &Decision) -> Result<String, LedgerError> {
    let Some(Subject::Item { device_id, key }) = Subject::parse(&decision.id) else {
        return Err(LedgerError::Corrupt(format!("{} is no item", decision.id)));
    };
    let item: Option<Option<String>> = conn
        .prepare_cached("SELECT item FROM receipts WHERE scope = ?1 AND key = ?2")?
        .query_row([device_id.as_str(), key.as_str()], |row| row.get(0))
        .optional()?;
    item.flatten()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .and_then(|item| text(item.get("body")?, "target_key"))
        .ok_or_else(|| refused(409, codes::NOT_CORRECTABLE, "the undo's body was not kept"))
}

/// `POST /v1/site/counts/{id}/approve`: the count's approval, with its
/// own refusals (`COUNT_NOT_CLOSED`, …), logged as the correction of its
/// decision, in one transaction.
pub fn approve_count(
    conn: &Connection,
    count_id: &str,
    admin: &str,
    now: UnixMs,
) -> Result<Entry, LedgerError> {
    crate::ledger::savepoint(conn, |conn| {
        let closed_at = conn
            .prepare_cached("SELECT closed_at FROM counts WHERE count_id = ?1")?
            .query_row([count_id], |row| row.get::<_, Option<i64>>(0))
            .optional()?
            .flatten();
        let decision = count_decision(conn, count_id, closed_at.map(UnixMs))?;
        let approval = cycle_count::approve(conn, count_id, now)?;
        let entry = Entry {
            decision_id: decision_log::count_id(count_id),
            kind: kinds::COUNT_VARIANCE.to_owned(),
            action: actions::CORRECT.to_owned(),
            settled_by: admin.to_owned(),
            note: String::new(),
            settled_at: now,
            hop_ids: approval.hop_ids,
            summary: decision.map(|d| d.summary).unwrap_or_default(),
        };
        decision_log::record(conn, &entry)?;
        Ok(entry)
    })
}

/// `POST /v1/site/grns/{grn}/resolve`: the GRN accepted as received, with
/// its own refusals (`NOTHING_TO_RESOLVE`, …), logged as its decision
/// dismissed, in one transaction.
pub fn resolve_grn(
    conn: &Connection,
    grn: &str,
    admin: &str,
    now: UnixMs,
) -> Result<Entry, LedgerError> {
    crate::ledger::savepoint(conn, |conn| {
        let decision = grn_decision(conn, grn)?;
        let hop_ids = receive::resolve(conn, grn, "", now)?;
        let entry = Entry {
            decision_id: decision_log::grn_id(grn),
            kind: kinds::GRN_RESOLUTION.to_owned(),
            action: actions::DISMISS.to_owned(),
            settled_by: admin.to_owned(),
            note: String::new(),
            settled_at: now,
            hop_ids,
            summary: decision.map(|d| d.summary).unwrap_or_default(),
        };
        decision_log::record(conn, &entry)?;
        Ok(entry)
    })
}

#[cfg(test)]
mod tests {
    use super::reason_words;

    #[test]
    fn every_reason_the_ledger_gives_has_words() {
        for reason in stockhop::reason::ALL {
            let words = reason_words(reason);
            assert!(!words.starts_with("refused ("), "{reason} has no words");
        }
    }
}
