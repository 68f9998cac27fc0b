// The product end to end: a handheld captures offline, the site comes back,
// and every scan lands once and in order. A real `stockhop-site serve`
// (SQLite in a temp dir), the PWA in Debian's headless Chromium at a
// handheld viewport, scans typed into the scan field as a keyboard wedge
// types them, and the ledger read back over its own HTTP API.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FluentBundle, FluentResource } from '@fluent/bundle';
import { artifactsDir, launchBrowser, siteCommand, startSite, tempDataDir } from './lib/site.mjs';
import { instrumentSignals, kindsHeard, resetSignals, takeSignals } from './lib/signals.mjs';
import { startProxy } from './lib/proxy.mjs';
import {
  addDevice,
  allItems,
  ask,
  closeSession,
  counts,
  drained,
  epcs,
  eventually,
  importReference,
  openHandheld,
  openQueue,
  openSession,
  scanBin,
  scanBurst,
  sessionHops,
  siteRead,
  wedge,
} from './lib/handheld.mjs';

/**
 * The ledger holds each of the session's scans exactly once, in the order
 * the device captured them, with `client_seq` contiguous; with `typed`, the
 * EPCs in the ledger are exactly the ones typed into the scan field, in
 * the order they were typed.
 */
function assertLandedOnceInOrder(hops, items, sessionId, typed) {
  const scans = items
    .filter((item) => item.session_id === sessionId && item.command === 'scan')
    .sort((a, b) => a.client_seq - b.client_seq);
  assert.ok(scans.length > 0, 'the session has scans');
  for (const item of scans) assert.equal(item.state, 'done', `scan #${item.client_seq} is done on the device`);
  const keys = hops.map((hop) => hop.key);
  assert.equal(new Set(keys).size, keys.length, 'no key appears twice in the ledger');
  assert.deepEqual(keys, scans.map((item) => item.key), 'every scan once, in capture order');
  const seqs = hops.map((hop) => hop.client_seq);
  const first = seqs[0];
  assert.deepEqual(seqs, seqs.map((_, i) => first + i), 'client_seq contiguous and ascending');
  if (typed) {
    assert.deepEqual(hops.map((hop) => hop.facts.epc), typed, 'the typed EPCs, in typing order');
  }
}

test('an outage: 200 scans over two sessions land once and in order when the site returns', async () => {
  const dataDir = tempDataDir();
  const token = await addDevice(dataDir, 'HH-OUTAGE');
  const typedFirst = epcs('A0', 100);
  const typedSecond = epcs('B0', 100);
  await importReference(dataDir, { bins: ['B-01', 'B-02'], units: [...typedFirst, ...typedSecond] });
  let site = await startSite({ dataDir });
  const browser = await launchBrowser();
  try {
    const { page, errors } = await openHandheld(browser, {
      pageUrl: site.base,
      siteUrl: site.base,
      token,
      deviceId: 'HH-OUTAGE',
    });
    const { code } = await site.stop();
    assert.equal(code, 0);

    const first = await openSession(page, 'op-outage', 'put_away');
    // A unit before any bin label is refused on the device, not queued.
    await page.focus('#scan-input');
    await page.keyboard.type(typedFirst[0]);
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.getElementById('scan-refused').textContent === '1');
    assert.match(await page.textContent('#scan-status'), /scan a bin label first/i);
    assert.equal(Number(await page.textContent('#scan-count')), 0);
    // The site is down: the bin labels are the ones the page kept.
    await scanBin(page, 'B-01');
    await page.screenshot({ path: join(artifactsDir(), 'put-away-screen-bin.png') });
    await scanBurst(page, typedFirst);
    const midway = await counts(page);
    assert.ok(midway.queued + midway.sending >= 101, `queue count rises offline: ${JSON.stringify(midway)}`);
    await closeSession(page);
    const second = await openSession(page, 'op-outage', 'put_away');
    await scanBin(page, 'B-02');
    await scanBurst(page, typedSecond);
    assert.equal(Number(await page.textContent('#scan-count')), 200);
    const offline = await counts(page);
    assert.equal(offline.done, 0, 'nothing reached the site while it was down');
    assert.equal(offline.queued + offline.sending, 203, 'two opens, one close and 200 scans wait');
    await page.waitForFunction(() => document.getElementById('net-status').dataset.net === 'offline');
    await page.waitForFunction(() => Number(document.getElementById('bar-queue').textContent) === 203);
    await page.screenshot({ path: join(artifactsDir(), 'capture-screen-offline.png') });

    site = await startSite({ dataDir, port: site.port });
    // Backoff reaches its 30 s step after four failures; give it two.
    const after = await drained(page, { timeoutMs: 75_000 });
    assert.equal(after.done, 203);
    assert.equal(after.blocked + after.rejected, 0);

    const items = await allItems(page);
    assertLandedOnceInOrder(await sessionHops(site.base, token, first), items, first, typedFirst);
    assertLandedOnceInOrder(await sessionHops(site.base, token, second), items, second, typedSecond);

    await openQueue(page);
    await page.click('#queue-refresh');
    await page.waitForFunction(() => /queued 0 · sending 0/.test(document.getElementById('queue-counts').textContent));
    await page.screenshot({ path: join(artifactsDir(), 'queue-screen-drained.png') });
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await site.stop();
  }
});

