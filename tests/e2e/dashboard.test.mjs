// The site's view end to end: a supervisor signs in at /site/ on a real
// `stockhop-site serve`, watches a fixed gate go offline and come back and
// a handheld's queue grow through an outage and drain, sees a late undo on
// the correction list, and enrolls a handheld by QR code: the test decodes
// the rendered code and opens the link on a second page, over HTTPS by
// name, as the handheld's scanner would. Heartbeats are posted here the
// way a device posts them. Screenshots at 1280x800 and 800x1280 land in
// artifacts/. A second test: a cycle count with a variance, approved from
// the page, moves the units it names, and a cancelled count is listed
// nowhere (page, workbench, status, /metrics). A third: a site forwarding
// to a central it cannot reach shows its outbox waiting and the last
// failure. Another: a handheld scanning tags the site does not know, over
// and over, is marked as rejecting (banner and device row) with the count
// the ledger's status gives.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import jsQR from 'jsqr';
import { artifactsDir, freePort, launchBrowser, siteCommand, startSite, tempDataDir } from './lib/site.mjs';
import { homeTrusting, launchTrusting } from './lib/tls.mjs';
import {
  HANDHELD_VIEWPORT,
  addDevice,
  drained,
  eventually,
  importReference,
  openSession,
  scanBin,
  scanBurst,
} from './lib/handheld.mjs';

const SITE_NAME = 'stockhop.test';
/** fxr90's heartbeat period: silent longer than this, a gate is offline. */
const FXR90_PERIOD_MS = 60_000;

async function heartbeat(site, deviceId, token, depth, oldestQueuedAt = null) {
  const res = await fetch(`${site.base}/v1/devices/${deviceId}/heartbeat`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      sent_at: new Date().toISOString(),
      queue_depth: depth,
      oldest_queued_at: oldestQueuedAt,
      app_version: 'e2e',
    }),
  });
  assert.equal(res.status, 200, await res.text());
}

/** An open, a scan and an undo captured 121 s after it: the undo is late. */
async function lateUndo(site, deviceId, token) {
  const session = randomUUID();
  const t0 = Date.now() - 600_000;
  const at = (ms) => new Date(t0 + ms).toISOString();
  const item = (seq, command, body, ms) => ({
    key: randomUUID(),
    session_id: session,
    client_seq: seq,
    command,
    occurred_at: at(ms),
    queued_at: at(ms + 3),
    body,
  });
  const scan = item(2, 'scan', { mode: 'put_away', epc: 'E2800000000000000000E2E1', bin: 'B-1' }, 1000);
  const items = [
    item(1, 'open_session', { operator_id: 'op-late', mode: 'put_away', context: {} }, 0),
    scan,
    item(3, 'undo', { target_key: scan.key }, 122_000),
  ];
  const res = await fetch(`${site.base}/v1/sync`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ device_id: deviceId, sent_at: new Date().toISOString(), items }),
  });
  const body = await res.json();
  assert.equal(body.results[2].reason, 'undo_window_expired', JSON.stringify(body));
}

const textOf = (page, selector) => page.locator(selector).first().textContent();

async function waitText(page, selector, pattern, timeout = 20_000) {
  await page.waitForFunction(
    ({ selector, source, flags }) => {
      const node = document.querySelector(selector);
      return node && new RegExp(source, flags).test(node.textContent);
    },
    { selector, source: pattern.source, flags: pattern.flags },
    { timeout },
  );
}

/** A new page of `context` on the site's view, signed in with `adminToken`. */
async function signedIn(context, site, adminToken) {
  const page = await context.newPage();
  await page.goto(`${site.base}/site/`);
  await page.waitForSelector('body[data-state="signed-out"]');
  await page.fill('#admin-token', adminToken);
  await page.click('#sign-in-form button[type="submit"]');
  await page.waitForSelector('body[data-state="ready"]');
  return page;
}

