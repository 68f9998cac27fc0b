//! `stockhop-site backup DEST`: a consistent copy of the SQLite ledger
//! while the site serves (PostgreSQL ledgers are backed up with pg_dump).

use std::path::Path;

use anyhow::Context;
use stockhop_site::store::db::Database;

pub(super) fn backup(dest: &Path, data: &Path, database: Option<&str>) -> anyhow::Result<()> {
    let Database::Sqlite(source) = Database::from_arg(database, data) else {
        anyhow::bail!("this ledger is on PostgreSQL: back it up with pg_dump (see the README)");
    };
    let summary = stockhop_site::store::backup::backup(&source, dest)
        .with_context(|| format!("backing up {}", source.display()))?;
    eprintln!(
        "{}: {} bytes in {:.1} s",
        dest.display(),
        summary.bytes,
        summary.elapsed.as_secs_f64()
    );
    Ok(())
}
