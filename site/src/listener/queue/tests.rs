use super::*;

const NOW: UnixMs = UnixMs(1_800_000_000_000);

fn readers() -> ReaderRates {
    ReaderRates {
        per_reader: HashMap::new(),
        default_reads_per_sec: 700,
    }
}

fn record(event_id: &str, subject: &str, secs_ago: i64) -> NewRecord {
    NewRecord {
        source: TerminalSource::Framed,
        kind: TerminalEventKind::Attendance,
        capture: Capture {
            device: "D1".to_owned(),
            subject: subject.to_owned(),
            event_id: event_id.to_owned(),
            occurred_at: UnixMs(NOW.0 - secs_ago * 1000),
        },
        raw: b"{}".to_vec(),
    }
}

/// A database with `records` written at NOW from device D1.
fn check(records: Vec<NewRecord>) -> (tempfile::TempDir, Connection, Rules) {
    let dir = tempfile::tempdir().unwrap();
    crate::store::db::Db::open(dir.path()).unwrap();
    let mut conn =
        crate::store::db::open_connection(&dir.path().join(crate::store::db::DB_FILE)).unwrap();
    let mut rules = Rules::new(readers());
    let write_one = Write {
        records,
        raw: Vec::new(),
        seen: vec![("D1".to_owned(), TerminalSource::Framed)],
        ..Write::default()
    };
    write(&mut conn, &mut rules, NOW, &[write_one]).unwrap();
    (dir, conn, rules)
}

#[test]
fn pending_rows_come_out_in_write_order_with_their_minted_keys() {
    let (_dir, mut conn, _) = check(vec![record("a", "1", 2), record("b", "2", 1)]);
    let rows = pending_batch(&mut conn, 50).unwrap();
    let ids: Vec<&str> = rows.iter().map(|r| r.event_id.as_str()).collect();
    assert_eq!(ids, ["a", "b"]);
    assert_ne!(rows[0].record.key, rows[1].record.key);
    assert_eq!(rows[0].record.queued_at, NOW);
    assert_eq!(pending_batch(&mut conn, 1).unwrap().len(), 1);
}

