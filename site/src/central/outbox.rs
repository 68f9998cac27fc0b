//! The site's outbox to its central, the one place with its SQL.
//!
//! Rows are written by the `hops_central_outbox` trigger (migration 0006)
//! in the transaction that appends the hop, while the one-row
//! `central_forwarding` table says forwarding is on: a hop and its outbox
//! row commit together, whichever code path appends the hop (a handheld's
//! sync, a terminal record, a count's approval from the command line), and
//! a site that does not forward writes none. Turning forwarding on
//! ([`configure`]) enqueues, in the same transaction, every hop appended
//! while it was off (or before it was ever on), so every hop is forwarded.
//! The forwarder reads pending rows in seq order, and settles them (done
//! or dead) in one transaction.

use stockhop::time::UnixMs;

use super::wire::{CentralHop, SiteHop};
use crate::limits::CENTRAL_OUTBOX_DONE_RETENTION;
use crate::store::sql::{params, Connection, Engine, OptionalExtension, Row};

/// Where this site forwards, as `serve` was started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Forwarding {
    pub site_id: String,
    pub central_url: String,
}

/// Turns forwarding on or off, in one transaction.
///
/// On: every later hop takes an outbox row (the trigger), and every hop
/// already appended without one takes its row now ([`enqueue_backlog`]),
/// so a site that ran alone sends its whole history and a site whose
/// forwarding was off sends the hops of that stretch. Off: no hop takes a
/// row; rows already pending stay and are sent once it is on again.
/// Returns how many hops the backlog enqueued.
pub fn configure(
    conn: &mut Connection,
    forwarding: Option<&Forwarding>,
    now: UnixMs,
) -> crate::store::sql::Result<usize> {
    // On PostgreSQL a hop appended at the same moment can end this
    // transaction in a serialization conflict: the backlog must either see
    // that hop or the hop must see forwarding on.
    crate::store::sql::retry_conflicts(|| configure_once(conn, forwarding, now))
}

fn configure_once(
    conn: &mut Connection,
    forwarding: Option<&Forwarding>,
    now: UnixMs,
) -> crate::store::sql::Result<usize> {
    let tx = conn.transaction_with_behavior(crate::store::sql::TransactionBehavior::Immediate)?;
    tx.execute("DELETE FROM central_forwarding", [])?;
    tx.execute(
        "UPDATE central_forwarder_state SET last_error = NULL, last_error_at = NULL WHERE id = 1",
        [],
    )?;
    let mut enqueued = 0;
    if let Some(forwarding) = forwarding {
        tx.execute(
            "INSERT INTO central_forwarding (id, site_id, central_url, since)
             VALUES (1, ?1, ?2, ?3)",
            params![forwarding.site_id, forwarding.central_url, now.0],
        )?;
        enqueued = enqueue_backlog(&tx)?;
    }
    tx.commit()?;
    Ok(enqueued)
}

/// Gives every hop without an outbox row its row, in hop order, with the
/// next seqs from the clock (after every row already there): one statement,
/// so a backlog of any length is one pass over `hops`. A hop never takes a
/// second row (the outbox's unique `hop_id`, and the `NOT EXISTS`); hops at
/// or below `pruned_hop_id` (migration 0007) had theirs, since pruned.
fn enqueue_backlog(conn: &Connection) -> crate::store::sql::Result<usize> {
    // On PostgreSQL the clock is a sequence read through a view, taken by
    // hops' trigger under the lock row (migration 0009): take the lock
    // first, so no hop takes a seq between the read and the advance.
    if conn.engine() == Engine::Postgres {
        conn.query_row(
            "SELECT id FROM central_outbox_lock WHERE id = 1 FOR NO KEY UPDATE",
            [],
            |row| row.get::<_, i64>(0),
        )?;
    }
    let enqueued = conn.execute(
        "INSERT INTO central_outbox (seq, hop_id)
         SELECT c.seq + ROW_NUMBER() OVER (ORDER BY h.hop_id), h.hop_id
         FROM hops h
         JOIN central_outbox_clock c ON c.id = 1
         JOIN central_forwarder_state p ON p.id = 1
         WHERE h.hop_id > p.pruned_hop_id
           AND NOT EXISTS (SELECT 1 FROM central_outbox o WHERE o.hop_id = h.hop_id)",
        [],
    )?;
    if enqueued > 0 {
        match conn.engine() {
            Engine::Sqlite => {
                conn.execute(
                    "UPDATE central_outbox_clock SET seq = seq + ?1 WHERE id = 1",
                    [enqueued as i64],
                )?;
            }
            Engine::Postgres => {
                conn.query_row(
                    "SELECT setval('central_outbox_seq', seq + ?1) FROM central_outbox_clock",
                    [enqueued as i64],
                    |row| row.get::<_, i64>(0),
                )?;
            }
        }
    }
    Ok(enqueued)
}