/** The QR code on the page as text: drawn to a canvas, read by jsQR. */
async function decodeQr(page, selector) {
  const image = await page.evaluate(async (sel) => {
    const img = document.querySelector(sel);
    await img.decode();
    const scale = 2;
    const canvas = document.createElement('canvas');
    canvas.width = img.naturalWidth * scale;
    canvas.height = img.naturalHeight * scale;
    const ctx = canvas.getContext('2d');
    ctx.imageSmoothingEnabled = false;
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, canvas.width, canvas.height);
    ctx.drawImage(img, 0, 0, canvas.width, canvas.height);
    const data = ctx.getImageData(0, 0, canvas.width, canvas.height);
    return { width: data.width, height: data.height, pixels: Array.from(data.data) };
  }, selector);
  const code = jsQR(Uint8ClampedArray.from(image.pixels), image.width, image.height);
  assert.ok(code, 'the QR code decodes');
  return code.data;
}

test('a supervisor watches the site: offline and back, an outage grows and drains, a late undo, a handheld enrolled by QR', async () => {
  const dataDir = tempDataDir();
  const httpsPort = await freePort();
  const adminToken = (await siteCommand(['admin', 'add', 'supervisor', '--data', dataDir])).trim();
  const hhToken = await addDevice(dataDir, 'HH-1');
  const gateToken = await addDevice(dataDir, 'GATE-1', { profile: 'fxr90' });
  await importReference(dataDir, {
    bins: ['B-1'],
    units: ['E2800000000000000000A001', 'E2800000000000000000E2E1'],
  });
  const site = await startSite({
    dataDir,
    extraArgs: ['--https', `127.0.0.1:${httpsPort}`, '--tls-name', SITE_NAME],
  });
  const browser = await launchTrusting(homeTrusting(join(dataDir, 'tls', 'ca.crt')), SITE_NAME);
  try {
    // Device tokens never open the view; the page asks for an admin token.
    const asDevice = await fetch(`${site.base}/v1/site/status`, { headers: { authorization: `Bearer ${hhToken}` } });
    assert.equal(asDevice.status, 403);
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (err) => errors.push(String(err)));
    await page.goto(`${site.base}/site/`);
    await page.waitForSelector('body[data-state="signed-out"]');
    await page.fill('#admin-token', hhToken);
    await page.click('#sign-in-form button[type="submit"]');
    await waitText(page, '#sign-in-error', /not an admin token/);
    await page.fill('#admin-token', adminToken);
    await page.click('#sign-in-form button[type="submit"]');
    await page.waitForSelector('body[data-state="ready"]');
    const cookies = await context.cookies();
    const session = cookies.find((c) => c.name === 'stockhop_admin');
    assert.ok(session, 'a session cookie');
    assert.equal(session.httpOnly, true);
    assert.equal(session.sameSite, 'Strict');

    // Both devices report; the gate then falls silent while the handheld's
    // site is unreachable to it and its queue grows.
    await heartbeat(site, 'GATE-1', gateToken, 0);
    const gateLastSeen = Date.now();
    await heartbeat(site, 'HH-1', hhToken, 0);
    await waitText(page, '#devices tr[data-device="GATE-1"] td:nth-child(3)', /^online/);
    await waitText(page, '#trend', /^Draining normally$/);
    const outageStart = new Date().toISOString();
    for (const depth of [40, 90, 140]) {
      await heartbeat(site, 'HH-1', hhToken, depth, outageStart);
    }
    await waitText(page, '#trend', /^Growing$/);
    await waitText(page, '#site-depth', /^140$/);
    await waitText(page, '#devices tr[data-device="HH-1"] [data-field="depth"]', /^140$/);

    await lateUndo(site, 'HH-1', hhToken);
    await waitText(page, '#corrections', /undo past 120 s/);
    assert.match(await textOf(page, '#counts'), /No count variance waits/);
    assert.match(await textOf(page, '#grns'), /No GRN waits/);

    // The gate has been silent past its 60 s period: a P1 banner, escalated.
    await page.waitForSelector('#alerts .alert[data-device="GATE-1"][data-alert="P1"]', {
      timeout: FXR90_PERIOD_MS + 30_000,
    });
    assert.ok(Date.now() - gateLastSeen > FXR90_PERIOD_MS, 'not before the period passed');
    assert.match(await textOf(page, '#alerts .alert[data-device="GATE-1"]'), /P1GATE-1 \(fixed gate\) offline since \d\d:\d\d/);
    await waitText(page, '#trend', /^Escalated$/);
    assert.equal(await page.getAttribute('#devices tr[data-device="GATE-1"]', 'data-online'), 'false');
    // The chart is drawn and fits its panel.
    await page.waitForFunction(() => document.getElementById('chart').naturalWidth > 0);

    // The screen a supervisor sees now, at desktop and tablet sizes.
    await page.screenshot({ path: join(artifactsDir(), 'dashboard-1280x800.png'), fullPage: true });
    const tablet = await browser.newContext({ viewport: { width: 800, height: 1280 }, reducedMotion: 'reduce' });
    const tabletPage = await tablet.newPage();
    await tablet.addCookies([session]);
    await tabletPage.goto(`${site.base}/site/`);
    await tabletPage.waitForSelector('#alerts .alert[data-alert="P1"]');
    await tabletPage.waitForFunction(() => document.getElementById('chart').naturalWidth > 0);
    await tabletPage.screenshot({ path: join(artifactsDir(), 'dashboard-800x1280.png'), fullPage: true });
    const motion = await tabletPage.$eval('#alerts .alert[data-alert="P1"]', (n) => getComputedStyle(n).animationName);
    assert.equal(motion, 'none', 'prefers-reduced-motion stops the P1 pulse');
    const overflow = await tabletPage.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `no sideways scrolling on a tablet: ${overflow}px`);
    await tablet.close();

    // Every control is a 44 px touch target.
    const small = await page.$$eval('button, select, input:not([type="checkbox"]), summary', (nodes) =>
      nodes
        .filter((n) => n.offsetParent !== null)
        .map((n) => ({ id: n.id || n.textContent.trim(), ...n.getBoundingClientRect().toJSON() }))
        .filter((r) => r.height < 44 || r.width < 44),
    );
    assert.deepEqual(small, [], 'touch targets of at least 44 px');

    // The gate comes back; the handheld drains.
    await heartbeat(site, 'GATE-1', gateToken, 0);
    await page.waitForSelector('#alerts .alert[data-device="GATE-1"]', { state: 'detached' });
    await waitText(page, '#devices tr[data-device="GATE-1"] td:nth-child(3)', /^online/);
    for (const depth of [60, 0]) {
      await heartbeat(site, 'HH-1', hhToken, depth, depth ? outageStart : null);
    }
    await waitText(page, '#site-depth', /^0$/);
    await waitText(page, '#trend', /^Draining normally$/);

    // Enroll a handheld from the page and read its QR code as the
    // handheld's scanner would.
    await page.click('#enroll summary');
    await page.fill('#enroll-id', 'HH-NEW');
    await page.selectOption('#enroll-profile', 'mc3390xr');
    await page.check('#enroll-commissioned');
    await page.click('#enroll-form button[type="submit"]');
    await page.waitForSelector('#enroll-result:not([hidden])');
    const link = await decodeQr(page, '#enroll-qr');
    assert.equal(link, await textOf(page, '#enroll-link'), 'the QR code is the shown link');
    const origin = `https://${SITE_NAME}:${httpsPort}`;
    assert.ok(link.startsWith(`${origin}/#site=`), link);
    const fragment = new URLSearchParams(new URL(link).hash.slice(1));
    assert.equal(fragment.get('site'), origin);
    assert.equal(fragment.get('device'), 'HH-NEW');
    await page.locator('#enroll-result').screenshot({ path: join(artifactsDir(), 'dashboard-enroll-qr.png') });
    await page.waitForSelector('#devices tr[data-device="HH-NEW"][data-online="false"]');

    const handheld = await browser.newContext({ viewport: HANDHELD_VIEWPORT });
    const hhPage = await handheld.newPage();
    await hhPage.goto(link);
    await hhPage.waitForSelector('body[data-ready="true"]');
    await hhPage.waitForFunction(() => document.getElementById('setup-status').textContent.startsWith('Set up as HH-NEW'));
    await openSession(hhPage, 'op-new', 'put_away');
    await scanBin(hhPage, 'B-1');
    await scanBurst(hhPage, ['E2800000000000000000A001']);
    await drained(hhPage);
    await heartbeat(site, 'HH-NEW', fragment.get('token'), 0);
    await page.waitForSelector('#devices tr[data-device="HH-NEW"][data-online="true"]');
    await handheld.close();

    // Revoked from the page, the new device's token stops working.
    const revoke = page.locator('#devices tr[data-device="HH-NEW"] button[data-action="revoke"]');
    await revoke.click();
    await revoke.click();
    await page.waitForSelector('#devices tr[data-device="HH-NEW"]', { state: 'detached' });
    const revoked = await fetch(`${site.base}/v1/devices/HH-NEW/heartbeat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${fragment.get('token')}`, 'content-type': 'application/json' },
      body: JSON.stringify({ sent_at: new Date().toISOString(), queue_depth: 0, app_version: 'e2e' }),
    });
    assert.equal(revoked.status, 401);

    // Signed out, the cookie opens nothing.
    await page.click('#sign-out');
    await page.waitForSelector('body[data-state="signed-out"]');
    const after = await eventually(
      async () => {
        const res = await page.evaluate(() => fetch('/v1/site/status').then((r) => r.status));
        return { ready: res === 401, value: res };
      },
      { timeoutMs: 5000, what: 'the session to end' },
    );
    assert.equal(after, 401);
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await site.stop();
  }
});

