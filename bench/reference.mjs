// Reference cache benchmark: a real `stockhop-site serve` with 100,000
// imported units, the PWA's service worker loading them into its
// IndexedDB cache (GET /v1/reference in pages, one transaction a page)
// while the page captures, and find_unit lookups from the cache; beside
// each figure, plain JS in the same page and run doing the same work
// (fetch the pages into IndexedDB, strict capture writes that read the
// unit, an IndexedDB `get` on the worker's own store). Prints a table;
// asserts nothing.
//
//   cargo build -p stockhop-site && cargo xtask build-wasm
//   cd bench && npm install && node reference.mjs [--units N] [--captures N] [--lookups N]
//
// STOCKHOP_SITE_BIN picks the site binary (default target/debug/stockhop-site).
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';

const args = process.argv.slice(2);
// STOCKHOP_BENCH_QUICK=1: small sizes through the same paths and the same
// table, a few seconds in all (the test command runs every bench so); its
// figures are not the ones to quote.
const QUICK = process.env.STOCKHOP_BENCH_QUICK === '1';
const flag = (name, full, quick) => {
  const i = args.indexOf(name);
  if (i >= 0) return Number(args[i + 1]);
  return QUICK ? quick : full;
};
const UNITS = flag('--units', 100_000, 2_000);
// Sequential captures with no load running (the loaded runs take as many
// as the load leaves time for).
const CAPTURES = flag('--captures', 300, 30);
const LOOKUPS = flag('--lookups', 1000, 100);
// Bins the units are spread over.
const BINS = 1000;
// Rows a page, as the worker asks (src/reference.rs REFERENCE_PAGE_ROWS).
const PAGE_ROWS = 100;
// How long the load may take before the run gives up: the quick mode's
// whole run has a minute.
const LOAD_LIMIT_MS = QUICK ? 40_000 : 600_000;
const ROOT = resolve(new URL('..', import.meta.url).pathname);
const SITE_BIN = process.env.STOCKHOP_SITE_BIN || join(ROOT, 'target/debug/stockhop-site');
const WWW = join(ROOT, 'www');

const epc = (n) => 'E28068940000' + String(n).padStart(12, '0');
const code = (n) => 'SN-' + String(n).padStart(7, '0');
const bin = (n) => 'B-' + String(n % BINS).padStart(4, '0');

function freePort() {
  return new Promise((ok, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => ok(port));
    });
  });
}

function site(argv) {
  return execFileSync(SITE_BIN, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

async function startSite(data) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const child = spawn(SITE_BIN, ['serve', '--data', data, '--http', `127.0.0.1:${port}`, '--www', WWW,
    '--https', '127.0.0.1:0', '--terminal-http', '127.0.0.1:0', '--terminal-tcp', '127.0.0.1:0'],
  { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, RUST_LOG: 'warn' } });
  let log = '';
  child.stderr.on('data', (d) => (log += d));
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      if ((await fetch(base + '/healthz')).ok) return { base, child };
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error('the site did not come up:\n' + log);
    }
    await new Promise((ok) => setTimeout(ok, 100));
  }
}

// Polls `predicate` in the page until it holds. The page's Content
// Security Policy forbids eval, so this asks through evaluate, which it
// allows, rather than through waitForFunction.
async function until(page, predicate, limitMs) {
  const t = Date.now();
  while (!(await page.evaluate(predicate))) {
    if (Date.now() - t > limitMs) throw new Error(`the page did not get ready in ${limitMs} ms`);
    await new Promise((ok) => setTimeout(ok, 100));
  }
}

