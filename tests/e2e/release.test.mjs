// Releases end to end: one handheld (a persistent Chromium profile, as a
// real device keeps its worker, caches and IndexedDB across restarts)
// through real builds of the shell, each deployed by restarting
// `stockhop-site serve` on the same port with another `--www`, with scans
// queued offline before each switch, and the ledger read back to check
// that every scan landed once and in order.
//
// The builds are made here from the tree's www/ (built by `cargo xtask
// build-wasm`): A is it as it is; B changes only the wasm; C changes
// sw.js, app.js and the wasm. A wasm change is a custom section appended
// to the module: new bytes in the file the worker compiles, exactly what a
// Rust-only change is to the shell (the glue unchanged), without a second
// release build of the module (minutes) per run. That the worker runs the
// new module is read from its own build's cache.
//
// The newer schema a rollback meets is what a newer build leaves in
// IndexedDB (the version and its compatibility declaration), written into
// the profile with the worker kept out (Playwright's `serviceWorkers:
// 'block'`): the worker that then starts is the real one of build A.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, cpSync, mkdtempSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { artifactsDir, siteCommand, startSite, tempDataDir } from './lib/site.mjs';
import {
  HANDHELD_VIEWPORT,
  addDevice,
  ask,
  counts,
  drained,
  epcs,
  eventually,
  importReference,
  openSession,
  scanBin,
  sessionHops,
  sessionId,
} from './lib/handheld.mjs';

const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the suite with \`cargo xtask test\``);
  return value;
};

/** The custom section a test build adds to the module. */
const SECTION = 'stockhop.release-test';

function leb128(n) {
  const out = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n) byte |= 0x80;
    out.push(byte);
  } while (n);
  return Buffer.from(out);
}

/** A wasm custom section (id 0): it changes the module's bytes and nothing it does. */
function customSection(name, payload) {
  const nameBytes = Buffer.from(name);
  const body = Buffer.concat([leb128(nameBytes.length), nameBytes, Buffer.from(payload)]);
  return Buffer.concat([Buffer.from([0]), leb128(body.length), body]);
}

/** A copy of the tree's www/ as a release `name`: its wasm and `files` changed. */
function makeBuild(name, { wasm = false, files = [] } = {}) {
  const dir = mkdtempSync(join(tmpdir(), `stockhop-build-${name}-`));
  // Kept timestamps: an older release's files are older on disk, as a
  // kept directory's are (a rollback must still not be answered 304).
  cpSync(env('STOCKHOP_WWW'), dir, { recursive: true, preserveTimestamps: true });
  if (wasm) appendFileSync(join(dir, 'pkg/stockhop_bg.wasm'), customSection(SECTION, name));
  for (const file of files) appendFileSync(join(dir, file), `\n// release ${name}\n`);
  return dir;
}

async function servedBuild(base) {
  const res = await fetch(`${base}/version.json`);
  assert.equal(res.status, 200);
  return res.json();
}

/** A persistent Chromium profile at `dir` (with its worker kept out: `block`). */
function launchProfile(dir, { block = false } = {}) {
  return chromium.launchPersistentContext(dir, {
    executablePath: env('STOCKHOP_CHROMIUM'),
    headless: true,
    args: env('STOCKHOP_CHROMIUM_ARGS').split(' ').filter(Boolean),
    viewport: HANDHELD_VIEWPORT,
    serviceWorkers: block ? 'block' : 'allow',
  });
}

async function firstPage(context) {
  return context.pages()[0] ?? context.newPage();
}

/** Opens the app set up as `deviceId` (the setup link's fragment). */
async function setUp(page, base, token, deviceId) {
  const fragment = new URLSearchParams({ site: base, token, device: deviceId });
  await page.goto(`${base}/#${fragment}`);
  await page.waitForSelector('body[data-ready="true"]');
  await page.waitForFunction(() => document.getElementById('setup-status').textContent.startsWith('Set up as'));
}

/** Waits until the page and its worker are both `build`, the page started. */
async function onBuild(page, build, timeout = 60_000) {
  try {
    await page.waitForSelector(
      `body[data-ready="true"][data-build="${build}"][data-worker-build="${build}"][data-release="current"]`,
      { timeout, state: 'attached' },
    );
  } catch (err) {
    // Where the page stopped: its build, its worker's and the release state.
    const state = await page.evaluate(() => ({
      ...document.body.dataset,
      controller: navigator.serviceWorker.controller?.scriptURL ?? null,
      banner: document.getElementById('release-status')?.textContent ?? null,
    })).catch((e) => String(e));
    throw new Error(`the page did not reach build ${build}: ${JSON.stringify(state)}`, { cause: err });
  }
}

