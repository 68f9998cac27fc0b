//! The site's view over real HTTP on loopback against a real SQLite file:
//! who may open it, the session cookie and CSRF, the status fields, the
//! offline rule per profile, the trend rule, the chart's series, heartbeat
//! pruning and the Prometheus text.
//!
//! History is written with the ledger's own functions at past instants
//! (what a heartbeat handler would have written then); everything is read
//! back over HTTP.

use crate::backend;
use crate::ledger_common;

use std::collections::HashMap;

use ledger_common::{now, Site};
use serde_json::{json, Value};
use stockhop::time::{Millis, UnixMs};
use stockhop::wire::Heartbeat;
use stockhop_site::ledger::modes::cycle_count;
use stockhop_site::ledger::{self, devices::Profile};
use stockhop_site::view;

const MIN: i64 = 60_000;

fn add_admin(site: &Site, name: &str) -> String {
    site.db
        .call_blocking(|conn| view::admin::add(conn, name, now()))
        .unwrap()
}

fn add_device(site: &Site, device_id: &str, profile: Profile, added_at: UnixMs) -> String {
    site.db
        .call_blocking(|conn| ledger::devices::add(conn, device_id, profile, true, added_at))
        .unwrap()
}

/// A heartbeat as the handler records it, received at `at`.
fn beat(site: &Site, device_id: &str, at: UnixMs, depth: u64, oldest: Option<UnixMs>) {
    let heartbeat = Heartbeat {
        sent_at: at,
        queue_depth: depth,
        oldest_queued_at: oldest,
        app_version: "test".into(),
    };
    site.db.call_blocking(|conn| {
        ledger::devices::record_heartbeat(conn, device_id, &heartbeat, at).unwrap();
        ledger::heartbeat_log::record(conn, device_id, &heartbeat, at).unwrap();
    });
}

fn ago(ms: i64) -> UnixMs {
    UnixMs(now().0 - ms)
}

async fn status(site: &Site, admin: &str) -> Value {
    let (code, body) = site.get("/v1/site/status", admin).await;
    assert_eq!(code, 200, "{body}");
    body
}

fn device<'a>(status: &'a Value, device_id: &str) -> &'a Value {
    status["devices"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["device_id"] == device_id)
        .unwrap_or_else(|| panic!("{device_id} not in {status}"))
}

async fn post(
    site: &Site,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<Value>,
) -> (u16, Value, reqwest::header::HeaderMap) {
    let mut request = site.client.post(format!("{}{path}", site.base));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    if let Some(body) = body {
        request = request
            .header("content-type", "application/json")
            .body(body.to_string());
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let text = response.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
        headers,
    )
}

