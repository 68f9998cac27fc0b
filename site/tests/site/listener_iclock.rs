//! iclock/ADMS exchanges byte by byte (docs/terminal-protocols.md), over real HTTP on
//! loopback against a real SQLite file.

use crate::listener_support::*;
use stockhop::time::UnixMs;
use stockhop_site::listener::unix_now;

const SN: &str = "0316144680030";

/// The nine-record upload of the vendor's example: 9 records of 35 bytes.
fn nine_records() -> String {
    (0..9)
        .map(|i| att_line("1452", &format!("2015-07-30 15:16:{:02}", 20 + i)))
        .collect()
}

#[tokio::test]
async fn handshake_reply_is_byte_exact() {
    let dir = tempfile::tempdir().unwrap();
    let listener = start(dir.path(), config(SN), None).await;
    let reply = exchange(
        listener.http,
        b"GET /iclock/cdata?SN=0316144680030&options=all&pushver=2.2.14&language=83 HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: iClock Proxy/1.09\r\nConnection: close\r\n\r\n",
    )
    .await;
    let body = "GET OPTION FROM: 0316144680030\nATTLOGStamp=None\nOPERLOGStamp=9999\nATTPHOTOStamp=None\nErrorDelay=30\nDelay=10\nTransTimes=00:00;14:05\nTransInterval=1\nTransFlag=TransData AttLog\tOpLog\nTimeZone=0\nRealtime=1\nEncrypt=None\n";
    let (head, got) = split_reply(&reply);
    assert_eq!(head, expected_head("HTTP/1.1", "200 OK", body.len()));
    assert_eq!(String::from_utf8(got).unwrap(), body);
    assert_eq!(listener.count("SELECT count(*) FROM listener_heartbeat"), 1);
    listener.stop().await;
}

#[tokio::test]
async fn legacy_handshake_uses_old_stamp_names_and_the_configured_time_zone() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(SN);
    config
        .time_zones
        .insert(SN.to_owned(), "+05:30".parse().unwrap());
    let listener = start(dir.path(), config, None).await;
    let reply = exchange(
        listener.http,
        b"GET /iclock/cdata?SN=0316144680030&options=all HTTP/1.0\r\n\r\n",
    )
    .await;
    let body = "GET OPTION FROM: 0316144680030\nStamp=None\nOpStamp=9999\nPhotoStamp=None\nErrorDelay=30\nDelay=10\nTransTimes=00:00;14:05\nTransInterval=1\nTransFlag=TransData AttLog\tOpLog\nTimeZone=330\nRealtime=1\nEncrypt=None\n";
    let (head, got) = split_reply(&reply);
    assert_eq!(head, expected_head("HTTP/1.0", "200 OK", body.len()));
    assert_eq!(String::from_utf8(got).unwrap(), body);
    listener.stop().await;
}

#[tokio::test]
async fn nine_record_upload_of_315_bytes_is_answered_ok_9_after_the_write() {
    let dir = tempfile::tempdir().unwrap();
    let listener = start(dir.path(), config(SN), None).await;
    let body = nine_records();
    assert_eq!(body.len(), 315);
    let request = format!(
        "POST /iclock/cdata?SN=0316144680030&table=ATTLOG&Stamp=9999 HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: iClock Proxy/1.09\r\nConnection: close\r\nContent-Length: 315\r\n\r\n{body}"
    );
    let reply = exchange(listener.http, request.as_bytes()).await;
    let (head, got) = split_reply(&reply);
    assert_eq!(head, expected_head("HTTP/1.1", "200 OK", 4));
    assert_eq!(got, b"OK:9");
    assert_eq!(listener.count("SELECT count(*) FROM listener_queue"), 9);
    // Captured in 2015: acknowledged, and recorded as stale.
    assert_eq!(
        listener.count("SELECT count(*) FROM listener_queue WHERE rule_outcome = 'stale'"),
        9
    );
    listener.stop().await;
}