/** Types one scan and waits until the page says it is kept on the handheld. */
async function scan(page, code) {
  await page.focus('#scan-input');
  await page.keyboard.type(code);
  await page.keyboard.press('Enter');
  await page.waitForFunction(
    (c) => {
      const status = document.getElementById('scan-status').textContent;
      return status.startsWith('Kept on this device') && status.includes(c);
    },
    code,
    { timeout: 20_000 },
  );
}

/**
 * Hands one scan to the page as the wedge's Enter does, in one task of the
 * page: 'delivered', or 'unknown' when the page was replaced around it.
 */
async function deliver(page, code) {
  try {
    return await page.evaluate((c) => {
      if (document.body.dataset.ready !== 'true') return 'not-ready';
      const input = document.getElementById('scan-input');
      input.value = c;
      input.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true, cancelable: true }));
      return 'delivered';
    }, code);
  } catch {
    return 'unknown';
  }
}

/** The caches the origin holds and the test section of the module in this build's cache. */
function workerModule(page, build) {
  return page.evaluate(async ({ build, section }) => {
    const keys = await caches.keys();
    const cached = await (await caches.open(`stockhop-shell-${build}`)).match('/pkg/stockhop_bg.wasm');
    const module = await WebAssembly.compile(await cached.arrayBuffer());
    const found = WebAssembly.Module.customSections(module, section).map((b) => new TextDecoder().decode(b));
    return { keys, section: found };
  }, { build, section: SECTION });
}

/** The ledger holds the session's scans once each, in `typed` order, `client_seq` contiguous. */
async function assertLedger(base, token, session, typed) {
  const hops = await sessionHops(base, token, session);
  const scans = hops.filter((hop) => hop.command === 'scan');
  const keys = scans.map((hop) => hop.key);
  assert.equal(new Set(keys).size, keys.length, 'no scan twice in the ledger');
  assert.deepEqual(scans.map((hop) => hop.facts.epc), typed, 'every scan once, in typing order');
  const seqs = hops.map((hop) => hop.client_seq);
  assert.deepEqual(seqs, seqs.map((_, i) => seqs[0] + i), 'client_seq contiguous');
  return scans.length;
}

/** How many of `codes` the ledger holds exactly once for the session. */
async function landedOnce(base, token, session, codes) {
  const epcsLanded = (await sessionHops(base, token, session))
    .filter((hop) => hop.command === 'scan')
    .map((hop) => hop.facts.epc);
  return codes.filter((code) => epcsLanded.filter((e) => e === code).length === 1).length;
}

/** Figures, printed as a table at the end of the suite. */
const figures = [];

