//! `stockhop-site restore BACKUP`: puts a backup made by `backup` in place
//! of the site's SQLite ledger while the site is stopped, and starts a new
//! outbox epoch, so the site's hops go on at its central after what the
//! central holds rather than under seqs it took before the restore.

use std::path::Path;

use anyhow::Context;
use stockhop_site::central::outbox;
use stockhop_site::ledger;
use stockhop_site::store::data_lock::DataLock;
use stockhop_site::store::db::Database;

pub(super) fn restore(backup: &Path, data: &Path, database: Option<&str>) -> anyhow::Result<()> {
    let Database::Sqlite(ledger_path) = Database::from_arg(database, data) else {
        anyhow::bail!("this ledger is on PostgreSQL: restore it with pg_restore (see the README)");
    };
    anyhow::ensure!(
        data.is_dir(),
        "{} is not a folder: name the site's data directory with --data",
        data.display()
    );
    let _lock = DataLock::take(data)?;
    let now = ledger::wall_clock();
    let restored = stockhop_site::store::backup::restore(backup, &ledger_path, now.0)
        .with_context(|| format!("restoring {}", backup.display()))?;
    let db = super::open(data, database)?;
    let epoch = db
        .call_blocking(|conn| outbox::new_epoch(conn, now))
        .context("starting a new outbox epoch")?;
    // Who may sync is the newer ledger's: a device revoked (or given a new
    // token) after the backup was made stays so.
    let carried = match &restored.kept {
        Some(kept) => db
            .call_blocking(|conn| ledger::devices::carry_credentials_from(conn, kept))
            .context("carrying the devices' credentials over from the replaced ledger")?,
        None => Vec::new(),
    };
    for change in &carried {
        match change {
            ledger::devices::CarriedOver::Revocation(device) => {
                eprintln!("{device} was revoked after the backup was made: it stays revoked")
            }
            ledger::devices::CarriedOver::Token(device) => eprintln!(
                "{device} was given a new token after the backup was made: the backup's token \
                 stays refused"
            ),
            ledger::devices::CarriedOver::DeviceAdded(device) => {
                eprintln!("{device} was added after the backup was made: it stays, with its token")
            }
            ledger::devices::CarriedOver::AdminAdded(name) => {
                eprintln!("admin {name} was added after the backup was made: it stays an admin")
            }
            ledger::devices::CarriedOver::AdminRevoked(name) => {
                eprintln!("admin {name} was revoked after the backup was made: it stays revoked")
            }
        }
    }
    let central = db
        .call_blocking(|conn| outbox::forwarding(conn))
        .context("reading the site's central")?;
    eprintln!(
        "{}: restored from {} ({} bytes)",
        ledger_path.display(),
        backup.display(),
        restored.bytes
    );
    if let Some(central) = central {
        eprintln!(
            "outbox epoch {epoch}: at its next start the site's hops go on at its central ({}) \
             after what the central holds",
            central.central_url
        );
    }
    if let Some(kept) = restored.kept {
        eprintln!(
            "the ledger it replaced is kept as {} (with its -wal): delete it once the site runs \
             as it should",
            kept.display()
        );
    }
    Ok(())
}
