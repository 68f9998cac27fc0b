//! A handheld as the site benches drive it: one session of numbered
//! commands under fresh keys, synced over HTTP with its device token.
//!
//! Not a module of `support`: only the benches that sync include it
//! (`#[path = "support/handheld.rs"] mod handheld;`), so the others build
//! without it.

use serde_json::{json, Value};
use stockhop::key::IdempotencyKey;
use stockhop_site::ledger;

/// The device every bench handheld is added as.
pub const DEVICE_ID: &str = "HH-1";

/// Adds [`DEVICE_ID`] to `db`, commissioned; returns its token.
#[allow(dead_code)] // Not every bench that includes this adds it so.
pub fn add(db: &stockhop_site::store::db::Db) -> String {
    db.call_blocking(|conn| {
        ledger::devices::add(
            conn,
            DEVICE_ID,
            ledger::devices::Profile::Mc3390xr,
            true,
            ledger::wall_clock(),
        )
    })
    .unwrap()
}

pub struct Handheld {
    device_id: String,
    token: String,
    session: String,
    seq: u64,
}

impl Handheld {
    /// A handheld with `token` (of [`DEVICE_ID`]) starting a new session.
    pub fn new(token: String) -> Handheld {
        Handheld::of(DEVICE_ID, token)
    }

    /// A handheld that is device `device_id`, with its `token`, starting a
    /// new session.
    #[allow(dead_code)] // Only the benches with several handhelds use it.
    pub fn of(device_id: &str, token: String) -> Handheld {
        Handheld {
            device_id: device_id.to_owned(),
            token,
            session: IdempotencyKey::mint().unwrap().to_string(),
            seq: 0,
        }
    }

    /// The session's next command, stamped now.
    pub fn next(&mut self, command: &str, body: Value) -> Value {
        self.seq += 1;
        let now = ledger::wall_clock();
        json!({
            "key": IdempotencyKey::mint().unwrap().to_string(),
            "session_id": self.session,
            "client_seq": self.seq,
            "command": command,
            "occurred_at": now.to_string(),
            "queued_at": now.to_string(),
            "body": body,
        })
    }

    /// Syncs `items`, which must all be applied.
    pub async fn sync(&self, client: &reqwest::Client, url: &str, items: Vec<Value>) {
        if let Err((status, answer)) = self.try_sync(client, url, items).await {
            panic!("a sync was refused, {status}: {answer}");
        }
    }

    /// Syncs `items`: answered 200 (every item then must have been
    /// applied), or refused (as 503 is) with the status and answer.
    pub async fn try_sync(
        &self,
        client: &reqwest::Client,
        url: &str,
        items: Vec<Value>,
    ) -> Result<(), (u16, Value)> {
        let body = json!({"device_id": self.device_id, "sent_at": ledger::wall_clock().to_string(), "items": items});
        let response = client
            .post(url)
            .bearer_auth(&self.token)
            .json(&body)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        let answer = serde_json::from_str(&text).unwrap_or(Value::String(text));
        if status != 200 {
            return Err((status, answer));
        }
        let results = answer["results"].as_array().unwrap();
        assert!(
            results.iter().all(|r| r["outcome"] == "applied"),
            "{answer}"
        );
        Ok(())
    }
}