test('a handheld on a persistent profile takes a wasm-only release, a full release and a rollback without losing or doubling a scan', async () => {
  const A = makeBuild('A');
  const B = makeBuild('B', { wasm: true });
  const C = makeBuild('C', { wasm: true, files: ['sw.js', 'app.js'] });
  const dataDir = tempDataDir();
  const token = await addDevice(dataDir, 'HH-REL');
  const codes = epcs('C7', 200);
  await importReference(dataDir, { bins: ['B-01'], units: codes });
  let site = await startSite({ dataDir, www: A });
  const port = site.port;
  const base = site.base;
  const build = { A: (await servedBuild(base)).build };
  const profile = mkdtempSync(join(tmpdir(), 'stockhop-profile-'));
  let context = await launchProfile(profile);
  let next = 0;
  const typed = [];
  const errors = [];
  const deploy = async (name, www) => {
    site = await startSite({ dataDir, port, www });
    const served = await servedBuild(base);
    build[name] = served.build;
    return Date.now();
  };
  /** Scans queued with the site down, before a switch. */
  const queueOffline = async (page, n) => {
    assert.equal((await site.stop()).code, 0);
    const held = [];
    for (let i = 0; i < n; i += 1) {
      const code = codes[next++];
      await scan(page, code);
      typed.push(code);
      held.push(code);
    }
    const waiting = await counts(page);
    assert.ok(waiting.queued + waiting.sending >= n, `the scans wait offline: ${JSON.stringify(waiting)}`);
    return held;
  };
  try {
    let page = await firstPage(context);
    page.on('pageerror', (err) => errors.push(String(err)));
    await setUp(page, base, token, 'HH-REL');
    await onBuild(page, build.A);
    await openSession(page, 'op-rel', 'put_away');
    const session = await sessionId(page);
    await scanBin(page, 'B-01');
    for (let i = 0; i < 3; i += 1) {
      await scan(page, codes[next]);
      typed.push(codes[next++]);
    }

    // 1. A wasm-only release: after one reload by the operator the worker
    // runs build B (the page reloads itself once more as B takes over),
    // compiled from B's own cache.
    let queued = await queueOffline(page, 8);
    let deployed = await deploy('B', B);
    assert.notEqual(build.B, build.A, 'a wasm-only change is a new build');
    await page.reload();
    await onBuild(page, build.B);
    await scan(page, codes[next]);
    typed.push(codes[next++]);
    figures.push(['wasm-only (A → B)', 'page reloaded', Date.now() - deployed, queued.length]);
    const moduleB = await workerModule(page, build.B);
    assert.deepEqual(moduleB.section, ['B'], 'the worker compiles its own build\'s module');
    assert.deepEqual(moduleB.keys.filter((k) => k.startsWith('stockhop-shell-')), [`stockhop-shell-${build.B}`]);
    await drained(page);
    assert.equal(await assertLedger(base, token, session, typed), typed.length);
    figures[figures.length - 1].push(await landedOnce(base, token, session, queued));

    // 2 and 5. A release of sw.js, app.js and the wasm while the page is
    // open and a second page sits idle: the open page keeps capturing
    // while build C installs, hands over between scans, and every write is
    // answered by a worker of the page's own build.
    const idle = await context.newPage();
    await idle.goto(base);
    await onBuild(idle, build.B);
    queued = await queueOffline(page, 8);
    deployed = await deploy('C', C);
    let firstOnC = null;
    const maybe = new Set();
    while (firstOnC === null) {
      if (Date.now() - deployed > 90_000) {
        const state = await page.evaluate(async () => {
          const r = await navigator.serviceWorker.getRegistration();
          const w = (x) => x && `${x.state}`;
          return { ...document.body.dataset, active: w(r.active), waiting: w(r.waiting), installing: w(r.installing), controlled: !!navigator.serviceWorker.controller };
        }).catch((e) => String(e));
        throw new Error(`build C did not take over within 90 s: ${JSON.stringify(state)}`);
      }
      const code = codes[next++];
      const outcome = await deliver(page, code);
      if (outcome === 'not-ready') {
        next -= 1;
      } else {
        typed.push(code);
        if (outcome === 'unknown') maybe.add(code);
      }
      await new Promise((r) => setTimeout(r, 400));
      const state = await page.evaluate(() => ({ ...document.body.dataset })).catch(() => null);
      if (state && state.ready === 'true' && state.build === build.C && state.workerBuild === build.C
          && state.release === 'current') {
        await scan(page, codes[next]);
        typed.push(codes[next++]);
        firstOnC = Date.now();
      }
    }
    figures.push(['sw.js + app.js + wasm (B → C)', 'page open', firstOnC - deployed, queued.length]);
    await onBuild(idle, build.C);
    // A write from a page of another build is refused, not answered.
    const mixed = await page.evaluate(async (sessionId) => {
      const channel = new MessageChannel();
      const reply = new Promise((resolve) => { channel.port1.onmessage = (e) => resolve(e.data); });
      navigator.serviceWorker.controller.postMessage(
        { type: 'capture', build: '0123456789abcdef', session_id: sessionId, body: { mode: 'put_away', bin: 'B-01', epc: 'E28000000000000000000FFF' } },
        [channel.port2],
      );
      return reply;
    }, session);
    assert.equal(mixed.ok, false);
    assert.equal(mixed.error.code, 'BUILD_MISMATCH');
    assert.equal(mixed.build, build.C);
    await drained(page);
    // Every scan handed to the page landed once, in order; a scan handed
    // over just as a page was replaced landed at most once.
    const hops = (await sessionHops(base, token, session)).filter((hop) => hop.command === 'scan');
    const landed = hops.map((hop) => hop.facts.epc);
    assert.equal(new Set(landed).size, landed.length, 'no scan twice in the ledger');
    const expected = typed.filter((code) => !maybe.has(code) || landed.includes(code));
    assert.deepEqual(landed, expected, 'every scan delivered landed once, in order');
    typed.splice(0, typed.length, ...expected);
    figures[figures.length - 1].push(await landedOnce(base, token, session, queued));
    await idle.close();

    // 4. A rollback to A with scans queued: the device ends on the
    // build served (A's files are older on disk; nothing is answered 304).
    queued = await queueOffline(page, 8);
    deployed = await deploy('A', A);
    await page.reload();
    await onBuild(page, build.A);
    await scan(page, codes[next]);
    typed.push(codes[next++]);
    figures.push(['rollback (C → A)', 'page reloaded', Date.now() - deployed, queued.length]);
    const moduleA = await workerModule(page, build.A);
    assert.deepEqual(moduleA.section, [], 'build A\'s own module');
    await drained(page);
    assert.equal(await assertLedger(base, token, session, typed), typed.length);
    figures[figures.length - 1].push(await landedOnce(base, token, session, queued));
    await page.screenshot({ path: join(artifactsDir(), 'release-after-rollback.png') });
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
    await site.stop();
  }
});

