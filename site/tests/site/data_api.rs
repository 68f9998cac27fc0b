//! Data in and out: reference data put as CSV or JSON, the commands'
//! endpoints, the hop feed and its CSV export, imports staged while the
//! site syncs (and killed mid-way), and the OpenAPI document, against a
//! real site server on loopback over a real database (SQLite, or
//! PostgreSQL with `STOCKHOP_TEST_BACKEND=postgres`).

use crate::backend;

use std::collections::HashSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::ledger_common::{now, Handheld, Site};
use serde_json::{json, Value};
use stockhop::time::UnixMs;
use stockhop_site::ledger;

fn admin_token(site: &Site) -> String {
    site.db
        .call_blocking(|conn| stockhop_site::view::admin::add(conn, "ops", now()))
        .unwrap()
}

async fn put(
    site: &Site,
    path: &str,
    token: Option<&str>,
    content_type: &str,
    body: impl Into<reqwest::Body>,
) -> (u16, Value) {
    let mut request = site
        .client
        .put(format!("{}{path}", site.base))
        .header("content-type", content_type)
        .body(body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

async fn post_json(site: &Site, path: &str, token: Option<&str>, body: Value) -> (u16, Value) {
    site.post_raw(path, token, body.to_string().into_bytes())
        .await
}

async fn get_text(site: &Site, path: &str, token: &str) -> (u16, String) {
    site.get_text(path, token).await
}

/// Rows of the big imports below: a few seconds of importing, beside
/// syncs or until a kill, on either engine.
const BIG_IMPORT_ROWS: usize = 30_000;
/// Rows of an import killed part way: more than it stages or applies in
/// the moment between the test seeing its first rows and the kill.
const KILLED_IMPORT_ROWS: usize = 50_000;

fn bins_csv(range: std::ops::Range<usize>) -> String {
    let mut text = String::from("bin,zone,location\n");
    for i in range {
        text.push_str(&format!("BIG-{i:07},Z-{},L-1\n", i % 50));
    }
    text
}

#[tokio::test]
async fn reference_data_is_put_as_csv_or_json_and_answers_rows_and_changed() {
    let site = Site::start().await;
    let admin = admin_token(&site);
    let bins = "bin,zone,location\nA-1,Z-A,L-1\nA-2,Z-A,L-1\n";
    let (status, body) = put(
        &site,
        "/v1/admin/reference/bins",
        Some(&admin),
        "text/csv",
        bins,
    )
    .await;
    assert_eq!(
        (status, body.clone()),
        (200, json!({"rows": 2, "changed": 2})),
        "{body}"
    );
    let (status, body) = put(
        &site,
        "/v1/admin/reference/bins",
        Some(&admin),
        "text/csv; charset=utf-8",
        bins,
    )
    .await;
    assert_eq!((status, body), (200, json!({"rows": 2, "changed": 0})));
    // One bin as it was, one moved to another zone, one new: two changed,
    // and only those two take a new change number (handhelds fetch them
    // again, not the one that stayed).
    let clock = site.count("SELECT seq FROM reference_clock");
    let (status, body) = put(
        &site,
        "/v1/admin/reference/bins",
        Some(&admin),
        "text/csv",
        "bin,zone,location\nA-1,Z-A,L-1\nA-2,Z-B,L-1\nA-3,Z-A,L-2\n",
    )
    .await;
    assert_eq!((status, body), (200, json!({"rows": 3, "changed": 2})));
    assert_eq!(
        site.count(&format!(
            "SELECT count(*) FROM bins WHERE ref_seq > {clock} AND bin IN ('A-2', 'A-3')"
        )),
        2
    );
    assert_eq!(
        site.count(&format!(
            "SELECT count(*) FROM bins WHERE ref_seq > {clock}"
        )),
        2
    );
    assert_eq!(
        site.count("SELECT count(*) FROM bins WHERE bin = 'A-2' AND zone = 'Z-B'"),
        1
    );

    let units = json!([
        {"epc": "U-1", "code": "C-1", "sku": "SKU-1", "state": "in_stock", "bin": "A-1"},
        {"epc": "U-2", "code": null, "sku": "SKU-1", "state": "new"},
    ]);
    let (status, body) = put(
        &site,
        "/v1/admin/reference/units",
        Some(&admin),
        "application/json",
        units.to_string(),
    )
    .await;
    assert_eq!((status, body), (200, json!({"rows": 2, "changed": 2})));
    let grns = json!([{"grn": "G-1", "qc": "accepted", "sku": "SKU-1", "expected": 2}]);
    let (status, body) = put(
        &site,
        "/v1/admin/reference/grns",
        Some(&admin),
        "application/json",
        grns.to_string(),
    )
    .await;
    assert_eq!((status, body), (200, json!({"rows": 1, "changed": 1})));
    let manifests = "manifest,state,epc\nM-1,packing,U-1\n";
    let (status, _) = put(
        &site,
        "/v1/admin/reference/manifests",
        Some(&admin),
        "text/csv",
        manifests,
    )
    .await;
    assert_eq!(status, 200);

    assert_eq!(site.count("SELECT count(*) FROM bins"), 3);
    assert_eq!(
        site.count("SELECT count(*) FROM units WHERE bin = 'A-1'"),
        1
    );
    assert_eq!(
        site.count("SELECT expected FROM grn_lines WHERE grn = 'G-1'"),
        2
    );
    assert_eq!(site.count("SELECT count(*) FROM manifest_units"), 1);
    assert_eq!(
        site.count("SELECT count(*) FROM imports"),
        0,
        "a finished import leaves no row"
    );
    assert_eq!(site.count("SELECT count(*) FROM import_rows"), 0);
    site.stop().await;
}

/// A file whose lines end one way, then another (edited on two
/// systems): every row in, from the command line and through the API.
#[tokio::test]
async fn a_file_whose_lines_end_two_ways_imports_every_row() {
    let site = Site::start().await;
    let admin = admin_token(&site);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("c5.csv");
    std::fs::write(
        &file,
        "bin,zone,location\nH-01-01,H,DC1\r\nH-01-02,H,DC1\r\n",
    )
    .unwrap();
    let output = site_command(&site.data, &["import", "bins", file.to_str().unwrap()])
        .env("RUST_LOG", "error")
        .output()
        .unwrap();
    let told = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{told}");
    assert_eq!(
        told.trim(),
        format!("{}: 2 rows, 2 changed", file.display())
    );
    let (status, body) = put(
        &site,
        "/v1/admin/reference/bins",
        Some(&admin),
        "text/csv",
        "bin,zone,location\rH-01-02,H,DC1\nH-01-03,H,DC1\r\nH-01-04,H,DC1",
    )
    .await;
    assert_eq!((status, body), (200, json!({"rows": 3, "changed": 2})));
    assert_eq!(site.count("SELECT count(*) FROM bins"), 4);
    site.stop().await;
}

#[tokio::test]
async fn a_bad_import_lists_every_bad_line_and_imports_nothing() {
    let site = Site::start().await;
    let admin = admin_token(&site);
    let bad = "bin,zone,location\nOK-1,Z,L\nNUL\u{0}BIN,Z,L\nESC\u{1b}[2J,Z,L\nOK-1,Z,L\n";
    let (status, body) = put(
        &site,
        "/v1/admin/reference/bins",
        Some(&admin),
        "text/csv",
        bad,
    )
    .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["code"], "IMPORT_INVALID");
    let errors = body["errors"].as_array().unwrap();
    let lines: Vec<u64> = errors.iter().map(|e| e["line"].as_u64().unwrap()).collect();
    assert_eq!(lines, [3, 4, 5], "{body}");
    assert_eq!(
        errors[0]["message"],
        "bin must not contain control characters"
    );
    assert_eq!(
        errors[1]["message"],
        "bin must not contain control characters"
    );
    assert_eq!(errors[2]["message"], "bin \"OK-1\" is already on line 2");

    // Lines as an editor shows them, whatever ends them (here `\n`, then
    // `\r\n`, a lone `\r`, an empty line).
    let mixed = "bin,zone,location\nM-1,Z,L\r\nM-2,Z,L\rNUL\u{0}BIN,Z,L\r\n\nM-1,Z,L\n";
    let (status, body) = put(
        &site,
        "/v1/admin/reference/bins",
        Some(&admin),
        "text/csv",
        mixed,
    )
    .await;
    assert_eq!(status, 422, "{body}");
    let lines: Vec<u64> = body["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines, [4, 6], "{body}");
    assert_eq!(
        body["errors"][1]["message"],
        "bin \"M-1\" is already on line 2"
    );

    let json_bad = json!([{"bin": "J-1", "zone": "Z", "location": "L"}, {"bin": "J\u{7}", "zone": "Z", "location": "L"}, "J-3"]);
    let (status, body) = put(
        &site,
        "/v1/admin/reference/bins",
        Some(&admin),
        "application/json",
        json_bad.to_string(),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    let lines: Vec<u64> = body["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines, [2, 3], "{body}");

    let ghost = "epc,code,sku,state,bin\nU-1,,SKU,new,NOWHERE\n";
    let (status, body) = put(
        &site,
        "/v1/admin/reference/units",
        Some(&admin),
        "text/csv",
        ghost,
    )
    .await;
    assert_eq!(status, 422);
    assert_eq!(
        body["errors"][0]["message"],
        "unknown bin \"NOWHERE\": import bins first"
    );
    let header = "bin,zone\nB,Z\n";
    let (status, body) = put(
        &site,
        "/v1/admin/reference/bins",
        Some(&admin),
        "text/csv",
        header,
    )
    .await;
    assert_eq!(status, 422);
    assert_eq!(body["errors"][0]["line"], 1);

    for table in ["bins", "units", "imports", "import_rows"] {
        assert_eq!(
            site.count(&format!("SELECT count(*) FROM {table}")),
            0,
            "{table}"
        );
    }
    site.stop().await;
}

#[tokio::test]
async fn reference_data_needs_an_admin_token_a_known_kind_and_csv_or_json() {
    let site = Site::start().await;
    let admin = admin_token(&site);
    let device = site.add_device("HH-1", true);
    let bins = "bin,zone,location\nA-1,Z,L\n";
    let path = "/v1/admin/reference/bins";
    assert_eq!(put(&site, path, None, "text/csv", bins).await.0, 401);
    assert_eq!(
        put(&site, path, Some("not-a-token"), "text/csv", bins)
            .await
            .0,
        401
    );
    let (status, body) = put(&site, path, Some(&device), "text/csv", bins).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (403, Some("ADMIN_REQUIRED"))
    );
    let (status, body) = put(
        &site,
        "/v1/admin/reference/pallets",
        Some(&admin),
        "text/csv",
        bins,
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (404, Some("UNKNOWN_REFERENCE"))
    );
    let (status, body) = put(
        &site,
        "/v1/admin/reference/operators",
        Some(&admin),
        "text/csv",
        "badge,name\nOP-1,Ann Lee\nOP-2,Bo Chen\n",
    )
    .await;
    assert_eq!((status, &body), (200, &json!({"rows": 2, "changed": 2})));
    assert_eq!(site.count("SELECT count(*) FROM operators"), 2);
    assert_eq!(
        put(&site, path, Some(&admin), "text/plain", bins).await.0,
        415
    );
    let (status, body) = put(&site, path, Some(&admin), "application/json", "{\"bin\":1}").await;
    assert_eq!(
        (status, body["message"].as_str().unwrap()),
        (
            400,
            "the body is one JSON object: send an array of them, [{…}, {…}], \
             each with the fields bin, zone, location"
        )
    );
    // A CSV file whose line ends were lost (curl -d @FILE).
    let (status, body) = put(
        &site,
        path,
        Some(&admin),
        "text/csv",
        "bin,zone,locationA-1,Z,LA-2,Z,L",
    )
    .await;
    assert_eq!(status, 422);
    assert!(
        body["errors"][0]["message"]
            .as_str()
            .unwrap()
            .ends_with("(curl -d drops them); send the file with --data-binary @FILE"),
        "{body}"
    );
    // JSON after a byte order mark, as some tools write it.
    let (status, body) = put(
        &site,
        "/v1/admin/reference/operators",
        Some(&admin),
        "application/json",
        "\u{feff}[{\"badge\": \"OP-3\", \"name\": \"Cy Diaz\"}]",
    )
    .await;
    assert_eq!((status, &body), (200, &json!({"rows": 1, "changed": 1})));
    // A CSV file sent as JSON.
    let (status, body) = put(&site, path, Some(&admin), "application/json", bins).await;
    assert_eq!(status, 400);
    let message = body["message"].as_str().unwrap();
    assert!(
        message.starts_with("the body is not JSON (")
            && message.ends_with("; a CSV file goes as Content-Type: text/csv"),
        "{message}"
    );
    assert_eq!(site.count("SELECT count(*) FROM bins"), 0);
    site.stop().await;
}

#[tokio::test]
async fn the_commands_have_endpoints_that_do_what_the_command_line_does() {
    let site = Site::start_stocked().await;
    let admin = admin_token(&site);

    let (status, body) = post_json(
        &site,
        "/v1/admin/counts",
        Some(&admin),
        json!({"location": "L-1", "zone": "Z-1"}),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let count_id = body["count_id"].as_str().unwrap().to_owned();
    assert_eq!(
        site.count(&format!(
            "SELECT count(*) FROM counts WHERE count_id = '{count_id}' AND state = 'open'"
        )),
        1
    );
    let (status, body) = post_json(
        &site,
        "/v1/admin/counts",
        Some(&admin),
        json!({"location": "L-1", "zone": "Z-1"}),
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (409, Some("COUNT_ALREADY_OPEN")),
        "{body}"
    );
    assert_eq!(
        post_json(
            &site,
            "/v1/admin/counts",
            Some(&admin),
            json!({"zone": "Z-1"})
        )
        .await
        .0,
        422
    );

    let until = UnixMs(now().0 - 60_000).to_string();
    assert_eq!(
        post_json(
            &site,
            "/v1/admin/periods/close",
            Some(&admin),
            json!({"until": until})
        )
        .await
        .0,
        204
    );
    let (status, body) = post_json(
        &site,
        "/v1/admin/periods/close",
        Some(&admin),
        json!({"until": until}),
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (409, Some("PERIOD_NOT_LATER"))
    );
    assert_eq!(
        post_json(
            &site,
            "/v1/admin/periods/close",
            Some(&admin),
            json!({"until": "yesterday"})
        )
        .await
        .0,
        400
    );

    let (status, body) = post_json(
        &site,
        "/v1/admin/devices",
        Some(&admin),
        json!({"device_id": "HH-9", "profile": "mc3390xr"}),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let token = body["token"].as_str().unwrap().to_owned();
    assert!(
        body["setup_link"].as_str().unwrap().contains("device=HH-9"),
        "{body}"
    );
    assert_eq!(site.get("/v1/reference", &token).await.0, 200);
    let (status, body) = post_json(
        &site,
        "/v1/admin/devices",
        Some(&admin),
        json!({"device_id": "HH-9", "profile": "mc3390xr"}),
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (409, Some("DEVICE_EXISTS")),
        "{body}"
    );
    // The product's words, never the schema's constraint.
    let message = body["message"].as_str().unwrap();
    assert!(message.contains("\"HH-9\" exists already"), "{body}");
    assert!(!message.contains("devices."), "{body}");
    assert_eq!(
        post_json(
            &site,
            "/v1/admin/devices",
            Some(&admin),
            json!({"device_id": "HH-8", "profile": "walkie"})
        )
        .await
        .0,
        400
    );

    let (status, listed) = site.get("/v1/admin/devices", &admin).await;
    assert_eq!(status, 200);
    let hh9 = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["device_id"] == "HH-9")
        .unwrap()
        .clone();
    assert_eq!(
        (hh9["commissioned"].as_bool(), hh9["revoked_at"].is_null()),
        (Some(false), true)
    );
    assert_eq!(
        post_json(
            &site,
            "/v1/admin/devices/HH-9/commission",
            Some(&admin),
            json!({})
        )
        .await
        .0,
        204
    );
    assert_eq!(
        site.count("SELECT commissioned FROM devices WHERE device_id = 'HH-9'"),
        1
    );

    let (status, linked) = post_json(
        &site,
        "/v1/admin/devices/HH-9/link",
        Some(&admin),
        json!({}),
    )
    .await;
    assert_eq!(status, 200, "{linked}");
    let relinked = linked["token"].as_str().unwrap().to_owned();
    assert_eq!(
        site.get("/v1/reference", &token).await.0,
        401,
        "the old token stops working"
    );
    assert_eq!(site.get("/v1/reference", &relinked).await.0, 200);

    assert_eq!(
        post_json(
            &site,
            "/v1/admin/devices/HH-9/revoke",
            Some(&admin),
            json!({})
        )
        .await
        .0,
        204
    );
    assert_eq!(
        site.get("/v1/reference", &relinked).await.0,
        401,
        "a revoked token stops working"
    );
    for path in [
        "/v1/admin/devices/NOPE/revoke",
        "/v1/admin/devices/NOPE/commission",
        "/v1/admin/devices/HH-9/link",
    ] {
        assert_eq!(
            post_json(&site, path, Some(&admin), json!({})).await.0,
            404,
            "{path}"
        );
    }
    let device = site.add_device("HH-1", true);
    assert_eq!(
        post_json(
            &site,
            "/v1/admin/counts",
            Some(&device),
            json!({"location": "L-1", "zone": "Z-2"})
        )
        .await
        .0,
        403
    );
    assert_eq!(
        post_json(
            &site,
            "/v1/admin/periods/close",
            None,
            json!({"until": until})
        )
        .await
        .0,
        401
    );
    site.stop().await;
}

/// Every hop key in the ledger.
#[tokio::test]
async fn a_count_is_cancelled_through_its_endpoint_as_the_command_line_cancels_it() {
    let site = Site::start_stocked().await;
    let admin = admin_token(&site);
    let open = |zone: &'static str| {
        let site = &site;
        let admin = admin.clone();
        async move {
            let (status, body) = post_json(
                site,
                "/v1/admin/counts",
                Some(&admin),
                json!({"location": "L-1", "zone": zone}),
            )
            .await;
            assert_eq!(status, 201, "{body}");
            body["count_id"].as_str().unwrap().to_owned()
        }
    };

    let count_id = open("Z-1").await;
    let cancel = format!("/v1/admin/counts/{count_id}/cancel");
    let device = site.add_device("HH-1", true);
    assert_eq!(
        post_json(&site, &cancel, Some(&device), json!({})).await.0,
        403
    );
    assert_eq!(post_json(&site, &cancel, None, json!({})).await.0, 401);
    assert_eq!(
        post_json(&site, &cancel, Some(&admin), json!({})).await.0,
        204
    );
    assert_eq!(
        site.count(&format!(
            "SELECT count(*) FROM counts
             WHERE count_id = '{count_id}' AND cancelled_at IS NOT NULL"
        )),
        1
    );
    assert_eq!(
        post_json(&site, &cancel, Some(&admin), json!({})).await.0,
        204,
        "cancelling a cancelled count changes nothing"
    );
    // The zone is free again once its count is cancelled.
    let approved = open("Z-1").await;

    let (status, body) = post_json(
        &site,
        "/v1/admin/counts/NOPE/cancel",
        Some(&admin),
        json!({}),
    )
    .await;
    assert_eq!((status, body["code"].as_str()), (404, Some("NOT_FOUND")));

    let id = approved.clone();
    site.db.call_blocking(move |conn| {
        ledger::modes::cycle_count::close(conn, &id, now()).unwrap();
        ledger::modes::cycle_count::approve(conn, &id, now()).unwrap();
    });
    let (status, body) = post_json(
        &site,
        &format!("/v1/admin/counts/{approved}/cancel"),
        Some(&admin),
        json!({}),
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (409, Some("COUNT_APPROVED")),
        "{body}"
    );
    site.stop().await;
}

/// A script opens a count of one bin as `count open --bin` does; a field
/// the endpoint does not know (a misspelt `bin`) is refused, never left
/// out to open a count of the whole zone.
#[tokio::test]
async fn a_count_of_one_bin_opens_through_its_endpoint_and_an_unknown_field_is_refused() {
    let site = Site::start_stocked().await;
    let admin = admin_token(&site);
    let (status, body) = post_json(
        &site,
        "/v1/admin/counts",
        Some(&admin),
        json!({"location": "L-1", "zone": "Z-1", "bin": "B-3"}),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let count_id = body["count_id"].as_str().unwrap().to_owned();
    assert_eq!(
        site.count(&format!(
            "SELECT count(*) FROM counts WHERE count_id = '{count_id}' AND bin = 'B-3'"
        )),
        1,
        "the count is of the bin, not of the zone"
    );
    // The rest of the zone is free: another bin opens a count of its own.
    let (status, body) = post_json(
        &site,
        "/v1/admin/counts",
        Some(&admin),
        json!({"location": "L-1", "zone": "Z-1", "bin": "B-4"}),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let (status, body) = post_json(
        &site,
        "/v1/admin/counts",
        Some(&admin),
        json!({"location": "L-1", "zone": "Z-1", "bin": "B-NOWHERE"}),
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (404, Some("NOT_FOUND")),
        "{body}"
    );
    let (status, body) = post_json(
        &site,
        "/v1/admin/counts",
        Some(&admin),
        json!({"location": "L-1", "zone": "Z-1", "Bin": "B-5"}),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("unknown field `Bin`"),
        "{body}"
    );
    // A misspelt `commissioned` would leave a device in training unnoticed.
    let (status, body) = post_json(
        &site,
        "/v1/admin/devices",
        Some(&admin),
        json!({"device_id": "HH-7", "profile": "mc3390xr", "comissioned": true}),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(
        site.count("SELECT count(*) FROM counts WHERE bin IS NULL"),
        0,
        "no count of the whole zone"
    );
    assert_eq!(site.count("SELECT count(*) FROM devices"), 0);
    site.stop().await;
}

/// Books close once a period has ended: an `until` after the site's clock
/// (a year typed wrong) would book every hop captured until then at it,
/// and a close is never taken back. The command line refuses it the same.
#[tokio::test]
async fn a_period_that_has_not_ended_is_not_closed() {
    let site = Site::start_stocked().await;
    let admin = admin_token(&site);
    let later = UnixMs(now().0 + 24 * 3_600_000).to_string();
    let (status, body) = post_json(
        &site,
        "/v1/admin/periods/close",
        Some(&admin),
        json!({"until": later}),
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (409, Some("PERIOD_NOT_ENDED")),
        "{body}"
    );
    let output = site_command(&site.data, &["period", "close", &later])
        .env("RUST_LOG", "error")
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("PERIOD_NOT_ENDED"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(site.count("SELECT count(*) FROM periods"), 0);
    // A hop captured now is booked now, not at that later instant.
    let mut hh = site.handheld("HH-1").await;
    let open = hh.open("op-1");
    let scan = hh.scan("EPC-1", "B-1");
    site.sync_ok(&hh, &[open, scan]).await;
    let (_, hops) = site
        .get(&format!("/v1/sessions/{}/hops", hh.session), &hh.token)
        .await;
    assert_eq!(hops["hops"][0]["booked_at"], hops["hops"][0]["occurred_at"]);
    site.stop().await;
}

/// Revoking, commissioning or re-linking a revoked device says it was
/// revoked: `device list` still shows it, so "no device" sends a reader
/// looking for a typo.
#[tokio::test]
async fn a_revoked_device_is_refused_as_revoked_not_as_unknown() {
    let site = Site::start().await;
    let admin = admin_token(&site);
    site.add_device("HH-1", true);
    let revoke = "/v1/admin/devices/HH-1/revoke";
    assert_eq!(
        post_json(&site, revoke, Some(&admin), json!({})).await.0,
        204
    );
    for action in ["revoke", "commission", "link"] {
        let (status, body) = post_json(
            &site,
            &format!("/v1/admin/devices/HH-1/{action}"),
            Some(&admin),
            json!({}),
        )
        .await;
        assert_eq!(
            (status, body["code"].as_str()),
            (404, Some("DEVICE_NOT_FOUND")),
            "{action}: {body}"
        );
        assert!(
            body["message"].as_str().unwrap().contains("was revoked at"),
            "{action}: {body}"
        );
    }
    let (_, body) = post_json(
        &site,
        "/v1/admin/devices/HH-9/revoke",
        Some(&admin),
        json!({}),
    )
    .await;
    assert_eq!(body["message"], "no device \"HH-9\"");
    site.stop().await;
}

/// A JSON element names its fields: one the kind does not have (`"Bin"`
/// for `"bin"`) is refused with its element's position, where it would
/// otherwise be dropped and the unit imported in stock without a bin.
#[tokio::test]
async fn a_json_import_refuses_a_field_its_kind_does_not_have() {
    let site = Site::start_stocked().await;
    let admin = admin_token(&site);
    let units = json!([
        {"epc": "J-1", "sku": "SKU-1", "state": "in_stock", "bin": "B-1"},
        {"epc": "J-2", "sku": "SKU-1", "state": "in_stock", "Bin": "B-1"},
        {"epc": "J-3", "sku": "SKU-1", "state": "in_stock", "bin": "B-1", "qty": 1, "note": "x"},
    ]);
    let (status, body) = put(
        &site,
        "/v1/admin/reference/units",
        Some(&admin),
        "application/json",
        units.to_string(),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["code"], "IMPORT_INVALID");
    assert_eq!(
        body["errors"],
        json!([
            {"line": 2, "message": "unknown field \"Bin\": the fields of units are epc, code, sku, state, bin, gtin, serial, lot, expiry"},
            {"line": 3, "message": "unknown fields \"note\", \"qty\": the fields of units are epc, code, sku, state, bin, gtin, serial, lot, expiry"},
        ]),
        "{body}"
    );
    assert_eq!(
        site.count("SELECT count(*) FROM units WHERE epc LIKE 'J-%'"),
        0
    );
    site.stop().await;
}

/// What a person sends by mistake as CSV is refused saying what it is:
/// JSON sent as `text/csv`, or a spreadsheet's file saved with `;` between
/// its fields (with its BOM and CRLF line ends, as Excel writes it). The
/// same file saved with commas imports.
#[tokio::test]
async fn a_body_sent_as_csv_that_is_not_comma_separated_says_what_it_is() {
    let site = Site::start().await;
    let admin = admin_token(&site);
    let path = "/v1/admin/reference/bins";
    let json_body = json!([{"bin": "A-1", "zone": "Z", "location": "L"}]).to_string();
    let (status, body) = put(&site, path, Some(&admin), "text/csv", json_body).await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["errors"][0]["line"], 1, "{body}");
    assert!(
        body["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("Content-Type: application/json"),
        "{body}"
    );
    let excel = "\u{feff}bin;zone;location\r\nA-1;Z;L\r\n";
    let (status, body) = put(&site, path, Some(&admin), "text/csv", excel).await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(
        body["errors"][0]["message"],
        "the header is separated by ';', not commas: save the file as CSV with commas \
         (bin,zone,location)",
        "{body}"
    );
    assert_eq!(site.count("SELECT count(*) FROM bins"), 0);
    let commas = "\u{feff}bin,zone,location\r\nA-1,Z,L\r\n";
    let (status, body) = put(&site, path, Some(&admin), "text/csv", commas).await;
    assert_eq!((status, body), (200, json!({"rows": 1, "changed": 1})));
    assert_eq!(site.count("SELECT count(*) FROM bins WHERE bin = 'A-1'"), 1);
    site.stop().await;
}

/// A file a spreadsheet saved as Windows-1252 (Excel's plain "CSV": "é"
/// is the byte 0xE9) is refused at the line of the first such byte,
/// saying the file is not UTF-8 and how to save it as UTF-8, as the
/// command line says it; nothing is imported. Saved as UTF-8, it imports.
#[tokio::test]
async fn a_csv_that_is_not_utf8_is_told_its_line_and_to_be_saved_as_utf8() {
    let site = Site::start().await;
    let admin = admin_token(&site);
    let path = "/v1/admin/reference/bins";
    let windows_1252 = b"bin,zone,location\r\nA-1,Z,L\r\nA-2,Entr\xe9e,L\r\n".to_vec();
    let (status, body) = put(&site, path, Some(&admin), "text/csv", windows_1252).await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["code"], "IMPORT_INVALID");
    assert_eq!(body["errors"].as_array().unwrap().len(), 1, "{body}");
    assert_eq!(body["errors"][0]["line"], 3, "{body}");
    let message = body["errors"][0]["message"].as_str().unwrap();
    assert!(
        message.starts_with("the file is not UTF-8: the \"zone\" field of this line"),
        "{message}"
    );
    assert!(
        message.contains("save the file as UTF-8 (in Excel, \"CSV UTF-8 (Comma delimited)\")"),
        "{message}"
    );
    assert_eq!(site.count("SELECT count(*) FROM bins"), 0);
    let utf8 = "bin,zone,location\r\nA-1,Z,L\r\nA-2,Entrée,L\r\n";
    let (status, body) = put(&site, path, Some(&admin), "text/csv", utf8).await;
    assert_eq!((status, body), (200, json!({"rows": 2, "changed": 2})));
    site.stop().await;
}

/// A name (or any text field) with a Unicode direction override or
/// isolate, which would show it reversed on a supervisor's screen, is
/// refused naming the field and the character, in CSV and in JSON alike.
#[tokio::test]
async fn a_name_with_a_direction_override_is_refused_naming_the_field_and_character() {
    let site = Site::start().await;
    let admin = admin_token(&site);
    let path = "/v1/admin/reference/operators";
    let csv = "badge,name\nOP-1,Ann Lee\nOP-2,\u{202E}eeL nnA\n";
    let (status, body) = put(&site, path, Some(&admin), "text/csv", csv).await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["errors"][0]["line"], 3, "{body}");
    assert!(
        body["errors"][0]["message"]
            .as_str()
            .unwrap()
            .starts_with("name must not contain U+202E"),
        "{body}"
    );
    let rows = json!([{"badge": "OP-3", "name": "Bo \u{2067}Chen\u{2069}"}]).to_string();
    let (status, body) = put(&site, path, Some(&admin), "application/json", rows).await;
    assert_eq!(status, 422, "{body}");
    assert!(
        body["errors"][0]["message"]
            .as_str()
            .unwrap()
            .starts_with("name must not contain U+2067"),
        "{body}"
    );
    assert_eq!(site.count("SELECT count(*) FROM operators"), 0);
    site.stop().await;
}

/// An operator's language goes in by the API as CSV or JSON, comes out in
/// the reference data, and what comes out goes back in unchanged; a
/// malformed tag is refused at its line, naming it, with nothing taken.
#[tokio::test]
async fn an_operators_language_goes_in_by_the_api_and_round_trips_through_the_reference_data() {
    let site = Site::start().await;
    let admin = admin_token(&site);
    let device = site.add_device("HH-1", true);
    let path = "/v1/admin/reference/operators";
    let csv = "badge,name,language\nOP-1,Anna Weber,de-DE\nOP-2,Cy Diaz,\n";
    let (status, body) = put(&site, path, Some(&admin), "text/csv", csv).await;
    assert_eq!((status, &body), (200, &json!({"rows": 2, "changed": 2})));
    let rows = json!([{"badge": "OP-3", "name": "Samir Haddad", "language": "ar"}]).to_string();
    let (status, body) = put(&site, path, Some(&admin), "application/json", rows).await;
    assert_eq!((status, &body), (200, &json!({"rows": 1, "changed": 1})));
    let (status, reference) = site.get("/v1/reference", &device).await;
    assert_eq!(status, 200);
    let operators = reference["operators"].clone();
    assert_eq!(
        operators,
        json!([
            {"badge": "OP-1", "name": "Anna Weber", "language": "de-DE"},
            {"badge": "OP-2", "name": "Cy Diaz"},
            {"badge": "OP-3", "name": "Samir Haddad", "language": "ar"}
        ])
    );
    // The reference data's rows are an import's JSON rows: put back, they
    // change nothing.
    let (status, body) = put(
        &site,
        path,
        Some(&admin),
        "application/json",
        operators.to_string(),
    )
    .await;
    assert_eq!((status, &body), (200, &json!({"rows": 3, "changed": 0})));
    let bad = "badge,name,language\nOP-4,Ewa Nowak,pl\nOP-5,Bo Chen,en_GB\n";
    let (status, body) = put(&site, path, Some(&admin), "text/csv", bad).await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["errors"][0]["line"], 3, "{body}");
    assert!(
        body["errors"][0]["message"]
            .as_str()
            .unwrap()
            .starts_with("language \"en_GB\" is not a BCP 47 language tag"),
        "{body}"
    );
    let bad = json!([{"badge": "OP-4", "name": "Ewa Nowak", "language": "polish!"}]).to_string();
    let (status, body) = put(&site, path, Some(&admin), "application/json", bad).await;
    assert_eq!(status, 422, "{body}");
    assert!(
        body["errors"][0]["message"]
            .as_str()
            .unwrap()
            .starts_with("language \"polish!\" is not a BCP 47 language tag"),
        "{body}"
    );
    assert_eq!(site.count("SELECT count(*) FROM operators"), 3);
    // The OpenAPI document says so for both shapes.
    let (status, text) = get_text(&site, "/v1/openapi.json", "").await;
    assert_eq!(status, 200);
    let spec: Value = serde_json::from_str(&text).unwrap();
    for schema in ["ImportOperator", "Operator"] {
        let shape = &spec["components"]["schemas"][schema];
        assert!(
            shape["properties"]["language"].is_object(),
            "{schema}: {shape}"
        );
        assert!(
            !shape["required"]
                .as_array()
                .unwrap()
                .contains(&json!("language")),
            "{schema}: {shape}"
        );
    }
    site.stop().await;
}

/// A method a path does not take is answered 405 with the methods it does
/// take in `Allow` and the API's error body, not an empty body a script
/// can only guess at; whatever the token, since the path is wrong for it.
#[tokio::test]
async fn a_method_a_path_does_not_take_is_405_with_allow_and_the_error_body() {
    use reqwest::Method;
    let site = Site::start().await;
    let admin = admin_token(&site);
    for (method, path, token, allow) in [
        (
            Method::GET,
            "/v1/admin/reference/bins",
            Some(admin.as_str()),
            &["PUT"][..],
        ),
        (Method::DELETE, "/v1/sync", None, &["POST"]),
        (
            Method::PUT,
            "/v1/admin/devices",
            Some(&admin),
            &["GET", "HEAD", "POST"],
        ),
        (Method::POST, "/v1/hops", Some(&admin), &["GET", "HEAD"]),
    ] {
        let (status, headers, body) = site.request(method.clone(), path, token).await;
        assert_eq!(status, 405, "{method} {path}: {body}");
        let mut allowed: Vec<&str> = headers
            .get("allow")
            .unwrap_or_else(|| panic!("{method} {path}: no Allow header"))
            .to_str()
            .unwrap()
            .split(',')
            .map(str::trim)
            .collect();
        allowed.sort_unstable();
        assert_eq!(allowed, allow, "{method} {path}");
        assert_eq!(
            headers["content-type"], "application/json",
            "{method} {path}"
        );
        assert_eq!(
            body["code"], "METHOD_NOT_ALLOWED",
            "{method} {path}: {body}"
        );
        assert_eq!(
            body["message"],
            format!("{path} does not take {method}: the Allow header lists the methods it takes"),
            "{body}"
        );
    }
    // The methods a path takes are answered as ever.
    let (status, _, body) = site
        .request(Method::GET, "/v1/admin/devices", Some(&admin))
        .await;
    assert_eq!((status, body), (200, json!([])));
    site.stop().await;
}

/// A count opened over the admin API on a place the site thinks empty
/// (none of its units new or in stock) opens all the same, as `count open`
/// does, and answers the warning the command line prints, with how many
/// units it expects; the OpenAPI document describes both.
#[tokio::test]
async fn a_count_of_a_place_the_site_thinks_empty_answers_the_command_lines_warning() {
    // Bins B-1…B-9 of Z-1; EPC-1 in stock in B-1, no unit in any other.
    let site = Site::start_stocked().await;
    site.import(
        "units",
        "epc,code,sku,state,bin\nEPC-1,,SKU-1,in_stock,B-1\n",
    );
    let admin = admin_token(&site);
    let open = |bin: &str| {
        post_json(
            &site,
            "/v1/admin/counts",
            Some(&admin),
            json!({"location": "L-1", "zone": "Z-1", "bin": bin}),
        )
    };

    let (status, body) = open("B-2").await;
    assert_eq!(status, 201, "{body}");
    let count_id = body["count_id"].as_str().unwrap().to_owned();
    assert_eq!(
        body,
        json!({
            "count_id": count_id,
            "expected": 0,
            "warning": format!(
                "L-1/Z-1/B-2 holds no units the site knows (none new or in stock): \
                 count {count_id} expects nothing, so every tag it sees will be unexpected"
            ),
        })
    );
    assert_eq!(
        site.count(&format!(
            "SELECT count(*) FROM counts WHERE count_id = '{count_id}' AND state = 'open'"
        )),
        1,
        "an empty place is counted all the same (strays are found so)"
    );
    let (status, body) = open("B-1").await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(
        (&body["expected"], &body["warning"]),
        (&json!(1), &Value::Null),
        "B-1 holds EPC-1: {body}"
    );

    let (status, text) = get_text(&site, "/v1/openapi.json", "").await;
    assert_eq!(status, 200);
    let raw: Value = serde_json::from_str(&text).unwrap();
    let answer = &raw["paths"]["/v1/admin/counts"]["post"]["responses"]["201"]["content"]
        ["application/json"]["schema"]["$ref"];
    let schema =
        &raw["components"]["schemas"][answer.as_str().unwrap().rsplit('/').next().unwrap()];
    for field in ["count_id", "expected", "warning"] {
        assert!(schema["properties"][field].is_object(), "{field}: {schema}");
    }
    site.stop().await;
}

/// A handheld reset (its storage cleared) comes back with a new session
/// while the ledger still holds its old one open: the open is refused
/// `SESSION_CONFLICT` until a supervisor closes the old session, and what
/// the old session still sends lands as for any closed session.
#[tokio::test]
async fn a_supervisor_closes_the_session_a_reset_handheld_left_open() {
    let site = Site::start_stocked().await;
    let admin = admin_token(&site);
    let mut hh = site.handheld("HH-RESET").await;
    let opened = hh.open("op-1");
    site.sync_applied(&hh, &[opened]).await;
    let old_session = hh.session.to_string();
    let late_scan = hh.scan("EPC-1", "B-1");

    // Storage lost: the same device, a new session, nothing of the old.
    let mut reset = hh.clone();
    reset.new_session();
    let refused = site.sync_ok(&reset, &[reset.clone().open("op-1")]).await;
    assert_eq!(refused[0]["code"], "SESSION_CONFLICT", "{refused:?}");

    let (status, listed) = site.get("/v1/site/status", &admin).await;
    assert_eq!(status, 200);
    let row = listed["devices"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["device_id"] == "HH-RESET")
        .unwrap();
    assert_eq!(row["open_session"]["session_id"], old_session.as_str());
    assert_eq!(row["open_session"]["operator_id"], "op-1");
    assert_eq!(row["open_session"]["mode"], "put_away");

    let close = "/v1/admin/devices/HH-RESET/close-session";
    let device_token = hh.token.clone();
    assert_eq!(
        post_json(&site, close, Some(&device_token), json!({}))
            .await
            .0,
        403
    );
    assert_eq!(post_json(&site, close, None, json!({})).await.0, 401);
    let (status, closed) = post_json(&site, close, Some(&admin), json!({})).await;
    assert_eq!(
        (status, closed["session_id"].as_str()),
        (200, Some(old_session.as_str())),
        "{closed}"
    );
    assert_eq!(
        site.count(&format!(
            "SELECT count(*) FROM sessions WHERE session_id = '{old_session}' AND state = 'closed'"
        )),
        1,
        "the ledger holds it closed"
    );
    let (status, again) = post_json(&site, close, Some(&admin), json!({})).await;
    assert_eq!(
        (status, again["code"].as_str()),
        (409, Some("NO_OPEN_SESSION"))
    );
    let (status, none) = post_json(
        &site,
        "/v1/admin/devices/NOPE/close-session",
        Some(&admin),
        json!({}),
    )
    .await;
    assert_eq!(
        (status, none["code"].as_str()),
        (404, Some("DEVICE_NOT_FOUND"))
    );

    // The device, set up again, opens its new session; the old session's
    // late scan (from another copy of its queue) still lands.
    let mut fresh = reset.clone();
    fresh.new_session();
    let reopened = fresh.open("op-1");
    site.sync_applied(&fresh, &[reopened]).await;
    site.sync_applied(&hh, &[late_scan]).await;
    let (_, status) = site.get("/v1/site/status", &admin).await;
    let row = status["devices"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["device_id"] == "HH-RESET")
        .unwrap()
        .clone();
    assert_eq!(
        row["open_session"]["session_id"],
        fresh.session.to_string().as_str()
    );
    site.stop().await;
}

/// A session the site closed refuses what its device captured after the
/// close (`session_closed`, no hop) and applies what it captured before
/// (offline work); the device's next heartbeat answer names the session,
/// so the handheld ends it on its screen.
#[tokio::test]
async fn a_session_the_site_closed_refuses_later_captures_and_applies_earlier_ones() {
    let site = Site::start_stocked().await;
    let admin = admin_token(&site);
    let mut hh = site.handheld("HH-SHUT").await;
    let opened = hh.open("op-1");
    site.sync_applied(&hh, &[opened]).await;
    let session = hh.session.to_string();
    // Captured offline a minute before the supervisor closes the session.
    let before = hh.item_at(
        "scan",
        json!({"mode": "put_away", "epc": "EPC-1", "bin": "B-1"}),
        UnixMs(now().0 - 60_000),
    );
    let close = "/v1/admin/devices/HH-SHUT/close-session";
    let (status, closed) = post_json(&site, close, Some(&admin), json!({})).await;
    assert_eq!(status, 200, "{closed}");
    // Captured a minute after it: the operator kept scanning.
    let after = hh.item_at(
        "scan",
        json!({"mode": "put_away", "epc": "EPC-2", "bin": "B-1"}),
        UnixMs(now().0 + 60_000),
    );
    let hops_before = site.count("SELECT count(*) FROM hops");
    let results = site.sync_ok(&hh, &[before, after]).await;
    assert_eq!(results[0]["outcome"], "applied", "{results:?}");
    assert_eq!(
        (
            results[1]["outcome"].as_str(),
            results[1]["reason"].as_str()
        ),
        (Some("rejected"), Some("session_closed")),
        "{results:?}"
    );
    assert_eq!(
        site.count("SELECT count(*) FROM hops") - hops_before,
        1,
        "one hop, for the scan captured before the close"
    );

    let beat = json!({
        "sent_at": now().to_string(),
        "queue_depth": 0,
        "app_version": "test",
    });
    let (status, told) = site
        .post_raw(
            "/v1/devices/HH-SHUT/heartbeat",
            Some(&hh.token),
            beat.to_string().into_bytes(),
        )
        .await;
    assert_eq!(status, 200, "{told}");
    assert_eq!(
        told["closed_sessions"][0]["session_id"],
        session.as_str(),
        "{told}"
    );
    assert!(
        told["closed_sessions"][0]["closed_at"].is_string(),
        "{told}"
    );

    // A session its device closed itself is not told as closed by the site.
    let mut other = site.handheld("HH-SELF").await;
    let opened = other.open("op-2");
    let closing = other.item("close_session", json!({}));
    site.sync_applied(&other, &[opened, closing]).await;
    let (_, told) = site
        .post_raw(
            "/v1/devices/HH-SELF/heartbeat",
            Some(&other.token),
            beat.to_string().into_bytes(),
        )
        .await;
    assert_eq!(told["closed_sessions"], json!([]), "{told}");
    site.stop().await;
}

/// The command line closes a device's open session the same way: the
/// ledger holds it closed, the device's next session opens, and a second
/// close says there is none.
#[tokio::test]
async fn the_command_line_closes_a_devices_open_session() {
    let site = Site::start_stocked().await;
    let mut hh = site.handheld("HH-CLI").await;
    let opened = hh.open("op-1");
    site.sync_applied(&hh, &[opened]).await;
    let session = hh.session.to_string();
    let close = |device: &str| {
        let data = site.data.clone();
        let device = device.to_owned();
        std::thread::spawn(move || {
            site_command(&data, &["device", "close-session", &device])
                .output()
                .unwrap()
        })
        .join()
        .unwrap()
    };
    let out = close("HH-CLI");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&session) && stderr.contains("put_away") && stderr.contains("op-1"),
        "{stderr}"
    );
    assert_eq!(
        site.count(&format!(
            "SELECT count(*) FROM sessions WHERE session_id = '{session}' AND state = 'closed'"
        )),
        1
    );
    let again = close("HH-CLI");
    assert!(!again.status.success());
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("HH-CLI has no session open"),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    assert!(!close("NOPE").status.success());
    hh.new_session();
    let reopened = hh.open("op-1");
    site.sync_applied(&hh, &[reopened]).await;
}

fn all_hop_keys(site: &Site) -> HashSet<String> {
    site.db
        .call_blocking(|conn| {
            conn.prepare("SELECT key FROM hops")?
                .query_map([], |row| row.get(0))?
                .collect::<stockhop_site::store::sql::Result<HashSet<String>>>()
        })
        .unwrap()
}

/// Pages the feed from `after` to its end; returns the keys and ids seen
/// and the cursor to resume from.
async fn page_to_end(
    site: &Site,
    admin: &str,
    mut after: String,
    limit: usize,
    seen: &mut Vec<(i64, String)>,
) -> String {
    loop {
        let (status, page) = site
            .get(&format!("/v1/hops?after={after}&limit={limit}"), admin)
            .await;
        assert_eq!(status, 200, "{page}");
        let hops = page["hops"].as_array().unwrap();
        for hop in hops {
            seen.push((
                hop["hop_id"].as_i64().unwrap(),
                hop["key"].as_str().unwrap().to_owned(),
            ));
        }
        after = page["next"].as_str().unwrap().to_owned();
        if hops.len() < limit {
            return after;
        }
    }
}

#[tokio::test]
async fn the_feed_pages_hops_with_their_facts_and_refuses_bad_requests() {
    let site = Site::start_stocked().await;
    let admin = admin_token(&site);
    let mut hh = site.handheld("HH-1").await;
    let open = hh.open("OP-7");
    let scans: Vec<Value> = (0..5)
        .map(|i| hh.scan(&format!("EPC-{i}"), "B-2"))
        .collect();
    site.sync_applied(&hh, &[vec![open], scans.clone()].concat())
        .await;

    let (status, page) = site.get("/v1/hops?limit=2", &admin).await;
    assert_eq!(status, 200);
    let first = &page["hops"][0];
    assert_eq!(first["key"], scans[0]["key"]);
    assert_eq!(first["kind"], "ZONE_CHANGE");
    assert_eq!(first["device_id"], "HH-1");
    assert_eq!(first["session_id"], hh.session.to_string());
    assert_eq!(first["client_seq"], 2);
    assert_eq!(first["operator_id"], "OP-7");
    assert_eq!(first["epc"], "EPC-0");
    assert_eq!(first["bin"], "B-2");
    assert!(
        first["occurred_at"].as_str().unwrap().ends_with('Z'),
        "{first}"
    );
    assert!(first["recorded_at"].is_string());
    let mut seen = Vec::new();
    let next = page_to_end(&site, &admin, String::new(), 2, &mut seen).await;
    assert_eq!(seen.len(), 5);
    let (_, empty) = site.get(&format!("/v1/hops?after={next}"), &admin).await;
    assert_eq!(
        (
            empty["hops"].as_array().unwrap().len(),
            empty["next"].as_str()
        ),
        (0, Some(next.as_str()))
    );
    // A cursor past the last hop (a reader resuming after the ledger was
    // restored from an older backup) is refused, naming the last hop, not
    // answered as caught up.
    let last: i64 = next.parse().unwrap();
    let (status, ahead) = site
        .get(&format!("/v1/hops?after={}", last + 1), &admin)
        .await;
    assert_eq!(
        (status, ahead["code"].as_str()),
        (409, Some("CURSOR_AHEAD")),
        "{ahead}"
    );
    assert!(
        ahead["message"]
            .as_str()
            .unwrap()
            .contains(&format!("past the last hop, {last}:")),
        "{ahead}"
    );

    for bad in [
        "/v1/hops?limit=0",
        "/v1/hops?limit=1001",
        "/v1/hops?after=-3",
        "/v1/hops?after=x",
    ] {
        assert_eq!(site.get(bad, &admin).await.0, 400, "{bad}");
    }
    let (_, body) = site.get("/v1/hops?after=abc", &admin).await;
    assert_eq!(
        body["message"],
        "after \"abc\" is not a cursor: give the `next` of the page before (a whole \
         number), or leave it out to start from the first hop",
        "{body}"
    );
    let (status, _) = get_text(&site, "/v1/hops", &hh.token).await;
    assert_eq!(status, 403);
    let (status, _) = get_text(&site, "/v1/hops", "nobody").await;
    assert_eq!(status, 401);
    site.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_reader_paging_while_eight_writers_sync_sees_every_hop_exactly_once() {
    const WRITERS: usize = 8;
    const REQUESTS: usize = 12;
    const SCANS: usize = 4;
    let site = std::sync::Arc::new(Site::start_stocked().await);
    let admin = admin_token(&site);
    let mut writers = Vec::new();
    for w in 0..WRITERS {
        let site = site.clone();
        let mut hh = site.handheld(&format!("HH-{w}")).await;
        writers.push(tokio::spawn(async move {
            let mut first = vec![hh.open(&format!("OP-{w}"))];
            for r in 0..REQUESTS {
                let mut items = std::mem::take(&mut first);
                for s in 0..SCANS {
                    let epc = format!("EPC-{}", w * 10 + s);
                    items.push(hh.scan(&epc, &format!("B-{}", 1 + (r + s) % 9)));
                }
                // A handheld resends a request answered 503 (under the same
                // keys, so it applies once), as PostgreSQL's serialization
                // conflicts among eight writers can answer.
                loop {
                    let (status, body) = site.sync(&hh, &items).await;
                    if status == 503 {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                    assert_eq!(status, 200, "{body}");
                    let results = body["results"].as_array().unwrap();
                    assert!(results.iter().all(|r| r["outcome"] == "applied"), "{body}");
                    break;
                }
            }
        }));
    }
    let mut seen = Vec::new();
    let mut after = String::new();
    while writers.iter().any(|w| !w.is_finished()) {
        after = page_to_end(&site, &admin, after, 7, &mut seen).await;
    }
    for writer in writers {
        writer.await.unwrap();
    }
    page_to_end(&site, &admin, after, 7, &mut seen).await;

    let ids: Vec<i64> = seen.iter().map(|(id, _)| *id).collect();
    assert!(
        ids.windows(2).all(|w| w[0] < w[1]),
        "pages come in commit order, each hop once"
    );
    let keys: HashSet<String> = seen.iter().map(|(_, key)| key.clone()).collect();
    assert_eq!(keys.len(), seen.len(), "no hop seen twice");
    assert_eq!(keys, all_hop_keys(&site), "every hop seen");
    assert_eq!(seen.len(), WRITERS * REQUESTS * SCANS);
}

/// `from=2026-12-03T00:00:00+01:00` typed into a URL reaches the site as
/// `… 01:00`: the refusal says why, not only that an offset is missing.
#[tokio::test]
async fn an_offset_whose_plus_became_a_space_is_refused_saying_so() {
    let site = Site::start().await;
    let admin = admin_token(&site);
    let (status, body) = get_text(
        &site,
        "/v1/hops.csv?from=2026-12-03T00:00:00+01:00&to=2026-12-04T00:00:00%2B01:00",
        &admin,
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("write an offset's + as %2B"), "{body}");
    let (status, body) = get_text(
        &site,
        "/v1/hops.csv?from=2026-12-03T00:00:00%2B01:00&to=2026-12-04T00:00:00%2B01:00",
        &admin,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    site.stop().await;
}

#[tokio::test]
async fn the_csv_export_holds_a_period_and_makes_formula_cells_inert() {
    let site = Site::start().await;
    let admin = admin_token(&site);
    site.import("bins", "bin,zone,location\n=SUM(1+1),Z-1,L-1\n+B,Z-1,L-1\n");
    site.import(
        "units",
        "epc,code,sku,state,bin\n@EPC,,SKU-1,new,\n-EPC,,SKU-1,new,\n",
    );
    let mut hh = site.handheld("HH-1").await;
    let open = hh.open("OP-1");
    let a = hh.scan("@EPC", "=SUM(1+1)");
    let b = hh.scan("-EPC", "+B");
    let before = UnixMs(now().0 - 1);
    site.sync_applied(&hh, &[open, a, b]).await;
    let after = UnixMs(now().0 + 1);

    let path = format!("/v1/hops.csv?from={before}&to={after}");
    let (status, text) = get_text(&site, &path, &admin).await;
    assert_eq!(status, 200, "{text}");
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let headers = reader.headers().unwrap().clone();
    let column = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 2, "{text}");
    assert_eq!(&rows[0][column("epc")], "'@EPC");
    assert_eq!(&rows[0][column("bin")], "'=SUM(1+1)");
    assert_eq!(&rows[1][column("epc")], "'-EPC");
    assert_eq!(&rows[1][column("bin")], "'+B");
    assert_eq!(&rows[0][column("operator_id")], "OP-1");
    for row in &rows {
        for cell in row {
            assert!(!cell.starts_with(['=', '+', '-', '@']), "{cell}");
        }
    }

    let (_, earlier) = get_text(
        &site,
        &format!(
            "/v1/hops.csv?from={}&to={before}",
            UnixMs(before.0 - 3_600_000)
        ),
        &admin,
    )
    .await;
    assert_eq!(earlier.lines().count(), 1, "only the header: {earlier}");
    assert_eq!(
        get_text(
            &site,
            &format!("/v1/hops.csv?from={after}&to={before}"),
            &admin
        )
        .await
        .0,
        400
    );
    assert_eq!(
        get_text(&site, "/v1/hops.csv?from=today&to=tomorrow", &admin)
            .await
            .0,
        400
    );
    // A period without its bounds is refused in the API's JSON, naming
    // what is missing.
    let (status, body) = get_text(&site, &format!("/v1/hops.csv?from={before}"), &admin).await;
    assert_eq!(status, 400, "{body}");
    let error: serde_json::Value = serde_json::from_str(&body).expect(&body);
    assert_eq!(error["code"], "MALFORMED_REQUEST", "{body}");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("to is required"),
        "{body}"
    );
    assert_eq!(get_text(&site, &path, &hh.token).await.0, 403);
    site.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_big_import_never_answers_a_sync_503_and_shows_all_at_once() {
    let rows = BIG_IMPORT_ROWS;
    let site = std::sync::Arc::new(Site::start_stocked().await);
    let admin = admin_token(&site);
    let mut hh = site.handheld("HH-1").await;
    let open = hh.open("OP-1");
    site.sync_applied(&hh, &[open]).await;
    let reader = Handheld::new("HH-R", site.add_device("HH-R", true));
    let (_, page) = site.get("/v1/reference?limit=1000", &reader.token).await;
    let mut cursor = page["cursor"].as_str().unwrap().to_owned();

    let import = {
        let site = site.clone();
        let admin = admin.clone();
        tokio::spawn(async move {
            put(
                &site,
                "/v1/admin/reference/bins",
                Some(&admin),
                "text/csv",
                bins_csv(0..rows),
            )
            .await
        })
    };
    let mut worst = Duration::ZERO;
    let mut syncs = 0;
    let mut partial_pages = 0;
    while !import.is_finished() {
        let scan = hh.scan(
            &format!("EPC-{}", syncs % 100),
            &format!("B-{}", 1 + syncs % 9),
        );
        let started = Instant::now();
        let (status, body) = site.sync(&hh, &[scan]).await;
        worst = worst.max(started.elapsed());
        assert_eq!(status, 200, "a sync during the import: {body}");
        syncs += 1;
        // A handheld reading reference changes meanwhile sees none of the
        // import's bins until it is all there.
        let (_, page) = site
            .get(
                &format!("/v1/reference?after={cursor}&limit=1000"),
                &reader.token,
            )
            .await;
        let big = page["bins"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|b| b["bin"].as_str().unwrap().starts_with("BIG-"))
            .count();
        if big > 0 && site.count("SELECT count(*) FROM imports") > 0 {
            partial_pages += 1;
        }
        if !page["more"].as_bool().unwrap() && big == 0 {
            cursor = page["cursor"].as_str().unwrap().to_owned();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let (status, body) = import.await.unwrap();
    assert_eq!(
        (status, body),
        (200, json!({"rows": rows, "changed": rows}))
    );
    assert_eq!(partial_pages, 0, "no page showed part of the import");
    assert!(
        syncs > 5,
        "the import ran long enough to sync beside it ({syncs} syncs)"
    );
    eprintln!("{syncs} syncs during a {rows}-row import, the slowest {worst:?}");
    assert_eq!(
        site.count("SELECT count(*) FROM bins WHERE bin LIKE 'BIG-%'"),
        rows as i64
    );
}

/// The site's binary run on `data`'s ledger (`--data`, and the test
/// backend's `--database`), with `args` before them.
fn site_command(data: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_stockhop-site"));
    command
        .args(args)
        .arg("--data")
        .arg(data)
        .args(backend::database_args(data));
    command
}

/// The binary's import of `rows` bins, to be killed.
fn spawn_import(dir: &Path, data: &Path, rows: usize) -> std::process::Child {
    spawn_import_telling(dir, data, rows, Stdio::null())
}

/// The binary's import of `rows` bins, its stderr to `stderr`.
fn spawn_import_telling(
    dir: &Path,
    data: &Path,
    rows: usize,
    stderr: Stdio,
) -> std::process::Child {
    let file = dir.join("big-bins.csv");
    std::fs::write(&file, bins_csv(0..rows)).unwrap();
    site_command(data, &["import", "bins", file.to_str().unwrap()])
        .env("RUST_LOG", "error")
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .unwrap()
}

/// The command line's import runs in a process of its own, beside the
/// serving site's writer: on SQLite its turns wait for that writer (they
/// take it at their start, as a sync does), never failing halfway when a
/// sync committed since the turn began to read.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_command_line_import_beside_syncing_handhelds_finishes_and_refuses_no_sync() {
    let rows = BIG_IMPORT_ROWS;
    let site = Site::start_stocked().await;
    let mut hh = site.handheld("HH-1").await;
    let open = hh.open("OP-1");
    site.sync_applied(&hh, &[open]).await;
    let dir = tempfile::tempdir().unwrap();
    let mut child = spawn_import_telling(dir.path(), &site.data, rows, Stdio::piped());
    let mut syncs = 0;
    let mut refused = Vec::new();
    while child.try_wait().unwrap().is_none() {
        let scan = hh.scan(
            &format!("EPC-{}", syncs % 100),
            &format!("B-{}", 1 + syncs % 9),
        );
        let (status, body) = site.sync(&hh, &[scan]).await;
        if status != 200 {
            refused.push((status, body));
        }
        syncs += 1;
    }
    let output = child.wait_with_output().unwrap();
    let told = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the import failed: {told}");
    assert_eq!(
        told.trim(),
        format!(
            "{}: {rows} rows, {rows} changed",
            dir.path().join("big-bins.csv").display()
        )
    );
    assert_eq!(refused, [], "syncs refused during the import");
    assert!(
        syncs > 5,
        "the import ran long enough to sync beside it ({syncs} syncs)"
    );
    assert_eq!(
        site.count("SELECT count(*) FROM bins WHERE bin LIKE 'BIG-%'"),
        rows as i64
    );
    assert_eq!(site.count("SELECT count(*) FROM imports"), 0);
    assert_eq!(site.count("SELECT count(*) FROM import_rows"), 0);
    site.stop().await;
}

/// `sql`'s answer read on a connection of its own, beside the site's.
fn scalar_apart(data: &Path, sql: &str) -> i64 {
    match backend::database_for(data) {
        // The blocking client runs its own runtime: on a thread of its own.
        Some(url) => {
            let sql = sql.to_owned();
            std::thread::spawn(move || {
                postgres::Client::connect(&url, postgres::NoTls)
                    .unwrap()
                    .query_one(&sql, &[])
                    .unwrap()
                    .get(0)
            })
            .join()
            .unwrap()
        }
        None => rusqlite::Connection::open(data.join(stockhop_site::store::db::DB_FILE))
            .unwrap()
            .query_row(sql, [], |row| row.get(0))
            .unwrap(),
    }
}

/// Polls `sql` until it answers `want` (or the import ends).
fn wait_for(data: &Path, sql: &str, want: impl Fn(i64) -> bool, child: &mut std::process::Child) {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if want(scalar_apart(data, sql)) {
            return;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the import ended before {sql} held"
        );
        assert!(Instant::now() < deadline, "{sql} never held");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn kill_9(child: &mut std::process::Child) {
    // SIGKILL: no destructor, no rollback by the process itself.
    child.kill().unwrap();
    child.wait().unwrap();
}

#[tokio::test]
async fn an_import_killed_while_staging_leaves_nothing_visible_and_is_swept() {
    let rows = KILLED_IMPORT_ROWS;
    let site = Site::start().await;
    let dir = tempfile::tempdir().unwrap();
    let mut child = spawn_import(dir.path(), &site.data, rows);
    wait_for(
        &site.data,
        "SELECT count(*) FROM import_rows",
        |n| n > 0,
        &mut child,
    );
    kill_9(&mut child);
    assert_eq!(
        site.count("SELECT count(*) FROM bins"),
        0,
        "nothing visible"
    );
    assert_eq!(
        site.count("SELECT count(*) FROM imports WHERE state = 'staging'"),
        1
    );

    let later = UnixMs(now().0 + ledger::import::IMPORT_LEASE_MS + 1);
    let db = site.db.clone();
    let settled = tokio::task::spawn_blocking(move || ledger::import::settle(&db, later));
    assert_eq!(settled.await.unwrap().unwrap(), 0);
    assert_eq!(site.count("SELECT count(*) FROM import_rows"), 0, "swept");
    assert_eq!(site.count("SELECT count(*) FROM imports"), 0);
    assert_eq!(site.count("SELECT count(*) FROM bins"), 0);
    site.stop().await;
}

#[tokio::test]
async fn an_import_killed_while_applying_shows_handhelds_nothing_until_it_is_finished() {
    let rows = KILLED_IMPORT_ROWS;
    let site = Site::start().await;
    let reader = site.add_device("HH-R", true);
    let dir = tempfile::tempdir().unwrap();
    let mut child = spawn_import(dir.path(), &site.data, rows);
    wait_for(
        &site.data,
        "SELECT count(*) FROM bins",
        |n| n > 0,
        &mut child,
    );
    kill_9(&mut child);
    let applied = site.count("SELECT count(*) FROM bins");
    assert!(
        applied < rows as i64,
        "killed part way: {applied} of {rows}"
    );
    let (_, page) = site.get("/v1/reference?limit=1000", &reader).await;
    assert_eq!(
        page["bins"].as_array().unwrap().len(),
        0,
        "a handheld sees none of it: {page}"
    );

    // The next import (or start) past the lease finishes it.
    let later = UnixMs(now().0 + ledger::import::IMPORT_LEASE_MS + 1);
    let db = site.db.clone();
    let settled = tokio::task::spawn_blocking(move || ledger::import::settle(&db, later));
    assert_eq!(settled.await.unwrap().unwrap(), 1);
    assert_eq!(site.count("SELECT count(*) FROM bins"), rows as i64);
    assert_eq!(site.count("SELECT count(*) FROM imports"), 0);
    let (_, page) = site.get("/v1/reference?limit=1000", &reader).await;
    assert_eq!(page["bins"].as_array().unwrap().len(), 1000);
    site.stop().await;
}

/// While an import run from the command line (a process of its own)
/// moves bins, a handheld reading from the start gets every bin once, where
/// it stood at the import's flip: no page shows a bin where the import
/// puts it before the import ends (a page is read in one snapshot: it
/// lists its changed rows, then reads each, and a turn committed between
/// the two showed the bin's new place), and none misses a bin the import
/// has already moved (it is read where the import kept it).
#[tokio::test]
async fn a_read_during_a_command_line_import_shows_every_bin_once_as_at_its_flip() {
    let rows = 20_000;
    let site = Site::start().await;
    let reader = site.add_device("HH-R", true);
    let dir = tempfile::tempdir().unwrap();
    let before = dir.path().join("before.csv");
    std::fs::write(&before, bins_csv(0..rows)).unwrap();
    let imported = site_command(&site.data, &["import", "bins", before.to_str().unwrap()])
        .env("RUST_LOG", "error")
        .status()
        .unwrap();
    assert!(imported.success());
    let moved = dir.path().join("moved.csv");
    std::fs::write(&moved, bins_csv(0..rows).replace(",L-1\n", ",L-2\n")).unwrap();
    let mut child = site_command(&site.data, &["import", "bins", moved.to_str().unwrap()])
        .env("RUST_LOG", "error")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let applying = || site.count("SELECT count(*) FROM imports WHERE state = 'applying'") > 0;
    let (mut reads, mut whole_reads_while_applying) = (0, 0);
    while child.try_wait().unwrap().is_none() {
        let mut cursor = String::from("0");
        let mut seen = std::collections::BTreeMap::new();
        let applying_throughout = applying();
        loop {
            let applying_before = applying();
            let (_, page) = site
                .get(&format!("/v1/reference?after={cursor}&limit=1000"), &reader)
                .await;
            let early = page["bins"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|bin| bin["location"] == "L-2")
                .count();
            if applying_before && applying() {
                assert_eq!(early, 0, "a page showed {early} bins moved mid-import");
            }
            for bin in page["bins"].as_array().unwrap() {
                *seen
                    .entry(bin["bin"].as_str().unwrap().to_owned())
                    .or_insert(0) += 1;
            }
            cursor = page["cursor"].as_str().unwrap().to_owned();
            if !page["more"].as_bool().unwrap() {
                break;
            }
        }
        if applying_throughout && applying() {
            // Read wholly while the import applied: every bin once, as it
            // stood at the flip, the ones already moved included.
            assert_eq!(
                seen.len(),
                rows,
                "a read from the start missed bins mid-import"
            );
            assert!(seen.values().all(|&n| n == 1), "a bin came twice");
            whole_reads_while_applying += 1;
        }
        reads += 1;
    }
    assert!(child.wait().unwrap().success());
    assert!(reads > 1, "the import ran long enough to read beside it");
    assert!(
        whole_reads_while_applying > 0,
        "a whole read ran while the import applied"
    );
    assert_eq!(
        site.count("SELECT count(*) FROM bins WHERE location = 'L-2'"),
        rows as i64
    );
    site.stop().await;
}

/// On PostgreSQL an import's apply turns of bins never wait for the
/// reference lock a sync holds to its commit; only the steps that decide
/// the import (its flip: every change number below it has committed) and
/// end it (shows it to handhelds) do, so no handheld pages past a change
/// number that commits later. SQLite has one writer: nothing to show
/// there.
#[tokio::test]
async fn an_import_applies_beside_a_sync_holding_the_reference_lock_and_ends_after_it() {
    let rows = 20_000;
    let site = Site::start().await;
    let Some(url) = backend::database_for(&site.data) else {
        site.stop().await;
        return;
    };
    let reader = site.add_device("HH-R", true);
    // A writer of reference rows (a sync moving a unit, say) that takes
    // the lock once the import has flipped, and does not commit.
    let (release, released) = std::sync::mpsc::channel::<()>();
    let (locked, is_locked) = std::sync::mpsc::channel::<i64>();
    let holder = std::thread::spawn(move || {
        let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
        while client
            .query("SELECT 1 FROM imports WHERE state = 'applying'", &[])
            .unwrap()
            .is_empty()
        {
            std::thread::sleep(Duration::from_millis(1));
        }
        let mut tx = client.transaction().unwrap();
        tx.execute(
            "SELECT 1 FROM reference_lock WHERE id = 1 FOR NO KEY UPDATE",
            &[],
        )
        .unwrap();
        let applying: i64 = tx
            .query_one("SELECT count(*) FROM imports", &[])
            .unwrap()
            .get(0);
        locked.send(applying).unwrap();
        released.recv().unwrap();
        tx.commit().unwrap();
    });

    let dir = tempfile::tempdir().unwrap();
    let mut child = spawn_import(dir.path(), &site.data, rows);
    assert_eq!(
        is_locked.recv().unwrap(),
        1,
        "the lock was taken while the import applied"
    );
    wait_for(
        &site.data,
        "SELECT count(*) FROM bins",
        |n| n == rows as i64,
        &mut child,
    );
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the import ended while a writer held the lock"
    );
    assert_eq!(
        site.count("SELECT count(*) FROM imports WHERE state = 'applying'"),
        1
    );
    let (_, page) = site.get("/v1/reference?limit=1000", &reader).await;
    assert_eq!(
        page["bins"].as_array().unwrap().len(),
        0,
        "a handheld sees none of it yet: {page}"
    );

    release.send(()).unwrap();
    holder.join().unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(site.count("SELECT count(*) FROM imports"), 0);
    let (_, page) = site.get("/v1/reference?limit=1000", &reader).await;
    assert_eq!(page["bins"].as_array().unwrap().len(), 1000);
    site.stop().await;
}

/// Every path the router routes under `/v1`, read from the `.route(…)`
/// calls in the site's source (a constant's value looked up where it is
/// defined, in the site or the core crate; only the site routes).
/// Every `.rs` file under `root`, one after another.
fn rust_files(root: std::path::PathBuf) -> String {
    let mut sources = Vec::new();
    let mut stack = vec![root];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                sources.push(std::fs::read_to_string(path).unwrap());
            }
        }
    }
    sources.join("\n")
}

fn routed_v1_paths() -> HashSet<String> {
    // The site's source, and the core crate's, where the wire paths live.
    let site = Path::new(env!("CARGO_MANIFEST_DIR"));
    let routing = rust_files(site.join("src"));
    let all = format!("{routing}\n{}", rust_files(site.join("../src")));
    let constant = |name: &str| -> String {
        let start = all
            .find(&format!("const {name}: &str = \""))
            .unwrap_or_else(|| panic!("no constant {name}"));
        let rest = &all[start..];
        let value = &rest[rest.find('"').unwrap() + 1..];
        value[..value.find('"').unwrap()].to_owned()
    };
    let mut paths = HashSet::new();
    for (at, _) in routing.match_indices(".route(") {
        let arg = routing[at + ".route(".len()..].trim_start();
        let path = if let Some(literal) = arg.strip_prefix('"') {
            literal[..literal.find('"').unwrap()].to_owned()
        } else {
            let end = arg
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .unwrap();
            constant(arg[..end].rsplit("::").next().unwrap())
        };
        // A catch-all (`/v1/{*rest}`, the 404 of a path the API does not
        // have) is no endpoint for the document to list.
        if path.starts_with("/v1/") && !path.contains("{*") {
            paths.insert(path);
        }
    }
    paths
}

#[tokio::test]
async fn the_openapi_document_lists_every_routed_v1_path_and_parses_as_openapi_3_1() {
    let site = Site::start().await;
    let response = site
        .client
        .get(format!("{}/v1/openapi.json", site.base))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let text = response.text().await.unwrap();
    let spec = oas3::from_json(&text).unwrap_or_else(|err| panic!("not OpenAPI 3.1: {err}"));
    assert!(spec.openapi.starts_with("3.1"), "{}", spec.openapi);
    let documented: HashSet<String> = spec.paths.as_ref().unwrap().keys().cloned().collect();
    // The import's one route is documented as a path a kind, each with its
    // own rows' schema.
    let routed: HashSet<String> = routed_v1_paths()
        .into_iter()
        .flat_map(|path| match path.as_str() {
            "/v1/admin/reference/{kind}" => {
                ["bins", "units", "grns", "manifests", "operators", "skus"]
                    .map(|kind| format!("/v1/admin/reference/{kind}"))
                    .to_vec()
            }
            _ => vec![path],
        })
        .collect();
    let missing: Vec<_> = routed.difference(&documented).collect();
    assert!(missing.is_empty(), "routed but not documented: {missing:?}");
    let extra: Vec<_> = documented.difference(&routed).collect();
    assert!(extra.is_empty(), "documented but not routed: {extra:?}");
    // Every operation has its own id, as the specification requires (a
    // client generator names its functions after them).
    let raw: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut ids = HashSet::new();
    for item in raw["paths"].as_object().unwrap().values() {
        for operation in item.as_object().unwrap().values() {
            if let Some(id) = operation["operationId"].as_str() {
                assert!(ids.insert(id.to_owned()), "operationId {id} is used twice");
            }
        }
    }
    // Every schema a reference names is in the document.
    fn refs<'a>(value: &'a serde_json::Value, found: &mut Vec<&'a str>) {
        match value {
            serde_json::Value::Object(map) => {
                for (key, value) in map {
                    match (key.as_str(), value.as_str()) {
                        ("$ref", Some(target)) => found.push(target),
                        _ => refs(value, found),
                    }
                }
            }
            serde_json::Value::Array(values) => values.iter().for_each(|value| refs(value, found)),
            _ => {}
        }
    }
    let mut found = Vec::new();
    refs(&raw, &mut found);
    for target in found {
        let name = target
            .strip_prefix("#/components/schemas/")
            .unwrap_or_else(|| panic!("a reference outside the schemas: {target}"));
        assert!(
            raw["components"]["schemas"][name].is_object(),
            "{target} is named but not in the document"
        );
    }
    // The series' span is a whole number of hours within its bounds.
    for path in ["/v1/site/series", "/v1/site/chart.svg"] {
        let params = raw["paths"][path]["get"]["parameters"].as_array().unwrap();
        let hours = params.iter().find(|p| p["name"] == "hours").unwrap();
        assert_eq!(hours["in"], "query", "{path}");
        let schema = &hours["schema"];
        assert!(
            schema["type"] == "integer" || schema["type"] == serde_json::json!(["integer", "null"]),
            "{path}: {schema}"
        );
        assert_eq!(schema["minimum"], 1, "{path}");
        assert_eq!(
            schema["maximum"],
            stockhop_site::view::history::MAX_SERIES_HOURS,
            "{path}"
        );
    }
    // A handheld's sync is described by its wire types, not left empty.
    let sync = &raw["paths"]["/v1/sync"]["post"];
    let schema = |at: &serde_json::Value| at["content"]["application/json"]["schema"].clone();
    assert_eq!(
        schema(&sync["requestBody"])["$ref"],
        "#/components/schemas/SyncRequest"
    );
    assert_eq!(
        schema(&sync["responses"]["200"])["$ref"],
        "#/components/schemas/SyncResponse"
    );
    let schemas = &raw["components"]["schemas"];
    for (name, fields) in [
        ("SyncRequest", &["device_id", "sent_at", "items"][..]),
        (
            "SyncItem",
            &[
                "key",
                "session_id",
                "client_seq",
                "command",
                "occurred_at",
                "queued_at",
                "body",
            ],
        ),
        ("SyncResponse", &["server_time", "results"]),
        (
            "ItemResult",
            &["key", "client_seq", "status", "outcome", "code", "hop_ids"],
        ),
        ("ScanBody", &["mode", "epc", "bin"]),
    ] {
        for field in fields {
            assert!(
                schemas[name]["properties"][field].is_object(),
                "{name}.{field}: {}",
                schemas[name]
            );
        }
    }
    // Answers still described as any JSON at all.
    let untyped: Vec<String> = raw["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(path, item)| {
            item.as_object()
                .unwrap()
                .iter()
                .filter(|(_, operation)| {
                    operation["responses"].as_object().is_some_and(|responses| {
                        responses.iter().any(|(status, response)| {
                            status.starts_with('2')
                                && schema(response).as_object().is_some_and(|s| s.is_empty())
                        })
                    })
                })
                .map(move |(method, _)| format!("{method} {path}"))
        })
        .collect();
    // Every refusal names its body: the error body, or an import's lines.
    let bare: Vec<String> = raw["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(path, item)| {
            item.as_object()
                .unwrap()
                .iter()
                .flat_map(move |(method, operation)| {
                    operation["responses"]
                        .as_object()
                        .into_iter()
                        .flatten()
                        .filter(|(status, response)| {
                            !status.starts_with('2')
                                && response["content"]["application/json"]["schema"].is_null()
                        })
                        .map(move |(status, _)| format!("{method} {path} {status}"))
                })
        })
        .collect();
    assert!(bare.is_empty(), "refusals without a body schema: {bare:?}");
    assert_eq!(
        schemas["ErrorBody"]["required"],
        json!(["code", "message"]),
        "{}",
        schemas["ErrorBody"]
    );
    eprintln!(
        "OpenAPI paths: {} documented, {} routed under /v1; answers still untyped: {untyped:?}",
        documented.len(),
        routed.len()
    );
    site.stop().await;
}