async fn get_with(site: &Site, path: &str, headers: &[(&str, &str)]) -> (u16, Value) {
    let mut request = site.client.get(format!("{}{path}", site.base));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

#[tokio::test]
async fn admin_tokens_open_the_view_and_device_tokens_only_sync() {
    let site = Site::start().await;
    let admin = add_admin(&site, "ops");
    let hh = site.handheld("HH-1").await;

    let (code, body) = site.get("/v1/site/status", &hh.token).await;
    assert_eq!((code, body["code"].as_str()), (403, Some("ADMIN_REQUIRED")));
    assert_eq!(site.get("/metrics", &hh.token).await.0, 403);
    let (code, body) = get_with(&site, "/v1/site/status", &[]).await;
    assert_eq!((code, body["code"].as_str()), (401, Some("ADMIN_REQUIRED")));
    let (code, _) = site.get("/v1/site/status", "not-a-token").await;
    assert_eq!(code, 401);
    assert_eq!(status(&site, &admin).await["trend"], "draining");

    // The admin token is no device's: it neither syncs nor heartbeats.
    let mut as_admin = ledger_common::Handheld::new("HH-1", admin.clone());
    let open = as_admin.open("op-1");
    let (code, body) = site.sync(&as_admin, &[open]).await;
    assert_eq!(code, 401, "{body}");
    let beat = json!({"sent_at": now().to_string(), "queue_depth": 1, "app_version": "x"});
    let (code, _) = site
        .post_raw(
            "/v1/devices/HH-1/heartbeat",
            Some(&admin),
            beat.to_string().into_bytes(),
        )
        .await;
    assert_eq!(code, 401);

    // Revoked, the token opens nothing.
    site.db
        .call_blocking(|conn| view::admin::revoke(conn, "ops"))
        .unwrap();
    assert_eq!(site.get("/v1/site/status", &admin).await.0, 401);
    site.stop().await;
}

#[tokio::test]
async fn a_signed_out_browser_is_answered_204_not_an_error_and_a_bad_token_401() {
    let site = Site::start().await;
    let admin = add_admin(&site, "ops");
    let (code, body) = get_with(&site, "/v1/site/session", &[]).await;
    assert_eq!((code, body), (204, Value::String(String::new())));
    let ended = format!("{}=0123456789abcdef", view::admin::SESSION_COOKIE);
    let (code, _) = get_with(&site, "/v1/site/session", &[("cookie", &ended)]).await;
    assert_eq!(
        code, 204,
        "a session that ended is signed out, not an error"
    );
    let (code, body) = site.get("/v1/site/session", "not-an-admin-token").await;
    assert_eq!(code, 401, "{body}");
    let (code, body) = site.get("/v1/site/session", &admin).await;
    assert_eq!((code, body["admin"].as_str()), (200, Some("ops")));
    site.stop().await;
}

#[tokio::test]
async fn a_signed_in_session_changes_nothing_without_its_csrf_token() {
    let site = Site::start().await;
    let admin = add_admin(&site, "ops");

    let (code, _, _) = site
        .client
        .post(format!("{}/v1/site/login", site.base))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("token={admin}"))
        .send()
        .await
        .map(|r| (r.status().as_u16(), (), ()))
        .unwrap();
    assert_eq!(code, 415, "a form post (another site's) cannot sign in");
    let (code, _, _) = post(&site, "/v1/site/login", &[], Some(json!({"token": "nope"}))).await;
    assert_eq!(code, 401);

    let (code, login, headers) =
        post(&site, "/v1/site/login", &[], Some(json!({"token": admin}))).await;
    assert_eq!(code, 200, "{login}");
    assert_eq!(login["admin"], "ops");
    let csrf = login["csrf_token"].as_str().unwrap().to_owned();
    let set_cookie = headers["set-cookie"].to_str().unwrap().to_owned();
    assert!(set_cookie.contains("HttpOnly"), "{set_cookie}");
    assert!(set_cookie.contains("SameSite=Strict"), "{set_cookie}");
    assert!(
        !set_cookie.contains(&admin),
        "the cookie is not the admin token"
    );
    let cookie = set_cookie.split(';').next().unwrap().to_owned();

    let (code, body) = get_with(&site, "/v1/site/status", &[("cookie", &cookie)]).await;
    assert_eq!(code, 200, "{body}");
    let (code, session) = get_with(&site, "/v1/site/session", &[("cookie", &cookie)]).await;
    assert_eq!(
        (code, session["csrf_token"].as_str()),
        (200, Some(csrf.as_str()))
    );

    let new_device = json!({"device_id": "HH-9", "profile": "mc3390xr", "commissioned": true});
    for csrf_header in [None, Some("wrong")] {
        let mut headers = vec![("cookie", cookie.as_str())];
        if let Some(value) = csrf_header {
            headers.push(("x-csrf-token", value));
        }
        let (code, body, _) = post(
            &site,
            "/v1/site/devices",
            &headers,
            Some(new_device.clone()),
        )
        .await;
        assert_eq!(
            (code, body["code"].as_str()),
            (403, Some("CSRF_REJECTED")),
            "{body}"
        );
        let (code, body, _) = post(&site, "/v1/site/counts/C-1/approve", &headers, None).await;
        assert_eq!((code, body["code"].as_str()), (403, Some("CSRF_REJECTED")));
    }
    assert_eq!(
        site.count("SELECT count(*) FROM devices"),
        0,
        "nothing was added"
    );

    let with_csrf = [("cookie", cookie.as_str()), ("x-csrf-token", csrf.as_str())];
    let (code, enrolled, _) = post(&site, "/v1/site/devices", &with_csrf, Some(new_device)).await;
    assert_eq!(code, 200, "{enrolled}");
    let token = enrolled["token"].as_str().unwrap();
    let link = enrolled["setup_link"].as_str().unwrap();
    assert!(link.starts_with(&format!("{}/#site=", site.base)), "{link}");
    assert!(
        link.ends_with(&format!("&device=HH-9&token={token}")),
        "{link}"
    );
    assert!(
        enrolled["qr_svg"].as_str().unwrap().starts_with("<?xml")
            || enrolled["qr_svg"].as_str().unwrap().contains("<svg")
    );
    let mut hh = ledger_common::Handheld::new("HH-9", token.to_owned());
    let open = hh.open("op-9");
    assert_eq!(site.sync_ok(&hh, &[open]).await[0]["outcome"], "applied");

    // No count C-1: nothing waits to approve.
    let (code, body, _) = post(&site, "/v1/site/counts/C-1/approve", &with_csrf, None).await;
    assert_eq!((code, body["code"].as_str()), (404, Some("NOT_FOUND")));

    // Revoking from the view stops the device's token at once.
    let (code, _, _) = post(&site, "/v1/site/devices/HH-9/revoke", &with_csrf, None).await;
    assert_eq!(code, 204);
    let open = hh.open("op-9");
    assert_eq!(site.sync(&hh, &[open]).await.0, 401);
    let listed = get_with(&site, "/v1/site/status", &[("cookie", &cookie)])
        .await
        .1;
    assert!(listed["devices"].as_array().unwrap().is_empty(), "{listed}");

    let (code, _, headers) = post(&site, "/v1/site/logout", &with_csrf, None).await;
    assert_eq!(code, 204);
    assert!(headers["set-cookie"]
        .to_str()
        .unwrap()
        .contains("Max-Age=0"));
    let (code, _) = get_with(&site, "/v1/site/status", &[("cookie", &cookie)]).await;
    assert_eq!(code, 401, "the session ended");
    site.stop().await;
}

