// An accessibility audit of every handheld screen and of the site's view,
// with axe-core (the rules of WCAG 2 A and AA and axe's best practices) in
// Debian's headless Chromium against a real `stockhop-site serve`: the
// setup screen, the badge prompt, each mode's screen with its session
// open, Find a unit, the queue screen, the site's sign-in and the site's
// view signed in. A screen with any violation fails, naming the rule and
// the elements.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { artifactsDir, launchBrowser, siteCommand, startSite, tempDataDir } from './lib/site.mjs';
import {
  HANDHELD_VIEWPORT,
  addDevice,
  importReference,
  openCount,
  openHandheld,
  openQueue,
  pickMode,
} from './lib/handheld.mjs';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** The rule sets every screen is held to. */
const RULES = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'];

/**
 * Runs axe on the page as it stands and returns its violations in words.
 * The source is evaluated through the browser's debugging protocol, which
 * the pages' Content-Security-Policy (rightly) does not let a script tag do.
 */
async function violations(page) {
  await page.evaluate(AXE_SOURCE);
  return page.evaluate(async (rules) => {
    const result = await window.axe.run(document, { runOnly: rules });
    return result.violations.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  }, RULES);
}

async function assertClean(page, screen) {
  await page.screenshot({ path: join(artifactsDir(), `audit-${screen}.png`) });
  assert.deepEqual(await violations(page), [], `${screen}: axe violations`);
}

test('every handheld screen and the site view pass an axe audit', async () => {
  const dataDir = tempDataDir();
  const token = await addDevice(dataDir, 'HH-AUDIT');
  await importReference(dataDir, {
    binRows: [{ bin: 'B-01', zone: 'Z-1', location: 'L-1' }],
    unitRows: [{ epc: 'E2800000000000000000AA01', sku: 'SKU-1', state: 'in_stock', bin: 'B-01' }],
    grns: [{ grn: 'G-AUDIT', qc: 'accepted', sku: 'SKU-1', expected: 2 }],
    manifests: [{ manifest: 'M-AUDIT', state: 'packing', epc: 'E2800000000000000000AA01' }],
  });
  await openCount(dataDir, { location: 'L-1', zone: 'Z-1' });
  const admin = (await siteCommand(['admin', 'add', 'auditor', '--data', dataDir])).trim();
  const site = await startSite({ dataDir });
  const browser = await launchBrowser();
  try {
    // Setup, before the handheld knows its site.
    const fresh = await browser.newContext({ viewport: HANDHELD_VIEWPORT });
    const setup = await fresh.newPage();
    await setup.goto(site.base);
    await setup.waitForSelector('#screen-setup:not([hidden])');
    await assertClean(setup, 'setup');
    await fresh.close();

    const { page } = await openHandheld(browser, {
      pageUrl: site.base,
      siteUrl: site.base,
      token,
      deviceId: 'HH-AUDIT',
    });
    await page.waitForSelector('#screen-picker:not([hidden])');
    await assertClean(page, 'badge-prompt');

    for (const mode of ['put_away', 'receive', 'dispatch_verify', 'cycle_count', 'find_unit']) {
      await pickMode(page, 'op-audit', mode);
      await assertClean(page, mode.replaceAll('_', '-'));
      await page.click('#mode-switch');
      await page.waitForSelector('#screen-picker:not([hidden])');
    }

    await openQueue(page);
    await assertClean(page, 'queue');

    const desk = await browser.newContext({ viewport: { width: 1350, height: 940 } });
    const view = await desk.newPage();
    await view.goto(`${site.base}/site/`);
    await view.waitForSelector('#sign-in:not([hidden])');
    await assertClean(view, 'site-sign-in');
    await view.fill('#admin-token', admin);
    await view.click('#sign-in-form button[type="submit"]');
    await view.waitForSelector('body[data-state="ready"]');
    await assertClean(view, 'site-view');
    await desk.close();
  } finally {
    await browser.close();
    await site.stop();
  }
});
