//! What one client may cost the site, in one place: connections, time to
//! send a request, bytes and rows one request may make the site store, log
//! lines, and the size of what the ledger keeps. Every limit carries its
//! unit in its name or type and the reason for its value beside it.
//!
//! Limits that belong to one protocol's grammar or one store are defined
//! here too, and that parser or store takes them from here: this module
//! imports nothing of the site's, so every module can read it.

use std::time::Duration;

use stockhop::time::Millis;
use stockhop::wire::MAX_REQUEST_BYTES;

// --- Connections -----------------------------------------------------------

/// Handheld API connections served at once; more wait in the accept
/// backlog, where they cost no file descriptor. A site has tens of
/// handhelds and a browser opens a handful of connections each.
pub const API_MAX_CONNECTIONS: usize = 512;
/// Longest time an API client may take to send a whole request head from
/// the moment its connection is accepted (or its previous response went
/// out): an idle or trickling connection is closed after it. On HTTP/2 a
/// connection with no request in flight for this long is closed (a
/// request whose head trickles is not yet in flight).
pub const API_HEAD_DEADLINE: Duration = Duration::from_secs(10);
/// Requests one HTTP/2 connection may have open at once: a handheld's
/// cold start asks for the shell's ~45 files together, and a browser opens
/// one connection where HTTP/1.1 took six.
pub const API_H2_MAX_STREAMS: u32 = 128;
/// Largest request head (decoded header list) an HTTP/2 client may send,
/// in bytes: the API's heads are a few hundred bytes; hyper's own HTTP/1.1
/// read buffer bounds that protocol's heads likewise.
pub const API_H2_MAX_HEAD_BYTES: u32 = 64 * 1024;
/// API connections one address (IPv6 by /64) may have open at once, on
/// each API port: half the port's, so however one address behaves the
/// other half stays for everyone else, and a dock of handhelds behind one
/// NAT (a few connections each) still fits. Past it a new connection from
/// that address is closed as soon as it is accepted.
pub const API_CONNECTIONS_PER_ADDRESS_MAX: usize = API_MAX_CONNECTIONS / 2;
/// Of one address's API connections, those that may be waiting for a
/// request head at once (new, trickling, or idle between requests); past
/// it the address's longest-waiting connection is closed. A quarter of the
/// port's connections: 600 heads trickled from one address hold 128 slots
/// and leave the rest, and a real request from the same address, its head
/// sent at once, is read before its connection is the oldest. Idle
/// keep-alive connections closed so cost a client only a reconnect.
pub const API_HEADS_WAITING_PER_ADDRESS_MAX: usize = API_MAX_CONNECTIONS / 4;
/// Time an HTTPS client has to finish the TLS handshake: a handheld on a
/// poor link needs a few round trips; a client that stalls holds a slot.
pub const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long shutdown waits for API requests in flight before it closes
/// them (a handheld resends; its key makes the resend harmless).
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);
/// Longest time the signed terminal-batch endpoint waits for a body once
/// its head has been checked: a 1 MiB batch crosses a site LAN in well
/// under a second.
pub const SIGNED_BODY_DEADLINE: Duration = Duration::from_secs(10);

/// Framed TCP bridges connected at once (both shares below together).
pub const TCP_MAX_CONNECTIONS: usize = 256;
/// iclock/Zebra HTTP connections served at once (both shares together).
pub const TERMINAL_HTTP_MAX_CONNECTIONS: usize = 512;
/// Slots of each terminal port kept for peers (by address) that have
/// already had a valid record or request written: a flood of unknown
/// connections holding every general slot cannot lock out the site's own
/// terminals.
pub const KNOWN_PEER_SLOTS: usize = 64;
/// Connections one address (IPv6 by /64) may have open on a terminal
/// port at once: a terminal or a bridge keeps one or two, and a flood from
/// one address then holds at most this many of the port's general slots.
/// Past it a new connection from that address is closed when accepted.
pub const TERMINAL_CONNECTIONS_PER_ADDRESS_MAX: usize = 64;
/// Peer addresses remembered as known per port; past it no new one is
/// added until the process restarts (a site has tens of terminals).
pub const MAX_KNOWN_PEERS: usize = 4096;
/// Longest time a framed connection may take, from its accept, to deliver
/// its first complete frame; after it, only the idle timeout applies. An
/// overall deadline, not an idle timer: a byte every few seconds does not
/// keep a slot.
pub const FIRST_FRAME_DEADLINE: Duration = Duration::from_secs(10);
/// Longest time a terminal HTTP client may take, from its accept, to send
/// its whole request head.
pub const TERMINAL_HEAD_DEADLINE: Duration = Duration::from_secs(10);

