// Decisions and the company's view end to end, on real `stockhop-site
// serve` processes and headless Chromium. First: a receive goes wrong (one
// tag too many on a GRN, its undo sent past the 120 s window); a
// supervisor on a handheld-sized screen reverses the receive from the
// site's page, and the ledger (the unit and the GRN's line, read through
// the site's API) changes as the page said it would. Second: two sites
// forward to a central, and the central's page shows both at a glance and
// one site's detail, matching what each site's own status says. The
// central runs on the site's SQLite here (the same central code; the
// native central suite runs it on PostgreSQL). Screenshots land in
// artifacts/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { artifactsDir, freePort, launchBrowser, siteCommand, startSite, tempDataDir } from './lib/site.mjs';
import { HANDHELD_VIEWPORT, addDevice, eventually, importReference, siteRead } from './lib/handheld.mjs';

const DESKTOP = { width: 1280, height: 800 };

/** A new page on `base`'s view, signed in with `adminToken`. */
async function signedIn(browser, base, adminToken, viewport) {
  const context = await browser.newContext({ viewport, reducedMotion: 'reduce' });
  const page = await context.newPage();
  await page.goto(`${base}/site/`);
  await page.waitForSelector('body[data-state="signed-out"]');
  await page.fill('#admin-token', adminToken);
  await page.click('#sign-in-form button[type="submit"]');
  await page.waitForSelector('body[data-state="ready"]');
  return { context, page };
}

/** Items of one session captured from `t0` on, as a handheld queues them. */
function session(t0) {
  const id = randomUUID();
  let seq = 0;
  return (command, body, atMs) => {
    const at = new Date(t0 + atMs).toISOString();
    seq += 1;
    return { key: randomUUID(), session_id: id, client_seq: seq, command, occurred_at: at, queued_at: at, body };
  };
}

async function sync(site, deviceId, token, items) {
  const res = await fetch(`${site.base}/v1/sync`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ device_id: deviceId, sent_at: new Date().toISOString(), items }),
  });
  assert.equal(res.status, 200);
  return (await res.json()).results;
}

