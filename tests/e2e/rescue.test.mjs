// No scan is stranded on a handheld: a handheld captures with the site
// unreachable, its queue screen exports the queue as a signed rescue file
// (the download the page offers, caught as a browser download), the site
// imports the file (`stockhop-site rescue import`, and again over
// `POST /v1/admin/rescue`), and the handheld, back in reach, drains the
// same items: each applied once, the device's own sends answered as
// replays. A real `stockhop-site serve` stopped and started as a process,
// the PWA in Debian's headless Chromium at 480×800; what the screen says is
// compared with the file and with the ledger read over the API.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { artifactsDir, launchBrowser, siteCommand, startSite, tempDataDir } from './lib/site.mjs';
import {
  addDevice,
  assertTouchTargets,
  allItems,
  counts,
  drained,
  epcs,
  importReference,
  openHandheld,
  openQueue,
  pickMode,
  scanBin,
  scanBurst,
  sessionHops,
  sessionOpened,
  siteRead,
} from './lib/handheld.mjs';

/** Scans captured offline and rescued. */
const SCANS = 40;


/** An admin's read of the site's API. */
async function adminRead(site, adminToken, path) {
  const res = await fetch(`${site.base}${path}`, { headers: { authorization: `Bearer ${adminToken}` } });
  assert.equal(res.status, 200, `GET ${path}`);
  return res.json();
}