#[tokio::test]
async fn the_real_devices_35_byte_line_is_taken_raw() {
    let dir = tempfile::tempdir().unwrap();
    let listener = start(dir.path(), config(SN), None).await;
    let line = b"1156\t2024-08-05 12:40:57\t1\t1\t\t0\t0\t\n";
    assert_eq!(line.len(), 35);
    let mut request =
        b"POST /iclock/cdata?SN=0316144680030&table=ATTLOG&Stamp=9999 HTTP/1.1\r\nContent-Length: 35\r\n\r\n"
            .to_vec();
    request.extend_from_slice(line);
    let (head, got) = split_reply(&exchange(listener.http, &request).await);
    assert_eq!(head, expected_head("HTTP/1.1", "200 OK", 4));
    assert_eq!(got, b"OK:1");
    let (subject, raw, occurred): (String, Vec<u8>, i64) = listener.query(
        "SELECT subject, raw, occurred_at FROM listener_queue",
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    );
    assert_eq!(subject, "1156");
    assert_eq!(raw, &line[..34]);
    assert_eq!(
        occurred,
        stockhop::time::UnixMs::from_civil(2024, 8, 5, 12, 40, 57).0
    );
    listener.stop().await;
}

#[tokio::test]
async fn crlf_lines_non_utf8_bytes_and_no_content_type_are_taken() {
    let dir = tempfile::tempdir().unwrap();
    let listener = start(dir.path(), config(SN), None).await;
    let mut body = format!("7\t{}\t0\t1\t\t0\t0\t\r\n", local_time(1)).into_bytes();
    // PUSH 2.4 extras, TimeOffset +28800 among them: its time is UTC+8's.
    body.extend_from_slice(b"\xd5\xc5\t");
    body.extend_from_slice(local_time(2 - 8 * 3600).as_bytes());
    body.extend_from_slice(b"\t0\t15\t\t0\t0\t1\t36.5\t97.7\t+28800\t\xff\xfe\r\n");
    let mut request = format!(
        "POST /iclock/cdata?SN={SN}&table=ATTLOG HTTP/1.1\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(&body);
    let (_, got) = split_reply(&exchange(listener.http, &request).await);
    assert_eq!(got, b"OK:2");
    assert_eq!(
        listener.count("SELECT count(*) FROM listener_queue WHERE rule_outcome = 'accepted'"),
        2
    );
    let raw: Vec<u8> = listener.query(
        "SELECT raw FROM listener_queue ORDER BY seq DESC LIMIT 1",
        |r| r.get(0),
    );
    assert!(
        raw.ends_with(b"+28800\t\xff\xfe"),
        "bytes kept as they came"
    );
    listener.stop().await;
}

#[tokio::test]
async fn a_resent_upload_is_acknowledged_again_and_queued_once() {
    let dir = tempfile::tempdir().unwrap();
    let listener = start(dir.path(), config(SN), None).await;
    let body = format!(
        "{}{}",
        att_line("1001", &local_time(3)),
        att_line("1002", &local_time(2))
    );
    for _ in 0..3 {
        let (_, got) = split_reply(&exchange(listener.http, &attlog_request(SN, &body)).await);
        assert_eq!(got, b"OK:2");
    }
    assert_eq!(listener.count("SELECT count(*) FROM listener_queue"), 2);
    assert_eq!(
        listener.count("SELECT count(*) FROM listener_queue WHERE rule_outcome = 'accepted'"),
        2
    );
    listener.stop().await;
}

#[tokio::test]
async fn other_requests_are_stored_raw_with_their_replies() {
    let dir = tempfile::tempdir().unwrap();
    let listener = start(dir.path(), config(SN), None).await;
    let check = |request: Vec<u8>, expected: &'static [u8]| {
        let http = listener.http;
        async move {
            let (head, got) = split_reply(&exchange(http, &request).await);
            assert_eq!(head, expected_head("HTTP/1.1", "200 OK", expected.len()));
            assert_eq!(got, expected);
        }
    };
    let post = |query: &str, body: &[u8]| {
        let mut request = format!(
            "POST /iclock/{query} HTTP/1.1\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .into_bytes();
        request.extend_from_slice(body);
        request
    };
    check(
        post(
            &format!("cdata?SN={SN}&table=OPERLOG&Stamp=9999"),
            b"OPLOG 4\t0\t2024-08-05 12:40:57\t0\t0\t0\t0\nUSER PIN=1\tName=A\n",
        ),
        b"OK:2",
    )
    .await;
    let mut photo = b"PIN=1\nSN=0316144680030\nsize=4\nCMD=uploadphoto\0".to_vec();
    photo.extend_from_slice(b"\xff\xd8\xff\xe0");
    check(
        post(&format!("cdata?SN={SN}&table=ATTPHOTO&Stamp=1"), &photo),
        b"OK",
    )
    .await;
    check(
        post(
            &format!("cdata?SN={SN}&table=options"),
            b"~DeviceName=K40,FWVersion=Ver 6.60",
        ),
        b"OK",
    )
    .await;
    check(
        post(&format!("devicecmd?SN={SN}"), b"ID=2&Return=0&CMD=CHECK\n"),
        b"OK",
    )
    .await;
    check(
        format!("GET /iclock/getrequest?SN={SN}&INFO=Ver%206.60 HTTP/1.1\r\n\r\n").into_bytes(),
        b"OK",
    )
    .await;
    check(
        format!("GET /iclock/ping?SN={SN} HTTP/1.1\r\n\r\n").into_bytes(),
        b"OK",
    )
    .await;
    assert_eq!(listener.count("SELECT count(*) FROM listener_raw"), 4);
    let stored: Vec<u8> = listener.query(
        "SELECT body FROM listener_raw WHERE kind = 'ATTPHOTO'",
        |r| r.get(0),
    );
    assert_eq!(stored, photo);
    assert_eq!(listener.count("SELECT count(*) FROM listener_heartbeat"), 1);
    listener.stop().await;
}

#[tokio::test]
async fn a_serial_outside_the_allowlist_is_refused_and_nothing_is_stored() {
    let dir = tempfile::tempdir().unwrap();
    let listener = start(dir.path(), config("SOMEONE-ELSE"), None).await;
    let reply = exchange(
        listener.http,
        &attlog_request(SN, &att_line("1", &local_time(1))),
    )
    .await;
    let (head, _) = split_reply(&reply);
    assert!(head.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{head}");
    assert_eq!(listener.count("SELECT count(*) FROM listener_queue"), 0);
    assert_eq!(listener.count("SELECT count(*) FROM listener_heartbeat"), 0);
    listener.stop().await;
}

#[tokio::test]
async fn an_attendance_body_over_256_kb_is_refused_before_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let listener = start(dir.path(), config(SN), None).await;
    for table in ["ATTLOG", "rtlog"] {
        let request = format!(
            "POST /iclock/cdata?SN={SN}&table={table} HTTP/1.1\r\nContent-Length: {}\r\n\r\n",
            256 * 1024 + 1
        );
        let (head, _) = split_reply(&exchange(listener.http, request.as_bytes()).await);
        assert!(
            head.starts_with("HTTP/1.1 413 Payload Too Large\r\n"),
            "{head}"
        );
    }
    assert_eq!(listener.count("SELECT count(*) FROM listener_raw"), 0);
    listener.stop().await;
}

#[tokio::test]
async fn a_failed_write_answers_503_and_leaves_no_partial_state() {
    let dir = tempfile::tempdir().unwrap();
    let listener = start(dir.path(), config(SN), None).await;
    let fail = rusqlite::Connection::open(listener.data.join("stockhop.sqlite")).unwrap();
    fail.execute_batch(
        "CREATE TRIGGER refuse_666 BEFORE INSERT ON listener_queue WHEN NEW.subject = '666'
         BEGIN SELECT RAISE(ABORT, 'disk says no'); END;",
    )
    .unwrap();
    let body = format!(
        "{}{}{}",
        att_line("1001", &local_time(3)),
        att_line("0666", &local_time(3)).replacen("0666", "666", 1),
        att_line("1003", &local_time(3))
    );
    let (head, got) = split_reply(&exchange(listener.http, &attlog_request(SN, &body)).await);
    assert!(
        head.starts_with("HTTP/1.1 503 Service Unavailable\r\n"),
        "{head}"
    );
    assert!(head.contains("Retry-After: "));
    assert_ne!(got, b"OK:3");
    assert_eq!(listener.count("SELECT count(*) FROM listener_queue"), 0);
    assert_eq!(listener.count("SELECT count(*) FROM listener_heartbeat"), 0);
    fail.execute_batch("DROP TRIGGER refuse_666").unwrap();
    // The resend is judged afresh: nothing was planted by the failed write.
    let (_, got) = split_reply(&exchange(listener.http, &attlog_request(SN, &body)).await);
    assert_eq!(got, b"OK:3");
    assert_eq!(
        listener.count("SELECT count(*) FROM listener_queue WHERE rule_outcome = 'accepted'"),
        3
    );
    listener.stop().await;
}

#[tokio::test]
async fn terminal_local_time_is_read_in_the_configured_zone() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(SN);
    config.site_time_zone = "+08:00".parse().unwrap();
    let listener = start(dir.path(), config, None).await;
    // A reading 2 s ago on a terminal whose clock runs at UTC+8.
    let local = local_time(2 - 8 * 3600);
    let (_, got) =
        split_reply(&exchange(listener.http, &attlog_request(SN, &att_line("42", &local))).await);
    assert_eq!(got, b"OK:1");
    assert_eq!(
        listener.count("SELECT count(*) FROM listener_queue WHERE rule_outcome = 'accepted'"),
        1
    );
    listener.stop().await;
}