// Runs in the page: the worker loads the cache (set up, then
// reference_refresh resolves at the site's end) while the page captures
// put-away scans one after another; then captures with the cache loaded.
async function workerLoad({ token, units, captures, limitMs }) {
  const ask = window.stockhop.ask;
  const check = (reply) => {
    if (!reply.ok) throw new Error(JSON.stringify(reply));
    return reply;
  };
  const epc = (n) => 'E28068940000' + String(n).padStart(12, '0');
  const open = check(await ask({ type: 'open_session', operator_id: 'bench', mode: 'put_away' }));
  let n = 0;
  // Waits until the worker has nothing to send and no
  // reference page out, twice 6 s apart (a pull the last drain run asked
  // for within the 5 s gap comes when the gap ends), so what is measured
  // next has the worker to itself.
  const settle = async () => {
    const t = performance.now();
    const idle = async () => {
      const counts = await ask({ type: 'counts' });
      const status = await ask({ type: 'reference_status' });
      return counts.queued + counts.sending === 0 && !status.loading;
    };
    for (;;) {
      if (await idle()) {
        await new Promise((ok) => setTimeout(ok, 6000));
        if (await idle()) return;
      }
      if (performance.now() - t > limitMs) throw new Error('the worker did not settle');
      await new Promise((ok) => setTimeout(ok, 200));
    }
  };
  const capture = async () => {
    n += 1;
    const t = performance.now();
    check(await ask({ type: 'capture', session_id: open.session_id, occurred_at: Date.now(),
      body: { mode: 'put_away', epc: epc((n * 7919) % units), bin: 'B-0001' } }));
    return performance.now() - t;
  };
  const t0 = performance.now();
  check(await ask({ type: 'setup', site_url: location.origin, device_token: token, device_id: 'BENCH-1' }));
  let loaded = null;
  const refresh = ask({ type: 'reference_refresh' }).then((reply) => {
    loaded = { reply, ms: performance.now() - t0 };
  });
  const during = [];
  while (!loaded) {
    during.push(await capture());
    if (performance.now() - t0 > limitMs) {
      const status = await ask({ type: 'reference_status' });
      const counts = await ask({ type: 'counts' });
      throw new Error(`the load did not finish in ${limitMs} ms after ${n} captures: ` +
        `cache ${JSON.stringify(status)}; queue ${JSON.stringify(counts)}`);
    }
  }
  await refresh;
  check(loaded.reply);
  // The captures of the loaded run drain to the site first: the quiet run
  // is the queue with nothing else going on.
  for (;;) {
    const counts = check(await ask({ type: 'counts' }));
    if (counts.queued + counts.sending === 0) break;
    if (performance.now() - t0 > limitMs) throw new Error('the captures did not drain');
    await new Promise((ok) => setTimeout(ok, 100));
  }
  const quiet = [];
  for (let i = 0; i < captures; i++) quiet.push(await capture());
  const status = check(await ask({ type: 'reference_status' }));
  await settle();
  return { loadMs: loaded.ms, during, quiet, status };
}

// Runs in the page: the worker loads the whole cache again with nothing
// else going on. A setup naming the site another way (a trailing slash)
// empties the cache, as another site would; the pull starts at once.
async function workerQuietLoad({ token }) {
  const ask = window.stockhop.ask;
  const t0 = performance.now();
  const setup = await ask({ type: 'setup', site_url: location.origin + '/', device_token: token, device_id: 'BENCH-1' });
  if (!setup.ok) throw new Error(JSON.stringify(setup));
  const reply = await ask({ type: 'reference_refresh' });
  if (!reply.ok) throw new Error(JSON.stringify(reply));
  return { loadMs: performance.now() - t0, units: reply.units };
}