#[tokio::test]
async fn status_carries_the_documented_fields() {
    let site = Site::start().await;
    let admin = add_admin(&site, "ops");
    add_device(&site, "HH-1", Profile::Mc3390xr, ago(60 * MIN));
    let oldest = ago(3 * MIN);
    beat(&site, "HH-1", ago(MIN), 7, Some(oldest));
    let body = status(&site, &admin).await;
    for field in ["trend", "queue_depth", "median_sync_latency_ms", "devices"] {
        assert!(body.get(field).is_some(), "{field} in {body}");
    }
    assert_eq!(body["queue_depth"], 7);
    let hh = device(&body, "HH-1");
    let fields: Vec<&str> = hh.as_object().unwrap().keys().map(String::as_str).collect();
    for field in [
        "device_id",
        "profile",
        "commissioned",
        "online",
        "last_seen_at",
        "offline_since",
        "alert",
        "queue_depth",
        "oldest_queued_at",
    ] {
        assert!(fields.contains(&field), "{field} in {hh}");
    }
    assert_eq!(hh["profile"], "mc3390xr");
    assert_eq!(hh["commissioned"], true);
    assert_eq!(hh["online"], true);
    assert_eq!(hh["offline_since"], Value::Null);
    assert_eq!(hh["alert"], Value::Null);
    assert_eq!(hh["queue_depth"], 7);
    assert_eq!(hh["oldest_queued_at"], oldest.to_string());
    site.stop().await;
}

#[tokio::test]
async fn each_profile_goes_offline_after_its_own_heartbeat_period_at_its_priority() {
    let site = Site::start().await;
    let admin = add_admin(&site, "ops");
    let periods: [(Profile, i64, &str); 4] = [
        (Profile::Fxr90, 60_000, "P1"),
        (Profile::Mc3390xr, 900_000, "P3"),
        (Profile::Rfd40, 1_800_000, "P3"),
        (Profile::Zt411r, 300_000, "P2"),
    ];
    // Seen a little inside the period (online), a little past it (offline).
    const MARGIN: i64 = 20_000;
    let mut last_seen = HashMap::new();
    for (profile, period, _) in periods {
        let name = profile.as_str();
        add_device(&site, &format!("{name}-in"), profile, ago(2 * period));
        add_device(&site, &format!("{name}-out"), profile, ago(2 * period));
        beat(&site, &format!("{name}-in"), ago(period - MARGIN), 0, None);
        let out = ago(period + MARGIN);
        beat(&site, &format!("{name}-out"), out, 0, None);
        last_seen.insert(name, out);
    }
    let never = ago(10 * MIN);
    add_device(&site, "never-seen", Profile::Zt411r, never);
    // A gate added before it is installed, not commissioned and never
    // heard from, is not in service: its silence raises nothing.
    site.db
        .call_blocking(|conn| {
            ledger::devices::add(conn, "gate-not-installed", Profile::Fxr90, false, never)
        })
        .unwrap();

    let body = status(&site, &admin).await;
    for (profile, period, alert) in periods {
        let name = profile.as_str();
        let inside = device(&body, &format!("{name}-in"));
        assert_eq!(inside["online"], true, "{inside}");
        assert_eq!(inside["alert"], Value::Null);
        let outside = device(&body, &format!("{name}-out"));
        assert_eq!(outside["online"], false, "{outside}");
        assert_eq!(outside["alert"], alert, "{outside}");
        assert_eq!(
            outside["offline_since"],
            last_seen[name].plus(Millis(period as u64)).to_string(),
            "offline from the moment the silence passed the period"
        );
    }
    let never_seen = device(&body, "never-seen");
    assert_eq!(never_seen["online"], false);
    assert_eq!(never_seen["last_seen_at"], Value::Null);
    assert_eq!(
        never_seen["offline_since"],
        never.plus(Millis(300_000)).to_string()
    );
    let not_installed = device(&body, "gate-not-installed");
    assert_eq!(
        (
            &not_installed["online"],
            &not_installed["offline_since"],
            &not_installed["alert"]
        ),
        (&Value::Bool(false), &Value::Null, &Value::Null),
        "{not_installed}"
    );
    // Offline devices come first, P1 before P2 before P3.
    let alerts: Vec<&str> = body["devices"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["alert"].as_str())
        .collect();
    assert_eq!(alerts, ["P1", "P2", "P2", "P3", "P3"]);
    assert!(body["devices"][0]["alert"] == "P1");
    assert_eq!(body["trend"], "escalated", "a P1 device is offline");
    site.stop().await;
}

#[tokio::test]
async fn a_terminal_counts_as_seen_when_its_records_arrive() {
    let site = Site::start().await;
    let admin = add_admin(&site, "ops");
    add_device(&site, "GATE-1", Profile::Fxr90, ago(30 * MIN));
    assert_eq!(
        device(&status(&site, &admin).await, "GATE-1")["alert"],
        "P1"
    );
    site.db
        .call_blocking(|conn| ledger::devices::record_terminal_seen(conn, "GATE-1", "zebra", now()))
        .unwrap();
    let body = status(&site, &admin).await;
    assert_eq!(device(&body, "GATE-1")["online"], true, "{body}");
    assert_eq!(body["terminals"][0]["device_id"], "GATE-1");
    assert_eq!(body["terminals"][0]["source"], "zebra");
    site.stop().await;
}

