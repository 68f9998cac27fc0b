//! The HTTP client this server reaches another server with: a site's
//! forwarder posting hops to its central, a terminal listener posting
//! batches to a remote ledger. Both are signed machine-to-machine posts
//! ([`crate::net::delivery::SignedEndpoint`]); this module decides how
//! they travel.
//!
//! `https://` goes through rustls with the ring provider the HTTPS server
//! uses (no aws-lc, no OpenSSL). The peer's certificate chain and host name
//! are always checked; whom to trust is the one choice: the certificates
//! of a PEM file (a private CA, such as the central's own site CA from its
//! `/ca.crt`), or the system's trust store, read at start through
//! `rustls-native-certs` (so a company's CA installed on the machine counts,
//! and the store's updates need no rebuild). `http://` stays possible for
//! loopback and private links; [`plain_off_loopback`] tells the caller when
//! to warn about it. Redirects are never followed: a signed post answered
//! with one is retried, not sent elsewhere.

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use reqwest::Url;
use rustls::RootCertStore;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::CertificateDer;

/// Whom the client trusts for an `https://` peer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trust {
    /// The system's trust store.
    System,
    /// Only the certificates in this PEM file (one or more).
    CaFile(PathBuf),
}

impl Trust {
    /// The CA file when one is given, else the system's store.
    pub fn from_ca_file(ca_file: Option<PathBuf>) -> Trust {
        ca_file.map_or(Trust::System, Trust::CaFile)
    }
}

/// Why no client could be built: each stops `serve` at start.
#[derive(Debug, thiserror::Error)]
pub enum OutboundError {
    #[error("{url:?} is not a URL: {reason}")]
    Url { url: String, reason: String },
    #[error("{url:?}: only http:// and https:// URLs are reached")]
    Scheme { url: String },
    #[error("the CA file {path}: {reason}")]
    CaFile { path: PathBuf, reason: String },
    #[error(
        "no usable certificate in the system's trust store ({reason}) to check {url}: \
         install the CA there or name its PEM file"
    )]
    NoSystemRoots { url: String, reason: String },
    #[error("building the HTTP client: {0}")]
    Build(String),
}

/// The client for signed posts to `url` (its origin is checked here:
/// `http://` or `https://` with a host), trusting `trust` for HTTPS. A CA
/// file is read whatever the scheme, so a bad one fails at start either way;
/// the system's store is read only for an `https://` URL. A request that
/// has no whole answer within `timeout` fails.
pub fn signed_post_client(
    url: &str,
    trust: &Trust,
    timeout: Duration,
) -> Result<reqwest::Client, OutboundError> {
    let parsed = parse(url)?;
    let roots = match trust {
        Trust::CaFile(path) => ca_file_roots(path)?,
        Trust::System if parsed.scheme() == "https" => system_roots(url)?,
        // Plain HTTP with redirects off never makes a TLS handshake.
        Trust::System => RootCertStore::empty(),
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|err| OutboundError::Build(err.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    reqwest::Client::builder()
        .use_preconfigured_tls(tls)
        .redirect(reqwest::redirect::Policy::none())
        .timeout(timeout)
        .build()
        .map_err(|err| OutboundError::Build(err.to_string()))
}

/// Whether `url` is plain `http://` to a host other than loopback: the
/// signed posts then cross the network readable by anyone on the way.
pub fn plain_off_loopback(url: &str) -> bool {
    let Ok(url) = parse(url) else {
        return false;
    };
    if url.scheme() != "http" {
        return false;
    }
    let host = url.host_str().unwrap_or_default();
    // An IPv6 host keeps its brackets here.
    match host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<IpAddr>()
    {
        Ok(ip) => !ip.is_loopback(),
        Err(_) => !host.eq_ignore_ascii_case("localhost"),
    }
}

fn parse(url: &str) -> Result<Url, OutboundError> {
    let parsed = Url::parse(url).map_err(|err| OutboundError::Url {
        url: url.to_owned(),
        reason: err.to_string(),
    })?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host().is_none() {
        return Err(OutboundError::Scheme {
            url: url.to_owned(),
        });
    }
    Ok(parsed)
}

/// Every certificate of a PEM file, each a trust anchor; an unreadable
/// file, one without certificates or with one rustls cannot use is an error.
fn ca_file_roots(path: &Path) -> Result<RootCertStore, OutboundError> {
    let bad = |reason: String| OutboundError::CaFile {
        path: path.to_path_buf(),
        reason,
    };
    let text = std::fs::read(path).map_err(|err| bad(err.to_string()))?;
    let certs = CertificateDer::pem_slice_iter(&text)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|err| bad(format!("not PEM certificates: {err}")))?;
    if certs.is_empty() {
        return Err(bad("no PEM certificate in the file".to_owned()));
    }
    let mut roots = RootCertStore::empty();
    for (n, cert) in certs.into_iter().enumerate() {
        roots
            .add(cert)
            .map_err(|err| bad(format!("certificate {} is not usable: {err}", n + 1)))?;
    }
    Ok(roots)
}

fn system_roots(url: &str) -> Result<RootCertStore, OutboundError> {
    let found = rustls_native_certs::load_native_certs();
    let mut roots = RootCertStore::empty();
    let (added, _unusable) = roots.add_parsable_certificates(found.certs);
    if added == 0 {
        let reason = match found.errors.first() {
            Some(err) => err.to_string(),
            None => "it is empty".to_owned(),
        };
        return Err(OutboundError::NoSystemRoots {
            url: url.to_owned(),
            reason,
        });
    }
    for err in &found.errors {
        tracing::warn!(%err, "part of the system's trust store could not be read");
    }
    Ok(roots)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_http_to_another_host_counts_as_crossing_the_network_in_clear() {
        for (url, clear) in [
            ("http://central.example:8080", true),
            ("http://192.168.1.20:8080", true),
            ("http://127.0.0.1:8080", false),
            ("http://[::1]:8080", false),
            ("http://localhost:8080", false),
            ("https://central.example:8443", false),
        ] {
            assert_eq!(plain_off_loopback(url), clear, "{url}");
        }
    }

    #[test]
    fn a_url_without_an_http_scheme_or_host_and_a_bad_ca_file_are_refused() {
        for url in ["central.example:8443", "ftp://central.example", "not a url"] {
            let err = signed_post_client(url, &Trust::System, Duration::from_secs(10)).unwrap_err();
            assert!(
                matches!(
                    err,
                    OutboundError::Scheme { .. } | OutboundError::Url { .. }
                ),
                "{url}: {err}"
            );
        }
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.crt");
        let empty = dir.path().join("empty.crt");
        std::fs::write(&empty, "no certificate here\n").unwrap();
        let garbled = dir.path().join("garbled.crt");
        std::fs::write(
            &garbled,
            "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
        )
        .unwrap();
        for (path, says) in [
            (&missing, "No such file"),
            (&empty, "no PEM certificate"),
            (&garbled, "certificate 1 is not usable"),
        ] {
            let err = signed_post_client(
                "https://central.example",
                &Trust::CaFile(path.clone()),
                Duration::from_secs(10),
            )
            .unwrap_err()
            .to_string();
            assert!(err.contains(&path.display().to_string()), "{err}");
            assert!(err.contains(says), "{err}");
        }
    }
}
