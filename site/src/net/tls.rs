//! HTTPS on the site LAN: the certificate the site serves and the rustls
//! configuration around it.
//!
//! Browsers run service workers only in a secure context, so a handheld that
//! opens the PWA at `http://192.168.1.20:8080` gets no offline queue at all.
//! The site therefore serves the PWA and the handheld API over TLS. It either
//! takes a certificate and key the site already has (`--tls-cert`,
//! `--tls-key`), or keeps a site CA of its own in `DATA/tls/` and issues a
//! server certificate from it for every name the site is reached by. The CA
//! certificate is what a device trusts once; it is kept across restarts, and
//! a changed set of names (or a certificate close to expiry) re-issues only
//! the server certificate.
//!
//! [`CertStore`] is the one place that reads these files. It hands rustls a
//! resolver ([`ReloadableCert`]) whose certificate can be swapped while the
//! server runs (SIGHUP), so a renewed certificate takes effect for new
//! handshakes without dropping the connections already open.

use std::collections::BTreeSet;
use std::fs;
use std::io::Write;
use std::net::IpAddr;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::{Duration, SystemTime};

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose,
};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

/// The site CA's lifetime. Devices trust it once (by hand or by MDM), so it
/// outlives any handheld fleet's refresh cycle.
pub const CA_VALIDITY_DAYS: i64 = 10 * 365;
/// The server certificate's lifetime: within the 398 days browsers accept
/// for a leaf certificate, so the same rule holds if the CA is ever
/// installed as a managed root.
pub const SERVER_VALIDITY_DAYS: i64 = 397;
/// A server certificate with less than this left is re-issued at start, on
/// SIGHUP and by the daily check, long before any handheld sees it expire.
pub const SERVER_RENEW_BEFORE_DAYS: i64 = 30;
/// How often a running site checks whether its own server certificate is
/// due for renewal.
pub const RENEW_CHECK_INTERVAL: Duration = Duration::from_secs(24 * 60 * 60);
/// Mode of the private key files: readable by the site's own user only.
const PRIVATE_KEY_MODE: u32 = 0o600;

const CA_CERT_FILE: &str = "ca.crt";
const CA_KEY_FILE: &str = "ca.key";
const SERVER_CERT_FILE: &str = "server.crt";
const SERVER_KEY_FILE: &str = "server.key";

#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("{path}: {message}")]
    File { path: PathBuf, message: String },
    #[error("--tls-name {0:?} is neither a DNS name nor an IP address")]
    BadName(String),
    #[error("issuing a certificate: {0}")]
    Issue(#[from] rcgen::Error),
}

impl TlsError {
    fn file(path: &Path, message: impl std::fmt::Display) -> Self {
        TlsError::File {
            path: path.to_path_buf(),
            message: message.to_string(),
        }
    }
}

/// Where the served certificate comes from.
#[derive(Debug, Clone)]
pub enum CertSource {
    /// The site's own certificate chain and key (PEM files it manages).
    Own { cert: PathBuf, key: PathBuf },
    /// The site CA in `dir` (`DATA/tls/`), issuing a server certificate for
    /// `names`.
    SiteCa { dir: PathBuf, names: Vec<SiteName> },
}

/// A name the server certificate covers: a DNS name or an IP address.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum SiteName {
    Dns(String),
    Ip(IpAddr),
}

impl SiteName {
    /// Reads a `--tls-name`: an IP address, else a DNS name (letters,
    /// digits, hyphens and dots; a leading `*.` for a wildcard).
    pub fn parse(text: &str) -> Result<Self, TlsError> {
        if let Ok(ip) = text.parse::<IpAddr>() {
            return Ok(SiteName::Ip(ip));
        }
        let name = text.trim_end_matches('.').to_ascii_lowercase();
        let body = name.strip_prefix("*.").unwrap_or(&name);
        let labels_ok = !body.is_empty()
            && name.len() <= 253
            && body.split('.').all(|label| {
                !label.is_empty()
                    && label.len() <= 63
                    && !label.starts_with('-')
                    && !label.ends_with('-')
                    && label
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'-')
            });
        if labels_ok {
            Ok(SiteName::Dns(name))
        } else {
            Err(TlsError::BadName(text.to_string()))
        }
    }

    fn as_text(&self) -> String {
        match self {
            SiteName::Dns(name) => name.clone(),
            SiteName::Ip(ip) => ip.to_string(),
        }
    }
}

impl std::fmt::Display for SiteName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.as_text())
    }
}