/** Writes `rows` (the header first) as a CSV file in `dir` and imports it. */
async function importCsv(dataDir, kind, rows) {
  const file = join(dataDir, `${kind}.csv`);
  writeFileSync(file, rows.map((r) => r.join(',')).join('\n') + '\n');
  await siteCommand(['import', kind, file, '--data', dataDir]);
}

/** A cycle count as the handheld sends it: open with the count, scans, close. */
async function countSession(site, deviceId, token, countId, scans) {
  const session = randomUUID();
  const now = Date.now() - 60_000;
  const item = (seq, command, body) => ({
    key: randomUUID(),
    session_id: session,
    client_seq: seq,
    command,
    occurred_at: new Date(now + seq * 1000).toISOString(),
    queued_at: new Date(now + seq * 1000 + 3).toISOString(),
    body,
  });
  const items = [
    item(1, 'open_session', { operator_id: 'op-count', mode: 'cycle_count', context: { count_id: countId } }),
    ...scans.map(([epc, bin], i) => item(i + 2, 'scan', { mode: 'cycle_count', count_id: countId, epc, bin })),
    item(scans.length + 2, 'close_session', {}),
  ];
  const res = await fetch(`${site.base}/v1/sync`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ device_id: deviceId, sent_at: new Date().toISOString(), items }),
  });
  const body = await res.json();
  for (const result of body.results) assert.equal(result.outcome, 'applied', JSON.stringify(body));
}