/// The forwarding `serve` last configured, if any.
pub fn forwarding(conn: &Connection) -> crate::store::sql::Result<Option<Forwarding>> {
    conn.query_row(
        "SELECT site_id, central_url FROM central_forwarding WHERE id = 1",
        [],
        |row| {
            Ok(Forwarding {
                site_id: row.get(0)?,
                central_url: row.get(1)?,
            })
        },
    )
    .optional()
}

/// The site's outbox epoch: 0 until it is first restored from a backup.
pub fn epoch(conn: &Connection) -> crate::store::sql::Result<i64> {
    conn.query_row(
        "SELECT epoch FROM central_forwarder_state WHERE id = 1",
        [],
        |row| row.get(0),
    )
}

/// Begins a new outbox epoch on a ledger just restored from a backup: the
/// restore's instant in milliseconds, or one past the epoch held when that
/// is not later (a clock set back), so each restore's epoch is higher than
/// any before it. Returns it.
pub fn new_epoch(conn: &mut Connection, now: UnixMs) -> crate::store::sql::Result<i64> {
    let tx = conn.transaction_with_behavior(crate::store::sql::TransactionBehavior::Immediate)?;
    let epoch: i64 = tx.query_row(
        "UPDATE central_forwarder_state
         SET epoch = CASE WHEN epoch < CAST(?1 AS BIGINT) THEN CAST(?1 AS BIGINT) ELSE epoch + 1 END
         WHERE id = 1 RETURNING epoch",
        [now.0],
        |row| row.get(0),
    )?;
    tx.commit()?;
    Ok(epoch)
}

/// Why the outbox cannot go on after where the central says the stream
/// stands.
#[derive(Debug, thiserror::Error)]
pub enum ContinueError {
    #[error(
        "the central holds this site's stream up to seq {central} but this site has settled \
         hops up to seq {settled}: the central lost hops it had taken (was it restored from a \
         backup?)"
    )]
    CentralBehind { central: i64, settled: i64 },
    #[error(transparent)]
    Sql(#[from] crate::store::sql::Error),
}

/// Numbers the pending rows above `last_seq` (where the central says the
/// site's stream stands) and those the central `refused` for their seq
/// again, in their order, from the seq right after `last_seq`, and sets
/// the clock so the next hop follows them: after a restore (whose
/// outbox gives again seqs the central holds) or a hole in the seqs (a
/// PostgreSQL sequence skips the seqs of rolled-back hops), the stream
/// goes on without one. Rows already settled keep their seqs. Returns how
/// many rows moved.
pub fn continue_after(
    conn: &mut Connection,
    last_seq: i64,
    refused: &[i64],
) -> Result<usize, ContinueError> {
    crate::store::sql::retry_conflicts(|| continue_after_once(conn, last_seq, refused))?
}

