//! Real labels at the site: `stockhop-site label read` on published GS1
//! examples and malformed ones, the site's separator substitute, the GS1
//! keys of units and SKUs through the import, the API and the reference
//! pages, the unit a label names (`GET /v1/units?label=`), dispatch verify
//! of a pallet by its SSCC and receive of a GS1 unit label.

use crate::backend;
use crate::ledger_common;

use std::path::Path;
use std::process::{Command, Output};

use ledger_common::{Handheld, Site};
use serde_json::{json, Value};

/// GS1's published example GTIN, and another of the same company.
const GTIN: &str = "09521101530001";
const GTIN_2: &str = "09521101530018";
/// The EPC Tag Data Standard's SGTIN-96 example (0614141.812345.6789)
/// and the GTIN and serial it encodes.
const SGTIN_EPC: &str = "3074257BF7194E4000001A85";
const SGTIN_GTIN: &str = "80614141123458";
/// GS1's published example SSCC, and another.
const SSCC: &str = "106141412345678908";
const SSCC_2: &str = "095211015300000018";

/// `stockhop-site label ARGS`, without a site unless `data` names one.
fn label(args: &[&str], data: Option<&Path>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_stockhop-site"));
    command
        .arg("label")
        .args(args)
        .env_remove("STOCKHOP_DATA")
        .env("RUST_LOG", "warn");
    if let Some(data) = data {
        command
            .arg("--data")
            .arg(data)
            .args(backend::database_args(data));
    }
    command.output().unwrap()
}

/// `label read TEXT`: its exit code and its standard output as JSON.
fn read(text: &str, data: Option<&Path>) -> (i32, Value) {
    let out = label(&["read", text], data);
    let stdout = String::from_utf8(out.stdout).unwrap();
    let json = serde_json::from_str(&stdout)
        .unwrap_or_else(|err| panic!("{text:?} printed {stdout:?}: {err}"));
    (out.status.code().unwrap(), json)
}

/// Imports CSV `text` as `kind` with the binary: whether it succeeded,
/// and its standard error.
fn import(data: &Path, kind: &str, text: &str) -> (bool, String) {
    let file = data.with_extension(format!("{kind}.csv"));
    std::fs::write(&file, text).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_stockhop-site"))
        .args(["import", kind, file.to_str().unwrap(), "--data"])
        .arg(data)
        .args(backend::database_args(data))
        .env("RUST_LOG", "warn")
        .output()
        .unwrap();
    (out.status.success(), String::from_utf8(out.stderr).unwrap())
}

#[test]
fn label_read_prints_what_published_labels_say() {
    let cases = [
        // GS1-128 with its symbology identifier; (10) ends the label.
        (
            "]C101095211015300011721011910AB-123",
            json!({"kind": "gs1", "elements": [
                {"ai": "01", "value": GTIN}, {"ai": "17", "value": "210119"},
                {"ai": "10", "value": "AB-123"}],
                "gtin": GTIN, "lot": "AB-123", "expiry": "2021-01-19"}),
        ),
        // The bracketed human form of a pallet label.
        (
            "(00)106141412345678908",
            json!({"kind": "gs1", "elements": [{"ai": "00", "value": SSCC}], "sscc": SSCC}),
        ),
        // A DataMatrix with ASCII 29, and a wedge's `~` for it.
        (
            "]d2010952110153000121SN-1\u{1d}10LOT-9",
            json!({"kind": "gs1", "elements": [
                {"ai": "01", "value": GTIN}, {"ai": "21", "value": "SN-1"},
                {"ai": "10", "value": "LOT-9"}],
                "gtin": GTIN, "serial": "SN-1", "lot": "LOT-9"}),
        ),
        (
            "]C1010952110153000121SN-1~10LOT-9",
            json!({"kind": "gs1", "elements": [
                {"ai": "01", "value": GTIN}, {"ai": "21", "value": "SN-1"},
                {"ai": "10", "value": "LOT-9"}],
                "gtin": GTIN, "serial": "SN-1", "lot": "LOT-9"}),
        ),
        // A Digital Link on any host, its GTIN-13 padded to 14 digits.
        (
            "https://example.com/01/9506000134352/10/ABC123?17=261231",
            json!({"kind": "digital_link", "elements": [
                {"ai": "01", "value": "09506000134352"}, {"ai": "10", "value": "ABC123"},
                {"ai": "17", "value": "261231"}],
                "gtin": "09506000134352", "lot": "ABC123", "expiry": "2026-12-31"}),
        ),
        // RFID: an SGTIN-96 and an SSCC-96.
        (
            SGTIN_EPC,
            json!({"kind": "epc", "elements": [
                {"ai": "01", "value": SGTIN_GTIN}, {"ai": "21", "value": "6789"}],
                "gtin": SGTIN_GTIN, "serial": "6789"}),
        ),
        (
            "3174257BF4499602D2000000",
            json!({"kind": "epc", "elements": [{"ai": "00", "value": SSCC}], "sscc": SSCC}),
        ),
        // A bin label is plain text.
        ("B-12-03", json!({"kind": "plain", "elements": []})),
    ];
    for (text, expected) in cases {
        assert_eq!(read(text, None), (0, expected), "{text:?}");
    }
}

