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
fn a_repeat_counts_on_the_read_it_repeats_once_and_leaves_soon_after_it_is_forwarded() {
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
    assert_eq!(report[0].outcomes, vec![None; 4], "already queued");
    let rows = pending_batch(&mut conn, 50).unwrap();
    let outcomes: Vec<RuleOutcome> = rows.iter().map(|r| r.record.rule_outcome).collect();
    assert_eq!(
        outcomes,
        [
            RuleOutcome::Accepted,
            RuleOutcome::Duplicate,
            RuleOutcome::Duplicate,
            RuleOutcome::Duplicate
        ]
    );
    let accepted = rows[0].record.key;
    assert_eq!(rows[0].record.repeat, None);
    let repeats: Vec<Option<Repeat>> = rows[1..].iter().map(|r| r.record.repeat).collect();
    assert_eq!(
        repeats,
        (1..=3)
            .map(|number| Some(Repeat {
                of: accepted,
                number
            }))
            .collect::<Vec<_>>(),
        "numbered in order, the resend counted nothing"
    );
    let held: i64 = conn
        .query_row(
            "SELECT repeats FROM listener_queue WHERE key = ?1",
            [accepted.to_string()],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(held, 3);

    let settled: Vec<(&Queued, Settled)> = rows.iter().map(|r| (r, Settled::Done)).collect();
    settle(&mut conn, NOW, &settled, &[]).unwrap();
    // The first repeat was captured 3 s before NOW, the last 1 s.
    let kept = UnixMs(NOW.0 + REPEAT_RETENTION.0 as i64 - 3_000);
    assert_eq!(
        prune(&mut conn, kept).unwrap(),
        0,
        "a resend would not be stale yet"
    );
    let gone = kept.plus(Millis(2_001));
    assert_eq!(prune(&mut conn, gone).unwrap(), 3, "the three repeats");
    let left: Vec<String> = conn
        .prepare("SELECT key FROM listener_queue")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(left, [accepted.to_string()], "the read stays its 7 days");
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
            done: 1,
            dead: 1,
            set_aside: 0,
        }
    );
    assert!(pending_heartbeats(&mut conn).unwrap().is_empty());
    assert_eq!(prune(&mut conn, NOW).unwrap(), 0, "too recent to prune");
    let later = NOW.plus(DONE_RETENTION).plus(Millis(1));
    assert_eq!(
        prune(&mut conn, later).unwrap(),
        2,
        "the done row and the served record"
    );
    assert_eq!(
        counts(&mut conn).unwrap(),
        Counts {
            pending: 1,
            done: 0,
            dead: 1,
            set_aside: 0,
        }
    );
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
        (counted.pending, counted.done, counted.set_aside),
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
    let request = Write {
        seen: vec![(serial.to_owned(), TerminalSource::Iclock)],
        poll: Some(Poll {
            serial: serial.to_owned(),
            zone: crate::listener::zone::TerminalZone::UTC,
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
