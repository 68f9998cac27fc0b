//! The core in a real browser page (headless Chromium): keys from the
//! browser's crypto, and the same derived-key vectors as natively.
use stockhop::key::IdempotencyKey;
use wasm_bindgen_test::*;

#[wasm_bindgen_test]
fn derived_legacy_keys_match_the_native_vectors() {
    crate::key_vectors::check_legacy_key_vectors();
}

#[wasm_bindgen_test]
fn minted_keys_come_from_browser_crypto_and_are_v4() {
    let a = IdempotencyKey::mint().unwrap();
    let b = IdempotencyKey::mint().unwrap();
    assert_ne!(a, b);
    assert_eq!(a.version(), 4);
    assert_eq!(IdempotencyKey::parse(&a.to_string()), Ok(a));
}

#[wasm_bindgen_test]
fn backoff_and_time_agree_with_native() {
    use stockhop::backoff::delay_after;
    use stockhop::time::UnixMs;
    let secs: Vec<u64> = (1..=6).map(|n| delay_after(n).0 / 1000).collect();
    assert_eq!(secs, [2, 4, 8, 16, 30, 30]);
    let at = UnixMs::parse_rfc3339("2026-09-07T12:50:36.194+0000").unwrap();
    assert_eq!(at.to_string(), "2026-09-07T12:50:36.194Z");
}