/**
 * Runs `upgrading()` while stopping the profile's service workers every
 * half second (a worker's IndexedDB connection closes with it; the
 * browser may start one again for a Background Sync), so the upgrade is
 * not blocked by a worker's open connection.
 */
async function withWorkersStopped(context, page, upgrading) {
  const cdp = await context.newCDPSession(page);
  await cdp.send('ServiceWorker.enable');
  let done = false;
  const stopping = (async () => {
    while (!done) {
      await cdp.send('ServiceWorker.stopAllWorkers');
      await new Promise((r) => setTimeout(r, 500));
    }
  })();
  try {
    return await upgrading();
  } finally {
    done = true;
    await stopping;
    await cdp.detach();
  }
}

/**
 * The origin while the site is down: a blank page at /blank and 503 for
 * everything else, so a worker the browser starts meanwhile sends nothing.
 */
async function blankOrigin(port) {
  const server = http.createServer((req, res) => {
    if (req.url === '/blank') {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><title>blank</title>');
    } else {
      res.writeHead(503);
      res.end();
    }
  });
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { close: () => new Promise((resolve) => server.close(resolve)) };
}

/** Writes in a page with the worker kept out: `script(db, tx)` inside an upgrade to `version`. */
async function upgradeRaw(page, version, script) {
  return page.evaluate(
    ({ version, script }) =>
      new Promise((resolve, reject) => {
        const request = indexedDB.open('stockhop', version);
        // eslint-disable-next-line no-new-func
        const change = new Function('db', 'tx', script);
        request.onupgradeneeded = () => change(request.result, request.transaction);
        request.onsuccess = () => {
          const db = request.result;
          const tx = db.transaction(['items']);
          const all = tx.objectStore('items').count();
          all.onsuccess = () => {
            db.close();
            resolve(all.result);
          };
        };
        request.onerror = () => reject(request.error);
        // A connection still open (a worker being stopped) only delays it.
        setTimeout(() => reject(new Error('the upgrade did not run within 30 s')), 30_000);
      }),
    { version, script },
  );
}