/// The document's schemas share one namespace: two types under one name
/// leave one of them described as the other (a sync item's `command` once
/// read as a command barcode's `{payload, action}`), which a client
/// generated from the document gets wrong. So every type the document
/// derives has a name of its own, and the admin endpoints say what a
/// device's token gets.
#[tokio::test]
async fn the_openapi_document_names_each_schema_once_and_describes_the_wire_as_sent() {
    let site = Path::new(env!("CARGO_MANIFEST_DIR"));
    let source = format!(
        "{}\n{}",
        rust_files(site.join("src")),
        rust_files(site.join("../src"))
    );
    let mut names: Vec<String> = Vec::new();
    let mut at = 0;
    while let Some(found) = source[at..].find("ToSchema") {
        let start = at + found;
        at = start + "ToSchema".len();
        let line_start = source[..start].rfind('\n').map_or(0, |i| i + 1);
        if !source[line_start..start].contains("derive(") {
            continue;
        }
        let rest = &source[at..];
        let item = ["struct ", "enum "]
            .iter()
            .filter_map(|keyword| rest.find(keyword).map(|i| i + keyword.len()))
            .min()
            .unwrap();
        let attributes = &rest[..item];
        let name = match attributes.find("schema(as = ") {
            Some(renamed) => &attributes[renamed + "schema(as = ".len()..],
            None => &rest[item..],
        };
        let end = name
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap();
        names.push(name[..end].rsplit("::").next().unwrap().to_owned());
    }
    let mut seen = HashSet::new();
    let twice: Vec<&String> = names.iter().filter(|name| !seen.insert(*name)).collect();
    assert!(names.len() > 20, "{names:?}");
    assert!(twice.is_empty(), "schemas named twice: {twice:?}");

    let server = Site::start().await;
    let (status, text) = get_text(&server, "/v1/openapi.json", "").await;
    assert_eq!(status, 200);
    let raw: serde_json::Value = serde_json::from_str(&text).unwrap();
    let schemas = &raw["components"]["schemas"];
    let resolve = |schema: &serde_json::Value| -> serde_json::Value {
        match schema["$ref"].as_str() {
            Some(target) => schemas[target.rsplit('/').next().unwrap()].clone(),
            None => schema.clone(),
        }
    };
    let command = resolve(&schemas["SyncItem"]["properties"]["command"]);
    let commands = command["enum"]
        .as_array()
        .unwrap_or_else(|| panic!("{command}"));
    for wire in [
        "open_session",
        "scan",
        "undo",
        "void",
        "close_session",
        "acknowledge",
    ] {
        assert!(commands.contains(&json!(wire)), "{wire}: {command}");
    }
    let barcode = resolve(&schemas["HandheldConstants"]["properties"]["commands"]["items"]);
    assert!(barcode["properties"]["payload"].is_object(), "{barcode}");
    let new_device = resolve(
        &raw["paths"]["/v1/admin/devices"]["post"]["requestBody"]["content"]["application/json"]
            ["schema"],
    );
    assert!(
        new_device["properties"]["commissioned"].is_object(),
        "{new_device}"
    );
    let open_count = resolve(
        &raw["paths"]["/v1/admin/counts"]["post"]["requestBody"]["content"]["application/json"]
            ["schema"],
    );
    assert!(open_count["properties"]["bin"].is_object(), "{open_count}");

    // An import's JSON body: an array of one kind's rows, each with the
    // importer's fields, at a path a kind (the one route's `{kind}`), so a
    // body's rows are those of the kind its path names and no other.
    let kinds = ["bins", "units", "grns", "manifests", "operators", "skus"];
    assert!(raw["paths"]["/v1/admin/reference/{kind}"].is_null());
    let arrays: Vec<Value> = kinds
        .iter()
        .map(|kind| {
            let import = &raw["paths"][format!("/v1/admin/reference/{kind}")]["put"];
            let array = &import["requestBody"]["content"]["application/json"]["schema"];
            assert_eq!(array["type"], "array", "{kind}: {import}");
            let row = resolve(&array["items"]);
            assert_eq!(row["additionalProperties"], json!(false), "{kind}: {row}");
            array.clone()
        })
        .collect();
    let fields: Vec<Vec<String>> = arrays
        .iter()
        .map(|array| {
            let row = resolve(&array["items"]);
            let mut fields: Vec<String> = row["properties"]
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect();
            fields.sort();
            fields
        })
        .collect();
    assert_eq!(
        fields,
        [
            vec!["bin", "location", "zone"],
            vec!["bin", "code", "epc", "expiry", "gtin", "lot", "serial", "sku", "state"],
            vec!["expected", "grn", "qc", "sku"],
            vec!["epc", "manifest", "sscc", "state"],
            vec!["badge", "language", "name"],
            vec!["gtin", "sku"],
        ]
    );
    let operator = resolve(&arrays[4]["items"]);
    assert_eq!(operator["required"], json!(["badge", "name"]), "{operator}");
    let unit = resolve(&arrays[1]["items"]);
    assert_eq!(
        unit["properties"]["state"]["enum"],
        json!(["new", "in_stock", "dispatched", "missing"])
    );
    assert_eq!(unit["required"], json!(["epc", "sku", "state"]), "{unit}");
    for (path, most) in [("/v1/reference", 2000), ("/v1/hops", 1000)] {
        let limit = raw["paths"][path]["get"]["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|parameter| parameter["name"] == "limit")
            .unwrap()
            .clone();
        assert_eq!(
            (&limit["schema"]["minimum"], &limit["schema"]["maximum"]),
            (&json!(1), &json!(most)),
            "{path}: {limit}"
        );
    }
    let hop = &schemas["FeedHop"]["properties"];
    assert!(
        hop["kind"]["enum"]
            .as_array()
            .is_some_and(|kinds| kinds.contains(&json!("ZONE_CHANGE")) && kinds.len() == 8),
        "{hop}"
    );
    assert_eq!(
        hop["source_mode"]["enum"],
        json!(["live", "sim", "terminal"])
    );
    let counts = &raw["paths"]["/v1/admin/counts"]["post"]["responses"];
    for status in ["400", "415", "422"] {
        assert!(
            counts[status].is_object(),
            "counts do not list {status}: {counts}"
        );
    }

    for (path, item) in raw["paths"].as_object().unwrap() {
        if !(path.starts_with("/v1/admin/") || path.starts_with("/v1/hops")) {
            continue;
        }
        for (method, operation) in item.as_object().unwrap() {
            assert!(
                operation["responses"]["403"].is_object(),
                "{method} {path} does not say a device's token is refused"
            );
        }
    }
    server.stop().await;
}

/// An import's turn commits without waiting on the disk while it holds
/// the writer; the writer is back to flushing every commit after it, even
/// after a turn that panicked, and the importer's flush of the log works.
#[test]
fn an_import_turn_runs_unflushed_and_leaves_the_writer_flushing_every_commit() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite");
    let mut conn = stockhop_site::store::sql::Connection::Sqlite(
        stockhop_site::store::db::open_connection(&path).unwrap(),
    );
    // SQLite's synchronous levels: 1 NORMAL, 2 FULL.
    let level = |conn: &stockhop_site::store::sql::Connection| -> i64 {
        conn.as_sqlite()
            .unwrap()
            .pragma_query_value(None, "synchronous", |row| row.get(0))
            .unwrap()
    };
    assert_eq!(level(&conn), 2);
    let during = stockhop_site::store::checkpoint::unflushed(&mut conn, |conn| {
        conn.as_sqlite()
            .unwrap()
            .execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1)")
            .unwrap();
        level(conn)
    });
    assert_eq!((during, level(&conn)), (1, 2));
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        stockhop_site::store::checkpoint::unflushed(&mut conn, |_| panic!("a turn failed"))
    }));
    assert!(panicked.is_err());
    assert_eq!(level(&conn), 2, "FULL again after a panic");
    stockhop_site::store::checkpoint::flush_log(&path).unwrap();
    // A file without a log has nothing to flush.
    stockhop_site::store::checkpoint::flush_log(&dir.path().join("none.sqlite")).unwrap();
}

