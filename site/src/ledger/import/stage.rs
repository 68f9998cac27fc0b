//! Staging: every row of an input parsed, checked and written to
//! `import_rows` in turns, before anything the handhelds read changes.

use super::*;
use crate::limits::FREED_PAGES_PER_TURN;

/// Parses, checks and stages every row; returns how many. Stops staging
/// (but goes on checking) at the first bad row.
pub(super) fn stage<R: std::io::Read>(
    conns: &impl Connections,
    import_id: i64,
    records: &mut Records<R>,
    clock: &dyn Fn() -> UnixMs,
) -> crate::store::sql::Result<usize> {
    let mut checked = Checked::default();
    let mut ahead: VecDeque<(u64, Row)> = VecDeque::new();
    let mut rows = 0;
    loop {
        let more = records.read_ahead(&mut checked, &mut ahead);
        while !ahead.is_empty() {
            let clean = records.errors.is_empty();
            let now = clock();
            let (consumed, staged, errors) = run_turn(conns, |conn, wanted| {
                stage_turn(conn, import_id, &ahead, clean, now, wanted)
            })?;
            ahead.drain(..consumed);
            rows += staged;
            for error in errors {
                records.error(error.line, error.message);
            }
            if records.errors.len() >= MAX_IMPORT_ERRORS {
                return Ok(rows);
            }
        }
        if !more {
            return Ok(rows);
        }
    }
}

/// One staging transaction: checks rows from the front of `ahead` against
/// the ledger and, while the import is `clean`, writes the good ones, for
/// at most its budget ([`turn_budget`]; [`TURN_FLOOR`] while `wanted`). Returns the
/// rows it took, those it staged and the errors it found.
pub(super) fn stage_turn(
    conn: &mut Connection,
    import_id: i64,
    ahead: &VecDeque<(u64, Row)>,
    clean: bool,
    now: UnixMs,
    wanted: &dyn Fn() -> bool,
) -> crate::store::sql::Result<(usize, usize, Vec<LineError>)> {
    let turn = Instant::now();
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let budget = turn_budget(tx.engine());
    let mut consumed = 0;
    let mut staged = 0;
    let mut errors = Vec::new();
    let mut batch: Vec<(u64, String)> = Vec::with_capacity(STAGE_INSERT_ROWS);
    for (line, row) in ahead {
        if consumed > 0 && turn_over(turn.elapsed(), budget, wanted) {
            break;
        }
        consumed += 1;
        match row.check_in(&tx)? {
            Err(message) => errors.push(LineError {
                line: *line,
                message,
            }),
            Ok(()) if clean && errors.is_empty() => {
                let fields = serde_json::to_string(row)
                    .map_err(|err| crate::store::sql::Error::conversion(0, err.to_string()))?;
                batch.push((*line, fields));
                if batch.len() == STAGE_INSERT_ROWS {
                    staged += insert_staged(&tx, import_id, &mut batch)?;
                }
            }
            Ok(()) => {}
        }
    }
    staged += insert_staged(&tx, import_id, &mut batch)?;
    tx.execute(
        "UPDATE imports SET touched_at = ?2 WHERE import_id = ?1",
        params![import_id, now.0],
    )?;
    tx.commit()?;
    Ok((consumed, staged, errors))
}

pub(super) fn insert_staged(
    conn: &Connection,
    import_id: i64,
    batch: &mut Vec<(u64, String)>,
) -> crate::store::sql::Result<usize> {
    if batch.is_empty() {
        return Ok(0);
    }
    let placeholders: Vec<String> = (0..batch.len())
        .map(|i| format!("(?{}, ?{}, ?{})", 3 * i + 1, 3 * i + 2, 3 * i + 3))
        .collect();
    let sql = format!(
        "INSERT INTO import_rows (import_id, line, fields) VALUES {}",
        placeholders.join(", ")
    );
    let mut values: Vec<crate::store::sql::Value> = Vec::with_capacity(batch.len() * 3);
    for (line, fields) in batch.drain(..) {
        values.push(crate::store::sql::Value::Integer(import_id));
        values.push(crate::store::sql::Value::Integer(line as i64));
        values.push(crate::store::sql::Value::Text(fields));
    }
    conn.prepare_cached(&sql)?.execute(values.as_slice())?;
    Ok(values.len() / 3)
}

/// Sweeps an import that will not be applied: its staged rows a turn at a
/// time, then its row.
pub(super) fn abandon(conns: &impl Connections, import_id: i64) -> crate::store::sql::Result<()> {
    loop {
        let (swept, _) = conns.turn(|conn| {
            conn.execute(
                "DELETE FROM import_rows WHERE import_id = ?1 AND line IN
                     (SELECT line FROM import_rows WHERE import_id = ?1 ORDER BY line LIMIT ?2)",
                params![import_id, APPLY_READ_ROWS],
            )
        });
        let swept = swept?;
        if swept == 0 {
            break;
        }
    }
    conns.with(|conn| conn.execute("DELETE FROM imports WHERE import_id = ?1", [import_id]))?;
    return_freed_pages(conns)
}

/// Gives the pages a swept import freed back to the file system, a turn of
/// at most [`FREED_PAGES_PER_TURN`] at a time: a refused 200 MB import
/// otherwise left some 300 MB of free pages in the ledger's file. SQLite
/// only, and only in a file kept with `auto_vacuum=INCREMENTAL` (the site
/// opens every file so, [`crate::store::db`]); PostgreSQL's own vacuum
/// does this there.
fn return_freed_pages(conns: &impl Connections) -> crate::store::sql::Result<()> {
    let mut left = i64::MAX;
    loop {
        let (now_left, _) = conns.turn(|conn| -> crate::store::sql::Result<i64> {
            let Some(sqlite) = conn.as_sqlite() else {
                return Ok(0);
            };
            let mode: i64 = sqlite.pragma_query_value(None, "auto_vacuum", |row| row.get(0))?;
            if mode != SQLITE_AUTO_VACUUM_INCREMENTAL {
                return Ok(0);
            }
            sqlite.execute_batch(&format!(
                "PRAGMA incremental_vacuum({FREED_PAGES_PER_TURN})"
            ))?;
            Ok(sqlite.pragma_query_value(None, "freelist_count", |row| row.get(0))?)
        });
        let now_left = now_left?;
        // Done, or no longer shrinking (pages another writer frees meanwhile
        // are its own to return).
        if now_left == 0 || now_left >= left {
            return Ok(());
        }
        left = now_left;
    }
}

/// `PRAGMA auto_vacuum`'s value for `INCREMENTAL`.
const SQLITE_AUTO_VACUUM_INCREMENTAL: i64 = 2;