/// First pause after a failed `accept()` (out of file descriptors, out of
/// memory): the loop never retries at once. It doubles per failure in a row.
pub const ACCEPT_BACKOFF_FIRST: Duration = Duration::from_millis(10);
/// The pause's cap, as hyper's and axum's own accept loops use.
pub const ACCEPT_BACKOFF_MAX: Duration = Duration::from_secs(1);

// --- Logs ------------------------------------------------------------------

/// A repetitive warning (an accept failure, an unreadable upload, a refused
/// terminal) is written at most once per this interval per kind, with the
/// number left out since the last one.
pub const LOG_SAMPLE_INTERVAL: Duration = Duration::from_secs(10);

// --- What one terminal request may make the listener store -----------------

/// Rows one terminal request may add to the listener's database (queued
/// records plus raw bodies). A 256 KB ATTLOG upload of real 40-byte lines is
/// about 6,500 records; anything past this is refused whole (413) before
/// a row is written.
pub const MAX_ROWS_PER_TERMINAL_REQUEST: usize = 8_192;
/// Bytes of raw text one terminal request may store: its whole body once.
pub const MAX_STORED_BYTES_PER_TERMINAL_REQUEST: usize = MAX_FRAME_BYTES;
/// Bytes all terminals together may have kept raw (OPERLOG, photos,
/// options, unreadable lines) per second, sustained: real terminals send a
/// few such bodies a day, so a flood of junk is what this meets. A request
/// past the budget is answered 503 with Retry-After and nothing is kept.
pub const RAW_BYTES_PER_SECOND: usize = 256 * 1024;
/// The burst the raw budget allows above its rate: a terminal's backlog of
/// photos after an outage.
pub const RAW_BYTES_BURST: usize = 4 * 1024 * 1024;
/// The longest a terminal peer is held back after a request refused for
/// the raw budget (it is held for as long as the budget takes to refill
/// what it asked for): a flood is slowed to the budget's pace before its
/// next body is read.
pub const PENALTY_MAX: Duration = Duration::from_secs(5);
/// How long bodies kept raw (OPERLOG, photos, options, unreadable lines)
/// stay for audit before the prune pass removes them: as long as done
/// queue rows.
pub const RAW_RETENTION: Millis = Millis::from_secs(7 * 24 * 3600);
/// Most raw bodies kept whatever their age: at the 256 KB frame cap a
/// flood stops at 1 GiB instead of filling the disk.
pub const RAW_ROWS_MAX: i64 = 4_096;

// --- Past one site: the outbox to a central ---------------------------------

/// Most hops a site sends a central in one batch, and the most a central
/// takes in one: a hundred hops are one short transaction at the central,
/// and a site back from a long WAN outage drains thousands a minute.
pub const CENTRAL_BATCH_HOPS_MAX: usize = 100;
/// Most bytes of one batch's JSON as the site builds it (it stops adding
/// hops before this, always sending at least one): under the central's
/// request body limit, [`MAX_REQUEST_BYTES`].
pub const CENTRAL_BATCH_BYTES_MAX: usize = MAX_REQUEST_BYTES / 2;
/// How often an idle forwarder looks for new outbox rows: the trigger that
/// writes them cannot wake it, and a hop reaching the central within a
/// second is soon enough for a company-wide view.
pub const CENTRAL_POLL_INTERVAL: Duration = Duration::from_secs(1);
/// How long a done outbox row stays before the prune pass deletes it (7
/// days, as the listener's done rows): long enough to see what went to the
/// central last week. Pending and dead rows are never deleted.
pub const CENTRAL_OUTBOX_DONE_RETENTION: Millis = Millis::from_secs(7 * 24 * 3600);

// --- What the ledger takes (the listener checks these before it acks) ------