fn continue_after_once(
    conn: &mut Connection,
    last_seq: i64,
    refused: &[i64],
) -> crate::store::sql::Result<Result<usize, ContinueError>> {
    let tx = conn.transaction_with_behavior(crate::store::sql::TransactionBehavior::Immediate)?;
    if tx.engine() == Engine::Postgres {
        // Each statement reads what is committed when it starts: after the
        // lock below, every hop that took a seq before it is seen, so the
        // clock is never set under a seq a row holds (a serializable
        // snapshot is taken before the lock is granted, and would not).
        tx.execute("SET TRANSACTION ISOLATION LEVEL READ COMMITTED", [])?;
        tx.query_row(
            "SELECT id FROM central_outbox_lock WHERE id = 1 FOR NO KEY UPDATE",
            [],
            |row| row.get::<_, i64>(0),
        )?;
    }
    let settled: Option<i64> = tx.query_row(
        "SELECT MAX(seq) FROM central_outbox WHERE state <> 'pending'",
        [],
        |row| row.get(0),
    )?;
    if let Some(settled) = settled.filter(|settled| *settled > last_seq) {
        return Ok(Err(ContinueError::CentralBehind {
            central: last_seq,
            settled,
        }));
    }
    let pending: Vec<i64> = tx
        .prepare("SELECT seq FROM central_outbox WHERE state = 'pending' ORDER BY seq")?
        .query_map([], |row| row.get(0))?
        .collect::<crate::store::sql::Result<_>>()?;
    // A pending row at or below `last_seq` may be one the central took
    // while this site did not hear its answer (a crash): it is sent as it
    // is and answered replayed, unless the central refused it for its seq.
    let moving: Vec<i64> = pending
        .into_iter()
        .filter(|seq| *seq > last_seq || refused.contains(seq))
        .collect();
    let in_place = moving
        .iter()
        .enumerate()
        .all(|(n, seq)| *seq == last_seq + 1 + n as i64);
    let mut moved = 0;
    if !in_place {
        // Past every seq held or to be given first, so no row takes a seq
        // another still holds, then into place one at a time in order.
        let above: i64 = tx.query_row(
            "SELECT COALESCE(MAX(seq), 0) FROM central_outbox",
            [],
            |row| row.get(0),
        )?;
        let shift = above.max(last_seq + moving.len() as i64) + 1;
        let mut renumber = tx.prepare("UPDATE central_outbox SET seq = ?2 WHERE seq = ?1")?;
        for seq in &moving {
            renumber.execute(params![*seq, *seq + shift])?;
        }
        for (n, seq) in moving.iter().enumerate() {
            let to = last_seq + 1 + n as i64;
            renumber.execute(params![*seq + shift, to])?;
            moved += usize::from(*seq != to);
        }
    }
    let clock = last_seq + moving.len() as i64;
    let held: i64 = tx.query_row("SELECT seq FROM central_outbox_clock", [], |row| row.get(0))?;
    if held != clock {
        match tx.engine() {
            Engine::Sqlite => {
                tx.execute(
                    "UPDATE central_outbox_clock SET seq = ?1 WHERE id = 1",
                    [clock],
                )?;
            }
            Engine::Postgres => {
                tx.query_row(
                    "SELECT setval('central_outbox_seq', CAST(?1 AS BIGINT))",
                    [clock],
                    |row| row.get::<_, i64>(0),
                )?;
            }
        }
    }
    tx.commit()?;
    Ok(Ok(moved))
}

/// A pending row with its hop, ready to send.
#[derive(Debug, Clone, PartialEq)]
pub struct Pending {
    pub seq: i64,
    pub hop: CentralHop,
}

/// Up to `limit` pending rows, oldest seq first.
pub fn pending(conn: &Connection, limit: usize) -> crate::store::sql::Result<Vec<Pending>> {
    let mut select = conn.prepare_cached(
        "SELECT o.seq, h.hop_id, h.device_id, h.session_id, h.key, h.client_seq, h.command,
                h.kind, h.mode, h.unit_id, h.from_bin, h.to_bin, h.unit_version, h.facts,
                h.occurred_at, h.booked_at, h.recorded_at, h.device_clock_skew_ms,
                h.source_mode, h.compensates
         FROM central_outbox o JOIN hops h ON h.hop_id = o.hop_id
         WHERE o.state = 'pending' ORDER BY o.seq LIMIT ?1",
    )?;
    let rows = select.query_map([limit as i64], pending_from_row)?;
    rows.collect()
}

