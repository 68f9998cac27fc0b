//! Applying: the flip that decides an import, the turns that apply its
//! staged rows to the reference tables, and the sweep of the rows an
//! import kept for readers from before its flip.

use super::*;

/// Decides the import: one statement. Waits while another import applies
/// (taking it over once its lease runs out).
pub(super) fn flip(
    conns: &impl Connections,
    import_id: i64,
    rows: usize,
    clock: &dyn Fn() -> UnixMs,
) -> crate::store::sql::Result<()> {
    loop {
        let now = clock();
        let flipped = while_busy(|| conns.with(|conn| flip_now(conn, import_id, rows, now)));
        match flipped {
            Ok(_) => return Ok(()),
            Err(err) if err.unique_violation().is_some() => {
                // Keep this import's lease while it waits.
                conns.with(|conn| {
                    conn.execute(
                        "UPDATE imports SET touched_at = ?2 WHERE import_id = ?1",
                        params![import_id, now.0],
                    )
                })?;
                settle(conns, now)?;
                std::thread::sleep(APPLYING_POLL);
            }
            Err(err) => return Err(err),
        }
    }
}

/// The flip's one transaction. On PostgreSQL it first takes the reference
/// lock that every writer of cached rows holds to its commit: every change
/// number at or below the watermark has then committed, and every writer
/// after it sees the import applying, so the schema keeps the rows it
/// changes as they stood at the flip (migration 0019).
pub(super) fn flip_now(
    conn: &mut Connection,
    import_id: i64,
    rows: usize,
    now: UnixMs,
) -> crate::store::sql::Result<usize> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    if tx.engine() == crate::store::sql::Engine::Postgres {
        tx.execute_batch("SELECT 1 FROM reference_lock WHERE id = 1 FOR NO KEY UPDATE")?;
    }
    let flipped = tx.execute(
        "UPDATE imports SET state = 'applying', row_count = ?2, touched_at = ?3,
                watermark = (SELECT seq FROM reference_clock)
         WHERE import_id = ?1",
        params![import_id, rows as i64, now.0],
    )?;
    tx.commit()?;
    Ok(flipped)
}

/// Applies a decided import's staged rows a turn at a time; returns the
/// rows that changed something, this run's and earlier runs' together.
pub(super) fn apply(
    conns: &impl Connections,
    import_id: i64,
    kind: Kind,
    started_at: UnixMs,
    clock: &dyn Fn() -> UnixMs,
) -> crate::store::sql::Result<usize> {
    loop {
        let now = clock();
        let done = run_turn(conns, |conn, wanted| {
            apply_turn(conn, import_id, kind, started_at, now, wanted)
        })?;
        if let Some(changed) = done {
            run_turn(conns, |conn, _| finish(conn, import_id))?;
            sweep_kept(conns)?;
            return Ok(changed);
        }
    }
}

/// Ends an applied import: its row deleted, so handhelds' pages go past
/// the change number of its flip again ([`visible_until`]). On PostgreSQL
/// it first takes the reference lock that the apply turns went without
/// (see [`write_unlocked`]): once it holds it, every change number taken
/// before has committed, so a handheld that pages past the import's
/// numbers passes none that commits later.
pub(super) fn finish(conn: &mut Connection, import_id: i64) -> crate::store::sql::Result<()> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    if tx.engine() == crate::store::sql::Engine::Postgres {
        tx.execute_batch("SELECT 1 FROM reference_lock WHERE id = 1 FOR NO KEY UPDATE")?;
    }
    tx.execute("DELETE FROM imports WHERE import_id = ?1", [import_id])?;
    tx.commit()
}

/// Sweeps the rows that imports no longer applying kept as they stood at
/// their flips (migration 0019), [`APPLY_READ_ROWS`] a statement and as
/// many statements as fit a turn ([`turn_budget`]): after an
/// import ends, and at every [`settle`] for an importer killed between its
/// end and its sweep. Returns how many it swept.
pub(super) fn sweep_kept(conns: &impl Connections) -> crate::store::sql::Result<usize> {
    let mut swept = 0;
    loop {
        let ended: Option<i64> = conns.with(|conn| {
            conn.query_row(
                "SELECT import_id FROM import_before
                 WHERE import_id NOT IN (SELECT import_id FROM imports WHERE state = 'applying')
                 LIMIT 1",
                [],
                |row| row.get(0),
            )
            .optional()
        })?;
        let Some(import_id) = ended else {
            return Ok(swept);
        };
        loop {
            let n = run_turn(conns, |conn, wanted| sweep_turn(conn, import_id, wanted))?;
            if n == 0 {
                break;
            }
            swept += n;
        }
    }
}

