// The page follows the site's constants, not copies of its own: the
// command barcodes and the undo window come from GET /v1/handheld/constants.
// Here the site's answer is changed on its way to the page (a close
// barcode of another payload, an undo window of 1.5 s), and the page
// signs out on that payload and stops offering Undo once that window has
// passed; restarted with the site down, it still knows them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import {
  HANDHELD_VIEWPORT,
  addDevice,
  epcs,
  importReference,
  openSession,
  scanBin,
  wedge,
} from './lib/handheld.mjs';
import { artifactsDir, launchBrowser, startSite, tempDataDir } from './lib/site.mjs';

/** The undo window the changed answer gives: short, so the test sees it pass. */
const UNDO_WINDOW_MS = 1500;
const CLOSE = 'TEST:SIGN-OFF';

test('the page takes the command barcodes and the undo window from the site, and keeps them for a start offline', async () => {
  const dataDir = tempDataDir();
  const token = await addDevice(dataDir, 'HH-K');
  const [unit] = epcs('C0', 1);
  await importReference(dataDir, { bins: ['K-01'], units: [unit] });
  const site = await startSite({ dataDir });
  const browser = await launchBrowser();
  try {
    const served = await (await fetch(`${site.base}/v1/handheld/constants`)).json();
    assert.equal(served.undo_window_ms, 120_000);
    assert.deepEqual(served.commands.map((c) => c.action), ['close', 'undo', 'mode', 'confirm']);

    const context = await browser.newContext({ viewport: HANDHELD_VIEWPORT });
    let answered = 0;
    await context.route('**/v1/handheld/constants', async (route) => {
      const response = await route.fetch().catch(() => null);
      if (!response) {
        // The site is down: the page gets no answer, as it would.
        await route.abort('connectionrefused');
        return;
      }
      const body = await response.json();
      body.undo_window_ms = UNDO_WINDOW_MS;
      body.commands = body.commands.map((c) => (c.action === 'close' ? { ...c, payload: CLOSE } : c));
      answered += 1;
      await route.fulfill({ response, json: body });
    });
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (err) => errors.push(String(err)));
    const fragment = new URLSearchParams({ site: site.base, token, device: 'HH-K' });
    await page.goto(`${site.base}/#${fragment}`);
    await page.waitForSelector('body[data-ready="true"]');
    await page.waitForSelector('#screen-picker:not([hidden])');
    assert.ok(answered >= 1, 'the page asked the site');

    await openSession(page, 'op-k', 'put_away');
    await scanBin(page, 'K-01');
    await wedge(page, unit);
    await page.waitForSelector(`#results li[data-key] button[data-action="undo"]`);
    // Offered within the site's window, and gone once it has passed.
    await page.waitForSelector('#results button[data-action="undo"]', { state: 'detached', timeout: 15_000 });
    await page.screenshot({ path: join(artifactsDir(), 'constants-undo-window-passed.png') });

    // The site's close barcode signs out; the page's old payload is no command.
    await wedge(page, CLOSE);
    await page.waitForSelector('#screen-picker:not([hidden])');
    await page.waitForFunction(() => document.getElementById('operator').textContent === '–');

    // Started again with the site down: the page is the worker's cache's,
    // and the constants the ones it kept.
    assert.equal((await site.stop()).code, 0);
    await page.reload();
    await page.waitForSelector('body[data-ready="true"]');
    await openSession(page, 'op-k2', 'put_away');
    await wedge(page, CLOSE);
    await page.waitForSelector('#screen-picker:not([hidden])');
    await page.waitForFunction(() => document.getElementById('operator').textContent === '–');
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await site.stop();
  }
});