/// A `/v1` path the API does not have is 404 in the API's error body,
/// pointing at the document of the paths it has; the paths it has, and a
/// method one of them does not take, are answered as before.
#[tokio::test]
async fn a_v1_path_the_api_does_not_have_is_404_with_the_error_body() {
    use reqwest::Method;
    let site = Site::start().await;
    let admin = admin_token(&site);
    for (method, path) in [
        (Method::GET, "/v1/nonexistent"),
        (Method::GET, "/v1/admin/referance/bins"),
        (Method::POST, "/v1/hops/extra/segments"),
    ] {
        let (status, _, body) = site.request(method.clone(), path, Some(&admin)).await;
        assert_eq!(status, 404, "{method} {path}: {body}");
        assert_eq!(body["code"], "NOT_FOUND", "{method} {path}: {body}");
        let message = body["message"].as_str().unwrap();
        assert!(
            message.contains(path) && message.contains("/v1/openapi.json"),
            "{message}"
        );
    }
    let (status, _, _) = site.request(Method::GET, "/v1/openapi.json", None).await;
    assert_eq!(status, 200);
    let (status, _, body) = site.request(Method::GET, "/v1/hops", Some(&admin)).await;
    assert_eq!(status, 200, "{body}");
    let (status, _, _) = site.request(Method::DELETE, "/v1/sync", None).await;
    assert_eq!(status, 405);
    site.stop().await;
}

