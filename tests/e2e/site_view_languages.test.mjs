// The site's view speaks the reader's language: opened with
// Accept-Language de it is in German from the first paint (the server sets
// the root's lang), and the picker's choice of Arabic turns it right to
// left and is remembered across a reload; the chart the server draws
// follows the page's language. In both, the figures shown are
// the ledger's (read over the API) in the language's number format, and
// device ids stay isolated left to right. Screenshots of both go to
// artifacts/ (site_view_de.png, site_view_ar.png).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { artifactsDir, launchBrowser, siteCommand, startSite, tempDataDir } from './lib/site.mjs';
import { addDevice } from './lib/handheld.mjs';

/** A queue deep enough that its figure shows the language's digit grouping. */
const DEPTH = 1234;

async function heartbeat(site, deviceId, token, depth) {
  const res = await fetch(`${site.base}/v1/devices/${deviceId}/heartbeat`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      sent_at: new Date().toISOString(),
      queue_depth: depth,
      oldest_queued_at: new Date(Date.now() - 5 * 60_000).toISOString(),
      app_version: 'e2e',
    }),
  });
  assert.equal(res.status, 200, await res.text());
}

/** The site's status as the ledger answers it to an admin. */
async function ledgerStatus(site, adminToken) {
  const res = await fetch(`${site.base}/v1/site/status`, { headers: { authorization: `Bearer ${adminToken}` } });
  assert.equal(res.status, 200);
  return res.json();
}

const digits = (text) => Number(text.replace(/[^0-9]/g, ''));

test('the view follows Accept-Language, and the picker switches it to Arabic, right to left, remembered', async () => {
  const dataDir = tempDataDir();
  const adminToken = (await siteCommand(['admin', 'add', 'supervisor', '--data', dataDir])).trim();
  const hhToken = await addDevice(dataDir, 'HH-0042');
  await addDevice(dataDir, 'GATE-1', { profile: 'fxr90' });
  const site = await startSite({ dataDir });
  const browser = await launchBrowser();
  try {
    await heartbeat(site, 'HH-0042', hhToken, DEPTH);
    const context = await browser.newContext({
      viewport: { width: 1350, height: 940 },
      extraHTTPHeaders: { 'Accept-Language': 'de-DE,de;q=0.9,en;q=0.5' },
    });
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (err) => errors.push(err.message));
    page.on('console', (message) => {
      if (message.type() === 'warning' || message.type() === 'error') errors.push(message.text());
    });
    await page.goto(`${site.base}/site/`);
    await page.waitForSelector('body[data-state="signed-out"]');
    assert.equal(await page.getAttribute('html', 'lang'), 'de');
    assert.equal(await page.getAttribute('html', 'dir'), 'ltr');
    assert.equal(await page.textContent('#sign-in h2'), 'Anmelden');
    await page.fill('#admin-token', adminToken);
    await page.click('#sign-in-form button[type="submit"]');
    await page.waitForSelector('body[data-state="ready"]');
    await page.waitForSelector('#devices tr[data-device="HH-0042"]');

    // German words, and the ledger's figure in German digits.
    const status = await ledgerStatus(site, adminToken);
    assert.equal(await page.textContent('h1'), 'Stockhop Standort');
    assert.equal(await page.textContent('#devices thead th:first-child'), 'Gerät');
    assert.equal(await page.textContent('.decisions h2'), 'Entscheidungen');
    assert.equal(await page.textContent('#counts li.none'), 'Keine Inventurdifferenz wartet.');
    const depth = await page.textContent('#site-depth');
    assert.equal(digits(depth), status.queue_depth, `the view shows ${depth}, the ledger ${status.queue_depth}`);
    assert.equal(depth, new Intl.NumberFormat('de').format(status.queue_depth));
    const row = page.locator('#devices tr[data-device="HH-0042"]');
    assert.equal(await row.locator('td[data-field="depth"]').textContent(), new Intl.NumberFormat('de').format(DEPTH));
    assert.match(await row.locator('td').nth(2).textContent(), /online/);
    assert.equal(await row.locator('td').first().locator('bdi').textContent(), 'HH-0042');
    assert.equal(await page.inputValue('#language'), 'de');
    // The chart the server draws speaks German too.
    const chart = await page.getAttribute('#chart', 'src');
    assert.match(chart, /[?&]lang=de(&|$)/);
    const svg = await (await fetch(`${site.base}${chart}`, { headers: { authorization: `Bearer ${adminToken}` } })).text();
    assert.match(svg, /Standortzeit/);
    assert.match(svg, /Baut sich normal ab/);
    await page.screenshot({ path: join(artifactsDir(), 'site_view_de.png'), fullPage: true });

    // The picker: Arabic, right to left, and remembered across a reload.
    await page.selectOption('#language', 'ar');
    await page.waitForSelector('html[lang="ar"][dir="rtl"]');
    await page.waitForFunction(() => document.querySelector('h1').textContent === 'Stockhop المستودع');
    await page.reload();
    await page.waitForSelector('body[data-state="ready"]');
    assert.equal(await page.getAttribute('html', 'lang'), 'ar', 'the choice outlives the Accept-Language header');
    assert.equal(await page.getAttribute('html', 'dir'), 'rtl');
    assert.equal(await page.inputValue('#language'), 'ar');
    assert.equal(await page.textContent('#devices thead th:first-child'), 'الجهاز');
    assert.equal(await page.textContent('.decisions h2'), 'القرارات');
    const arDepth = await page.textContent('#site-depth');
    assert.equal(digits(arDepth), (await ledgerStatus(site, adminToken)).queue_depth, `the view shows ${arDepth}`);
    // Mirrored: the first column starts at the right, the commands link at the left.
    const table = await page.locator('#devices').boundingBox();
    const first = await page.locator('#devices thead th:first-child').boundingBox();
    assert.ok(first.x + first.width > table.x + table.width - 20, 'the first column is at the right');
    const link = await page.locator('#commands-link').boundingBox();
    assert.ok(link.x < 1350 / 2, 'the commands link moved to the left');
    // A device id reads left to right, isolated inside the Arabic.
    const bdi = row.locator('td').first().locator('bdi');
    assert.equal(await bdi.textContent(), 'HH-0042');
    assert.equal(await bdi.evaluate((node) => getComputedStyle(node).unicodeBidi), 'isolate');
    assert.match(await row.locator('td').nth(2).textContent(), /متصل/);
    await page.screenshot({ path: join(artifactsDir(), 'site_view_ar.png'), fullPage: true });

    // Back to the browser's language on a new browser profile: German again.
    const fresh = await browser.newContext({ extraHTTPHeaders: { 'Accept-Language': 'pl;q=0.8, fr' } });
    const other = await fresh.newPage();
    await other.goto(`${site.base}/site/`);
    await other.waitForSelector('body[data-state="signed-out"]');
    assert.equal(await other.getAttribute('html', 'lang'), 'pl');
    assert.equal(await other.textContent('#sign-in h2'), 'Zaloguj się');
    await fresh.close();
    assert.deepEqual(errors, [], 'no script error and no missing message');
    await context.close();
  } finally {
    await browser.close();
    await site.stop();
  }
});