#[tokio::test]
async fn records_taken_before_a_clock_change_and_uploaded_after_it_keep_their_true_instants() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(SN);
    config
        .time_zones
        .insert(SN.to_owned(), "Europe/Berlin".parse().unwrap());
    let listener = start(dir.path(), config, None).await;
    // Taken in Berlin through 2026's two clock changes, uploaded after both.
    let body = [
        // The last minute of winter time (UTC+1) and the first of summer time.
        "1\t2026-03-29 01:59:00\t0\t1\t0\t0\t0\n",
        "2\t2026-03-29 03:00:00\t0\t1\t0\t0\t0\n",
        // 02:30 never happened that night: read with the offset before the gap.
        "3\t2026-03-29 02:30:00\t0\t1\t0\t0\t0\n",
        // 02:30 happened twice in October: read as the first (summer time).
        "4\t2026-10-25 02:30:00\t0\t1\t0\t0\t0\n",
        // The same reading with the line's own TimeOffset: it wins.
        "5\t2026-10-25 02:30:00\t0\t1\t0\t0\t0\t0\t0\t0\t+3600\n",
        // Summer, months after the change.
        "6\t2026-07-01 12:00:00\t0\t1\t0\t0\t0\n",
    ]
    .concat();
    let (_, got) = split_reply(&exchange(listener.http, &attlog_request(SN, &body)).await);
    assert_eq!(got, b"OK:6");
    let instants = listener.query(
        "SELECT group_concat(subject || '=' || occurred_at, ' ') \
         FROM (SELECT subject, occurred_at FROM listener_queue ORDER BY subject)",
        |row| row.get::<_, String>(0),
    );
    let utc = |y, mo, d, h, mi| UnixMs::from_civil(y, mo, d, h, mi, 0).0;
    let expected = [
        format!("1={}", utc(2026, 3, 29, 0, 59)),
        format!("2={}", utc(2026, 3, 29, 1, 0)),
        format!("3={}", utc(2026, 3, 29, 1, 30)),
        format!("4={}", utc(2026, 10, 25, 0, 30)),
        format!("5={}", utc(2026, 10, 25, 1, 30)),
        format!("6={}", utc(2026, 7, 1, 10, 0)),
    ]
    .join(" ");
    assert_eq!(instants, expected);
    listener.stop().await;
}