/// The names every generated server certificate covers: loopback by name
/// and address, this machine's host name, and each `--tls-name`.
pub fn site_names(host_name: Option<&str>, extra: &[String]) -> Result<Vec<SiteName>, TlsError> {
    let mut names = BTreeSet::new();
    names.insert(SiteName::Dns("localhost".into()));
    names.insert(SiteName::Ip(IpAddr::from([127, 0, 0, 1])));
    names.insert(SiteName::Ip("::1".parse().expect("literal address")));
    if let Some(host) = host_name {
        // A host name that is not a valid DNS name (rare, but possible on
        // a hand-configured machine) is left out rather than refused: the
        // site is still reached by its --tls-name entries.
        if let Ok(name) = SiteName::parse(host) {
            names.insert(name);
        }
    }
    for name in extra {
        names.insert(SiteName::parse(name)?);
    }
    Ok(names.into_iter().collect())
}

/// This machine's host name, if the OS has one that is valid text.
pub fn host_name() -> Option<String> {
    gethostname::gethostname()
        .into_string()
        .ok()
        .filter(|name| !name.is_empty())
}

/// What [`CertStore::prepare`] did with the site CA's files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Issued {
    /// The site's own certificate: nothing issued.
    Own,
    /// The CA and server certificate on disk were still right.
    Reused,
    /// A new CA and server certificate (first start).
    NewCa,
    /// A new server certificate from the kept CA (names changed, close to
    /// expiry, or the file was missing).
    NewServer,
}

/// The served certificate's files, and the resolver rustls reads.
#[derive(Debug, Clone)]
pub struct CertStore {
    source: CertSource,
    resolver: Arc<ReloadableCert>,
}

impl CertStore {
    /// Makes sure the certificate files exist and are current (issuing
    /// from the site CA when needed), then loads them. A missing or
    /// unreadable file is an error naming it.
    pub fn open(source: CertSource) -> Result<(Self, Issued), TlsError> {
        let issued = prepare(&source, SystemTime::now())?;
        let key = load(&source)?;
        let store = CertStore {
            source,
            resolver: Arc::new(ReloadableCert {
                current: RwLock::new(Arc::new(key)),
            }),
        };
        Ok((store, issued))
    }

    /// Re-reads the files (re-issuing a site CA certificate that is due),
    /// and serves them to new handshakes. On error the certificate being
    /// served stays in place.
    pub fn reload(&self) -> Result<Issued, TlsError> {
        let issued = prepare(&self.source, SystemTime::now())?;
        let key = load(&self.source)?;
        *self
            .resolver
            .current
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Arc::new(key);
        Ok(issued)
    }

    /// The site CA certificate devices install, when the site issues its
    /// own (none when it serves a certificate of its own PKI).
    pub fn ca_cert_path(&self) -> Option<PathBuf> {
        match &self.source {
            CertSource::SiteCa { dir, .. } => Some(dir.join(CA_CERT_FILE)),
            CertSource::Own { .. } => None,
        }
    }

    /// A rustls server configuration over this store's resolver, offering
    /// HTTP/2 and HTTP/1.1 by ALPN, HTTP/2 first (`server.rs` serves the
    /// protocol the handshake agreed on).
    pub fn server_config(&self) -> Arc<rustls::ServerConfig> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("the ring provider supports the default protocol versions")
            .with_no_client_auth()
            .with_cert_resolver(self.resolver.clone());
        config.alpn_protocols = vec![ALPN_H2.to_vec(), b"http/1.1".to_vec()];
        Arc::new(config)
    }
}

/// HTTP/2's name in ALPN.
pub const ALPN_H2: &[u8] = b"h2";

/// The certificate rustls hands out, swapped in place on reload.
#[derive(Debug)]
pub struct ReloadableCert {
    current: RwLock<Arc<CertifiedKey>>,
}

impl ResolvesServerCert for ReloadableCert {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(
            self.current
                .read()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .clone(),
        )
    }
}

