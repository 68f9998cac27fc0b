//! Access-control terminals (ZKTeco Security PUSH, `DeviceType=acc`) byte
//! by byte over real HTTP on loopback against a real SQLite file: the
//! registration, configuration, time and query exchanges, and `rtlog`
//! punches landing in the site's ledger.

use crate::listener_support::*;
use stockhop::time::UnixMs;
use stockhop_site::listener::push_acc::{encode_time, registry_code, session_id};
use stockhop_site::listener::unix_now;

/// A BioFace-class access terminal.
const SN: &str = "ACC7301000042";

#[tokio::test]
async fn the_access_handshake_answers_registered_with_the_configuration_block() {
    let dir = tempfile::tempdir().unwrap();
    let listener = start(dir.path(), config(SN), None).await;
    let reply = exchange(
        listener.http,
        &iclock_get(&format!(
            "/iclock/cdata?SN={SN}&options=all&pushver=3.1.2&DeviceType=acc&PushOptionsFlag=1"
        )),
    )
    .await;
    let body = format!(
        "registry=ok\nRegistryCode={}\nServerVersion=3.1.2\nServerName=Stockhop\nPushVersion=3.1.2\nErrorDelay=30\nRequestDelay=10\nTransTimes=00:00;14:05\nTransInterval=1\nTransTables=User Transaction\nRealtime=1\nSessionID={}\nTimeoutSec=10",
        registry_code(SN),
        session_id(SN)
    );
    let (head, got) = split_reply(&reply);
    assert_eq!(head, expected_head("HTTP/1.1", "200 OK", body.len()));
    assert_eq!(String::from_utf8(got).unwrap(), body);
    assert_eq!(listener.count("SELECT count(*) FROM listener_heartbeat"), 1);
    listener.stop().await;
}

#[tokio::test]
async fn registration_answers_the_registry_code_and_keeps_the_capabilities() {
    let dir = tempfile::tempdir().unwrap();
    let listener = start(dir.path(), config(SN), None).await;
    let capabilities = b"DeviceType=acc,~DeviceName=FaceTerm A1,FirmVer=ZAM170-NF-Ver1.2.3,PushVersion=3.1.2,MaxPackageSize=2048000,MachineType=101,MultiBioDataSupport=0:1:0:0:0:0:0:0:0:1,IPAddress=192.0.2.40";
    let path = format!("/iclock/registry?SN={SN}");
    let (head, got) =
        split_reply(&exchange(listener.http, &iclock_post(&path, capabilities)).await);
    let expected = format!("RegistryCode={}", registry_code(SN));
    assert_eq!(head, expected_head("HTTP/1.1", "200 OK", expected.len()));
    assert_eq!(String::from_utf8(got).unwrap(), expected);
    let stored: Vec<u8> = listener.query(
        "SELECT body FROM listener_raw WHERE kind = 'registry'",
        |r| r.get(0),
    );
    assert_eq!(stored, capabilities);
    // The same code every time, across restarts too: it is the serial's.
    let (_, again) = split_reply(&exchange(listener.http, &iclock_post(&path, capabilities)).await);
    assert_eq!(String::from_utf8(again).unwrap(), expected);
    listener.stop().await;
}

#[tokio::test]
async fn a_serial_outside_the_allowlist_is_refused_registration_with_406() {
    let dir = tempfile::tempdir().unwrap();
    let listener = start(dir.path(), config("SOMEONE-ELSE"), None).await;
    let reply = exchange(
        listener.http,
        &iclock_post(&format!("/iclock/registry?SN={SN}"), b"DeviceType=acc"),
    )
    .await;
    let (head, got) = split_reply(&reply);
    assert_eq!(head, expected_head("HTTP/1.1", "406 Not Acceptable", 0));
    assert!(got.is_empty());
    assert_eq!(listener.count("SELECT count(*) FROM listener_raw"), 0);
    listener.stop().await;
}

#[tokio::test]
async fn the_configuration_download_answers_get_and_post_with_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let listener = start(dir.path(), config(SN), None).await;
    let body = format!(
        "ServerVersion=3.1.2\nServerName=Stockhop\nPushVersion=3.1.2\nErrorDelay=30\nRequestDelay=10\nTransTimes=00:00;14:05\nTransInterval=1\nTransTables=User Transaction\nRealtime=1\nSessionID={}\nTimeoutSec=10",
        session_id(SN)
    );
    let path = format!("/iclock/push?SN={SN}");
    for request in [iclock_get(&path), iclock_post(&path, b"")] {
        let (head, got) = split_reply(&exchange(listener.http, &request).await);
        assert_eq!(head, expected_head("HTTP/1.1", "200 OK", body.len()));
        assert_eq!(String::from_utf8(got).unwrap(), body);
    }
    listener.stop().await;
}

