//! Enrolling a handheld: its setup link (the site's HTTPS address, the
//! device id and its token in the URL fragment, which never reaches a
//! server log) and that link as a QR code the handheld's own scanner reads
//! into its setup field.

use crate::store::sql::{Connection, OptionalExtension};
use qrcode::render::svg;
use qrcode::{EcLevel, QrCode};

/// The `site_meta` key under which `serve` records the HTTPS address the
/// dashboard's setup links use.
pub const SITE_URL_KEY: &str = "site_url";

/// The `https://HOST:PORT` handhelds are set up with: `first_name` (the
/// first `--tls-name`), else this machine's host name, else `localhost`;
/// the port is left out when it is 443.
pub fn site_url(first_name: Option<&str>, https_port: u16) -> String {
    let host = first_name
        .map(str::to_owned)
        .or_else(crate::net::tls::host_name)
        .unwrap_or_else(|| "localhost".into());
    let host = match host.parse::<std::net::Ipv6Addr>() {
        Ok(v6) => format!("[{v6}]"),
        Err(_) => host,
    };
    match https_port {
        443 => format!("https://{host}"),
        port => format!("https://{host}:{port}"),
    }
}

/// `SITE/#site=SITE&device=ID&token=TOKEN`, each value form-encoded.
pub fn setup_link(site: &str, device_id: &str, token: &str) -> String {
    let site = site.trim_end_matches('/');
    let fragment = form_urlencoded::Serializer::new(String::new())
        .append_pair("site", site)
        .append_pair("device", device_id)
        .append_pair("token", token)
        .finish();
    format!("{site}/#{fragment}")
}

/// Pixels per QR module in the SVG: the page scales it, this only sets the
/// intrinsic size (a version-6 code at 4 px is about 200 px wide).
const QR_MODULE_PX: u32 = 4;

/// `text` as a QR code in SVG, medium error correction (a screen scanned
/// at an angle, a smudge on the glass).
pub fn qr_svg(text: &str) -> Result<String, qrcode::types::QrError> {
    let code = QrCode::with_error_correction_level(text.as_bytes(), EcLevel::M)?;
    Ok(code
        .render::<svg::Color<'_>>()
        .module_dimensions(QR_MODULE_PX, QR_MODULE_PX)
        .quiet_zone(true)
        .build())
}

/// Records the address setup links use (done by `serve` at start).
pub fn remember_site_url(conn: &Connection, url: &str) -> crate::store::sql::Result<()> {
    conn.execute(
        "INSERT INTO site_meta (key, value) VALUES (?1, ?2)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        [SITE_URL_KEY, url],
    )?;
    Ok(())
}

/// The address `serve` recorded, if any.
pub fn remembered_site_url(conn: &Connection) -> crate::store::sql::Result<Option<String>> {
    conn.query_row(
        "SELECT value FROM site_meta WHERE key = ?1",
        [SITE_URL_KEY],
        |row| row.get(0),
    )
    .optional()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_setup_link_carries_site_device_and_token_in_its_fragment() {
        assert_eq!(
            setup_link("https://stockhop.lan:8443/", "HH-1", "ab12"),
            "https://stockhop.lan:8443/#site=https%3A%2F%2Fstockhop.lan%3A8443&device=HH-1&token=ab12"
        );
        assert_eq!(site_url(Some("stockhop.lan"), 443), "https://stockhop.lan");
        assert_eq!(site_url(Some("::1"), 8443), "https://[::1]:8443");
    }

    #[test]
    fn a_setup_link_renders_as_an_svg_qr_code() {
        let svg = qr_svg(&setup_link(
            "https://stockhop.lan:8443",
            "HH-1",
            &"f".repeat(64),
        ))
        .unwrap();
        assert!(svg.contains("<svg"), "{svg}");
        assert!(svg.contains("<path"), "{svg}");
    }
}