async function adminRead(base, adminToken, path) {
  const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${adminToken}` } });
  assert.equal(res.status, 200, path);
  return res.json();
}

async function heartbeat(base, deviceId, token, depth, oldestQueuedAt) {
  const res = await fetch(`${base}/v1/devices/${deviceId}/heartbeat`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ sent_at: new Date().toISOString(), queue_depth: depth, oldest_queued_at: oldestQueuedAt, app_version: 'e2e' }),
  });
  assert.equal(res.status, 200, await res.text());
}

test('a supervisor reverses a wrong receive from the page, and the unit and the GRN line change as it said', async () => {
  const dataDir = tempDataDir();
  // The right tag and one from the next pallet, both SKU-R.
  const [right, wrong] = ['E28000000000000000D0A001', 'E28000000000000000D0A002'];
  await importReference(dataDir, { grns: [{ grn: 'GRN-7', qc: 'accepted', sku: 'SKU-R', expected: 2 }] });
  const adminToken = (await siteCommand(['admin', 'add', 'supervisor', '--data', dataDir])).trim();
  const token = await addDevice(dataDir, 'HH-RCV');
  const site = await startSite({ dataDir, extraArgs: ['--site-tz', 'Europe/Berlin'] });
  const browser = await launchBrowser();
  try {
    // Both received on the GRN, which expects two of SKU-R: complete on
    // close. The operator's undo of the wrong one comes 121 s after its
    // scan, past the handheld's window, so it waits for a supervisor.
    const t0 = Date.now() - 10 * 60_000;
    const item = session(t0);
    const open = item('open_session', { operator_id: 'op-rcv', mode: 'receive', context: { grn: 'GRN-7' } }, 0);
    const scans = [right, wrong].map((epc, i) => item('scan', { mode: 'receive', grn: 'GRN-7', epc, sku: 'SKU-R' }, 1000 * (i + 1)));
    const late = item('undo', { target_key: scans[1].key }, 2000 + 121_000);
    const close = item('close_session', {}, 2000 + 122_000);
    const answered = await sync(site, 'HH-RCV', token, [open, ...scans, late, close]);
    assert.deepEqual(
      answered.map((r) => r.outcome),
      ['applied', 'applied', 'applied', 'rejected', 'applied'],
      JSON.stringify(answered),
    );
    assert.equal(answered[3].reason, 'undo_window_expired');

    const grnBefore = (await siteRead(site.base, token, '/v1/grns/GRN-7')).body;
    assert.deepEqual(grnBefore.lines.map((l) => [l.sku, l.expected, l.received]), [['SKU-R', 2, 2]]);
    assert.equal(grnBefore.state, 'complete');
    const unitBefore = (await siteRead(site.base, token, `/v1/units/${wrong}`)).body;
    assert.equal(unitBefore.sku, 'SKU-R');

    const { context, page } = await signedIn(browser, site.base, adminToken, HANDHELD_VIEWPORT);
    const decisionId = `item:HH-RCV:${late.key}`;
    const row = `#corrections li[data-decision="${decisionId}"]`;
    await page.waitForSelector(row);
    // The page says what a correction would do, with the scan's context.
    const undoText = await page.locator(row).textContent();
    assert.match(undoText, new RegExp(`EPC ${wrong}`));
    assert.match(undoText, /GRN GRN-7/);
    assert.match(undoText, /operator op-rcv/);
    // Each thing once: the button's words, what it does, and why it waits.
    const times = (text) => undoText.split(text).length - 1;
    assert.match(undoText, new RegExp(`Reverse the scan: the receive is reversed: ${wrong} leaves its GRN line\\.`));
    assert.equal(times('Reverse the scan:'), 1, undoText);
    assert.equal(times('leaves its GRN line'), 1, undoText);
    assert.equal(times('the undo came more than 120 s after the scan'), 1, undoText);
    assert.match(undoText, /Why: the undo came more than 120 s after the scan/);
    assert.match(undoText, /Dismiss: the scan stands as recorded\./);
    assert.match(await page.locator('#grns').textContent(), /No GRN waits/, 'the GRN is complete');
    await page.locator(row).scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(artifactsDir(), 'decisions-wrong-receive-before.png') });

    await page.fill(`${row} input[data-note]`, 'tag was from the next pallet');
    await page.click(`${row} button[data-action="correct"]`);
    await page.click(`${row} button[data-action="correct"]`);
    await page.waitForSelector(row, { state: 'detached' });
    // The GRN is short again, and the page lists it with its one tag.
    const grnRow = '#grns li[data-grn="GRN-7"]';
    await page.waitForSelector(grnRow);
    const line = await page.locator(`${grnRow} li[data-sku="SKU-R"]`).textContent();
    await page.click('#decision-log-panel summary');
    const logged = `#decision-log li[data-decision="${decisionId}"][data-action="correct"]`;
    await page.waitForSelector(logged);
    assert.match(await page.locator(logged).textContent(), /tag was from the next pallet/);
    await page.locator(grnRow).scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(artifactsDir(), 'decisions-wrong-receive-after.png') });

    // The ledger, read back, is what the page shows: the wrong tag left
    // the line, which holds the right one alone, and the unit moved on.
    const grnAfter = (await siteRead(site.base, token, '/v1/grns/GRN-7')).body;
    const [held] = grnAfter.lines;
    assert.deepEqual([held.sku, held.expected, held.received], ['SKU-R', 2, 1]);
    assert.equal(grnAfter.state, 'needs_resolution');
    assert.equal(line, `SKU-R: ${held.received} of ${held.expected} received, short ${held.expected - held.received} · tags ${right}`);
    const unitAfter = (await siteRead(site.base, token, `/v1/units/${wrong}`)).body;
    assert.equal(unitAfter.state, 'new');
    assert.ok(unitAfter.version > unitBefore.version, 'the correction bumps the unit');
    const waiting = await adminRead(site.base, adminToken, '/v1/site/decisions');
    assert.ok(!waiting.decisions.some((d) => d.id === decisionId), 'the undo waits no more');
    const feed = await adminRead(site.base, adminToken, '/v1/hops?limit=100');
    const undoHop = feed.hops.find((h) => h.kind === 'UNDO');
    assert.ok(undoHop, JSON.stringify(feed));
    assert.equal(undoHop.epc, wrong);
    await context.close();
  } finally {
    await browser.close();
    await site.stop();
  }
});

