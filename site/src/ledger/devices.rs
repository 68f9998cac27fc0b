//! Devices the site knows: their profile, whether they are commissioned
//! (items from a device that is not land as simulation), and the heartbeat
//! view that handhelds and terminals both feed.

use crate::store::sql::{params, Connection, OptionalExtension, Row};
use stockhop::time::UnixMs;
use stockhop::wire::Heartbeat;

use super::{auth, LedgerError, Refusal};

/// Device profiles (docs/design.md §5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Profile {
    Fxr90,
    Mc3390xr,
    Rfd40,
    Zt411r,
}

impl Profile {
    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Fxr90 => "fxr90",
            Profile::Mc3390xr => "mc3390xr",
            Profile::Rfd40 => "rfd40",
            Profile::Zt411r => "zt411r",
        }
    }

    pub fn parse(text: &str) -> Option<Profile> {
        [
            Profile::Fxr90,
            Profile::Mc3390xr,
            Profile::Rfd40,
            Profile::Zt411r,
        ]
        .into_iter()
        .find(|profile| profile.as_str() == text)
    }

    /// How long the profile may stay silent before it is offline, in ms
    /// (the device profiles table); the heartbeat answer tells the device.
    pub fn heartbeat_period_ms(self) -> i64 {
        1000 * match self {
            Profile::Fxr90 => 60,
            Profile::Mc3390xr => 900,
            Profile::Rfd40 => 1800,
            Profile::Zt411r => 300,
        }
    }

    /// Tags the profile reads per second at most; 0 for a printer, which
    /// reads none.
    pub fn reads_per_sec(self) -> u32 {
        match self {
            Profile::Fxr90 => 700,
            Profile::Mc3390xr => 200,
            Profile::Rfd40 => 150,
            Profile::Zt411r => 0,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Device {
    pub device_id: String,
    pub profile: Profile,
    pub commissioned: bool,
}

impl Device {
    /// Reads `device_id, profile, commissioned`.
    pub fn from_row(row: &Row<'_>) -> crate::store::sql::Result<Device> {
        let profile: String = row.get(1)?;
        Ok(Device {
            device_id: row.get(0)?,
            profile: Profile::parse(&profile).ok_or_else(|| {
                crate::store::sql::Error::conversion(1, format!("unknown profile {profile:?}"))
            })?,
            commissioned: row.get(2)?,
        })
    }
}

/// Longest device id the site accepts: ids are printed on labels and shown
/// on the dashboard.
pub const MAX_DEVICE_ID_CHARS: usize = 64;

/// Adds a device and returns its bearer token, which is stored only hashed.
pub fn add(
    conn: &Connection,
    device_id: &str,
    profile: Profile,
    commissioned: bool,
    now: UnixMs,
) -> Result<String, LedgerError> {
    let valid = !device_id.is_empty()
        && device_id.chars().count() <= MAX_DEVICE_ID_CHARS
        && device_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !valid {
        return Err(LedgerError::Refused(Refusal::new(
            400,
            stockhop::wire::codes::INVALID_ITEM,
            format!(
                "device id must be 1 to {MAX_DEVICE_ID_CHARS} letters, digits, '-', '_' or '.'"
            ),
        )));
    }
    let token = auth::mint_token()?;
    conn.execute(
        "INSERT INTO devices (device_id, profile, token_sha256, commissioned, added_at)
         VALUES (?1, ?2, ?3, ?4, ?5)",
        params![
            device_id,
            profile.as_str(),
            auth::token_hash(&token),
            commissioned,
            now.0
        ],
    )
    .map_err(|err| match err.unique_violation().as_deref() {
        Some("devices.device_id") => LedgerError::Refused(Refusal::new(
            409,
            super::codes::DEVICE_EXISTS,
            format!("device {device_id:?} exists already: give the new one another id"),
        )),
        _ => LedgerError::from(err),
    })?;
    Ok(token)
}

fn no_such_device(device_id: &str) -> LedgerError {
    LedgerError::Refused(Refusal::new(
        404,
        super::codes::DEVICE_NOT_FOUND,
        format!("no device {device_id:?}"),
    ))
}

/// The refusal of a change to a device that is not there to change: none
/// by that id, or one revoked (which `device list` still shows, so "no
/// device" would send the reader looking for a typo).
fn not_changeable(conn: &Connection, device_id: &str) -> Result<LedgerError, LedgerError> {
    let revoked_at: Option<i64> = conn
        .prepare_cached("SELECT revoked_at FROM device_revocations WHERE device_id = ?1")?
        .query_row([device_id], |row| row.get(0))
        .optional()?;
    Ok(match revoked_at {
        None => no_such_device(device_id),
        Some(at) => LedgerError::Refused(Refusal::new(
            404,
            super::codes::DEVICE_NOT_FOUND,
            format!(
                "device {device_id:?} was revoked at {}: a revoked device stays revoked; \
                 add the handheld again under another id",
                UnixMs(at)
            ),
        )),
    })
}

/// The site's device `device_id`, revoked or not; `404 DEVICE_NOT_FOUND`
/// when there is none.
pub fn find(conn: &Connection, device_id: &str) -> Result<Device, LedgerError> {
    conn.prepare_cached(
        "SELECT device_id, profile, commissioned FROM devices WHERE device_id = ?1",
    )?
    .query_row([device_id], Device::from_row)
    .optional()?
    .ok_or_else(|| no_such_device(device_id))
}

/// Marks a device commissioned: its items post for real from now on. A
/// revoked device is no longer one the site knows.
pub fn commission(conn: &Connection, device_id: &str) -> Result<(), LedgerError> {
    let changed = conn.execute(
        "UPDATE devices SET commissioned = 1 WHERE device_id = ?1
           AND NOT EXISTS (SELECT 1 FROM device_revocations WHERE device_id = ?1)",
        [device_id],
    )?;
    if changed == 0 {
        return Err(not_changeable(conn, device_id)?);
    }
    Ok(())
}

/// Whether the site's device `device_id` is commissioned; `None` when the
/// site has no such device.
pub fn commissioned(conn: &Connection, device_id: &str) -> crate::store::sql::Result<Option<bool>> {
    conn.prepare_cached("SELECT commissioned FROM devices WHERE device_id = ?1")?
        .query_row([device_id], |row| row.get(0))
        .optional()
}

/// Revokes a device: its token stops working at once (the stored hash is
/// replaced by a value no token hashes to), its heartbeat history goes,
/// and it leaves the site's view. Its hops stay. The revocation keeps the
/// hash of the token it held, which still checks the device's rescue file
/// (and nothing else), and the queue depth of its last heartbeat, so the
/// device list can say it left items behind.
pub fn revoke(conn: &Connection, device_id: &str, now: UnixMs) -> Result<(), LedgerError> {
    let changed = conn.execute(
        "INSERT INTO device_revocations (device_id, revoked_at, token_sha256, queue_depth)
         SELECT d.device_id, CAST(?2 AS BIGINT), d.token_sha256, h.queue_depth
         FROM devices d LEFT JOIN device_heartbeats h
             ON h.device_id = d.device_id AND h.source = ?3
         WHERE d.device_id = ?1
           AND NOT EXISTS (SELECT 1 FROM device_revocations WHERE device_id = ?1)",
        params![device_id, now.0, SOURCE_HANDHELD],
    )?;
    if changed == 0 {
        return Err(not_changeable(conn, device_id)?);
    }
    conn.execute(
        "UPDATE devices SET token_sha256 = 'revoked:' || device_id WHERE device_id = ?1",
        [device_id],
    )?;
    super::heartbeat_log::forget(conn, device_id)?;
    Ok(())
}

/// What a restore carried over from the ledger it replaced: a device's
/// or an admin's credentials as they stood when the backup was put in
/// place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CarriedOver {
    /// Revoked after the backup was made: revoked again.
    Revocation(String),
    /// Given a new token after the backup (`device link`): the token the
    /// backup holds stays refused.
    Token(String),
    /// Added after the backup was made (`device add`): added again, with
    /// its profile, token and commissioning, so it syncs and its rescue
    /// file verifies.
    DeviceAdded(String),
    /// An admin added after the backup was made: added again, with the
    /// same token.
    AdminAdded(String),
    /// An admin revoked after the backup was made: revoked again, its
    /// signed-in sessions with it.
    AdminRevoked(String),
}

/// After a restore, carries every device's and every admin's credentials
/// over from the ledger the backup replaced (`before`, an SQLite file the
/// site wrote): a device added since is added again (its scans may still
/// be on it, or in its rescue file), a device revoked since stays revoked,
/// a token replaced since stays replaced, and the admins (with their
/// signed-in sessions) are the newer ledger's, so one added since still
/// signs in and one revoked since does not. A backup is older than the
/// ledger it replaces, so without this a stolen handheld revoked after the
/// backup would sync again. Hops, sessions and reference data are the
/// backup's; only who may sync or sign in is taken from the newer ledger.
/// `conn` is the restored ledger's (SQLite), outside any transaction.
pub fn carry_credentials_from(
    conn: &Connection,
    before: &std::path::Path,
) -> crate::store::sql::Result<Vec<CarriedOver>> {
    conn.execute(
        "ATTACH DATABASE ?1 AS before",
        [before.to_string_lossy().as_ref()],
    )?;
    // All of it or none: one transaction over both files.
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let carried = (|| {
        let added: Vec<String> = conn
            .prepare(
                "SELECT device_id FROM before.devices
                 WHERE device_id NOT IN (SELECT device_id FROM main.devices)
                 ORDER BY device_id",
            )?
            .query_map([], |row| row.get(0))?
            .collect::<crate::store::sql::Result<_>>()?;
        conn.execute(
            "INSERT INTO main.devices (device_id, profile, token_sha256, commissioned, added_at)
             SELECT device_id, profile, token_sha256, commissioned, added_at
             FROM before.devices
             WHERE device_id NOT IN (SELECT device_id FROM main.devices)",
            [],
        )?;
        let revoked: Vec<String> = conn
            .prepare(
                "SELECT r.device_id FROM before.device_revocations r
                 JOIN main.devices d ON d.device_id = r.device_id
                 WHERE NOT EXISTS (SELECT 1 FROM main.device_revocations m
                                   WHERE m.device_id = r.device_id)
                 ORDER BY r.device_id",
            )?
            .query_map([], |row| row.get(0))?
            .collect::<crate::store::sql::Result<_>>()?;
        let relinked: Vec<String> = conn
            .prepare(
                "SELECT d.device_id FROM main.devices d
                 JOIN before.devices b ON b.device_id = d.device_id
                 WHERE b.token_sha256 <> d.token_sha256
                   AND NOT EXISTS (SELECT 1 FROM before.device_revocations r
                                   WHERE r.device_id = d.device_id)
                 ORDER BY d.device_id",
            )?
            .query_map([], |row| row.get(0))?
            .collect::<crate::store::sql::Result<_>>()?;
        conn.execute(
            "INSERT INTO main.device_revocations (device_id, revoked_at, token_sha256, queue_depth)
             SELECT r.device_id, r.revoked_at, r.token_sha256, r.queue_depth
             FROM before.device_revocations r
             JOIN main.devices d ON d.device_id = r.device_id
             WHERE NOT EXISTS (SELECT 1 FROM main.device_revocations m
                               WHERE m.device_id = r.device_id)",
            [],
        )?;
        conn.execute(
            "UPDATE main.devices SET token_sha256 =
                 (SELECT b.token_sha256 FROM before.devices b WHERE b.device_id = devices.device_id)
             WHERE EXISTS (SELECT 1 FROM before.devices b
                           WHERE b.device_id = devices.device_id
                             AND b.token_sha256 <> devices.token_sha256)",
            [],
        )?;
        for device_id in &revoked {
            super::heartbeat_log::forget(conn, device_id)?;
        }
        let names = |sql: &str| -> crate::store::sql::Result<Vec<String>> {
            conn.prepare(sql)?
                .query_map([], |row| row.get(0))?
                .collect()
        };
        let admins_added = names(
            "SELECT name FROM before.admins
             WHERE name NOT IN (SELECT name FROM main.admins) ORDER BY name",
        )?;
        let admins_revoked = names(
            "SELECT name FROM main.admins
             WHERE name NOT IN (SELECT name FROM before.admins) ORDER BY name",
        )?;
        // The admins and their sessions, whole: a token re-issued under the
        // same name since the backup is the newer one too.
        conn.execute("DELETE FROM main.admin_sessions", [])?;
        conn.execute("DELETE FROM main.admins", [])?;
        conn.execute(
            "INSERT INTO main.admins (name, token_sha256, added_at)
             SELECT name, token_sha256, added_at FROM before.admins",
            [],
        )?;
        conn.execute(
            "INSERT INTO main.admin_sessions
                 (session_sha256, admin, csrf_token, created_at, expires_at)
             SELECT session_sha256, admin, csrf_token, created_at, expires_at
             FROM before.admin_sessions",
            [],
        )?;
        Ok(added
            .into_iter()
            .map(CarriedOver::DeviceAdded)
            .chain(revoked.into_iter().map(CarriedOver::Revocation))
            .chain(relinked.into_iter().map(CarriedOver::Token))
            .chain(admins_added.into_iter().map(CarriedOver::AdminAdded))
            .chain(admins_revoked.into_iter().map(CarriedOver::AdminRevoked))
            .collect())
    })();
    match carried {
        Ok(_) => conn.execute_batch("COMMIT")?,
        Err(_) => conn.execute_batch("ROLLBACK")?,
    }
    conn.execute("DETACH DATABASE before", [])?;
    carried
}

/// Where a heartbeat came from.
pub const SOURCE_HANDHELD: &str = "handheld";

/// Records a handheld's heartbeat, received at `now`.
pub fn record_heartbeat(
    conn: &Connection,
    device_id: &str,
    heartbeat: &Heartbeat,
    now: UnixMs,
) -> crate::store::sql::Result<()> {
    conn.execute(
        "INSERT INTO device_heartbeats
             (device_id, source, last_seen_at, sent_at, queue_depth, oldest_queued_at, app_version)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
         ON CONFLICT (device_id) DO UPDATE SET
             source = excluded.source, last_seen_at = excluded.last_seen_at,
             sent_at = excluded.sent_at, queue_depth = excluded.queue_depth,
             oldest_queued_at = excluded.oldest_queued_at, app_version = excluded.app_version",
        params![
            device_id,
            SOURCE_HANDHELD,
            now.0,
            heartbeat.sent_at.0,
            i64::try_from(heartbeat.queue_depth).unwrap_or(i64::MAX),
            heartbeat.oldest_queued_at.map(|t| t.0),
            heartbeat.app_version,
        ],
    )?;
    Ok(())
}

/// Records that a terminal was seen at `seen_at`; a later sighting never
/// moves the last-seen time back. Terminals and handhelds do not share
/// identities: a terminal serial that names a token-holding device the site
/// knows (any profile but the fixed gate's, which reaches the site through
/// the listener) or a row a handheld's heartbeat wrote leaves that row
/// alone, since a terminal's serial is not authenticated and a token is.
pub fn record_terminal_seen(
    conn: &Connection,
    device_serial: &str,
    source: &str,
    seen_at: UnixMs,
) -> crate::store::sql::Result<()> {
    conn.prepare_cached(
        "INSERT INTO device_heartbeats (device_id, source, last_seen_at)
         SELECT CAST(?1 AS TEXT), CAST(?2 AS TEXT), CAST(?3 AS BIGINT) WHERE NOT EXISTS
             (SELECT 1 FROM devices WHERE device_id = ?1 AND profile <> 'fxr90')
         ON CONFLICT (device_id) DO UPDATE SET
             source = excluded.source,
             last_seen_at = CASE WHEN excluded.last_seen_at > device_heartbeats.last_seen_at
                                 THEN excluded.last_seen_at
                                 ELSE device_heartbeats.last_seen_at END
         WHERE device_heartbeats.source <> ?4",
    )?
    .execute(params![device_serial, source, seen_at.0, SOURCE_HANDHELD])?;
    Ok(())
}

/// A row of the heartbeat view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LastSeen {
    pub device_id: String,
    pub source: String,
    pub last_seen_at: UnixMs,
    pub queue_depth: Option<i64>,
}

