// The site's view speaks the reader's language: opened with
// Accept-Language de it is in German from the first paint (the server sets
// the root's lang), and the picker's choice of Arabic turns it right to
// left and is remembered across a reload; the chart the server draws
// follows the page's language. In both, the figures shown are
// the ledger's (read over the API) in the language's number format, and
// device ids stay isolated left to right. Screenshots of both go to
// artifacts/ (site_view_de.png, site_view_ar.png). The decisions list
// speaks German too: each decision's sentence (what waits, why, what each
// action does) is the server's message formatted in German, naming the
// unit, device and figures the ledger's decision holds over the API
// (artifacts/site_view_decisions_de.png).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { artifactsDir, launchBrowser, siteCommand, startSite, tempDataDir } from './lib/site.mjs';
import { addDevice, importReference } from './lib/handheld.mjs';

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

/** Posts `items` from `deviceId` as its handheld syncs them; their outcomes. */
async function sync(site, deviceId, token, items) {
  const res = await fetch(`${site.base}/v1/sync`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ device_id: deviceId, sent_at: new Date().toISOString(), items }),
  });
  assert.equal(res.status, 200);
  return (await res.json()).results.map((r) => r.outcome);
}

test('the decisions list speaks German: each decision\'s sentences in German, naming what the ledger\'s decision holds', async () => {
  const dataDir = tempDataDir();
  await importReference(dataDir, { grns: [{ grn: 'GRN-DE', qc: 'accepted', sku: 'SKU-R', expected: 3 }] });
  const adminToken = (await siteCommand(['admin', 'add', 'supervisor', '--data', dataDir])).trim();
  const token = await addDevice(dataDir, 'HH-DE');
  const site = await startSite({ dataDir });
  const browser = await launchBrowser();
  try {
    // Two of the GRN's three units received, the second's undo sent past
    // the 120 s window: a late undo and (on close) a GRN short one unit.
    const tags = ['E28000000000000000DE0001', 'E28000000000000000DE0002'];
    const t0 = Date.now() - 10 * 60_000;
    const session = crypto.randomUUID();
    let seq = 0;
    const item = (command, body, atMs) => {
      const at = new Date(t0 + atMs).toISOString();
      seq += 1;
      return { key: crypto.randomUUID(), session_id: session, client_seq: seq, command, occurred_at: at, queued_at: at, body };
    };
    const open = item('open_session', { operator_id: 'op-de', mode: 'receive', context: { grn: 'GRN-DE' } }, 0);
    const scans = tags.map((epc, i) => item('scan', { mode: 'receive', grn: 'GRN-DE', epc, sku: 'SKU-R' }, 1000 * (i + 1)));
    const late = item('undo', { target_key: scans[1].key }, 2000 + 121_000);
    const close = item('close_session', {}, 2000 + 122_000);
    assert.deepEqual(await sync(site, 'HH-DE', token, [open, ...scans, late, close]), ['applied', 'applied', 'applied', 'rejected', 'applied']);

    // The ledger's decisions, over the API: the English words stay, with
    // the message and its values beside them.
    const res = await fetch(`${site.base}/v1/site/decisions`, { headers: { authorization: `Bearer ${adminToken}` } });
    assert.equal(res.status, 200);
    const { decisions } = await res.json();
    const undo = decisions.find((d) => d.kind === 'late_undo');
    const grn = decisions.find((d) => d.kind === 'grn_resolution');
    assert.ok(undo && grn, JSON.stringify(decisions));
    assert.match(undo.summary, /could not be made/);
    assert.equal(undo.summary_id, 'decision-late-undo');
    assert.deepEqual([undo.epc, undo.device_id, undo.client_seq, undo.mode], [tags[1], 'HH-DE', late.client_seq, 'receive']);
    const short = grn.lines.reduce((sum, l) => sum + l.short, 0);
    const excess = grn.lines.reduce((sum, l) => sum + l.excess, 0);
    assert.deepEqual([grn.grn, grn.lines.length, short, excess], ['GRN-DE', 1, 1, 0]);
    assert.deepEqual([grn.args.short, grn.args.excess, grn.args.lines], [short, excess, grn.lines.length]);

    const context = await browser.newContext({
      viewport: { width: 1280, height: 900 },
      extraHTTPHeaders: { 'Accept-Language': 'de-DE,de;q=0.9' },
    });
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (err) => errors.push(err.message));
    page.on('console', (message) => {
      if (message.type() === 'warning' || message.type() === 'error') errors.push(message.text());
    });
    await page.goto(`${site.base}/site/`);
    await page.waitForSelector('body[data-state="signed-out"]');
    await page.fill('#admin-token', adminToken);
    await page.click('#sign-in-form button[type="submit"]');
    await page.waitForSelector('body[data-state="ready"]');
    const undoRow = page.locator(`#corrections li[data-decision="${undo.id}"]`);
    const grnRow = page.locator(`#grns li[data-decision="${grn.id}"]`);
    await undoRow.waitFor();
    await grnRow.waitFor();

    // What waits: the same unit, device and scan number as the ledger's decision, in German.
    assert.equal(
      await undoRow.locator('.summary').textContent(),
      `Stornierung Nr. ${undo.client_seq} für ${undo.epc} (Wareneingang) auf ${undo.device_id} war nicht möglich.`,
    );
    const undoText = await undoRow.textContent();
    assert.ok(undoText.includes(`der Wareneingang wird storniert: ${undo.epc} verlässt seine WE-Position.`), undoText);
    assert.ok(undoText.includes('der Scan bleibt, wie er gebucht wurde.'), undoText);
    // The GRN: the same short and over units, on the same number of lines.
    assert.equal(await grnRow.locator('.summary').textContent(), `WE-Beleg ${grn.grn}: ${short} zu wenig, ${excess} zu viel, in einer Position`);
    const grnText = await grnRow.textContent();
    assert.ok(grnText.includes('Grund: der WE-Beleg wurde mit Positionen abgeschlossen'), grnText);
    assert.ok(grnText.includes('der WE-Beleg gilt wie vereinnahmt als vollständig'), grnText);
    // None of the server's English sentences shows.
    for (const d of [undo, grn]) {
      for (const english of [d.summary, d.dismiss_words, d.correct_words, d.reason_words].filter(Boolean)) {
        assert.ok(!(await page.locator('.decisions').textContent()).includes(english), `English shows: ${english}`);
      }
    }
    await page.locator('.decisions').screenshot({ path: join(artifactsDir(), 'site_view_decisions_de.png') });
    assert.deepEqual(errors, [], 'no script error and no missing message');
    await context.close();
  } finally {
    await browser.close();
    await site.stop();
  }
});
