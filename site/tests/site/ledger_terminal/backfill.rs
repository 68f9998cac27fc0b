//! A backfill end to end, with a stand-in iclock terminal on the
//! listener's port and the site's own ledger (on either engine): the
//! command queued through the view's API, handed out once on the next
//! heartbeat poll with the exact line, the listener restarted before the
//! terminal answers, the records uploaded as an ordinary `cdata` (one of
//! them already kept), the `devicecmd` return recorded, and the records
//! read back by range, each once.

use std::sync::Arc;

use serde_json::{json, Value};
use stockhop::time::{Millis, UnixMs};
use stockhop_site::listener::config::Allowlist;
use stockhop_site::listener::zone::TerminalZone;
use stockhop_site::listener::{self, LedgerSink, ListenerConfig, Running};
use stockhop_site::site::in_process::InProcessLedger;
use stockhop_site::store::db::Db;

use crate::ledger_common::{now, Site};
use crate::listener_support::{eventually, exchange, iclock_get, iclock_post, split_reply};

const SERIAL: &str = "CQZ7232460171";
/// The terminal's zone: its lines carry local times two hours ahead.
const ZONE: &str = "+02:00";

struct Terminals {
    running: Running,
    stop: tokio::sync::oneshot::Sender<()>,
}

/// The terminal listener over the site's database, forwarding to its
/// ledger in process, as `stockhop-site serve` runs it.
async fn listen(db: &Db) -> Terminals {
    let mut config = ListenerConfig {
        http_addr: "127.0.0.1:0".parse().unwrap(),
        tcp_addr: "127.0.0.1:0".parse().unwrap(),
        allow: Allowlist::parse("*").unwrap(),
        ..ListenerConfig::default()
    };
    config
        .time_zones
        .insert(SERIAL.to_owned(), TerminalZone::parse(ZONE).unwrap());
    let sink: Arc<dyn LedgerSink> = Arc::new(InProcessLedger::new(db.clone()));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = listener::spawn(config, db.clone(), Some(sink), async {
        let _ = stopped.await;
    })
    .await
    .unwrap();
    Terminals { running, stop }
}

impl Terminals {
    async fn stop(self) {
        let _ = self.stop.send(());
        self.running.join().await;
    }

    /// The terminal's request and the listener's reply body.
    async fn send(&self, request: &[u8]) -> String {
        let (head, body) = split_reply(&exchange(self.running.http_addr, request).await);
        assert!(head.starts_with("HTTP/1.1 200 OK"), "{head}");
        String::from_utf8(body).unwrap()
    }

    async fn poll(&self) -> String {
        self.send(&iclock_get(&format!("/iclock/getrequest?SN={SERIAL}")))
            .await
    }
}

/// `at` on the terminal's clock, in `separator`'s form
/// (`YYYY-MM-DD<separator>hh:mm:ss`).
fn local(at: UnixMs, separator: char) -> String {
    let (y, mo, d, h, mi, s, _) = UnixMs(at.0 + 2 * 3_600_000).to_civil();
    format!("{y:04}-{mo:02}-{d:02}{separator}{h:02}:{mi:02}:{s:02}")
}

fn attlog(pin: &str, at: UnixMs) -> String {
    format!("{pin}\t{}\t0\t1\t0\t0\t0\n", local(at, ' '))
}

