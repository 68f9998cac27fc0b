//! A ZT411R stand-in on loopback: a real TCP server speaking the raw port
//! as the printer does. `~HS` is answered with the three host-status
//! strings (STX … ETX CR LF) carrying its flags; a format (`^XA … ^XZ`) is
//! taken in whole and "printed" (kept with its bytes, its job id from the
//! `^FX` comment, the EPC `^RFW,H` wrote); a `^HV` in it is answered with
//! its header, the tag's read-back and its terminator. Faults: offline
//! (the port refuses connections), paper out, head open, ribbon out,
//! paused, a wrong or void read-back, and a connection dropped as a format
//! begins to arrive.

#![allow(dead_code)] // the tests and the bench use different parts

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::Notify;

/// What the stand-in is doing wrong.
#[derive(Debug, Clone, Default)]
pub struct Faults {
    pub paper_out: bool,
    pub head_open: bool,
    pub ribbon_out: bool,
    pub paused: bool,
    /// The tag reads back as this instead of what was written.
    pub wrong_read_back: Option<String>,
    /// The tag reads back as nothing (the printer voided it).
    pub void_tag: bool,
    /// Drop the connection when the next format starts to arrive.
    pub drop_next_job: bool,
}

/// A label the stand-in printed.
#[derive(Debug, Clone)]
pub struct Printed {
    pub job_id: Option<String>,
    pub zpl: Vec<u8>,
    /// What `^RFW,H` wrote to the tag.
    pub written: Option<String>,
}

#[derive(Default)]
struct State {
    faults: Faults,
    printed: Vec<Printed>,
    status_answers: usize,
}

pub struct StandIn {
    pub addr: SocketAddr,
    state: Arc<Mutex<State>>,
    /// Fires on every status answer and every label printed.
    pub events: Arc<Notify>,
    accept: Option<tokio::task::JoinHandle<()>>,
}

fn listen(addr: SocketAddr) -> TcpListener {
    let socket = TcpSocket::new_v4().unwrap();
    socket.set_reuseaddr(true).unwrap();
    socket.bind(addr).unwrap();
    socket.listen(64).unwrap()
}

impl StandIn {
    pub async fn start() -> StandIn {
        let listener = listen("127.0.0.1:0".parse().unwrap());
        let addr = listener.local_addr().unwrap();
        let mut stand_in = StandIn {
            addr,
            state: Arc::default(),
            events: Arc::new(Notify::new()),
            accept: None,
        };
        stand_in.serve(listener);
        stand_in
    }

    fn serve(&mut self, listener: TcpListener) {
        let (state, events) = (self.state.clone(), self.events.clone());
        self.accept = Some(tokio::spawn(async move {
            let mut connections = tokio::task::JoinSet::new();
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                connections.spawn(connection(stream, state.clone(), events.clone()));
            }
        }));
    }

    /// The address as `printer add` takes it.
    pub fn address(&self) -> String {
        self.addr.to_string()
    }

    /// Off the network: the port refuses connections (and those open are
    /// cut) until [`StandIn::online`].
    pub fn offline(&mut self) {
        if let Some(accept) = self.accept.take() {
            accept.abort();
        }
    }

    /// Back on the network, on the same port.
    pub fn online(&mut self) {
        if self.accept.is_none() {
            let listener = listen(self.addr);
            self.serve(listener);
        }
    }

    pub fn set_faults(&self, faults: Faults) {
        self.state.lock().unwrap().faults = faults;
    }

    pub fn printed(&self) -> Vec<Printed> {
        self.state.lock().unwrap().printed.clone()
    }

    /// How many labels carry job `job_id`.
    pub fn printed_of(&self, job_id: &str) -> usize {
        self.printed()
            .iter()
            .filter(|p| p.job_id.as_deref() == Some(job_id))
            .count()
    }

    pub fn status_answers(&self) -> usize {
        self.state.lock().unwrap().status_answers
    }

    /// Waits until `check` holds, woken by the stand-in's events (and
    /// every 50 ms, for conditions the site's side changes).
    pub async fn until(&self, what: &str, check: impl FnMut(&StandIn) -> bool) {
        self.until_within(what, std::time::Duration::from_secs(20), check)
            .await
    }

    pub async fn until_within(
        &self,
        what: &str,
        within: std::time::Duration,
        mut check: impl FnMut(&StandIn) -> bool,
    ) {
        let deadline = tokio::time::Instant::now() + within;
        while !check(self) {
            assert!(
                tokio::time::Instant::now() < deadline,
                "timed out waiting for {what}"
            );
            let _ =
                tokio::time::timeout(std::time::Duration::from_millis(50), self.events.notified())
                    .await;
        }
    }
}

