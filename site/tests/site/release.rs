//! Releases over real HTTP on loopback: the build id in `/version.json`,
//! `sw.js` and `index.html`, strong content `ETag`s on the shell, `304`
//! only for the very bytes a client holds (never for a rollback to older
//! files), and `Cache-Control` on the worker script.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use reqwest::header::{CACHE_CONTROL, ETAG, IF_MODIFIED_SINCE, IF_NONE_MATCH, LAST_MODIFIED};
use reqwest::StatusCode;
use stockhop_site::shell::release::{shell_files, Version, BUILD_ID_HEX_CHARS, BUILD_MARKER};
use stockhop_site::store::db::Db;
use stockhop_site::AppState;

/// A shell whose files say `tag`; `sw.js` and `index.html` hold the marker.
fn write_shell(www: &Path, tag: &str) {
    for file in shell_files() {
        let path = www.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let text = match file.as_str() {
            "sw.js" => format!("const BUILD = '{BUILD_MARKER}'; // {tag}\n"),
            "index.html" => format!(
                "<!doctype html><meta name=\"stockhop-build\" content=\"{BUILD_MARKER}\"><title>{tag}</title>\n"
            ),
            _ => format!("{file} {tag}\n"),
        };
        std::fs::write(path, text).unwrap();
    }
}

struct Site {
    base: String,
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
}

async fn start(data: &Path, www: PathBuf) -> Site {
    let db = Db::open(data).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let state = AppState {
        db,
        www_dir: www,
        ledger: Default::default(),
    };
    let task = tokio::spawn(async move {
        stockhop_site::serve(listener, state, async {
            let _ = stopped.await;
        })
        .await
        .unwrap();
    });
    Site { base, stop, task }
}

impl Site {
    async fn stop(self) {
        self.stop.send(()).unwrap();
        self.task.await.unwrap();
    }
}

async fn version(client: &reqwest::Client, base: &str) -> Version {
    let response = client
        .get(format!("{base}/version.json"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()[CACHE_CONTROL], "no-store");
    response.json().await.unwrap()
}

#[tokio::test]
async fn version_json_names_the_build_sw_js_and_index_html_carry_it() {
    let dir = tempfile::tempdir().unwrap();
    let www = dir.path().join("www");
    write_shell(&www, "one");
    let site = start(&dir.path().join("data"), www.clone()).await;
    let client = reqwest::Client::new();

    let served = version(&client, &site.base).await;
    assert_eq!(served.build.len(), BUILD_ID_HEX_CHARS);
    assert!(served
        .build
        .chars()
        .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c)));
    assert_eq!(served.schema, stockhop::release::SCHEMA_VERSION);

    let sw = client
        .get(format!("{}/sw.js", site.base))
        .send()
        .await
        .unwrap();
    assert_eq!(sw.status(), StatusCode::OK);
    assert_eq!(sw.headers()[CACHE_CONTROL], "no-cache");
    assert!(sw.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/javascript"));
    assert!(sw.headers().get(ETAG).is_some());
    let text = sw.text().await.unwrap();
    assert!(text.contains(&served.build), "{text}");
    assert!(!text.contains(BUILD_MARKER));

    for path in ["/", "/index.html"] {
        let page = client
            .get(format!("{}{path}", site.base))
            .send()
            .await
            .unwrap();
        assert_eq!(page.status(), StatusCode::OK);
        assert_eq!(page.headers()[CACHE_CONTROL], "no-cache");
        let text = page.text().await.unwrap();
        assert!(
            text.contains(&format!("content=\"{}\"", served.build)),
            "{path}: {text}"
        );
    }
    site.stop().await;
}

#[tokio::test]
async fn a_change_to_any_shell_file_changes_the_build_and_the_worker_script() {
    let dir = tempfile::tempdir().unwrap();
    let www = dir.path().join("www");
    write_shell(&www, "one");
    let site = start(&dir.path().join("data"), www.clone()).await;
    let client = reqwest::Client::new();
    let sw = |client: reqwest::Client, base: String| async move {
        client
            .get(format!("{base}/sw.js"))
            .send()
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap()
    };

    let mut builds = vec![version(&client, &site.base).await.build];
    let mut scripts = vec![sw(client.clone(), site.base.clone()).await];
    // Deployed in place while the site runs: only the wasm changes, then
    // only the glue, then the page: each is a new build and a new sw.js.
    for file in ["pkg/stockhop_bg.wasm", "pkg/stockhop.js", "app.js"] {
        std::fs::write(www.join(file), format!("{file} two\n")).unwrap();
        let build = version(&client, &site.base).await.build;
        assert!(!builds.contains(&build), "{file}: a new build");
        let script = sw(client.clone(), site.base.clone()).await;
        assert!(!scripts.contains(&script), "{file}: a new worker script");
        builds.push(build);
        scripts.push(script);
    }
    site.stop().await;

    // The same files from another directory: the same build.
    let copy = dir.path().join("copy");
    write_shell(&copy, "one");
    let again = start(&dir.path().join("data"), copy).await;
    assert_eq!(version(&client, &again.base).await.build, builds[0]);
    again.stop().await;
}

