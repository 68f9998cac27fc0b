//! The ledger's PostgreSQL connections against a real cluster: opened over
//! TCP or the server's Unix socket, driven on the thread that uses them,
//! and replaced when the server closed them while they sat in the pool.
//! Checked where `STOCKHOP_TEST_POSTGRES` names a cluster, as under
//! `cargo xtask test` or beside `cargo xtask postgres`.

use crate::backend;

use stockhop_site::store::db::{Database, Db};
use stockhop_site::store::sql::Connection;

/// The cluster's admin URL, or `None` (after saying so) without one.
fn cluster() -> Option<String> {
    let url = std::env::var(backend::POSTGRES_VAR).ok();
    if url.is_none() {
        eprintln!(
            "{} is not set: no cluster to check the connections against",
            backend::POSTGRES_VAR
        );
    }
    url
}

/// Runs `sql` as the cluster's admin, on a thread of its own (the sync
/// client starts a runtime, which cannot start inside an async test).
fn admin_rows(admin: &str, sql: &str) -> Vec<String> {
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let mut client = postgres::Client::connect(admin, postgres::NoTls).unwrap();
                client
                    .simple_query(sql)
                    .unwrap()
                    .into_iter()
                    .filter_map(|message| match message {
                        postgres::SimpleQueryMessage::Row(row) => {
                            Some(row.get(0).unwrap_or_default().to_owned())
                        }
                        _ => None,
                    })
                    .collect()
            })
            .join()
            .unwrap()
    })
}

fn backend_pid(conn: &Connection) -> i64 {
    conn.query_row("SELECT CAST(pg_backend_pid() AS BIGINT)", [], |row| {
        row.get(0)
    })
    .unwrap()
}

#[tokio::test]
async fn a_connection_the_server_closed_while_pooled_is_replaced_before_use() {
    let Some(admin) = cluster() else { return };
    let dir = tempfile::tempdir().unwrap();
    let url = backend::fresh_database(dir.path());
    let db = Db::connect(&Database::Postgres(url), dir.path()).unwrap();
    let first = db.call_blocking(|conn| backend_pid(conn));

    let terminated = admin_rows(&admin, &format!("SELECT pg_terminate_backend({first})"));
    assert_eq!(terminated, ["t"], "the pooled connection's backend is gone");
    // The backend's exit is asynchronous: wait until the server lists it no
    // more, so the pool meets a closed socket.
    while !admin_rows(
        &admin,
        &format!("SELECT pid FROM pg_stat_activity WHERE pid = {first}"),
    )
    .is_empty()
    {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }

    let second = db.call_blocking(|conn| backend_pid(conn));
    assert_ne!(second, first, "a new connection serves the next work");
    assert_eq!(db.call_blocking(|conn| backend_pid(conn)), second);
}

#[test]
fn the_ledger_reaches_postgresql_over_its_unix_socket() {
    let Some(admin) = cluster() else { return };
    let dir = tempfile::tempdir().unwrap();
    let tcp_url = backend::fresh_database(dir.path());
    let socket_dir = admin_rows(&admin, "SHOW unix_socket_directories")
        .into_iter()
        .next()
        .unwrap();
    let socket_dir = socket_dir.split(',').next().unwrap().trim().to_owned();
    let parsed = url::Url::parse(&tcp_url).unwrap();
    let socket_url = format!(
        "postgres://{}@{}?host={}&port={}",
        parsed.username(),
        parsed.path(),
        socket_dir,
        parsed.port().unwrap()
    );

    let db = Db::connect(&Database::Postgres(socket_url.clone()), dir.path())
        .unwrap_or_else(|err| panic!("{socket_url}: {err}"));
    let address: Option<String> = db.call_blocking(|conn| {
        conn.query_row("SELECT CAST(inet_client_addr() AS TEXT)", [], |row| {
            row.get(0)
        })
        .unwrap()
    });
    assert_eq!(address, None, "a Unix-socket client has no address");
    assert_eq!(
        db.schema_version().unwrap(),
        stockhop_site::store::db::MIGRATIONS_POSTGRES
            .last()
            .unwrap()
            .version
    );
}

#[test]
fn a_url_the_ledger_cannot_follow_is_refused_with_why() {
    for url in [
        "postgres://ledger@db.invalid/site?target_session_attrs=read-write",
        "postgres://ledger@db1.invalid,db2.invalid/site?load_balance_hosts=random",
    ] {
        let err = stockhop_site::store::sql::PgPool::connect(url)
            .err()
            .unwrap_or_else(|| panic!("{url} was taken"));
        let why = err.to_string();
        assert!(
            why.contains("target_session_attrs and load_balance_hosts are not supported"),
            "{url}: {why}"
        );
    }
    let err = stockhop_site::store::sql::PgPool::connect("postgres://ledger@127.0.0.1:1/site")
        .err()
        .expect("nothing listens on port 1");
    assert!(err.to_string().contains("cannot reach PostgreSQL"), "{err}");
}