fn pending_from_row(row: &Row<'_>) -> crate::store::sql::Result<Pending> {
    let facts: String = row.get(13)?;
    let hop = SiteHop {
        hop_id: row.get(1)?,
        device_id: row.get(2)?,
        session_id: row.get(3)?,
        key: row.get(4)?,
        client_seq: row.get(5)?,
        command: row.get(6)?,
        kind: row.get(7)?,
        mode: row.get(8)?,
        unit_id: row.get(9)?,
        from_bin: row.get(10)?,
        to_bin: row.get(11)?,
        unit_version: row.get(12)?,
        facts: serde_json::from_str(&facts)
            .map_err(|err| crate::store::sql::Error::conversion(13, err.to_string()))?,
        occurred_at: row.get(14)?,
        booked_at: row.get(15)?,
        recorded_at: row.get(16)?,
        device_clock_skew_ms: row.get(17)?,
        source_mode: row.get(18)?,
        compensates: row.get(19)?,
    };
    let seq = row.get(0)?;
    Ok(Pending {
        seq,
        hop: CentralHop {
            seq,
            key: hop.key.clone(),
            hop,
        },
    })
}

/// What became of one sent row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Settled {
    /// The central holds it (applied now, or replayed).
    Done,
    /// The central will never take it: its status and answer.
    Dead { status: u16, reason: String },
}

/// Records one delivery attempt in one transaction: every row in
/// `attempted` counts an attempt, each row in `settle` leaves pending, and
/// `failure` (why the attempt got no usable answer; `None` when it did)
/// becomes the forwarding's last error, shown by [`status`].
pub fn settle(
    conn: &mut Connection,
    attempted: &[i64],
    settle: &[(i64, Settled)],
    failure: Option<&str>,
    now: UnixMs,
) -> crate::store::sql::Result<()> {
    let tx = conn.transaction_with_behavior(crate::store::sql::TransactionBehavior::Immediate)?;
    match failure {
        Some(failure) => tx.execute(
            "UPDATE central_forwarder_state SET last_error = ?1, last_error_at = ?2 WHERE id = 1",
            params![failure, now.0],
        )?,
        None => tx.execute(
            "UPDATE central_forwarder_state SET last_error = NULL, last_error_at = NULL
             WHERE id = 1 AND last_error IS NOT NULL",
            [],
        )?,
    };
    for seq in attempted {
        tx.execute(
            "UPDATE central_outbox SET attempts = attempts + 1
             WHERE seq = ?1 AND state = 'pending'",
            [*seq],
        )?;
    }
    for (seq, settled) in settle {
        match settled {
            Settled::Done => tx.execute(
                "UPDATE central_outbox SET state = 'done', settled_at = ?2
                 WHERE seq = ?1 AND state = 'pending'",
                params![*seq, now.0],
            )?,
            Settled::Dead { status, reason } => tx.execute(
                "UPDATE central_outbox
                 SET state = 'dead', settled_at = ?2, dead_status = ?3, dead_reason = ?4
                 WHERE seq = ?1 AND state = 'pending'",
                params![*seq, now.0, i64::from(*status), reason],
            )?,
        };
    }
    tx.commit()
}

