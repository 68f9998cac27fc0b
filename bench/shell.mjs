// Cold start of the handheld shell over a warehouse Wi-Fi profile: a real
// stockhop-site serves www/ over HTTPS by name (its own CA, trusted the way
// a device trusts it), and headless Chromium opens the shell in a fresh
// profile each run with Chromium's own network throttling (CDP
// Network.emulateNetworkConditions) on the page and on its service worker.
// Beside it, in the same run and served the same way, a baseline: one plain
// static page holding the same bytes as the whole shell, with a scan field.
// Prints one table: bytes on the wire (headers included), requests, the HTTP
// version, the time to the first screen (from then on the scan field takes
// what is typed: the shell holds a scan until it has started), the largest
// contentful paint, and the time until the page has started (its worker
// answers, a held scan is handled). Asserts nothing.
//
//   cargo build -p stockhop-site && cargo xtask build-wasm
//   cd bench && npm install && node shell.mjs [--runs N]
//
// STOCKHOP_SITE_BIN picks the site binary (default target/debug/stockhop-site),
// STOCKHOP_WWW the www/ it serves (default the tree's).
import { spawn, execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';

// STOCKHOP_BENCH_QUICK=1: one run of each page, through the same paths and
// the same table (the test command runs every bench so); its figures are
// not the ones to quote.
const QUICK = process.env.STOCKHOP_BENCH_QUICK === '1';
const args = process.argv.slice(2);
const flag = (name, full, quick) => {
  const i = args.indexOf(name);
  if (i >= 0) return Number(args[i + 1]);
  return QUICK ? quick : full;
};
/** Cold loads of each page; the table shows their median. */
const RUNS = flag('--runs', 5, 1);

/** The warehouse Wi-Fi profile: 20 Mbit/s each way, 40 ms round trip. */
const WIFI = {
  offline: false,
  latency: 40,
  downloadThroughput: (20 * 1000 * 1000) / 8,
  uploadThroughput: (20 * 1000 * 1000) / 8,
};
/** The name the site's certificate is issued for, resolved to loopback. */
const SITE_NAME = 'stockhop.bench';
/** How long the site may take to answer /healthz after it starts. */
const SITE_START_MS = 30_000;
/** How long one cold load may take before the run gives up. */
const LOAD_LIMIT_MS = 60_000;

const ROOT = resolve(new URL('..', import.meta.url).pathname);
const WWW = process.env.STOCKHOP_WWW || join(ROOT, 'www');
const SITE_BIN = process.env.STOCKHOP_SITE_BIN || join(ROOT, 'target/debug/stockhop-site');
const CHROMIUM = process.env.STOCKHOP_CHROMIUM || '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage',
  '--disable-background-networking', '--disable-component-update'];

/** The shell as the service worker caches it (www/shell.json), `www/`-relative. */
const SHELL = JSON.parse(readFileSync(join(WWW, 'shell.json'), 'utf8'));

/**
 * The baseline page: a scan field and, in an inert script block, the
 * shell's files one after the other (`<` written `\x3c` so none closes the
 * block), padded or cut to the shell's raw size, so it carries the same
 * bytes in one request.
 */
function baselinePage() {
  const shell = Buffer.concat(SHELL.map((file) => readFileSync(join(WWW, file))));
  const head = '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>baseline</title></head>'
    + '<body><input id="scan-input" autocomplete="off"><script type="text/plain">';
  const tail = '</script></body></html>';
  const room = shell.length - Buffer.byteLength(head) - Buffer.byteLength(tail);
  const text = shell.toString('latin1').replaceAll('<', '\\x3c');
  return head + text.slice(0, room).padEnd(room, ' ') + tail;
}

/** A served copy of www/ with the baseline page beside the shell. */
function servedTree() {
  const dir = mkdtempSync(join(tmpdir(), 'stockhop-bench-shell-'));
  const www = join(dir, 'www');
  cpSync(WWW, www, { recursive: true });
  writeFileSync(join(www, 'baseline.html'), baselinePage(), 'latin1');
  const data = join(dir, 'data');
  mkdirSync(data);
  return { www, data };
}

