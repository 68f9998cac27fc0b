// Capture benchmark: the service-worker queue (page → worker message →
// wasm → one strict IndexedDB transaction → reply) against plain-JS
// IndexedDB baselines doing the same strict writes (a plain-JS service
// worker answering the same messages, and plain JS in the page), in the
// same headless Chromium run. Prints a table; asserts nothing.
//
//   cd bench && npm install && node capture.mjs [--single N] [--burst N] [--batch N] [--cold N] [--no-wasm-opt]
//
// Needs www/pkg built (`cargo xtask build-wasm`, which already runs
// wasm-opt as wasm-pack.toml says). The module is optimised once more here
// with wasm-opt (binaryen from npm, or $WASM_OPT; WASM_OPT_LEVEL picks the
// level, -Oz by default) and that build is the one measured, so the run
// also proves the optimised module works.
import { createServer } from 'node:http';
import { readFile, stat, mkdtemp, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { gzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join, extname, resolve, normalize } from 'node:path';
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
const SINGLE = flag('--single', 300, 20); // sequential captures, each awaited
const BURST = flag('--burst', 2000, 200);  // captures fired at once, like an RFID sled
const BATCH = flag('--batch', 100, 100); // reads per capture_many message
const WARMUP = QUICK ? 5 : 20;
// Cold starts measured per worker: stop every worker (CDP), then one capture.
const COLD = flag('--cold', 20, 2);
// How long a stopped worker may take to report itself stopped: the browser
// lets a worker finish its open IndexedDB transaction first, which took
// over 5 s once on a 2-core machine busy with a full test run.
const STOP_WAIT_MS = 8_000;
// Stops asked before the run gives up (see stopAll).
const STOP_ATTEMPTS = 3;
const WWW = resolve(new URL('../www', import.meta.url).pathname);
const WASM = join(WWW, 'pkg', 'stockhop_bg.wasm');
// The plain-JS service worker the queue is held against (served at /baseline/).
// How long a backlog may take to drain before the run gives up.
const DRAIN_LIMIT_MS = 300000;
// Port 9 (discard) on loopback: nothing listens, so every attempt fails fast.
const UNREACHABLE_SITE = 'http://127.0.0.1:9';
const BASELINE = resolve(new URL('./baseline', import.meta.url).pathname);
// binaryen from npm (a devDependency here): Debian's wasm-opt 108 predates
// the features rustc now emits and writes a module that traps.
const LOCAL_WASM_OPT = new URL('./node_modules/.bin/wasm-opt', import.meta.url).pathname;
const WASM_OPT = process.env.WASM_OPT || LOCAL_WASM_OPT;
const WASM_OPT_FEATURES = ['--enable-bulk-memory', '--enable-nontrapping-float-to-int', '--enable-sign-ext',
  '--enable-mutable-globals', '--enable-reference-types', '--enable-multivalue'];

const TYPES = {
  '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm',
  '.json': 'application/json', '.webmanifest': 'application/manifest+json', '.png': 'image/png',
};

async function optimised() {
  if (args.includes('--no-wasm-opt')) return null;
  try {
    const dir = await mkdtemp(join(tmpdir(), 'stockhop-bench-'));
    const out = join(dir, 'stockhop_bg.wasm');
    const level = process.env.WASM_OPT_LEVEL || '-Oz';
    execFileSync(WASM_OPT, [...WASM_OPT_FEATURES, level, '--strip-debug', '--strip-producers', WASM, '-o', out],
      { stdio: 'ignore' });
    return out;
  } catch {
    return null;
  }
}

// A stand-in site for the answering runs: `POST /v1/sync` applies every
// item at once (no ledger behind it), so the figures are the device's.
// It counts what it received to show each key arrived once.
const site = { requests: 0, items: 0, keys: new Set(), duplicates: 0 };

async function answerSync(req, res) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const request = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  const now = new Date().toISOString();
  site.requests += 1;
  for (const item of request.items) {
    site.items += 1;
    if (site.keys.has(item.key)) site.duplicates += 1;
    site.keys.add(item.key);
  }
  const results = request.items.map((item) => ({ key: item.key, client_seq: item.client_seq, status: 200,
    outcome: 'applied', replayed: false, recorded_at: now, hop_ids: [] }));
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ server_time: now, results }));
}