#[tokio::test]
async fn the_trend_is_draining_growing_or_escalated_by_the_rule() {
    let site = Site::start().await;
    let admin = add_admin(&site, "ops");
    add_device(&site, "HH-A", Profile::Mc3390xr, ago(60 * MIN));
    add_device(&site, "HH-B", Profile::Mc3390xr, ago(60 * MIN));

    // No history at all: draining.
    assert_eq!(status(&site, &admin).await["trend"], "draining");

    // Only a short history (inside the last 5 minutes): compared with the
    // earliest heartbeat in it.
    beat(&site, "HH-A", ago(4 * MIN), 3, Some(ago(5 * MIN)));
    assert_eq!(status(&site, &admin).await["trend"], "draining", "flat");
    beat(&site, "HH-A", ago(3 * MIN), 5, Some(ago(5 * MIN)));
    assert_eq!(status(&site, &admin).await["trend"], "growing", "3 → 5");

    // Draining: the depth now is below what it was 5 minutes ago, even
    // though one device's depth rose (the site's total counts).
    let site = {
        site.stop().await;
        Site::start().await
    };
    let admin = add_admin(&site, "ops");
    add_device(&site, "HH-A", Profile::Mc3390xr, ago(60 * MIN));
    add_device(&site, "HH-B", Profile::Mc3390xr, ago(60 * MIN));
    beat(&site, "HH-A", ago(10 * MIN), 40, Some(ago(12 * MIN)));
    beat(&site, "HH-B", ago(9 * MIN), 10, Some(ago(10 * MIN)));
    beat(&site, "HH-A", ago(2 * MIN), 20, Some(ago(12 * MIN)));
    beat(&site, "HH-B", ago(MIN), 15, Some(ago(10 * MIN)));
    assert_eq!(status(&site, &admin).await["queue_depth"], 35);
    assert_eq!(status(&site, &admin).await["trend"], "draining", "50 → 35");

    // Growing: above 5 minutes ago.
    beat(&site, "HH-A", ago(MIN / 2), 45, Some(ago(12 * MIN)));
    assert_eq!(status(&site, &admin).await["trend"], "growing", "50 → 60");

    // Escalated: an item older than 15 minutes on any device.
    beat(
        &site,
        "HH-B",
        ago(MIN / 4),
        15,
        Some(ago(15 * MIN + 30_000)),
    );
    assert_eq!(status(&site, &admin).await["trend"], "escalated");
    // ... but an empty queue's stale oldest is not an overdue item.
    beat(&site, "HH-B", ago(MIN / 5), 0, Some(ago(16 * MIN)));
    beat(&site, "HH-A", ago(MIN / 6), 0, None);
    assert_eq!(status(&site, &admin).await["trend"], "draining", "50 → 0");

    // Escalated: a P1 device offline, however calm the queues are.
    add_device(&site, "GATE-1", Profile::Fxr90, ago(60 * MIN));
    beat(&site, "GATE-1", ago(61_000), 0, None);
    let body = status(&site, &admin).await;
    assert_eq!(device(&body, "GATE-1")["alert"], "P1");
    assert_eq!(body["trend"], "escalated");
    beat(&site, "GATE-1", now(), 0, None);
    assert_eq!(
        status(&site, &admin).await["trend"],
        "draining",
        "the gate is back"
    );
    site.stop().await;
}

#[tokio::test]
async fn the_series_has_five_minute_buckets_of_depth_and_median_latency() {
    // Put-away scans the units and bins the site knows.
    let site = Site::start_stocked().await;
    let admin = add_admin(&site, "ops");
    let mut hh = site.handheld("HH-1").await;
    add_device(&site, "HH-2", Profile::Rfd40, ago(24 * 60 * MIN));
    beat(&site, "HH-1", ago(13 * 60 * MIN), 4, None); // before the window
    beat(&site, "HH-2", ago(2 * 60 * MIN), 10, None);
    beat(&site, "HH-1", ago(60 * MIN), 1, None);

    // Three scans captured 10, 20 and 90 s ago, recorded now.
    let open = hh.item_at(
        "open_session",
        json!({"operator_id": "op-1", "mode": "put_away", "context": {}}),
        ago(100_000),
    );
    let scans: Vec<Value> = [90_000, 20_000, 10_000]
        .iter()
        .enumerate()
        .map(|(i, age)| {
            hh.item_at(
                "scan",
                json!({"mode": "put_away", "epc": format!("EPC-{i}"), "bin": "B-1"}),
                ago(*age),
            )
        })
        .collect();
    let mut items = vec![open];
    items.extend(scans);
    let results = site.sync_ok(&hh, &items).await;
    for result in &results {
        assert_eq!(result["outcome"], "applied", "{result}");
    }
    let recorded = UnixMs::parse_rfc3339(results[1]["recorded_at"].as_str().unwrap()).unwrap();

    let (code, body) = site.get("/v1/site/series?hours=12", &admin).await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["bucket_ms"], 300_000);
    let buckets = body["buckets"].as_array().unwrap();
    assert_eq!(buckets.len(), 12 * 12);
    let at = |b: &Value| UnixMs::parse_rfc3339(b["at"].as_str().unwrap()).unwrap().0;
    for pair in buckets.windows(2) {
        assert_eq!(at(&pair[1]) - at(&pair[0]), 300_000);
    }
    assert_eq!(
        at(&buckets[0]) % 300_000,
        0,
        "buckets start on the clock's 5 minutes"
    );
    let last = buckets.last().unwrap();
    assert!(at(last) <= now().0 && now().0 < at(last) + 300_000);

    let bucket_of = |instant: UnixMs| {
        buckets
            .iter()
            .find(|b| at(b) <= instant.0 && instant.0 < at(b) + 300_000)
            .unwrap()
    };
    assert_eq!(
        buckets[0]["queue_depth"], 4,
        "HH-1's depth from before the window"
    );
    assert_eq!(bucket_of(ago(150 * MIN))["queue_depth"], 4);
    assert_eq!(bucket_of(ago(90 * MIN))["queue_depth"], 14, "4 + HH-2's 10");
    assert_eq!(last["queue_depth"], 11, "1 + 10");
    let latency = bucket_of(recorded)["median_sync_latency_ms"]
        .as_i64()
        .unwrap();
    assert!(
        (20_000..25_000).contains(&latency),
        "median of 10, 20, 90 s: {latency}"
    );
    assert_eq!(
        bucket_of(ago(90 * MIN))["median_sync_latency_ms"],
        Value::Null
    );
    let status = status(&site, &admin).await;
    assert_eq!(status["median_sync_latency_ms"], latency);

    // Out of range or not a number, on the series and the chart alike:
    // the API's JSON error, naming the parameter, never axum's plain text.
    let auth = format!("Bearer {admin}");
    for path in ["/v1/site/series", "/v1/site/chart.svg"] {
        for bad in ["0", "25", "x", "abc", "12&hours=13", "-1"] {
            let path = format!("{path}?hours={bad}");
            let (code, body) = get_with(&site, &path, &[("authorization", &auth)]).await;
            assert_eq!(code, 400, "{path}: {body}");
            assert_eq!(body["code"], "MALFORMED_REQUEST", "{path}: {body}");
            let message = body["message"].as_str().unwrap();
            assert!(message.contains("hours"), "{path}: {message}");
        }
    }
    // The other query strings of /v1 answer the same way.
    for path in ["/v1/hops?limit=1&limit=2", "/v1/hops.csv?from=1&from=2"] {
        let (code, body) = get_with(&site, path, &[("authorization", &auth)]).await;
        assert_eq!(code, 400, "{path}: {body}");
        assert_eq!(body["code"], "MALFORMED_REQUEST", "{path}: {body}");
        assert!(
            body["message"]
                .as_str()
                .unwrap()
                .contains("duplicate field"),
            "{path}: {body}"
        );
    }
    let response = site
        .client
        .get(format!("{}/v1/site/chart.svg?hours=12", site.base))
        .bearer_auth(&admin)
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["content-type"], "image/svg+xml");
    assert!(response.text().await.unwrap().contains("<svg"));
    site.stop().await;
}

