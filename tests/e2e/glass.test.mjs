// What the picker sees is what the ledger decided. A real
// `stockhop-site serve`, the PWA in Debian's headless Chromium at 480×800,
// codes typed into the scan field as a keyboard wedge types them; the page
// instrumented to record its tones (each oscillator started) and
// vibrations (`navigator.vibrate`) and when its banner shows. Every figure
// and outcome a screen shows is read back from the ledger and compared.
// Each screen is photographed into artifacts/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { artifactsDir, freePort, launchBrowser, siteCommand, startSite, tempDataDir } from './lib/site.mjs';
import { launchTrusting } from './lib/tls.mjs';
import {
  HANDHELD_VIEWPORT,
  addDevice,
  allItems,
  closeSession,
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
  sessionHops,
  sessionOpened,
  siteRead,
  wedge,
} from './lib/handheld.mjs';

/** The signals signal.js gives, by their vibration pattern. */
const VIBRATION = { kept: '40', refused: '200,80,200', alert: '500,150,500,150,500' };

/**
 * Runs in the page before the app: records each vibration and tone with
 * its instant (Unix ms, the clock the worker stamps answers with), and
 * the instant the late-refusal banner first shows.
 */
function instrument() {
  window.__signals = [];
  const now = () => performance.timeOrigin + performance.now();
  Object.defineProperty(Navigator.prototype, 'vibrate', {
    configurable: true,
    value(pattern) {
      window.__signals.push({ type: 'vibrate', pattern: [].concat(pattern).join(','), at: now() });
      return true;
    },
  });
  const start = OscillatorNode.prototype.start;
  OscillatorNode.prototype.start = function startRecorded(when) {
    window.__signals.push({ type: 'tone', frequency: this.frequency.value, at: now() });
    return start.call(this, when);
  };
  document.addEventListener('DOMContentLoaded', () => {
    const banner = document.getElementById('late-banner');
    new MutationObserver(() => {
      if (!banner.hidden && !window.__bannerAt) window.__bannerAt = now();
    }).observe(banner, { attributes: true, attributeFilter: ['hidden'] });
  });
}

/** Checks the screen's touch targets, then photographs it into artifacts/. */
async function shot(page, name) {
  await assertTouchTargets(page);
  await page.screenshot({ path: join(artifactsDir(), `${name}.png`) });
}

function net(page, state) {
  return page.waitForFunction((s) => document.getElementById('net-status').dataset.net === s, state, { timeout: 20_000 });
}

/** The site is back: the operator taps Retry now on the queue screen and goes back. */
async function retryOnQueue(page) {
  await net(page, 'online');
  await openQueue(page);
  await page.click('#queue-retry');
  await page.click('#queue-back');
}

async function read(site, token, path) {
  const { status, body } = await siteRead(site.base, token, path);
  assert.equal(status, 200, `GET ${path}: ${JSON.stringify(body)}`);
  return body;
}

async function handheld(dataDir, deviceId, token) {
  const site = await startSite({ dataDir });
  const browser = await launchBrowser();
  const { page, errors } = await openHandheld(browser, {
    pageUrl: site.base, siteUrl: site.base, token, deviceId, initScript: instrument,
  });
  return { site, browser, page, errors };
}

/** The scan row of the item captured under `key`. */
function row(page, key) {
  return page.locator(`#results li[data-key="${key}"]`);
}

async function itemOf(page, predicate) {
  return (await allItems(page)).find(predicate);
}

/** The item of the scan of `epc`, once its row shows as `kind` (waited for up to 30 s). */
async function scanShownAs(page, epc, kind) {
  const item = await itemOf(page, (i) => i.body && i.body.epc === epc);
  await page.waitForSelector(`#results li[data-key="${item.key}"][data-kind="${kind}"]`, { timeout: 30_000 });
  return item;
}