// Runs in the page: the same work in plain JS: fetch every page into a
// database of its own (one relaxed transaction a page), while capturing
// strict writes that read the unit in the same transaction; then captures
// with nothing loading.
async function plainLoad({ token, units, captures, pageRows, limitMs }) {
  const name = 'bench-plain-reference-' + Math.random();
  const db = await new Promise((ok, fail) => {
    const req = indexedDB.open(name, 1);
    req.onupgradeneeded = () => {
      const d = req.result;
      const items = d.createObjectStore('items', { keyPath: 'id', autoIncrement: true });
      items.createIndex('by_state', 'state');
      items.createIndex('by_session_seq', ['session_id', 'client_seq'], { unique: true });
      items.createIndex('by_key', 'key', { unique: true });
      d.createObjectStore('units', { keyPath: 'epc' }).createIndex('by_code', 'code', { unique: true });
      d.createObjectStore('bins', { keyPath: 'bin' });
      d.createObjectStore('grns', { keyPath: 'grn' });
      d.createObjectStore('counts', { keyPath: 'count_id' });
      d.createObjectStore('meta', { keyPath: 'name' });
    };
    req.onsuccess = () => ok(req.result);
    req.onerror = () => fail(req.error);
  });
  const done = (tx) => new Promise((ok, fail) => {
    tx.oncomplete = ok;
    tx.onerror = () => fail(tx.error);
    tx.onabort = () => fail(tx.error);
  });
  const epc = (n) => 'E28068940000' + String(n).padStart(12, '0');
  const session_id = crypto.randomUUID();
  let seq = 0;
  const capture = async () => {
    seq += 1;
    const t = performance.now();
    const tx = db.transaction(['items', 'units'], 'readwrite', { durability: 'strict' });
    const body = { mode: 'put_away', epc: epc((seq * 7919) % units), bin: 'B-0001' };
    await new Promise((ok) => {
      const get = tx.objectStore('units').get(body.epc);
      get.onsuccess = () => {
        if (get.result) body.unit_version = get.result.version;
        ok();
      };
    });
    const now = new Date().toISOString();
    tx.objectStore('items').add({ key: crypto.randomUUID(), session_id, client_seq: seq, command: 'scan',
      occurred_at: now, queued_at: now, body, state: 'queued', attempts: 0 });
    await done(tx);
    return performance.now() - t;
  };
  const load = async () => {
    let cursor = null;
    for (;;) {
      const url = `/v1/reference?limit=${pageRows}` + (cursor ? `&after=${encodeURIComponent(cursor)}` : '');
      const page = await (await fetch(url, { headers: { authorization: 'Bearer ' + token } })).json();
      const tx = db.transaction(['units', 'bins', 'grns', 'counts', 'meta'], 'readwrite', { durability: 'relaxed' });
      for (const [store, rows] of [['units', page.units], ['bins', page.bins], ['grns', page.grns], ['counts', page.counts]]) {
        const s = tx.objectStore(store);
        for (const row of rows) s.put(row);
      }
      tx.objectStore('meta').put({ name: 'reference', value: { cursor: page.cursor } });
      await done(tx);
      cursor = page.cursor;
      if (!page.more) return;
    }
  };
  const t0 = performance.now();
  let loadedMs = null;
  const loading = load().then(() => (loadedMs = performance.now() - t0));
  const during = [];
  while (loadedMs === null) {
    during.push(await capture());
    if (performance.now() - t0 > limitMs) throw new Error('the plain load did not finish');
  }
  await loading;
  const quiet = [];
  for (let i = 0; i < captures; i++) quiet.push(await capture());
  db.close();
  indexedDB.deleteDatabase(name);
  return { loadMs: loadedMs, during, quiet };
}

// Runs in the page: find_unit through the worker against an IndexedDB get
// on the worker's own `units` store (by EPC, and by code through its
// index), the same keys in the same order.
async function lookups({ units, lookups }) {
  const epc = (n) => 'E28068940000' + String(n).padStart(12, '0');
  const code = (n) => 'SN-' + String(n).padStart(7, '0');
  const keys = Array.from({ length: lookups }, (_, i) => (i * 104729) % units);
  const time = async (one) => {
    const out = [];
    for (const k of keys) {
      const t = performance.now();
      const found = await one(k);
      out.push(performance.now() - t);
      if (!found) throw new Error('not found: ' + k);
    }
    return out;
  };
  const ask = window.stockhop.ask;
  const db = await new Promise((ok, fail) => {
    const req = indexedDB.open('stockhop');
    req.onsuccess = () => ok(req.result);
    req.onerror = () => fail(req.error);
  });
  const get = (source, key) => new Promise((ok, fail) => {
    const req = source.get(key);
    req.onsuccess = () => ok(req.result);
    req.onerror = () => fail(req.error);
  });
  // One untimed pass of each path over the same keys first, so every
  // timed pass reads warm storage and runs warm code (otherwise the first
  // pass pays for the disk reads and the worker's code tiering up, and
  // the later ones do not).
  await time((k) => get(db.transaction('units').objectStore('units'), epc(k)));
  await time((k) => get(db.transaction('units').objectStore('units').index('by_code'), code(k)));
  await time(async (k) => (await ask({ type: 'find_unit', code: epc(k) })).unit);
  await time(async (k) => (await ask({ type: 'find_unit', code: code(k) })).unit);
  const byEpc = await time(async (k) => (await ask({ type: 'find_unit', code: epc(k) })).unit);
  const byCode = await time(async (k) => (await ask({ type: 'find_unit', code: code(k) })).unit);
  // The floor the worker hop sets: a message sw.js answers itself.
  const ping = await time(async () => (await ask({ type: 'ping' })).ok);
  const plainEpc = await time((k) => get(db.transaction('units').objectStore('units'), epc(k)));
  const plainCode = await time((k) => get(db.transaction('units').objectStore('units').index('by_code'), code(k)));
  db.close();
  return { byEpc, byCode, ping, plainEpc, plainCode };
}

