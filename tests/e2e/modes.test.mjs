// The five modes end to end, through the handheld's screens: a real
// `stockhop-site serve` with imported reference data, the PWA in Debian's
// headless Chromium at 480×800, every code typed into the scan field as a
// keyboard wedge types it (mode choices aside, which are taps), an outage
// in each mode that works offline and the refusal in the one that does
// not, and the ledger's view read back through its read endpoints. Each
// screen is photographed into artifacts/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { artifactsDir, launchBrowser, startSite, tempDataDir } from './lib/site.mjs';
import {
  HANDHELD_VIEWPORT,
  addDevice,
  allItems,
  ask,
  counts,
  drained,
  epcs,
  eventually,
  assertTouchTargets,
  importReference,
  openCount,
  openHandheld,
  openQueue,
  pickMode,
  scanBin,
  scanBurst,
  sessionId,
  sessionHops,
  sessionOpened,
  siteRead,
  wedge,
} from './lib/handheld.mjs';

/** Checks the screen's touch targets, then photographs it into artifacts/. */
async function shot(page, name) {
  await assertTouchTargets(page, 'button, a, input');
  await page.screenshot({ path: join(artifactsDir(), `${name}.png`) });
}

/** Waits for the status bar's online light to read `state`. */
function net(page, state) {
  return page.waitForFunction((s) => document.getElementById('net-status').dataset.net === s, state, { timeout: 20_000 });
}

/** After an outage: the site is back, the operator taps Retry now on the queue screen, the queue drains. */
async function drainAfterOutage(page) {
  await net(page, 'online');
  await openQueue(page);
  await page.click('#queue-retry');
  const after = await drained(page, { timeoutMs: 60_000 });
  await page.click('#queue-back');
  return after;
}

/** The site's answer for `path` with the device token; asserts it is 200. */
async function read(site, token, path) {
  const { status, body } = await siteRead(site.base, token, path);
  assert.equal(status, 200, `GET ${path}: ${JSON.stringify(body)}`);
  return body;
}

/**
 * Starts a site on `dataDir`, a browser and the handheld set up as
 * `deviceId` (`initScript` runs in the page before the app).
 */
async function handheld(dataDir, deviceId, token, { initScript } = {}) {
  const site = await startSite({ dataDir });
  const browser = await launchBrowser();
  const { page, errors } = await openHandheld(browser, { pageUrl: site.base, siteUrl: site.base, token, deviceId, initScript });
  return { site, browser, page, errors };
}

/**
 * A count of zone `zone` of L-1, whose one bin C-01 holds four units of
 * `sku` in stock (tags `epcs(prefix, 4)`), and the handheld `deviceId`
 * set up on the site: as `handheld` gives, plus the token, the units
 * (`inC1`) and the count's id.
 */
async function oneBinCount({ deviceId, prefix, zone, sku, initScript }) {
  const dataDir = tempDataDir();
  const token = await addDevice(dataDir, deviceId);
  const inC1 = epcs(prefix, 4);
  await importReference(dataDir, {
    binRows: [{ bin: 'C-01', zone, location: 'L-1' }],
    unitRows: inC1.map((epc) => ({ epc, sku, state: 'in_stock', bin: 'C-01' })),
  });
  const countId = await openCount(dataDir, { location: 'L-1', zone });
  const { site, browser, page, errors } = await handheld(dataDir, deviceId, token, { initScript });
  return { token, inC1, countId, site, browser, page, errors };
}

/** Picks cycle count as `operator`, taps count `countId` and waits for its session: its id. */
async function countSession(page, operator, countId) {
  await pickMode(page, operator, 'cycle_count');
  await page.waitForSelector(`#mode-choices button[data-count="${countId}"]`);
  await page.click(`#mode-choices button[data-count="${countId}"]`);
  return sessionOpened(page);
}