test('a refusal after an outage is heard, felt and seen in words, with a banner that stays until seen; the ledger agrees', async () => {
  const dataDir = tempDataDir();
  const token = await addDevice(dataDir, 'HH-GLASS');
  const known = epcs('C1', 2);
  const [stranger, another] = epcs('C2', 2);
  await importReference(dataDir, { bins: ['G-01'], units: known });
  let { site, browser, page, errors } = await handheld(dataDir, 'HH-GLASS', token);
  try {
    await pickMode(page, 'op-glass', 'put_away');
    const session = await sessionOpened(page);
    await scanBin(page, 'G-01');
    await drained(page);

    assert.equal((await site.stop()).code, 0);
    await net(page, 'offline');
    await page.evaluate(() => { window.__signals = []; });
    await scanBurst(page, [known[0], stranger, known[1]]);
    const kept = await allItems(page);
    const strangerItem = kept.find((item) => item.body && item.body.epc === stranger);
    await page.waitForSelector(`#results li[data-key="${strangerItem.key}"][data-kind="kept"]`);
    assert.match(await row(page, strangerItem.key).textContent(), /kept on this device/);
    const keptSignals = await page.evaluate(() => window.__signals.filter((s) => s.type === 'vibrate').map((s) => s.pattern));
    assert.deepEqual(keptSignals, [VIBRATION.kept, VIBRATION.kept, VIBRATION.kept], 'one short buzz a scan kept');
    await shot(page, 'glass-kept-offline');

    // Back online, after the outage: the ledger refuses the stranger.
    site = await startSite({ dataDir, port: site.port });
    await page.evaluate(() => { window.__signals = []; });
    await retryOnQueue(page);
    await page.waitForSelector('#late-banner:not([hidden])', { timeout: 60_000 });
    await page.waitForSelector(`#results li[data-key="${strangerItem.key}"][data-kind="refused"]`);
    const refusedRow = await row(page, strangerItem.key).textContent();
    assert.match(refusedRow, /refused/);
    assert.match(refusedRow, /The site does not know this tag or serial\./);
    assert.match(refusedRow, /Set the unit aside and tell a supervisor/);
    assert.equal(await row(page, strangerItem.key).locator('small.code').textContent(), 'unknown_unit');
    assert.equal(await row(page, strangerItem.key).locator('button[data-action="undo"]').count(), 0, 'no Undo on a refusal');
    assert.match(await page.textContent('#late-text'), /1 scan refused by the site after it was kept here/);
    await drained(page);
    for (const epc of known) {
      const item = await itemOf(page, (i) => i.body && i.body.epc === epc);
      await page.waitForSelector(`#results li[data-key="${item.key}"][data-kind="applied"]`);
    }
    await shot(page, 'glass-refused-after-outage');

    // Heard and felt, once: a refusal the picker has moved on from (it came
    // after the outage) stops work, with the blocking alert's tones and buzz.
    const signals = await page.evaluate(() => window.__signals);
    const buzzes = signals.filter((s) => s.type === 'vibrate').map((s) => s.pattern);
    assert.deepEqual(buzzes, [VIBRATION.alert]);
    const tones = signals.filter((s) => s.type === 'tone').map((s) => s.frequency);
    assert.deepEqual(tones, [880, 587, 880, 587], 'the alert\'s tones');
    // The figure: from the worker recording the answer to the banner and the tone.
    const answered = (await itemOf(page, (i) => i.key === strangerItem.key)).updated_at;
    const bannerAt = await page.evaluate(() => window.__bannerAt);
    const toneAt = signals.find((s) => s.type === 'tone').at;
    console.log(`refusal answered → banner ${Math.round(bannerAt - answered)} ms, → tone ${Math.round(toneAt - answered)} ms`);

    // The ledger: the known units moved, the stranger is not a unit, and
    // the session holds exactly the two applied scans.
    for (const epc of known) assert.equal((await read(site, token, `/v1/units/${epc}`)).bin, 'G-01');
    assert.equal((await siteRead(site.base, token, `/v1/units/${stranger}`)).status, 404);
    const items = await allItems(page);
    const applied = items.filter((i) => i.session_id === session && i.command === 'scan' && i.state === 'done').map((i) => i.key);
    const hops = await sessionHops(site.base, token, session);
    assert.deepEqual(hops.map((hop) => hop.key).sort(), applied.sort(), 'the rows that say applied are the ledger\'s hops');
    assert.equal((await itemOf(page, (i) => i.key === strangerItem.key)).reason, 'unknown_unit');

    // The banner stays through refreshes until the operator says Seen.
    await page.waitForTimeout(4_500);
    assert.equal(await page.isVisible('#late-banner'), true, 'the banner stays until seen');
    await page.click('#late-seen');
    await page.waitForSelector('#late-banner', { state: 'hidden' });

    // Signals off: a refusal shows in words, silently.
    await page.click('#menu-button');
    await page.click('#menu-signals');
    assert.equal(await page.getAttribute('#menu-signals', 'aria-pressed'), 'false');
    await shot(page, 'glass-menu-signals-off');
    await page.click('#menu-back');
    await page.evaluate(() => { window.__signals = []; });
    await scanBurst(page, [another]);
    const late = await scanShownAs(page, another, 'refused');
    assert.deepEqual(await page.evaluate(() => window.__signals), [], 'no tone and no buzz with signals off');
    assert.equal(await page.isVisible('#late-banner'), false, 'a refusal answered at once is shown on its row, not in the banner');
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await site.stop();
  }
});

test('receive: the GRN table is the site\'s row plus this device\'s scans since, never counted twice, and matches the ledger', async () => {
  const dataDir = tempDataDir();
  const token = await addDevice(dataDir, 'HH-GRN');
  const tags = epcs('C3', 3);
  await importReference(dataDir, {
    unitRows: tags.map((epc) => ({ epc, sku: 'SKU-G', state: 'new' })),
    grns: [{ grn: 'GRN-G', qc: 'accepted', sku: 'SKU-G', expected: 3 }],
  });
  const { site, browser, page, errors } = await handheld(dataDir, 'HH-GRN', token);
  try {
    await pickMode(page, 'op-grn', 'receive');
    await page.click('#mode-choices button[data-grn="GRN-G"]');
    await sessionOpened(page);
    const cells = () => page.$$eval('#grn-lines tr[data-sku="SKU-G"] td', (tds) => tds.map((td) => td.textContent));
    const settled = async (received) => {
      // The site's figure, read with the table: both agree once the cache has the change.
      const value = await eventually(async () => {
        const shown = await cells();
        const grn = await read(site, token, '/v1/grns/GRN-G');
        return { ready: shown[2] === String(received) && shown[3] === '0' && grn.lines[0].received === received, value: { shown, grn } };
      }, { timeoutMs: 30_000, what: `the table at ${received} received` });
      assert.deepEqual(value.shown, ['SKU-G', '3', String(value.grn.lines[0].received), '0']);
    };
    await scanBurst(page, tags.slice(0, 2));
    await drained(page);
    await settled(2);
    // A duplicate: the ledger refuses it, and the table never counts it.
    await scanBurst(page, [tags[0]]);
    const dup = (await allItems(page)).filter((i) => i.body && i.body.epc === tags[0]).pop();
    await page.waitForSelector(`#results li[data-key="${dup.key}"][data-kind="refused"]`, { timeout: 30_000 });
    assert.match(await row(page, dup.key).textContent(), /This unit was received already/);
    await settled(2);
    await scanBurst(page, [tags[2]]);
    await drained(page);
    await settled(3);
    assert.match(await page.textContent('#grn-age'), /Received as the site said \d+ s ago/);
    await shot(page, 'glass-receive-figures');
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await site.stop();
  }
});

