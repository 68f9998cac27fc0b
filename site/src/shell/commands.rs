//! The command barcodes: a printable page (`GET /commands`) of Code 128
//! barcodes an operator scans into the handheld's scan field instead of
//! touching the screen (close the session, undo the last scan, switch
//! mode, confirm). The handheld page recognises the same payloads, read
//! from `GET /v1/handheld/constants` (`handheld_constants.rs`); the barcodes are drawn by `barcoders` as SVG once, when
//! the page is first asked for, and the page is compiled into the binary
//! like the site's view.

use std::sync::LazyLock;

use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use barcoders::generators::svg::{Color, SVG};
use barcoders::sym::code128::Code128;

use crate::state::AppState;

/// One command barcode: what it does, for the sheet, and what the scanner
/// types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandBarcode {
    pub label: &'static str,
    pub help: &'static str,
    pub payload: &'static str,
    /// What the handheld page does on it: `close`, `undo`, `mode` or
    /// `confirm`.
    pub action: &'static str,
}

/// The commands, in the order the sheet prints them; the handheld page
/// reads them from `GET /v1/handheld/constants`.
pub const COMMANDS: [CommandBarcode; 4] = [
    CommandBarcode {
        label: "Close session",
        help: "Closes the open session; what it captured drains on.",
        payload: "STOCKHOP:CLOSE",
        action: "close",
    },
    CommandBarcode {
        label: "Undo last",
        help: "Undoes this session's last scan, within 120 s of capturing it.",
        payload: "STOCKHOP:UNDO",
        action: "undo",
    },
    CommandBarcode {
        label: "Switch mode",
        help: "Closes the open session and shows the modes this device runs.",
        payload: "STOCKHOP:MODE",
        action: "mode",
    },
    CommandBarcode {
        label: "Confirm",
        help: "Acknowledges the alert on the screen (an unmatched tag at the dock), or answers yes to the question on it (closes the count).",
        payload: "STOCKHOP:CONFIRM",
        action: "confirm",
    },
];

/// Height of a barcode's bars in modules (the SVG's own units; the page
/// scales it): tall enough that a scanner's line crosses it from any
/// angle a hand holds it.
const BAR_HEIGHT_MODULES: u32 = 60;

const PAGE_CSS: &str = include_str!("commands.css");

/// The routes of the command sheet, merged into the site router.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route(
            "/commands",
            get(|| async { page("text/html; charset=utf-8", &PAGE) }),
        )
        .route(
            "/commands.css",
            get(|| async { page("text/css; charset=utf-8", PAGE_CSS) }),
        )
}

/// A command's barcode as an SVG element: Code 128 in character set B
/// (every payload is printable ASCII), bars black on white, sized by the
/// page's stylesheet (the SVG has a view box and no size of its own).
pub fn barcode_svg(payload: &str) -> String {
    // 'Ɓ' starts character set B, as barcoders spells it.
    let code = Code128::new(format!("\u{0181}{payload}"))
        .unwrap_or_else(|err| panic!("command payload {payload:?} is not Code 128 B: {err}"));
    SVG::new(BAR_HEIGHT_MODULES)
        .xmlns("http://www.w3.org/2000/svg".into())
        .foreground(Color::black())
        .background(Color::white())
        .generate(code.encode())
        .unwrap_or_else(|err| panic!("drawing {payload:?}: {err}"))
}

static PAGE: LazyLock<String> = LazyLock::new(render);

fn render() -> String {
    let mut cards = String::new();
    for command in COMMANDS {
        cards.push_str(&format!(
            "<figure class=\"command\" data-payload=\"{payload}\">\n<div class=\"bars\" role=\"img\" aria-label=\"barcode {payload}\">{svg}</div>\n<figcaption><strong>{label}</strong><code>{payload}</code><span>{help}</span></figcaption>\n</figure>\n",
            payload = command.payload,
            svg = barcode_svg(command.payload),
            label = command.label,
            help = command.help,
        ));
    }
    format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>Stockhop · command barcodes</title>\n<link rel=\"stylesheet\" href=\"/commands.css\">\n</head>\n<body>\n<header><h1>Command barcodes</h1><p>Scan one into the handheld's scan field, in any mode. Print this page (Code 128) and keep it at the workstation.</p><nav><a id=\"commands-back\" href=\"/\">Back to the handheld</a></nav></header>\n<main id=\"commands\">\n{cards}</main>\n</body>\n</html>\n"
    )
}

fn page(content_type: &'static str, body: &str) -> Response {
    let mut response = body.to_owned().into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'self'; style-src 'self'; script-src 'none'; frame-ancestors 'none'",
        ),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The black modules of a barcoders SVG (one `<rect>` per module run,
    /// the first being the white background), as a row of booleans.
    fn modules(svg: &str) -> Vec<bool> {
        let attr = |rect: &str, name: &str| -> u32 {
            let start = rect.find(&format!(" {name}=\"")).expect(name) + name.len() + 3;
            let end = start + rect[start..].find('"').unwrap();
            rect[start..end].parse().unwrap()
        };
        let rects: Vec<&str> = svg.split("<rect").skip(1).collect();
        let mut row = vec![false; attr(rects[0], "width") as usize];
        for rect in &rects[1..] {
            assert!(rect.contains("fill=\"#000000\""), "a bar is black: {rect}");
            let x = attr(rect, "x") as usize;
            for module in &mut row[x..x + attr(rect, "width") as usize] {
                *module = true;
            }
        }
        row
    }

    /// The modules as the bars (and the space after each) a scanner reads.
    fn bars(row: &[bool]) -> Vec<code128::Bar> {
        let mut runs = Vec::new();
        let mut i = row.iter().position(|&m| m).expect("a bar");
        while i < row.len() {
            let width = row[i..].iter().take_while(|&&m| m).count();
            let space = row[i + width..].iter().take_while(|&&m| !m).count();
            runs.push(code128::Bar {
                width: width as u8,
                space: space as u8,
            });
            i += width + space;
        }
        runs
    }

    #[test]
    fn every_command_barcode_decodes_to_its_payload() {
        for command in COMMANDS {
            let read = code128::decode_str(&bars(&modules(&barcode_svg(command.payload))));
            assert_eq!(read.as_deref().ok(), Some(command.payload), "{read:?}");
        }
    }

    #[test]
    fn every_command_draws_as_a_code_128_svg_on_the_sheet() {
        let page = render();
        for command in COMMANDS {
            let svg = barcode_svg(command.payload);
            assert!(svg.starts_with("<svg"), "{svg}");
            assert!(svg.contains("<rect"), "bars drawn: {svg}");
            assert!(page.contains(&svg), "{} on the sheet", command.payload);
            assert!(page.contains(&format!("data-payload=\"{}\"", command.payload)));
        }
    }
}
