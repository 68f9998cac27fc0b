//! HTTP/1.0 and HTTP/1.1 messages as the terminals send them, on byte
//! slices: the request head parser and the response encoder.
//!
//! The terminal port is served by a small HTTP/1.x server of its own
//! (request heads parsed by `httparse`, bounded by [`MAX_HEAD_BYTES`] and
//! [`MAX_HEADERS`]) rather than a general-purpose one because the devices
//! are picky in ways a framework hides: the reply must carry an explicit `Content-Length`, a
//! `Date` the device sets its clock from, `Content-Type: text/plain`, no
//! chunking, and the connection closes after one exchange. Bodies are read
//! raw whatever `Content-Type` says (some firmware sends none). Like every
//! parser of the listener, [`parse_head`] keeps "need more bytes"
//! ([`Parsed::Incomplete`]) apart from a real protocol error.

use std::time::{Duration, SystemTime};

pub use crate::limits::{MAX_HEADERS, MAX_HEAD_BYTES};
use stockhop::time::UnixMs;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    Http10,
    Http11,
}

impl Version {
    fn as_str(self) -> &'static str {
        match self {
            Version::Http10 => "HTTP/1.0",
            Version::Http11 => "HTTP/1.1",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    Post,
    /// Any other method: answered 405.
    Other,
}

/// How the body of a request is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyLength {
    /// `Content-Length` (absent on a GET means zero).
    Exact(usize),
    /// An HTTP/1.0 POST without `Content-Length`: the body runs to the end
    /// of the connection.
    UntilClose,
}

/// A request head: request line and the headers the listener reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    pub method: Method,
    /// The path without the query, e.g. `/iclock/cdata`.
    pub path: String,
    /// The raw query string after `?` (possibly empty).
    pub query: String,
    pub version: Version,
    pub body: BodyLength,
    /// `Expect: 100-continue`: the client waits for an interim answer
    /// before sending its body (libcurl does so for larger POSTs).
    pub expect_continue: bool,
    /// Bytes of the head including the blank line that ends it.
    pub head_len: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    Complete(Head),
    /// The blank line ending the head has not arrived yet.
    Incomplete,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeadError {
    #[error("request head longer than {MAX_HEAD_BYTES} bytes")]
    TooLong,
    #[error("malformed request line")]
    RequestLine,
    #[error("unsupported protocol version")]
    Version,
    #[error("malformed header line")]
    Header,
    #[error("more than {MAX_HEADERS} headers")]
    TooManyHeaders,
    #[error("invalid content-length")]
    ContentLength,
    #[error("chunked request bodies are not taken; send content-length")]
    Chunked,
}

impl HeadError {
    /// The status the listener answers this error with.
    pub fn status(&self) -> Status {
        match self {
            HeadError::TooLong => Status::HeaderTooLarge,
            HeadError::Chunked => Status::LengthRequired,
            _ => Status::BadRequest,
        }
    }
}

/// The request-line leniencies terminals need: some firmware pads the
/// request line with more than one space.
fn parser_config() -> httparse::ParserConfig {
    let mut config = httparse::ParserConfig::default();
    config.allow_multiple_spaces_in_request_line_delimiters(true);
    config
}

/// Parses the request head at the start of `buf` (with `httparse`). Line
/// ends may be CRLF or a bare LF; header names are case-insensitive. At
/// most [`MAX_HEAD_BYTES`] are looked at.
pub fn parse_head(buf: &[u8]) -> Result<Parsed, HeadError> {
    let window = &buf[..buf.len().min(MAX_HEAD_BYTES)];
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    let status = parser_config()
        .parse_request(&mut request, window)
        .map_err(|err| match err {
            httparse::Error::Version => HeadError::Version,
            httparse::Error::TooManyHeaders => HeadError::TooManyHeaders,
            httparse::Error::HeaderName | httparse::Error::HeaderValue => HeadError::Header,
            // A line ending in the wrong place or a bad byte in the request
            // line: the line is not `METHOD TARGET VERSION`.
            _ => HeadError::RequestLine,
        })?;
    let head_len = match status {
        httparse::Status::Complete(n) => n,
        httparse::Status::Partial if buf.len() > MAX_HEAD_BYTES => return Err(HeadError::TooLong),
        httparse::Status::Partial => return Ok(Parsed::Incomplete),
    };
    let method = match request.method {
        Some("GET") => Method::Get,
        Some("POST") => Method::Post,
        _ => Method::Other,
    };
    let version = match request.version {
        Some(0) => Version::Http10,
        Some(1) => Version::Http11,
        _ => return Err(HeadError::Version),
    };
    let target = request.path.ok_or(HeadError::RequestLine)?;
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let mut content_length = None;
    let mut expect_continue = false;
    for header in request.headers.iter() {
        let value = header.value.trim_ascii();
        if header.name.eq_ignore_ascii_case("content-length") {
            let parsed = std::str::from_utf8(value)
                .ok()
                .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|v| v.parse::<usize>().ok())
                .ok_or(HeadError::ContentLength)?;
            if content_length.is_some_and(|seen| seen != parsed) {
                return Err(HeadError::ContentLength);
            }
            content_length = Some(parsed);
        } else if header.name.eq_ignore_ascii_case("expect") {
            expect_continue = value.eq_ignore_ascii_case(b"100-continue");
        } else if header.name.eq_ignore_ascii_case("transfer-encoding")
            && !value.eq_ignore_ascii_case(b"identity")
        {
            return Err(HeadError::Chunked);
        }
    }
    let body = match (content_length, method, version) {
        (Some(n), _, _) => BodyLength::Exact(n),
        (None, Method::Post, Version::Http10) => BodyLength::UntilClose,
        (None, _, _) => BodyLength::Exact(0),
    };
    Ok(Parsed::Complete(Head {
        method,
        path: path.to_owned(),
        query: query.to_owned(),
        version,
        body,
        expect_continue,
        head_len,
    }))
}

