// The README's serve command, end to end: the site server answers /healthz,
// serves the PWA shell and the optimised wasm package, and the capture
// service worker activates in Chromium and runs the wasm module.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { launchBrowser, startSite } from './lib/site.mjs';

test('serve answers health, serves the shell and the wasm package', async () => {
  const site = await startSite();
  try {
    const health = await (await fetch(`${site.base}/healthz`)).json();
    assert.equal(health.status, 'ok');
    assert.ok(existsSync(join(site.dataDir, 'stockhop.sqlite')), 'SQLite database created on first start');

    const page = await fetch(`${site.base}/`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<title>Stockhop<\/title>/);

    const wasm = await fetch(`${site.base}/pkg/stockhop_bg.wasm`);
    assert.equal(wasm.status, 200);
    assert.equal(wasm.headers.get('content-type'), 'application/wasm');
    const bytes = new Uint8Array(await wasm.arrayBuffer());
    assert.deepEqual([...bytes.slice(0, 4)], [0x00, 0x61, 0x73, 0x6d], 'a wasm module');

    const manifest = await (await fetch(`${site.base}/manifest.webmanifest`)).json();
    assert.equal(manifest.start_url, '/');
  } finally {
    const { code } = await site.stop();
    assert.equal(code, 0, 'clean exit on SIGTERM');
  }
});

test('the capture service worker activates and runs the wasm module', async () => {
  const site = await startSite();
  const browser = await launchBrowser();
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (err) => errors.push(String(err)));
    await page.goto(`${site.base}/`);
    // `ready` resolves once a worker is active, which may still be
    // activating; wait for the activate handler to finish.
    const state = await page.evaluate(async () => {
      const worker = (await navigator.serviceWorker.ready).active;
      if (worker.state !== 'activated') {
        await new Promise((resolve) =>
          worker.addEventListener('statechange', () => worker.state === 'activated' && resolve()),
        );
      }
      return worker.state;
    });
    assert.equal(state, 'activated');
    // A message the wasm module answers from IndexedDB.
    const reply = await page.evaluate(async () => {
      const registration = await navigator.serviceWorker.ready;
      const channel = new MessageChannel();
      const answered = new Promise((resolve) => (channel.port1.onmessage = (e) => resolve(e.data)));
      registration.active.postMessage({ type: 'counts' }, [channel.port2]);
      return answered;
    });
    assert.equal(reply.ok, true, JSON.stringify(reply));
    assert.equal(reply.queued, 0);
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await site.stop();
  }
});