async function unit(site, token, epc) {
  const res = await fetch(`${site.base}/v1/units/${epc}`, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(res.status, 200);
  return res.json();
}

/** The counts waiting for approval as the workbench, the status and /metrics each say. */
async function waitingCounts(site, adminToken) {
  const read = async (path) => {
    const res = await fetch(`${site.base}${path}`, { headers: { authorization: `Bearer ${adminToken}` } });
    assert.equal(res.status, 200, path);
    return path === '/metrics' ? res.text() : res.json();
  };
  const { decisions } = await read('/v1/site/decisions');
  const status = await read('/v1/site/status');
  const metric = /^stockhop_pending_decisions\{kind="count_variance"\} (\d+)$/m.exec(await read('/metrics'));
  assert.ok(metric, 'pending_decisions for count_variance in /metrics');
  return {
    workbench: decisions.filter((d) => d.kind === 'count_variance').map((d) => d.count_id),
    status: status.decisions.count_variances.map((c) => c.count_id),
    metrics: Number(metric[1]),
  };
}

test('a supervisor approves a count variance from the page, and the units change', async () => {
  const dataDir = tempDataDir();
  const [seen, missing, stray] = ['E28000000000000000C0A001', 'E28000000000000000C0A002', 'E28000000000000000C0A003'];
  await importCsv(dataDir, 'bins', [['bin', 'zone', 'location'], ['A-01', 'Z-A', 'L-1'], ['B-09', 'Z-B', 'L-1']]);
  await importCsv(dataDir, 'units', [
    ['epc', 'code', 'sku', 'state', 'bin'],
    [seen, '', 'SKU-1', 'in_stock', 'A-01'],
    [missing, '', 'SKU-1', 'in_stock', 'A-01'],
    [stray, '', 'SKU-2', 'in_stock', 'B-09'],
  ]);
  const countId = (await siteCommand(['count', 'open', '--location', 'L-1', '--zone', 'Z-A', '--data', dataDir])).trim();
  // A count opened by mistake, closed by its session and then cancelled:
  // nothing it saw posts, so it waits for no one.
  const cancelled = (await siteCommand(['count', 'open', '--location', 'L-1', '--zone', 'Z-B', '--data', dataDir])).trim();
  const adminToken = (await siteCommand(['admin', 'add', 'supervisor', '--data', dataDir])).trim();
  const token = await addDevice(dataDir, 'HH-COUNT');
  const site = await startSite({ dataDir });
  const browser = await launchBrowser();
  try {
    await countSession(site, 'HH-COUNT', token, cancelled, [[stray, 'B-09']]);
    const cancel = await fetch(`${site.base}/v1/admin/counts/${cancelled}/cancel`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(cancel.status, 204, await cancel.text());
    await countSession(site, 'HH-COUNT', token, countId, [[seen, 'A-01'], [stray, 'A-01']]);
    const missingBefore = await unit(site, token, missing);
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await signedIn(context, site, adminToken);
    const row = `#counts [data-count="${countId}"]`;
    await page.waitForSelector(row);
    // The page, the workbench's list, the status and /metrics name the
    // same counts: the one waiting, not the cancelled one.
    const shown = await page.$$eval('#counts [data-count]', (rows) => rows.map((r) => r.dataset.count));
    assert.deepEqual(shown, [countId]);
    assert.deepEqual(await waitingCounts(site, adminToken), { workbench: [countId], status: [countId], metrics: 1 });
    await page.locator('#counts').screenshot({ path: join(artifactsDir(), 'dashboard-count-variance.png') });
    const text = await page.locator(row).textContent();
    assert.match(text, new RegExp(`Missing: ${missing}`), 'the missing unit is shown before approval, on its own line');
    assert.match(text, new RegExp(`Unexpected: ${stray}`), 'the unexpected unit is shown before approval, on its own line');
    await page.click(`${row} button`);
    await page.click(`${row} button`);
    await waitText(page, '#counts', /No count variance waits/);
    assert.deepEqual(await waitingCounts(site, adminToken), { workbench: [], status: [], metrics: 0 });
    const gone = await unit(site, token, missing);
    assert.equal(gone.state, 'missing');
    assert.ok(gone.version > missingBefore.version, 'approval bumps the version');
    const moved = await unit(site, token, stray);
    assert.equal(moved.bin, 'A-01', 'the unexpected unit is booked into the counted bin');
    await context.close();
  } finally {
    await browser.close();
    await site.stop();
  }
});

test('a site whose central cannot be reached shows its outbox waiting and why', async () => {
  const dataDir = tempDataDir();
  const adminToken = (await siteCommand(['admin', 'add', 'supervisor', '--data', dataDir])).trim();
  const token = await addDevice(dataDir, 'HH-OUT');
  const epcs = ['E2800000000000000000C001', 'E2800000000000000000C002', 'E2800000000000000000C003'];
  await importReference(dataDir, { bins: ['B-1'], units: epcs });
  // A port nothing listens on: every delivery is refused.
  const central = `http://127.0.0.1:${await freePort()}`;
  const site = await startSite({
    dataDir,
    extraArgs: ['--central-url', central, '--central-secret', 'e2e-secret', '--site-id', 'DC-E2E'],
  });
  const browser = await launchBrowser();
  try {
    const session = randomUUID();
    const now = new Date().toISOString();
    const item = (seq, command, body) => ({
      key: randomUUID(),
      session_id: session,
      client_seq: seq,
      command,
      occurred_at: now,
      queued_at: now,
      body,
    });
    const items = [
      item(1, 'open_session', { operator_id: 'op-out', mode: 'put_away', context: {} }),
      ...epcs.map((epc, i) => item(i + 2, 'scan', { mode: 'put_away', epc, bin: 'B-1' })),
    ];
    const res = await fetch(`${site.base}/v1/sync`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ device_id: 'HH-OUT', sent_at: now, items }),
    });
    const body = await res.json();
    assert.deepEqual(
      body.results.map((r) => r.outcome),
      ['applied', 'applied', 'applied', 'applied'],
      JSON.stringify(body),
    );

    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, reducedMotion: 'reduce' });
    const page = await signedIn(context, site, adminToken);
    await page.waitForSelector('#central:not([hidden]) #outbox:not([hidden])');
    await waitText(page, '#outbox-site', /^DC-E2E$/);
    await waitText(page, '#outbox-url', new RegExp(`^${central.replace(/[.]/g, '\\.')}`));
    await waitText(page, '#outbox-depth', /^3$/);
    await waitText(page, '#outbox-error', /^Last delivery failed .+ ago: .+/);
    assert.equal(await textOf(page, '#outbox-dead'), '0', 'an unreachable central dead-letters nothing');
    await page.locator('#central').screenshot({ path: join(artifactsDir(), 'dashboard-central-outbox.png') });
    await context.close();
  } finally {
    await browser.close();
    await site.stop();
  }
});