test('a central shows two sites at a glance and each one in detail, as each site sees itself', async () => {
  const secret = 'e2e-central-secret';
  const centralDir = tempDataDir();
  const centralAdmin = (await siteCommand(['admin', 'add', 'hq', '--data', centralDir])).trim();
  const central = await startSite({ dataDir: centralDir, extraArgs: ['--central-secret', secret] });
  const sites = [];
  const browser = await launchBrowser();
  try {
    for (const [siteId, zone] of [['DC-NORTH', 'Europe/Berlin'], ['DC-SOUTH', 'America/Chicago']]) {
      const dataDir = tempDataDir();
      const token = await addDevice(dataDir, 'HH-1');
      const admin = (await siteCommand(['admin', 'add', 'ops', '--data', dataDir])).trim();
      const site = await startSite({
        dataDir,
        extraArgs: ['--central-url', central.base, '--central-secret', secret, '--site-id', siteId, '--site-tz', zone],
      });
      sites.push({ siteId, zone, token, admin, site });
    }
    // The south handheld holds 7 scans, the oldest 20 min old: escalated.
    const oldest = new Date(Date.now() - 20 * 60_000).toISOString();
    await heartbeat(sites[1].site.base, 'HH-1', sites[1].token, 7, oldest);
    await heartbeat(sites[0].site.base, 'HH-1', sites[0].token, 0, null);

    const { context, page } = await signedIn(browser, central.base, centralAdmin, HANDHELD_VIEWPORT);
    // A site sends its summary every 10 s: the south's queue shows within two.
    await page.waitForSelector('#sites:not([hidden]) a[data-site="DC-SOUTH"][data-trend="escalated"]', { timeout: 40_000 });
    await page.waitForSelector('a[data-site="DC-NORTH"][data-trend="draining"]');
    await page.screenshot({ path: join(artifactsDir(), 'central-sites-480x800.png') });
    const card = await page.locator('a[data-site="DC-SOUTH"]').textContent();
    assert.match(card, /Escalated/);
    assert.match(card, /Queue depth\s*7/);
    assert.match(card, /Oldest item\s*2\d min/);

    for (const { siteId, zone, admin, site } of sites) {
      const own = await adminRead(site.base, admin, '/v1/site/status');
      const status = await adminRead(central.base, centralAdmin, '/v1/site/status');
      const held = status.central_sites.find((s) => s.site_id === siteId);
      assert.equal(held.summary.trend, own.trend, siteId);
      assert.equal(held.summary.queue_depth, own.queue_depth, siteId);
      assert.equal(held.summary.time_zone, zone);
      assert.equal(own.time_zone, zone);
    }

    // One site in detail: its own clock, its summary, the way back.
    await page.click('a[data-site="DC-SOUTH"]');
    await page.waitForSelector('#site-detail:not([hidden])');
    assert.ok(await page.locator('#sites').isHidden(), 'the detail replaces the list');
    assert.equal(await page.locator('#site-detail-name').textContent(), 'DC-SOUTH · America/Chicago');
    assert.equal(await page.locator('#site-detail-trend').textContent(), 'Escalated');
    const facts = await page.locator('#site-detail-facts').textContent();
    assert.match(facts, /Queue depth7/);
    assert.match(facts, /Hops received0/);
    assert.ok(await page.locator('#site-detail-view').isVisible(), "a link to the site's own view");
    await page.screenshot({ path: join(artifactsDir(), 'central-site-detail-480x800.png') });
    await page.click('#site-detail a[href="#"]');
    await page.waitForSelector('#sites:not([hidden])');
    await context.close();

    const desk = await signedIn(browser, central.base, centralAdmin, DESKTOP);
    await desk.page.waitForSelector('a[data-site="DC-SOUTH"][data-trend="escalated"]');
    await desk.page.screenshot({ path: join(artifactsDir(), 'central-sites-1280x800.png') });
    // Every card is a touch target.
    const box = await desk.page.locator('a[data-site="DC-NORTH"]').boundingBox();
    assert.ok(box.height >= 44, `card ${box.height} px high`);
    await desk.context.close();

    // A site that stops is shown silent once a minute passes without it:
    // checked on the central's JSON, which the card reads.
    await sites[0].site.stop();
    const before = await adminRead(central.base, centralAdmin, '/v1/site/status');
    const north = before.central_sites.find((s) => s.site_id === 'DC-NORTH');
    const silent = (status, id) => status.central_sites.find((s) => s.site_id === id).last_seen_at;
    await eventually(
      async () => {
        const now = await adminRead(central.base, centralAdmin, '/v1/site/status');
        const value = { north: silent(now, 'DC-NORTH'), south: silent(now, 'DC-SOUTH') };
        return { ready: value.north === north.last_seen_at && value.south !== silent(before, 'DC-SOUTH'), value };
      },
      { timeoutMs: 30_000, what: 'the south site reaching the central while the north is stopped' },
    );
  } finally {
    await browser.close();
    for (const { site } of sites) await site.stop();
    await central.stop();
  }
});