test('put-away: setup once, a bin label before any unit, an outage, and every unit lands in its bin', async () => {
  const dataDir = tempDataDir();
  const token = await addDevice(dataDir, 'HH-PUT');
  const units = epcs('F0', 5);
  await importReference(dataDir, { bins: ['B-01', 'B-02'], units });
  let { site, browser, page, errors } = await handheld(dataDir, 'HH-PUT', token);
  try {
    // A handheld that is not set up shows the setup screen and nothing else.
    const fresh = await browser.newContext({ viewport: HANDHELD_VIEWPORT });
    const setupPage = await fresh.newPage();
    await setupPage.goto(site.base);
    await setupPage.waitForSelector('#screen-setup:not([hidden])');
    assert.equal(await setupPage.isVisible('#screen-picker'), false);
    assert.equal(await setupPage.isVisible('#scan-input'), false, 'no scan field before setup');
    await shot(setupPage, 'screen-setup');
    await fresh.close();

    // Set up from the fragment: the picker, offering the profile's modes.
    await net(page, 'online');
    for (const mode of ['put_away', 'receive', 'cycle_count', 'dispatch_verify', 'find_unit']) {
      assert.ok(await page.isVisible(`#pick-${mode}`), `${mode} offered to an mc3390xr`);
    }
    await page.click('#operator-change');
    await wedge(page, 'op-put');
    await page.waitForFunction(() => document.getElementById('operator').textContent === 'op-put');
    await shot(page, 'screen-picker');

    await pickMode(page, 'op-put', 'put_away');
    const session = await sessionOpened(page);
    assert.equal(await page.getAttribute('#mode-needs li[data-need="bin"]', 'data-met'), 'false');
    await wedge(page, units[0]);
    await page.waitForFunction(() => document.getElementById('scan-refused').textContent === '1');
    assert.match(await page.textContent('#scan-status'), /scan a bin label first/i);
    assert.equal(Number(await page.textContent('#scan-count')), 0, 'a unit before a bin label is not captured');
    await shot(page, 'screen-put-away-needs-bin');
    await drained(page);

    const { code } = await site.stop();
    assert.equal(code, 0);
    await net(page, 'offline');
    await scanBin(page, 'B-01');
    assert.equal(await page.getAttribute('#mode-needs li[data-need="bin"]', 'data-met'), 'true');
    await scanBurst(page, units.slice(0, 3));
    await scanBin(page, 'B-02');
    await scanBurst(page, units.slice(3));
    await page.waitForFunction(() => Number(document.getElementById('bar-queue').textContent) === 5);
    assert.match(await page.textContent('#prompt'), /Scan units for bin B-02/);
    await shot(page, 'screen-put-away');

    const waiting = (await allItems(page)).filter((item) => item.command === 'scan');
    assert.deepEqual(waiting.map((item) => item.body.bin), ['B-01', 'B-01', 'B-01', 'B-02', 'B-02'], 'each scan carries its bin');
    for (const item of waiting) assert.equal(item.body.mode, 'put_away');
    // Capture time is each scan's Enter key event, before its write committed.
    for (const [i, item] of waiting.entries()) {
      assert.ok(item.occurred_at <= item.queued_at, `#${item.client_seq} captured before it was queued`);
      if (i > 0) assert.ok(item.occurred_at >= waiting[i - 1].occurred_at, 'capture instants follow the typing order');
    }

    site = await startSite({ dataDir, port: site.port });
    const after = await drainAfterOutage(page);
    assert.equal(after.rejected + after.blocked, 0);
    for (const [i, epc] of units.entries()) {
      const unit = await read(site, token, `/v1/units/${epc}`);
      assert.equal(unit.state, 'in_stock');
      assert.equal(unit.bin, i < 3 ? 'B-01' : 'B-02');
    }
    const hops = await sessionHops(site.base, token, session);
    assert.equal(hops.length, 5);
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await site.stop();
  }
});