#[tokio::test]
async fn heartbeats_past_the_kept_window_are_pruned_but_each_devices_latest_stays() {
    let site = Site::start().await;
    let keep = ledger::heartbeat_log::HEARTBEAT_KEEP_MS;
    let token = add_device(&site, "HH-1", Profile::Mc3390xr, ago(2 * keep));
    add_device(&site, "HH-2", Profile::Mc3390xr, ago(2 * keep));
    beat(&site, "HH-1", ago(keep + 60 * MIN), 9, None);
    beat(&site, "HH-1", ago(keep + 30 * MIN), 8, None);
    beat(&site, "HH-2", ago(keep + 20 * MIN), 2, None);
    beat(&site, "HH-1", ago(keep - 10 * MIN), 7, None);
    assert_eq!(site.count("SELECT count(*) FROM heartbeat_log"), 4);

    // HH-1's heartbeat over HTTP prunes: its two past the window go, the
    // one inside stays, and HH-2's only heartbeat is its latest and stays.
    let beat_body = json!({"sent_at": now().to_string(), "queue_depth": 3, "app_version": "1"});
    let (code, _) = site
        .post_raw(
            "/v1/devices/HH-1/heartbeat",
            Some(&token),
            beat_body.to_string().into_bytes(),
        )
        .await;
    assert_eq!(code, 200);
    assert_eq!(
        site.count("SELECT count(*) FROM heartbeat_log WHERE device_id = 'HH-1'"),
        2
    );
    assert_eq!(
        site.count("SELECT count(*) FROM heartbeat_log WHERE device_id = 'HH-2'"),
        1
    );
    site.stop().await;
}

