//! Network label printers (profile `zt411r`): bin and unit labels, and
//! tags written and read back, over the printer's raw port in ZPL II.
//!
//! [`zpl`] (the formats and the parsers of the printer's answers, sans-IO),
//! [`link`] (the only code on a printer's socket), [`store`] (printers, their
//! last status and the print-job log, the one place with their SQL, and the
//! ENCODE hop a verified tag posts) and [`driver`] (the one task that polls
//! every printer and sends its jobs); [`station`] is what the ledger's
//! receive rule calls to print and encode a unit's label at the printer
//! of the handheld's station. The HTTP side is the site's view's
//! (`view::printers`); the wire facts are in `docs/printers.md`.
//!
//! Architecture invariant: a job reaches a printer only from the job log,
//! after it was durably marked `sending`; nothing is sent again on its own
//! once its format went out whole.

pub mod driver;
pub mod link;
pub mod station;
pub mod store;
pub mod zpl;

/// The codes the printers' endpoints answer beside the ledger's.
pub mod codes {
    pub const INVALID_PRINTER: &str = "INVALID_PRINTER";
    pub const PRINTER_NOT_FOUND: &str = "PRINTER_NOT_FOUND";
    pub const JOB_NOT_FOUND: &str = "JOB_NOT_FOUND";
    pub const UNIT_NOT_FOUND: &str = "UNIT_NOT_FOUND";
    pub const BIN_NOT_FOUND: &str = "BIN_NOT_FOUND";
    pub const INVALID_LABEL: &str = "INVALID_LABEL";
    /// A device token that may not print: not a handheld, not
    /// commissioned, or without a receive session open.
    pub const PRINT_NOT_ALLOWED: &str = "PRINT_NOT_ALLOWED";
}
