//! `GET /v1/handheld/constants`: what the handheld page follows that the
//! site defines, served from its one definition here rather than written
//! again in the page's JavaScript: the command barcodes' payloads and what
//! each does (`commands::COMMANDS`, the sheet at `/commands`), the undo
//! window and the modes whose scans can be undone (the core's
//! `stockhop::undo`, which the ledger checks an `undo` with). The page
//! reads it at start and keeps the last answer for starts offline. No
//! token: it holds nothing a device or a person must prove a right to.

use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::Serialize;
use stockhop::undo::{mode_undoable, UNDO_WINDOW};
use stockhop::wire::Mode;

use crate::shell::commands::COMMANDS;
use crate::state::AppState;

/// The route, merged into the site router.
pub fn routes() -> Router<AppState> {
    Router::new().route("/v1/handheld/constants", get(constants))
}

/// The answer.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct HandheldConstants {
    /// How long after a scan's capture an undo of it is honoured, between
    /// the two capture instants.
    pub undo_window_ms: u64,
    /// The modes whose scans can be undone (wire names).
    pub undoable_modes: Vec<&'static str>,
    /// The command barcodes, in the sheet's order.
    pub commands: Vec<Command>,
}

/// One command barcode: what the scanner types, and what the page does.
/// `CommandBarcode` in the OpenAPI document: `Command` there is a sync
/// item's command (`open_session`, `scan`, …).
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[schema(as = CommandBarcode)]
pub struct Command {
    pub payload: &'static str,
    /// `close`, `undo`, `mode` or `confirm`.
    pub action: &'static str,
}

/// The constants as this build of the site defines them.
pub fn handheld_constants() -> HandheldConstants {
    HandheldConstants {
        undo_window_ms: UNDO_WINDOW.0,
        undoable_modes: Mode::ALL
            .into_iter()
            .filter(|mode| mode_undoable(*mode))
            .map(Mode::as_str)
            .collect(),
        commands: COMMANDS
            .iter()
            .map(|command| Command {
                payload: command.payload,
                action: command.action,
            })
            .collect(),
    }
}

#[utoipa::path(
    get,
    path = "/v1/handheld/constants",
    tag = "ledger",
    description = "What the handheld page follows that the site defines: the command barcodes, the undo window, the modes that undo",
    responses((status = 200, description = "the constants", body = HandheldConstants))
)]
pub async fn constants() -> Response {
    let mut response = Json(handheld_constants()).into_response();
    // Revalidated on each start: a site upgraded in place answers its new
    // values at once.
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_constants_are_the_sites_one_definition() {
        let constants = handheld_constants();
        assert_eq!(constants.undo_window_ms, UNDO_WINDOW.0);
        assert!(!constants.undoable_modes.contains(&"find_unit"));
        assert_eq!(constants.undoable_modes.len(), Mode::ALL.len() - 1);
        let payloads: Vec<_> = constants.commands.iter().map(|c| c.payload).collect();
        assert_eq!(
            payloads,
            COMMANDS.iter().map(|c| c.payload).collect::<Vec<_>>()
        );
        let actions: Vec<_> = constants.commands.iter().map(|c| c.action).collect();
        assert_eq!(actions, ["close", "undo", "mode", "confirm"]);
    }
}