/// A command's body that does not fit is told in words: which field and
/// what is wrong with it, or what to send instead; nothing happens.
#[tokio::test]
async fn a_command_body_that_does_not_fit_says_which_field_or_what_to_send() {
    let site = Site::start_stocked().await;
    let admin = admin_token(&site);
    let counts = "/v1/admin/counts";
    let said =
        |(status, body): (u16, Value)| (status, body["message"].as_str().unwrap().to_owned());
    let (status, message) =
        said(post_json(&site, counts, Some(&admin), json!({"location": "L-1"})).await);
    assert_eq!(status, 422);
    assert!(
        message.starts_with("the body does not fit: missing field `zone`"),
        "{message}"
    );
    let (status, message) = said(
        post_json(
            &site,
            counts,
            Some(&admin),
            json!({"location": 1, "zone": "Z-1"}),
        )
        .await,
    );
    assert_eq!(status, 422);
    assert!(
        message.starts_with("the body does not fit: location: invalid type: integer `1`"),
        "{message}"
    );
    let (status, message) = said(
        site.post_raw(counts, Some(&admin), b"location=L-1&zone=Z-1".to_vec())
            .await,
    );
    assert_eq!(status, 400);
    assert!(message.starts_with("the body is not JSON: "), "{message}");
    let response = site
        .client
        .post(format!("{}{counts}", site.base))
        .bearer_auth(&admin)
        .header("content-type", "text/plain")
        .body(json!({"location": "L-1", "zone": "Z-1"}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 415);
    let body: Value = response.json().await.unwrap();
    assert_eq!(
        (body["code"].as_str(), body["message"].as_str()),
        (
            Some("MALFORMED_REQUEST"),
            Some("send the body as JSON, with Content-Type: application/json")
        )
    );
    assert_eq!(
        site.count("SELECT count(*) FROM counts"),
        0,
        "nothing opened"
    );
    site.stop().await;
}

/// `GET /v1/admin/imports` says how far an import is (one a client gave
/// up waiting for goes on), and lists nothing once it has ended.
#[tokio::test]
async fn the_imports_under_way_are_listed_with_how_far_each_is() {
    let site = Site::start().await;
    let admin = admin_token(&site);
    let (status, listed) = site.get("/v1/admin/imports", &admin).await;
    assert_eq!((status, &listed), (200, &json!([])));
    let dir = tempfile::tempdir().unwrap();
    let mut child = spawn_import(dir.path(), &site.data, BIG_IMPORT_ROWS);
    let mut seen = Vec::new();
    while child.try_wait().unwrap().is_none() {
        let (status, listed) = site.get("/v1/admin/imports", &admin).await;
        assert_eq!(status, 200, "{listed}");
        if let Some(import) = listed.as_array().unwrap().first() {
            assert_eq!(import["kind"], "bins", "{import}");
            assert!(
                import["source"].as_str().unwrap().ends_with("big-bins.csv"),
                "{import}"
            );
            let rows = import["rows"].as_u64().unwrap();
            let applied = import["applied"].as_u64().unwrap();
            assert!(
                applied <= rows && rows <= BIG_IMPORT_ROWS as u64,
                "{import}"
            );
            if import["state"] == "applying" {
                assert_eq!(rows, BIG_IMPORT_ROWS as u64, "{import}");
            }
            seen.push(import["state"].as_str().unwrap().to_owned());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(child.wait().unwrap().success());
    assert!(!seen.is_empty(), "the import was listed while it ran");
    let (_, listed) = site.get("/v1/admin/imports", &admin).await;
    assert_eq!(listed, json!([]));
    site.stop().await;
}