#[test]
fn label_read_refuses_a_malformed_label_naming_the_ai_and_exits_1() {
    let cases = [
        (
            "(01)09521101530002",
            json!({"error": "label_check_digit", "ai": "01",
                   "message": "the check digit of (01) 09521101530002 should be 1"}),
        ),
        (
            "(17)211301",
            json!({"error": "label_bad_date", "ai": "17",
                   "message": "(17) 211301 is not a date: there is no month 13"}),
        ),
        (
            "(89)12",
            json!({"error": "label_unknown_ai", "ai": "89",
                   "message": "(89) is not an application identifier stockhop reads"}),
        ),
        (
            "(21)123456789012345678901",
            json!({"error": "label_too_long", "ai": "21",
                   "message": "(21) holds at most 20 characters, not 21"}),
        ),
        (
            "]C101095211015300",
            json!({"error": "label_malformed", "ai": "01",
                   "message": "(01) takes 14 digits, not 12"}),
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(read(text, None), (1, expected), "{text:?}");
    }
}

#[test]
fn label_read_on_a_site_names_the_unit_and_reads_the_sites_separator() {
    let dir = tempfile::tempdir().unwrap();
    let data = backend::new_site(dir.path());
    let (ok, stderr) = import(
        &data,
        "units",
        &format!(
            "epc,code,sku,state,bin,gtin,serial,lot,expiry\n\
             U-GS1,,SKU-1,new,,{GTIN},SN-1,LOT-9,2027-12-31\n"
        ),
    );
    assert!(ok, "{stderr}");
    let (code, said) = read(&format!("(01){GTIN}(21)SN-1"), Some(&data));
    assert_eq!(code, 0, "{said}");
    assert_eq!(
        said["unit"],
        json!({"epc": "U-GS1", "code": null, "sku": "SKU-1", "state": "new", "bin": null,
               "version": 1, "gtin": GTIN, "serial": "SN-1", "lot": "LOT-9",
               "expiry": "2027-12-31"})
    );
    // A label of a unit the site does not know says so by saying none.
    let (code, said) = read(&format!("(01){GTIN}(21)SN-2"), Some(&data));
    assert_eq!((code, said.get("unit")), (0, None), "{said}");

    // `#` is no separator until the site says so.
    let wedge = format!("]C101{GTIN}21SN-1#10LOT-9");
    let (code, said) = read(&wedge, Some(&data));
    assert_eq!(
        (code, &said["error"]),
        (1, &json!("label_malformed")),
        "{said}"
    );
    let out = label(&["separator"], Some(&data));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "~\n");
    let out = label(&["separator", "#"], Some(&data));
    assert!(out.status.success());
    let (code, said) = read(&wedge, Some(&data));
    assert_eq!(code, 0, "{said}");
    assert_eq!(
        (&said["serial"], &said["lot"]),
        (&json!("SN-1"), &json!("LOT-9"))
    );
    assert_eq!(said["unit"]["epc"], "U-GS1");
    // A character a GS1 value may hold cannot stand for the separator.
    let out = label(&["separator", "-"], Some(&data));
    assert!(!out.status.success());
    assert!(String::from_utf8(out.stderr)
        .unwrap()
        .contains("'-' can be part of a label's value"),);
}