function serve(wasmPath) {
  const server = createServer(async (req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    if (req.method === 'POST' && url.pathname === '/v1/sync') {
      answerSync(req, res).catch(() => res.writeHead(400).end());
      return;
    }
    let path = normalize(decodeURIComponent(url.pathname));
    if (path.endsWith('/')) path += 'index.html';
    let file = path === '/pkg/stockhop_bg.wasm' && wasmPath ? wasmPath : join(WWW, path);
    if (path.startsWith('/baseline/')) file = join(BASELINE, path.slice('/baseline/'.length));
    if (!file.startsWith(WWW) && !file.startsWith(BASELINE) && file !== wasmPath) {
      res.writeHead(403).end();
      return;
    }
    try {
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': TYPES[extname(file)] || 'application/octet-stream', 'cache-control': 'no-cache' });
      res.end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  return new Promise((ok) => server.listen(0, '127.0.0.1', () => ok(server)));
}

// Runs in the page: the queue through the service worker, or (inPage) the
// same wasm module loaded in the page itself, to separate the cost of
// messaging from the cost of the queue.
async function measureQueue({ single, burst, warmup, inPage, batch, setup }) {
  // The product page's call, or the plain-JS baseline worker's same call.
  let ask = window.baseline ? window.baseline.ask : window.stockhop.ask;
  if (inPage) {
    const module = await import('/pkg/stockhop.js');
    await module.default();
    const direct = await module.ServiceWorker.open('bench-in-page-' + Math.random());
    ask = (message) => direct.handleMessage(message, undefined);
  }
  if (setup) {
    const reply = await ask(setup);
    if (!reply.ok) throw new Error(JSON.stringify(reply));
  }
  const open = await ask({ type: 'open_session', operator_id: 'bench', mode: 'cycle_count' });
  if (!open.ok) throw new Error(JSON.stringify(open));
  const session_id = open.session_id;
  let n = 0;
  const capture = async () => {
    n += 1;
    const t = performance.now();
    const reply = await ask({ type: 'capture', session_id, body: { mode: 'cycle_count', epc: 'E2806894000040017790' + String(n).padStart(4, '0') } });
    if (!reply.ok) throw new Error(JSON.stringify(reply));
    return performance.now() - t;
  };
  const { singles, singleMs } = await window.benchSingles(capture, warmup, single);
  const t1 = performance.now();
  let bursts;
  if (batch) {
    // The burst as a sled hands it over: `batch` reads a message.
    const message = async (size) => {
      const bodies = Array.from({ length: size }, () => {
        n += 1;
        return { mode: 'cycle_count', epc: 'E2806894000040017790' + String(n).padStart(4, '0') };
      });
      const t = performance.now();
      const reply = await ask({ type: 'capture_many', session_id, bodies });
      if (!reply.ok || reply.items.some((i) => i.error)) throw new Error(JSON.stringify(reply).slice(0, 300));
      return Array(size).fill(performance.now() - t);
    };
    const sizes = [];
    for (let i = 0; i < burst; i += batch) sizes.push(Math.min(batch, burst - i));
    bursts = (await Promise.all(sizes.map(message))).flat();
  } else {
    bursts = await Promise.all(Array.from({ length: burst }, capture));
  }
  const burstMs = performance.now() - t1;
  const counts = await ask({ type: 'counts' });
  return { singles, singleMs, bursts, burstMs, stored: counts.queued + counts.sending + counts.done };
}

// Installed in each page before it loads (the measurements run in the
// page, so they share this there): warm up, then time `single` sequential
// calls of `one`.
function installTiming() {
  window.benchSingles = async (one, warmup, single) => {
    for (let i = 0; i < warmup; i++) await one();
    const singles = [];
    const t0 = performance.now();
    for (let i = 0; i < single; i++) singles.push(await one());
    return { singles, singleMs: performance.now() - t0 };
  };
}

// Runs in the page: waits until the worker's queue has nothing left to
// send (bounded), and says how long that took.
async function drained({ limitMs }) {
  const t = performance.now();
  for (;;) {
    const counts = await window.stockhop.ask({ type: 'counts' });
    if (counts.queued + counts.sending === 0) return { ms: performance.now() - t, done: counts.done };
    if (performance.now() - t > limitMs) throw new Error('not drained: ' + JSON.stringify(counts));
    await new Promise((ok) => setTimeout(ok, 50));
  }
}

// Runs in the page: a page → worker → page round trip that the worker
// answers without the module or IndexedDB: the floor messaging sets.
async function measurePing({ single, burst, warmup }) {
  const one = async () => {
    const t = performance.now();
    await window.stockhop.ask({ type: 'ping' });
    return performance.now() - t;
  };
  const { singles, singleMs } = await window.benchSingles(one, warmup, single);
  const t1 = performance.now();
  const bursts = await Promise.all(Array.from({ length: burst }, one));
  return { singles, singleMs, bursts, burstMs: performance.now() - t1 };
}

// Runs in the page: plain-JS IndexedDB, the same strict writes.
async function measureBaseline({ single, burst, warmup, perTx }) {
  const name = 'bench-baseline-' + perTx + '-' + Math.random();
  const db = await new Promise((ok, fail) => {
    const req = indexedDB.open(name, 1);
    req.onupgradeneeded = () => {
      const items = req.result.createObjectStore('items', { keyPath: 'id', autoIncrement: true });
      items.createIndex('by_state', 'state');
      items.createIndex('by_session_seq', ['session_id', 'client_seq'], { unique: true });
      items.createIndex('by_key', 'key', { unique: true });
    };
    req.onsuccess = () => ok(req.result);
    req.onerror = () => fail(req.error);
  });
  const session_id = crypto.randomUUID();
  let seq = 0;
  const record = () => {
    seq += 1;
    const now = new Date().toISOString();
    return { key: crypto.randomUUID(), session_id, client_seq: seq, command: 'scan', occurred_at: now, queued_at: now,
      body: { mode: 'cycle_count', epc: 'E2806894000040017790' + String(seq).padStart(4, '0') }, state: 'queued', attempts: 0 };
  };
  const write = (records) => new Promise((ok, fail) => {
    const tx = db.transaction('items', 'readwrite', { durability: 'strict' });
    for (const r of records) tx.objectStore('items').add(r);
    tx.oncomplete = ok;
    tx.onerror = () => fail(tx.error);
    tx.onabort = () => fail(tx.error);
  });
  const one = async () => {
    const t = performance.now();
    await write([record()]);
    return performance.now() - t;
  };
  const { singles, singleMs } = await window.benchSingles(one, warmup, single);
  const t1 = performance.now();
  let bursts;
  if (perTx === 1) {
    bursts = await Promise.all(Array.from({ length: burst }, one));
  } else {
    bursts = [];
    const groups = [];
    for (let i = 0; i < burst; i += perTx) {
      const size = Math.min(perTx, burst - i);
      const t = performance.now();
      groups.push(write(Array.from({ length: size }, record)).then(() => {
        const ms = performance.now() - t;
        for (let k = 0; k < size; k++) bursts.push(ms);
      }));
    }
    await Promise.all(groups);
  }
  const burstMs = performance.now() - t1;
  db.close();
  indexedDB.deleteDatabase(name);
  return { singles, singleMs, bursts, burstMs, stored: seq };
}

// Stops every service worker and waits until the measured one (its script
// at `scriptURL`) reports itself stopped. Only that one is waited for: the
// other page stays open and its background reads start its own worker
// again at once. A page's background read arriving while a worker stops
// starts it again (and it then stays up for the browser's idle timeout),
// so a stop that does not hold within STOP_WAIT_MS is asked again, at most
// STOP_ATTEMPTS times.
async function stopAll(cdp, versions, scriptURL) {
  const measured = () => [...versions.values()].filter((v) => v.url === scriptURL && v.status !== 'redundant');
  // No version reported yet is not a stopped worker.
  const allStopped = () => measured().length > 0 && measured().every((v) => v.running === 'stopped');
  for (let attempt = 1; ; attempt++) {
    await cdp.send('ServiceWorker.stopAllWorkers');
    const t = Date.now();
    while (!allStopped() && Date.now() - t <= STOP_WAIT_MS) {
      await new Promise((ok) => setTimeout(ok, 10));
    }
    if (allStopped()) return;
    if (attempt === STOP_ATTEMPTS) {
      throw new Error(`the worker ${scriptURL} did not stop, asked ${STOP_ATTEMPTS} times ${STOP_WAIT_MS} ms apart: ` +
        JSON.stringify([...versions.values()]));
    }
  }
}

// Cold start as the operator feels it: every service worker is stopped
// (CDP `ServiceWorker.stopAllWorkers`, as the browser does to an idle
// worker), then the page posts one capture; the time is to its ack, so it
// covers starting the worker, loading its code (and for the queue the wasm
// module and opening IndexedDB) and the strict write. `COLD` times each.
async function coldStarts(page, scriptURL) {
  const cdp = await page.context().newCDPSession(page);
  const versions = new Map();
  cdp.on('ServiceWorker.workerVersionUpdated', ({ versions: updated }) => {
    for (const v of updated) {
      versions.set(v.versionId, { id: v.versionId, running: v.runningStatus, status: v.status, url: v.scriptURL });
    }
  });
  await cdp.send('ServiceWorker.enable');
  const session = await page.evaluate(async () => {
    const ask = window.baseline ? window.baseline.ask : window.stockhop.ask;
    const open = await ask({ type: 'open_session', operator_id: 'cold', mode: 'cycle_count' });
    if (!open.ok) throw new Error(JSON.stringify(open));
    return open.session_id;
  });
  const times = [];
  for (let i = 0; i < COLD; i++) {
    await stopAll(cdp, versions, scriptURL);
    times.push(await page.evaluate(async ({ session_id, n }) => {
      const ask = window.baseline ? window.baseline.ask : window.stockhop.ask;
      const t0 = performance.now();
      const reply = await ask({ type: 'capture', session_id, body: { mode: 'cycle_count', epc: 'COLD' + n } });
      if (!reply.ok) throw new Error(JSON.stringify(reply));
      return performance.now() - t0;
    }, { session_id: session, n: i }));
  }
  await cdp.detach();
  return times;
}

function pct(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function coldRow(label, times) {
  const total = times.reduce((a, b) => a + b, 0);
  return [label, 'cold start', times.length, pct(times, 50), pct(times, 99), (times.length / total) * 1000];
}

function rows(label, r) {
  return [
    [label, 'single', r.singles.length, pct(r.singles, 50), pct(r.singles, 99), (r.singles.length / r.singleMs) * 1000],
    [label, 'burst', r.bursts.length, pct(r.bursts, 50), pct(r.bursts, 99), (r.bursts.length / r.burstMs) * 1000],
  ];
}

function table(all) {
  const head = ['path', 'mode', 'n', 'p50 ms', 'p99 ms', 'captures/s'];
  const cells = all.map((r) => [r[0], r[1], String(r[2]), r[3].toFixed(2), r[4].toFixed(2), r[5].toFixed(0)]);
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (c) => '| ' + c.map((x, i) => x.padEnd(widths[i])).join(' | ') + ' |';
  console.log(line(head));
  console.log('|' + widths.map((w) => '-'.repeat(w + 2)).join('|') + '|');
  for (const c of cells) console.log(line(c));
}

async function main() {
  const raw = await readFile(WASM);
  const optPath = await optimised();
  const opt = optPath ? await readFile(optPath) : null;
  const server = await serve(optPath);
  const base = `http://127.0.0.1:${server.address().port}`;
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: false,
    args: ['--headless=new', '--no-sandbox', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'],
  });
  try {
    const page = await browser.newPage();
    await page.addInitScript(installTiming);
    page.on('pageerror', (err) => console.error('page error:', err.message));
    await page.goto(base + '/');
    await page.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout: 60000 });
    const options = { single: SINGLE, burst: BURST, warmup: WARMUP };
    const queue = await page.evaluate(measureQueue, options);
    const inPage = await page.evaluate(measureQueue, { ...options, inPage: true });
    const ping = await page.evaluate(measurePing, options);
    const batched = await page.evaluate(measureQueue, { ...options, single: 0, warmup: 0, batch: BATCH });
    // A handheld set up for a site it cannot reach (a closed loopback
    // port): every capture starts a drain attempt at once, as docs/design.md
    // §3.5 asks, which fails; the backlog of the runs above is in the queue.
    const setup = { type: 'setup', site_url: UNREACHABLE_SITE, device_token: 'bench', device_id: 'bench' };
    const offline = await page.evaluate(measureQueue, { ...options, setup });
    const offlineBatched = await page.evaluate(measureQueue, { ...options, single: 0, warmup: 0, batch: BATCH });
    // The same handheld pointed at a site that answers: the backlog of the
    // runs above drains first (timed), then every capture drains at once.
    const answering = { type: 'setup', site_url: base, device_token: 'bench', device_id: 'bench' };
    await page.evaluate((m) => window.stockhop.ask(m), answering);
    const backlog = await page.evaluate(drained, { limitMs: DRAIN_LIMIT_MS });
    const online = await page.evaluate(measureQueue, options);
    const onlineBatched = await page.evaluate(measureQueue, { ...options, single: 0, warmup: 0, batch: BATCH });
    const settled = await page.evaluate(drained, { limitMs: DRAIN_LIMIT_MS });
    const received = { requests: site.requests, items: site.items, keys: site.keys.size, duplicates: site.duplicates };
    const queueCold = await coldStarts(page, base + '/sw.js');
    const jsPage = await browser.newPage();
    await jsPage.addInitScript(installTiming);
    jsPage.on('pageerror', (err) => console.error('baseline page error:', err.message));
    await jsPage.goto(base + '/baseline/index.html');
    await jsPage.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout: 60000 });
    const jsWorker = await jsPage.evaluate(measureQueue, options);
    const jsWorkerBatched = await jsPage.evaluate(measureQueue, { ...options, single: 0, warmup: 0, batch: BATCH });
    const jsWorkerCold = await coldStarts(jsPage, base + '/baseline/sw.js');
    const baseline1 = await page.evaluate(measureBaseline, { ...options, perTx: 1 });
    const baselineGroup = await page.evaluate(measureBaseline, { ...options, perTx: 256 });
    const version = await browser.version();
    console.log(`Chromium ${version}; durability "strict"; ${SINGLE} single captures after ${WARMUP} warm-up, then a burst of ${BURST}`);
    console.log('');
    table([
      ...rows('queue (page → worker → wasm → IndexedDB)', queue),
      ...rows(`queue, capture_many (${BATCH} reads a message)`, batched).slice(1),
      ...rows('queue, set up, site unreachable (drains on every capture)', offline),
      ...rows(`queue, set up, site unreachable, capture_many (${BATCH} a message)`, offlineBatched).slice(1),
      ...rows('queue, set up, site answering (drains on every capture)', online),
      ...rows(`queue, set up, site answering, capture_many (${BATCH} a message)`, onlineBatched).slice(1),
      coldRow('queue, worker stopped → first capture acked', queueCold),
      ...rows('plain-JS worker (page → worker → JS → IndexedDB)', jsWorker),
      ...rows(`plain-JS worker, capture_many (${BATCH} reads a message)`, jsWorkerBatched).slice(1),
      coldRow('plain-JS worker, worker stopped → first capture acked', jsWorkerCold),
      ...rows('same wasm in the page, no messaging', inPage),
      ...rows('messaging only: page → worker → page, no storage', ping),
      ...rows('plain JS, one transaction per capture', baseline1),
      ...rows('plain JS, 256 captures per transaction', baselineGroup),
    ]);
    console.log('');
    const expected = WARMUP + SINGLE + BURST + 1;
    console.log(`queue items stored: ${queue.stored} of ${expected} captured (incl. the session open);` +
      ` after every queue run ${offlineBatched.stored} of ${2 * expected + 2 * (BURST + 1)}`);
    const rate = (r) => r.bursts.length / r.burstMs;
    const times = (a, b) => (a / b).toFixed(2) + '×';
    const total = 3 * expected + 3 * (BURST + 1);
    console.log(`backlog of ${backlog.done} items drained to the answering site in ${(backlog.ms / 1000).toFixed(1)} s;` +
      ` after the answering runs ${settled.done} of ${total} done, the site got ${received.keys} distinct keys` +
      ` in ${received.requests} requests (${received.items} items, ${received.duplicates} sent again)`);
    console.log(`single p50, queue ÷ plain-JS worker: ${times(pct(queue.singles, 50), pct(jsWorker.singles, 50))};` +
      ` queue ÷ plain JS in the page: ${times(pct(queue.singles, 50), pct(baseline1.singles, 50))}` +
      ` (messaging alone: ${times(pct(ping.singles, 50), pct(baseline1.singles, 50))})`);
    console.log(`cold start p50, queue ÷ plain-JS worker: ${times(pct(queueCold, 50), pct(jsWorkerCold, 50))}` +
      ` (${pct(queueCold, 50).toFixed(1)} ms against ${pct(jsWorkerCold, 50).toFixed(1)} ms)`);
    console.log(`burst rate, plain-JS worker ÷ queue: capture_many ${times(rate(jsWorkerBatched), rate(batched))},` +
      ` one message per capture ${times(rate(jsWorker), rate(queue))}`);
    console.log(`burst rate, plain JS ÷ queue: one tx each ${times(rate(baseline1), rate(queue))},` +
      ` 256 per tx ${times(rate(baselineGroup), rate(queue))}; without messaging ${times(rate(baselineGroup), rate(inPage))}`);
    console.log('');
    const kb = (n) => (n / 1024).toFixed(1) + ' KiB';
    console.log('| wasm build | raw | gzip -9 |');
    console.log('|---|---|---|');
    console.log(`| www/pkg as built | ${kb(raw.length)} | ${kb(gzipSync(raw, { level: 9 }).length)} |`);
    if (opt) {
      console.log(`| www/pkg + wasm-opt ${process.env.WASM_OPT_LEVEL || '-Oz'} here (measured above) | ${kb(opt.length)} | ${kb(gzipSync(opt, { level: 9 }).length)} |`);
    } else {
      console.log('| www/pkg + wasm-opt here | (wasm-opt unavailable) | |');
    }
  } finally {
    await browser.close();
    server.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