#[tokio::test]
async fn the_handshake_tells_a_terminal_in_a_named_zone_the_offset_in_force_now() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(SN);
    config.site_time_zone = "America/New_York".parse().unwrap();
    let listener = start(dir.path(), config, None).await;
    let (_, body) = split_reply(
        &exchange(
            listener.http,
            format!("GET /iclock/cdata?SN={SN}&options=all&pushver=2.4.1 HTTP/1.1\r\n\r\n")
                .as_bytes(),
        )
        .await,
    );
    let hours = jiff::Timestamp::now()
        .in_tz("America/New_York")
        .unwrap()
        .offset()
        .seconds()
        / 3600;
    let body = String::from_utf8(body).unwrap();
    assert!(body.contains(&format!("\nTimeZone={hours}\n")), "{body}");
    listener.stop().await;
}

#[tokio::test]
async fn replaying_last_weeks_log_is_all_acknowledged_all_stale_and_spends_no_budget() {
    let dir = tempfile::tempdir().unwrap();
    let listener = start(dir.path(), config(SN), None).await;
    let week = 7 * 24 * 3600;
    let replay: String = (0..300)
        .map(|i| att_line("1452", &local_time(week - i * 10)))
        .collect();
    let (_, got) = split_reply(&exchange(listener.http, &attlog_request(SN, &replay)).await);
    assert_eq!(got, b"OK:300");
    assert_eq!(
        listener.count("SELECT count(*) FROM listener_queue WHERE rule_outcome = 'stale'"),
        300
    );
    // A full minute's budget is still there, and PIN 1452 is no duplicate.
    let fresh: String = (0..120)
        .map(|i| att_line(&format!("{}", 1452 + i), &local_time(1)))
        .collect();
    let (_, got) = split_reply(&exchange(listener.http, &attlog_request(SN, &fresh)).await);
    assert_eq!(got, b"OK:120");
    assert_eq!(
        listener.count("SELECT count(*) FROM listener_queue WHERE rule_outcome = 'accepted'"),
        120
    );
    listener.stop().await;
}