/// The path and raw query of the request line at the start of `buf`, as
/// soon as that line is complete (before the rest of the head has come),
/// so a refused terminal is answered without waiting for its headers.
/// The same parser as [`parse_head`] reads it.
pub fn request_target(buf: &[u8]) -> Option<(&str, &str)> {
    let window = &buf[..buf.len().min(MAX_HEAD_BYTES)];
    // Empty lines before the request line are skipped, as the head
    // parser skips them (RFC 9112 §2.2).
    let start = window.iter().position(|&b| b != b'\r' && b != b'\n')?;
    let line_end = start + window[start..].iter().position(|&b| b == b'\n')?;
    // The request line and nothing after it: headers are not parsed yet.
    let line = &window[..=line_end];
    let mut request = httparse::Request::new(&mut []);
    let _ = parser_config().parse_request(&mut request, line);
    request.version?;
    let target = request.path?;
    Some(target.split_once('?').unwrap_or((target, "")))
}

/// The value of `name` in a query string (first occurrence,
/// `application/x-www-form-urlencoded` decoded).
pub fn query_param(query: &str, name: &str) -> Option<String> {
    form_urlencoded::parse(query.as_bytes())
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.into_owned())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Ok,
    BadRequest,
    Forbidden,
    NotFound,
    MethodNotAllowed,
    /// A Security PUSH registration refused (the protocol's own answer).
    NotAcceptable,
    LengthRequired,
    PayloadTooLarge,
    HeaderTooLarge,
    ServiceUnavailable,
}

impl Status {
    pub fn code(self) -> u16 {
        match self {
            Status::Ok => 200,
            Status::BadRequest => 400,
            Status::Forbidden => 403,
            Status::NotFound => 404,
            Status::MethodNotAllowed => 405,
            Status::NotAcceptable => 406,
            Status::LengthRequired => 411,
            Status::PayloadTooLarge => 413,
            Status::HeaderTooLarge => 431,
            Status::ServiceUnavailable => 503,
        }
    }

    fn reason(self) -> &'static str {
        match self {
            Status::Ok => "OK",
            Status::BadRequest => "Bad Request",
            Status::Forbidden => "Forbidden",
            Status::NotFound => "Not Found",
            Status::MethodNotAllowed => "Method Not Allowed",
            Status::NotAcceptable => "Not Acceptable",
            Status::LengthRequired => "Length Required",
            Status::PayloadTooLarge => "Payload Too Large",
            Status::HeaderTooLarge => "Request Header Fields Too Large",
            Status::ServiceUnavailable => "Service Unavailable",
        }
    }
}

/// The interim answer to `Expect: 100-continue`.
pub const CONTINUE: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";

/// How long a terminal is told to wait after a 503.
pub const RETRY_AFTER_SECS: u32 = 10;

/// A reply: always `text/plain`, always closed after sending.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    pub status: Status,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn ok(body: impl Into<Vec<u8>>) -> Reply {
        Reply {
            status: Status::Ok,
            body: body.into(),
        }
    }

    pub fn error(status: Status, message: &str) -> Reply {
        Reply {
            status,
            body: format!("{message}\n").into_bytes(),
        }
    }

    /// The bytes on the wire, answering a request of `version` at `now`.
    pub fn encode(&self, version: Version, now: UnixMs) -> Vec<u8> {
        let mut out = format!(
            "{} {} {}\r\nDate: {}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n",
            version.as_str(),
            self.status.code(),
            self.status.reason(),
            http_date(now),
            self.body.len(),
        );
        if self.status == Status::ServiceUnavailable {
            out.push_str(&format!("Retry-After: {RETRY_AFTER_SECS}\r\n"));
        }
        out.push_str("Connection: close\r\n\r\n");
        let mut bytes = out.into_bytes();
        bytes.extend_from_slice(&self.body);
        bytes
    }
}

