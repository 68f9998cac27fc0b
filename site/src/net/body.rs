//! A request body's size as its head declares it: a body whose
//! `Content-Length` is over the limit of where it goes is refused (413)
//! before a byte of it is read, rather than read up to the limit first.
//! A body without the header (chunked) is still bounded as it is read.

use axum::http::{header, HeaderMap};

/// Whether `headers` declare a body of more than `limit` bytes.
pub fn declared_over(headers: &HeaderMap, limit: usize) -> bool {
    headers
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.trim().parse::<u64>().ok())
        .is_some_and(|declared| declared > limit as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_declared_length_over_the_limit_is_over() {
        let with = |length: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(header::CONTENT_LENGTH, length.parse().unwrap());
            headers
        };
        assert!(declared_over(&with("300000000"), 256));
        assert!(declared_over(&with("18446744073709551615"), usize::MAX - 1));
        assert!(!declared_over(&with("256"), 256));
        assert!(!declared_over(&HeaderMap::new(), 256));
    }
}
