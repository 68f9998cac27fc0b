//! Idempotency keys natively: the same derived-key vectors the browser
//! suite checks, so both targets agree bit for bit.
#![cfg(not(target_arch = "wasm32"))]

#[path = "common/key_vectors.rs"]
mod key_vectors;

use stockhop::key::IdempotencyKey;

#[test]
fn derived_legacy_keys_match_the_shared_vectors() {
    key_vectors::check_legacy_key_vectors();
}

#[test]
fn minted_keys_come_from_the_os_and_are_v4() {
    let keys: std::collections::HashSet<_> =
        (0..1000).map(|_| IdempotencyKey::mint().unwrap()).collect();
    assert_eq!(keys.len(), 1000);
    assert!(keys.iter().all(|k| k.version() == 4));
}