test('a bin added mid-shift is scanned at once: the page asks the site before refusing it, and the unit lands there', async () => {
  const dataDir = tempDataDir();
  const token = await addDevice(dataDir, 'HH-NEWBIN');
  const [unit] = epcs('C4', 1);
  await importReference(dataDir, { bins: ['G-OLD'], units: [unit] });
  const { site, browser, page, errors } = await handheld(dataDir, 'HH-NEWBIN', token);
  try {
    await pickMode(page, 'op-newbin', 'put_away');
    const session = await sessionOpened(page);
    // The site gains a bin while the handheld is in use.
    await importReference(dataDir, { bins: ['G-NEW'] });
    await scanBin(page, 'G-NEW');
    await scanBurst(page, [unit]);
    const item = await scanShownAs(page, unit, 'applied');
    await shot(page, 'glass-bin-added-mid-shift');
    assert.equal((await read(site, token, `/v1/units/${unit}`)).bin, 'G-NEW');
    const hops = await sessionHops(site.base, token, session);
    assert.deepEqual(hops.map((hop) => hop.key), [item.key]);
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await site.stop();
  }
});

test('the queue screen: newest problems first, a to-decide filter, a second page acted on while it refreshes, no label twice', async () => {
  const dataDir = tempDataDir();
  const token = await addDevice(dataDir, 'HH-PAGES');
  const known = epcs('C5', 3);
  const strangers = epcs('C6', 56);
  await importReference(dataDir, { bins: ['G-Q'], units: known });
  const { site, browser, page, errors } = await handheld(dataDir, 'HH-PAGES', token);
  try {
    // Two sessions, so their seqs repeat: the labels must not.
    await pickMode(page, 'op-q', 'put_away');
    const first = await sessionOpened(page);
    await scanBin(page, 'G-Q');
    await scanBurst(page, [known[0], ...strangers.slice(0, 30)]);
    await drained(page);
    await page.click('#mode-switch');
    await pickMode(page, 'op-q', 'put_away');
    const second = await sessionOpened(page);
    await scanBin(page, 'G-Q');
    await scanBurst(page, [...known.slice(1), ...strangers.slice(30)]);
    await drained(page);

    await openQueue(page);
    const items = await allItems(page);
    const problems = items.filter((i) => i.state === 'rejected').sort((a, b) => b.occurred_at - a.occurred_at || b.id - a.id);
    assert.equal(problems.length, strangers.length);
    await page.waitForFunction((n) => document.querySelectorAll('#queue-list li').length === n, 50);
    const shownIds = await page.$$eval('#queue-list li', (lis) => lis.map((li) => Number(li.dataset.id)));
    assert.deepEqual(shownIds, problems.slice(0, 50).map((i) => i.id), 'newest problems first');
    await page.click('#queue-more');
    await page.waitForFunction(() => document.querySelectorAll('#queue-list li').length > 50);
    const oldest = problems[problems.length - 1];
    const target = page.locator(`#queue-list li[data-id="${oldest.id}"]`);
    await target.waitFor();
    // Several refreshes go by: the second page stays, and its button works.
    await page.waitForTimeout(5_000);
    assert.ok(await page.$$eval('#queue-list li', (lis) => lis.length) > 50, 'More stays open through refreshes');
    await target.scrollIntoViewIfNeeded();
    await shot(page, 'glass-queue-second-page');
    await target.locator('button[data-action="acknowledge"]').click();
    await page.waitForFunction(() => /acknowledge: done/.test(document.getElementById('queue-status').textContent));
    assert.equal((await itemOf(page, (i) => i.id === oldest.id)).acknowledged, true);

    const labels = await page.$$eval('#queue-list li', (lis) => lis.map((li) => li.dataset.label));
    assert.equal(new Set(labels).size, labels.length, 'no label twice');
    assert.ok(labels.some((l) => l.startsWith(`S-${first.slice(0, 8)} #`)) && labels.some((l) => l.startsWith(`S-${second.slice(0, 8)} #`)));

    await page.click('#queue-filter-decide');
    await page.waitForFunction(() => document.getElementById('queue-filter-decide').getAttribute('aria-pressed') === 'true');
    assert.match(await page.textContent('#queue-filter-decide'), new RegExp(`\\(${strangers.length - 1}\\)`));
    const decideRows = await page.$$eval('#queue-list li', (lis) => lis.map((li) => li.dataset.decide));
    assert.ok(decideRows.length === 50 && decideRows.every((d) => d === 'true'), 'only what waits for a person');
    await shot(page, 'glass-queue-to-decide');

    // The ledger: a hop for each known unit and none for a stranger.
    const hops = [...await sessionHops(site.base, token, first), ...await sessionHops(site.base, token, second)];
    assert.deepEqual(hops.map((h) => h.facts.epc).sort(), [...known].sort());
    for (const epc of strangers.slice(0, 3)) assert.equal((await siteRead(site.base, token, `/v1/units/${epc}`)).status, 404);
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await site.stop();
  }
});