#[tokio::test]
async fn shell_files_carry_content_etags_and_a_rollback_is_never_answered_304() {
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old");
    let new = dir.path().join("new");
    write_shell(&old, "old");
    write_shell(&new, "new");
    // The older release's files are older on disk, as a kept directory's are.
    let long_ago = SystemTime::now() - Duration::from_secs(30 * 24 * 3600);
    for file in shell_files() {
        let handle = std::fs::File::options()
            .write(true)
            .open(old.join(file))
            .unwrap();
        handle.set_modified(long_ago).unwrap();
    }
    let client = reqwest::Client::new();

    // The device holds the new release's files and their validators.
    let site = start(&dir.path().join("data"), new.clone()).await;
    let mut held = Vec::new();
    for file in ["app.js", "pkg/stockhop_bg.wasm", "sw.js", "index.html"] {
        let response = client
            .get(format!("{}/{file}", site.base))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{file}");
        assert!(
            response.headers().get(LAST_MODIFIED).is_none(),
            "{file}: no date validator"
        );
        assert_eq!(response.headers()[CACHE_CONTROL], "no-cache", "{file}");
        let etag = response.headers()[ETAG].to_str().unwrap().to_owned();
        assert!(
            etag.starts_with('"') && !etag.starts_with("W/"),
            "{file}: a strong ETag: {etag}"
        );
        // The same bytes again are 304 by their ETag.
        let again = client
            .get(format!("{}/{file}", site.base))
            .header(IF_NONE_MATCH, &etag)
            .send()
            .await
            .unwrap();
        assert_eq!(again.status(), StatusCode::NOT_MODIFIED, "{file}");
        assert_eq!(again.headers()[ETAG].to_str().unwrap(), etag);
        held.push((file, etag, response.bytes().await.unwrap()));
    }
    site.stop().await;

    // Rolled back: the site serves the older directory. Every file the
    // device revalidates comes back whole, the older bytes.
    let site = start(&dir.path().join("data"), old.clone()).await;
    for (file, etag, newer) in held {
        let response = client
            .get(format!("{}/{file}", site.base))
            .header(IF_NONE_MATCH, &etag)
            .header(
                IF_MODIFIED_SINCE,
                httpdate::fmt_http_date(SystemTime::now()),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(
            response.status(),
            StatusCode::OK,
            "{file}: a rollback is not 304"
        );
        assert_ne!(response.headers()[ETAG].to_str().unwrap(), etag, "{file}");
        let older = response.bytes().await.unwrap();
        assert_ne!(older, newer, "{file}");
        assert!(String::from_utf8_lossy(&older).contains("old"), "{file}");
    }
    site.stop().await;
}

#[tokio::test]
async fn a_head_request_and_a_range_request_get_the_whole_file_s_validators() {
    let dir = tempfile::tempdir().unwrap();
    let www = dir.path().join("www");
    write_shell(&www, "one");
    let site = start(&dir.path().join("data"), www.clone()).await;
    let client = reqwest::Client::new();
    let full = client
        .get(format!("{}/app.js", site.base))
        .send()
        .await
        .unwrap();
    let etag = full.headers()[ETAG].clone();
    let length = full.bytes().await.unwrap().len();
    let head = client
        .head(format!("{}/app.js", site.base))
        .send()
        .await
        .unwrap();
    assert_eq!(head.status(), StatusCode::OK);
    assert_eq!(head.headers()[ETAG], etag);
    assert_eq!(
        head.headers()["content-length"],
        length.to_string().as_str()
    );
    let ranged = client
        .get(format!("{}/app.js", site.base))
        .header("range", "bytes=0-3")
        .send()
        .await
        .unwrap();
    assert_eq!(ranged.status(), StatusCode::OK, "the shell is served whole");
    assert_eq!(ranged.headers()[ETAG], etag);
    assert_eq!(ranged.bytes().await.unwrap().len(), length);
    site.stop().await;
}