test('a queue written by the oldest schema upgrades with its scans, and a newer schema stops capture until it is declared compatible', async () => {
  const dataDir = tempDataDir();
  const token = await addDevice(dataDir, 'HH-SCHEMA');
  const admin = (await siteCommand(['admin', 'add', 'supervisor', '--data', dataDir])).trim();
  const codes = epcs('C8', 10);
  await importReference(dataDir, { bins: ['B-01'], units: codes });
  let site = await startSite({ dataDir });
  const base = site.base;
  const build = (await servedBuild(base)).build;
  const profile = mkdtempSync(join(tmpdir(), 'stockhop-profile-'));
  const legacySession = '5f1e2d3c-4b5a-4697-8877-665544332211';
  try {
    // 3. Items queued by the oldest schema still in the code (v1: no keys,
    // no sessions store), before this build's worker ever ran.
    let context = await launchProfile(profile, { block: true });
    let page = await firstPage(context);
    await page.goto(`${base}/trust.html`);
    const v1 = [
      ['open_session', { operator_id: 'op-legacy', mode: 'put_away', context: {} }],
      ...codes.slice(0, 4).map((epc) => ['scan', { mode: 'put_away', bin: 'B-01', epc }]),
      ['close_session', {}],
    ].map(([command, body], i) => ({
      session_id: legacySession, client_seq: i + 1, command, body, state: 'queued',
      occurred_at: new Date(Date.now() - 60_000 + i).toISOString(),
      queued_at: new Date(Date.now() - 60_000 + i).toISOString(),
    }));
    const stored = await upgradeRaw(page, 1, `
      const items = db.createObjectStore('items', { keyPath: 'id', autoIncrement: true });
      for (const row of ${JSON.stringify(v1)}) items.add(row);`);
    assert.equal(stored, 6);
    await context.close();

    context = await launchProfile(profile);
    page = await firstPage(context);
    await setUp(page, base, token, 'HH-SCHEMA');
    await onBuild(page, build);
    await drained(page);
    const legacy = (await sessionHops(base, token, legacySession)).filter((hop) => hop.command === 'scan');
    assert.deepEqual(legacy.map((hop) => hop.facts.epc), codes.slice(0, 4), 'the v1 scans land once, in order');

    // Scans queued by this build (v4), then a newer release's schema (v5) that
    // does not declare this build compatible: capture stops, says so, the
    // heartbeat says so, and nothing queued is lost or sent.
    await openSession(page, 'op-schema', 'put_away');
    const session = await sessionId(page);
    await scanBin(page, 'B-01');
    assert.equal((await site.stop()).code, 0);
    for (const code of codes.slice(4, 7)) await scan(page, code);
    await context.close();

    const blank = await blankOrigin(site.port);
    context = await launchProfile(profile, { block: true });
    page = await firstPage(context);
    await page.goto(`${base}/blank`);
    const declare = (oldest) => `
      tx.objectStore('meta').put({ name: 'schema', value: { version: 5, oldest_compatible: ${oldest} } });`;
    assert.equal(await withWorkersStopped(context, page, () => upgradeRaw(page, 5, declare(5))), 6 + 4, 'the v1 items and this session\'s open and 3 scans');
    await context.close();
    await blank.close();
    site = await startSite({ dataDir, port: site.port });

    context = await launchProfile(profile);
    page = await firstPage(context);
    await page.goto(base);
    await page.waitForSelector('body[data-release="stopped"] #worker-status:not([hidden])');
    assert.match(await page.textContent('#worker-status'), /Capture stopped.*newer release.*Nothing queued is lost/s);
    await page.screenshot({ path: join(artifactsDir(), 'release-capture-stopped.png') });
    const refused = await ask(page, {
      type: 'capture', session_id: session, body: { mode: 'put_away', bin: 'B-01', epc: codes[7] },
    });
    assert.equal(refused.ok, false);
    assert.equal(refused.error.code, 'SCHEMA_NEWER', 'a scan is refused, not captured');
    const reported = await eventually(async () => {
      const res = await fetch(`${base}/v1/site/builds`, { headers: { authorization: `Bearer ${admin}` } });
      const fleet = await res.json();
      const device = fleet.devices.find((d) => d.device_id === 'HH-SCHEMA');
      return { ready: device?.problem === 'SCHEMA_NEWER', value: { fleet, device } };
    }, { timeoutMs: 20_000, what: 'the heartbeat\'s report of the stop' });
    assert.equal(reported.device.build, build);
    assert.equal(reported.device.old, false);
    const sent = await fetch(`${base}/v1/sessions/${session}/hops`, { headers: { authorization: `Bearer ${token}` } });
    const none = sent.status === 404 ? [] : (await sent.json()).hops;
    assert.deepEqual(none, [], 'nothing was sent by a worker that stopped');
    await context.close();

    // The newer schema declares this build compatible: it captures again
    // and sends what waited, once each, in order.
    context = await launchProfile(profile, { block: true });
    page = await firstPage(context);
    await page.goto(`${base}/trust.html`);
    assert.equal(await withWorkersStopped(context, page, () => upgradeRaw(page, 6, declare(4))), 10, 'nothing queued was lost');
    await context.close();
    context = await launchProfile(profile);
    page = await firstPage(context);
    await page.goto(base);
    await onBuild(page, build);
    await page.waitForSelector('#screen-mode:not([hidden])');
    await scan(page, codes[8]);
    await drained(page);
    await assertLedger(base, token, session, [...codes.slice(4, 7), codes[8]]);
    const beat = await eventually(async () => {
      const res = await fetch(`${base}/v1/site/builds`, { headers: { authorization: `Bearer ${admin}` } });
      const device = (await res.json()).devices.find((d) => d.device_id === 'HH-SCHEMA');
      return { ready: device?.problem === null, value: device };
    }, { timeoutMs: 20_000, what: 'a heartbeat from the running worker' });
    assert.equal(beat.build, build);
    await context.close();
  } finally {
    await site.stop();
  }
});

test('figures: deploy to first capture on the new build, scans queued across each switch and landed once', () => {
  if (figures.length === 0) return;
  const rows = figures.map(([name, how, ms, queued, landed]) =>
    `| ${name} | ${how} | ${(ms / 1000).toFixed(1)} s | ${queued} | ${landed ?? '–'} |`);
  console.log(['| switch | page | deploy → first capture on the new build | queued across | landed once |',
    '|---|---|---|---|---|', ...rows].join('\n'));
});
