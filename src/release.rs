//! Releases, sans-IO: the IndexedDB schema this build writes, whether a
//! worker may run on a schema another build wrote, and how a handheld
//! names its build (and a stop) in the heartbeat's `app_version`.
//!
//! A release is one build of the shell (the page, the worker script, the
//! wasm and its glue); the site names it by a hash of those files' bytes
//! (`stockhop-site`'s `release` module) and serves the id inside `sw.js`,
//! so the worker learns its own build from the script it runs.
//!
//! Schema policy: upgrades only ever add (every queued item is kept, each
//! step tested from every released version with items queued). A rollback
//! meets a schema newer than its own; the newer build declares in the
//! database (the meta store's [`SCHEMA_RECORD`]) the oldest schema whose
//! workers may keep capturing on it. An older worker runs only if it is
//! that old or newer; otherwise it stops capture and says why, and the
//! queue is left as it is for the newer build to send.

/// The IndexedDB schema this build writes (its steps: `web::schema`).
pub const SCHEMA_VERSION: u32 = 4;

/// The oldest schema whose workers may keep capturing on a database at
/// this build's schema: written into the database by this build's worker
/// once its queue is open (`sw.js`). v3 only
/// added stores, but workers before v3 predate this declaration and the
/// reference cache, so only v3 workers are declared compatible. v4 only
/// adds indexes and a store a v3 worker never opens, so v3 workers stay
/// compatible and a rollback keeps capturing; the SKUs its pulls pass
/// over reach the cache again when the site changes them.
pub const OLDEST_COMPATIBLE_SCHEMA: u32 = 3;

/// The meta store's record that holds the declaration:
/// `{name: "schema", value: {version, oldest_compatible}}`.
pub const SCHEMA_RECORD: &str = "schema";

/// What a worker of schema `ours` does with a database at `stored`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaFit {
    /// The database is this build's schema, or older: upgrade (if needed)
    /// and run.
    Run,
    /// A newer schema that declares this build compatible: run on it as it
    /// is, without an upgrade.
    NewerCompatible,
    /// A newer schema this build may not write: stop capture.
    NewerIncompatible,
}

/// The policy: `oldest_compatible` is the newer database's declaration
/// (`None` when it has none: then only its own schema is compatible).
pub fn schema_fit(ours: u32, stored: u32, oldest_compatible: Option<u32>) -> SchemaFit {
    if stored <= ours {
        return SchemaFit::Run;
    }
    match oldest_compatible {
        Some(oldest) if oldest <= ours => SchemaFit::NewerCompatible,
        _ => SchemaFit::NewerIncompatible,
    }
}

/// A heartbeat's `app_version` read back: the build the worker runs and,
/// when it is not capturing, the code of why (`SCHEMA_NEWER`, a failed
/// module start `INIT_FAILED`, …). On the wire it is the build id alone,
/// or the id, one space and the code. Older builds sent the crate version
/// (`0.1.0`), which reads as a build with no problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportedBuild<'a> {
    pub build: &'a str,
    pub problem: Option<&'a str>,
}

/// Reads an `app_version`.
pub fn read_app_version(app_version: &str) -> ReportedBuild<'_> {
    match app_version.trim().split_once(' ') {
        Some((build, problem)) => ReportedBuild {
            build,
            problem: Some(problem.trim()).filter(|p| !p.is_empty()),
        },
        None => ReportedBuild {
            build: app_version.trim(),
            problem: None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_or_an_older_schema_runs() {
        assert_eq!(schema_fit(3, 3, None), SchemaFit::Run);
        assert_eq!(schema_fit(3, 1, None), SchemaFit::Run);
        assert_eq!(schema_fit(3, 2, Some(2)), SchemaFit::Run);
    }

    #[test]
    fn a_newer_schema_runs_only_when_it_declares_this_one_compatible() {
        assert_eq!(schema_fit(3, 4, Some(3)), SchemaFit::NewerCompatible);
        assert_eq!(schema_fit(3, 5, Some(2)), SchemaFit::NewerCompatible);
        assert_eq!(schema_fit(3, 4, Some(4)), SchemaFit::NewerIncompatible);
        assert_eq!(schema_fit(3, 4, None), SchemaFit::NewerIncompatible);
    }

    #[test]
    fn app_version_reads_as_build_and_problem() {
        let plain = read_app_version("3f9ac2d41b7e0a55");
        assert_eq!(plain.build, "3f9ac2d41b7e0a55");
        assert_eq!(plain.problem, None);
        let stopped = read_app_version("3f9ac2d41b7e0a55 SCHEMA_NEWER");
        assert_eq!(stopped.build, "3f9ac2d41b7e0a55");
        assert_eq!(stopped.problem, Some("SCHEMA_NEWER"));
        assert_eq!(read_app_version("0.1.0").build, "0.1.0");
        assert_eq!(read_app_version("abc ").problem, None);
    }
}
