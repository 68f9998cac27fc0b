//! Device bearer tokens: minted by `stockhop-site device add`, shown once,
//! kept only as their SHA-256, and checked on every ledger request.

use sha2::{Digest, Sha256};

/// Random bytes in a token: 256 bits, beyond guessing.
pub const TOKEN_BYTES: usize = 32;

/// Why a token could not be minted.
#[derive(Debug, thiserror::Error)]
#[error("no randomness available to mint a token: {0}")]
pub struct EntropyError(String);

/// A fresh bearer token: 64 lower-case hex characters.
pub fn mint_token() -> Result<String, EntropyError> {
    let mut bytes = [0u8; TOKEN_BYTES];
    getrandom::fill(&mut bytes).map_err(|err| EntropyError(err.to_string()))?;
    Ok(hex::encode(bytes))
}

/// The stored form of a token.
pub fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// The token of an `Authorization: Bearer <token>` header value.
pub fn bearer(header: Option<&str>) -> Option<&str> {
    let value = header?;
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_random_hex_and_hash_to_sha256() {
        let a = mint_token().unwrap();
        assert_eq!(a.len(), TOKEN_BYTES * 2);
        assert_ne!(a, mint_token().unwrap());
        assert_eq!(
            token_hash("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn only_a_bearer_header_carries_a_token() {
        assert_eq!(bearer(Some("Bearer abc")), Some("abc"));
        assert_eq!(bearer(Some("bearer abc")), Some("abc"));
        assert_eq!(bearer(Some("Basic abc")), None);
        assert_eq!(bearer(Some("Bearer ")), None);
        assert_eq!(bearer(None), None);
    }
}