test('a worker stopped mid-drain resumes without a duplicate hop; the resend is answered replayed', async () => {
  const dataDir = tempDataDir();
  const token = await addDevice(dataDir, 'HH-KILLED');
  const typed = epcs('C0', 60);
  await importReference(dataDir, { bins: ['B-03'], units: typed });
  const site = await startSite({ dataDir });
  const proxy = await startProxy({ upstream: site.base });
  const browser = await launchBrowser();
  try {
    const { page, context } = await openHandheld(browser, {
      pageUrl: proxy.base,
      siteUrl: proxy.base,
      token,
      deviceId: 'HH-KILLED',
    });
    const sessionId = await openSession(page, 'op-killed', 'put_away');
    await scanBin(page, 'B-03');
    await drained(page);
    proxy.state.delayMs = 3_000;
    const before = proxy.state.received;
    // The proxy also carries the shell's files and the heartbeats: only a
    // sync request is a batch.
    const syncs = () =>
      proxy.state.paths.flatMap((path, index) => (index >= before && path.startsWith('/v1/sync') ? [index + 1] : []));
    await scanBurst(page, typed);
    // Stop the worker while a batch it sent is held on the slow link.
    await eventually(() => ({ ready: syncs().length > 0, value: proxy.state }), {
      timeoutMs: 10_000,
      what: 'a batch in flight',
    });
    const cdp = await context.newCDPSession(page);
    await cdp.send('ServiceWorker.enable');
    await cdp.send('ServiceWorker.stopAllWorkers');
    // Every batch sent still reaches the site, which applies it; the worker
    // that sent it is gone and never hears the answer. Only then does the
    // link speed up, so no resend overtakes a held first attempt.
    await eventually(
      () => ({
        ready: proxy.state.started === proxy.state.received && syncs().every((n) => proxy.state.answered.includes(n)),
        value: proxy.state,
      }),
      { timeoutMs: 15_000, what: 'the held batches to apply' },
    );
    proxy.state.delayMs = 0;

    await ask(page, { type: 'wake' });
    await drained(page);
    const items = await allItems(page);
    assertLandedOnceInOrder(await sessionHops(site.base, token, sessionId), items, sessionId, typed);
    const replayed = items.filter((item) => item.replayed);
    assert.ok(replayed.length > 0, `items whose first answer was lost are marked replayed: ${JSON.stringify({ proxy: proxy.state, items: items.map((i) => [i.client_seq, i.state, i.attempts, i.replayed]) })}`);
  } finally {
    await browser.close();
    await proxy.close();
    await site.stop();
  }
});

test('a lost response: the site commits, the device retries, one hop per key', async () => {
  const dataDir = tempDataDir();
  const token = await addDevice(dataDir, 'HH-LOST');
  const typed = epcs('D0', 5);
  await importReference(dataDir, { bins: ['B-04'], units: typed });
  const site = await startSite({ dataDir });
  const proxy = await startProxy({ upstream: site.base });
  const browser = await launchBrowser();
  try {
    const { page } = await openHandheld(browser, {
      pageUrl: proxy.base,
      siteUrl: proxy.base,
      token,
      deviceId: 'HH-LOST',
    });
    const sessionId = await openSession(page, 'op-lost', 'put_away');
    await scanBin(page, 'B-04');
    await drained(page);
    proxy.state.dropNext = 1;
    await scanBurst(page, typed);
    await drained(page, { timeoutMs: 30_000 });
    assert.equal(proxy.state.dropped, 1, 'one response was lost on the way back');
    const items = await allItems(page);
    assertLandedOnceInOrder(await sessionHops(site.base, token, sessionId), items, sessionId, typed);
    assert.ok(items.some((item) => item.replayed), 'the retry was answered from the stored receipts');
  } finally {
    await browser.close();
    await proxy.close();
    await site.stop();
  }
});