#[test]
fn repeats_fold_into_one_waiting_row_that_counts_them_once_and_leave_soon_after_it_is_forwarded() {
    // An accepted read and three repeats within the duplicate window;
    // then the terminal resends the whole frame (it missed the ack).
    let frame = vec![
        record("a", "7", 4),
        record("b", "7", 3),
        record("c", "7", 2),
        record("d", "7", 1),
    ];
    let (_dir, mut conn, mut rules) = check(frame.clone());
    let resend = Write {
        records: frame,
        raw: Vec::new(),
        ..Write::default()
    };
    let report = write(&mut conn, &mut rules, NOW.plus(Millis(500)), &[resend]).unwrap();
    assert_eq!(report[0].outcomes, vec![None; 4], "already kept");
    let rows = pending_batch(&mut conn, 50).unwrap();
    let outcomes: Vec<RuleOutcome> = rows.iter().map(|r| r.record.rule_outcome).collect();
    assert_eq!(
        outcomes,
        [RuleOutcome::Accepted, RuleOutcome::Duplicate],
        "the second and third repeats folded into the first's row"
    );
    let accepted = rows[0].record.key;
    assert_eq!(rows[0].record.repeat, None);
    assert_eq!(
        rows[1].record.repeat,
        Some(Repeat {
            of: accepted,
            number: 3
        }),
        "the last number, the resend counted nothing"
    );
    assert_eq!(rows[1].event_id, "b", "the row is the first repeat's");
    assert_eq!(
        rows[1].record.occurred_at,
        UnixMs(NOW.0 - 1000),
        "forwarded with the last repeat's capture instant"
    );
    let held: i64 = conn
        .query_row(
            "SELECT repeats FROM listener_queue WHERE key = ?1",
            [accepted.to_string()],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(held, 3);
    assert_eq!(folded_rows(&conn), 2);

    let settled: Vec<(&Queued, Settled)> = rows.iter().map(|r| (r, Settled::Done)).collect();
    settle(&mut conn, NOW, &settled, &[]).unwrap();
    // The read was captured 4 s before NOW, its first repeat 3 s, the last 1 s.
    let kept = UnixMs(NOW.0 + ROW_RETENTION.0 as i64 - 4_000);
    assert_eq!(
        prune(&mut conn, kept).unwrap(),
        0,
        "a resend would not be stale yet"
    );
    assert_eq!(
        prune(&mut conn, kept.plus(Millis(1))).unwrap(),
        2,
        "the read's row and its served record, past the horizon"
    );
    let gone = kept.plus(Millis(3_001));
    assert_eq!(
        prune(&mut conn, gone).unwrap(),
        3,
        "the repeat's row and the two folded into it"
    );
    assert_eq!(queue_rows(&conn), 0);
    assert_eq!(folded_rows(&conn), 0);
    assert_eq!(
        seen_rows(&conn),
        1,
        "the read's identity, none of a repeat's"
    );
}

#[test]
fn a_repeat_folded_into_a_row_on_its_way_keeps_that_row_waiting_for_the_larger_number() {
    let (_dir, mut conn, mut rules) = check(vec![record("a", "7", 4), record("b", "7", 3)]);
    // The forwarder reads both rows and delivers them; meanwhile another
    // repeat comes and is folded into the repeat row on its way.
    let rows = pending_batch(&mut conn, 50).unwrap();
    let more = Write {
        records: vec![record("c", "7", 2)],
        ..Write::default()
    };
    write(&mut conn, &mut rules, NOW, &[more]).unwrap();
    let settled: Vec<(&Queued, Settled)> = rows.iter().map(|r| (r, Settled::Done)).collect();
    settle(&mut conn, NOW, &settled, &[]).unwrap();
    let left = pending_batch(&mut conn, 50).unwrap();
    assert_eq!(left.len(), 1, "the repeat row waits for its new number");
    assert_eq!(left[0].seq, rows[1].seq);
    assert_eq!(left[0].record.repeat.map(|r| r.number), Some(2));
    assert_eq!(left[0].record.occurred_at, UnixMs(NOW.0 - 2000));
    settle(&mut conn, NOW, &[(&left[0], Settled::Done)], &[]).unwrap();
    assert!(pending_batch(&mut conn, 50).unwrap().is_empty());
    // The next repeat starts a waiting row of its own.
    let last = Write {
        records: vec![record("d", "7", 1)],
        ..Write::default()
    };
    write(&mut conn, &mut rules, NOW, &[last]).unwrap();
    let rows = pending_batch(&mut conn, 50).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].event_id, "d");
    assert_eq!(rows[0].record.repeat.map(|r| r.number), Some(3));
}

#[test]
fn folded_repeats_still_spend_the_rate_budget_rebuilt_on_start() {
    let tag = |i: usize| NewRecord {
        kind: TerminalEventKind::TagRead,
        ..record(&format!("t{i}"), "e2800001", 1)
    };
    // One tag read 50 times in the last second: one accepted row, one
    // repeat row, 48 folded.
    let (_dir, mut conn, _) = check((0..50).map(tag).collect());
    assert_eq!(queue_rows(&conn), 2);
    assert_eq!(folded_rows(&conn), 48);
    let rules = load_rules(&mut conn, NOW, readers()).unwrap();
    assert_eq!(rules.rate_entries("D1"), 50);
}

fn folded_rows(conn: &Connection) -> i64 {
    conn.query_row("SELECT count(*) FROM listener_repeat", [], |r| r.get(0))
        .unwrap()
}

fn queue_rows(conn: &Connection) -> i64 {
    conn.query_row("SELECT count(*) FROM listener_queue", [], |r| r.get(0))
        .unwrap()
}

fn seen_rows(conn: &Connection) -> i64 {
    conn.query_row("SELECT count(*) FROM listener_seen", [], |r| r.get(0))
        .unwrap()
}

/// Forwards every pending row as the ledger took it, at `at`.
fn forward_all(conn: &mut Connection, at: UnixMs) {
    let rows = pending_batch(conn, 10_000).unwrap();
    let settled: Vec<(&Queued, Settled)> = rows.iter().map(|r| (r, Settled::Done)).collect();
    settle(conn, at, &settled, &[]).unwrap();
}