/// `Date` header value (IMF-fixdate, GMT): the terminal sets its clock from it.
pub fn http_date(now: UnixMs) -> String {
    let secs = u64::try_from(now.0.div_euclid(1000)).unwrap_or(0);
    httpdate::fmt_http_date(SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn complete(buf: &[u8]) -> Head {
        match parse_head(buf) {
            Ok(Parsed::Complete(head)) => head,
            other => panic!("expected a head, got {other:?}"),
        }
    }

    #[test]
    fn a_partial_head_needs_more_bytes() {
        assert_eq!(
            parse_head(b"GET /iclock/ping?SN=1 HTTP/1.1\r\nHost: x\r\n"),
            Ok(Parsed::Incomplete)
        );
    }

    #[test]
    fn crlf_and_bare_lf_heads_both_parse() {
        let crlf = complete(
            b"POST /iclock/cdata?SN=7&table=ATTLOG HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc",
        );
        assert_eq!(crlf.body, BodyLength::Exact(3));
        assert_eq!(crlf.query, "SN=7&table=ATTLOG");
        assert!(!crlf.expect_continue);
        let lf = complete(b"POST /iclock/cdata?SN=7 HTTP/1.0\ncontent-length: 3\n\nabc");
        assert_eq!(lf.version, Version::Http10);
        assert_eq!(
            lf.head_len,
            b"POST /iclock/cdata?SN=7 HTTP/1.0\ncontent-length: 3\n\n".len()
        );
    }

    #[test]
    fn expect_100_continue_is_noticed() {
        let head = complete(
            b"POST /zebra?SN=r HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n",
        );
        assert!(head.expect_continue);
    }

    #[test]
    fn an_http10_post_without_length_reads_to_close() {
        let head = complete(b"POST /iclock/cdata HTTP/1.0\r\n\r\n");
        assert_eq!(head.body, BodyLength::UntilClose);
    }

    #[test]
    fn chunked_bodies_and_conflicting_lengths_are_refused() {
        assert_eq!(
            parse_head(b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"),
            Err(HeadError::Chunked)
        );
        assert_eq!(
            parse_head(b"POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"),
            Err(HeadError::ContentLength)
        );
        assert_eq!(parse_head(b"GET / HTTP/2\r\n\r\n"), Err(HeadError::Version));
    }

    #[test]
    fn a_header_name_with_a_space_before_its_colon_is_malformed() {
        assert_eq!(
            parse_head(b"POST /zebra?SN=r HTTP/1.1\r\nContent-Length : 2\r\n\r\nab"),
            Err(HeadError::Header)
        );
        assert_eq!(
            parse_head(b"GET / HTTP/1.1\r\n: x\r\n\r\n"),
            Err(HeadError::Header)
        );
    }

    #[test]
    fn the_request_target_is_read_from_the_first_line_alone() {
        assert_eq!(request_target(b"GET /iclock/ping?SN=7 HTTP/1.1"), None);
        assert_eq!(
            request_target(b"GET /iclock/ping?SN=7 HTTP/1.1\r\nHo"),
            Some(("/iclock/ping", "SN=7"))
        );
    }

    #[test]
    fn empty_lines_before_the_request_line_are_skipped_by_both_reads() {
        let buf = b"\r\n\nGET /iclock/ping?SN=7 HTTP/1.1\r\n\r\n";
        assert_eq!(request_target(buf), Some(("/iclock/ping", "SN=7")));
        assert_eq!(complete(buf).path, "/iclock/ping");
    }

    #[test]
    fn an_endless_head_is_refused() {
        let long = vec![b'a'; MAX_HEAD_BYTES + 1];
        assert_eq!(parse_head(&long), Err(HeadError::TooLong));
    }

    #[test]
    fn query_params_are_percent_decoded() {
        assert_eq!(query_param("SN=A%2FB&x=1", "SN").as_deref(), Some("A/B"));
        assert_eq!(query_param("options=all", "SN"), None);
        assert_eq!(query_param("SN=%", "SN").as_deref(), Some("%"));
    }

    #[test]
    fn the_date_header_is_imf_fixdate_in_gmt() {
        assert_eq!(
            http_date(UnixMs(1_438_269_388_000)),
            "Thu, 30 Jul 2015 15:16:28 GMT"
        );
    }
}
