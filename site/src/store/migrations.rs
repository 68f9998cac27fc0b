//! The schema's migrations, in order, one list per engine: numbered SQL
//! files compiled in (`site/migrations/` and `site/migrations/postgres/`,
//! the same numbers and names), which [`crate::store::db`] applies.

/// The schema, in order. A migration is never edited once released: add one.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "site",
        sql: include_str!("../../migrations/0001_site.sql"),
    },
    Migration {
        version: 2,
        name: "ledger",
        sql: include_str!("../../migrations/0002_ledger.sql"),
    },
    Migration {
        version: 3,
        name: "listener",
        sql: include_str!("../../migrations/0003_listener.sql"),
    },
    Migration {
        version: 4,
        name: "site_view",
        sql: include_str!("../../migrations/0004_site_view.sql"),
    },
    Migration {
        version: 5,
        name: "reference",
        sql: include_str!("../../migrations/0005_reference.sql"),
    },
    Migration {
        version: 6,
        name: "central",
        sql: include_str!("../../migrations/0006_central.sql"),
    },
    Migration {
        version: 7,
        name: "central_backfill",
        sql: include_str!("../../migrations/0007_central_backfill.sql"),
    },
    Migration {
        version: 8,
        name: "counters_and_keys",
        sql: include_str!("../../migrations/0008_counters_and_keys.sql"),
    },
    Migration {
        version: 9,
        name: "outbox_sequence",
        sql: include_str!("../../migrations/0009_outbox_sequence.sql"),
    },
    Migration {
        version: 10,
        name: "operators_undo_counts",
        sql: include_str!("../../migrations/0010_operators_undo_counts.sql"),
    },
    Migration {
        version: 11,
        name: "data_in_out",
        sql: include_str!("../../migrations/0011_data_in_out.sql"),
    },
    Migration {
        version: 12,
        name: "trust_and_bounds",
        sql: include_str!("../../migrations/0012_trust_and_bounds.sql"),
    },
    Migration {
        version: 13,
        name: "printers",
        sql: include_str!("../../migrations/0013_printers.sql"),
    },
    Migration {
        version: 14,
        name: "decisions",
        sql: include_str!("../../migrations/0014_decisions.sql"),
    },
    Migration {
        version: 15,
        name: "set_aside",
        sql: include_str!("../../migrations/0015_set_aside.sql"),
    },
    Migration {
        version: 16,
        name: "central_summaries",
        sql: include_str!("../../migrations/0016_central_summaries.sql"),
    },
    Migration {
        version: 17,
        name: "terminal_repeats",
        sql: include_str!("../../migrations/0017_terminal_repeats.sql"),
    },
    Migration {
        version: 18,
        name: "import_turns_unlocked",
        sql: include_str!("../../migrations/0018_import_turns_unlocked.sql"),
    },
    Migration {
        version: 19,
        name: "import_keeps_rows_as_at_flip",
        sql: include_str!("../../migrations/0019_import_keeps_rows_as_at_flip.sql"),
    },
    Migration {
        version: 20,
        name: "sessions_closed_by_site",
        sql: include_str!("../../migrations/0020_sessions_closed_by_site.sql"),
    },
    Migration {
        version: 21,
        name: "terminal_commands",
        sql: include_str!("../../migrations/0021_terminal_commands.sql"),
    },
    Migration {
        version: 22,
        name: "outbox_epochs",
        sql: include_str!("../../migrations/0022_outbox_epochs.sql"),
    },
    Migration {
        version: 23,
        name: "gs1_labels",
        sql: include_str!("../../migrations/0023_gs1_labels.sql"),
    },
    Migration {
        version: 24,
        name: "rescues",
        sql: include_str!("../../migrations/0024_rescues.sql"),
    },
    Migration {
        version: 25,
        name: "listener_seen",
        sql: include_str!("../../migrations/0025_listener_seen.sql"),
    },
    Migration {
        version: 26,
        name: "operator_language",
        sql: include_str!("../../migrations/0026_operator_language.sql"),
    },
    Migration {
        version: 27,
        name: "rejection_summaries",
        sql: include_str!("../../migrations/0027_rejection_summaries.sql"),
    },
    Migration {
        version: 28,
        name: "listener_dead_index",
        sql: include_str!("../../migrations/0028_listener_dead_index.sql"),
    },
    Migration {
        version: 29,
        name: "listener_repeat",
        sql: include_str!("../../migrations/0029_listener_repeat.sql"),
    },
    Migration {
        version: 30,
        name: "listener_queue_by_time",
        sql: include_str!("../../migrations/0030_listener_queue_by_time.sql"),
    },
];

