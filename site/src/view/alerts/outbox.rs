//! The alerts' durable state, the one place with its SQL: which
//! conditions are firing (`alert_state`) and the alerts waiting for the
//! webhook (`alert_outbox`), on either engine.

use std::collections::BTreeMap;

use stockhop::time::UnixMs;

use super::conditions::Condition;
use crate::store::sql::{params, Connection};
use crate::view::status::Alert;

/// Alerts one POST carries at most.
pub const MAX_ALERTS_PER_POST: usize = 50;

/// How long delivered alerts are kept before they are pruned: a week of
/// history to look back at, then the table stays small.
pub const SENT_RETENTION_MS: i64 = 7 * 24 * 60 * 60 * 1000;

/// Rows pruned per pass, so a pass is short.
pub const PRUNE_ROWS_MAX: i64 = 1000;

/// One alert as the webhook gets it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WebhookAlert {
    pub name: String,
    pub priority: Alert,
    /// `firing` or `resolved`.
    pub state: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_id: Option<String>,
    pub site_id: String,
    pub since: UnixMs,
    pub summary: String,
}

/// A firing condition as remembered.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Firing {
    pub key: String,
    pub name: String,
    pub priority: Alert,
    pub device_id: Option<String>,
    pub since: UnixMs,
    pub summary: String,
}

fn priority(text: &str) -> crate::store::sql::Result<Alert> {
    match text {
        "P1" => Ok(Alert::P1),
        "P2" => Ok(Alert::P2),
        "P3" => Ok(Alert::P3),
        other => Err(crate::store::sql::Error::conversion(
            2,
            format!("unknown priority {other:?}"),
        )),
    }
}

fn priority_text(priority: Alert) -> &'static str {
    match priority {
        Alert::P1 => "P1",
        Alert::P2 => "P2",
        Alert::P3 => "P3",
    }
}

/// The conditions firing now, by key.
pub fn firing(conn: &Connection) -> crate::store::sql::Result<Vec<Firing>> {
    conn.prepare_cached(
        "SELECT condition_key, name, priority, device_id, since, summary
         FROM alert_state ORDER BY condition_key",
    )?
    .query_map([], |row| {
        let text: String = row.get(2)?;
        Ok(Firing {
            key: row.get(0)?,
            name: row.get(1)?,
            priority: priority(&text)?,
            device_id: row.get(3)?,
            since: UnixMs(row.get(4)?),
            summary: row.get(5)?,
        })
    })?
    .collect()
}

fn enqueue(conn: &Connection, alert: &WebhookAlert, now: UnixMs) -> crate::store::sql::Result<()> {
    let text = serde_json::to_string(alert)
        .map_err(|err| crate::store::sql::Error::ToSqlConversionFailure(err.to_string()))?;
    conn.prepare_cached("INSERT INTO alert_outbox (alert, queued_at) VALUES (?1, ?2)")?
        .execute(params![text, now.0])?;
    Ok(())
}

/// Records that `holding` are the conditions now: a condition that starts
/// is remembered and, with `deliver`, its `firing` queued; one that ended
/// is forgotten and its `resolved` queued; one that goes on changes
/// nothing. Returns how many alerts it queued. Run it in a transaction.
pub fn transition(
    conn: &Connection,
    holding: &[Condition],
    site_id: &str,
    deliver: bool,
    now: UnixMs,
) -> crate::store::sql::Result<usize> {
    let mut was: BTreeMap<String, Firing> = firing(conn)?
        .into_iter()
        .map(|f| (f.key.clone(), f))
        .collect();
    let mut queued = 0;
    for condition in holding {
        if was.remove(&condition.key).is_some() {
            continue;
        }
        conn.prepare_cached(
            "INSERT INTO alert_state (condition_key, name, priority, device_id, since, summary)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?
        .execute(params![
            condition.key,
            condition.name,
            priority_text(condition.priority),
            condition.device_id,
            condition.since.0,
            condition.summary,
        ])?;
        if deliver {
            enqueue(
                conn,
                &WebhookAlert {
                    name: condition.name.to_owned(),
                    priority: condition.priority,
                    state: "firing".to_owned(),
                    device_id: condition.device_id.clone(),
                    site_id: site_id.to_owned(),
                    since: condition.since,
                    summary: condition.summary.clone(),
                },
                now,
            )?;
            queued += 1;
        }
    }
    for (key, ended) in was {
        conn.prepare_cached("DELETE FROM alert_state WHERE condition_key = ?1")?
            .execute([key.as_str()])?;
        if deliver {
            enqueue(
                conn,
                &WebhookAlert {
                    name: ended.name,
                    priority: ended.priority,
                    state: "resolved".to_owned(),
                    device_id: ended.device_id,
                    site_id: site_id.to_owned(),
                    since: now,
                    summary: format!("resolved: {}", ended.summary),
                },
                now,
            )?;
            queued += 1;
        }
    }
    Ok(queued)
}

/// The oldest pending alerts, at most [`MAX_ALERTS_PER_POST`], with their
/// seqs.
pub fn pending(conn: &Connection) -> crate::store::sql::Result<Vec<(i64, WebhookAlert)>> {
    conn.prepare_cached(
        "SELECT seq, alert FROM alert_outbox WHERE state = 'pending' ORDER BY seq LIMIT ?1",
    )?
    .query_map([MAX_ALERTS_PER_POST as i64], |row| {
        let text: String = row.get(1)?;
        let alert = serde_json::from_str(&text)
            .map_err(|err| crate::store::sql::Error::conversion(1, err.to_string()))?;
        Ok((row.get(0)?, alert))
    })?
    .collect()
}

/// How a delivery of `seqs` ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delivered {
    Sent,
    /// Will be tried again; the error is kept for the view.
    Failed(String),
    /// The receiver refused them for good (a 4xx other than 408/429).
    Refused(String),
}

/// Settles the alerts `seqs` after a delivery.
pub fn settle(
    conn: &Connection,
    seqs: &[i64],
    delivered: &Delivered,
    now: UnixMs,
) -> crate::store::sql::Result<()> {
    for seq in seqs {
        match delivered {
            Delivered::Sent => conn
                .prepare_cached(
                    "UPDATE alert_outbox SET state = 'sent', sent_at = ?2, attempts = attempts + 1
                     WHERE seq = ?1 AND state = 'pending'",
                )?
                .execute(params![*seq, now.0])?,
            Delivered::Failed(error) => conn
                .prepare_cached(
                    "UPDATE alert_outbox SET attempts = attempts + 1, last_error = ?2
                     WHERE seq = ?1 AND state = 'pending'",
                )?
                .execute(params![*seq, error.as_str()])?,
            Delivered::Refused(error) => conn
                .prepare_cached(
                    "UPDATE alert_outbox SET state = 'dead', attempts = attempts + 1, last_error = ?2
                     WHERE seq = ?1 AND state = 'pending'",
                )?
                .execute(params![*seq, error.as_str()])?,
        };
    }
    Ok(())
}

/// Deletes alerts delivered before `now − SENT_RETENTION_MS`, a bounded
/// number a pass; returns how many.
pub fn prune(conn: &Connection, now: UnixMs) -> crate::store::sql::Result<usize> {
    conn.execute(
        "DELETE FROM alert_outbox WHERE seq IN
           (SELECT seq FROM alert_outbox WHERE state = 'sent' AND sent_at < ?1 LIMIT ?2)",
        params![now.0 - SENT_RETENTION_MS, PRUNE_ROWS_MAX],
    )
}