#[tokio::test]
async fn rejected_items_and_late_undos_wait_on_the_correction_list() {
    // Put-away scans the units and bins the site knows.
    let site = Site::start_stocked().await;
    let admin = add_admin(&site, "ops");
    let mut hh = site.handheld("HH-1").await;
    let t0 = ago(600_000);
    let open = hh.item_at(
        "open_session",
        json!({"operator_id": "op-1", "mode": "put_away"}),
        t0,
    );
    let moved = hh.item_at(
        "scan",
        json!({"mode": "put_away", "epc": "EPC-1", "bin": "B-1"}),
        t0,
    );
    let late_undo = hh.item_at(
        "undo",
        json!({"target_key": moved["key"]}),
        t0.plus(Millis(120_001)),
    );
    let stale = hh.item_at(
        "scan",
        json!({"mode": "put_away", "epc": "EPC-1", "unit_version": 0, "bin": "B-9"}),
        t0.plus(Millis(130_000)),
    );
    let results = site.sync_ok(&hh, &[open, moved, late_undo, stale]).await;
    assert_eq!(
        results[2]["reason"], "undo_window_expired",
        "{}",
        results[2]
    );
    assert_eq!(results[3]["reason"], "stale_state", "{}", results[3]);

    let body = status(&site, &admin).await;
    let decisions = &body["decisions"];
    assert_eq!(decisions["corrections_total"], 2);
    let reasons: Vec<&str> = decisions["corrections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["reason"].as_str().unwrap())
        .collect();
    assert_eq!(reasons.len(), 2);
    assert!(reasons.contains(&"undo_window_expired") && reasons.contains(&"stale_state"));
    assert_eq!(decisions["count_variances"], json!([]));
    assert_eq!(decisions["grns"], json!([]));
    site.stop().await;
}

#[tokio::test]
async fn metrics_parse_as_prometheus_text() {
    // Put-away scans the units and bins the site knows.
    let site = Site::start_stocked().await;
    let admin = add_admin(&site, "ops");
    let mut hh = site.handheld("HH-1").await;
    add_device(&site, "GATE-1", Profile::Fxr90, ago(10 * MIN));
    let open = hh.open("op-1");
    let scan = hh.item_at(
        "scan",
        json!({"mode": "put_away", "epc": "EPC-1", "bin": "B-1"}),
        ago(2_000),
    );
    site.sync_ok(&hh, &[open, scan]).await;
    let beat_body = json!({"sent_at": now().to_string(), "queue_depth": 7, "app_version": "1"});
    site.post_raw(
        "/v1/devices/HH-1/heartbeat",
        Some(&hh.token),
        beat_body.to_string().into_bytes(),
    )
    .await;

    assert_eq!(get_with(&site, "/metrics", &[]).await.0, 401);
    let response = site
        .client
        .get(format!("{}/metrics", site.base))
        .bearer_auth(&admin)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let text = response.text().await.unwrap();
    let scrape = prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_owned())))
        .unwrap_or_else(|err| panic!("{err}\n{text}"));
    let value = |metric: &str, labels: &[(&str, &str)]| -> f64 {
        let sample = scrape
            .samples
            .iter()
            .find(|s| s.metric == metric && labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v)))
            .unwrap_or_else(|| panic!("{metric} {labels:?} in\n{text}"));
        match &sample.value {
            prometheus_parse::Value::Gauge(v)
            | prometheus_parse::Value::Counter(v)
            | prometheus_parse::Value::Untyped(v) => *v,
            other => panic!("{metric}: {other:?}"),
        }
    };
    assert_eq!(
        value("stockhop_device_queue_depth", &[("device_id", "HH-1")]),
        7.0
    );
    assert_eq!(
        value("stockhop_device_online", &[("device_id", "HH-1")]),
        1.0
    );
    assert_eq!(
        value("stockhop_device_online", &[("device_id", "GATE-1")]),
        0.0
    );
    assert_eq!(value("stockhop_site_queue_depth", &[]), 7.0);
    assert_eq!(
        value("stockhop_sync_items_total", &[("outcome", "applied")]),
        2.0
    );
    assert_eq!(value("stockhop_listener_queue_depth", &[]), 0.0);
    assert_eq!(value("stockhop_listener_dead_letters", &[]), 0.0);
    assert_eq!(
        value("stockhop_pending_decisions", &[("kind", "correction")]),
        0.0
    );
    let histogram = scrape
        .samples
        .iter()
        .find(|s| s.metric == "stockhop_sync_latency_seconds")
        .unwrap_or_else(|| panic!("latency histogram in\n{text}"));
    let prometheus_parse::Value::Histogram(buckets) = &histogram.value else {
        panic!("{:?}", histogram.value);
    };
    let within_5s = buckets
        .iter()
        .filter(|b| b.less_than >= 5.0)
        .map(|b| b.count)
        .fold(f64::NAN, f64::min);
    assert_eq!(
        within_5s, 1.0,
        "the scan, captured 2 s before it was recorded: {buckets:?}"
    );
    site.stop().await;
}

