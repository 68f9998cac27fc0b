// HTTPS on the site LAN, end to end: the site makes its own CA on first
// start, Chromium trusts that CA the way a device does once (an NSS
// database in a throwaway HOME, the way Chromium on Linux reads its trust
// store), the PWA is opened by a real name (`stockhop.test`, mapped to
// loopback) over TLS, its service worker takes over, and an outage of
// captures drains over TLS with each key applied once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { artifactsDir, freePort, startSite, tempDataDir } from './lib/site.mjs';
import { homeTrusting, launchTrusting } from './lib/tls.mjs';
import {
  HANDHELD_VIEWPORT,
  addDevice,
  allItems,
  drained,
  epcs,
  importReference,
  openSession,
  scanBin,
  scanBurst,
  sessionHops,
} from './lib/handheld.mjs';

const SITE_NAME = 'stockhop.test';

test('over HTTPS by name: the service worker runs and an outage drains over TLS, each key once', async () => {
  const dataDir = tempDataDir();
  const httpsPort = await freePort();
  const httpPort = await freePort();
  const extraArgs = ['--https', `127.0.0.1:${httpsPort}`, '--tls-name', SITE_NAME];
  const token = await addDevice(dataDir, 'HH-TLS');
  const typed = epcs('7C', 40);
  await importReference(dataDir, { bins: ['B-TLS'], units: typed });
  let site = await startSite({ dataDir, port: httpPort, extraArgs });
  const caFile = join(dataDir, 'tls', 'ca.crt');
  assert.match(readFileSync(caFile, 'utf8'), /BEGIN CERTIFICATE/);
  const served = await fetch(`${site.base}/ca.crt`);
  assert.equal(served.status, 200);
  assert.equal(await served.text(), readFileSync(caFile, 'utf8'), '/ca.crt is the site CA');

  const browser = await launchTrusting(homeTrusting(caFile), SITE_NAME);
  try {
    const origin = `https://${SITE_NAME}:${httpsPort}`;
    const context = await browser.newContext({ viewport: HANDHELD_VIEWPORT });
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (err) => errors.push(String(err)));
    const fragment = new URLSearchParams({ site: origin, token, device: 'HH-TLS' });
    await page.goto(`${origin}/#${fragment}`);
    await page.waitForSelector('body[data-ready="true"]');
    await page.waitForFunction(() => document.getElementById('setup-status').textContent.startsWith('Set up as'));
    const secure = await page.evaluate(async () => ({
      isSecureContext: window.isSecureContext,
      hasWorker: 'serviceWorker' in navigator,
      active: Boolean((await navigator.serviceWorker.ready).active),
      protocol: location.protocol,
    }));
    assert.deepEqual(secure, { isSecureContext: true, hasWorker: true, active: true, protocol: 'https:' });

    // The outage: the site goes away, the operator keeps scanning.
    assert.equal((await site.stop()).code, 0);
    const sessionId = await openSession(page, 'op-tls', 'put_away');
    await scanBin(page, 'B-TLS');
    await scanBurst(page, typed);
    await page.screenshot({ path: join(artifactsDir(), 'https-capture-offline.png') });

    site = await startSite({ dataDir, port: httpPort, extraArgs });
    await drained(page);
    const hops = await sessionHops(site.base, token, sessionId);
    const scans = (await allItems(page))
      .filter((item) => item.session_id === sessionId && item.command === 'scan')
      .sort((a, b) => a.client_seq - b.client_seq);
    assert.equal(scans.length, typed.length);
    const keys = hops.map((hop) => hop.key);
    assert.equal(new Set(keys).size, keys.length, 'no key applied twice');
    assert.deepEqual(keys, scans.map((item) => item.key), 'every capture applied once, in order');
    assert.deepEqual(hops.map((hop) => hop.facts.epc), typed);
    assert.deepEqual(errors, []);
    await context.close();
  } finally {
    await browser.close();
    await site.stop();
  }
});