/// Prunes at `now` as the listener's prune pass does: until a pass
/// removes less than its bound.
fn prune_all(conn: &mut Connection, now: UnixMs) {
    while prune(conn, now).unwrap() >= PRUNE_ROWS_MAX {}
}

#[test]
fn a_resend_past_the_horizon_is_recognised_by_its_identity_alone_and_changes_nothing() {
    let (_dir, mut conn, mut rules) = check(vec![record("a", "1", 2), record("b", "2", 1)]);
    forward_all(&mut conn, NOW);
    let past = NOW.plus(ROW_RETENTION);
    prune_all(&mut conn, past);
    assert_eq!(
        queue_rows(&conn),
        0,
        "the rows and their raw bodies are gone"
    );
    assert_eq!(seen_rows(&conn), 2);

    // The terminal sends both again (its acknowledgement was lost, or a
    // backfill asked for them), and a read it has not sent before.
    let later = past.plus(Millis::from_secs(3600));
    let fresh = NewRecord {
        capture: Capture {
            occurred_at: later,
            ..record("c", "3", 0).capture
        },
        ..record("c", "3", 0)
    };
    let resend = Write {
        records: vec![record("a", "1", 2), record("b", "2", 1), fresh],
        ..Write::default()
    };
    let report = write(&mut conn, &mut rules, later, &[resend]).unwrap();
    assert_eq!(
        report[0].outcomes,
        [None, None, Some(RuleOutcome::Accepted)],
        "the two already kept, the new one taken"
    );
    let queued: Vec<String> = pending_batch(&mut conn, 50)
        .unwrap()
        .into_iter()
        .map(|r| r.event_id)
        .collect();
    assert_eq!(queued, ["c"], "nothing is queued for the resend");
    assert_eq!(seen_rows(&conn), 2);
}

#[test]
fn a_records_identity_is_kept_a_week_of_capture_time_and_then_forgotten() {
    let (_dir, mut conn, mut rules) = check(vec![record("a", "1", 2)]);
    forward_all(&mut conn, NOW);
    let captured = UnixMs(NOW.0 - 2_000);
    prune_all(&mut conn, captured.plus(SEEN_RETENTION));
    assert_eq!(seen_rows(&conn), 1, "a week to the millisecond: still kept");
    let resend = || Write {
        records: vec![record("a", "1", 2)],
        ..Write::default()
    };
    let at = captured.plus(SEEN_RETENTION);
    let report = write(&mut conn, &mut rules, at, &[resend()]).unwrap();
    assert_eq!(report[0].outcomes, [None]);
    prune_all(&mut conn, at.plus(Millis(1)));
    assert_eq!(seen_rows(&conn), 0);
    let report = write(&mut conn, &mut rules, at.plus(Millis(1)), &[resend()]).unwrap();
    assert_eq!(
        report[0].outcomes,
        [Some(RuleOutcome::Stale)],
        "judged again, and stale"
    );
}

#[test]
fn a_record_from_a_clock_far_ahead_leaves_its_row_and_keeps_no_identity_beyond_a_week() {
    let ahead = |event_id: &str, days: u64| NewRecord {
        capture: Capture {
            occurred_at: NOW.plus(Millis::from_secs(days * 24 * 3600)),
            ..record(event_id, event_id, 0).capture
        },
        ..record(event_id, event_id, 0)
    };
    let (_dir, mut conn, _) = check(vec![ahead("soon", 1), ahead("far", 30)]);
    let outcomes: Vec<RuleOutcome> = pending_batch(&mut conn, 50)
        .unwrap()
        .iter()
        .map(|r| r.record.rule_outcome)
        .collect();
    assert_eq!(outcomes, [RuleOutcome::ClockSkew; 2]);
    forward_all(&mut conn, NOW);
    prune_all(&mut conn, NOW);
    assert_eq!(queue_rows(&conn), 0, "no rule reads them back");
    assert_eq!(seen_rows(&conn), 1, "the one captured within a week");
}