#[tokio::test]
async fn concurrent_uploads_share_commits_and_a_failing_one_fails_alone() {
    let dir = tempfile::tempdir().unwrap();
    let listener = start(dir.path(), config("*"), None).await;
    let fail = rusqlite::Connection::open(listener.data.join("stockhop.sqlite")).unwrap();
    fail.execute_batch(
        "CREATE TRIGGER refuse_666 BEFORE INSERT ON listener_queue WHEN NEW.subject = '666'
         BEGIN SELECT RAISE(ABORT, 'disk says no'); END;",
    )
    .unwrap();
    let uploads: Vec<_> = (0..20)
        .map(|t| {
            let http = listener.http;
            let second_pin = if t == 7 {
                "666".to_owned()
            } else {
                format!("{t}02")
            };
            let body = format!(
                "{}{}",
                att_line(&format!("{t}01"), &local_time(2)),
                att_line(&second_pin, &local_time(1))
            );
            tokio::spawn(async move {
                let reply = exchange(http, &attlog_request(&format!("T{t}"), &body)).await;
                split_reply(&reply)
            })
        })
        .collect();
    for (t, upload) in uploads.into_iter().enumerate() {
        let (head, body) = upload.await.unwrap();
        if t == 7 {
            assert!(head.starts_with("HTTP/1.1 503 "), "{head}");
        } else {
            assert_eq!(body, b"OK:2", "terminal {t}");
        }
    }
    assert_eq!(listener.count("SELECT count(*) FROM listener_queue"), 38);
    assert_eq!(
        listener.count("SELECT count(*) FROM listener_queue WHERE device_serial = 'T7'"),
        0
    );
    assert_eq!(
        listener.count("SELECT count(*) FROM listener_heartbeat"),
        19
    );
    listener.stop().await;
}

#[tokio::test]
async fn a_lines_own_time_offset_wins_over_the_configured_zone_in_the_ledger() {
    let dir = tempfile::tempdir().unwrap();
    // The site is configured at UTC; the terminal runs at UTC+8 and says so.
    let listener = start_with_site_ledger(dir.path(), config(SN)).await;
    let now = unix_now();
    let at = UnixMs((now.0 / 1000 - 2) * 1000);
    let (y, mo, d, h, mi, s, _) = UnixMs(at.0 + 8 * 3_600_000).to_civil();
    let local = format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}");
    let body = format!("4417\t{local}\t0\t15\t\t0\t0\t0\t36.6\t97.9\t+28800\teyJmYWNlIjoxfQ==\n");
    let path = format!("/iclock/cdata?SN={SN}&table=ATTLOG&Stamp=9999");
    let (_, got) =
        split_reply(&exchange(listener.http, &iclock_post(&path, body.as_bytes())).await);
    assert_eq!(got, b"OK:1");
    assert_eq!(
        listener.count("SELECT count(*) FROM listener_queue WHERE rule_outcome = 'accepted'"),
        1
    );
    assert!(eventually(10, || !listener.ledger_events().is_empty()).await);
    assert_eq!(listener.ledger_events(), [("4417".to_owned(), at.0)]);
    listener.stop().await;
}

#[tokio::test]
async fn an_id_card_check_line_is_acknowledged_and_kept_raw_not_queued() {
    let dir = tempfile::tempdir().unwrap();
    let listener = start(dir.path(), config(SN), None).await;
    let check = format!("88\t{}\t0\t4\t\t0\t0\tType=1\n", local_time(1));
    let body = format!("{check}{}", att_line("89", &local_time(1)));
    let (_, got) = split_reply(&exchange(listener.http, &attlog_request(SN, &body)).await);
    assert_eq!(got, b"OK:2");
    assert_eq!(listener.count("SELECT count(*) FROM listener_queue"), 1);
    let (stored, reason): (Vec<u8>, String) = listener.query(
        "SELECT body, reason FROM listener_raw WHERE kind = 'ATTLOG'",
        |r| Ok((r.get(0)?, r.get(1)?)),
    );
    assert_eq!(stored, check.trim_end().as_bytes());
    assert_eq!(reason, "ID-card check (Type=1), not an attendance");
    listener.stop().await;
}