fn prepare(source: &CertSource, now: SystemTime) -> Result<Issued, TlsError> {
    let CertSource::SiteCa { dir, names } = source else {
        return Ok(Issued::Own);
    };
    fs::create_dir_all(dir).map_err(|err| TlsError::file(dir, err))?;
    let ca_cert = dir.join(CA_CERT_FILE);
    let ca_key = dir.join(CA_KEY_FILE);
    let server_cert = dir.join(SERVER_CERT_FILE);
    let server_key = dir.join(SERVER_KEY_FILE);

    let mut issued = Issued::Reused;
    match (ca_cert.exists(), ca_key.exists()) {
        (false, false) => {
            new_ca(&ca_cert, &ca_key)?;
            issued = Issued::NewCa;
        }
        (true, true) => {}
        // Half a CA is a damaged data directory, not a first start: making
        // a new CA would silently untrust every device.
        (false, true) => return Err(TlsError::file(&ca_cert, "missing, but ca.key is there")),
        (true, false) => return Err(TlsError::file(&ca_key, "missing, but ca.crt is there")),
    }
    let current = if issued == Issued::NewCa {
        None
    } else {
        server_cert_state(&server_cert, &server_key, now)?
    };
    let due = match current {
        None => true,
        Some(state) => state.names != *names || state.expires_in_days < SERVER_RENEW_BEFORE_DAYS,
    };
    if due {
        new_server_cert(&ca_cert, &ca_key, &server_cert, &server_key, names)?;
        if issued == Issued::Reused {
            issued = Issued::NewServer;
        }
    }
    Ok(issued)
}

struct ServerCertState {
    names: Vec<SiteName>,
    expires_in_days: i64,
}

/// The names and remaining lifetime of the server certificate on disk;
/// `None` when it (or its key) is not there yet.
fn server_cert_state(
    cert: &Path,
    key: &Path,
    now: SystemTime,
) -> Result<Option<ServerCertState>, TlsError> {
    if !cert.exists() || !key.exists() {
        return Ok(None);
    }
    let der = read_certs(cert)?
        .into_iter()
        .next()
        .ok_or_else(|| TlsError::file(cert, "no certificate in the file"))?;
    let (_, parsed) = x509_parser::parse_x509_certificate(&der)
        .map_err(|err| TlsError::file(cert, format!("not a certificate: {err}")))?;
    let mut names = BTreeSet::new();
    if let Ok(Some(san)) = parsed.subject_alternative_name() {
        for name in &san.value.general_names {
            match name {
                x509_parser::extensions::GeneralName::DNSName(dns) => {
                    names.insert(SiteName::Dns(dns.to_string()));
                }
                x509_parser::extensions::GeneralName::IPAddress(bytes) => {
                    let ip = match bytes.len() {
                        4 => <[u8; 4]>::try_from(*bytes).map(IpAddr::from).ok(),
                        16 => <[u8; 16]>::try_from(*bytes).map(IpAddr::from).ok(),
                        _ => None,
                    };
                    if let Some(ip) = ip {
                        names.insert(SiteName::Ip(ip));
                    }
                }
                _ => {}
            }
        }
    }
    let now_s = now
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let expires_in_days = (parsed.validity().not_after.timestamp() - now_s) / 86_400;
    Ok(Some(ServerCertState {
        names: names.into_iter().collect(),
        expires_in_days,
    }))
}

fn new_ca(cert_path: &Path, key_path: &Path) -> Result<(), TlsError> {
    let key = KeyPair::generate()?;
    let mut params = CertificateParams::default();
    let mut dn = DistinguishedName::new();
    dn.push(DnType::OrganizationName, "Stockhop site");
    dn.push(
        DnType::CommonName,
        format!(
            "Stockhop site CA ({})",
            host_name().unwrap_or_else(|| "site".into())
        ),
    );
    params.distinguished_name = dn;
    params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let now = time::OffsetDateTime::now_utc();
    params.not_before = now - time::Duration::days(1);
    params.not_after = now + time::Duration::days(CA_VALIDITY_DAYS);
    let cert = params.self_signed(&key)?;
    // The key first: a crash between the two writes leaves a key without a
    // certificate, which the next start reports instead of overwriting.
    write_private(key_path, &key.serialize_pem())?;
    write_public(cert_path, &cert.pem())
}

