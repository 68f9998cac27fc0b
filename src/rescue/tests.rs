use proptest::prelude::*;
use uuid::Uuid;

use super::*;
use crate::key::IdempotencyKey;
use crate::wire::Command;

const TOKEN: &str = "a-device-token";

fn item(n: u8) -> SyncItem {
    SyncItem {
        key: IdempotencyKey::from_random_bytes([n; 16]),
        session_id: Uuid::from_bytes([7; 16]),
        client_seq: u64::from(n) + 1,
        command: Command::Scan,
        occurred_at: UnixMs(1_700_000_000_000 + i64::from(n)),
        queued_at: UnixMs(1_700_000_000_004 + i64::from(n)),
        body: serde_json::json!({"mode": "put_away", "epc": format!("E2{n:03}"), "bin": "B-1\n"}),
    }
}

fn header() -> Header {
    Header {
        device_id: "HH-0042".into(),
        build: "2026.11.3".into(),
        exported_at: UnixMs(1_700_000_100_000),
    }
}

fn file(n: u8) -> Vec<u8> {
    let items: Vec<_> = (0..n).map(item).collect();
    write(&header(), &items, &token_digest(TOKEN))
}

#[test]
fn a_written_file_reads_back_and_verifies_with_the_devices_digest() {
    let items: Vec<_> = (0..5).map(item).collect();
    let bytes = write(&header(), &items, &token_digest(TOKEN));
    let read = read(&bytes).unwrap();
    assert_eq!(read.header, header());
    assert_eq!(read.items, items);
    assert!(verify(&read, &token_digest(TOKEN)));
    assert!(!verify(&read, &token_digest("another-device-token")));
}

#[test]
fn the_layout_is_a_header_one_line_an_item_and_a_trailer_over_the_bytes_before_it() {
    let bytes = file(2);
    assert!(bytes.ends_with(b"\n"));
    let text = std::str::from_utf8(&bytes).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4);
    assert!(lines[0].starts_with(
        r#"{"format":"stockhop-rescue/1","device_id":"HH-0042","build":"2026.11.3","exported_at":"2023-11-14T22:15:00.000Z","items":2}"#
    ));
    let first: serde_json::Value = serde_json::from_str(lines[1]).unwrap();
    assert_eq!(first, serde_json::to_value(item(0)).unwrap());
    let trailer: Trailer = serde_json::from_str(lines[3]).unwrap();
    let signed = &bytes[..bytes.len() - lines[3].len() - 1];
    assert_eq!(trailer.sha256, hex::encode(Sha256::digest(signed)));
    let mut mac = Hmac::<Sha256>::new_from_slice(&token_digest(TOKEN)).unwrap();
    mac.update(signed);
    assert_eq!(trailer.hmac, hex::encode(mac.finalize().into_bytes()));
}