#[test]
fn past_the_horizon_the_listeners_tables_hold_at_most_64_bytes_a_distinct_read() {
    const READS: usize = 20_000;
    const BYTES_PER_READ_MAX: f64 = 64.0;
    let (_dir, mut conn, mut rules) = check(Vec::new());
    let listener_bytes = |conn: &Connection| -> i64 {
        conn.query_row(
            "SELECT sum(d.pgsize) FROM dbstat AS d JOIN sqlite_schema AS s ON s.name = d.name
             WHERE substr(s.tbl_name, 1, 9) = 'listener_'",
            [],
            |r| r.get(0),
        )
        .unwrap()
    };
    let empty = listener_bytes(&conn);
    // A portal's second of distinct reads at a time, as its reports come.
    for second in 0..(READS / 700) as i64 {
        let at = NOW.plus(Millis::from_secs(second as u64));
        let reads = (0..700)
            .map(|i| NewRecord {
                source: TerminalSource::Zebra,
                kind: TerminalEventKind::TagRead,
                capture: Capture {
                    device: "fxr90-portal".to_owned(),
                    subject: format!("e2801190{second:08x}{i:08x}"),
                    event_id: format!("{:032x}", second * 700 + i),
                    occurred_at: UnixMs(at.0 - 1_000 + i * 1_000 / 700),
                },
                raw: br#"{"data":{"antenna":1,"eventNum":5059,"format":"epc","idHex":"e2806894000040017790e471","peakRssi":-37,"reads":1},"timestamp":"2026-09-07T12:50:55.513+0000","type":"INVENTORY"}"#.to_vec(),
            })
            .collect();
        let report = Write {
            records: reads,
            ..Write::default()
        };
        write(&mut conn, &mut rules, at, &[report]).unwrap();
        forward_all(&mut conn, at);
    }
    let reads = (READS / 700 * 700) as f64;
    let last = NOW.plus(Millis::from_secs((READS / 700) as u64));
    prune_all(&mut conn, last.plus(ROW_RETENTION));
    assert_eq!(queue_rows(&conn), 0);
    assert_eq!(seen_rows(&conn), reads as i64);
    let per_read = (listener_bytes(&conn) - empty) as f64 / reads;
    assert!(
        per_read <= BYTES_PER_READ_MAX,
        "{per_read:.1} bytes a distinct read"
    );
}

#[test]
fn settled_rows_are_marked_not_deleted_and_the_prune_pass_removes_old_done_ones() {
    let (_dir, mut conn, _) = check(vec![
        record("a", "1", 2),
        record("b", "2", 1),
        record("c", "3", 1),
    ]);
    let rows = pending_batch(&mut conn, 50).unwrap();
    let beats = pending_heartbeats(&mut conn).unwrap();
    settle(
        &mut conn,
        NOW,
        &[
            (&rows[0], Settled::Done),
            (
                &rows[1],
                Settled::Dead {
                    status: 422,
                    body: "no".to_owned(),
                },
            ),
        ],
        &beats,
    )
    .unwrap();
    assert_eq!(
        counts(&mut conn).unwrap(),
        Counts {
            pending: 1,
            dead: 1,
            set_aside: 0,
        }
    );
    assert_eq!(done_count(&mut conn).unwrap(), 1);
    assert!(pending_heartbeats(&mut conn).unwrap().is_empty());
    assert_eq!(prune(&mut conn, NOW).unwrap(), 0, "too recent to prune");
    let later = NOW.plus(ROW_RETENTION);
    assert_eq!(
        prune(&mut conn, later).unwrap(),
        2,
        "the done row and the served record"
    );
    assert_eq!(
        counts(&mut conn).unwrap(),
        Counts {
            pending: 1,
            dead: 1,
            set_aside: 0,
        }
    );
    assert_eq!(done_count(&mut conn).unwrap(), 0);
}