/** One `open_session` of `deviceId` for `operator` in a new session; answers the item's result. */
async function openOn(site, deviceId, token, operator) {
  const at = new Date().toISOString();
  const res = await fetch(`${site.base}/v1/sync`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      device_id: deviceId,
      sent_at: at,
      items: [{
        key: randomUUID(),
        session_id: randomUUID(),
        client_seq: 1,
        command: 'open_session',
        occurred_at: at,
        queued_at: at,
        body: { operator_id: operator, mode: 'put_away', context: {} },
      }],
    }),
  });
  assert.equal(res.status, 200);
  return (await res.json()).results[0];
}

test('a supervisor closes the session a reset handheld left open, and the handheld opens a new one', async () => {
  const dataDir = tempDataDir();
  await importCsv(dataDir, 'operators', [['badge', 'name'], ['op-reset', 'Reset Operator']]);
  const adminToken = (await siteCommand(['admin', 'add', 'supervisor', '--data', dataDir])).trim();
  const token = await addDevice(dataDir, 'HH-RESET');
  const site = await startSite({ dataDir });
  const browser = await launchBrowser();
  try {
    assert.equal((await openOn(site, 'HH-RESET', token, 'op-reset')).outcome, 'applied');
    // Its storage cleared, the handheld comes back with a new session: refused.
    assert.equal((await openOn(site, 'HH-RESET', token, 'op-reset')).code, 'SESSION_CONFLICT');

    const cell = '#devices tr[data-device="HH-RESET"] td[data-session]';
    // On a phone (480 x 800) each device is a card: every column and both
    // buttons are on screen without scrolling sideways, and big enough to tap.
    const narrow = await browser.newContext({ viewport: { width: 480, height: 800 } });
    const phone = await signedIn(narrow, site, adminToken);
    await waitText(phone, cell, /op-reset · put away since/);
    const fits = await phone.$eval('#devices', (table) => {
      const box = table.closest('.scroll');
      const row = table.querySelector('tr[data-device="HH-RESET"]');
      return {
        overflow: box.scrollWidth - box.clientWidth,
        labels: [...row.cells].map((td) => td.dataset.label),
        shown: [...row.cells].every((td) => {
          const r = td.getBoundingClientRect();
          return r.width > 0 && r.left >= 0 && r.right <= window.innerWidth;
        }),
      };
    });
    assert.equal(fits.overflow, 0, 'the devices fit their box at 480 px');
    assert.deepEqual(fits.labels, ['Device', 'Profile', 'Online', 'Last seen', 'Depth', 'Oldest', 'Session', 'Revoke']);
    assert.ok(fits.shown, 'every cell of the row is on screen');
    for (const action of ['close-session', 'revoke']) {
      const button = phone.locator(`#devices tr[data-device="HH-RESET"] button[data-action="${action}"]`);
      await button.scrollIntoViewIfNeeded();
      const r = await button.boundingBox();
      assert.ok(r.x >= 0 && r.x + r.width <= 480, `${action} is on screen: ${JSON.stringify(r)}`);
      assert.ok(r.width >= 44 && r.height >= 44, `${action} is big enough to tap: ${JSON.stringify(r)}`);
    }
    await phone.locator('#devices').scrollIntoViewIfNeeded();
    await phone.screenshot({ path: join(artifactsDir(), 'dashboard-devices-480x800.png') });
    await narrow.close();

    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await signedIn(context, site, adminToken);
    await waitText(page, cell, /op-reset · put away since/);
    await page.locator('#devices').screenshot({ path: join(artifactsDir(), 'dashboard-open-session.png') });
    const close = page.locator(`${cell} button[data-action="close-session"]`);
    await close.click();
    assert.match(await close.textContent(), /Close HH-RESET's session\?/);
    // The next refresh draws the table again: the button still asks, so the second tap acts.
    await page.$eval(`${cell} button`, (button) => { button.__drawnBefore = true; });
    await page.waitForFunction((sel) => {
      const button = document.querySelector(sel);
      return button && !button.__drawnBefore;
    }, `${cell} button`, { timeout: 20_000 });
    assert.match(await close.textContent(), /Close HH-RESET's session\?/, 'still asking after a refresh');
    await close.click();
    await page.waitForSelector(cell, { state: 'detached' });

    // The ledger holds it closed: the handheld's new session opens.
    assert.equal((await openOn(site, 'HH-RESET', token, 'op-reset')).outcome, 'applied');
    await context.close();
  } finally {
    await browser.close();
    await site.stop();
  }
});

/**
 * A put-away session on `deviceId` scanning `count` tags the site does not
 * know into `bin`, posted as the handheld posts them (in requests of 50,
 * the most one may carry): every scan is rejected.
 */
async function unknownScans(site, deviceId, token, operator, bin, count) {
  const session = randomUUID();
  const at = () => new Date().toISOString();
  let seq = 0;
  const item = (command, body) => ({ key: randomUUID(), session_id: session, client_seq: ++seq, command, occurred_at: at(), queued_at: at(), body });
  const items = [item('open_session', { operator_id: operator, mode: 'put_away', context: {} })];
  for (let i = 0; i < count; i++) {
    items.push(item('scan', { mode: 'put_away', epc: `E2800000000000000BAD${String(i).padStart(5, '0')}`, bin }));
  }
  const outcomes = [];
  for (let i = 0; i < items.length; i += 50) {
    const res = await fetch(`${site.base}/v1/sync`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ device_id: deviceId, sent_at: at(), items: items.slice(i, i + 50) }),
    });
    assert.equal(res.status, 200, await res.clone().text());
    outcomes.push(...(await res.json()).results);
  }
  return outcomes;
}