fn new_server_cert(
    ca_cert: &Path,
    ca_key: &Path,
    cert_path: &Path,
    key_path: &Path,
    names: &[SiteName],
) -> Result<(), TlsError> {
    let ca_key_pem = read_text(ca_key)?;
    let ca_key = KeyPair::from_pem(&ca_key_pem).map_err(|err| TlsError::file(ca_key, err))?;
    let ca_cert_pem = read_text(ca_cert)?;
    let issuer = Issuer::from_ca_cert_pem(&ca_cert_pem, ca_key)
        .map_err(|err| TlsError::file(ca_cert, err))?;

    let key = KeyPair::generate()?;
    let mut params =
        CertificateParams::new(names.iter().map(SiteName::as_text).collect::<Vec<_>>())?;
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, names[0].as_text());
    params.distinguished_name = dn;
    params.is_ca = IsCa::ExplicitNoCa;
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    params.use_authority_key_identifier_extension = true;
    let now = time::OffsetDateTime::now_utc();
    params.not_before = now - time::Duration::days(1);
    params.not_after = now + time::Duration::days(SERVER_VALIDITY_DAYS);
    let cert = params.signed_by(&key, &issuer)?;
    write_private(key_path, &key.serialize_pem())?;
    // The served chain: the server certificate, then the CA, so a client
    // that has the CA installed finds its issuer either way.
    write_public(cert_path, &format!("{}{}", cert.pem(), ca_cert_pem))
}

fn load(source: &CertSource) -> Result<CertifiedKey, TlsError> {
    let (cert, key) = match source {
        CertSource::Own { cert, key } => (cert.clone(), key.clone()),
        CertSource::SiteCa { dir, .. } => (dir.join(SERVER_CERT_FILE), dir.join(SERVER_KEY_FILE)),
    };
    let chain = read_certs(&cert)?;
    if chain.is_empty() {
        return Err(TlsError::file(&cert, "no PEM certificate in the file"));
    }
    let private = PrivateKeyDer::from_pem_slice(read_text(&key)?.as_bytes())
        .map_err(|err| TlsError::file(&key, format!("no PEM private key: {err}")))?;
    let provider = rustls::crypto::ring::default_provider();
    CertifiedKey::from_der(chain, private, &provider)
        .map_err(|err| TlsError::file(&key, format!("does not fit {}: {err}", cert.display())))
}

fn read_text(path: &Path) -> Result<String, TlsError> {
    fs::read_to_string(path).map_err(|err| TlsError::file(path, err))
}

fn read_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let text = read_text(path)?;
    CertificateDer::pem_slice_iter(text.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|err| TlsError::file(path, format!("not PEM certificates: {err}")))
}

/// Writes a private key with mode 0600, through a temporary file renamed
/// into place, so a crash never leaves half a key.
fn write_private(path: &Path, pem: &str) -> Result<(), TlsError> {
    write_atomically(path, pem, PRIVATE_KEY_MODE)
}

fn write_public(path: &Path, pem: &str) -> Result<(), TlsError> {
    write_atomically(path, pem, 0o644)
}

fn write_atomically(path: &Path, text: &str, mode: u32) -> Result<(), TlsError> {
    let tmp = path.with_extension("tmp");
    let result = (|| {
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(mode)
            .open(&tmp)?;
        // `mode` on open applies only to a new file; a leftover temporary
        // keeps whatever it had, so set it again.
        file.set_permissions(fs::Permissions::from_mode(mode))?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        fs::rename(&tmp, path)?;
        if let Some(dir) = path.parent() {
            fs::File::open(dir)?.sync_all()?;
        }
        Ok::<_, std::io::Error>(())
    })();
    result.map_err(|err| TlsError::file(path, err))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_name(text: &str, expected: Option<SiteName>) {
        assert_eq!(SiteName::parse(text).ok(), expected, "{text}");
    }

    #[test]
    fn tls_names_are_dns_names_or_addresses() {
        check_name("stockhop.lan", Some(SiteName::Dns("stockhop.lan".into())));
        check_name(
            "Site-1.Example.",
            Some(SiteName::Dns("site-1.example".into())),
        );
        check_name("*.dock.lan", Some(SiteName::Dns("*.dock.lan".into())));
        check_name("192.168.1.20", Some(SiteName::Ip([192, 168, 1, 20].into())));
        check_name("fe80::1", Some(SiteName::Ip("fe80::1".parse().unwrap())));
        check_name("", None);
        check_name("bad name", None);
        check_name("-lead.lan", None);
        check_name("a..b", None);
        check_name("http://x", None);
    }

    #[test]
    fn site_names_always_cover_loopback_and_the_host() {
        let names = site_names(Some("dock-pc"), &["stockhop.lan".into()]).unwrap();
        let texts: Vec<String> = names.iter().map(SiteName::as_text).collect();
        for expected in ["localhost", "127.0.0.1", "::1", "dock-pc", "stockhop.lan"] {
            assert!(texts.contains(&expected.to_string()), "{texts:?}");
        }
        assert!(site_names(None, &["no way".into()]).is_err());
    }
}