/// One turn of [`sweep_kept`] for the ended import `import_id`: each
/// statement deletes [`APPLY_READ_ROWS`] kept rows, a range of the key
/// from its start (no statement looks at rows another has deleted, or at
/// the rest), as many statements as fit the turn. Returns how many.
pub(super) fn sweep_turn(
    conn: &mut Connection,
    import_id: i64,
    wanted: &dyn Fn() -> bool,
) -> crate::store::sql::Result<usize> {
    let turn = Instant::now();
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let budget = turn_budget(tx.engine());
    let mut swept = 0;
    loop {
        let deleted = tx.execute(
            "DELETE FROM import_before WHERE import_id = ?1 AND ref_seq <= coalesce(
                 (SELECT ref_seq FROM import_before WHERE import_id = ?1
                  ORDER BY ref_seq LIMIT 1 OFFSET ?2),
                 9223372036854775807)",
            params![import_id, APPLY_READ_ROWS - 1],
        )?;
        swept += deleted;
        if deleted < APPLY_READ_ROWS as usize || turn_over(turn.elapsed(), budget, wanted) {
            break;
        }
    }
    tx.commit()?;
    Ok(swept)
}

/// Lets an apply turn on PostgreSQL write reference rows without the
/// reference lock, which every other writer of them holds to its commit:
/// a sync that moves a unit then never waits for an import's turn. Safe
/// because no handheld reads past the flip's change number until the
/// import ends, and [`finish`] takes the lock. Not for units: a units row
/// that moves a unit books a hop, whose id needs the lock, and a turn that
/// took it after the units it holds could deadlock with a sync that holds
/// it and wants one of them; those turns lock at their first unit, as
/// before. (SQLite has one writer, which orders every change number.)
pub(super) fn write_unlocked(tx: &Connection, kind: Kind) -> crate::store::sql::Result<()> {
    if tx.engine() == crate::store::sql::Engine::Postgres && kind != Kind::Units {
        tx.execute_batch("SET LOCAL stockhop.import_applying = 'on'")?;
    }
    Ok(())
}