/// Deletes done rows settled more than [`CENTRAL_OUTBOX_DONE_RETENTION`]
/// before `now`, and raises `pruned_hop_id` to the highest hop
/// among them in the same transaction, so the backlog at the next start
/// does not take those hops for unsent ones. Pending and dead rows stay
/// (the schema refuses deleting them). Returns how many went.
pub fn prune(conn: &mut Connection, now: UnixMs) -> crate::store::sql::Result<usize> {
    let before = now.0 - CENTRAL_OUTBOX_DONE_RETENTION.0 as i64;
    let tx = conn.transaction_with_behavior(crate::store::sql::TransactionBehavior::Immediate)?;
    let highest: Option<i64> = tx.query_row(
        "SELECT MAX(hop_id) FROM central_outbox WHERE state = 'done' AND settled_at < ?1",
        [before],
        |row| row.get(0),
    )?;
    let Some(highest) = highest else {
        return Ok(0);
    };
    tx.execute(
        "UPDATE central_forwarder_state SET pruned_hop_id = ?1
         WHERE id = 1 AND pruned_hop_id < ?1",
        [highest],
    )?;
    let removed = tx.execute(
        "DELETE FROM central_outbox WHERE state = 'done' AND settled_at < ?1",
        [before],
    )?;
    tx.commit()?;
    Ok(removed)
}

/// A dead-lettered row, for the site's view.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct DeadHop {
    pub seq: i64,
    pub key: String,
    pub status: Option<i64>,
    pub reason: String,
    #[schema(value_type = String, format = DateTime)]
    pub settled_at: UnixMs,
}

/// The outbox as the site's view shows it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct OutboxStatus {
    /// The site id it forwards as; null when forwarding is off.
    pub site_id: Option<String>,
    pub central_url: Option<String>,
    /// Rows waiting to be sent.
    pub pending: i64,
    /// The oldest pending row's hop, when it was recorded.
    #[schema(value_type = Option<String>, format = DateTime)]
    pub oldest_pending_at: Option<UnixMs>,
    pub dead_letters_total: i64,
    /// The newest first, at most `dead_limit`.
    pub dead_letters: Vec<DeadHop>,
    /// Why the last delivery got no usable answer (e.g. the central's
    /// certificate is not trusted), until one does.
    pub last_error: Option<String>,
    #[schema(value_type = Option<String>, format = DateTime)]
    pub last_error_at: Option<UnixMs>,
}