test('receive: a GRN tapped from the list, a SKU label before unknown tags, an outage, and the GRN complete on close', async () => {
  const dataDir = tempDataDir();
  const token = await addDevice(dataDir, 'HH-RECV');
  const fresh = epcs('F1', 3);
  const [announced] = epcs('F2', 1);
  await importReference(dataDir, {
    unitRows: [{ epc: announced, sku: 'SKU-B', state: 'new' }],
    grns: [
      { grn: 'GRN-1', qc: 'accepted', sku: 'SKU-A', expected: 3 },
      { grn: 'GRN-1', qc: 'accepted', sku: 'SKU-B', expected: 1 },
      { grn: 'GRN-HELD', qc: 'held', sku: 'SKU-A', expected: 1 },
    ],
  });
  let { site, browser, page, errors } = await handheld(dataDir, 'HH-RECV', token);
  try {
    await pickMode(page, 'op-recv', 'receive');
    assert.equal(await page.getAttribute('#mode-needs li[data-need="grn"]', 'data-met'), 'false');
    await page.waitForSelector('#mode-choices button[data-grn="GRN-1"]');
    assert.equal(await page.isDisabled('#mode-choices button[data-grn="GRN-HELD"]'), true, 'a held GRN cannot be chosen');
    assert.equal(await sessionId(page), null, 'no session before the GRN');
    await page.click('#mode-choices button[data-grn="GRN-1"]');
    const session = await sessionOpened(page);
    await page.waitForSelector('#grn-lines tr[data-sku="SKU-A"]');
    // An mc3390xr writes tags: the encode choice is offered.
    await page.click('#encode-toggle');
    assert.equal(await page.getAttribute('#encode-toggle', 'aria-pressed'), 'true');

    const { code } = await site.stop();
    assert.equal(code, 0);
    await net(page, 'offline');
    await wedge(page, fresh[0]);
    await page.waitForFunction(() => /SKU label first/.test(document.getElementById('scan-status').textContent));
    await wedge(page, 'SKU-A');
    await page.waitForFunction(() => document.getElementById('receive-sku').textContent === 'SKU SKU-A');
    await scanBurst(page, [...fresh, announced]);
    const cells = async (sku) => page.$$eval(`#grn-lines tr[data-sku="${sku}"] td`, (tds) => tds.map((td) => td.textContent));
    await page.waitForFunction(() => document.querySelector('#grn-lines tr[data-sku="SKU-A"] td:last-child').textContent === '+3', null, { timeout: 10_000 });
    assert.deepEqual(await cells('SKU-A'), ['SKU-A', '3', '0', '+3'], 'expected, received as the site said, queued here');
    assert.deepEqual(await cells('SKU-B'), ['SKU-B', '1', '0', '+1']);
    await page.waitForFunction(() => Number(document.getElementById('bar-queue').textContent) === 4);
    await shot(page, 'screen-receive');

    const scans = (await allItems(page)).filter((item) => item.command === 'scan');
    assert.deepEqual(scans.map((item) => item.body.sku ?? null), ['SKU-A', 'SKU-A', 'SKU-A', null], 'a SKU only for tags the site does not know');
    for (const item of scans) {
      assert.equal(item.body.grn, 'GRN-1');
      assert.equal(item.body.encode, true);
    }

    site = await startSite({ dataDir, port: site.port });
    await drainAfterOutage(page);
    // The command barcode closes the session.
    await wedge(page, 'STOCKHOP:CLOSE');
    await page.waitForSelector('#screen-picker:not([hidden])');
    const after = await drained(page);
    assert.equal(after.rejected + after.blocked, 0);
    const grn = await read(site, token, '/v1/grns/GRN-1');
    assert.equal(grn.state, 'complete');
    assert.deepEqual(grn.lines.map((l) => [l.sku, l.expected, l.received]), [['SKU-A', 3, 3], ['SKU-B', 1, 1]]);
    const created = await read(site, token, `/v1/units/${fresh[0]}`);
    assert.equal(created.sku, 'SKU-A');
    assert.equal(created.state, 'new');
    const hops = await sessionHops(site.base, token, session);
    assert.equal(hops.filter((hop) => hop.kind === 'ENCODE').length, 4, 'an ENCODE hop beside each RECEIVE');
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await site.stop();
  }
});

