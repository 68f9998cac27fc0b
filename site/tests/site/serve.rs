//! The site server over real HTTP on loopback, against a real SQLite file.

use crate::listening;

use std::path::Path;
use std::process::{Command, Stdio};

use stockhop_site::store::db::Db;
use stockhop_site::AppState;

fn write_shell(www: &Path) {
    std::fs::create_dir_all(www.join("pkg")).unwrap();
    std::fs::write(
        www.join("index.html"),
        "<!doctype html><title>Stockhop</title>",
    )
    .unwrap();
    std::fs::write(
        www.join("sw.js"),
        "self.addEventListener('install', () => {});",
    )
    .unwrap();
    std::fs::write(www.join("pkg/stockhop_bg.wasm"), b"\0asm\x01\0\0\0").unwrap();
}

async fn start(
    dir: &Path,
) -> (
    String,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<()>,
) {
    let www = dir.join("www");
    write_shell(&www);
    let db = Db::open(&dir.join("data")).unwrap();
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
    (base, stop, task)
}

#[tokio::test]
async fn serves_health_the_pwa_shell_and_wasm() {
    let dir = tempfile::tempdir().unwrap();
    let (base, stop, task) = start(dir.path()).await;
    let client = reqwest::Client::new();

    let health: serde_json::Value = client
        .get(format!("{base}/healthz"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(health["status"], "ok");
    assert_eq!(
        health["schema_version"],
        stockhop_site::store::db::MIGRATIONS.last().unwrap().version
    );

    let page = client.get(format!("{base}/")).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert!(page.text().await.unwrap().contains("Stockhop"));

    let sw = client.get(format!("{base}/sw.js")).send().await.unwrap();
    assert_eq!(sw.headers()["cache-control"], "no-cache");
    assert!(sw.headers()["content-type"]
        .to_str()
        .unwrap()
        .contains("javascript"));

    let wasm = client
        .get(format!("{base}/pkg/stockhop_bg.wasm"))
        .send()
        .await
        .unwrap();
    assert_eq!(wasm.headers()["content-type"], "application/wasm");
    assert_eq!(wasm.bytes().await.unwrap().as_ref(), b"\0asm\x01\0\0\0");

    let missing = client
        .get(format!("{base}/no-such-file"))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);

    stop.send(()).unwrap();
    task.await.unwrap();
    assert!(dir.path().join("data/stockhop.sqlite").exists());
}

#[test]
fn the_binary_creates_its_database_and_stops_cleanly_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    write_shell(&dir.path().join("www"));
    let data = dir.path().join("data");
    let listening::Listening {
        mut child,
        http,
        logs,
        ..
    } = listening::spawn(
        Command::new(env!("CARGO_BIN_EXE_stockhop-site"))
            .args(["serve", "--http", "127.0.0.1:0", "--https", "127.0.0.1:0"])
            .arg("--data")
            .arg(&data)
            .arg("--www")
            .arg(dir.path().join("www"))
            .args([
                "--terminal-http",
                "127.0.0.1:0",
                "--terminal-tcp",
                "127.0.0.1:0",
            ])
            .env("RUST_LOG", "info"),
    );
    let healthy = {
        use std::io::{Read, Write};
        let mut stream = std::net::TcpStream::connect(http).unwrap();
        stream.write_all(b"GET /healthz HTTP/1.0\r\n\r\n").unwrap();
        let mut reply = String::new();
        stream.read_to_string(&mut reply).unwrap();
        reply.starts_with("HTTP/1.0 200") && reply.contains("\"ok\"")
    };
    assert!(healthy, "server did not answer /healthz");
    assert!(data.join("stockhop.sqlite").exists());
    let pid = child.id().to_string();
    assert!(Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap()
        .success());
    let status = child.wait().unwrap();
    assert!(status.success(), "exit after SIGTERM: {status:?}");
    let logs = logs.join().unwrap();
    assert!(logs.contains("site server stopped"), "{logs}");
}

#[test]
fn a_terminal_config_with_an_unknown_key_stops_the_start_naming_the_file_and_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("terminals.toml");
    std::fs::write(
        &config,
        "allow = \"*\"\ntime_zone = \"Europe/Berlin\"\n[stamps]\nattlog = 9999\noplog = 1\n",
    )
    .unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_stockhop-site"))
        .args(["serve", "--http", "127.0.0.1:0", "--https", "127.0.0.1:0"])
        .arg("--data")
        .arg(dir.path().join("data"))
        .args([
            "--terminal-http",
            "127.0.0.1:0",
            "--terminal-tcp",
            "127.0.0.1:0",
        ])
        .arg("--terminal-config")
        .arg(&config)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!output.status.success(), "started with an unknown key");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(&config.display().to_string()), "{stderr}");
    assert!(stderr.contains("unknown field `oplog`"), "{stderr}");
    assert!(stderr.contains("line 5"), "{stderr}");
}

