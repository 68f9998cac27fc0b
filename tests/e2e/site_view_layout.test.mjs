// The site's view holds still while it loads: signed in, at a phone's and a
// desktop's viewport, the page's cumulative layout shift from navigation
// through its first two status refreshes stays within 0.05, even when the
// status answers only after the page has drawn everything it can draw
// without it (the test holds the first status until then, so the case does
// not depend on timing). The view and the handheld shell carry a favicon,
// and the signed-out page logs no console error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { launchBrowser, siteCommand, startSite, tempDataDir } from './lib/site.mjs';
import { addDevice } from './lib/handheld.mjs';

/** The most layout shift the view may add up while it loads (a "good" CLS). */
const MAX_CLS = 0.05;

const VIEWPORTS = [
  ['a phone', { width: 412, height: 915 }],
  ['a desktop', { width: 1350, height: 940 }],
];

/** Sums every layout shift not caused by input, from the first paint on. */
function observeShifts() {
  window.layoutShift = { total: 0, shifts: [] };
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if (entry.hadRecentInput) continue;
      window.layoutShift.total += entry.value;
      window.layoutShift.shifts.push({
        value: entry.value,
        sources: entry.sources.map((s) => (s.node instanceof Element ? `${s.node.tagName.toLowerCase()}#${s.node.id}.${s.node.className}` : String(s.node?.nodeName))),
      });
    }
  }).observe({ type: 'layout-shift', buffered: true });
}

async function signIn(context, site, adminToken) {
  const page = await context.newPage();
  await page.goto(`${site.base}/site/`);
  await page.waitForSelector('body[data-state="signed-out"]');
  await page.fill('#admin-token', adminToken);
  await page.click('#sign-in-form button[type="submit"]');
  await page.waitForSelector('body[data-state="ready"]');
  await page.close();
}

test('signed in, the site view shifts its layout by at most 0.05 on a phone and a desktop while its first status arrives late', async () => {
  const dataDir = tempDataDir();
  const adminToken = (await siteCommand(['admin', 'add', 'supervisor', '--data', dataDir])).trim();
  await addDevice(dataDir, 'HH-1');
  await addDevice(dataDir, 'GATE-1', { profile: 'fxr90' });
  const site = await startSite({ dataDir });
  const browser = await launchBrowser();
  try {
    for (const [name, viewport] of VIEWPORTS) {
      const context = await browser.newContext({ viewport });
      await signIn(context, site, adminToken);
      const page = await context.newPage();
      await page.addInitScript(observeShifts);
      // The first status is held until the page has drawn what it draws
      // from the session alone (signed in: the sign-out button shows).
      let first = true;
      await page.route('**/v1/site/status', async (route) => {
        if (first) {
          first = false;
          await page.waitForSelector('#sign-out', { state: 'visible' });
          await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
        }
        await route.continue();
      });
      await page.goto(`${site.base}/site/`);
      await page.waitForSelector('body[data-refreshes="2"]');
      const shift = await page.evaluate(() => window.layoutShift);
      assert.ok(
        shift.total <= MAX_CLS,
        `on ${name} the view shifted by ${shift.total.toFixed(4)} (over ${MAX_CLS}): ${JSON.stringify(shift.shifts)}`,
      );
      await context.close();
    }
  } finally {
    await browser.close();
    await site.stop();
  }
});

test('the signed-out site view logs no console error, and the view and the shell have a favicon', async () => {
  const site = await startSite();
  const browser = await launchBrowser();
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    page.on('pageerror', (err) => errors.push(String(err)));
    await page.goto(`${site.base}/site/`);
    await page.waitForSelector('body[data-state="signed-out"]');
    const viewIcon = await page.getAttribute('link[rel="icon"]', 'href');
    assert.ok(viewIcon, 'the site view names a favicon');
    const shellIcon = readFileSync(new URL('../../www/icons/icon.svg', import.meta.url), 'utf8').trim();
    assert.equal(decodeURIComponent(viewIcon.replace(/^data:image\/svg\+xml,/, '')).replaceAll("'", '"'), shellIcon,
      'the site view\'s favicon is the handhelds\' icon, www/icons/icon.svg');
    assert.deepEqual(errors, [], 'the signed-out page logs no console error');

    await page.goto(`${site.base}/`);
    const href = await page.getAttribute('link[rel="icon"][type="image/svg+xml"]', 'href');
    const icon = await page.request.get(new URL(href, site.base).href);
    assert.equal(icon.status(), 200);
    assert.equal(icon.headers()['content-type'], 'image/svg+xml');
  } finally {
    await browser.close();
    await site.stop();
  }
});