#[test]
fn a_set_aside_row_leaves_the_fifo_drain_keeps_its_attempts_and_falls_due_later() {
    let (_dir, mut conn, _) = check(vec![record("a", "1", 2), record("b", "2", 1)]);
    let rows = pending_batch(&mut conn, 50).unwrap();
    let failed = |set_aside_for| Settled::Failed {
        error: "500 disk I/O error".to_owned(),
        set_aside_for,
    };
    settle(&mut conn, NOW, &[(&rows[0], failed(None))], &[]).unwrap();
    let again = pending_batch(&mut conn, 50).unwrap();
    assert_eq!(again[0].attempts, 1);
    assert_eq!(again.len(), 2, "not set aside yet: still first in line");
    let wait = Millis::from_secs(600);
    settle(&mut conn, NOW, &[(&again[0], failed(Some(wait)))], &[]).unwrap();
    let behind = pending_batch(&mut conn, 50).unwrap();
    let ids: Vec<&str> = behind.iter().map(|r| r.event_id.as_str()).collect();
    assert_eq!(ids, ["b"], "the set-aside row no longer heads the queue");
    assert_eq!(next_set_aside_at(&mut conn).unwrap(), Some(NOW.plus(wait)));
    assert!(due_set_aside(&mut conn, NOW, 1).unwrap().is_empty());
    let due = due_set_aside(&mut conn, NOW.plus(wait), 1).unwrap();
    assert_eq!((due[0].event_id.as_str(), due[0].attempts), ("a", 2));
    assert!(due[0].set_aside);
    let counted = counts(&mut conn).unwrap();
    assert_eq!((counted.pending, counted.set_aside), (2, 1));
    let listed = set_aside(&conn, 10).unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].attempts, 2);
    assert_eq!(listed[0].last_error.as_deref(), Some("500 disk I/O error"));
    assert_eq!(listed[0].set_aside_at, NOW);
    settle(&mut conn, NOW.plus(wait), &[(&due[0], Settled::Done)], &[]).unwrap();
    let counted = counts(&mut conn).unwrap();
    assert_eq!(
        (
            counted.pending,
            done_count(&mut conn).unwrap(),
            counted.set_aside
        ),
        (1, 1, 0)
    );
    assert_eq!(next_set_aside_at(&mut conn).unwrap(), None);
}

#[test]
fn raw_bodies_are_pruned_past_their_retention() {
    let (_dir, mut conn, mut rules) = check(Vec::new());
    let raw = RawBody {
        device: "D1".to_owned(),
        kind: "OPERLOG".to_owned(),
        query: String::new(),
        body: b"x".to_vec(),
        reason: None,
    };
    let kept = Write {
        raw: vec![raw],
        ..Write::default()
    };
    write(&mut conn, &mut rules, NOW, &[kept]).unwrap();
    let raw_rows = |conn: &Connection| -> i64 {
        conn.query_row("SELECT count(*) FROM listener_raw", [], |r| r.get(0))
            .unwrap()
    };
    assert_eq!(prune(&mut conn, NOW.plus(RAW_RETENTION)).unwrap(), 0);
    assert_eq!(raw_rows(&conn), 1);
    let later = NOW.plus(RAW_RETENTION).plus(Millis(1));
    assert_eq!(prune(&mut conn, later).unwrap(), 1);
    assert_eq!(raw_rows(&conn), 0);
}

#[test]
fn the_rules_windows_are_rebuilt_from_served_and_queued_records() {
    let (_dir, mut conn, _) = check(vec![record("a", "1", 2), record("b", "2", 1)]);
    let rows = pending_batch(&mut conn, 50).unwrap();
    settle(&mut conn, NOW, &[(&rows[0], Settled::Done)], &[]).unwrap();
    let rules = load_rules(&mut conn, NOW, readers()).unwrap();
    assert_eq!(rules.duplicate_entries(), 2, "one served, one still queued");
    assert_eq!(rules.rate_entries("D1"), 2);
    let again = rules.judge(NOW, &[(Terminal::Attendance, &record("z", "1", 1).capture)]);
    assert_eq!(again.outcomes, [RuleOutcome::Duplicate]);
}