/// The same schema for PostgreSQL: the same numbers and names, the same
/// tables, constraints and triggers in its dialect.
pub const MIGRATIONS_POSTGRES: &[Migration] = &[
    Migration {
        version: 1,
        name: "site",
        sql: include_str!("../../migrations/postgres/0001_site.sql"),
    },
    Migration {
        version: 2,
        name: "ledger",
        sql: include_str!("../../migrations/postgres/0002_ledger.sql"),
    },
    Migration {
        version: 3,
        name: "listener",
        sql: include_str!("../../migrations/postgres/0003_listener.sql"),
    },
    Migration {
        version: 4,
        name: "site_view",
        sql: include_str!("../../migrations/postgres/0004_site_view.sql"),
    },
    Migration {
        version: 5,
        name: "reference",
        sql: include_str!("../../migrations/postgres/0005_reference.sql"),
    },
    Migration {
        version: 6,
        name: "central",
        sql: include_str!("../../migrations/postgres/0006_central.sql"),
    },
    Migration {
        version: 7,
        name: "central_backfill",
        sql: include_str!("../../migrations/postgres/0007_central_backfill.sql"),
    },
    Migration {
        version: 8,
        name: "counters_and_keys",
        sql: include_str!("../../migrations/postgres/0008_counters_and_keys.sql"),
    },
    Migration {
        version: 9,
        name: "outbox_sequence",
        sql: include_str!("../../migrations/postgres/0009_outbox_sequence.sql"),
    },
    Migration {
        version: 10,
        name: "operators_undo_counts",
        sql: include_str!("../../migrations/postgres/0010_operators_undo_counts.sql"),
    },
    Migration {
        version: 11,
        name: "data_in_out",
        sql: include_str!("../../migrations/postgres/0011_data_in_out.sql"),
    },
    Migration {
        version: 12,
        name: "trust_and_bounds",
        sql: include_str!("../../migrations/postgres/0012_trust_and_bounds.sql"),
    },
    Migration {
        version: 13,
        name: "printers",
        sql: include_str!("../../migrations/postgres/0013_printers.sql"),
    },
    Migration {
        version: 14,
        name: "decisions",
        sql: include_str!("../../migrations/postgres/0014_decisions.sql"),
    },
    Migration {
        version: 15,
        name: "set_aside",
        sql: include_str!("../../migrations/postgres/0015_set_aside.sql"),
    },
    Migration {
        version: 16,
        name: "central_summaries",
        sql: include_str!("../../migrations/postgres/0016_central_summaries.sql"),
    },
    Migration {
        version: 17,
        name: "terminal_repeats",
        sql: include_str!("../../migrations/postgres/0017_terminal_repeats.sql"),
    },
    Migration {
        version: 18,
        name: "import_turns_unlocked",
        sql: include_str!("../../migrations/postgres/0018_import_turns_unlocked.sql"),
    },
    Migration {
        version: 19,
        name: "import_keeps_rows_as_at_flip",
        sql: include_str!("../../migrations/postgres/0019_import_keeps_rows_as_at_flip.sql"),
    },
    Migration {
        version: 20,
        name: "sessions_closed_by_site",
        sql: include_str!("../../migrations/postgres/0020_sessions_closed_by_site.sql"),
    },
    Migration {
        version: 21,
        name: "terminal_commands",
        sql: include_str!("../../migrations/postgres/0021_terminal_commands.sql"),
    },
    Migration {
        version: 22,
        name: "outbox_epochs",
        sql: include_str!("../../migrations/postgres/0022_outbox_epochs.sql"),
    },
    Migration {
        version: 23,
        name: "gs1_labels",
        sql: include_str!("../../migrations/postgres/0023_gs1_labels.sql"),
    },
    Migration {
        version: 24,
        name: "rescues",
        sql: include_str!("../../migrations/postgres/0024_rescues.sql"),
    },
    Migration {
        version: 25,
        name: "listener_seen",
        sql: include_str!("../../migrations/postgres/0025_listener_seen.sql"),
    },
    Migration {
        version: 26,
        name: "operator_language",
        sql: include_str!("../../migrations/postgres/0026_operator_language.sql"),
    },
    Migration {
        version: 27,
        name: "rejection_summaries",
        sql: include_str!("../../migrations/postgres/0027_rejection_summaries.sql"),
    },
    Migration {
        version: 28,
        name: "listener_dead_index",
        sql: include_str!("../../migrations/postgres/0028_listener_dead_index.sql"),
    },
    Migration {
        version: 29,
        name: "listener_repeat",
        sql: include_str!("../../migrations/postgres/0029_listener_repeat.sql"),
    },
    Migration {
        version: 30,
        name: "listener_queue_by_time",
        sql: include_str!("../../migrations/postgres/0030_listener_queue_by_time.sql"),
    },
];

pub struct Migration {
    pub version: i64,
    pub name: &'static str,
    pub sql: &'static str,
}