/// Longest identifier, in characters: label codes, serials and names are
/// well under it, and the site's view and `/metrics` show it whole.
pub const IDENT_MAX_CHARS: usize = 64;
/// Longest raw terminal record the ledger keeps for audit, in bytes: an
/// ATTLOG line or a gate's JSON object is well under this.
pub const LEDGER_MAX_RAW_BYTES: usize = 64 * 1024;

// --- What one handheld item may make the ledger store ----------------------

/// Longest free-form name in an item or an imported row that is not an
/// identifier (a SKU), in characters.
pub const MAX_ITEM_FIELD_CHARS: usize = 256;
/// Largest item body, as canonical JSON bytes: real scan and session
/// bodies are a few hundred bytes; the body is stored with every hop.
pub const MAX_ITEM_BODY_BYTES: usize = 8 * 1024;
/// Longest string anywhere inside an item body (context values, extra
/// fields), in characters.
pub const MAX_BODY_STRING_CHARS: usize = 1024;
/// Deepest nesting of arrays and objects inside an item body.
pub const MAX_BODY_DEPTH: usize = 8;
/// The largest device clock skew the ledger records, either way: a skew
/// past it (a `sent_at` in year 0000) says only that the device's clock is
/// broken, and is recorded as this bound. The items still apply: a scan is
/// never lost to a bad clock. Ten years covers any clock that still runs.
pub const MAX_CLOCK_SKEW_MS: i64 = 10 * 366 * 24 * 3600 * 1000;

// --- What a central stores of a site's hop --------------------------------

/// Largest `facts` of a hop a central takes, as JSON bytes: a hop's facts
/// hold at most an item body and a terminal's raw record, with room for
/// the ledger's own fields beside them.
pub const CENTRAL_HOP_FACTS_BYTES_MAX: usize =
    MAX_ITEM_BODY_BYTES + LEDGER_MAX_RAW_BYTES + 8 * 1024;
/// How far from the central's clock, either way, a hop's instants may be,
/// in milliseconds: a device clock off by the most the site records
/// ([`MAX_CLOCK_SKEW_MS`]) and as long again for the hop's age at the
/// central. Past it an instant is not a clock's reading but a bad number
/// (2⁶³−1 is not an instant the central could show).
pub const CENTRAL_HOP_INSTANT_WINDOW_MS: i64 = 2 * MAX_CLOCK_SKEW_MS;

// --- Transactions ----------------------------------------------------------

/// Free pages of the ledger's SQLite file returned to the file system in
/// one turn after a refused import is swept: 16 MiB at SQLite's 4 KiB page,
/// a turn of a few tens of milliseconds, so syncs keep the writer between
/// turns while a 300 MB sweep is given back.
pub const FREED_PAGES_PER_TURN: u32 = 4_096;

/// Buffered items applied in one transaction when a gap fills: each chunk
/// commits on its own, so a long backlog never holds the write lock for
/// more than a few milliseconds at a time.
pub const DRAIN_CHUNK_ITEMS: usize = 256;

// --- TLS handshakes, the admission gate and admin sign-ins -----------------

/// Handshakes in progress from all addresses together: under the HTTPS
/// port's connection cap, so finished handshakes always find room, and
/// each costs only a descriptor and a few KB while it lasts.
pub const TLS_HANDSHAKES_MAX: usize = 384;
/// Of [`TLS_HANDSHAKES_MAX`], the handshakes kept for addresses that have
/// finished one before (the site's handhelds, its supervisors' browsers):
/// addresses that never have, however many, share only the rest. A quarter,
/// as the terminal ports keep [`KNOWN_PEER_SLOTS`] of theirs: a fleet's
/// reconnects after an outage are a few dozen handshakes at once.
pub const TLS_HANDSHAKES_KNOWN_RESERVED: usize = TLS_HANDSHAKES_MAX / 4;
/// Handshakes in progress from one address (IPv6 by /64): a browser opens
/// at most six connections per origin (one over HTTP/2). Small enough that
/// stalled ClientHellos from 20 addresses (160) leave more than a third of
/// the unreserved share to addresses new to the site.
pub const TLS_HANDSHAKES_PER_ADDRESS_MAX: usize = 8;
/// Addresses remembered as having finished a handshake, for the reserved
/// share; past it no new one is added until the process restarts (a site
/// has tens of handhelds), so a spray of addresses costs bounded memory.
pub const TLS_KNOWN_ADDRESSES_MAX: usize = MAX_KNOWN_PEERS;

