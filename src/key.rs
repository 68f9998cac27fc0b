//! Idempotency keys: minted on the device at capture, never on the server
//! for a handheld's item.
//!
//! A fresh key is a random UUIDv4 (the OS's randomness natively, the
//! browser's `crypto.getRandomValues` in wasm, both through `getrandom`).
//! The site's terminal listener mints the keys of the records it takes as
//! UUIDv7 instead ([`IdempotencyKey::mint_ordered`]): its time first, so
//! keys minted at portal rates land at the end of every index on them.
//! Items written by an older queue schema that carry no key get a *derived*
//! UUIDv8 from their permanent queue id, so every retry of such an item
//! sends the same key. The derivation is 32-bit FNV-1a in integer
//! arithmetic, giving the same bytes natively and in wasm, and it keeps the
//! queue id itself in the key, so two queue ids never derive the same key.

use std::fmt;
use std::str::FromStr;

use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use uuid::Uuid;

/// A legacy queue id must fit the 56 bits the derived key keeps of it;
/// IndexedDB auto-increment ids stop at 2^53, well inside that.
pub const LEGACY_QUEUE_ID_MAX: u64 = (1 << 56) - 1;

/// Domain separation for derived keys, so a future derivation can change it.
const LEGACY_DOMAIN: &[u8] = b"stockhop-legacy-queue-id-v1";

/// An idempotency key: a canonical, lower-case hyphenated UUID.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct IdempotencyKey(Uuid);

impl IdempotencyKey {
    /// Mints a random UUIDv4 key.
    pub fn mint() -> Result<IdempotencyKey, KeyError> {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).map_err(|err| KeyError::Entropy(err.to_string()))?;
        Ok(IdempotencyKey::from_random_bytes(bytes))
    }

    /// Mints a UUIDv7 key: `millis` (since the Unix epoch) first, then 74
    /// random bits. For keys minted at a high rate on one machine (the
    /// terminal listener's records, hundreds a second): keys minted in
    /// time order go to the end of each index on them, so a commit of many
    /// writes a few pages at that end, where random keys would each
    /// rewrite a page anywhere in an index of millions (in SQLite, a 4 KiB
    /// page in the write-ahead log for each).
    pub fn mint_ordered(millis: u64) -> Result<IdempotencyKey, KeyError> {
        let mut bytes = [0u8; 10];
        getrandom::fill(&mut bytes).map_err(|err| KeyError::Entropy(err.to_string()))?;
        Ok(IdempotencyKey(
            uuid::Builder::from_unix_timestamp_millis(millis, &bytes).into_uuid(),
        ))
    }

    /// A UUIDv4 from sixteen random bytes (version and variant bits set here).
    pub fn from_random_bytes(bytes: [u8; 16]) -> IdempotencyKey {
        IdempotencyKey(uuid::Builder::from_random_bytes(bytes).into_uuid())
    }

    /// The stable UUIDv8 of an item from an older schema, from its queue id.
    ///
    /// Layout: bytes 0–3 FNV-1a of domain ‖ id, bytes 4–7 FNV-1a of those
    /// four bytes ‖ id (version nibble overwritten), byte 8 variant bits over
    /// hash bits, bytes 9–15 the id itself (56 bits, big-endian).
    pub fn derive_from_legacy_id(queue_id: u64) -> Result<IdempotencyKey, KeyError> {
        if queue_id > LEGACY_QUEUE_ID_MAX {
            return Err(KeyError::LegacyIdTooLarge(queue_id));
        }
        let id_bytes = queue_id.to_be_bytes();
        let h1 = fnv1a32(fnv1a32(FNV_OFFSET_BASIS, LEGACY_DOMAIN), &id_bytes);
        let h2 = fnv1a32(fnv1a32(FNV_OFFSET_BASIS, &h1.to_be_bytes()), &id_bytes);
        let mut bytes = [0u8; 16];
        bytes[0..4].copy_from_slice(&h1.to_be_bytes());
        bytes[4..8].copy_from_slice(&h2.to_be_bytes());
        bytes[8] = (h1 ^ h2) as u8;
        bytes[9..16].copy_from_slice(&id_bytes[1..8]);
        Ok(IdempotencyKey(
            uuid::Builder::from_custom_bytes(bytes).into_uuid(),
        ))
    }

    /// Parses a canonical key: 36 characters, lower- or upper-case hex with
    /// hyphens at 8-4-4-4-12, RFC 4122 variant, not the nil UUID. Braced,
    /// URN and unhyphenated forms are refused so each key has one spelling.
    pub fn parse(text: &str) -> Result<IdempotencyKey, KeyError> {
        let bad = || KeyError::NotCanonical(text.chars().take(64).collect());
        let uuid = parse_hyphenated(text).ok_or_else(bad)?;
        if uuid.is_nil() || uuid.get_variant() != uuid::Variant::RFC4122 {
            return Err(bad());
        }
        Ok(IdempotencyKey(uuid))
    }

    pub fn as_uuid(&self) -> &Uuid {
        &self.0
    }

    /// The UUID version nibble (4 minted, 8 derived).
    pub fn version(&self) -> usize {
        self.0.get_version_num()
    }
}