function pct(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function table(head, rows) {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (c) => '| ' + c.map((x, i) => x.padEnd(widths[i])).join(' | ') + ' |';
  console.log(line(head));
  console.log('|' + widths.map((w) => '-'.repeat(w + 2)).join('|') + '|');
  for (const r of rows) console.log(line(r));
}

async function main() {
  const data = mkdtempSync(join(tmpdir(), 'stockhop-bench-reference-'));
  let server = null;
  let browser = null;
  try {
    writeFileSync(join(data, 'bins.csv'), 'bin,zone,location\n' +
      Array.from({ length: BINS }, (_, n) => `${bin(n)},Z-${n % 10},L-1\n`).join(''));
    writeFileSync(join(data, 'units.csv'), 'epc,code,sku,state,bin\n' +
      Array.from({ length: UNITS }, (_, n) => `${epc(n)},${code(n)},SKU-${n % 50},in_stock,${bin(n)}\n`).join(''));
    const t = Date.now();
    site(['import', 'bins', join(data, 'bins.csv'), '--data', data]);
    site(['import', 'units', join(data, 'units.csv'), '--data', data]);
    const importMs = Date.now() - t;
    const token = site(['device', 'add', 'BENCH-1', '--profile', 'mc3390xr', '--commissioned', '--data', data]).trim();
    server = await startSite(data);
    browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      headless: false,
      args: ['--headless=new', '--no-sandbox', '--disable-background-networking', '--disable-component-update',
        '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'],
    });
    const page = await browser.newPage();
    page.on('pageerror', (err) => console.error('page error:', err.message));
    await page.goto(server.base + '/');
    await until(page, () => document.body.dataset.ready === 'true', 60000);
    const options = { token, units: UNITS, captures: CAPTURES, pageRows: PAGE_ROWS, limitMs: LOAD_LIMIT_MS };
    const worker = await page.evaluate(workerLoad, options);
    const plain = await page.evaluate(plainLoad, options);
    const found = await page.evaluate(lookups, { units: UNITS, lookups: LOOKUPS });
    const quietLoad = await page.evaluate(workerQuietLoad, { token });
    const version = await browser.version();
    const rows = UNITS + BINS;
    const pages = Math.ceil(rows / PAGE_ROWS);
    console.log(`Chromium ${version}; a real stockhop-site (${SITE_BIN.replace(ROOT + '/', '')}) with ${UNITS} units in ${BINS} bins` +
      ` (imported in ${(importMs / 1000).toFixed(1)} s); pages of ${PAGE_ROWS} rows (${pages} pages)`);
    console.log('');
    const f = (x) => x.toFixed(2);
    const load = (label, r) => [label, String(pages), '', '', (r.loadMs / 1000).toFixed(1), ((rows / r.loadMs) * 1000).toFixed(0)];
    const timed = (label, v) => [label, String(v.length), f(pct(v, 50)), f(pct(v, 99)), '', ''];
    table(['what', 'n', 'p50 ms', 'p99 ms', 'total s', 'rows/s'], [
      load(`reference load, ${UNITS} units: worker, captures running (fetch → wasm → IndexedDB)`, worker),
      load(`reference load, ${UNITS} units: worker, nothing else running`, quietLoad),
      load(`reference load, ${UNITS} units: plain JS in the page, captures running (fetch → IndexedDB)`, plain),
      timed('capture during the load: queue (page → worker → wasm → IndexedDB)', worker.during),
      timed('capture, nothing loading: queue', worker.quiet),
      timed('capture during the load: plain JS in the page (strict write reading the unit)', plain.during),
      timed('capture, nothing loading: plain JS in the page', plain.quiet),
      timed('find_unit by EPC: worker (page → worker → wasm → IndexedDB)', found.byEpc),
      timed('find_unit by code: worker', found.byCode),
      timed('messaging only: page → worker → page, no module, no IndexedDB', found.ping),
      timed('IndexedDB get by EPC on the worker\'s units store: plain JS in the page', found.plainEpc),
      timed('IndexedDB get by code (by_code index): plain JS in the page', found.plainCode),
    ]);
    console.log('');
    const s = worker.status;
    console.log(`worker cache after the load: ${s.units} units, ${s.bins} bins, cursor ${s.cursor}, complete ${s.complete};` +
      ` device ${s.device && s.device.profile} (${s.device && s.device.modes.length} modes)`);
    console.log(`targets: capture p99 during the load ${f(pct(worker.during, 99))} ms (≤ 50 ms);` +
      ` find_unit p99 ${f(Math.max(pct(found.byEpc, 99), pct(found.byCode, 99)))} ms (≤ 10 ms)`);
  } finally {
    if (browser) await browser.close();
    if (server) server.child.kill('SIGTERM');
    rmSync(data, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