#[test]
fn units_import_their_gs1_keys_and_an_sgtin_epc_gives_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let data = backend::new_site(dir.path());
    // A file without the GS1 columns imports as before; an SGTIN EPC's
    // GTIN and serial are derived.
    let (ok, stderr) = import(
        &data,
        "units",
        &format!("epc,code,sku,state,bin\n{SGTIN_EPC},,SKU-1,new,\nU-1,,SKU-1,new,\n"),
    );
    assert!(ok, "{stderr}");
    let keys = |epc: &str| {
        backend::open_db(&data)
            .call_blocking(|conn| {
                conn.query_row(
                    "SELECT gtin, serial, lot, expiry FROM units WHERE epc = ?1",
                    [epc],
                    |row| {
                        Ok([row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?]
                            as [Option<String>; 4])
                    },
                )
            })
            .unwrap()
    };
    assert_eq!(
        keys(SGTIN_EPC),
        [Some(SGTIN_GTIN.into()), Some("6789".into()), None, None]
    );
    assert_eq!(keys("U-1"), [None, None, None, None]);
    // The GS1 columns give all four; a GTIN-13 is kept as 14 digits.
    let (ok, stderr) = import(
        &data,
        "units",
        &format!(
            "epc,code,sku,state,bin,gtin,serial,lot,expiry\n\
             U-1,,SKU-1,new,,9521101530001,SN-1,LOT-9,2027-12-31\n\
             {SGTIN_EPC},,SKU-1,new,,{SGTIN_GTIN},6789,L-2,\n"
        ),
    );
    assert!(ok, "{stderr}");
    assert!(stderr.contains("2 rows, 2 changed"), "{stderr}");
    assert_eq!(
        keys("U-1"),
        [
            Some(GTIN.into()),
            Some("SN-1".into()),
            Some("LOT-9".into()),
            Some("2027-12-31".into())
        ]
    );
    assert_eq!(keys(SGTIN_EPC)[2].as_deref(), Some("L-2"));

    // Each bad line is told with its reason, and nothing is imported.
    let header = "epc,code,sku,state,bin,gtin,serial,lot,expiry\n";
    let cases = [
        (
            format!("{SGTIN_EPC},,SKU-1,new,,{GTIN},6789,,\n"),
            format!(":2: gtin {GTIN} differs from {SGTIN_GTIN}, the gtin epc {SGTIN_EPC} encodes"),
        ),
        (
            format!("{SGTIN_EPC},,SKU-1,new,,,6790,,\n"),
            format!(
                ":2: serial \"6790\" differs from \"6789\", the serial epc {SGTIN_EPC} encodes"
            ),
        ),
        (
            "U-2,,SKU-1,new,,09521101530002,SN-2,,\n".to_owned(),
            ":2: the check digit of gtin 09521101530002 should be 1".to_owned(),
        ),
        (
            format!("U-2,,SKU-1,new,,{GTIN},,,\n"),
            ":2: gtin and serial go together".to_owned(),
        ),
        (
            format!("U-2,,SKU-1,new,,{GTIN},SN-2,,2027-02-30\n"),
            ":2: expiry \"2027-02-30\" is not a date written YYYY-MM-DD".to_owned(),
        ),
        (
            format!("U-2,,SKU-1,new,,{GTIN},SN 2,,\n"),
            ":2: serial \"SN 2\": (21) may not hold a space".to_owned(),
        ),
        (
            format!("U-2,,SKU-1,new,,{GTIN},SN-1,,\n"),
            format!(":2: gtin {GTIN} with serial \"SN-1\" belongs to unit U-1"),
        ),
        (
            format!("U-2,,SKU-1,new,,{GTIN},SN-2,,\nU-3,,SKU-1,new,,{GTIN},SN-2,,\n"),
            format!(":3: gtin {GTIN} with serial \"SN-2\" is already on line 2"),
        ),
    ];
    for (rows, reason) in cases {
        let (ok, stderr) = import(&data, "units", &format!("{header}{rows}"));
        assert!(!ok, "{rows}");
        assert!(stderr.contains(&reason), "expected {reason}, got {stderr}");
    }
    let count = backend::open_db(&data)
        .call_blocking(|conn| {
            conn.query_row("SELECT count(*) FROM units", [], |row| row.get::<_, i64>(0))
        })
        .unwrap();
    assert_eq!(count, 2);
}