#[test]
fn a_readers_budgets_are_rebuilt_per_tag_and_a_terminals_per_device() {
    let tag = |i: usize| NewRecord {
        kind: TerminalEventKind::TagRead,
        ..record(&format!("t{i}"), &format!("e280{i:04}"), 1)
    };
    let mut records: Vec<NewRecord> = (0..200).map(tag).collect();
    records.extend((0..120).map(|i| NewRecord {
        capture: Capture {
            device: "T1".to_owned(),
            ..record(&format!("p{i}"), &format!("{i}"), 1).capture
        },
        ..record("", "", 1)
    }));
    let (_dir, mut conn, _) = check(records);
    let rules = load_rules(&mut conn, NOW, readers()).unwrap();
    assert_eq!(rules.rate_entries("D1"), 200);
    let more_tags = tag(200);
    let person = Capture {
        device: "T1".to_owned(),
        ..record("p120", "120", 1).capture
    };
    let judged = rules.judge(
        NOW,
        &[
            (Terminal::RfidReader, &more_tags.capture),
            (Terminal::Attendance, &person),
        ],
    );
    assert_eq!(
        judged.outcomes,
        [RuleOutcome::Accepted, RuleOutcome::RateLimited]
    );
}

#[test]
fn a_heartbeat_is_forwarded_again_only_once_it_has_moved_a_step() {
    let (_dir, mut conn, mut rules) = check(Vec::new());
    let beats = pending_heartbeats(&mut conn).unwrap();
    assert_eq!(beats.len(), 1);
    settle(&mut conn, NOW, &[], &beats).unwrap();
    let seen = || Write {
        seen: vec![("D1".to_owned(), TerminalSource::Framed)],
        ..Write::default()
    };
    write(
        &mut conn,
        &mut rules,
        NOW.plus(Millis::from_secs(5)),
        &[seen()],
    )
    .unwrap();
    assert!(pending_heartbeats(&mut conn).unwrap().is_empty());
    write(
        &mut conn,
        &mut rules,
        NOW.plus(HEARTBEAT_FORWARD_STEP),
        &[seen()],
    )
    .unwrap();
    assert_eq!(pending_heartbeats(&mut conn).unwrap().len(), 1);
}

/// A poll of iclock terminal `serial` written at `at`: the commands it
/// hands out, as lines.
fn poll(conn: &mut Connection, rules: &mut Rules, serial: &str, at: UnixMs) -> Vec<String> {
    let zone = crate::listener::zone::TerminalZone::UTC;
    let request = Write {
        seen: vec![(serial.to_owned(), TerminalSource::Iclock)],
        zone: Some((serial.to_owned(), zone.to_string())),
        poll: Some(Poll {
            serial: serial.to_owned(),
            zone,
        }),
        ..Write::default()
    };
    let mut reports = write(conn, rules, at, &[request]).unwrap();
    reports
        .remove(0)
        .commands
        .into_iter()
        .map(|c| format!("C:{}:{}", c.id, c.command))
        .collect()
}

fn answer(conn: &mut Connection, rules: &mut Rules, serial: &str, body: &str, at: UnixMs) {
    let request = Write {
        results: Some((
            serial.to_owned(),
            crate::listener::command::parse_results(body.as_bytes()),
        )),
        ..Write::default()
    };
    write(conn, rules, at, &[request]).unwrap();
}