/// One apply transaction of at most about its budget ([`turn_budget`]; [`TURN_FLOOR`]
/// while `wanted`); the import's total of changed rows once the last row
/// is applied (its row is then deleted by [`finish`]), else `None`. Staged
/// rows are read
/// [`APPLY_READ_ROWS`] at a time, so reading never takes the turn's budget
/// from applying; bins go in one statement a read.
pub(super) fn apply_turn(
    conn: &mut Connection,
    import_id: i64,
    kind: Kind,
    started_at: UnixMs,
    now: UnixMs,
    wanted: &dyn Fn() -> bool,
) -> crate::store::sql::Result<Option<usize>> {
    let turn = Instant::now();
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    write_unlocked(&tx, kind)?;
    let budget = turn_budget(tx.engine());
    let mut changed = 0_i64;
    let mut last_line = None;
    let finished = loop {
        if last_line.is_some() && turn_over(turn.elapsed(), budget, wanted) {
            break false;
        }
        let staged: Vec<(i64, String)> = tx
            .prepare_cached(
                "SELECT line, fields FROM import_rows WHERE import_id = ?1 AND line > ?2
                 ORDER BY line LIMIT ?3",
            )?
            .query_map(
                params![import_id, last_line.unwrap_or(i64::MIN), APPLY_READ_ROWS],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )?
            .collect::<crate::store::sql::Result<_>>()?;
        let rows = staged
            .iter()
            .map(|(line, fields)| {
                serde_json::from_str::<Row>(fields)
                    .map(|row| (*line, row))
                    .map_err(|err| crate::store::sql::Error::conversion(2, err.to_string()))
            })
            .collect::<crate::store::sql::Result<Vec<(i64, Row)>>>()?;
        if kind == Kind::Bins {
            for chunk in rows.chunks(apply_statement_rows(tx.engine())) {
                if last_line.is_some() && turn_over(turn.elapsed(), budget, wanted) {
                    break;
                }
                changed += apply_bins(&tx, chunk)? as i64;
                last_line = chunk.last().map(|(line, _)| *line).or(last_line);
            }
        } else {
            for (line, row) in &rows {
                if last_line.is_some() && turn_over(turn.elapsed(), budget, wanted) {
                    break;
                }
                match row.apply(&tx, started_at, now, (import_id, *line))? {
                    Applied::Changed => changed += 1,
                    Applied::Same => {}
                    Applied::Skipped(reason) => tracing::warn!(
                        import_id,
                        kind = kind.name(),
                        line,
                        %reason,
                        "an imported row was left out: the ledger changed under it after it was checked"
                    ),
                }
                last_line = Some(*line);
            }
        }
        // Rows are staged before the flip and none after: a short read
        // applied to its end was the last.
        if staged.len() < APPLY_READ_ROWS as usize
            && last_line == staged.last().map(|(line, _)| *line).or(last_line)
        {
            break true;
        }
    };
    if let Some(last_line) = last_line {
        tx.execute(
            "DELETE FROM import_rows WHERE import_id = ?1 AND line <= ?2",
            params![import_id, last_line],
        )?;
    }
    let total: i64 = tx.query_row(
        "UPDATE imports SET changed = changed + ?2, touched_at = ?3 WHERE import_id = ?1
         RETURNING changed",
        params![import_id, changed, now.0],
        |row| row.get(0),
    )?;
    tx.commit()?;
    Ok(finished.then_some(total as usize))
}

/// Writes a read of staged bins in one statement; returns how many changed.
pub(super) fn apply_bins(
    conn: &Connection,
    rows: &[(i64, Row)],
) -> crate::store::sql::Result<usize> {
    let bins: Vec<Bin> = rows
        .iter()
        .filter_map(|(_, row)| match row {
            Row::Bin {
                bin,
                zone,
                location,
            } => Some(Bin {
                bin: bin.clone(),
                zone: zone.clone(),
                location: location.clone(),
            }),
            _ => None,
        })
        .collect();
    bins::upsert_many(conn, &bins)
}

/// Books a unit that a units row moved to another bin or another state
/// as an `ADJUST` hop of the site (`command` `import`, the import and line
/// in its facts), as a count's approval books its variance: stock never
/// changes without a hop, so the hop feed accounts for every move, a
/// file's included (a file that puts back where an older copy had them
/// units the floor has moved since, say).
pub(super) fn moved(
    conn: &Connection,
    unit: &units::Unit,
    facts: &UnitFacts<'_>,
    version: u64,
    now: UnixMs,
    (import_id, line): (i64, i64),
) -> crate::store::sql::Result<()> {
    use crate::ledger::hops::{self, kinds, NewHop, SourceMode};
    use crate::ledger::modes::{cycle_count::SITE_ACTOR, derived_key};
    let key = derived_key(&[
        "import",
        &import_id.to_string(),
        &line.to_string(),
        &unit.unit_id.to_string(),
        &version.to_string(),
    ]);
    let hop_facts = serde_json::json!({
        "import": import_id,
        "line": line,
        "epc": facts.epc,
        "from_state": unit.state.as_str(),
        "state": facts.state.as_str(),
    });
    hops::append(
        conn,
        &NewHop {
            device_id: SITE_ACTOR,
            session_id: None,
            key: &key,
            client_seq: None,
            command: "import",
            kind: kinds::ADJUST,
            mode: None,
            unit_id: Some(unit.unit_id),
            from_bin: unit.bin.as_deref(),
            to_bin: facts.bin,
            unit_version: Some(version),
            facts: &hop_facts,
            occurred_at: now,
            recorded_at: now,
            device_clock_skew_ms: 0,
            source_mode: SourceMode::Live,
            compensates: None,
            closed_until: crate::ledger::periods::closed_until(conn)?,
        },
    )?;
    Ok(())
}