test('setup says what is wrong: an unreachable site, an untrusted certificate and a refused token are each named', async () => {
  const dataDir = tempDataDir();
  const token = await addDevice(dataDir, 'HH-SETUP');
  const site = await startSite({ dataDir });
  // A second site over HTTPS by name, with its own CA, which this browser does not trust.
  const tlsData = tempDataDir();
  const httpsPort = await freePort();
  const tlsSite = await startSite({ dataDir: tlsData, extraArgs: ['--https', `127.0.0.1:${httpsPort}`, '--tls-name', 'stockhop.test'] });
  const browser = await launchTrusting(mkdtempSync(join(tmpdir(), 'stockhop-e2e-home-')), 'stockhop.test');
  try {
    const context = await browser.newContext({ viewport: HANDHELD_VIEWPORT });
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (err) => errors.push(String(err)));
    await page.goto(site.base);
    await page.waitForSelector('#screen-setup:not([hidden])');
    const save = async (url, tokenValue, failure) => {
      await page.fill('#site-url', url);
      await page.fill('#device-id', 'HH-SETUP');
      await page.fill('#device-token', tokenValue);
      await page.click('#setup-save');
      await page.waitForFunction((f) => document.getElementById('setup-status').dataset.failure === f, failure, { timeout: 20_000 });
      return page.textContent('#setup-status');
    };
    const closed = await freePort();
    assert.match(await save(`http://127.0.0.1:${closed}`, token, 'unreachable'), /does not answer at http:\/\/127\.0\.0\.1:\d+/);
    assert.equal(await page.isVisible('#setup-anyway'), true, 'a site that is down may be saved anyway');
    await shot(page, 'glass-setup-unreachable');
    assert.match(await save(`https://stockhop.test:${httpsPort}`, token, 'certificate'), /does not trust the certificate of https:\/\/stockhop\.test/);
    await shot(page, 'glass-setup-certificate');
    assert.match(await save(site.base, 'not-the-token', 'token'), /refused the device token \(401\)/);
    assert.equal(await page.isVisible('#setup-anyway'), false, 'a refused token is never saved');
    await shot(page, 'glass-setup-token');
    // The ledger agrees: that token is refused, the right one is not.
    assert.equal((await siteRead(site.base, 'not-the-token', '/v1/reference?limit=1')).status, 401);
    assert.equal((await siteRead(site.base, token, '/v1/reference?limit=1')).status, 200);
    // The setup screen is drawn before the worker is ready; its hook comes with the worker.
    await page.waitForFunction(() => window.stockhop);
    assert.equal((await page.evaluate(() => window.stockhop.ask({ type: 'device' }))).configured, false, 'nothing was saved');

    await page.fill('#device-token', token);
    await page.click('#setup-save');
    await page.waitForSelector('#screen-picker:not([hidden])');
    assert.match(await page.textContent('#setup-status'), /^Set up as HH-SETUP/);
    // Persistent storage asked at setup: granted, or refused with advice.
    await page.waitForFunction(() => /Persistent storage/.test(document.getElementById('storage-persist').textContent));
    const persist = await page.textContent('#storage-persist');
    if (/NOT granted/.test(persist)) {
      assert.match(await page.textContent('#persist-advice'), /Add Stockhop to the home screen/);
    }
    await shot(page, 'glass-setup-saved');
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await tlsSite.stop();
    await site.stop();
  }
});

test('a setup link for another site asks first while scans are held, and never drops them', async () => {
  const dataA = tempDataDir();
  const tokenA = await addDevice(dataA, 'HH-A');
  const units = epcs('C7', 3);
  await importReference(dataA, { bins: ['G-A'], units });
  let site = await startSite({ dataDir: dataA });
  const browser = await launchBrowser();
  try {
    const { page, errors } = await openHandheld(browser, { pageUrl: site.base, siteUrl: site.base, token: tokenA, deviceId: 'HH-A' });
    await pickMode(page, 'op-a', 'put_away');
    await sessionOpened(page);
    await scanBin(page, 'G-A');
    await drained(page);
    assert.equal((await site.stop()).code, 0);
    await scanBurst(page, units);
    const held = (await allItems(page)).filter((i) => i.state === 'queued');
    assert.equal(held.length, 3);

    // The address now serves another site, whose device this handheld is to become.
    const dataB = tempDataDir();
    const tokenB = await addDevice(dataB, 'HH-B');
    site = await startSite({ dataDir: dataB, port: site.port });
    const link = new URLSearchParams({ site: site.base, token: tokenB, device: 'HH-B' });
    await page.goto(`${site.base}/#${link}`);
    await page.waitForSelector('#confirm:not([hidden])');
    assert.match(await page.textContent('#confirm-text'), /holds \d+ scans of HH-A/);
    await shot(page, 'glass-setup-switch-asks');
    await page.click('#confirm-no');
    await page.waitForFunction(() => /^Not switched: this handheld stays HH-A/.test(document.getElementById('setup-status').textContent));
    assert.equal((await page.evaluate(() => window.stockhop.ask({ type: 'device' }))).device_id, 'HH-A');
    const after = await allItems(page);
    for (const item of held) assert.ok(after.some((i) => i.key === item.key), `held scan #${item.client_seq} kept`);

    await page.goto(`${site.base}/#${link}`);
    await page.waitForSelector('#confirm:not([hidden])');
    await page.click('#confirm-yes');
    await page.waitForFunction(() => document.getElementById('setup-status').textContent.startsWith('Set up as HH-B'));
    const switched = await allItems(page);
    for (const item of held) assert.ok(switched.some((i) => i.key === item.key), `scan #${item.client_seq} still held after the switch`);
    // The ledger of the new site has no device HH-A: nothing of it was applied there under another name.
    assert.equal((await siteRead(site.base, tokenA, '/v1/reference?limit=1')).status, 401);
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await site.stop();
  }
});