/// Parses a UUID in its hyphenated form only: 36 characters, hex digits
/// in either case, hyphens at 8-4-4-4-12. The one spelling keys, session
/// ids and the wire use; braced, URN and unhyphenated forms are refused
/// (`uuid`'s parser reads each form at its own length, and only the
/// hyphenated one is 36 characters long).
pub fn parse_hyphenated(text: &str) -> Option<Uuid> {
    if text.len() != HYPHENATED_LEN {
        return None;
    }
    Uuid::try_parse(text).ok()
}

/// Characters in a hyphenated UUID: 32 hex digits and 4 hyphens.
const HYPHENATED_LEN: usize = 36;

impl fmt::Display for IdempotencyKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0.hyphenated(), f)
    }
}

impl FromStr for IdempotencyKey {
    type Err = KeyError;
    fn from_str(text: &str) -> Result<IdempotencyKey, KeyError> {
        IdempotencyKey::parse(text)
    }
}

impl Serialize for IdempotencyKey {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for IdempotencyKey {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<IdempotencyKey, D::Error> {
        let text = String::deserialize(deserializer)?;
        IdempotencyKey::parse(&text).map_err(de::Error::custom)
    }
}

/// Why a key could not be had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    #[error("not a canonical UUID key: '{0}'")]
    NotCanonical(String),
    #[error("legacy queue id {0} exceeds the 56 bits a derived key keeps")]
    LegacyIdTooLarge(u64),
    #[error("no randomness available to mint a key: {0}")]
    Entropy(String),
}

pub const FNV_OFFSET_BASIS: u32 = 0x811c_9dc5;
const FNV_PRIME: u32 = 0x0100_0193;