#[tokio::test]
async fn back_end_verification_is_never_answered_allow() {
    let dir = tempfile::tempdir().unwrap();
    let listener = start(dir.path(), config(SN), None).await;
    let path = format!("/iclock/cdata?SN={SN}&type=PostVerifyData");
    let body = b"pin=1001\tcardno=4411\tverifytype=4\ttime=2026-09-07 09:15:00";
    let (head, got) = split_reply(&exchange(listener.http, &iclock_post(&path, body)).await);
    let expected = b"back-end verification is not offered\n";
    assert_eq!(
        head,
        expected_head("HTTP/1.1", "403 Forbidden", expected.len())
    );
    assert_eq!(got, expected);
    assert_eq!(
        listener.count("SELECT count(*) FROM listener_raw WHERE kind = 'PostVerifyData'"),
        1
    );
    listener.stop().await;
}

#[tokio::test]
async fn photo_and_template_uploads_are_taken_up_to_the_package_size() {
    let dir = tempfile::tempdir().unwrap();
    let listener = start(dir.path(), config(SN), None).await;
    // One face photo line of a BioFace-class terminal is ~100 KB; ten of them.
    let photo = "A".repeat(100_000);
    let body: String = (0..10)
        .map(|pin| {
            format!(
                "biophoto pin={pin}\tfilename={pin}.jpg\ttype=9\tsize={}\tcontent={photo}\n",
                photo.len()
            )
        })
        .collect();
    assert!(body.len() > 256 * 1024);
    let path = format!("/iclock/cdata?SN={SN}&table=tabledata&tablename=biophoto&count=10");
    let (head, got) =
        split_reply(&exchange(listener.http, &iclock_post(&path, body.as_bytes())).await);
    assert_eq!(head, expected_head("HTTP/1.1", "200 OK", 11));
    assert_eq!(got, b"biophoto=10");
    let stored: Vec<u8> = listener.query(
        "SELECT body FROM listener_raw WHERE kind = 'tabledata'",
        |r| r.get(0),
    );
    assert_eq!(stored, body.as_bytes());
    let legacy = format!("/iclock/cdata?SN={SN}&table=BIOPHOTO&Stamp=1");
    let (_, got) =
        split_reply(&exchange(listener.http, &iclock_post(&legacy, body.as_bytes())).await);
    assert_eq!(got, b"OK");
    // Past the package size, and past 256 KB for a serial not let in.
    for (serial, length) in [(SN, 2_048_001), ("STRANGER", 256 * 1024 + 1)] {
        let request = format!(
            "POST /iclock/cdata?SN={serial}&table=BIOPHOTO HTTP/1.1\r\nContent-Length: {length}\r\n\r\n"
        );
        let (head, _) = split_reply(&exchange(listener.http, request.as_bytes()).await);
        assert!(head.starts_with("HTTP/1.1 413 "), "{serial}: {head}");
    }
    assert_eq!(listener.count("SELECT count(*) FROM listener_raw"), 2);
    listener.stop().await;
}

#[tokio::test]
async fn requests_the_listener_does_not_handle_are_counted_by_path() {
    let dir = tempfile::tempdir().unwrap();
    let listener = start(dir.path(), config(SN), None).await;
    for request in [
        iclock_get(&format!("/iclock/fdata?SN={SN}&table=door")),
        iclock_get(&format!("/iclock/fdata?SN={SN}&table=door")),
        iclock_get(&format!("/iclock/rtdata?SN={SN}&type=doorstate")),
        iclock_post(&format!("/iclock/edata?SN={SN}"), b"x"),
    ] {
        let (head, _) = split_reply(&exchange(listener.http, &request).await);
        assert!(head.starts_with("HTTP/1.1 404 Not Found\r\n"), "{head}");
    }
    // Handled, though with nothing to give: not counted.
    let (head, got) = split_reply(
        &exchange(
            listener.http,
            &iclock_get(&format!("/iclock/cdata?SN={SN}&table=RemoteAtt&PIN=77")),
        )
        .await,
    );
    assert_eq!(head, expected_head("HTTP/1.1", "200 OK", 0));
    assert!(got.is_empty());
    let (head, _) = split_reply(
        &exchange(
            listener.http,
            &iclock_post(&format!("/iclock/exchange?SN={SN}&type=publickey"), b"k"),
        )
        .await,
    );
    assert!(head.starts_with("HTTP/1.1 404 "), "{head}");
    let counts = listener.unknown_requests();
    assert_eq!(counts.total, 4);
    assert_eq!(counts.by_path["/iclock/fdata"], 2);
    assert_eq!(counts.by_path["/iclock/rtdata"], 1);
    assert_eq!(counts.by_path["/iclock/edata"], 1);
    listener.stop().await;
}
