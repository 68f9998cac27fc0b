// The handheld's heartbeat end to end: the service worker in headless
// Chromium posts it after each drain run and when its period is up, and
// the site's view (`GET /v1/site/status`, admin token) shows the device's
// queue as the worker's own counts have it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launchBrowser, siteCommand, startSite, tempDataDir } from './lib/site.mjs';
import {
  addDevice,
  counts,
  drained,
  epcs,
  eventually,
  importReference,
  openHandheld,
  openSession,
  scanBin,
  scanBurst,
} from './lib/handheld.mjs';

/** The version the worker reports: the build id of the shell the site serves. */
async function servedBuild(base) {
  const res = await fetch(`${base}/version.json`);
  assert.equal(res.status, 200);
  return (await res.json()).build;
}

async function adminToken(dataDir) {
  return (await siteCommand(['admin', 'add', 'supervisor', '--data', dataDir])).trim();
}

/** The device's row of the site's view. */
async function deviceStatus(base, admin, deviceId) {
  const res = await fetch(`${base}/v1/site/status`, { headers: { authorization: `Bearer ${admin}` } });
  assert.equal(res.status, 200, 'the site view answers an admin token');
  const status = await res.json();
  return status.devices.find((device) => device.device_id === deviceId);
}

test('after a drain the site view shows the handheld online with an empty queue and its app version', async () => {
  const dataDir = tempDataDir();
  const token = await addDevice(dataDir, 'HH-BEAT');
  const admin = await adminToken(dataDir);
  const typed = epcs('D0', 5);
  await importReference(dataDir, { bins: ['B-01'], units: typed });
  const site = await startSite({ dataDir });
  const browser = await launchBrowser();
  try {
    const before = await deviceStatus(site.base, admin, 'HH-BEAT');
    assert.equal(before.last_seen_at, null, 'never seen before the handheld starts');
    const { page, errors } = await openHandheld(browser, {
      pageUrl: site.base,
      siteUrl: site.base,
      token,
      deviceId: 'HH-BEAT',
    });
    await openSession(page, 'op-beat', 'put_away');
    await scanBin(page, 'B-01');
    const scanning = Date.now();
    await scanBurst(page, typed);
    await drained(page);
    const seen = await eventually(
      async () => {
        const device = await deviceStatus(site.base, admin, 'HH-BEAT');
        const since = device.last_seen_at != null && Date.parse(device.last_seen_at) >= scanning;
        return { ready: since && device.queue_depth === 0, value: device };
      },
      { timeoutMs: 20_000, what: 'a heartbeat with an empty queue' },
    );
    assert.equal(seen.online, true);
    assert.equal(seen.alert, null);
    assert.equal(seen.app_version, await servedBuild(site.base));
    assert.equal(seen.oldest_queued_at, null, 'nothing is left queued');
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await site.stop();
  }
});

test('when the site returns from an outage the heartbeat carries the queue as it was before its drain or after it', async () => {
  const dataDir = tempDataDir();
  const token = await addDevice(dataDir, 'HH-BEAT-OUT');
  const admin = await adminToken(dataDir);
  const typed = epcs('E0', 20);
  await importReference(dataDir, { bins: ['B-01'], units: typed });
  let site = await startSite({ dataDir });
  const browser = await launchBrowser();
  try {
    const { page, errors } = await openHandheld(browser, {
      pageUrl: site.base,
      siteUrl: site.base,
      token,
      deviceId: 'HH-BEAT-OUT',
    });
    const { code } = await site.stop();
    assert.equal(code, 0);

    // One request's worth (fewer than 50 items), so the drain that follows
    // the outage leaves nothing in between: the depth is all or nothing.
    await openSession(page, 'op-beat-out', 'put_away');
    await scanBin(page, 'B-01');
    await scanBurst(page, typed);
    const offline = await counts(page);
    const depth = offline.queued + offline.sending + offline.blocked;
    assert.equal(depth, 21, 'the open and 20 scans wait');
    const oldest = offline.oldest_queued_at;

    const returnedAt = Date.now();
    site = await startSite({ dataDir, port: site.port });
    // Backoff reaches its 30 s step after four failures; give it two.
    const first = await eventually(
      async () => {
        const device = await deviceStatus(site.base, admin, 'HH-BEAT-OUT');
        const heard = device.last_seen_at != null && Date.parse(device.last_seen_at) >= returnedAt;
        return { ready: heard, value: device };
      },
      { timeoutMs: 75_000, intervalMs: 50, what: 'the first heartbeat after the outage' },
    );
    assert.ok([depth, 0].includes(first.queue_depth), `depth before the drain or after: ${JSON.stringify(first)}`);
    assert.equal(first.oldest_queued_at, first.queue_depth === 0 ? null : oldest);
    assert.equal(first.app_version, await servedBuild(site.base));

    await drained(page, { timeoutMs: 75_000 });
    const last = await eventually(
      async () => {
        const device = await deviceStatus(site.base, admin, 'HH-BEAT-OUT');
        return { ready: device.queue_depth === 0, value: device };
      },
      { timeoutMs: 20_000, what: 'a heartbeat after the drain' },
    );
    assert.equal(last.online, true);
    assert.equal(last.oldest_queued_at, null);
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await site.stop();
  }
});
