//! A `stockhop-site serve` child on loopback ports the system chooses
//! (`--http 127.0.0.1:0 --https 127.0.0.1:0`), found at the addresses its
//! log lines name: no port is probed first and raced for. For tests that
//! need a real process (signals, exit status, its stderr); the others
//! start the site in-process with `stockhop_site::Site::start`.

#![allow(dead_code)] // each test file uses its own part of the helper

use std::io::BufRead;
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;

/// A started child and where it listens.
pub struct Listening {
    pub child: Child,
    pub http: SocketAddr,
    pub https: SocketAddr,
    /// Everything the child logged, once it has exited.
    pub logs: JoinHandle<String>,
}

/// Starts `command` (a `serve` on loopback, logging at info or lower) with
/// its stderr read on a thread, and waits for the two log lines saying
/// where it listens. A child that exits first fails the test with its log.
pub fn spawn(command: &mut Command) -> Listening {
    let mut child = command
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let (found, listening) = mpsc::channel();
    let logs = std::thread::spawn(move || {
        let mut logged = String::new();
        for line in stderr.lines() {
            let line = line.unwrap();
            for port in ["http", "https"] {
                if line.contains(&format!("site server listening ({port})")) {
                    let _ = found.send((port, loopback_addr_in(&line)));
                }
            }
            logged.push_str(&line);
            logged.push('\n');
        }
        logged
    });
    let (mut http, mut https) = (None, None);
    while http.is_none() || https.is_none() {
        match listening.recv() {
            Ok(("http", addr)) => http = Some(addr),
            Ok((_, addr)) => https = Some(addr),
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "the site exited before it listened:\n{}",
                    logs.join().unwrap()
                );
            }
        }
    }
    Listening {
        child,
        http: http.unwrap(),
        https: https.unwrap(),
        logs,
    }
}

/// The first loopback address in a text or JSON log line.
fn loopback_addr_in(line: &str) -> SocketAddr {
    const LOOPBACK: &str = "127.0.0.1:";
    let at = line.find(LOOPBACK).expect("the line names the address");
    let port = &line[at + LOOPBACK.len()..];
    let digits = port
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(port.len());
    format!("{LOOPBACK}{}", &port[..digits]).parse().unwrap()
}
