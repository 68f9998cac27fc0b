// Vectors shared by the native and the wasm key tests: the same legacy queue
// id must derive the same key on both, so an upgraded handheld keeps sending
// the key it would have derived anywhere. Changing one is a wire break.
pub const LEGACY_KEY_VECTORS: &[(u64, &str)] = &[
    (0, "d9b78152-7fe3-822e-bc00-000000000000"),
    (1, "dab782e5-40da-89e0-8500-000000000001"),
    (2, "d7b77e2c-90f1-847b-9700-000000000002"),
    (42, "bfb75864-4b89-8555-b100-00000000002a"),
    (1000, "9bb67421-4df4-8bf0-9100-0000000003e8"),
    (65535, "8caa3c28-4b37-8145-ad00-00000000ffff"),
    (4294967296, "205ec915-0ec3-8f9e-8b00-000100000000"),
    (9007199254740991, "6181bb65-86a3-8b24-811f-ffffffffffff"),
    (72057594037927935, "f6c5a785-3fad-8823-a6ff-ffffffffffff"),
];

pub fn check_legacy_key_vectors() {
    use stockhop::key::IdempotencyKey;
    for &(queue_id, expected) in LEGACY_KEY_VECTORS {
        let key = IdempotencyKey::derive_from_legacy_id(queue_id).unwrap();
        assert_eq!(key.to_string(), expected, "legacy queue id {queue_id}");
        assert_eq!(key.version(), 8);
        assert_eq!(IdempotencyKey::parse(expected), Ok(key));
    }
}