test('a handheld offline exports its queue; the site imports the file; the handheld reconnects and every scan is applied once', async () => {
  const dataDir = tempDataDir();
  const token = await addDevice(dataDir, 'HH-RESCUE');
  const adminToken = (await siteCommand(['admin', 'add', 'supervisor', '--data', dataDir])).trim();
  const units = epcs('C5', SCANS);
  await importReference(dataDir, { bins: ['B-07'], units });
  let site = await startSite({ dataDir });
  const browser = await launchBrowser();
  try {
    const { page, errors } = await openHandheld(browser, { pageUrl: site.base, siteUrl: site.base, token, deviceId: 'HH-RESCUE' });
    await pickMode(page, 'op-rescue', 'put_away');
    const session = await sessionOpened(page);
    await scanBin(page, 'B-07');
    await drained(page);

    // The site goes away; the handheld keeps capturing.
    await site.kill();
    await page.waitForFunction(() => document.getElementById('net-status').dataset.net === 'offline', null, { timeout: 30_000 });
    await scanBurst(page, units);
    const before = await allItems(page);
    const waiting = before.filter((i) => ['queued', 'sending', 'blocked'].includes(i.state));
    assert.equal(waiting.length, SCANS, 'every offline scan waits');

    // Export from the queue screen: the file is offered as a download.
    await openQueue(page);
    await page.click('#queue-export');
    await page.waitForSelector('#queue-export-save:not([hidden])');
    const status = await page.textContent('#queue-export-status');
    const name = await page.getAttribute('#queue-export-save', 'download');
    assert.match(name, /^stockhop-rescue-HH-RESCUE-\d{8}T\d{6}\.\d{3}Z\.jsonl$/);
    assert.ok(status.startsWith(`${SCANS} items in ${name} (`), status);
    assert.match(status, /They stay queued here/);
    await assertTouchTargets(page);
    await page.screenshot({ path: join(artifactsDir(), 'rescue-queue-export.png') });
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#queue-export-save')]);
    assert.equal(download.suggestedFilename(), name);
    const file = join(tempDataDir(), name);
    await download.saveAs(file);

    // The file: a header, one line an item exactly as the queue holds it, a trailer.
    const lines = readFileSync(file, 'utf8').split('\n');
    assert.equal(lines.pop(), '', 'the file ends with a newline');
    const header = JSON.parse(lines[0]);
    assert.deepEqual({ format: header.format, device_id: header.device_id, items: header.items },
      { format: 'stockhop-rescue/1', device_id: 'HH-RESCUE', items: SCANS });
    const inFile = lines.slice(1, -1).map((line) => JSON.parse(line));
    assert.deepEqual(inFile.map((i) => i.key).sort(), waiting.map((i) => i.key).sort());
    for (const item of inFile) {
      const queued = waiting.find((i) => i.key === item.key);
      assert.deepEqual({ session_id: item.session_id, client_seq: item.client_seq, command: item.command, body: item.body },
        { session_id: queued.session_id, client_seq: queued.client_seq, command: queued.command, body: queued.body });
      assert.deepEqual(Object.keys(item).sort(), ['body', 'client_seq', 'command', 'key', 'occurred_at', 'queued_at', 'session_id']);
    }
    assert.deepEqual(Object.keys(JSON.parse(lines.at(-1))), ['sha256', 'hmac']);

    // Exporting changed nothing on the device.
    const after = await allItems(page);
    assert.deepEqual(after.map((i) => [i.key, i.state === 'sending' ? 'queued' : i.state]),
      before.map((i) => [i.key, i.state === 'sending' ? 'queued' : i.state]));

    // The supervisor imports the file while the site is down, at its data.
    const words = await siteCommand(['rescue', 'import', file, '--data', dataDir]);
    assert.equal(words.trim(), `${file}: HH-RESCUE: ${SCANS} items, ${SCANS} applied, 0 already at the site (replayed), 0 refused`);

    // The site is back: the handheld drains the same items, each a replay.
    site = await startSite({ dataDir, port: site.port });
    const drainedCounts = await drained(page);
    assert.equal(drainedCounts.rejected + drainedCounts.blocked, 0);
    const done = (await allItems(page)).filter((i) => waiting.some((w) => w.key === i.key));
    assert.deepEqual(done.map((i) => [i.state, i.replayed]), waiting.map(() => ['done', true]),
      'every rescued item answered as a replay when the device sent it');

    // The ledger: each scan applied once, every unit in the bin.
    const hops = await sessionHops(site.base, token, session);
    const scanKeys = waiting.filter((i) => i.command === 'scan').map((i) => i.key);
    const hopKeys = hops.map((hop) => hop.key).filter((key) => scanKeys.includes(key));
    assert.deepEqual(hopKeys.sort(), [...scanKeys].sort(), 'each scan has exactly one hop');
    for (const epc of units) {
      const { status: code, body } = await siteRead(site.base, token, `/v1/units/${epc}`);
      assert.equal(code, 200);
      assert.equal(body.bin, 'B-07', `${epc} is in its bin`);
    }

    // The same file over the API: every item a replay, nothing changed.
    const res = await fetch(`${site.base}/v1/admin/rescue`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/jsonl' },
      body: readFileSync(file),
    });
    assert.equal(res.status, 200);
    const again = await res.json();
    assert.deepEqual({ items: again.items, applied: again.applied, rejected: again.rejected, replayed: again.replayed },
      { items: SCANS, applied: 0, rejected: 0, replayed: SCANS });
    assert.equal((await sessionHops(site.base, token, session)).length, hops.length);
    const siteStatus = await adminRead(site, adminToken, '/v1/site/status');
    const rescues = siteStatus.rescues.filter((r) => r.device_id === 'HH-RESCUE');
    assert.deepEqual(rescues.map((r) => [r.applied, r.replayed, r.rejected]), [[0, SCANS, 0], [SCANS, 0, 0]]);

    // A file tampered with is refused whole.
    const tampered = readFileSync(file, 'utf8').replace('B-07', 'B-08');
    const refused = await fetch(`${site.base}/v1/admin/rescue`, {
      method: 'POST', headers: { authorization: `Bearer ${adminToken}` }, body: tampered,
    });
    assert.equal(refused.status, 422);
    assert.equal((await refused.json()).code, 'RESCUE_UNVERIFIED');

    // Nothing waits now: Export says so.
    await page.click('#queue-export');
    await page.waitForFunction(() => document.getElementById('queue-export-status').textContent.startsWith('Nothing to export'));
    assert.ok(await page.isHidden('#queue-export-save'));
    assert.equal((await counts(page)).queued, 0);
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await site.stop();
  }
});