test('cycle count: missing and unexpected as the site counts them plus this device\'s tags since, and Close asks first', async () => {
  const dataDir = tempDataDir();
  const token = await addDevice(dataDir, 'HH-CNT');
  const inBin = epcs('C8', 3);
  const [stranger] = epcs('C9', 1);
  await importReference(dataDir, {
    binRows: [{ bin: 'K-01', zone: 'Z-K', location: 'L-K' }],
    unitRows: inBin.map((epc) => ({ epc, sku: 'SKU-K', state: 'in_stock', bin: 'K-01' })),
  });
  const countId = await openCount(dataDir, { location: 'L-K', zone: 'Z-K' });
  let { site, browser, page, errors } = await handheld(dataDir, 'HH-CNT', token);
  try {
    await pickMode(page, 'op-cnt', 'cycle_count');
    await page.click(`#mode-choices button[data-count="${countId}"]`);
    await sessionOpened(page);
    await page.waitForFunction(() => document.getElementById('count-missing')?.textContent === '3');
    await scanBin(page, 'K-01');
    // Offline: the figures are the site's as last read, with this device's tags since.
    assert.equal((await site.stop()).code, 0);
    await net(page, 'offline');
    await scanBurst(page, [inBin[0], inBin[1], stranger]);
    await page.waitForFunction(() => document.getElementById('count-seen').textContent === '3');
    assert.equal(await page.textContent('#count-missing'), '1');
    assert.equal(await page.textContent('#count-unexpected'), '1');
    assert.match(await page.textContent('#count-age'), /site's figures \d+ (s|min) old; \+3 tags from this device since/);
    await shot(page, 'glass-count-offline');

    site = await startSite({ dataDir, port: site.port });
    await retryOnQueue(page);
    await drained(page);
    const live = await eventually(async () => {
      const view = await read(site, token, `/v1/counts/${countId}`);
      const shown = await page.evaluate(() => ['count-seen', 'count-expected', 'count-missing', 'count-unexpected']
        .map((id) => document.getElementById(id).textContent));
      const expected = [view.seen, view.expected, view.missing.length, view.unexpected.length].map(String);
      return { ready: JSON.stringify(shown) === JSON.stringify(expected) && /\+0 tags/.test(await page.textContent('#count-age')), value: { shown, view } };
    }, { timeoutMs: 30_000, what: 'the screen to show the ledger\'s count' });
    assert.deepEqual(live.view.missing, [inBin[2]]);
    assert.deepEqual(live.view.unexpected, [stranger]);

    // Close asks first, with the figures; Keep counting keeps the count open.
    await page.click('#session-close');
    await page.waitForSelector('#confirm:not([hidden])');
    assert.match(await page.textContent('#confirm-text'), /Missing 1, unexpected 1/);
    await shot(page, 'glass-count-close-asks');
    await page.click('#confirm-no');
    await page.waitForSelector('#confirm', { state: 'hidden' });
    assert.equal((await read(site, token, `/v1/counts/${countId}`)).state, 'open');
    await page.click('#session-close');
    await page.waitForSelector('#confirm:not([hidden])');
    await page.click('#confirm-yes');
    await page.waitForSelector('#screen-picker:not([hidden])');
    await drained(page);
    assert.equal((await read(site, token, `/v1/counts/${countId}`)).state, 'closed');
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await site.stop();
  }
});

test('smaller things: no dispatch notice in Find a unit, a status bar that fits offline, a serial in any case', async () => {
  const dataDir = tempDataDir();
  const token = await addDevice(dataDir, 'HH-SMALL');
  const [epc] = epcs('CA', 1);
  await importReference(dataDir, {
    binRows: [{ bin: 'S-01', zone: 'Z-S', location: 'L-S' }],
    unitRows: [{ epc, code: 'SER-A1', sku: 'SKU-S', state: 'in_stock', bin: 'S-01' }],
  });
  const { site, browser, page, errors } = await handheld(dataDir, 'HH-SMALL', token);
  try {
    const unit = await read(site, token, `/v1/units/${epc}`);
    assert.equal((await site.stop()).code, 0);
    await net(page, 'offline');
    await pickMode(page, 'op-small', 'dispatch_verify');
    await page.waitForSelector('#mode-notice:not([hidden])');
    await wedge(page, 'STOCKHOP:MODE');
    await pickMode(page, 'op-small', 'find_unit');
    assert.equal(await page.isVisible('#mode-notice'), false, 'the dispatch notice stays in dispatch verify');
    await wedge(page, 'ser-a1');
    await page.waitForSelector('#find-result[data-found="true"]');
    assert.match(await page.textContent('#find-bin'), new RegExp(unit.bin));
    // Every figure of the bar is inside it.
    const cut = await page.evaluate(() => [...document.querySelectorAll('#status-bar > *')]
      .filter((e) => !e.hidden)
      .filter((e) => {
        const r = e.getBoundingClientRect();
        const bar = document.getElementById('status-bar').getBoundingClientRect();
        return r.right > bar.right + 0.5 || r.bottom > bar.bottom + 0.5;
      })
      .map((e) => e.id || e.textContent));
    assert.deepEqual(cut, [], 'status bar figures cut off');
    await shot(page, 'glass-find-serial-offline');
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await site.stop();
  }
});

/** The site's view, signed in with an admin token, at a desk's width. */
async function siteView(browser, site, adminToken) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  await page.goto(`${site.base}/site/`);
  await page.waitForSelector('body[data-state="signed-out"]');
  await page.fill('#admin-token', adminToken);
  await page.click('#sign-in-form button[type="submit"]');
  await page.waitForSelector('body[data-state="ready"]');
  return page;
}

