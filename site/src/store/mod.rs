//! Storage: the one place the ledger's bytes are kept and how.
//!
//! [`db`] opens the database (the site's embedded SQLite by default, or
//! PostgreSQL) and moves its schema forward through [`migrations`]; [`sql`] is the SQL layer both
//! engines answer through; [`checkpoint`] keeps SQLite's write-ahead log
//! off the writer's path; [`writer`] gives SQLite's one writer to its
//! callers in turn, handhelds first; [`readers`] gives what only reads
//! read-only connections beside it; [`storage`] watches free space and
//! turns a full disk into an answer; [`backup`] copies the ledger while the site serves
//! and puts a backup in place; [`data_lock`] keeps a restore and a serving
//! site apart.
//!
//! Architecture invariant: this room knows tables and bytes, not what they
//! mean. It imports only the base files (`limits`, `log_sample`,
//! `terminal_wire`) and `error`, never the ledger, the listener, the
//! central, the network edge or anything that serves a page.

pub mod backup;
pub mod checkpoint;
pub mod data_lock;
pub mod db;
pub mod migrations;
pub mod readers;
pub mod sql;
pub mod storage;
pub mod writer;