test('a handheld that keeps producing rejections is marked as such, with the ledger\'s count', async () => {
  const dataDir = tempDataDir();
  await importCsv(dataDir, 'operators', [['badge', 'name'], ['op-flood', 'Flood Operator'], ['op-quiet', 'Quiet Operator']]);
  await importCsv(dataDir, 'bins', [['bin', 'zone', 'location'], ['A-01', 'Z-A', 'L-1']]);
  const adminToken = (await siteCommand(['admin', 'add', 'supervisor', '--data', dataDir])).trim();
  const token = await addDevice(dataDir, 'HH-FLOOD');
  const quietToken = await addDevice(dataDir, 'HH-QUIET');
  const site = await startSite({ dataDir });
  const browser = await launchBrowser();
  const status = async () => {
    const res = await fetch(`${site.base}/v1/site/status`, { headers: { authorization: `Bearer ${adminToken}` } });
    assert.equal(res.status, 200);
    return (await res.json()).rejections;
  };
  try {
    // One refusal on another handheld: a picker's ordinary mistake, not a flood.
    const few = await unknownScans(site, 'HH-QUIET', quietToken, 'op-quiet', 'A-01', 1);
    assert.equal(few[1].outcome, 'rejected', JSON.stringify(few[1]));
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await signedIn(context, site, adminToken);
    await page.waitForSelector('#devices tr[data-device="HH-QUIET"]');
    assert.equal(await page.locator('#alerts .alert[data-rejecting]').count(), 0, 'no device rejecting: no banner');
    assert.equal(await page.locator('#devices .rejecting-mark').count(), 0, 'no device rejecting: no mark');

    const { rejecting_at_least: threshold, window_minutes: minutes } = await status();
    const outcomes = await unknownScans(site, 'HH-FLOOD', token, 'op-flood', 'A-01', threshold + 20);
    const refused = outcomes.filter((o) => o.outcome === 'rejected');
    assert.equal(refused.length, threshold + 20, `every unknown tag is refused: ${JSON.stringify(outcomes.slice(0, 3))}`);

    const banner = '#alerts .alert[data-device="HH-FLOOD"][data-rejecting]';
    await page.waitForSelector(banner, { timeout: 20_000 });
    // The ledger's answer, read after the page drew it: nothing new came since.
    const ledger = await status();
    const flood = ledger.rejecting.find((r) => r.device_id === 'HH-FLOOD');
    assert.ok(flood, `the status names HH-FLOOD as rejecting: ${JSON.stringify(ledger.rejecting)}`);
    assert.equal(flood.recent, threshold + 20);
    assert.deepEqual(ledger.rejecting.map((r) => r.device_id), ['HH-FLOOD'], 'one refusal is not a flood');
    await page.waitForSelector(`${banner}[data-rejecting="${flood.recent}"]`);
    const shown = await page.$eval(banner, (node) => ({
      alert: node.dataset.alert,
      id: node.querySelector('bdi')?.textContent,
      text: node.textContent,
      reason: node.querySelector('[data-reason]')?.dataset.reason,
    }));
    assert.equal(shown.alert, 'P2');
    assert.equal(shown.id, 'HH-FLOOD', 'the id is isolated in its own <bdi>');
    assert.equal(shown.reason, flood.top_reason);
    assert.match(shown.text, /Device with many rejections/);
    assert.match(shown.text, new RegExp(`${flood.recent} rejections in the last ${minutes} min, ${flood.per_minute} a minute`));
    assert.match(shown.text, /mostly: The site does not know this tag or serial\./);
    assert.match(shown.text, /latest \d\d:\d\d/);
    const rows = await page.$$eval('#devices tr[data-device]', (trs) =>
      Object.fromEntries(trs.map((tr) => [tr.dataset.device, { rejecting: tr.dataset.rejecting, mark: tr.querySelector('.rejecting-mark')?.textContent ?? null }])));
    assert.deepEqual(rows['HH-FLOOD'], { rejecting: 'true', mark: 'many rejections' });
    assert.deepEqual(rows['HH-QUIET'], { rejecting: 'false', mark: null });
    await page.screenshot({ path: join(artifactsDir(), 'dashboard-rejecting-1280x800.png') });

    // In Arabic the page reads right to left and the id still reads left to right.
    await page.selectOption('#language', 'ar');
    await waitText(page, banner, /جهاز كثير الرفض/);
    assert.equal(await page.$eval(`${banner} bdi`, (b) => getComputedStyle(b).direction), 'ltr');
    // Fluent isolates each value in a right-to-left message (U+2068 … U+2069).
    assert.match(await page.locator(banner).textContent(), new RegExp(`\u2068${flood.recent}\u2069 حالة رفض`));
    await page.screenshot({ path: join(artifactsDir(), 'dashboard-rejecting-ar-1280x800.png') });
    await context.close();
  } finally {
    await browser.close();
    await site.stop();
  }
});