#[test]
fn a_command_unanswered_for_ten_minutes_is_handed_out_again_and_settled_once() {
    use crate::listener::command::{BackfillError, CommandState, RESEND_AFTER};
    let (_dir, mut conn, mut rules) = check(Vec::new());
    let hour = Millis::from_secs(3600);
    let earlier = UnixMs(NOW.0 - 2 * hour.0 as i64);
    assert!(matches!(
        queue_backfill(&mut conn, "T1", earlier, NOW, NOW),
        Err(BackfillError::UnknownSerial(_))
    ));
    assert!(poll(&mut conn, &mut rules, "T1", NOW).is_empty());
    assert!(matches!(
        queue_backfill(&mut conn, "T1", NOW, earlier, NOW),
        Err(BackfillError::Reversed { .. })
    ));
    let first = queue_backfill(&mut conn, "T1", earlier, NOW, NOW).unwrap();
    let second = queue_backfill(&mut conn, "T1", earlier, NOW, NOW).unwrap();
    let both = poll(&mut conn, &mut rules, "T1", NOW);
    assert_eq!(both.len(), 2);
    assert_eq!(
        both[0],
        format!(
            "C:{}:DATA QUERY ATTLOG StartTime=2027-01-15T06:00:00\tEndTime=2027-01-15T08:00:00",
            first.id
        )
    );
    assert!(
        poll(&mut conn, &mut rules, "T2", NOW).is_empty(),
        "another terminal's"
    );
    answer(
        &mut conn,
        &mut rules,
        "T2",
        &format!("ID={}&Return=0&CMD=DATA", first.id),
        NOW,
    );
    answer(
        &mut conn,
        &mut rules,
        "T1",
        &format!("ID={}&Return=-4&CMD=DATA", first.id),
        NOW,
    );
    let just_before = NOW.plus(Millis(RESEND_AFTER.0 - 1));
    assert!(poll(&mut conn, &mut rules, "T1", just_before).is_empty());
    let resent = poll(&mut conn, &mut rules, "T1", NOW.plus(RESEND_AFTER));
    assert_eq!(resent.len(), 1, "only the unanswered one");
    assert!(resent[0].starts_with(&format!("C:{}:", second.id)));
    answer(
        &mut conn,
        &mut rules,
        "T1",
        &format!("ID={}&Return=-1002&CMD=DATA", second.id),
        NOW,
    );
    answer(
        &mut conn,
        &mut rules,
        "T1",
        &format!("ID={}&Return=0&CMD=DATA", second.id),
        NOW,
    );
    let listed = commands(&conn, "T1").unwrap();
    let states: Vec<_> = listed.iter().map(|c| (c.state, c.return_code)).collect();
    assert_eq!(
        states,
        [
            (CommandState::Failed, Some(-1002)),
            (CommandState::Done, Some(-4))
        ],
        "newest first; the first answer stands"
    );
}

#[test]
fn a_range_ahead_is_refused_and_an_answer_to_a_command_not_yet_handed_out_changes_nothing() {
    use crate::listener::command::CommandState;
    let (_dir, mut conn, mut rules) = check(Vec::new());
    assert!(poll(&mut conn, &mut rules, "T1", NOW).is_empty());
    let earlier = UnixMs(NOW.0 - 3_600_000);
    let tomorrow = NOW.plus(Millis::from_secs(24 * 3600));
    assert!(matches!(
        queue_backfill(&mut conn, "T1", tomorrow, tomorrow.plus(Millis(1)), NOW),
        Err(crate::listener::command::BackfillError::Ahead { .. })
    ));
    let queued = queue_backfill(&mut conn, "T1", earlier, NOW, NOW).unwrap();
    let done = format!("ID={}&Return=0&CMD=DATA", queued.id);
    answer(&mut conn, &mut rules, "T1", &done, NOW);
    let listed = commands(&conn, "T1").unwrap();
    assert_eq!(
        (listed[0].state, listed[0].return_code),
        (CommandState::Pending, None)
    );
    assert_eq!(poll(&mut conn, &mut rules, "T1", NOW).len(), 1);
    answer(&mut conn, &mut rules, "T1", &done, NOW);
    let listed = commands(&conn, "T1").unwrap();
    assert_eq!(listed[0].state, CommandState::Done);
    assert!(listed[0].sent_at.is_some());
}

#[test]
fn a_backfill_queued_before_the_first_poll_is_written_in_the_zone_of_the_handshake() {
    let (_dir, mut conn, mut rules) = check(Vec::new());
    let zone = crate::listener::zone::TerminalZone::parse("+02:00").unwrap();
    // The handshake: the terminal seen, its zone noted; nothing handed out.
    let handshake = Write {
        seen: vec![("T1".to_owned(), TerminalSource::Iclock)],
        zone: Some(("T1".to_owned(), zone.to_string())),
        ..Write::default()
    };
    write(&mut conn, &mut rules, NOW, &[handshake]).unwrap();
    let hour = Millis::from_secs(3600);
    let earlier = UnixMs(NOW.0 - 2 * hour.0 as i64);
    let queued = queue_backfill(&mut conn, "T1", earlier, NOW, NOW).unwrap();
    assert_eq!(
        queued.command,
        "DATA QUERY ATTLOG StartTime=2027-01-15T08:00:00\tEndTime=2027-01-15T10:00:00"
    );
}