test('an uncommissioned device says TRAINING on every screen and its scans are practice; after Commission on the site\'s view it is gone', async () => {
  const dataDir = tempDataDir();
  const adminToken = (await siteCommand(['admin', 'add', 'supervisor', '--data', dataDir])).trim();
  const token = await addDevice(dataDir, 'HH-TRAIN', { commissioned: false });
  const [first, second] = epcs('CB', 2);
  await importReference(dataDir, { bins: ['T-01', 'T-02'], unitRows: [first, second].map((epc) => ({ epc, sku: 'SKU-T', state: 'in_stock', bin: 'T-01' })) });
  const { site, browser, page, errors } = await handheld(dataDir, 'HH-TRAIN', token);
  try {
    await page.waitForSelector('#training:not([hidden])');
    await shot(page, 'glass-training-picker');
    await pickMode(page, 'op-train', 'put_away');
    const session = await sessionOpened(page);
    assert.equal(await page.isVisible('#training'), true, 'on the mode screen');
    await scanBin(page, 'T-02');
    await scanBurst(page, [first]);
    const practice = await scanShownAs(page, first, 'training');
    assert.match(await row(page, practice.key).textContent(), /recorded as training: nothing moved/);
    await shot(page, 'glass-training-put-away');
    for (const screen of ['menu', 'queue']) {
      await page.click(screen === 'menu' ? '#menu-button' : '#status-bar');
      await page.waitForSelector(`#screen-${screen}:not([hidden])`);
      assert.equal(await page.isVisible('#training'), true, `on the ${screen} screen`);
    }
    await shot(page, 'glass-training-queue');
    await page.click('#queue-back');
    // The ledger: the scan is a simulation hop and the unit did not move.
    const hops = await sessionHops(site.base, token, session);
    assert.deepEqual(hops.map((h) => [h.key, h.source_mode]), [[practice.key, 'sim']]);
    assert.equal((await read(site, token, `/v1/units/${first}`)).bin, 'T-01');

    // A supervisor commissions it on the site's view.
    const view = await siteView(browser, site, adminToken);
    const commission = view.locator('tr[data-device="HH-TRAIN"] button[data-action="commission"]');
    await commission.click();
    await commission.click();
    await view.waitForSelector('tr[data-device="HH-TRAIN"] button[data-action="commission"]', { state: 'detached' });
    await page.click('#menu-button');
    await page.click('#menu-refresh');
    await page.waitForSelector('#training', { state: 'hidden' });
    await page.click('#menu-back');
    await scanBurst(page, [second]);
    const real = await scanShownAs(page, second, 'applied');
    await shot(page, 'glass-training-commissioned');
    const after = await sessionHops(site.base, token, session);
    assert.deepEqual(after.find((h) => h.key === real.key).source_mode, 'live');
    assert.equal((await read(site, token, `/v1/units/${second}`)).bin, 'T-02', 'a commissioned scan moves the unit');
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await site.stop();
  }
});

test('operators: a first scan that is no badge is refused as one, the session shows the name, CLOSE and an idle shift sign out', async () => {
  const dataDir = tempDataDir();
  const token = await addDevice(dataDir, 'HH-OPS');
  const [unit] = epcs('CC', 1);
  await importReference(dataDir, { bins: ['O-01'], units: [unit] });
  const csv = join(tempDataDir(), 'operators.csv');
  writeFileSync(csv, 'badge,name\nop-ann,Ann Lee\nop-bo,Bo Ng\n');
  await siteCommand(['import', 'operators', csv, '--data', dataDir]);
  const { site, browser, page, errors } = await handheld(dataDir, 'HH-OPS', token);
  try {
    const refusedAs = async (code, words) => {
      await wedge(page, code);
      await page.waitForFunction((w) => document.getElementById('picker-status').textContent.includes(w), words);
      assert.equal(await page.textContent('#operator'), '–', `${code} is not taken as the badge`);
    };
    await page.waitForSelector('#screen-picker:not([hidden])');
    await page.focus('#scan-input');
    await refusedAs(unit, 'is a tag, not an operator badge');
    await refusedAs('O-01', 'is a bin label, not an operator badge');
    await refusedAs('op-nobody', 'is not an operator badge the site knows');
    await shot(page, 'glass-operator-refused');
    await wedge(page, 'op-ann');
    await page.waitForFunction(() => document.getElementById('operator-name').textContent === 'Ann Lee');
    await page.click('#pick-put_away');
    await sessionOpened(page);
    assert.match(await page.textContent('#session-status'), /^Open: Ann Lee \(op-ann\)/);
    await shot(page, 'glass-operator-session');
    // The ledger's list is where the name came from.
    const reference = await read(site, token, '/v1/reference');
    assert.deepEqual(reference.operators.map((o) => [o.badge, o.name]).sort(), [['op-ann', 'Ann Lee'], ['op-bo', 'Bo Ng']]);

    await wedge(page, 'STOCKHOP:CLOSE');
    await page.waitForFunction(() => /signed out \(CLOSE\)/.test(document.getElementById('picker-status').textContent));
    assert.equal(await page.textContent('#operator'), '–');
    assert.match(await page.textContent('#picker-prompt'), /Scan your operator badge/);
    const after = await drained(page);
    assert.equal(after.rejected + after.blocked, 0, 'the session opened for a listed badge and closed');

    // An idle shift: the device's idle time, here a few seconds.
    await page.evaluate(() => localStorage.setItem('stockhop.idle_minutes', '0.05'));
    await wedge(page, 'op-bo');
    await page.waitForFunction(() => document.getElementById('operator-name').textContent === 'Bo Ng');
    await page.waitForFunction(() => /^Signed out after \d+ s without a scan/.test(document.getElementById('picker-status').textContent), null, { timeout: 20_000 });
    assert.equal(await page.textContent('#operator'), '–');
    await shot(page, 'glass-operator-idle');
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await site.stop();
  }
});