#[test]
fn a_bad_terminal_setting_from_a_flag_or_its_variable_stops_the_start_naming_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let serve = |flags: &[&str], vars: &[(&str, &str)]| {
        let output = Command::new(env!("CARGO_BIN_EXE_stockhop-site"))
            .args(["serve", "--http", "127.0.0.1:0", "--https", "127.0.0.1:0"])
            .arg("--data")
            .arg(dir.path().join("data"))
            .args(flags)
            .envs(vars.iter().copied())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(!output.status.success(), "started with {flags:?} {vars:?}");
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    let stderr = serve(&["--terminal-realtime", "maybe"], &[]);
    assert!(stderr.contains("--terminal-realtime"), "{stderr}");
    assert!(
        stderr.contains("expected true/1/yes or false/0/no"),
        "{stderr}"
    );
    let stderr = serve(&[], &[("STOCKHOP_TERMINAL_REALTIME", "off")]);
    assert!(stderr.contains("--terminal-realtime"), "{stderr}");
    let stderr = serve(&[], &[("STOCKHOP_TERMINAL_TZ", "Europe/Atlantis")]);
    assert!(stderr.contains("--terminal-tz"), "{stderr}");
    assert!(
        stderr.contains("unknown time zone \"Europe/Atlantis\""),
        "{stderr}"
    );
    for (flags, vars, entry) in [
        (
            &["--terminal-allow", "GATE-1;CLOCK-7"][..],
            &[][..],
            "GATE-1;CLOCK-7",
        ),
        (
            &[][..],
            &[("STOCKHOP_TERMINAL_ALLOW", "GATE-1,bad<serial>, dock 2")][..],
            "bad<serial>",
        ),
        (
            &["--terminal-allow", "GATE-1, dock 2"][..],
            &[][..],
            "dock 2",
        ),
    ] {
        let stderr = serve(flags, vars);
        assert!(stderr.contains("--terminal-allow"), "{stderr}");
        assert!(stderr.contains("STOCKHOP_TERMINAL_ALLOW"), "{stderr}");
        assert!(stderr.contains(&format!("{entry:?}")), "{stderr}");
        assert!(
            stderr.contains("1 to 64 characters of A-Z a-z 0-9 . _ -"),
            "{stderr}"
        );
    }
    let file = dir.path().join("terminals.toml");
    std::fs::write(&file, "allow = \"bad<x>\"\n").unwrap();
    let stderr = serve(&["--terminal-config", file.to_str().unwrap()], &[]);
    assert!(stderr.contains(&file.display().to_string()), "{stderr}");
    assert!(
        stderr.contains("allow: allowlist entry \"bad<x>\""),
        "{stderr}"
    );
    assert!(
        !dir.path().join("data").exists(),
        "nothing is written before the settings are read"
    );
}

#[tokio::test]
async fn the_whole_site_starts_in_process_on_port_0_and_stops_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let www = dir.path().join("www");
    write_shell(&www);
    let data = dir.path().join("data");
    let site = stockhop_site::Site::start(stockhop_site::SiteConfig {
        www_dir: www,
        ..stockhop_site::SiteConfig::on_loopback(data.clone())
    })
    .await
    .unwrap();
    for addr in [
        site.http_addr(),
        site.https_addr(),
        site.terminal_http_addr(),
        site.terminal_tcp_addr(),
    ] {
        assert!(addr.ip().is_loopback() && addr.port() != 0, "{addr}");
    }
    assert!(data.join("stockhop.sqlite").exists());

    let health: serde_json::Value = reqwest::get(format!("http://{}/healthz", site.http_addr()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(health["status"], "ok");
    // Over TLS, trusting the site CA the start made.
    let ca = std::fs::read(data.join("tls").join("ca.crt")).unwrap();
    let client = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(&ca).unwrap())
        .build()
        .unwrap();
    let port = site.https_addr().port();
    let page = client
        .get(format!("https://localhost:{port}/"))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    assert!(page.text().await.unwrap().contains("Stockhop"));
    assert!(site.site_url().ends_with(&format!(":{port}")));
    tokio::net::TcpStream::connect(site.terminal_tcp_addr())
        .await
        .unwrap();

    let http = site.http_addr();
    site.stop().await.unwrap();
    assert!(
        tokio::net::TcpStream::connect(http).await.is_err(),
        "nothing listens once the site has stopped"
    );
}
