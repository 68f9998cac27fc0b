//! The site's view: what the handhelds hold, for the people who run the
//! site. One page at `/site/` ([`page`]), the same facts as JSON at
//! `/v1/site/status` and `/v1/site/series`, and Prometheus text at
//! `/metrics`, all for admin tokens only ([`admin`]).
//!
//! [`status`] (devices online and offline by profile, the trend),
//! [`summary`] (the same in brief, for the central),
//! [`alerts`] (the conditions raised to a webhook),
//! [`history`] (the heartbeat history behind the chart), [`chart`] (the
//! chart as SVG), [`decisions`] (what waits for a person), [`enroll`]
//! (setup links and their QR codes), [`builds`] (the fleet by build,
//! `/v1/site/builds`), [`workbench`] (every decision with its context, and
//! how it is settled), [`metrics`], [`api`] with [`workbench_api`] and
//! [`printers`] and [`terminals`] (the handlers, the only modules that see a request) and
//! [`sign_in`] (the throttle on failed sign-ins in front of them).
//!
//! Like the ledger, everything below [`api`] takes the connection and
//! `now` as arguments.

pub mod admin;
pub mod alerts;
pub mod api;
pub mod builds;
pub mod chart;
pub mod decisions;
pub mod enroll;
pub mod history;
pub mod metrics;
pub mod page;
pub mod printers;
pub mod request;
pub mod sign_in;
pub mod station_labels;
pub mod status;
pub mod summary;
pub mod terminals;
pub mod workbench;
pub mod workbench_api;

/// The codes the view answers beside the ledger's.
pub mod codes {
    /// The request carried no admin token or session (or a device's token).
    pub const ADMIN_REQUIRED: &str = "ADMIN_REQUIRED";
    /// A state-changing request from a session without its CSRF token.
    pub const CSRF_REJECTED: &str = "CSRF_REJECTED";
    pub const INVALID_ADMIN: &str = "INVALID_ADMIN";
    pub const ADMIN_EXISTS: &str = "ADMIN_EXISTS";
    pub const ADMIN_NOT_FOUND: &str = "ADMIN_NOT_FOUND";
}