/// A site with bins, GS1 units, SKUs with GTINs, a GRN and a manifest
/// with two pallets: units P-1 and P-2 on pallet [`SSCC`], P-3 on
/// [`SSCC_2`], P-4 on none.
async fn gs1_site() -> Site {
    let site = Site::start().await;
    site.import("bins", "bin,zone,location\nA-1,Z-A,L-1\n");
    site.import(
        "units",
        &format!(
            "epc,code,sku,state,bin,gtin,serial,lot,expiry\n\
             U-1,,SKU-1,in_stock,A-1,{GTIN},SN-1,LOT-9,2027-12-31\n\
             {SGTIN_EPC},,SKU-2,in_stock,A-1,,,,\n\
             P-1,,SKU-1,in_stock,A-1,,,,\nP-2,,SKU-1,in_stock,A-1,,,,\n\
             P-3,,SKU-1,in_stock,A-1,,,,\nP-4,,SKU-1,in_stock,A-1,,,,\n"
        ),
    );
    site.import("skus", &format!("sku,gtin\nSKU-1,{GTIN}\nSKU-9,{GTIN_2}\n"));
    site.import("grns", "grn,qc,sku,expected\nG-1,accepted,SKU-9,2\n");
    site.import(
        "manifests",
        &format!(
            "manifest,state,epc,sscc\nM-1,packing,P-1,{SSCC}\nM-1,packing,P-2,{SSCC}\n\
             M-1,packing,P-3,{SSCC_2}\nM-1,packing,P-4,\n"
        ),
    );
    site
}

/// `GET /v1/units?label=TEXT`: the status and body.
async fn unit_by_label(site: &Site, hh: &Handheld, text: &str) -> (u16, Value) {
    let response = site
        .client
        .get(format!("{}/v1/units", site.base))
        .query(&[("label", text)])
        .bearer_auth(&hh.token)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

#[tokio::test]
async fn the_reference_pages_carry_gs1_keys_skus_and_the_separator() {
    let site = gs1_site().await;
    let hh = site.handheld("HH-1").await;
    let (status, page) = site.get("/v1/reference", &hh.token).await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(page["gs1_separator"], "~");
    let mut skus = page["skus"].as_array().unwrap().clone();
    skus.sort_by_key(|sku| sku["sku"].to_string());
    assert_eq!(
        skus,
        [
            json!({"sku": "SKU-1", "gtin": GTIN}),
            json!({"sku": "SKU-9", "gtin": GTIN_2})
        ]
    );
    let unit = page["units"]
        .as_array()
        .unwrap()
        .iter()
        .find(|unit| unit["epc"] == "U-1")
        .unwrap();
    assert_eq!(
        (
            &unit["gtin"],
            &unit["serial"],
            &unit["lot"],
            &unit["expiry"]
        ),
        (
            &json!(GTIN),
            &json!("SN-1"),
            &json!("LOT-9"),
            &json!("2027-12-31")
        )
    );
    let (status, one) = site.get("/v1/units/U-1", &hh.token).await;
    assert_eq!(status, 200);
    assert_eq!(&one, unit);
    // A SKU import that changes nothing adds nothing to the next page;
    // one that gives a SKU a GTIN another SKU has is refused.
    let cursor = page["cursor"].as_str().unwrap().to_owned();
    site.import("skus", &format!("sku,gtin\nSKU-1,{GTIN}\n"));
    let (_, next) = site
        .get(&format!("/v1/reference?after={cursor}"), &hh.token)
        .await;
    assert_eq!(next["skus"], json!([]), "{next}");
    let refused = site
        .try_import("skus", &format!("sku,gtin\nSKU-2,{GTIN}\n"))
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains(&format!(":2: gtin {GTIN} belongs to sku \"SKU-1\"")),
        "{refused}"
    );
}