/// 32-bit FNV-1a over `bytes`, continuing from `hash` (start from
/// [`FNV_OFFSET_BASIS`]). Integer arithmetic only.
pub fn fnv1a32(hash: u32, bytes: &[u8]) -> u32 {
    bytes
        .iter()
        .fold(hash, |h, &b| (h ^ u32::from(b)).wrapping_mul(FNV_PRIME))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a32_matches_the_reference_vectors() {
        for (input, expected) in [
            (&b""[..], 0x811c_9dc5),
            (b"a", 0xe40c_292c),
            (b"foobar", 0xbf9c_f968),
        ] {
            assert_eq!(fnv1a32(FNV_OFFSET_BASIS, input), expected);
        }
    }

    #[test]
    fn minted_keys_are_v4_and_distinct() {
        let a = IdempotencyKey::mint().unwrap();
        let b = IdempotencyKey::mint().unwrap();
        assert_ne!(a, b);
        assert_eq!(a.version(), 4);
        assert_eq!(IdempotencyKey::parse(&a.to_string()), Ok(a));
    }

    #[test]
    fn ordered_keys_are_v7_distinct_and_sort_by_their_time() {
        let a = IdempotencyKey::mint_ordered(1_700_000_000_000).unwrap();
        let b = IdempotencyKey::mint_ordered(1_700_000_000_000).unwrap();
        let later = IdempotencyKey::mint_ordered(1_700_000_000_001).unwrap();
        assert_ne!(a, b);
        assert_eq!(a.version(), 7);
        assert_eq!(IdempotencyKey::parse(&a.to_string()), Ok(a));
        // Their text, as the indexes hold it, sorts by the time too.
        assert!(a.to_string() < later.to_string() && b.to_string() < later.to_string());
    }

    #[test]
    fn derived_keys_are_v8_stable_and_keep_the_id() {
        let a = IdempotencyKey::derive_from_legacy_id(42).unwrap();
        assert_eq!(a, IdempotencyKey::derive_from_legacy_id(42).unwrap());
        assert_eq!(a.version(), 8);
        assert_eq!(a.as_uuid().get_variant(), uuid::Variant::RFC4122);
        assert_eq!(&a.as_uuid().as_bytes()[9..], &42u64.to_be_bytes()[1..]);
        assert_ne!(a, IdempotencyKey::derive_from_legacy_id(43).unwrap());
        assert_eq!(
            IdempotencyKey::derive_from_legacy_id(LEGACY_QUEUE_ID_MAX + 1),
            Err(KeyError::LegacyIdTooLarge(LEGACY_QUEUE_ID_MAX + 1))
        );
    }

    #[test]
    fn hyphenated_uuids_parse_as_uuid_parses_them_and_no_other_form_does() {
        for n in 0..2_000u128 {
            let uuid = Uuid::from_u128(n.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835));
            let text = uuid.hyphenated().to_string();
            assert_eq!(parse_hyphenated(&text), Some(uuid));
            assert_eq!(parse_hyphenated(&text.to_uppercase()), Some(uuid));
        }
        let good = "8a0c5e2e-4b1f-4c3d-9e8f-0123456789ab";
        for bad in [
            "8a0c5e2e4b1f4c3d9e8f0123456789ab",
            "{8a0c5e2e-4b1f-4c3d-9e8f-0123456789ab}",
            "8a0c5e2e-4b1f-4c3d-9e8f-0123456789a",
            "8a0c5e2e-4b1f-4c3d-9e8f-0123456789abc",
            "8a0c5e2e04b1f-4c3d-9e8f-0123456789ab",
            "8a0c5e2e-4b1f-4c3d-9e8f-0123456789a-",
            "8a0c5e2e-4b1f-4c3d-9e8f-0123456789ag",
            "+a0c5e2e-4b1f-4c3d-9e8f-0123456789ab",
            "8a0c5e2e-4b1f-4c3d-9e8f-0123456789aé",
        ] {
            assert_eq!(parse_hyphenated(bad), None, "{bad}");
            assert!(Uuid::try_parse(bad).is_err() || bad.len() != 36, "{bad}");
        }
        assert!(parse_hyphenated(good).is_some());
    }

    #[test]
    fn parse_accepts_only_canonical_keys() {
        let good = "8a0c5e2e-4b1f-4c3d-9e8f-0123456789ab";
        assert_eq!(IdempotencyKey::parse(good).unwrap().to_string(), good);
        let upper = IdempotencyKey::parse(&good.to_uppercase()).unwrap();
        assert_eq!(upper.to_string(), good);
        for bad in [
            "",
            "8a0c5e2e4b1f4c3d9e8f0123456789ab",
            "{8a0c5e2e-4b1f-4c3d-9e8f-0123456789ab}",
            "urn:uuid:8a0c5e2e-4b1f-4c3d-9e8f-0123456789ab",
            "8a0c5e2e-4b1f-4c3d-9e8f-0123456789ag",
            "00000000-0000-0000-0000-000000000000",
            "8a0c5e2e-4b1f-4c3d-cе8f-0123456789ab",
            "8a0c5e2e-4b1f-4c3d-0e8f-0123456789ab",
        ] {
            assert!(IdempotencyKey::parse(bad).is_err(), "{bad} parsed");
        }
    }
}