#[tokio::test]
async fn the_time_service_answers_the_encoded_time_and_the_terminals_zone() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(SN);
    config.site_time_zone = "+08:00".parse().unwrap();
    let listener = start(dir.path(), config, None).await;
    let before = encode_time(unix_now());
    let reply = exchange(
        listener.http,
        &iclock_get(&format!("/iclock/rtdata?SN={SN}&type=time")),
    )
    .await;
    let after = encode_time(unix_now());
    let (head, got) = split_reply(&reply);
    let got = String::from_utf8(got).unwrap();
    let (date_time, zone) = got
        .strip_prefix("DateTime=")
        .and_then(|rest| rest.split_once(",ServerTZ="))
        .unwrap_or_else(|| panic!("{got:?}"));
    let date_time: i64 = date_time.parse().unwrap();
    assert!((before..=after).contains(&date_time), "{got}");
    assert_eq!(zone, "+0800");
    assert_eq!(head, expected_head("HTTP/1.1", "200 OK", got.len()));
    listener.stop().await;
}

#[tokio::test]
async fn query_and_table_uploads_are_answered_with_their_table_and_count() {
    let dir = tempfile::tempdir().unwrap();
    let listener = start(dir.path(), config(SN), None).await;
    let users = b"user uid=1\tcardno=\tpin=1001\tpassword=\tgroup=1\tstarttime=0\tendtime=0\tname=Ana\tprivilege=0\tdisable=0\tverify=0\n\
user uid=2\tcardno=4411\tpin=1002\tpassword=\tgroup=1\tstarttime=0\tendtime=0\tname=\tprivilege=14\tdisable=0\tverify=0\n";
    let check = |path: String, body: &'static [u8], expected: &'static str| {
        let http = listener.http;
        async move {
            let (head, got) = split_reply(&exchange(http, &iclock_post(&path, body)).await);
            assert_eq!(
                head,
                expected_head("HTTP/1.1", "200 OK", expected.len()),
                "{path}"
            );
            assert_eq!(String::from_utf8(got).unwrap(), expected, "{path}");
        }
    };
    check(
        format!("/iclock/querydata?SN={SN}&type=tabledata&cmdid=12&tablename=user&count=2&packcnt=1&packidx=1"),
        users,
        "user=2",
    )
    .await;
    check(
        format!("/iclock/cdata?SN={SN}&table=tabledata&tablename=user&count=2"),
        users,
        "user=2",
    )
    .await;
    check(
        format!("/iclock/cdata?SN={SN}&table=tabledata&tablename=biodata"),
        b"biodata pin=1001\tno=0\tindex=0\tvalid=1\tduress=0\ttype=9\tmajorver=58\tminorver=12\tformat=0\ttmp=QUJDRA==\n",
        "biodata=1",
    )
    .await;
    assert_eq!(
        listener
            .count("SELECT count(*) FROM listener_raw WHERE kind IN ('querydata', 'tabledata')"),
        3
    );
    listener.stop().await;
}

#[tokio::test]
async fn rtlog_punches_land_in_the_ledger_and_door_events_are_kept_raw() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(SN);
    config.site_time_zone = "+08:00".parse().unwrap();
    let listener = start_with_site_ledger(dir.path(), config).await;
    // Two seconds and one second ago on a terminal at UTC+8.
    let now = unix_now();
    let first = UnixMs((now.0 / 1000 - 2) * 1000);
    let second = UnixMs(first.0 + 1000);
    let local = |at: UnixMs| {
        let (y, mo, d, h, mi, s, _) = UnixMs(at.0 + 8 * 3_600_000).to_civil();
        format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}")
    };
    let body = format!(
        "time={}\tpin=0\tcardno=0\teventaddr=1\tevent=206\tinoutstatus=2\tverifytype=200\tindex=500\tsitecode=0\tlinkid=0\n\
time={}\tpin=1001\tcardno=0\teventaddr=1\tevent=0\tinoutstatus=0\tverifytype=15\tindex=501\tsitecode=0\tlinkid=0\tmaskflag=0\ttemperature=36.4\tconvtemperature=97.5\n\
time={}\tpin=0\tcardno=0\teventaddr=1\tevent=8\tinoutstatus=2\tverifytype=200\tindex=502\n\
time={}\tpin=1002\tcardno=4411\teventaddr=1\tevent=0\tinoutstatus=1\tverifytype=4\tindex=503\n",
        local(first),
        local(first),
        local(second),
        local(second),
    );
    let path = format!("/iclock/cdata?SN={SN}&table=rtlog&Stamp=9999");
    let (head, got) =
        split_reply(&exchange(listener.http, &iclock_post(&path, body.as_bytes())).await);
    assert_eq!(head, expected_head("HTTP/1.1", "200 OK", 2));
    assert_eq!(got, b"OK");
    assert_eq!(
        listener.count("SELECT count(*) FROM listener_raw WHERE kind = 'rtlog'"),
        1,
        "the two door events, kept as one raw record of the upload"
    );
    let reason: String = listener.query(
        "SELECT reason FROM listener_raw WHERE kind = 'rtlog'",
        |r| r.get(0),
    );
    assert!(reason.starts_with("2 line(s) kept raw"), "{reason}");
    assert!(eventually(10, || listener.ledger_events().len() == 2).await);
    assert_eq!(
        listener.ledger_events(),
        [("1001".to_owned(), first.0), ("1002".to_owned(), second.0)]
    );
    assert_eq!(
        listener.count("SELECT count(*) FROM terminal_events WHERE rule_outcome = 'accepted'"),
        2
    );
    listener.stop().await;
}