#[tokio::test]
async fn skus_are_put_through_the_admin_api_like_other_reference_data() {
    let site = Site::start().await;
    let admin = site
        .db
        .call_blocking(|conn| stockhop_site::view::admin::add(conn, "ops", ledger_common::now()))
        .unwrap();
    let put = |body: Value| {
        site.client
            .put(format!("{}/v1/admin/reference/skus", site.base))
            .bearer_auth(&admin)
            .json(&body)
            .send()
    };
    let response = put(json!([{"sku": "SKU-1", "gtin": "9521101530001"}]))
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.json::<Value>().await.unwrap(),
        json!({"rows": 1, "changed": 1})
    );
    assert_eq!(
        site.count(&format!(
            "SELECT count(*) FROM skus WHERE sku = 'SKU-1' AND gtin = '{GTIN}'"
        )),
        1
    );
    let response = put(json!([{"sku": "SKU-2", "gtin": "09521101530002"}]))
        .await
        .unwrap();
    assert_eq!(response.status(), 422);
    let refused: Value = response.json().await.unwrap();
    assert_eq!(
        refused["errors"],
        json!([{"line": 1, "message": "the check digit of gtin 09521101530002 should be 1"}])
    );
}

#[tokio::test]
async fn a_label_names_its_unit_by_epc_or_by_gtin_and_serial() {
    let site = gs1_site().await;
    let hh = site.handheld("HH-1").await;
    for text in [
        format!("(01){GTIN}(21)SN-1"),
        format!("]C101{GTIN}21SN-1\u{1d}10LOT-9"),
        format!("]C101{GTIN}21SN-1~17271231"),
        format!("https://id.example.com/01/{GTIN}/21/SN-1"),
        "U-1".to_owned(),
    ] {
        let (status, unit) = unit_by_label(&site, &hh, &text).await;
        assert_eq!(
            (status, &unit["epc"]),
            (200, &json!("U-1")),
            "{text:?}: {unit}"
        );
    }
    // An SGTIN tag, and its GS1-128.
    for text in [SGTIN_EPC.to_owned(), format!("(01){SGTIN_GTIN}(21)6789")] {
        let (status, unit) = unit_by_label(&site, &hh, &text).await;
        assert_eq!(
            (status, &unit["epc"]),
            (200, &json!(SGTIN_EPC)),
            "{text}: {unit}"
        );
    }
    for text in [format!("(01){GTIN}(21)SN-404"), format!("(00){SSCC}")] {
        let (status, body) = unit_by_label(&site, &hh, &text).await;
        assert_eq!(
            (status, &body["code"]),
            (404, &json!("UNKNOWN_UNIT")),
            "{body}"
        );
    }
    let (status, body) = unit_by_label(&site, &hh, "(01)09521101530002(21)1").await;
    assert_eq!(status, 422);
    assert_eq!(
        body,
        json!({"code": "LABEL_INVALID", "error": "label_check_digit", "ai": "01",
               "message": "the check digit of (01) 09521101530002 should be 1"})
    );
    // A device's token is needed.
    let response = site
        .client
        .get(format!("{}/v1/units?label=U-1", site.base))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);
}

fn open(hh: &mut Handheld, mode: &str, context: Value) -> Value {
    hh.item(
        "open_session",
        json!({"operator_id": "op-1", "mode": mode, "context": context}),
    )
}

