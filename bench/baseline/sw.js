// The plain-JS baseline for the capture benchmark: what a hand-written JS
// service worker would do for the same capture messages, with the same
// strict writes as the queue (the item, with the same indexes, and its
// session's record in one readwrite transaction), the session's next seq
// kept in memory (read back from IndexedDB after the worker was stopped).
// No module, no key derivation, no drain, no checks.
const DB_NAME = 'bench-sw-baseline';
let opened = null;

function db() {
  if (!opened) {
    opened = new Promise((ok, fail) => {
      // One database per browser profile (each run starts a fresh one), so
      // a worker started again finds what the stopped one wrote.
      const req = indexedDB.open(DB_NAME, 1);
      req.onupgradeneeded = () => {
        const items = req.result.createObjectStore('items', { keyPath: 'id', autoIncrement: true });
        items.createIndex('by_state', 'state');
        items.createIndex('by_session_seq', ['session_id', 'client_seq'], { unique: true });
        items.createIndex('by_key', 'key', { unique: true });
        req.result.createObjectStore('sessions', { keyPath: 'session_id' });
      };
      req.onsuccess = () => ok(req.result);
      req.onerror = () => fail(req.error);
    });
  }
  return opened;
}

const sessions = new Map();

// The session from memory, or (in a worker started again) from IndexedDB.
async function sessionOf(database, sessionId) {
  if (!sessions.has(sessionId)) {
    const stored = await new Promise((ok, fail) => {
      const req = database.transaction('sessions').objectStore('sessions').get(sessionId);
      req.onsuccess = () => ok(req.result);
      req.onerror = () => fail(req.error);
    });
    if (!stored) throw new Error('unknown session ' + sessionId);
    sessions.set(sessionId, stored);
  }
  return sessions.get(sessionId);
}

async function write(database, sessionId, command, bodies) {
  const session = await sessionOf(database, sessionId);
  const now = new Date().toISOString();
  const records = bodies.map((body) => {
    session.last_seq += 1;
    return { key: crypto.randomUUID(), session_id: sessionId, client_seq: session.last_seq, command,
      occurred_at: now, queued_at: now, body, state: 'queued', attempts: 0 };
  });
  return new Promise((ok, fail) => {
    const tx = database.transaction(['items', 'sessions'], 'readwrite', { durability: 'strict' });
    const items = tx.objectStore('items');
    for (const record of records) {
      items.add(record).onsuccess = (event) => { record.id = event.target.result; };
    }
    tx.objectStore('sessions').put({ ...session });
    tx.oncomplete = () => ok(records.map((r) => ({ id: r.id, key: r.key, client_seq: r.client_seq })));
    tx.onerror = () => fail(tx.error);
    tx.onabort = () => fail(tx.error);
  });
}

async function handle(message) {
  const database = await db();
  switch (message.type) {
    case 'open_session': {
      const session_id = crypto.randomUUID();
      sessions.set(session_id, { session_id, operator_id: message.operator_id, mode: message.mode, last_seq: 0 });
      const [item] = await write(database, session_id, 'open_session', [{ operator_id: message.operator_id }]);
      return { ok: true, session_id, ...item };
    }
    case 'capture': {
      const [item] = await write(database, message.session_id, message.command || 'scan', [message.body]);
      return { ok: true, ...item };
    }
    case 'capture_many': {
      const items = await write(database, message.session_id, message.command || 'scan', message.bodies);
      return { ok: true, items };
    }
    case 'counts': {
      const queued = await new Promise((ok, fail) => {
        const req = database.transaction('items').objectStore('items').count();
        req.onsuccess = () => ok(req.result);
        req.onerror = () => fail(req.error);
      });
      return { ok: true, queued, sending: 0, done: 0 };
    }
    default:
      throw new Error('unknown message type ' + message.type);
  }
}

self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));
self.addEventListener('message', (event) => {
  const port = event.ports[0];
  event.waitUntil(handle(event.data).then(
    (reply) => port.postMessage(reply),
    (err) => port.postMessage({ ok: false, error: { code: 'BASELINE', message: String(err && err.message || err) } }),
  ));
});