/** Starts the site on loopback ports of its choosing; resolves with its HTTPS port once it answers. */
async function startSite({ www, data }) {
  const child = spawn(SITE_BIN, ['serve', '--data', data, '--www', www, '--http', '127.0.0.1:0',
    '--https', '127.0.0.1:0', '--tls-name', SITE_NAME, '--terminal-http', '127.0.0.1:0',
    '--terminal-tcp', '127.0.0.1:0'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr.on('data', (d) => (log += d));
  const deadline = Date.now() + SITE_START_MS;
  for (;;) {
    const http = /site server listening \(http\) addr=127\.0\.0\.1:(\d+)/.exec(log);
    const https = /site server listening \(https\) addr=127\.0\.0\.1:(\d+)/.exec(log);
    if (http && https) {
      const healthy = await fetch(`http://127.0.0.1:${http[1]}/healthz`).then((r) => r.ok, () => false);
      if (healthy) return { child, port: Number(https[1]) };
    }
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`stockhop-site did not come up:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A HOME whose NSS database trusts the site's CA, as a device does once it is set up. */
function homeTrusting(caFile) {
  const home = mkdtempSync(join(tmpdir(), 'stockhop-bench-home-'));
  const nssdb = join(home, '.pki', 'nssdb');
  mkdirSync(nssdb, { recursive: true });
  execFileSync('certutil', ['-d', `sql:${nssdb}`, '-N', '--empty-password']);
  execFileSync('certutil', ['-d', `sql:${nssdb}`, '-A', '-t', 'C,,', '-n', 'Stockhop site CA', '-i', caFile]);
  return home;
}

/**
 * Throttles and counts a CDP target's network: every request it makes and
 * the bytes each took on the wire, headers included.
 */
function meter(send, on, tally) {
  const requests = new Map();
  on('Network.requestWillBeSent', ({ requestId, request }) => {
    if (!request.url.startsWith('data:')) requests.set(requestId, { url: request.url });
  });
  on('Network.responseReceived', ({ requestId, response }) => {
    const request = requests.get(requestId);
    if (request) request.protocol = response.protocol;
  });
  on('Network.loadingFinished', ({ requestId, encodedDataLength }) => {
    const request = requests.get(requestId);
    if (!request) return;
    tally.requests += 1;
    tally.wire += encodedDataLength;
    if (request.protocol) tally.protocols.add(request.protocol);
  });
  return Promise.all([send('Network.enable', {}), send('Network.emulateNetworkConditions', WIFI)]);
}

/**
 * Notes, in the page, when its first screen shows, its largest contentful
 * paint, and when it has started. The shell shows a screen (a
 * `main > section` loses `hidden`) with its scan field taking what is
 * typed, and sets body[data-ready="true"] once it has started (its worker
 * and module answer, a scan typed before is handled); the baseline does
 * both once its bytes are in (its load event: the site's policy runs no
 * inline script).
 */
function markReady(baseline) {
  const at = () => performance.now();
  let shown;
  let started;
  window.marks = {
    shown: new Promise((resolve) => { shown = () => resolve(at()); }),
    started: new Promise((resolve) => { started = () => resolve(at()); }),
    lcp: 0,
  };
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) window.marks.lcp = entry.startTime;
  }).observe({ type: 'largest-contentful-paint', buffered: true });
  if (baseline) {
    addEventListener('load', () => {
      shown();
      started();
    });
  }
  new MutationObserver(() => {
    if (document.querySelector('main > section.screen:not([hidden])')) shown();
    if (document.body?.dataset.ready === 'true') started();
  }).observe(document, { subtree: true, attributes: true, attributeFilter: ['hidden', 'data-ready'] });
}

/**
 * One cold load of `path` in a fresh browser context: resolves with the
 * time from navigation to a usable scan field and what the page and its
 * service worker moved.
 */
async function coldLoad(browser, origin, path, baseline) {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.addInitScript(markReady, baseline);
  const tally = { requests: 0, wire: 0, protocols: new Set() };
  const session = await context.newCDPSession(page);
  // The page's service worker, attached before it runs a line, so its
  // fetches (the shell it caches at install) are throttled and counted
  // like the page's; messages to it go through the page's session.
  let nextId = 1;
  const workers = new Map();
  session.on('Target.attachedToTarget', ({ sessionId, targetInfo }) => {
    const handlers = new Map();
    const send = (method, params) => {
      session.send('Target.sendMessageToTarget', { sessionId, message: JSON.stringify({ id: nextId++, method, params }) })
        .catch(() => {});
      return Promise.resolve();
    };
    workers.set(sessionId, handlers);
    if (targetInfo.type === 'service_worker') {
      meter(send, (event, handler) => handlers.set(event, handler), tally);
    }
    send('Runtime.runIfWaitingForDebugger', {});
  });
  session.on('Target.receivedMessageFromTarget', ({ sessionId, message }) => {
    const { method, params } = JSON.parse(message);
    workers.get(sessionId)?.get(method)?.(params);
  });
  await session.send('Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: true, flatten: false });
  await meter((method, params) => session.send(method, params), (event, handler) => session.on(event, handler), tally);
  const started = Date.now();
  await page.goto(`${origin}${path}`, { waitUntil: 'commit', timeout: LOAD_LIMIT_MS });
  const marks = await Promise.race([
    page.evaluate(async () => ({ shownMs: await window.marks.shown, startedMs: await window.marks.started })),
    new Promise((_, reject) => setTimeout(() => reject(new Error(`${path}: not started in ${LOAD_LIMIT_MS} ms`)), LOAD_LIMIT_MS).unref()),
  ]);
  // What is still in flight as the page starts (the worker's last shell
  // files) counts too: settle before reading the tally.
  await page.waitForLoadState('networkidle', { timeout: LOAD_LIMIT_MS });
  const lcpMs = await page.evaluate(() => window.marks.lcp);
  await context.close();
  return { ...marks, lcpMs, elapsedMs: Date.now() - started, ...tally };
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};
const kib = (bytes) => (bytes / 1024).toFixed(1);

const tree = servedTree();
const site = await startSite(tree);
const home = homeTrusting(join(tree.data, 'tls', 'ca.crt'));
/** Chromium as a handheld runs it, and once more held to HTTP/1.1. */
const launch = (extra) => chromium.launch({
  executablePath: CHROMIUM,
  headless: true,
  args: [...CHROMIUM_ARGS, `--host-resolver-rules=MAP ${SITE_NAME} 127.0.0.1`, ...extra],
  env: { ...process.env, HOME: home },
});
const browsers = { default: await launch([]), http1: await launch(['--disable-http2']) };
try {
  const origin = `https://${SITE_NAME}:${site.port}`;
  const rawShell = SHELL.reduce((sum, file) => sum + readFileSync(join(WWW, file)).length, 0);
  const pages = [
    ['shell (/), its service worker included', '/', false, browsers.default],
    ['shell, the browser held to HTTP/1.1', '/', false, browsers.http1],
    ['baseline: one static page of the same bytes', '/baseline.html', true, browsers.default],
  ];
  const rows = [];
  for (const [label, path, baseline, browser] of pages) {
    const runs = [];
    for (let i = 0; i < RUNS; i += 1) runs.push(await coldLoad(browser, origin, path, baseline));
    rows.push({
      label,
      runs: RUNS,
      wire: median(runs.map((r) => r.wire)),
      requests: median(runs.map((r) => r.requests)),
      protocols: [...new Set(runs.flatMap((r) => [...r.protocols]))].join(' '),
      shownMs: median(runs.map((r) => r.shownMs)),
      lcpMs: median(runs.map((r) => r.lcpMs)),
      startedMs: median(runs.map((r) => r.startedMs)),
    });
  }
  console.log(`Chromium ${browsers.default.version()}; ${SITE_BIN}; throttled to ${WIFI.downloadThroughput * 8 / 1e6} Mbit/s, ${WIFI.latency} ms RTT;`
    + ` the shell is ${SHELL.length} files, ${kib(rawShell)} KiB raw\n`);
  console.log('medians in ms from navigation: first screen (its scan field takes scans), largest contentful paint,'
    + ' started (worker answers, a held scan handled)\n');
  console.log('| page | runs | KiB on the wire | requests | HTTP | first screen | LCP | started |');
  console.log('|---|---:|---:|---:|---|---:|---:|---:|');
  const ms = (value) => value.toFixed(0);
  for (const r of rows) {
    console.log(`| ${r.label} | ${r.runs} | ${kib(r.wire)} | ${r.requests} | ${r.protocols} | ${ms(r.shownMs)} | ${r.lcpMs ? ms(r.lcpMs) : '–'} | ${ms(r.startedMs)} |`);
  }
} finally {
  await Promise.all(Object.values(browsers).map((browser) => browser.close()));
  site.child.kill('SIGTERM');
}