impl Drop for StandIn {
    fn drop(&mut self) {
        self.offline();
    }
}

const STX: u8 = 0x02;
const ETX: u8 = 0x03;

fn host_status(state: &State) -> Vec<u8> {
    let f = &state.faults;
    let flag = |on: bool| if on { '1' } else { '0' };
    let strings = [
        // aaa,b(paper out),c(pause),dddd,eee,f,g,h,iii,j,k,l
        format!(
            "030,{},{},1218,000,0,0,0,000,0,0,0",
            flag(f.paper_out),
            flag(f.paused)
        ),
        // mmm,n,o(head up),p(ribbon out),q,r,s,t,uuuuuuuu,v,www
        format!(
            "001,0,{},{},1,2,6,0,00000000,1,000",
            flag(f.head_open),
            flag(f.ribbon_out)
        ),
        "1234,0".to_owned(),
    ];
    let mut out = Vec::new();
    for s in strings {
        out.push(STX);
        out.extend_from_slice(s.as_bytes());
        out.extend_from_slice(&[ETX, b'\r', b'\n']);
    }
    out
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The text of `^<command>` up to the next `^FS` in `zpl`.
fn field<'a>(zpl: &'a str, command: &str) -> Option<&'a str> {
    let start = zpl.find(command)? + command.len();
    let end = zpl[start..].find("^FS")? + start;
    Some(&zpl[start..end])
}

/// What a format asks back: the `^HV` answer, if any.
fn print(state: &mut State, zpl: &[u8]) -> Option<Vec<u8>> {
    let text = String::from_utf8_lossy(zpl).into_owned();
    let job_id = field(&text, "^FXstockhop job ").map(str::to_owned);
    let written = field(&text, "^RFW,H^FD").map(str::to_owned);
    state.printed.push(Printed {
        job_id,
        zpl: zpl.to_vec(),
        written: written.clone(),
    });
    // ^HV#,n,header,terminator,L
    let hv = field(&text, "^HV")?;
    let parts: Vec<&str> = hv.split(',').collect();
    let (header, terminator) = (parts.get(2)?, parts.get(3)?);
    let read = if state.faults.void_tag {
        String::new()
    } else if let Some(wrong) = &state.faults.wrong_read_back {
        wrong.clone()
    } else {
        written.unwrap_or_default()
    };
    Some(format!("{header}{read}{terminator}").into_bytes())
}

async fn connection(mut stream: TcpStream, state: Arc<Mutex<State>>, events: Arc<Notify>) {
    let mut buf: Vec<u8> = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        // Take in what is whole at the front of the buffer.
        loop {
            while buf.first().is_some_and(|b| b.is_ascii_whitespace()) {
                buf.remove(0);
            }
            if buf.starts_with(b"~HS") {
                buf.drain(..3);
                let answer = {
                    let mut state = state.lock().unwrap();
                    state.status_answers += 1;
                    host_status(&state)
                };
                if stream.write_all(&answer).await.is_err() {
                    return;
                }
                events.notify_waiters();
            } else if buf.starts_with(b"^XA") {
                let drop_now = {
                    let mut state = state.lock().unwrap();
                    std::mem::take(&mut state.faults.drop_next_job)
                };
                if drop_now {
                    events.notify_waiters();
                    return;
                }
                let Some(end) = find(&buf, b"^XZ") else {
                    break;
                };
                let mut end = end + 3;
                if buf[end..].starts_with(b"\r\n") {
                    end += 2;
                }
                let format: Vec<u8> = buf.drain(..end).collect();
                let answer = print(&mut state.lock().unwrap(), &format);
                if let Some(answer) = answer {
                    if stream.write_all(&answer).await.is_err() {
                        return;
                    }
                }
                events.notify_waiters();
            } else if buf.is_empty() || buf.len() < 3 {
                break;
            } else {
                // Not a command the stand-in knows: the printer ignores it.
                buf.remove(0);
            }
        }
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(read) => buf.extend_from_slice(&chunk[..read]),
        }
    }
}
