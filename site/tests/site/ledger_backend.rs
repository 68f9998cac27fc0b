//! The ledger suites' backend helper (`backend/`) against a real
//! PostgreSQL cluster: checked where `STOCKHOP_TEST_POSTGRES` names one, as
//! under `cargo xtask test` or beside `cargo xtask postgres`.

use crate::backend;

/// The cluster's admin URL, or `None` (after saying so) without one.
fn cluster() -> Option<String> {
    let url = std::env::var(backend::POSTGRES_VAR).ok();
    if url.is_none() {
        eprintln!(
            "{} is not set: no cluster to check the helper against",
            backend::POSTGRES_VAR
        );
    }
    url
}

fn scalar(url: &str, sql: &str, param: &str) -> i64 {
    let mut client = postgres::Client::connect(url, postgres::NoTls).unwrap();
    client.query_one(sql, &[&param]).unwrap().get(0)
}

#[test]
fn each_data_directory_gets_its_own_empty_database_and_keeps_it_across_restarts() {
    let Some(admin) = cluster() else { return };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let url = backend::fresh_database(&data);
    assert!(data.is_dir(), "the directory is made to hold the record");
    assert_eq!(
        backend::fresh_database(&data),
        url,
        "a restart over the same directory finds the same database"
    );
    let other = tempfile::tempdir().unwrap();
    assert_ne!(backend::fresh_database(other.path()), url);

    let name = url.rsplit_once('/').unwrap().1;
    assert!(name.starts_with("stockhop_t_"), "{url}");
    assert_eq!(
        scalar(
            &admin,
            "SELECT count(*) FROM pg_database WHERE datname = $1",
            name
        ),
        1
    );
    assert_eq!(
        scalar(
            &url,
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = $1",
            "public"
        ),
        0,
        "a fresh database holds no ledger yet"
    );
}

#[tokio::test]
async fn a_database_is_made_from_inside_an_async_test_as_the_site_helper_does() {
    if cluster().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let url = backend::fresh_database(dir.path());
    assert_eq!(backend::fresh_database(dir.path()), url);
}
