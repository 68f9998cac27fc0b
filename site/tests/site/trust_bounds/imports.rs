//! Import bodies cost disk, not memory: a body is written to a temporary
//! file in the data directory as it arrives, and the pages a refused
//! import staged go back to the file system.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::ledger_common::{now, Site};

/// Files this process holds open under `dir` that have no name any more
/// (an unnamed temporary file, or one removed while open).
fn unnamed_files_under(dir: &Path) -> usize {
    let dir = dir.canonicalize().unwrap();
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
        .filter(|target| {
            let text = target.to_string_lossy();
            target.starts_with(&dir) && text.ends_with("(deleted)")
        })
        .count()
}

fn admin(site: &Site) -> String {
    site.db
        .call_blocking(|conn| stockhop_site::view::admin::add(conn, "ops", now()))
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_import_body_is_written_to_disk_as_it_arrives_and_imported_from_there() {
    let site = Site::start().await;
    let admin = admin(&site);
    const ROWS: usize = 20_000;
    let mut csv = String::from("bin,zone,location\n");
    for i in 0..ROWS {
        csv += &format!("STREAM-{i:06},Z-1,L-1\n");
    }
    let (first, rest) = csv.as_bytes().split_at(csv.len() / 2);
    let addr = site.base.trim_start_matches("http://").to_owned();
    let mut stream = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let head = format!(
        "PUT /v1/admin/reference/bins HTTP/1.1\r\nHost: site\r\nAuthorization: Bearer {admin}\r\n\
         Content-Type: text/csv\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        csv.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(first).await.unwrap();
    stream.flush().await.unwrap();
    // Half the body is in: it is in a file of the data directory, not in
    // the site's memory.
    let mut spooled = 0;
    for _ in 0..200 {
        spooled = unnamed_files_under(&site.data);
        if spooled > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(spooled, 1, "half a body is written to one temporary file");
    stream.write_all(rest).await.unwrap();
    let mut reply = String::new();
    tokio::time::timeout(Duration::from_secs(120), stream.read_to_string(&mut reply))
        .await
        .expect("the import is answered")
        .unwrap();
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    let answer: Value = serde_json::from_str(reply.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    assert_eq!(answer["rows"], ROWS, "{answer}");
    assert_eq!(
        unnamed_files_under(&site.data),
        0,
        "the temporary file is gone with the request"
    );
    site.stop().await;
}

/// The ledger's file size once its write-ahead log is written back.
fn file_size(site: &Site) -> u64 {
    site.db.call_blocking(|conn| {
        conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
            .unwrap()
    });
    std::fs::metadata(site.db.path().unwrap()).unwrap().len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_import_gives_the_pages_it_staged_back_to_the_file_system() {
    let site = Site::start_stocked().await;
    if site.db.path().is_none() {
        // PostgreSQL returns freed space by its own vacuum.
        site.stop().await;
        return;
    }
    let admin = admin(&site);
    let before = file_size(&site);
    // Every row but the last is good: all of them are staged, then the
    // last one refuses the whole file.
    const ROWS: usize = 100_000;
    let mut csv = String::from("epc,code,sku,state,bin\n");
    for i in 0..ROWS {
        csv += &format!("REFUSED-EPC-{i:08},CODE-{i:08},SKU-1,new,\n");
    }
    csv += "REFUSED-LAST,,SKU-1,not-a-state,\n";
    let response = site
        .client
        .put(format!("{}/v1/admin/reference/units", site.base))
        .bearer_auth(&admin)
        .header("content-type", "text/csv")
        .body(csv.clone())
        .timeout(Duration::from_secs(300))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 422);
    let answer: Value = response.json().await.unwrap();
    assert_eq!(answer["errors"][0]["line"], ROWS + 2, "{answer}");
    // The file shrinks when the write-ahead log is written back into it,
    // which waits for readers on an older snapshot (the site's own
    // background reads) to move on: checked until it has, or a deadline.
    let bound = before + 512 * 1024;
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let mut after = file_size(&site);
    while after > bound && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(200)).await;
        after = file_size(&site);
    }
    eprintln!(
        "ledger file: {before} bytes before a refused import of {} bytes, {after} after",
        csv.len()
    );
    // What the staging took (several MB) is given back; a few pages of the
    // import's own bookkeeping may stay.
    assert!(
        after <= bound,
        "the file grew from {before} to {after} bytes for an import that was refused"
    );
    site.stop().await;
}