test('a badge scanned where a mode takes units is told as a badge, not captured as a unit', async () => {
  const dataDir = tempDataDir();
  const token = await addDevice(dataDir, 'HH-BADGE');
  // Bo Ng's badge is an RFID card: the sled reads it as it reads a tag.
  const [unit, rfidBadge] = epcs('CE', 2);
  await importReference(dataDir, { bins: ['P-01'], unitRows: [{ epc: unit, sku: 'SKU-1', state: 'in_stock', bin: 'P-01' }] });
  const csv = join(tempDataDir(), 'operators.csv');
  writeFileSync(csv, `badge,name\nop-ann,Ann Lee\n${rfidBadge},Bo Ng\n`);
  await siteCommand(['import', 'operators', csv, '--data', dataDir]);
  const countId = await openCount(dataDir, { location: 'L-1', zone: 'Z-1' });
  const { site, browser, page, errors } = await handheld(dataDir, 'HH-BADGE', token);
  try {
    /** Scans `code` and checks the row it leaves: told as a badge, what to scan instead, nothing captured. */
    const toldAsBadge = async (code, words, next) => {
      const captured = await page.textContent('#scan-count');
      const refused = Number(await page.textContent('#scan-refused'));
      await wedge(page, code);
      await page.waitForFunction((n) => Number(document.getElementById('scan-refused').textContent) === n, refused + 1);
      assert.equal(await page.textContent('#scan-status'), words);
      // The row is drawn at the next frame.
      await page.waitForFunction((w) => document.querySelector('#results li .scan')?.textContent === w, words);
      const row = page.locator('#results li').first();
      assert.equal(await row.getAttribute('data-kind'), 'refused');
      assert.equal(await row.locator('.scan').textContent(), words);
      assert.equal(await row.locator('.next').textContent(), next);
      assert.equal(await page.textContent('#scan-count'), captured, `${code} is not captured`);
    };

    await pickMode(page, 'op-ann', 'put_away');
    const putAway = await sessionOpened(page);
    await toldAsBadge('op-ann', "That is Ann Lee's badge (op-ann): not captured.", 'Scan a bin label.');
    await scanBin(page, 'P-01');
    await toldAsBadge(rfidBadge, `That is Bo Ng's badge (${rfidBadge}): not captured.`, 'Scan units for bin P-01.');
    await shot(page, 'glass-badge-in-put-away');
    await scanBurst(page, [unit]);
    await closeSession(page);

    await pickMode(page, 'op-ann', 'cycle_count');
    await page.click(`#mode-choices button[data-count="${countId}"]`);
    const counting = await sessionOpened(page);
    await scanBin(page, 'P-01');
    await toldAsBadge(rfidBadge, `That is Bo Ng's badge (${rfidBadge}): not captured.`, 'Scan tags in bin P-01.');
    await scanBurst(page, [unit]);
    await page.click('#session-close');
    await page.waitForSelector('#confirm:not([hidden])');
    await page.click('#confirm-yes');
    await page.waitForSelector('#screen-picker:not([hidden])');

    // The ledger holds the unit's scans and no badge: nothing refused,
    // nothing for a supervisor, the count saw no stray tag.
    const after = await drained(page);
    assert.equal(after.rejected + after.blocked, 0);
    const items = await allItems(page);
    assert.ok(!items.some((i) => i.body && [rfidBadge, 'op-ann'].includes(i.body.epc ?? i.body.code)), JSON.stringify(items));
    assert.deepEqual((await sessionHops(site.base, token, putAway)).map((h) => h.facts.epc), [unit]);
    assert.deepEqual((await sessionHops(site.base, token, counting)).map((h) => h.facts.epc), [unit]);
    const count = await read(site, token, `/v1/counts/${countId}`);
    assert.deepEqual([count.seen, count.missing, count.unexpected], [1, [], []]);
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await site.stop();
  }
});