test('rejected and blocked items wait for the operator, who decides on the queue screen', async () => {
  const dataDir = tempDataDir();
  const token = await addDevice(dataDir, 'HH-REVIEW');
  const [epc] = epcs('E0', 1);
  const behindBad = epcs('E1', 3);
  await importReference(dataDir, { bins: ['B-01-01'], units: [epc, ...behindBad] });
  const site = await startSite({ dataDir });
  const browser = await launchBrowser();
  try {
    const { page } = await openHandheld(browser, {
      pageUrl: site.base,
      siteUrl: site.base,
      token,
      deviceId: 'HH-REVIEW',
    });
    const sessionId = await openSession(page, 'op-review', 'put_away');
    await scanBin(page, 'B-01-01');
    await scanBurst(page, [epc]);
    await drained(page);

    // A device that read the unit at a version the site has moved past.
    const stale = await ask(page, {
      type: 'capture',
      session_id: sessionId,
      body: { mode: 'put_away', epc, unit_version: 41, bin: 'B-01-01' },
    });
    assert.equal(stale.ok, true);
    await drained(page);
    await openQueue(page);
    await page.click('#queue-refresh');
    const rejectedRow = page.locator(`#queue-list li[data-id="${stale.id}"]`);
    await rejectedRow.waitFor();
    assert.equal(await rejectedRow.getAttribute('data-state'), 'rejected');
    assert.match(await rejectedRow.textContent(), /stale_state/);
    await rejectedRow.locator('button[data-action="acknowledge"]').click();
    await eventually(
      async () => {
        const value = (await allItems(page)).find((item) => item.id === stale.id);
        return { ready: value.acknowledged, value };
      },
      { timeoutMs: 5_000, what: 'the acknowledgement' },
    );

    // A scan the site will never accept as sent (no EPC and no code), and
    // scans behind it in the same session.
    const bad = await ask(page, { type: 'capture', session_id: sessionId, body: { mode: 'put_away' } });
    assert.equal(bad.ok, true);
    await page.click('#queue-back');
    await scanBurst(page, behindBad);
    await eventually(
      async () => {
        const value = await counts(page);
        return { ready: value.blocked === 1, value };
      },
      { timeoutMs: 30_000, what: 'the block' },
    );
    await openQueue(page);
    await page.click('#queue-refresh');
    const blockedRow = page.locator(`#queue-list li[data-id="${bad.id}"]`);
    await blockedRow.waitFor();
    assert.equal(await blockedRow.getAttribute('data-state'), 'blocked');
    const waiting = (await allItems(page)).filter((item) => item.client_seq > bad.client_seq);
    assert.ok(waiting.every((item) => item.state === 'queued'), 'later items of the session wait behind it');

    await blockedRow.locator('button[data-action="discard"]').click();
    await drained(page, { timeoutMs: 30_000 });
    const items = await allItems(page);
    assert.equal(items.find((item) => item.id === bad.id).state, 'voided');
    const hops = await sessionHops(site.base, token, sessionId);
    const behind = items.filter((item) => item.command === 'scan' && item.client_seq > bad.client_seq);
    assert.equal(behind.length, 3);
    for (const item of behind) {
      assert.equal(item.state, 'done');
      assert.equal(hops.filter((hop) => hop.key === item.key).length, 1, `scan #${item.client_seq} applied once`);
    }
  } finally {
    await browser.close();
    await site.stop();
  }
});

/** The English catalogue's message `id`, as the shell formats it. */
function english(id, args) {
  const bundle = new FluentBundle('en', { useIsolating: false });
  const www = fileURLToPath(new URL('../../www/', import.meta.url));
  bundle.addResource(new FluentResource(readFileSync(join(www, 'locales', 'en', 'shell.ftl'), 'utf8')));
  return bundle.formatPattern(bundle.getMessage(id).value, args);
}