#[test]
fn the_token_digest_is_the_sha256_the_site_keeps() {
    assert_eq!(
        hex::encode(token_digest("abc")),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
}

#[test]
fn an_empty_queue_is_still_a_file() {
    let bytes = file(0);
    let read = read(&bytes).unwrap();
    assert!(read.items.is_empty());
    assert!(verify(&read, &token_digest(TOKEN)));
}

#[test]
fn the_file_name_carries_the_device_and_the_instant_without_colons() {
    assert_eq!(
        file_name("HH-0042", UnixMs(1_700_000_100_120)),
        "stockhop-rescue-HH-0042-20231114T221500.120Z.jsonl"
    );
}

#[test]
fn a_file_cut_short_is_refused() {
    let bytes = file(3);
    // Mid-line: no final newline.
    assert_eq!(read(&bytes[..bytes.len() - 5]), Err(RescueError::Truncated));
    // At a line's end: the last line is an item, not the trailer.
    let text = std::str::from_utf8(&bytes).unwrap();
    let cut = text.match_indices('\n').nth(2).unwrap().0 + 1;
    assert_eq!(read(&bytes[..cut]), Err(RescueError::NoTrailer));
    // The header alone.
    let cut = text.find('\n').unwrap() + 1;
    assert_eq!(read(&bytes[..cut]), Err(RescueError::NoTrailer));
    assert_eq!(read(b""), Err(RescueError::Empty));
}

#[test]
fn a_file_without_its_trailer_is_refused() {
    let bytes = file(2);
    let text = std::str::from_utf8(&bytes).unwrap();
    let without: String = text.lines().take(3).map(|l| format!("{l}\n")).collect();
    assert_eq!(read(without.as_bytes()), Err(RescueError::NoTrailer));
}

#[test]
fn what_is_not_json_lines_is_refused() {
    assert!(matches!(
        read(b"hello, site\n"),
        Err(RescueError::NotRescueFile { .. })
    ));
    assert!(matches!(
        read(b"{\"device_id\":\"HH-1\"}\n{}\n"),
        Err(RescueError::NotRescueFile { .. })
    ));
    assert!(matches!(
        read(b"{\"format\":\"stockhop-rescue/1\",\"device_id\":7}\n{}\n"),
        Err(RescueError::BadHeader { .. })
    ));
    // An SQLite database (the site's own ledger, say) has no final
    // newline; it is named for what it is, not as cut short.
    let sqlite = b"SQLite format 3\0\x10\x00\x02\x02rest of the page";
    assert_eq!(
        read(sqlite),
        Err(RescueError::NotRescueFile {
            what: "this is an SQLite database"
        })
    );
    assert!(read(sqlite)
        .unwrap_err()
        .to_string()
        .starts_with("this is an SQLite database, not a handheld's rescue file"));
    assert!(matches!(
        read(b"{\"format\":\"stockhop-rescue/9\"}\n"),
        Err(RescueError::UnknownFormat { .. })
    ));
    let sync_request = br#"{"device_id":"HH-1","sent_at":"2026-11-29T10:15:02.120Z","items":[]}"#;
    assert!(read(sync_request).is_err());
}

#[test]
fn a_header_that_miscounts_its_items_is_refused() {
    let items: Vec<_> = (0..2).map(item).collect();
    let bytes = write(&header(), &items, &token_digest(TOKEN));
    let text = String::from_utf8(bytes)
        .unwrap()
        .replace(r#""items":2}"#, r#""items":3}"#);
    // The signature no longer holds either, but the count is checked first
    // so the message says what is wrong.
    assert_eq!(
        read(text.as_bytes()),
        Err(RescueError::CountMismatch {
            header: 3,
            found: 2
        })
    );
}

#[test]
fn an_item_line_that_is_not_a_sync_item_is_refused() {
    let text = String::from_utf8(file(1))
        .unwrap()
        .replace("\"client_seq\":1", "\"client_seq\":\"one\"");
    assert!(matches!(
        read(text.as_bytes()),
        Err(RescueError::BadItem { line: 2, .. })
    ));
}

#[test]
fn a_line_over_the_bound_is_refused_before_it_is_parsed() {
    let mut long = item(0);
    long.body = serde_json::json!({ "note": "x".repeat(MAX_LINE_BYTES) });
    let bytes = write(&header(), &[long], &token_digest(TOKEN));
    assert_eq!(read(&bytes), Err(RescueError::LineTooLong { line: 2 }));
}

#[test]
fn a_file_over_the_bound_is_refused_before_it_is_read() {
    let bytes = vec![b'\n'; MAX_FILE_BYTES + 1];
    assert_eq!(
        read(&bytes),
        Err(RescueError::TooLarge {
            bytes: MAX_FILE_BYTES + 1
        })
    );
}

#[test]
fn ten_thousand_items_fit_well_within_the_bounds() {
    let items: Vec<_> = (0..10_000u32)
        .map(|n| {
            let mut it = item((n % 251) as u8);
            it.key = IdempotencyKey::from_random_bytes((u128::from(n) + 1).to_be_bytes());
            it.client_seq = u64::from(n) + 1;
            it
        })
        .collect();
    let bytes = write(&header(), &items, &token_digest(TOKEN));
    assert!(bytes.len() < MAX_FILE_BYTES / 8, "{} bytes", bytes.len());
    assert_eq!(read(&bytes).unwrap().items.len(), 10_000);
}

proptest! {
    #[test]
    fn any_flipped_byte_fails_reading_or_verification(
        n in 0u8..6,
        at in any::<prop::sample::Index>(),
        flip in 1u8..=255,
    ) {
        let mut bytes = file(n);
        let i = at.index(bytes.len());
        bytes[i] ^= flip;
        // Either the file is no longer one, or its signature fails.
        if let Ok(file) = read(&bytes) {
            prop_assert!(!verify(&file, &token_digest(TOKEN)));
        }
    }

    #[test]
    fn any_queue_round_trips(
        seqs in prop::collection::vec(1u64..1_000_000, 0..40),
        note in ".{0,40}",
    ) {
        let items: Vec<_> = seqs
            .iter()
            .enumerate()
            .map(|(i, &seq)| {
                let mut it = item(i as u8);
                it.client_seq = seq;
                it.body = serde_json::json!({ "note": note.clone() });
                it
            })
            .collect();
        let bytes = write(&header(), &items, &token_digest(TOKEN));
        let read = read(&bytes).unwrap();
        prop_assert_eq!(&read.items, &items);
        prop_assert!(verify(&read, &token_digest(TOKEN)));
    }

    #[test]
    fn any_prefix_of_a_file_is_refused(n in 0u8..4, at in any::<prop::sample::Index>()) {
        let bytes = file(n);
        let cut = at.index(bytes.len());
        prop_assert!(read(&bytes[..cut]).is_err());
    }
}