test('undo in every mode that changes something, offered only where the ledger honours it, read back from the ledger', async () => {
  const dataDir = tempDataDir();
  const token = await addDevice(dataDir, 'HH-UNDO-ALL');
  const [put, recvA, recvB, dockA, dockB, countA, countB] = epcs('CD', 7);
  await importReference(dataDir, {
    binRows: [
      { bin: 'U-01', zone: 'Z-U', location: 'L-U' },
      { bin: 'U-02', zone: 'Z-U', location: 'L-U' },
      { bin: 'W-01', zone: 'Z-W', location: 'L-U' },
    ],
    unitRows: [
      { epc: put, sku: 'SKU-U', state: 'in_stock', bin: 'U-01' },
      { epc: recvA, sku: 'SKU-R', state: 'new' },
      { epc: recvB, sku: 'SKU-R', state: 'new' },
      { epc: dockA, sku: 'SKU-D', state: 'in_stock', bin: 'U-01' },
      { epc: dockB, sku: 'SKU-D', state: 'in_stock', bin: 'U-01' },
      { epc: countA, sku: 'SKU-C', state: 'in_stock', bin: 'W-01' },
      { epc: countB, sku: 'SKU-C', state: 'in_stock', bin: 'W-01' },
    ],
    grns: [{ grn: 'GRN-U', qc: 'accepted', sku: 'SKU-R', expected: 2 }],
    manifests: [dockA, dockB].map((epc) => ({ manifest: 'M-U', state: 'packing', epc })),
  });
  const countId = await openCount(dataDir, { location: 'L-U', zone: 'Z-W' });
  const { site, browser, page, errors } = await handheld(dataDir, 'HH-UNDO-ALL', token);
  const undoRow = async (epc) => {
    const item = (await allItems(page)).filter((i) => i.command === 'scan' && i.body && i.body.epc === epc).pop();
    await page.click(`#results button[data-action="undo"][data-key="${item.key}"]`);
    await page.waitForSelector(`#results li[data-key="${item.key}"][data-kind="undone"]`);
    await drained(page);
    const undo = (await allItems(page)).find((i) => i.command === 'undo' && i.body.target_key === item.key);
    assert.equal(undo.state, 'done', `the undo of ${epc} applied`);
    return undo;
  };
  try {
    // Put-away: the unit goes back to its bin.
    await pickMode(page, 'op-undo', 'put_away');
    await sessionOpened(page);
    await scanBin(page, 'U-02');
    await scanBurst(page, [put]);
    await drained(page);
    assert.equal((await read(site, token, `/v1/units/${put}`)).bin, 'U-02');
    await undoRow(put);
    assert.equal((await read(site, token, `/v1/units/${put}`)).bin, 'U-01');
    await wedge(page, 'STOCKHOP:MODE');

    // Receive: the unit leaves its GRN line.
    await pickMode(page, 'op-undo', 'receive');
    await page.click('#mode-choices button[data-grn="GRN-U"]');
    await sessionOpened(page);
    await scanBurst(page, [recvA, recvB]);
    await drained(page);
    assert.equal((await read(site, token, '/v1/grns/GRN-U')).lines[0].received, 2);
    await undoRow(recvB);
    assert.equal((await read(site, token, '/v1/grns/GRN-U')).lines[0].received, 1, 'the GRN line counts one');
    await page.waitForFunction(() => {
      const cells = [...document.querySelectorAll('#grn-lines tr[data-sku="SKU-R"] td')].map((td) => td.textContent);
      return cells[2] === '1' && cells[3] === '0';
    }, null, { timeout: 30_000 });
    await shot(page, 'glass-undo-receive');
    await wedge(page, 'STOCKHOP:MODE');

    // Dispatch verify: the unit back in its bin, the manifest line unverified.
    await pickMode(page, 'op-undo', 'dispatch_verify');
    await wedge(page, 'M-U');
    await sessionOpened(page);
    await scanBurst(page, [dockA]);
    await drained(page);
    // A second verify of the same tag changes nothing: no Undo is offered on it.
    await scanBurst(page, [dockA]);
    const again = (await allItems(page)).filter((i) => i.command === 'scan' && i.body.epc === dockA).pop();
    await page.waitForSelector(`#results li[data-key="${again.key}"][data-kind="applied"]`, { timeout: 30_000 });
    assert.equal(await row(page, again.key).locator('button[data-action="undo"]').count(), 0, 'nothing to undo on a repeated verify');
    const first = (await allItems(page)).find((i) => i.command === 'scan' && i.body.epc === dockA);
    await page.click(`#results button[data-action="undo"][data-key="${first.key}"]`);
    await page.waitForSelector(`#results li[data-key="${first.key}"][data-kind="undone"]`);
    await drained(page);
    const manifest = await read(site, token, '/v1/manifests/M-U');
    assert.equal(manifest.units.find((u) => u.epc === dockA).verified, false, 'the manifest line unverified');
    const dockUnit = await read(site, token, `/v1/units/${dockA}`);
    assert.deepEqual([dockUnit.state, dockUnit.bin], ['in_stock', 'U-01'], 'the unit back in its bin');
    await shot(page, 'glass-undo-dispatch');
    await wedge(page, 'STOCKHOP:MODE');

    // Cycle count: the tag no longer counted.
    await pickMode(page, 'op-undo', 'cycle_count');
    await page.click(`#mode-choices button[data-count="${countId}"]`);
    await sessionOpened(page);
    await scanBin(page, 'W-01');
    await scanBurst(page, [countA, countB]);
    await drained(page);
    assert.equal((await read(site, token, `/v1/counts/${countId}`)).seen, 2);
    await undoRow(countB);
    const count = await read(site, token, `/v1/counts/${countId}`);
    assert.equal(count.seen, 1, 'the undone tag is not counted');
    assert.deepEqual(count.missing, [countB]);
    await page.waitForFunction((n) => document.getElementById('count-seen').textContent === n && document.getElementById('count-missing').textContent === '1', '1', { timeout: 30_000 });
    await shot(page, 'glass-undo-count');
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await site.stop();
  }
});

test('a count of one bin: the bin is given, another bin is refused, and the ledger counts that bin only', async () => {
  const dataDir = tempDataDir();
  const token = await addDevice(dataDir, 'HH-BINCOUNT');
  const [inBin, elsewhere] = epcs('CE', 2);
  await importReference(dataDir, {
    binRows: [{ bin: 'N-01', zone: 'Z-N', location: 'L-N' }, { bin: 'N-02', zone: 'Z-N', location: 'L-N' }],
    unitRows: [{ epc: inBin, sku: 'SKU-N', state: 'in_stock', bin: 'N-01' }, { epc: elsewhere, sku: 'SKU-N', state: 'in_stock', bin: 'N-02' }],
  });
  const countId = (await siteCommand(['count', 'open', '--location', 'L-N', '--zone', 'Z-N', '--bin', 'N-01', '--data', dataDir])).trim();
  const { site, browser, page, errors } = await handheld(dataDir, 'HH-BINCOUNT', token);
  try {
    await pickMode(page, 'op-bin', 'cycle_count');
    await page.click(`#mode-choices button[data-count="${countId}"]`);
    await sessionOpened(page);
    assert.equal(await page.getAttribute('#mode-needs li[data-need="bin"]', 'data-met'), 'true', 'the count names its bin');
    await wedge(page, 'N-02');
    await page.waitForFunction(() => /of bin N-01 only/.test(document.getElementById('scan-status').textContent));
    await scanBurst(page, [inBin]);
    await drained(page);
    const count = await eventually(async () => {
      const view = await read(site, token, `/v1/counts/${countId}`);
      const shown = await page.evaluate(() => [document.getElementById('count-seen').textContent, document.getElementById('count-expected').textContent]);
      return { ready: shown[0] === String(view.seen) && shown[1] === String(view.expected), value: view };
    }, { timeoutMs: 30_000, what: 'the screen to show the ledger\'s count' });
    assert.deepEqual([count.bin, count.expected, count.seen, count.missing], ['N-01', 1, 1, []]);
    await shot(page, 'glass-count-one-bin');
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await site.stop();
  }
});