async fn post_json(site: &Site, path: &str, token: &str, body: Value) -> (u16, Value) {
    let response = site
        .client
        .post(format!("{}{path}", site.base))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

#[tokio::test]
async fn a_backfill_is_handed_out_once_and_its_records_are_taken_once_across_a_restart() {
    let site = Site::start().await;
    let token = site
        .db
        .call_blocking(|conn| stockhop_site::view::admin::add(conn, "payroll", now()))
        .unwrap();
    // Whole seconds two hours ago: the outage the backfill covers.
    let base = UnixMs((now().0 / 1000 - 2 * 3600) * 1000);
    let (a, b, c) = (base, base.plus(Millis(60_000)), base.plus(Millis(120_000)));
    let (from, to) = (UnixMs(base.0 - 600_000), UnixMs(base.0 + 600_000));

    let terminals = listen(&site.db).await;
    let backfill = format!("/v1/site/terminals/{SERIAL}/backfill");
    let range = json!({ "from": from, "to": to });
    // A serial that never reached the listener is refused, with words.
    let (status, refused) = post_json(&site, &backfill, &token, range.clone()).await;
    assert_eq!(status, 404, "{refused}");
    assert!(
        refused["message"].as_str().unwrap().contains(SERIAL),
        "{refused}"
    );

    assert_eq!(terminals.poll().await, "OK");
    // One record reached the site before the outage.
    let kept = terminals
        .send(&iclock_post(
            &format!("/iclock/cdata?SN={SERIAL}&table=ATTLOG&Stamp=9999"),
            attlog("1452", a).as_bytes(),
        ))
        .await;
    assert_eq!(kept, "OK:1");

    let reversed = json!({ "from": to.to_string(), "to": from.to_string() });
    let (status, refused) = post_json(&site, &backfill, &token, reversed).await;
    assert_eq!(status, 400, "{refused}");
    let (status, queued) = post_json(&site, &backfill, &token, range).await;
    assert_eq!(status, 201, "{queued}");
    let id = queued["id"].as_i64().unwrap();
    assert_eq!(queued["state"], "pending");

    let line = format!(
        "C:{id}:DATA QUERY ATTLOG StartTime={}\tEndTime={}\n",
        local(from, 'T'),
        local(to, 'T')
    );
    assert_eq!(
        terminals.poll().await,
        line,
        "handed out with the exact line"
    );
    assert_eq!(terminals.poll().await, "OK", "handed out once");
    let (_, listed) = site
        .get(&format!("/v1/site/terminals/{SERIAL}/commands"), &token)
        .await;
    assert_eq!(listed["commands"][0]["state"], "sent", "{listed}");

    // The listener restarts between the command and the terminal's answer.
    terminals.stop().await;
    let terminals = listen(&site.db).await;
    assert_eq!(terminals.poll().await, "OK", "still handed out once");
    let upload = [attlog("1452", a), attlog("1453", b), attlog("1454", c)].concat();
    let taken = terminals
        .send(&iclock_post(
            &format!("/iclock/cdata?SN={SERIAL}&table=ATTLOG&Stamp=9999"),
            upload.as_bytes(),
        ))
        .await;
    assert_eq!(taken, "OK:3");
    let answered = terminals
        .send(&iclock_post(
            &format!("/iclock/devicecmd?SN={SERIAL}"),
            format!("ID={id}&Return=0&CMD=DATA\n").as_bytes(),
        ))
        .await;
    assert_eq!(answered, "OK");

    let (_, listed) = site
        .get(&format!("/v1/site/terminals/{SERIAL}/commands"), &token)
        .await;
    let command = &listed["commands"][0];
    assert_eq!(command["id"], id);
    assert_eq!(command["state"], "done", "{listed}");
    assert_eq!(command["return"], 0);
    assert_eq!(
        command["command"],
        line[format!("C:{id}:").len()..].trim_end()
    );
    for at in ["created_at", "sent_at", "done_at"] {
        assert!(command[at].is_string(), "{at}: {listed}");
    }

    let records = format!(
        "/v1/site/terminals/{SERIAL}/records?from={}&to={}",
        from, to
    );
    assert!(
        eventually(10, || site.count(
            "SELECT count(*) FROM terminal_events WHERE kind = 'attendance'"
        ) == 3)
        .await,
        "each record kept once in the ledger"
    );
    let (status, first) = site.get(&format!("{records}&limit=2"), &token).await;
    assert_eq!(status, 200, "{first}");
    let (_, rest) = site
        .get(
            &format!(
                "{records}&limit=2&after={}",
                first["next"].as_str().unwrap()
            ),
            &token,
        )
        .await;
    assert!(rest.get("next").is_none(), "the last page: {rest}");
    let pins: Vec<&str> = first["records"]
        .as_array()
        .unwrap()
        .iter()
        .chain(rest["records"].as_array().unwrap())
        .map(|r| r["pin"].as_str().unwrap())
        .collect();
    assert_eq!(pins, ["1452", "1453", "1454"]);
    let one = &first["records"][1];
    assert_eq!(one["occurred_at"], b.to_string());
    assert_eq!(
        (one["state"].as_str(), one["verify"].as_str()),
        (Some("0"), Some("1"))
    );

    // The same punch again in another line format (newer firmware's extra
    // fields): the listener cannot tell it for a resend and the ledger
    // keeps what arrived, but it is one punch on the payroll.
    let variant = format!("1453\t{}\t0\t1\t0\t0\t0\t0\t0\n", local(b, ' '));
    let taken = terminals
        .send(&iclock_post(
            &format!("/iclock/cdata?SN={SERIAL}&table=ATTLOG&Stamp=9999"),
            variant.as_bytes(),
        ))
        .await;
    assert_eq!(taken, "OK:1");
    assert!(
        eventually(10, || site.count(
            "SELECT count(*) FROM terminal_events WHERE kind = 'attendance'"
        ) == 4)
        .await,
        "the ledger keeps what arrived"
    );
    let (status, whole) = site.get(&format!("{records}&limit=3"), &token).await;
    assert_eq!(status, 200, "{whole}");
    let pins: Vec<&str> = whole["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["pin"].as_str().unwrap())
        .collect();
    assert_eq!(pins, ["1452", "1453", "1454"], "{whole}");
    assert!(
        whole.get("next").is_none(),
        "a full page that is the last has no next: {whole}"
    );

    // A mistyped serial is told, not answered with an empty list.
    for path in [
        format!("/v1/site/terminals/CQZ7232460170/records?from={from}&to={to}"),
        "/v1/site/terminals/CQZ7232460170/commands".to_owned(),
    ] {
        let (status, refused) = site.get(&path, &token).await;
        assert_eq!(status, 404, "{path}: {refused}");
        assert_eq!(refused["code"], "NOT_FOUND", "{refused}");
    }

    let (status, csv) = site
        .get_text(
            &format!("/v1/site/attendance.csv?from={}&to={}", from, to),
            &token,
        )
        .await;
    assert_eq!(status, 200);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "device_serial,pin,occurred_at,state,verify,recorded_at"
    );
    assert_eq!(lines.len(), 4, "{csv}");
    assert!(lines[2].starts_with(&format!("{SERIAL},1453,{},0,1,", b)));

    terminals.stop().await;
    site.stop().await;
}