#[test]
fn admin_add_prints_only_a_token_and_list_and_revoke_manage_admins() {
    let dir = tempfile::tempdir().unwrap();
    drop(backend::open_db(dir.path()));
    let data = dir.path().to_str().unwrap();
    let run = |args: &[&str]| {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_stockhop-site"))
            .args(args)
            .args(["--data", data])
            .args(backend::database_args(dir.path()))
            .output()
            .unwrap();
        (
            output.status.success(),
            String::from_utf8(output.stdout).unwrap(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    let (ok, token, _) = run(&["admin", "add", "ops"]);
    assert!(ok);
    let token = token.trim();
    assert!(
        token.len() == 64 && token.chars().all(|c| c.is_ascii_hexdigit()),
        "{token}"
    );
    let (ok, _, err) = run(&["admin", "add", "ops"]);
    assert!(!ok && err.contains("ADMIN_EXISTS"), "{err}");
    run(&["admin", "add", "night-shift"]);
    let (ok, list, _) = run(&["admin", "list"]);
    assert!(ok);
    let names: Vec<&str> = list
        .lines()
        .map(|l| l.split('\t').next().unwrap())
        .collect();
    assert_eq!(names, ["night-shift", "ops"]);
    assert!(!list.contains(token), "the token is never shown again");
    let stored: i64 = backend::open_db(dir.path())
        .call_blocking(|conn| {
            conn.query_row(
                "SELECT count(*) FROM admins WHERE token_sha256 = ?1",
                [ledger::auth::token_hash(token)],
                |row| row.get(0),
            )
        })
        .unwrap();
    assert_eq!(stored, 1, "kept as its SHA-256");
    assert!(run(&["admin", "revoke", "ops"]).0);
    let (ok, _, err) = run(&["admin", "revoke", "ops"]);
    assert!(!ok && err.contains("ADMIN_NOT_FOUND"), "{err}");
    assert_eq!(run(&["admin", "list"]).1.lines().count(), 1);
}

/// Signs in with `admin`'s token as the page does: the session cookie and
/// its CSRF token.
async fn sign_in(site: &Site, admin: &str) -> (String, String) {
    let (code, login, headers) =
        post(site, "/v1/site/login", &[], Some(json!({"token": admin}))).await;
    assert_eq!(code, 200, "{login}");
    let cookie = headers["set-cookie"].to_str().unwrap();
    let cookie = cookie.split(';').next().unwrap().to_owned();
    (cookie, login["csrf_token"].as_str().unwrap().to_owned())
}

async fn decisions_seen_by(site: &Site, cookie: &str) -> Value {
    let (code, body) = get_with(site, "/v1/site/status", &[("cookie", cookie)]).await;
    assert_eq!(code, 200, "{body}");
    body["decisions"].clone()
}

fn open_item(hh: &mut ledger_common::Handheld, mode: &str, context: Value) -> Value {
    hh.item(
        "open_session",
        json!({"operator_id": "op-1", "mode": mode, "context": context}),
    )
}

#[tokio::test]
async fn a_closed_counts_variance_is_listed_missing_and_unexpected_first_and_approved_from_the_view(
) {
    let site = Site::start().await;
    site.import(
        "bins",
        "bin,zone,location\nA-1,Z-A,L-1\nB-1,Z-B,L-1\nC-1,Z-C,L-1\n",
    );
    site.import(
        "units",
        "epc,code,sku,state,bin\nU-1,,SKU-1,in_stock,A-1\nU-2,,SKU-1,in_stock,A-1\n\
         U-4,,SKU-1,in_stock,C-1\n",
    );
    let open_count = |zone: &'static str| {
        site.db
            .call_blocking(move |conn| cycle_count::open(conn, "L-1", zone, now()))
            .unwrap()
    };
    // Z-B is counted and closed first, and matches: nothing to adjust.
    let even = open_count("Z-B");
    let mut hh = site.handheld("HH-1").await;
    let items = [
        open_item(&mut hh, "cycle_count", json!({"count_id": even})),
        hh.item("close_session", json!({})),
    ];
    site.sync_applied(&hh, &items).await;
    // Z-A: U-2 is not found, U-4 (booked in C-1) is found in A-1.
    let uneven = open_count("Z-A");
    hh.new_session();
    let items = [
        open_item(&mut hh, "cycle_count", json!({"count_id": uneven})),
        hh.item(
            "scan",
            json!({"mode": "cycle_count", "count_id": uneven, "epc": "U-1", "bin": "A-1"}),
        ),
        hh.item(
            "scan",
            json!({"mode": "cycle_count", "count_id": uneven, "epc": "U-4", "bin": "A-1"}),
        ),
        hh.item("close_session", json!({})),
    ];
    site.sync_applied(&hh, &items).await;

    let admin = add_admin(&site, "ops");
    let (cookie, csrf) = sign_in(&site, &admin).await;
    let decisions = decisions_seen_by(&site, &cookie).await;
    assert_eq!(
        decisions["count_variances"],
        json!([
            {"count_id": uneven, "location": "L-1", "zone": "Z-A", "bin": null,
             "missing": ["U-2"], "unexpected": ["U-4"]},
            {"count_id": even, "location": "L-1", "zone": "Z-B", "bin": null,
             "missing": [], "unexpected": []},
        ])
    );

    let path = format!("/v1/site/counts/{uneven}/approve");
    let (code, body, _) = post(&site, &path, &[("cookie", &cookie)], None).await;
    assert_eq!((code, body["code"].as_str()), (403, Some("CSRF_REJECTED")));
    assert_eq!(
        site.count("SELECT count(*) FROM hops WHERE kind = 'ADJUST'"),
        0
    );
    let with_csrf = [("cookie", cookie.as_str()), ("x-csrf-token", csrf.as_str())];
    let (code, body, _) = post(&site, &path, &with_csrf, None).await;
    assert_eq!(code, 204, "{body}");
    assert_eq!(
        site.count("SELECT count(*) FROM hops WHERE kind = 'ADJUST'"),
        2,
        "U-2 missing, U-4 moved into A-1"
    );
    assert_eq!(
        site.count("SELECT count(*) FROM units WHERE epc = 'U-2' AND state = 'missing'"),
        1
    );
    assert_eq!(
        site.count("SELECT count(*) FROM units WHERE epc = 'U-4' AND bin = 'A-1'"),
        1
    );
    let (_, count) = site.get(&format!("/v1/counts/{uneven}"), &hh.token).await;
    assert_eq!(count["state"], "approved", "{count}");
    let decisions = decisions_seen_by(&site, &cookie).await;
    assert_eq!(decisions["count_variances"][0]["count_id"], json!(even));
    assert_eq!(decisions["count_variances"].as_array().unwrap().len(), 1);

    let (code, body, _) = post(&site, &path, &with_csrf, None).await;
    assert_eq!(
        (code, body["code"].as_str()),
        (409, Some("COUNT_NOT_CLOSED"))
    );
    assert_eq!(
        site.count("SELECT count(*) FROM hops WHERE kind = 'ADJUST'"),
        2
    );
    site.stop().await;
}

#[tokio::test]
async fn a_grn_that_needs_resolution_is_listed_with_its_short_lines_and_resolved_from_the_view() {
    let site = Site::start().await;
    site.import(
        "grns",
        "grn,qc,sku,expected\nG-1,accepted,SKU-1,2\nG-1,accepted,SKU-2,1\nG-2,accepted,SKU-1,1\n",
    );
    let mut hh = site.handheld("HH-1").await;
    let items = [
        open_item(&mut hh, "receive", json!({"grn": "G-1"})),
        hh.item(
            "scan",
            json!({"mode": "receive", "epc": "NEW-1", "sku": "SKU-1"}),
        ),
        hh.item("close_session", json!({})),
    ];
    site.sync_applied(&hh, &items).await;

    let admin = add_admin(&site, "ops");
    let (cookie, csrf) = sign_in(&site, &admin).await;
    let decisions = decisions_seen_by(&site, &cookie).await;
    assert_eq!(
        decisions["grns"],
        json!([{"grn_id": "G-1", "short": 2, "excess": 0}]),
        "G-2 is still open: only G-1 waits"
    );

    let (code, body, _) = post(
        &site,
        "/v1/site/grns/G-1/resolve",
        &[("cookie", &cookie)],
        None,
    )
    .await;
    assert_eq!((code, body["code"].as_str()), (403, Some("CSRF_REJECTED")));
    let with_csrf = [("cookie", cookie.as_str()), ("x-csrf-token", csrf.as_str())];
    let (code, body, _) = post(&site, "/v1/site/grns/G-1/resolve", &with_csrf, None).await;
    assert_eq!(code, 204, "{body}");
    let (_, grn) = site.get("/v1/grns/G-1", &hh.token).await;
    assert_eq!(grn["state"], "complete", "{grn}");
    assert_eq!(decisions_seen_by(&site, &cookie).await["grns"], json!([]));

    let (code, body, _) = post(&site, "/v1/site/grns/G-1/resolve", &with_csrf, None).await;
    assert_eq!(
        (code, body["code"].as_str()),
        (409, Some("NOTHING_TO_RESOLVE"))
    );
    let (code, body, _) = post(&site, "/v1/site/grns/G-2/resolve", &with_csrf, None).await;
    assert_eq!(code, 409, "an open GRN waits for no decision: {body}");
    let (code, body, _) = post(&site, "/v1/site/grns/G-9/resolve", &with_csrf, None).await;
    assert_eq!((code, body["code"].as_str()), (404, Some("NOT_FOUND")));
    site.stop().await;
}

#[tokio::test]
async fn the_view_commissions_a_device_in_training_and_its_scans_post_from_then_on() {
    let site = Site::start_stocked().await;
    let admin = add_admin(&site, "ops");
    let token = site.add_device("HH-T", false);
    let mut hh = ledger_common::Handheld::new("HH-T", token);
    let practice = [hh.open("op-1"), hh.scan("EPC-1", "B-1")];
    let results = site.sync_ok(&hh, &practice).await;
    assert_eq!(results[1]["outcome"], "simulated");
    assert_eq!(
        device(&status(&site, &admin).await, "HH-T")["commissioned"],
        false
    );
    let bearer = format!("Bearer {admin}");
    let as_admin = [("authorization", bearer.as_str())];
    let path = "/v1/site/devices/HH-T/commission";
    assert_eq!(post(&site, path, &[], None).await.0, 401);
    assert_eq!(post(&site, path, &as_admin, None).await.0, 204);
    assert_eq!(
        post(&site, path, &as_admin, None).await.0,
        204,
        "commissioning twice changes nothing"
    );
    assert_eq!(
        device(&status(&site, &admin).await, "HH-T")["commissioned"],
        true
    );
    let scan = hh.scan("EPC-2", "B-1");
    assert_eq!(site.sync_ok(&hh, &[scan]).await[0]["outcome"], "applied");
    let (code, body, _) = post(&site, "/v1/site/devices/HH-404/commission", &as_admin, None).await;
    assert_eq!(
        (code, body["code"].as_str()),
        (404, Some("DEVICE_NOT_FOUND"))
    );
    let page = site
        .client
        .get(format!("{}/site/dashboard.js", site.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        page.contains("/commission`"),
        "the page offers Commission beside a device in training"
    );
    site.stop().await;
}

#[tokio::test]
async fn one_clock_the_site_zone_is_named_and_offline_since_is_never_in_the_future() {
    let site = Site::start().await;
    site.db
        .call_blocking(|conn| {
            stockhop_site::site_clock::SiteZone::named("Asia/Kolkata")
                .unwrap()
                .remember(conn)
        })
        .unwrap();
    let admin = add_admin(&site, "ops");
    // Added a minute ago and never heard from: its 300 s period has not
    // run out, so it is not offline since a time still to come.
    add_device(&site, "PRINTER-1", Profile::Zt411r, ago(MIN));
    let token = add_device(&site, "HH-1", Profile::Mc3390xr, ago(MIN));
    let body = status(&site, &admin).await;
    assert_eq!(body["time_zone"], "Asia/Kolkata");
    assert_eq!(body["utc_offset_minutes"], 330);
    let printer = device(&body, "PRINTER-1");
    assert_eq!(
        (
            &printer["online"],
            &printer["offline_since"],
            &printer["alert"]
        ),
        (&json!(false), &Value::Null, &Value::Null),
        "{printer}"
    );
    for device in body["devices"].as_array().unwrap() {
        if let Some(since) = device["offline_since"].as_str() {
            assert!(since <= body["server_time"].as_str().unwrap(), "{device}");
        }
    }
    // The handheld hears the same zone in its heartbeat's answer.
    let beat = json!({"sent_at": now().to_string(), "queue_depth": 0, "app_version": "x"});
    let (code, answer) = site
        .post_raw(
            "/v1/devices/HH-1/heartbeat",
            Some(&token),
            beat.to_string().into_bytes(),
        )
        .await;
    assert_eq!(code, 200, "{answer}");
    assert_eq!(answer["time_zone"], "Asia/Kolkata");
    site.stop().await;
}