/// The outbox's depth and dead letters.
pub fn status(conn: &Connection, dead_limit: usize) -> crate::store::sql::Result<OutboxStatus> {
    let forwarding = forwarding(conn)?;
    let (last_error, last_error_at): (Option<String>, Option<i64>) = conn.query_row(
        "SELECT last_error, last_error_at FROM central_forwarder_state WHERE id = 1",
        [],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )?;
    let (pending, dead_letters_total): (i64, i64) = conn.query_row(
        "SELECT COALESCE(SUM(CASE WHEN state = 'pending' THEN 1 ELSE 0 END), 0),
                COALESCE(SUM(CASE WHEN state = 'dead' THEN 1 ELSE 0 END), 0)
         FROM central_outbox WHERE state <> 'done'",
        [],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )?;
    let oldest_pending_at: Option<i64> = conn
        .query_row(
            "SELECT h.recorded_at FROM central_outbox o JOIN hops h ON h.hop_id = o.hop_id
             WHERE o.state = 'pending' ORDER BY o.seq LIMIT 1",
            [],
            |row| row.get(0),
        )
        .optional()?;
    let mut select = conn.prepare_cached(
        "SELECT o.seq, h.key, o.dead_status, o.dead_reason, o.settled_at
         FROM central_outbox o JOIN hops h ON h.hop_id = o.hop_id
         WHERE o.state = 'dead' ORDER BY o.seq DESC LIMIT ?1",
    )?;
    let dead_letters = select
        .query_map([dead_limit as i64], |row| {
            Ok(DeadHop {
                seq: row.get(0)?,
                key: row.get(1)?,
                status: row.get(2)?,
                reason: row.get(3)?,
                settled_at: UnixMs(row.get(4)?),
            })
        })?
        .collect::<crate::store::sql::Result<Vec<_>>>()?;
    Ok(OutboxStatus {
        site_id: forwarding.as_ref().map(|f| f.site_id.clone()),
        central_url: forwarding.map(|f| f.central_url),
        pending,
        oldest_pending_at: oldest_pending_at.map(UnixMs),
        dead_letters_total,
        dead_letters,
        last_error,
        last_error_at: last_error_at.map(UnixMs),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::db::Db;

    fn hop(conn: &Connection, key: &str, at: i64) {
        conn.execute(
            "INSERT INTO hops (device_id, key, command, kind, facts, occurred_at, booked_at,
                               recorded_at, device_clock_skew_ms, source_mode)
             VALUES ('HH-1', ?1, 'scan', 'ZONE_CHANGE', '{\"epc\":\"E\"}', ?2, ?2, ?2, 0, 'live')",
            params![key, at],
        )
        .unwrap();
    }

    fn forwarding() -> Forwarding {
        Forwarding {
            site_id: "S".into(),
            central_url: "http://c".into(),
        }
    }

    fn sent(conn: &Connection) -> Vec<(i64, String)> {
        pending(conn, 100)
            .unwrap()
            .into_iter()
            .map(|row| (row.seq, row.hop.key))
            .collect()
    }

    #[test]
    fn turning_forwarding_on_enqueues_every_hop_without_a_row_once_in_hop_order() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path()).unwrap();
        db.call_blocking(|conn| {
            hop(conn, "before-1", 1);
            hop(conn, "before-2", 2);
            assert_eq!(configure(conn, Some(&forwarding()), UnixMs(2)).unwrap(), 2);
            hop(conn, "first", 3);
            assert_eq!(configure(conn, None, UnixMs(5)).unwrap(), 0);
            hop(conn, "while-off", 6);
            let keys =
                |rows: Vec<(i64, String)>| rows.into_iter().map(|(_, k)| k).collect::<Vec<_>>();
            assert_eq!(keys(sent(conn)), ["before-1", "before-2", "first"]);
            let status = status(conn, 10).unwrap();
            assert_eq!((status.site_id, status.pending), (None, 3));
            assert_eq!(status.oldest_pending_at, Some(UnixMs(1)));

            assert_eq!(configure(conn, Some(&forwarding()), UnixMs(7)).unwrap(), 1);
            hop(conn, "after", 8);
            assert_eq!(
                configure(conn, Some(&forwarding()), UnixMs(9)).unwrap(),
                0,
                "a restart with forwarding on enqueues nothing twice"
            );
            let rows = pending(conn, 10).unwrap();
            assert_eq!(rows[0].hop.hop.facts, serde_json::json!({"epc": "E"}));
            let expected: Vec<(i64, String)> =
                ["before-1", "before-2", "first", "while-off", "after"]
                    .iter()
                    .enumerate()
                    .map(|(n, key)| (n as i64 + 1, (*key).to_owned()))
                    .collect();
            assert_eq!(sent(conn), expected, "seqs follow the hops' order");
            let hop_ids: Vec<i64> = rows.iter().map(|row| row.hop.hop.hop_id).collect();
            assert!(hop_ids.windows(2).all(|w| w[0] < w[1]), "{hop_ids:?}");
        });
    }

    fn clock(conn: &Connection) -> i64 {
        conn.query_row("SELECT seq FROM central_outbox_clock", [], |r| r.get(0))
            .unwrap()
    }

    #[test]
    fn pending_rows_go_on_after_where_the_central_holds_the_stream_and_so_does_the_next_hop() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path()).unwrap();
        db.call_blocking(|conn| {
            configure(conn, Some(&forwarding()), UnixMs(0)).unwrap();
            for key in ["sent", "new-1", "new-2"] {
                hop(conn, key, 1);
            }
            settle(conn, &[1], &[(1, Settled::Done)], None, UnixMs(2)).unwrap();
            // Restored: the central holds seqs up to 9 from before. Rows at
            // or below it stay as they are (the central may hold them: a
            // crash lost its answer) and the clock goes on after it.
            assert_eq!(continue_after(conn, 9, &[]).unwrap(), 0);
            assert_eq!(clock(conn), 9);
            hop(conn, "next", 3);
            assert_eq!(sent(conn).last().unwrap(), &(10, "next".to_owned()));
            // Refused for their seq: they go after it, in their order.
            assert_eq!(continue_after(conn, 9, &[2, 3]).unwrap(), 3);
            let expected = [
                (10, "new-1".to_owned()),
                (11, "new-2".to_owned()),
                (12, "next".to_owned()),
            ];
            assert_eq!(sent(conn), expected);
            assert_eq!(clock(conn), 12);
            assert_eq!(continue_after(conn, 9, &[]).unwrap(), 0, "in place already");
            // A hole in the seqs (as a PostgreSQL sequence leaves) closes.
            conn.execute("UPDATE central_outbox SET seq = 20 WHERE seq = 12", [])
                .unwrap();
            assert_eq!(continue_after(conn, 9, &[]).unwrap(), 1);
            assert_eq!(sent(conn), expected);
            assert_eq!(clock(conn), 12);
            // A central that lost hops this site settled is said so.
            let err = continue_after(conn, 0, &[]).unwrap_err();
            assert!(
                matches!(
                    err,
                    ContinueError::CentralBehind {
                        central: 0,
                        settled: 1
                    }
                ),
                "{err}"
            );
        });
    }

    #[test]
    fn each_restore_begins_a_higher_epoch_than_any_before_it() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path()).unwrap();
        db.call_blocking(|conn| {
            assert_eq!(epoch(conn).unwrap(), 0);
            assert_eq!(new_epoch(conn, UnixMs(1_000)).unwrap(), 1_000);
            assert_eq!(
                new_epoch(conn, UnixMs(500)).unwrap(),
                1_001,
                "a clock set back"
            );
            assert_eq!(epoch(conn).unwrap(), 1_001);
        });
    }

    #[test]
    fn done_rows_are_pruned_after_retention_never_to_be_sent_again_and_pending_or_dead_rows_never()
    {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path()).unwrap();
        db.call_blocking(|conn| {
            configure(conn, Some(&forwarding()), UnixMs(0)).unwrap();
            for key in ["done", "dead", "pending"] {
                hop(conn, key, 1);
            }
            let dead = Settled::Dead {
                status: 409,
                reason: "IDEMPOTENCY_KEY_REUSED".into(),
            };
            settle(conn, &[3], &[], Some("unreachable: refused"), UnixMs(9)).unwrap();
            let failed = status(conn, 10).unwrap();
            assert_eq!(
                (failed.last_error.as_deref(), failed.last_error_at),
                (Some("unreachable: refused"), Some(UnixMs(9)))
            );
            settle(
                conn,
                &[1, 2, 3],
                &[(1, Settled::Done), (2, dead)],
                None,
                UnixMs(10),
            )
            .unwrap();
            assert_eq!(status(conn, 10).unwrap().last_error, None, "answered");
            let retention = CENTRAL_OUTBOX_DONE_RETENTION.0 as i64;
            assert_eq!(prune(conn, UnixMs(10 + retention)).unwrap(), 0, "not yet");
            assert_eq!(prune(conn, UnixMs(11 + retention)).unwrap(), 1);
            assert_eq!(
                configure(conn, Some(&forwarding()), UnixMs(12 + retention)).unwrap(),
                0,
                "a pruned hop was sent: the next start does not enqueue it again"
            );
            let err = conn
                .execute("DELETE FROM central_outbox WHERE seq = 3", [])
                .unwrap_err();
            assert!(err.to_string().contains("only done outbox rows"), "{err}");
            let status = status(conn, 10).unwrap();
            assert_eq!((status.pending, status.dead_letters_total), (1, 1));
            assert_eq!(status.dead_letters[0].key, "dead");
            let attempts: i64 = conn
                .query_row(
                    "SELECT attempts FROM central_outbox WHERE seq = 3",
                    [],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(attempts, 2);
        });
    }
}