/// Backlog requests that may wait for their turn; more are answered 503
/// with Retry-After. A site's whole fleet returning at once is a few
/// hundred handhelds with one request each in flight.
pub const BACKLOG_WAITING_MAX: usize = 2_048;
/// The longest a backlog request waits for its turn before it is answered
/// 503 with Retry-After: under the handheld's 10 s fetch timeout, so the
/// ledger never applies a request its device has already given up on.
pub const BACKLOG_WAIT_MAX: Duration = Duration::from_secs(8);
/// Live requests that may wait for their turn; more are answered 503. The
/// live fleet is the operators scanning now, one request each.
pub const LIVE_WAITING_MAX: usize = 256;

/// Addresses followed at once: a site's admins sign in from a handful; past
/// it the address heard from longest ago is forgotten first, so a spray from
/// many addresses costs bounded memory.
pub const SIGN_IN_ADDRESSES_MAX: usize = 4096;
/// Failed sign-ins an address may make within [`SIGN_IN_WINDOW`].
pub const SIGN_IN_FAILURES_MAX: usize = 10;
/// The window failed sign-ins are counted over.
pub const SIGN_IN_WINDOW: Duration = Duration::from_secs(60);

// --- Terminal protocols ----------------------------------------------------

/// Largest frame payload: 256 KB, the cap every terminal protocol shares,
/// well under the ledger's 1 MiB body cap.
pub const MAX_FRAME_BYTES: usize = 256 * 1024;
/// Longest record `id`, in characters: enough for a UUID or a device
/// counter with a prefix, small enough to store unchecked.
pub const MAX_ID_CHARS: usize = 128;
/// Longest scan value (`person`, `epc`, `code`), in characters.
pub const MAX_SUBJECT_CHARS: usize = 256;

/// Most headers taken in one request head, bounding the parse work.
pub const MAX_HEADERS: usize = 64;
/// Longest request head taken: an iclock request line with its query and a
/// handful of headers is well under 1 KB; 16 KB leaves room for proxies.
pub const MAX_HEAD_BYTES: usize = 16 * 1024;

/// The longest PIN taken (the firmware allows 9–24 digits).
pub const MAX_PIN_BYTES: usize = 64;
/// The longest serial taken from a terminal (real ones are 13–20 characters);
/// it bounds what an unauthenticated request can make the listener store.
pub const MAX_SERIAL_CHARS: usize = 64;

// --- Heartbeats ------------------------------------------------------------

/// Longest `app_version` a heartbeat may carry: a version string, shown on
/// the dashboard, not a place to store text.
pub const MAX_APP_VERSION_CHARS: usize = 64;

// --- Label printers --------------------------------------------------------

/// Longest job id a caller may give: a UUID is 36 characters, and the id
/// is printed into the format's comment and the tag's verification header.
pub const MAX_JOB_ID_CHARS: usize = 64;
/// How long a printed or dismissed job stays in the log for the view and
/// for retries of its request (then it is deleted): a week of a busy
/// receiving dock is a few thousand rows.
pub const SETTLED_JOB_RETENTION_MS: i64 = 7 * 24 * 3600 * 1000;

/// Most copies of one label a job prints (`^PQ`).
pub const MAX_COPIES: u32 = 100;
/// Longest EPC the site writes, in hex characters: 496 bits, the most an
/// EPC memory bank's PC word can announce (31 words).
pub const MAX_EPC_HEX_CHARS: usize = 124;
/// Longest text printed in one field; longer values are refused before a
/// job is accepted (a bin or serial that long is not a label's business).
pub const MAX_LABEL_FIELD_CHARS: usize = 64;
/// Longest host-status answer the parser waits for before calling it
/// garbage: the three strings are well under 100 bytes on any printer.
pub const MAX_STATUS_BYTES: usize = 512;

// --- Storage ---------------------------------------------------------------

/// The free space below which the site stops taking writes: room for the
/// SQLite WAL to checkpoint, the listener's queue to drain and an operator
/// to act, far above what a day of scans needs.
pub const DEFAULT_MIN_FREE_BYTES: u64 = 256 * 1024 * 1024;