#[tokio::test]
async fn dispatch_verify_of_an_sscc_verifies_every_unit_of_its_pallet() {
    let site = gs1_site().await;
    let mut hh = site.handheld("HH-1").await;
    let items = [
        open(&mut hh, "dispatch_verify", json!({"manifest": "M-1"})),
        hh.item(
            "scan",
            json!({"mode": "dispatch_verify", "manifest": "M-1", "sscc": SSCC}),
        ),
        hh.item(
            "scan",
            json!({"mode": "dispatch_verify", "manifest": "M-1", "sscc": SSCC}),
        ),
        hh.item(
            "scan",
            json!({"mode": "dispatch_verify", "manifest": "M-1", "sscc": "376104250021234569"}),
        ),
    ];
    let results = site.sync_ok(&hh, &items).await;
    assert_eq!(results[1]["outcome"], "applied", "{}", results[1]);
    assert_eq!(results[1]["hop_ids"].as_array().unwrap().len(), 2);
    assert_eq!(
        (&results[2]["outcome"], &results[2]["hop_ids"]),
        (&json!("applied"), &json!([])),
        "a second verify of the pallet adds no hop"
    );
    assert_eq!(
        (&results[3]["outcome"], &results[3]["reason"]),
        (&json!("rejected"), &json!("not_on_manifest"))
    );
    assert_eq!(
        site.count("SELECT count(*) FROM hops WHERE kind = 'DISPATCH'"),
        2
    );
    let (_, manifest) = site.get("/v1/manifests/M-1", &hh.token).await;
    assert_eq!(
        manifest["units"],
        json!([
            {"epc": "P-1", "verified": true, "sscc": SSCC},
            {"epc": "P-2", "verified": true, "sscc": SSCC},
            {"epc": "P-3", "verified": false, "sscc": SSCC_2},
            {"epc": "P-4", "verified": false}
        ])
    );
    for epc in ["P-1", "P-2"] {
        let (_, unit) = site.get(&format!("/v1/units/{epc}"), &hh.token).await;
        assert_eq!(
            (&unit["state"], &unit["bin"]),
            (&json!("dispatched"), &json!(null))
        );
    }
    // A manifests file without the `sscc` column says nothing of pallets:
    // the units keep theirs.
    site.import("manifests", "manifest,state,epc\nM-1,packing,P-3\n");
    let (_, manifest) = site.get("/v1/manifests/M-1", &hh.token).await;
    assert_eq!(
        manifest["units"][2],
        json!({"epc": "P-3", "verified": false, "sscc": SSCC_2})
    );
    // A malformed SSCC never reaches the ledger.
    let bad = hh.item(
        "scan",
        json!({"mode": "dispatch_verify", "manifest": "M-1", "sscc": "106141412345678909"}),
    );
    let (status, body) = site.sync(&hh, &[bad]).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["results"][0]["status"], 422, "{body}");
}