/// The heartbeat view's row for one device.
pub fn last_seen(
    conn: &Connection,
    device_id: &str,
) -> crate::store::sql::Result<Option<LastSeen>> {
    conn.query_row(
        "SELECT device_id, source, last_seen_at, queue_depth FROM device_heartbeats
         WHERE device_id = ?1",
        [device_id],
        |row| {
            Ok(LastSeen {
                device_id: row.get(0)?,
                source: row.get(1)?,
                last_seen_at: UnixMs(row.get(2)?),
                queue_depth: row.get(3)?,
            })
        },
    )
    .optional()
}

/// A row of `device list` and `GET /v1/admin/devices`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
pub struct Listed {
    pub device_id: String,
    pub profile: String,
    pub commissioned: bool,
    #[schema(value_type = String, format = DateTime)]
    pub added_at: UnixMs,
    /// When it was revoked; its token no longer works.
    #[schema(value_type = Option<String>, format = DateTime)]
    pub revoked_at: Option<UnixMs>,
    /// For a revoked device, the items its last heartbeat said were still
    /// queued (none reported: `None`): a device revoked with items queued
    /// holds scans the site has not got, until its rescue file is imported.
    pub queued_when_revoked: Option<i64>,
}

/// Every device the site knows, revoked ones too, by id.
pub fn list(conn: &Connection) -> crate::store::sql::Result<Vec<Listed>> {
    conn.prepare(
        "SELECT d.device_id, d.profile, d.commissioned, d.added_at, r.revoked_at, r.queue_depth
         FROM devices d LEFT JOIN device_revocations r ON r.device_id = d.device_id
         ORDER BY d.device_id",
    )?
    .query_map([], |row| {
        Ok(Listed {
            device_id: row.get(0)?,
            profile: row.get(1)?,
            commissioned: row.get(2)?,
            added_at: UnixMs(row.get(3)?),
            revoked_at: row.get::<_, Option<i64>>(4)?.map(UnixMs),
            queued_when_revoked: row.get(5)?,
        })
    })?
    .collect()
}

/// Gives a device a new token, for a new setup link (the site keeps only
/// tokens' hashes, so the old link cannot be shown again): the old token
/// stops working at once. A revoked device stays revoked.
pub fn relink(conn: &Connection, device_id: &str) -> Result<String, LedgerError> {
    let token = auth::mint_token()?;
    let changed = conn.execute(
        "UPDATE devices SET token_sha256 = ?2
         WHERE device_id = ?1
           AND NOT EXISTS (SELECT 1 FROM device_revocations WHERE device_id = ?1)",
        params![device_id, auth::token_hash(&token)],
    )?;
    if changed == 0 {
        return Err(not_changeable(conn, device_id)?);
    }
    Ok(token)
}

/// The device a token belongs to, if any.
pub fn authenticate(conn: &Connection, token: &str) -> crate::store::sql::Result<Option<Device>> {
    conn.query_row(
        "SELECT device_id, profile, commissioned FROM devices WHERE token_sha256 = ?1",
        [auth::token_hash(token)],
        Device::from_row,
    )
    .optional()
}