test('an unknown badge is refused in words, with the refusal sound, and the header names no one; the queue words each command and mode', async () => {
  const dataDir = tempDataDir();
  const token = await addDevice(dataDir, 'HH-BADGES');
  const [unit] = epcs('EB', 1);
  await importReference(dataDir, { bins: ['B-07'], units: [unit] });
  const csv = join(tempDataDir(), 'operators.csv');
  writeFileSync(csv, 'badge,name\nOP-4,Sam Lee\n');
  await siteCommand(['import', 'operators', csv, '--data', dataDir]);
  const site = await startSite({ dataDir });
  const browser = await launchBrowser();
  const shots = artifactsDir();
  try {
    const { page, errors } = await openHandheld(browser, { pageUrl: site.base, siteUrl: site.base, token, deviceId: 'HH-BADGES', initScript: instrumentSignals });
    await eventually(async () => {
      const status = await ask(page, { type: 'reference_status' });
      return { ready: !!(status.operators && Object.values(status.operators).some((o) => o.badge === 'OP-4')), value: status };
    }, { timeoutMs: 20_000, what: 'the operators in the reference cache' });
    const sessionId = await openSession(page, 'OP-4', 'put_away');
    await scanBin(page, 'B-07');
    await scanBurst(page, [unit]);
    await drained(page);
    await closeSession(page);
    assert.equal(await page.textContent('#operator'), 'OP-4');

    // Change, then a badge the site does not list.
    await page.click('#operator-change');
    await page.focus('#scan-input');
    await resetSignals(page);
    await wedge(page, 'OP-99');
    const refusal = english('sign-in-refused', { why: english('sign-in-not-known', { code: 'OP-99' }) });
    await page.waitForFunction((w) => document.getElementById('picker-status').textContent === w, refusal);
    assert.equal(await page.getAttribute('#picker-status', 'class'), 'status error');
    assert.equal(await page.textContent('#picker-status bdi.code'), 'OP-99', 'the badge reads as a code');
    assert.equal(await page.textContent('#operator'), '–', 'the header names no one, not the operator before');
    assert.equal(await page.isVisible('#operator-name'), false, 'nor their name');
    await eventually(async () => {
      const heard = kindsHeard(await takeSignals(page));
      return { ready: heard.includes('refused'), value: heard };
    }, { timeoutMs: 5_000, what: 'the refusal sound' });
    // Whatever redraws the picker later (the reference data, a refresh), the refusal stays said.
    await page.click('#menu-button');
    await page.click('#menu-refresh');
    await page.click('#menu-back');
    await page.waitForSelector('#screen-picker:not([hidden])');
    assert.equal(await page.textContent('#picker-status'), refusal);
    assert.equal(await page.textContent('#operator'), '–');
    await page.screenshot({ path: join(shots, 'handheld-unknown-badge.png') });
    // The ledger: OP-99 is none of its operators, and every hop is OP-4's session's.
    const reference = await siteRead(site.base, token, '/v1/reference?limit=1000');
    assert.deepEqual(reference.body.operators.map((o) => o.badge), ['OP-4']);

    // The queue words each command and the mode, the codes as codes.
    await openQueue(page);
    await page.click('#queue-refresh');
    const items = (await allItems(page)).filter((item) => item.session_id === sessionId);
    const commands = new Set(items.map((item) => item.command));
    assert.ok(commands.has('open_session') && commands.has('scan'), [...commands].join(', '));
    for (const item of items) {
      const row = page.locator(`#queue-list li[data-id="${item.id}"]`);
      await row.waitFor();
      const label = await row.locator('.q-label').textContent();
      assert.ok(label.endsWith(english(`command-${item.command}`)), `${item.command}: worded (${label})`);
      assert.ok(!label.includes(item.command), `${item.command}: not the code (${label})`);
      if (!['open_session', 'scan'].includes(item.command)) {
        assert.equal(await row.locator('.q-what').count(), 0, `${item.command}: the head says it all`);
        continue;
      }
      const what = await row.locator('.q-what').textContent();
      assert.ok(!/open_session|put_away/.test(what), `no code in ${what}`);
      assert.ok(what.includes(english('mode-put_away')), `the mode in words: ${what}`);
      if (item.command === 'scan') assert.deepEqual(await row.locator('.q-what bdi.code').allTextContents(), [unit, 'B-07']);
    }
    await page.screenshot({ path: join(shots, 'handheld-queue-words.png') });
    const hops = await sessionHops(site.base, token, sessionId);
    assert.deepEqual(hops.map((hop) => hop.facts.epc), [unit], 'the scan the queue shows is the ledger\'s one hop');
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await site.stop();
  }
});