test('cycle count: a count tapped, bins of its zone only, an outage, seen against expected and the variance on close', async () => {
  const dataDir = tempDataDir();
  const token = await addDevice(dataDir, 'HH-COUNT');
  const inC1 = epcs('F3', 3);
  const [inC2] = epcs('F4', 1);
  const [stranger] = epcs('F5', 1);
  await importReference(dataDir, {
    binRows: [
      { bin: 'C-01', zone: 'Z-C', location: 'L-1' },
      { bin: 'C-02', zone: 'Z-C', location: 'L-1' },
      { bin: 'X-01', zone: 'Z-X', location: 'L-1' },
    ],
    unitRows: [...inC1.map((epc) => ({ epc, sku: 'SKU-C', state: 'in_stock', bin: 'C-01' })), { epc: inC2, sku: 'SKU-C', state: 'in_stock', bin: 'C-02' }],
  });
  const countId = await openCount(dataDir, { location: 'L-1', zone: 'Z-C' });
  let { site, browser, page, errors } = await handheld(dataDir, 'HH-COUNT', token);
  try {
    const session = await countSession(page, 'op-count', countId);
    await page.waitForFunction(() => document.getElementById('count-expected')?.textContent === '4');

    const { code } = await site.stop();
    assert.equal(code, 0);
    await net(page, 'offline');
    await wedge(page, 'X-01');
    await page.waitForFunction(() => /not this count's zone/.test(document.getElementById('scan-status').textContent));
    await wedge(page, inC1[0]);
    await page.waitForFunction(() => /bin label first/i.test(document.getElementById('scan-status').textContent));
    await scanBin(page, 'C-01');
    await scanBurst(page, inC1);
    await scanBin(page, 'C-02');
    await scanBurst(page, [stranger]);
    await page.waitForFunction(() => document.getElementById('count-seen').textContent === '4');
    assert.equal(await page.textContent('#count-expected'), '4', 'expected as the site last said, offline');
    await shot(page, 'screen-cycle-count');

    site = await startSite({ dataDir, port: site.port });
    await drainAfterOutage(page);
    await page.click('#session-close');
    // Closing the session closes the zone's count: the page asks first.
    await page.waitForSelector('#confirm:not([hidden])');
    await page.click('#confirm-yes');
    await page.waitForSelector('#screen-picker:not([hidden])');
    const after = await drained(page);
    assert.equal(after.rejected + after.blocked, 0);
    const count = await read(site, token, `/v1/counts/${countId}`);
    assert.equal(count.state, 'closed');
    assert.equal(count.expected, 4);
    assert.equal(count.seen, 4);
    assert.deepEqual(count.missing, [inC2]);
    assert.deepEqual(count.unexpected, [stranger]);
    const hops = await sessionHops(site.base, token, session);
    assert.deepEqual(hops.map((hop) => hop.facts.bin), ['C-01', 'C-01', 'C-01', 'C-02']);
    const untouched = await read(site, token, `/v1/units/${inC1[0]}`);
    assert.equal(untouched.bin, 'C-01', 'a count moves nothing before approval');
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await site.stop();
  }
});

test('cycle count: scans while MODE asks to close the count are refused on screen, not held unseen, and none reaches the ledger', async () => {
  const { token, inC1, countId, site, browser, page, errors } = await oneBinCount({ deviceId: 'HH-ASK', prefix: 'FA', zone: 'Z-C', sku: 'SKU-C' });
  try {
    const session = await countSession(page, 'op-ask', countId);
    await scanBin(page, 'C-01');
    await scanBurst(page, inC1.slice(0, 1));
    // MODE asks first: the count closes for the whole zone.
    await wedge(page, 'STOCKHOP:MODE');
    await page.waitForSelector('#confirm:not([hidden])');
    // The question's figures are the ledger's: the one scan counted once.
    const figures = await read(site, token, `/v1/counts/${countId}`);
    assert.equal(figures.seen, 1);
    assert.match(await page.textContent('#confirm-text'), new RegExp(`Missing ${figures.missing.length}, unexpected ${figures.unexpected.length} `));
    const refusedBefore = Number(await page.textContent('#scan-refused'));
    for (const epc of inC1.slice(1)) await wedge(page, epc);
    await page.waitForFunction((n) => Number(document.getElementById('scan-refused').textContent) === n, refusedBefore + 3);
    assert.match(await page.textContent('#scan-status'), /Answer the question first/);
    // Each refusal says what CONFIRM would do here: close the count.
    const refusedRows = () => page.$$eval('#results li[data-kind="refused"]', (rows) => rows.map((r) => [r.querySelector('.scan').textContent, r.querySelector('.next').textContent]));
    // The rows are drawn at the next frame.
    await page.waitForFunction(() => document.querySelectorAll('#results li[data-kind="refused"]').length === 3);
    const asked = await refusedRows();
    assert.deepEqual(asked.map(([, next]) => next), Array(3).fill('Tap “Keep counting”, or scan CONFIRM to close the count.'));
    await shot(page, 'screen-cycle-count-asking');
    await page.click('#confirm-no');
    await page.waitForSelector('#confirm', { state: 'hidden' });
    assert.equal(await page.isVisible('#screen-mode'), true, 'Keep counting stays in the count');
    // The question is gone: no line speaks of it or of answering it with
    // CONFIRM, neither the rows it refused nor a refusal after it.
    const speaksOfIt = () => page.evaluate(() => /question|CONFIRM/.test(document.getElementById('screen-mode').textContent));
    await page.waitForFunction(() => !/question|CONFIRM/.test(document.getElementById('screen-mode').textContent));
    assert.deepEqual(await refusedRows(), inC1.slice(1).reverse().map((epc) => [`${epc} was not captured.`, 'Scan it again.']));
    await wedge(page, 'NOT-A-CODE');
    await page.waitForFunction(() => /^NOT-A-CODE/.test(document.querySelector('#results li[data-kind="refused"] .scan')?.textContent));
    assert.equal(await speaksOfIt(), false, await page.textContent('#screen-mode'));
    await wedge(page, 'STOCKHOP:CONFIRM');
    await page.waitForFunction(() => document.getElementById('scan-status').textContent === 'Nothing to confirm.');
    assert.equal(await page.isVisible('#screen-mode'), true, 'a later CONFIRM closes nothing');
    await shot(page, 'screen-cycle-count-kept-counting');
    const after = await drained(page);
    assert.equal(after.rejected + after.blocked, 0);
    // The ledger holds the one scan taken before the question, and the
    // screen's count says the same.
    const hops = await sessionHops(site.base, token, session);
    assert.equal(hops.length, 1);
    assert.equal(Number(await page.textContent('#scan-count')), hops.length);
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await site.stop();
  }
});

test('cycle count: with the handheld clock ten minutes behind the site clock, the figures and the close question count each scan once; the ledger agrees', async () => {
  // The page's clock only: the scans' times and the site's are their own.
  const behind = () => {
    const real = Date.now;
    Date.now = () => real() - 10 * 60_000;
  };
  const { token, inC1, countId, site, browser, page, errors } = await oneBinCount({ deviceId: 'HH-SKEW', prefix: 'FB', zone: 'Z-S', sku: 'SKU-S', initScript: behind });
  try {
    await countSession(page, 'op-skew', countId);
    await scanBin(page, 'C-01');
    await scanBurst(page, inC1.slice(0, 2));
    const after = await drained(page);
    assert.equal(after.rejected + after.blocked, 0);
    const ledger = await read(site, token, `/v1/counts/${countId}`);
    assert.equal(ledger.seen, 2);
    assert.deepEqual(ledger.unexpected, []);
    // Once the site's figures hold both scans, the screen counts each once.
    await page.waitForFunction(() => /\+0 tags/.test(document.getElementById('count-age')?.textContent || ''));
    assert.equal(await page.textContent('#count-seen'), String(ledger.seen));
    assert.equal(await page.textContent('#count-missing'), String(ledger.missing.length));
    assert.equal(await page.textContent('#count-unexpected'), String(ledger.unexpected.length));
    await wedge(page, 'STOCKHOP:MODE');
    await page.waitForSelector('#confirm:not([hidden])');
    assert.match(await page.textContent('#confirm-text'), new RegExp(`Missing ${ledger.missing.length}, unexpected 0 `));
    await page.click('#confirm-no');
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await site.stop();
  }
});

test('put-away on a site of more bins than one list holds: a bin label past the first 5,000 is a bin, and the unit lands in it', async () => {
  const dataDir = tempDataDir();
  const token = await addDevice(dataDir, 'HH-BIG');
  const [unit] = epcs('FB', 1);
  const bins = Array.from({ length: 5_200 }, (_, i) => `BIG-${String(i).padStart(5, '0')}`);
  await importReference(dataDir, { bins, units: [unit] });
  const { site, browser, page, errors } = await handheld(dataDir, 'HH-BIG', token);
  try {
    // The cache holds every bin; the page's list of them stops at 5,000.
    await eventually(async () => {
      const value = await ask(page, { type: 'reference_status' });
      return { ready: value.ok && value.bins === bins.length && !value.loading, value };
    }, { timeoutMs: 60_000, what: 'the reference cache to hold every bin' });
    await pickMode(page, 'op-big', 'put_away');
    const session = await sessionOpened(page);
    await scanBin(page, 'BIG-05150');
    await scanBurst(page, [unit]);
    const after = await drained(page);
    assert.equal(after.rejected + after.blocked, 0);
    const stored = await read(site, token, `/v1/units/${unit}`);
    assert.equal(stored.bin, 'BIG-05150');
    const hops = await sessionHops(site.base, token, session);
    assert.deepEqual(hops.map((hop) => hop.facts.bin), ['BIG-05150']);
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await site.stop();
  }
});

test('dispatch verify: refuses to open offline; online it verifies the live manifest and an unmatched tag stops the dock until acknowledged', async () => {
  const dataDir = tempDataDir();
  const token = await addDevice(dataDir, 'HH-DOCK');
  const onManifest = epcs('F6', 2);
  const [offManifest] = epcs('F7', 1);
  await importReference(dataDir, {
    bins: ['D-01'],
    unitRows: [...onManifest, offManifest].map((epc) => ({ epc, sku: 'SKU-D', state: 'in_stock', bin: 'D-01' })),
    manifests: onManifest.map((epc) => ({ manifest: 'M-1', state: 'packing', epc })),
  });
  let { site, browser, page, errors } = await handheld(dataDir, 'HH-DOCK', token);
  try {
    const { code } = await site.stop();
    assert.equal(code, 0);
    await net(page, 'offline');
    await pickMode(page, 'op-dock', 'dispatch_verify');
    // It says so before anything is scanned, and again when a manifest is.
    await page.waitForSelector('#mode-notice:not([hidden])');
    await wedge(page, 'M-1');
    await page.waitForFunction(() => /did not open/.test(document.getElementById('scan-status').textContent));
    await page.waitForSelector('#mode-notice:not([hidden])');
    assert.match(await page.textContent('#mode-notice'), /Offline: dispatch verify reads the live manifest/);
    assert.equal(await page.getAttribute('#mode-needs li[data-need="manifest"]', 'data-met'), 'false');
    assert.equal(await sessionId(page), null, 'no session opens offline');
    assert.equal((await allItems(page)).length, 0, 'nothing queued');
    await shot(page, 'screen-dispatch-verify-offline');

    site = await startSite({ dataDir, port: site.port });
    await net(page, 'online');
    await wedge(page, 'M-1');
    const session = await sessionOpened(page);
    assert.equal(await page.isVisible('#mode-notice'), false);
    assert.equal(await page.textContent('#manifest-total'), '2');
    await scanBurst(page, [onManifest[0]]);
    await page.waitForSelector(`#manifest-units li[data-epc="${onManifest[0]}"][data-verified="true"]`);

    await wedge(page, offManifest);
    await page.waitForSelector('#alert:not([hidden])');
    assert.match(await page.textContent('#alert-text'), new RegExp(offManifest));
    await shot(page, 'screen-dispatch-verify-alert');
    // The dock is stopped: the next tag is refused until the alert is acknowledged.
    const refusedBefore = Number(await page.textContent('#scan-refused'));
    await wedge(page, onManifest[1]);
    await page.waitForFunction((n) => Number(document.getElementById('scan-refused').textContent) === n + 1, refusedBefore);
    await wedge(page, 'STOCKHOP:CONFIRM');
    await page.waitForSelector('#alert', { state: 'hidden' });
    await scanBurst(page, [onManifest[1]]);
    await page.waitForFunction(() => document.getElementById('manifest-verified').textContent === '2');
    await shot(page, 'screen-dispatch-verify');

    await drained(page);
    const manifest = await read(site, token, '/v1/manifests/M-1');
    assert.equal(manifest.state, 'verified');
    assert.ok(manifest.units.every((u) => u.verified));
    for (const epc of onManifest) assert.equal((await read(site, token, `/v1/units/${epc}`)).state, 'dispatched');
    assert.equal((await read(site, token, `/v1/units/${offManifest}`)).state, 'in_stock', 'the unmatched tag stays');
    const items = await allItems(page);
    const unmatched = items.find((item) => item.command === 'scan' && item.body.epc === offManifest);
    assert.equal(unmatched.state, 'rejected');
    assert.equal(unmatched.reason, 'not_on_manifest');
    // Acknowledged at the dock: the queue does not ask again.
    await eventually(async () => {
      const value = (await allItems(page)).find((item) => item.id === unmatched.id);
      return { ready: value.acknowledged, value };
    }, { timeoutMs: 10_000, what: 'the dock acknowledgement to reach the queue' });
    assert.equal((await sessionHops(site.base, token, session)).filter((hop) => hop.kind === 'DISPATCH').length, 2);
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await site.stop();
  }
});

test('find a unit: answered offline from the cache by EPC and by serial, with its bin and the cache age, and nothing sent', async () => {
  const dataDir = tempDataDir();
  const token = await addDevice(dataDir, 'HH-FIND');
  const [epc] = epcs('F8', 1);
  await importReference(dataDir, {
    binRows: [{ bin: 'F-01', zone: 'Z-F', location: 'L-F' }],
    unitRows: [{ epc, code: 'SER-0001', sku: 'SKU-F', state: 'in_stock', bin: 'F-01' }],
  });
  let { site, browser, page, errors } = await handheld(dataDir, 'HH-FIND', token);
  try {
    const before = await read(site, token, `/v1/units/${epc}`);
    const { code } = await site.stop();
    assert.equal(code, 0);
    await net(page, 'offline');
    await pickMode(page, 'op-find', 'find_unit');
    assert.equal(await page.getAttribute('#screen-mode', 'data-open'), 'true', 'find a unit needs nothing');
    await wedge(page, epc);
    await page.waitForSelector('#find-result[data-found="true"]');
    // The ledger's state, by its code on the element and in words on the screen.
    assert.equal(before.state, 'in_stock');
    assert.equal(await page.getAttribute('#find-state', 'data-state'), before.state);
    assert.equal(await page.textContent('#find-state'), 'in stock');
    assert.match(await page.textContent('#find-bin'), /F-01 · zone Z-F · L-F/);
    assert.match(await page.textContent('#find-age'), /From this device's copy, \d+ (s|min) old/);
    await wedge(page, 'UNKNOWN-SERIAL');
    await page.waitForSelector('#find-result[data-found="false"]');
    await wedge(page, 'SER-0001');
    await page.waitForSelector('#find-result[data-found="true"]');
    assert.match(await page.textContent('#find-bin'), /F-01/);
    await shot(page, 'screen-find-unit');
    const queue = await counts(page);
    assert.equal(queue.queued + queue.sending + queue.done, 0, 'find a unit sends nothing');
    assert.equal((await allItems(page)).length, 0);

    site = await startSite({ dataDir, port: site.port });
    await net(page, 'online');
    const after = await read(site, token, `/v1/units/${epc}`);
    assert.deepEqual(after, before, 'the ledger never heard of the look-ups');
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await site.stop();
  }
});

test('undo within 120 s: the command barcode and the results list undo a put-away, and the unit goes back', async () => {
  const dataDir = tempDataDir();
  const token = await addDevice(dataDir, 'HH-UNDO');
  const [first, second] = epcs('F9', 2);
  await importReference(dataDir, {
    bins: ['U-01', 'U-02'],
    unitRows: [first, second].map((epc) => ({ epc, sku: 'SKU-U', state: 'in_stock', bin: 'U-01' })),
  });
  const { site, browser, page, errors } = await handheld(dataDir, 'HH-UNDO', token);
  try {
    // An operator who asked for less motion gets no flash on new results.
    await page.emulateMedia({ reducedMotion: 'reduce' });
    await pickMode(page, 'op-undo', 'put_away');
    await sessionOpened(page);
    await scanBin(page, 'U-02');
    await scanBurst(page, [first, second]);
    // Read in one evaluation: the list is redrawn as results come in, and a
    // row detached between a query and its read has no computed style.
    const animations = await page.evaluate(() => [...document.querySelectorAll('#results li')]
      .map((li) => getComputedStyle(li).animationName));
    assert.ok(animations.length > 0 && animations.every((name) => name === 'none'), `no animation: ${animations}`);
    await drained(page);
    assert.equal((await read(site, token, `/v1/units/${first}`)).bin, 'U-02');
    assert.equal((await read(site, token, `/v1/units/${second}`)).bin, 'U-02');

    // The last scan, by the command barcode.
    await wedge(page, 'STOCKHOP:UNDO');
    await page.waitForFunction(() => /^Undone/.test(document.getElementById('scan-status').textContent));
    // The first, from its Undo button on the results list.
    const items = await allItems(page);
    const firstKey = items.find((item) => item.command === 'scan' && item.body.epc === first).key;
    await page.click(`#results button[data-action="undo"][data-key="${firstKey}"]`);
    await page.waitForSelector(`#results li[data-key="${firstKey}"][data-kind="undone"]`);
    await shot(page, 'screen-put-away-undo');
    await drained(page);

    const undos = (await allItems(page)).filter((item) => item.command === 'undo');
    assert.equal(undos.length, 2);
    for (const item of undos) assert.equal(item.state, 'done', `undo ${item.body.target_key} applied`);
    for (const epc of [first, second]) {
      const unit = await read(site, token, `/v1/units/${epc}`);
      assert.equal(unit.bin, 'U-01', `${epc} back in its bin`);
    }
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await site.stop();
  }
});

test('a stale_state item offers Re-scan: the unit is read again, the scan lands, and the stale one is settled', async () => {
  const dataDir = tempDataDir();
  const token = await addDevice(dataDir, 'HH-STALE');
  const [epc] = epcs('FA', 1);
  await importReference(dataDir, {
    bins: ['S-01', 'S-02', 'S-03'],
    unitRows: [{ epc, sku: 'SKU-S', state: 'in_stock', bin: 'S-01' }],
  });
  let { site, browser, page, errors } = await handheld(dataDir, 'HH-STALE', token);
  try {
    await pickMode(page, 'op-stale', 'put_away');
    await sessionOpened(page);
    await drained(page);
    // Someone moves the unit while this handheld is offline: its cache
    // still has the old version.
    const { code } = await site.stop();
    assert.equal(code, 0);
    await importReference(dataDir, { unitRows: [{ epc, sku: 'SKU-S', state: 'in_stock', bin: 'S-02' }] });
    await scanBin(page, 'S-03');
    await scanBurst(page, [epc]);
    site = await startSite({ dataDir, port: site.port });
    await drainAfterOutage(page);
    const stale = (await allItems(page)).find((item) => item.command === 'scan');
    assert.equal(stale.state, 'rejected');
    assert.equal(stale.reason, 'stale_state');

    await openQueue(page);
    const row = page.locator(`#queue-list li[data-id="${stale.id}"]`);
    await row.waitFor();
    assert.match(await row.textContent(), /stale_state/);
    assert.ok(await row.locator('button[data-action="acknowledge"]').isVisible());
    await shot(page, 'screen-queue-stale');
    await row.locator('button[data-action="rescan"]').click();
    await page.waitForFunction(() => /rescan: done/.test(document.getElementById('queue-status').textContent));
    await drained(page);

    const items = await allItems(page);
    const again = items.filter((item) => item.command === 'scan' && item.id !== stale.id);
    assert.equal(again.length, 1, 'one new scan');
    assert.equal(again[0].state, 'done');
    assert.equal(again[0].body.bin, 'S-03');
    assert.equal(items.find((item) => item.id === stale.id).acknowledged, true, 'the stale one is settled');
    const unit = await read(site, token, `/v1/units/${epc}`);
    assert.equal(unit.bin, 'S-03');
    assert.equal(again[0].body.unit_version, stale.body.unit_version + 1, 'the re-scan carries the version read again');
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await site.stop();
  }
});

test('the picker offers only what the profile runs: a printer is offered no mode', async () => {
  const dataDir = tempDataDir();
  const token = await addDevice(dataDir, 'PR-1', { profile: 'zt411r' });
  const { site, browser, page, errors } = await handheld(dataDir, 'PR-1', token);
  try {
    await page.waitForFunction(() => /runs no handheld mode/.test(document.getElementById('picker-status').textContent));
    assert.equal(await page.locator('#picker-modes button').count(), 0);
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await site.stop();
  }
});

test('command barcodes: a printable page, and each payload recognised from the scan field', async () => {
  const dataDir = tempDataDir();
  const token = await addDevice(dataDir, 'HH-CMD');
  await importReference(dataDir, { bins: ['K-01'] });
  const { site, browser, page, errors } = await handheld(dataDir, 'HH-CMD', token);
  try {
    // From the handheld's menu.
    await page.click('#menu-button');
    await page.waitForSelector('#screen-menu:not([hidden])');
    await shot(page, 'screen-menu');
    await page.click('#menu-commands');
    await page.waitForURL(/\/commands$/);
    const payloads = await page.$$eval('figure.command', (figures) => figures.map((f) => [f.dataset.payload, !!f.querySelector('svg rect')]));
    assert.deepEqual(payloads, [
      ['STOCKHOP:CLOSE', true],
      ['STOCKHOP:UNDO', true],
      ['STOCKHOP:MODE', true],
      ['STOCKHOP:CONFIRM', true],
    ]);
    await shot(page, 'screen-commands');
    await page.click('#commands-back');
    await page.waitForSelector('body[data-ready="true"]');

    await pickMode(page, 'op-cmd', 'put_away');
    await sessionOpened(page);
    await wedge(page, 'STOCKHOP:CONFIRM');
    await page.waitForFunction(() => document.getElementById('scan-status').textContent === 'Nothing to confirm.');
    await wedge(page, 'STOCKHOP:UNDO');
    await page.waitForFunction(() => /^Nothing to undo/.test(document.getElementById('scan-status').textContent));
    await wedge(page, 'STOCKHOP:MODE');
    await page.waitForSelector('#screen-picker:not([hidden])');
    assert.equal(await sessionId(page), null, 'switching mode closes the session');
    await pickMode(page, 'op-cmd', 'put_away');
    await sessionOpened(page);
    await wedge(page, 'STOCKHOP:CLOSE');
    await page.waitForSelector('#screen-picker:not([hidden])');
    const after = await drained(page);
    assert.equal(after.done, 4, 'two sessions opened and closed, no command captured as a scan');
    assert.equal((await allItems(page)).filter((item) => item.command === 'scan').length, 0);
    assert.equal(Number(await page.textContent('#scan-count')), 0);

    // The handheld keeps the sheet: it opens with the site down.
    assert.equal((await site.stop()).code, 0);
    await page.goto(`${site.base}/commands`);
    assert.equal(await page.locator('figure.command svg').count(), 4);
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await site.stop();
  }
});
