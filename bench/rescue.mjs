// Rescue export benchmark: the queue screen's Export (`export_queue`: the
// worker reads every unacknowledged item in one read-only IndexedDB
// transaction and writes the signed rescue file, the browser's JSON and
// WebCrypto doing the text and the digests) over a queue of N items held
// offline, in headless Chromium. Beside it, the baseline: reading the same
// items through the same worker as the queue screen does (`list`, 500 a
// page), the read alone with nothing written. Prints one table: time to
// the file (median of the runs), the file's size, bytes an item. Asserts
// nothing but that the file holds every item and the queue is unchanged.
//
//   cargo xtask build-wasm && cd bench && npm install && node rescue.mjs [--items N] [--runs N]
//
// Needs www/pkg built. The site is a closed loopback port: the device is
// offline, as a handheld that needs a rescue is.
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize, resolve } from 'node:path';
import { chromium } from 'playwright-core';

// STOCKHOP_BENCH_QUICK=1: a tenth of the items and one run, through the
// same paths and the same table (the test command runs every bench so);
// its figures are not the ones to quote.
const QUICK = process.env.STOCKHOP_BENCH_QUICK === '1';
const args = process.argv.slice(2);
const flag = (name, full, quick) => {
  const i = args.indexOf(name);
  if (i >= 0) return Number(args[i + 1]);
  return QUICK ? quick : full;
};
/** Items queued before the export: a long shift offline. */
const ITEMS = flag('--items', 10_000, 1_000);
/** Exports (and walks) timed; the table shows the median. */
const RUNS = flag('--runs', 5, 1);
/** Scans one capture_many carries (the worker's own ceiling). */
const BATCH = 1_000;
/** Port 9 (discard) on loopback: nothing listens, so the device is offline. */
const UNREACHABLE_SITE = 'http://127.0.0.1:9';
const WWW = resolve(new URL('../www', import.meta.url).pathname);
const CHROMIUM = process.env.STOCKHOP_CHROMIUM || '/usr/bin/chromium';

const TYPES = {
  '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json',
  '.webmanifest': 'application/manifest+json', '.png': 'image/png', '.css': 'text/css', '.ftl': 'text/plain',
};

/** www/ over plain HTTP on loopback: the shell and nothing else. */
function serve() {
  const server = createServer(async (req, res) => {
    let path = normalize(decodeURIComponent(new URL(req.url, 'http://127.0.0.1').pathname));
    if (path.endsWith('/')) path += 'index.html';
    const file = join(WWW, path);
    if (!file.startsWith(WWW)) {
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

// Runs in the page: sets the device up offline and queues `items` scans.
async function fill({ items, batch, site }) {
  const ask = window.stockhop.ask;
  const setup = await ask({ type: 'setup', site_url: site, device_token: 'bench-token', device_id: 'HH-BENCH' });
  if (!setup.ok) throw new Error(JSON.stringify(setup));
  const open = await ask({ type: 'open_session', operator_id: 'bench', mode: 'put_away' });
  if (!open.ok) throw new Error(JSON.stringify(open));
  let n = 1;
  while (n < items) {
    const size = Math.min(batch, items - n);
    const bodies = Array.from({ length: size }, (_, i) => ({
      mode: 'put_away', epc: `E28068940000400177${String(n + i).padStart(6, '0')}`, bin: 'B-01-02',
    }));
    const reply = await ask({ type: 'capture_many', session_id: open.session_id, bodies });
    if (!reply.ok || reply.items.some((i) => i.error)) throw new Error(JSON.stringify(reply).slice(0, 300));
    n += size;
  }
  const counts = await ask({ type: 'counts' });
  return counts.queued + counts.sending;
}

// Runs in the page: one export, timed from the message to the Blob made.
async function exportOnce() {
  const t = performance.now();
  const reply = await window.stockhop.ask({ type: 'export_queue' });
  if (!reply.ok) throw new Error(JSON.stringify(reply));
  const blob = new Blob([reply.file], { type: 'application/jsonl' });
  const ms = performance.now() - t;
  const text = await blob.text();
  return { ms, items: reply.items, bytes: blob.size, lines: text.split('\n').length - 1 };
}

// Runs in the page: the same items read as the queue screen reads them.
async function walkOnce() {
  const t = performance.now();
  let after;
  let items = 0;
  for (;;) {
    const reply = await window.stockhop.ask({ type: 'list', after, limit: 500 });
    if (!reply.ok) throw new Error(JSON.stringify(reply));
    items += reply.items.length;
    if (reply.next_after == null || reply.items.length === 0) break;
    after = reply.next_after;
  }
  return { ms: performance.now() - t, items };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function table(rows) {
  const head = ['path', 'items', 'median ms', 'items/s', 'file bytes', 'bytes/item'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (c) => '| ' + c.map((x, i) => x.padEnd(widths[i])).join(' | ') + ' |';
  console.log(line(head));
  console.log('|' + widths.map((w) => '-'.repeat(w + 2)).join('|') + '|');
  for (const r of rows) console.log(line(r));
}

async function main() {
  const server = await serve();
  const base = `http://127.0.0.1:${server.address().port}`;
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless=new', '--no-sandbox', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run', '--disable-dev-shm-usage', '--disable-gpu'],
  });
  try {
    const page = await browser.newPage();
    page.on('pageerror', (err) => console.error('page error:', err.message));
    await page.goto(base + '/');
    await page.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout: 60_000 });
    const queued = await page.evaluate(fill, { items: ITEMS, batch: BATCH, site: UNREACHABLE_SITE });
    const exports = [];
    const walks = [];
    for (let run = 0; run < RUNS; run++) {
      exports.push(await page.evaluate(exportOnce));
      walks.push(await page.evaluate(walkOnce));
    }
    const last = exports.at(-1);
    if (last.items !== ITEMS || last.lines !== ITEMS + 2) throw new Error(`the file holds ${last.items} items in ${last.lines} lines, not ${ITEMS}`);
    const after = await page.evaluate(() => window.stockhop.ask({ type: 'counts' }));
    if (after.queued + after.sending !== queued) throw new Error(`the export changed the queue: ${JSON.stringify(after)}`);
    const version = browser.version();
    const exportMs = median(exports.map((e) => e.ms));
    const walkMs = median(walks.map((w) => w.ms));
    console.log(`Chromium ${version}; ${ITEMS} put-away scans queued offline; median of ${RUNS} run(s)`);
    console.log('');
    table([
      ['export_queue (the rescue file, signed)', String(ITEMS), exportMs.toFixed(0), ((ITEMS / exportMs) * 1000).toFixed(0),
        String(last.bytes), (last.bytes / ITEMS).toFixed(0)],
      ['baseline: list, 500 a page (the read alone)', String(walks.at(-1).items), walkMs.toFixed(0),
        ((walks.at(-1).items / walkMs) * 1000).toFixed(0), '–', '–'],
    ]);
  } finally {
    await browser.close();
    server.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