#[tokio::test]
async fn receive_of_a_gs1_unit_label_takes_the_sku_of_its_gtin_and_records_lot_and_expiry() {
    let site = gs1_site().await;
    let mut hh = site.handheld("HH-1").await;
    let items = [
        open(&mut hh, "receive", json!({"grn": "G-1"})),
        hh.item(
            "scan",
            json!({"mode": "receive", "grn": "G-1", "epc": "R-1",
                   "gtin": GTIN_2, "lot": "LOT-7", "expiry": "2027-06-30"}),
        ),
        // An unknown GTIN names no SKU: the unit is unknown.
        hh.item(
            "scan",
            json!({"mode": "receive", "grn": "G-1", "epc": "R-2", "gtin": "00000096385074"}),
        ),
    ];
    let results = site.sync_ok(&hh, &items).await;
    assert_eq!(results[1]["outcome"], "applied", "{}", results[1]);
    assert_eq!(
        (&results[2]["outcome"], &results[2]["reason"]),
        (&json!("rejected"), &json!("unknown_unit"))
    );
    let (_, unit) = site.get("/v1/units/R-1", &hh.token).await;
    assert_eq!(
        (&unit["sku"], &unit["gtin"], &unit["lot"], &unit["expiry"]),
        (
            &json!("SKU-9"),
            &json!(GTIN_2),
            &json!("LOT-7"),
            &json!("2027-06-30")
        ),
        "{unit}"
    );
    let (_, grn) = site.get("/v1/grns/G-1", &hh.token).await;
    assert_eq!(grn["lines"][0]["received"], 1, "{grn}");
    // The hop feed and its CSV carry the unit's GS1 keys, last.
    let admin = site
        .db
        .call_blocking(|conn| stockhop_site::view::admin::add(conn, "ops", ledger_common::now()))
        .unwrap();
    let (status, feed) = site.get("/v1/hops", &admin).await;
    assert_eq!(status, 200, "{feed}");
    let received = feed["hops"]
        .as_array()
        .unwrap()
        .iter()
        .find(|hop| hop["kind"] == "RECEIVE")
        .unwrap();
    assert_eq!(
        (&received["epc"], &received["gtin"], &received["serial"]),
        (&json!("R-1"), &json!(GTIN_2), &json!(null))
    );
    // The GRN its session was opened on, though the scan named it too.
    assert_eq!(received["grn"], "G-1", "{received}");
    assert_eq!(
        (&received["lot"], &received["expiry"]),
        (&json!("LOT-7"), &json!("2027-06-30"))
    );
    let (status, csv) = site
        .get_text(
            "/v1/hops.csv?from=2000-01-01T00:00:00Z&to=2100-01-01T00:00:00Z",
            &admin,
        )
        .await;
    assert_eq!(status, 200, "{csv}");
    let mut lines = csv.lines();
    assert!(
        lines
            .next()
            .unwrap()
            .ends_with(",sku,quantity,gtin,serial,lot,expiry"),
        "{csv}"
    );
    assert!(
        lines.any(|line| line.contains(",R-1,")
            && line.ends_with(&format!(",{GTIN_2},,LOT-7,2027-06-30"))),
        "{csv}"
    );
    // An expiry that is no date is refused on arrival.
    let bad = hh.item(
        "scan",
        json!({"mode": "receive", "grn": "G-1", "epc": "R-3", "gtin": GTIN_2,
               "expiry": "2027-02-30"}),
    );
    let (_, body) = site.sync(&hh, &[bad]).await;
    assert_eq!(body["results"][0]["status"], 422, "{body}");
}

/// An SGTIN tag the site does not know yet names its own GTIN: received
/// with no `gtin` in the scan, it takes the SKU that GTIN names, as its
/// import and `label read` would read it.
#[tokio::test]
async fn receive_of_an_unannounced_sgtin_tag_takes_the_sku_of_the_gtin_it_encodes() {
    let site = gs1_site().await;
    let epc = stockhop::gs1::sgtin96_encode(GTIN_2, "4711", 1, 7).unwrap();
    let mut hh = site.handheld("HH-1").await;
    let items = [
        open(&mut hh, "receive", json!({"grn": "G-1"})),
        // The GRN is the session's: the scan does not name it.
        hh.item("scan", json!({"mode": "receive", "epc": epc})),
    ];
    let results = site.sync_ok(&hh, &items).await;
    assert_eq!(results[1]["outcome"], "applied", "{}", results[1]);
    let (_, unit) = site.get(&format!("/v1/units/{epc}"), &hh.token).await;
    assert_eq!(
        (&unit["sku"], &unit["gtin"], &unit["serial"]),
        (&json!("SKU-9"), &json!(GTIN_2), &json!("4711")),
        "{unit}"
    );
    let (_, grn) = site.get("/v1/grns/G-1", &hh.token).await;
    assert_eq!(grn["lines"][0]["received"], 1, "{grn}");
    // The hop feed names the GRN the unit came in on, from its session.
    let admin = site
        .db
        .call_blocking(|conn| stockhop_site::view::admin::add(conn, "ops", ledger_common::now()))
        .unwrap();
    let (_, feed) = site.get("/v1/hops", &admin).await;
    let received = feed["hops"]
        .as_array()
        .unwrap()
        .iter()
        .find(|hop| hop["kind"] == "RECEIVE")
        .unwrap();
    assert_eq!(
        (&received["epc"], &received["grn"]),
        (&json!(epc), &json!("G-1"))
    );
}
