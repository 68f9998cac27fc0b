// The handheld's first screen does not wait for its service worker: on a
// first start the setup screen shows while the worker is still on its way,
// and a badge scanned while the page starts is held in the page and read
// once it has started, never lost or refused. The worker is held back by
// holding what it needs (its script; the site's reference pull) until the
// test lets it go, so no case depends on timing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launchBrowser, startSite, tempDataDir } from './lib/site.mjs';
import { addDevice, HANDHELD_VIEWPORT, openHandheld, wedge } from './lib/handheld.mjs';

/** Holds every request matching `pattern` in `context` until `release()`. */
async function holdRequests(context, pattern) {
  let release;
  const released = new Promise((resolve) => { release = resolve; });
  await context.route(pattern, async (route) => {
    await released;
    await route.continue().catch(() => {});
  });
  return release;
}

test('on a first start the setup screen shows before the service worker is in charge', async () => {
  const site = await startSite();
  const browser = await launchBrowser();
  try {
    const context = await browser.newContext({ viewport: HANDHELD_VIEWPORT });
    const release = await holdRequests(context, '**/sw.js');
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (err) => errors.push(String(err)));
    await page.goto(`${site.base}/`);
    await page.waitForSelector('body[data-shown="true"] #screen-setup:not([hidden])');
    assert.equal(await page.evaluate(() => navigator.serviceWorker.controller), null, 'no worker controls the page yet');
    assert.equal(await page.getAttribute('body', 'data-ready'), null, 'the page has not started');
    assert.ok(await page.isVisible('#setup-form'), 'the setup form is there to fill in');
    release();
    await page.waitForSelector('body[data-ready="true"]');
    await page.waitForFunction(() => document.getElementById('setup-status').textContent.startsWith('Not set up yet'));
    assert.deepEqual(errors, []);
    await context.close();
  } finally {
    await browser.close();
    await site.stop();
  }
});

test('a badge scanned while the page starts is held, then read once it has started', async () => {
  const dataDir = tempDataDir();
  const token = await addDevice(dataDir, 'HH-FIRST');
  const site = await startSite({ dataDir });
  const browser = await launchBrowser();
  try {
    const { context, page, errors } = await openHandheld(browser, {
      pageUrl: site.base, siteUrl: site.base, token, deviceId: 'HH-FIRST',
    });
    // The next start reads the reference cache from the site first: held.
    const release = await holdRequests(context, '**/v1/reference**');
    await page.reload();
    await page.waitForSelector('body[data-shown="true"] #screen-picker:not([hidden])');
    assert.equal(await page.textContent('#picker-prompt'), 'Scan your operator badge');
    assert.equal(await page.getAttribute('#scan-input', 'placeholder'), 'starting: scans are kept');
    await wedge(page, 'OP-EARLY');
    assert.equal(await page.getAttribute('body', 'data-ready'), null, 'the page has not started');
    assert.equal(await page.textContent('#operator'), '–', 'the badge waits for the page to start');
    assert.equal(await page.textContent('#scan-refused'), '0', 'nothing was turned away');
    release();
    await page.waitForSelector('body[data-ready="true"]');
    await page.waitForFunction(() => document.getElementById('operator').textContent === 'OP-EARLY');
    assert.equal(await page.getAttribute('#scan-input', 'placeholder'), 'waiting for the scanner');
    assert.equal(await page.evaluate(() => sessionStorage.getItem('stockhop.held_scans')), null, 'no scan left held');
    assert.deepEqual(errors, []);
    await context.close();
  } finally {
    await browser.close();
    await site.stop();
  }
});

test('a first install that fails says so on the first screen, not a blank wait', async () => {
  const site = await startSite();
  const browser = await launchBrowser();
  try {
    const context = await browser.newContext({ viewport: HANDHELD_VIEWPORT });
    // The worker's list of the shell is not there: its install fails.
    await context.route('**/shell.json', (route) => route.fulfill({ status: 404, body: 'gone' }));
    const page = await context.newPage();
    await page.goto(`${site.base}/`);
    await page.waitForSelector('body[data-shown="true"] #screen-setup:not([hidden])');
    await page.waitForSelector('body[data-release="stopped"] #worker-status:not([hidden])');
    assert.match(await page.textContent('#worker-status'), /Capture stopped: the app did not start \(INSTALL_FAILED: .*shell\.json: 404\)/);
    await context.close();
  } finally {
    await browser.close();
    await site.stop();
  }
});
