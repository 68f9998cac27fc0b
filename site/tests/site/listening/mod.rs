//! A `stockhop-site serve` child on loopback ports the system chooses
//! (`--http 127.0.0.1:0 --https 127.0.0.1:0`), found at the addresses its
//! log lines name: no port is probed first and raced for. For tests that
//! need a real process (signals, exit status, its stderr); the others
//! start the site in-process with `stockhop_site::Site::start`.

#![allow(dead_code)] // each test file uses its own part of the helper

use std::io::BufRead;
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;

/// A started child and where it listens.
pub struct Listening {
    pub child: Child,
    pub http: SocketAddr,
    pub https: SocketAddr,
    pub terminal_http: SocketAddr,
    pub terminal_tcp: SocketAddr,
    /// What the child has logged so far.
    pub so_far: Arc<Mutex<String>>,
    /// Everything the child logged, once it has exited.
    pub logs: JoinHandle<String>,
}

/// The log lines naming the ports, and the field before each address.
const PORT_LINES: [(&str, &str, Port); 4] = [
    ("site server listening (http)", "addr", Port::Http),
    ("site server listening (https)", "addr", Port::Https),
    (
        "terminal listener listening",
        "http_addr",
        Port::TerminalHttp,
    ),
    ("terminal listener listening", "tcp_addr", Port::TerminalTcp),
];

#[derive(Clone, Copy)]
enum Port {
    Http,
    Https,
    TerminalHttp,
    TerminalTcp,
}

/// Starts `command` (a `serve` on loopback, logging at info or lower) with
/// its stderr read on a thread, and waits for the log lines saying where
/// it listens. A child that exits first fails the test with its log.
pub fn spawn(command: &mut Command) -> Listening {
    let mut child = command
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let (found, listening) = mpsc::channel();
    let so_far = Arc::new(Mutex::new(String::new()));
    let logged = so_far.clone();
    let logs = std::thread::spawn(move || {
        for line in stderr.lines() {
            let line = line.unwrap();
            for (message, field, port) in PORT_LINES {
                if line.contains(message) {
                    let _ = found.send((port, loopback_after(&line, field)));
                }
            }
            let mut logged = logged.lock().unwrap();
            logged.push_str(&line);
            logged.push('\n');
        }
        logged.lock().unwrap().clone()
    });
    let mut addrs = [None; PORT_LINES.len()];
    while addrs.iter().any(Option::is_none) {
        match listening.recv() {
            Ok((port, addr)) => addrs[port as usize] = Some(addr),
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
    let addr = |port: Port| addrs[port as usize].expect("waited for above");
    Listening {
        child,
        http: addr(Port::Http),
        https: addr(Port::Https),
        terminal_http: addr(Port::TerminalHttp),
        terminal_tcp: addr(Port::TerminalTcp),
        so_far,
        logs,
    }
}

/// The first loopback address after `field` in a text (`field=ADDR`) or
/// JSON (`"field":"ADDR"`) log line.
fn loopback_after(line: &str, field: &str) -> SocketAddr {
    const LOOPBACK: &str = "127.0.0.1:";
    let from = line
        .find(&format!("{field}="))
        .or_else(|| line.find(&format!("\"{field}\"")));
    let from = from.expect("the line names the field");
    let at = from
        + line[from..]
            .find(LOOPBACK)
            .expect("the field is a loopback address");
    let port = &line[at + LOOPBACK.len()..];
    let digits = port
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(port.len());
    format!("{LOOPBACK}{}", &port[..digits]).parse().unwrap()
}
