// Every actor's change reaches the glass: the site coming back, a
// supervisor revoking the handheld or closing its session, an undo and a
// re-scan's refusal. A real `stockhop-site serve` (stopped and started as
// a process), the PWA in Debian's headless Chromium at 480×800, codes
// typed as a keyboard wedge types them, the page instrumented to count
// its tones and vibrations. What each screen shows is compared with the
// ledger read over the API; each screen is photographed into artifacts/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { artifactsDir, freePort, launchBrowser, siteCommand, startSite, tempDataDir } from './lib/site.mjs';
import {
  addDevice,
  assertTouchTargets,
  allItems,
  ask,
  drained,
  epcs,
  eventually,
  importReference,
  openCount,
  openHandheld,
  openQueue,
  pickMode,
  scanBin,
  scanBurst,
  sessionHops,
  sessionOpened,
  siteRead,
  wedge,
} from './lib/handheld.mjs';
import { instrumentSignals, kindsHeard, resetSignals, takeSignals, VIBRATION } from './lib/signals.mjs';

/** More than this left of the drain's wait: its step is 16 s or 30 s (2, 4 and 8 s leave less). */
const BACKOFF_GROWN_MS = 8_000;


/** Checks the screen's touch targets, then photographs it into artifacts/. */
async function shot(page, name) {
  await assertTouchTargets(page);
  await page.screenshot({ path: join(artifactsDir(), `${name}.png`) });
}

/** Waits for the status bar's light to read `state` (`online`, `offline`, `refused`). */
function net(page, state) {
  return page.waitForFunction((s) => document.getElementById('net-status').dataset.net === s, state, { timeout: 30_000 });
}

/** The site's answer for `path` with the device token; asserts it is 200. */
async function read(site, token, path) {
  const { status, body } = await siteRead(site.base, token, path);
  assert.equal(status, 200, `GET ${path}: ${JSON.stringify(body)}`);
  return body;
}

/** A site on `dataDir`, a browser and the handheld set up as `deviceId`, its signals counted. */
async function handheld(dataDir, deviceId, token) {
  const site = await startSite({ dataDir });
  const browser = await launchBrowser();
  const { page, errors } = await openHandheld(browser, {
    pageUrl: site.base, siteUrl: site.base, token, deviceId, initScript: instrumentSignals,
  });
  return { site, browser, page, errors };
}

/** The last scan item of `epc` in the queue. */
async function scanOf(page, epc) {
  return (await allItems(page)).filter((i) => i.command === 'scan' && i.body && i.body.epc === epc).pop();
}

/** Taps Undo on the row of the last scan of `epc`; resolves with its undo item once the site answered it. */
async function undoRow(page, epc) {
  const item = await scanOf(page, epc);
  await page.click(`#results button[data-action="undo"][data-key="${item.key}"]`);
  await page.waitForSelector(`#results li[data-key="${item.key}"][data-kind="undone"]`);
  return item;
}

/** Scans `epc` again and waits until the site answered that scan (applied or refused). */
async function rescan(page, epc) {
  const before = await scanOf(page, epc);
  await scanBurst(page, [epc]);
  return eventually(async () => {
    const item = await scanOf(page, epc);
    return { ready: item.key !== before.key && ['done', 'rejected'].includes(item.state), value: item };
  }, { timeoutMs: 30_000, what: `the site's answer to the re-scan of ${epc}` });
}

test('the queue moves the moment the site answers again, not when the backoff ends; the queue screen says when it tries next', async () => {
  const dataDir = tempDataDir();
  const token = await addDevice(dataDir, 'HH-BACK');
  const units = epcs('A1', 3);
  await importReference(dataDir, { bins: ['B-01'], units });
  let { site, browser, page, errors } = await handheld(dataDir, 'HH-BACK', token);
  try {
    await pickMode(page, 'op-back', 'put_away');
    const session = await sessionOpened(page);
    await scanBin(page, 'B-01');
    await drained(page);

    await site.kill();
    await net(page, 'offline');
    await scanBurst(page, units);
    // Nothing answers: the drain backs off 2, 4, 8 s, then waits 16 (more
    // than 8 s left of a wait is a step of 16 s or 30 s).
    const grown = await eventually(async () => {
      const report = await ask(page, { type: 'wake' });
      const at = report.ok && report.next_attempt_at ? Date.parse(report.next_attempt_at) : null;
      return { ready: at != null && at - Date.now() > BACKOFF_GROWN_MS, value: { ...report, at } };
    }, { timeoutMs: 60_000, what: 'the backoff to grow to 16 s' });
    await openQueue(page);
    await page.waitForFunction(() => /^Next try at \d\d:\d\d:\d\d/.test(document.getElementById('queue-next').textContent));
    await shot(page, 'actors-queue-next-try');
    await page.click('#queue-back');

    site = await startSite({ dataDir, port: site.port });
    const answering = Date.now();
    const firstApplied = await eventually(async () => {
      const done = (await allItems(page)).filter((i) => i.command === 'scan' && units.includes(i.body.epc) && i.state === 'done');
      return { ready: done.length > 0, value: Math.min(...done.map((i) => i.updated_at)) };
    }, { timeoutMs: 60_000, intervalMs: 100, what: 'the first item applied' });
    console.log(`site answering again → first item applied: ${firstApplied - answering} ms; `
      + `the backoff alone would have sent it ${grown.at - answering} ms after`);
    assert.ok(firstApplied < grown.at,
      `applied ${firstApplied - answering} ms after the site answered, before the backoff's next try (${grown.at - answering} ms)`);
    await drained(page);
    const scans = (await allItems(page)).filter((i) => i.command === 'scan' && units.includes(i.body.epc)).map((i) => i.key);
    const hops = await sessionHops(site.base, token, session);
    assert.deepEqual(hops.filter((hop) => scans.includes(hop.key)).map((hop) => hop.key).sort(), scans.sort(), 'each scan applied once');
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await site.stop();
  }
});

test('a revoked handheld turns the bar red with words, keeps every scan and no longer says it is on its way', async () => {
  const dataDir = tempDataDir();
  const token = await addDevice(dataDir, 'HH-REV');
  const units = epcs('A2', 3);
  await importReference(dataDir, { bins: ['R-01'], units });
  const { site, browser, page, errors } = await handheld(dataDir, 'HH-REV', token);
  try {
    await pickMode(page, 'op-rev', 'put_away');
    await sessionOpened(page);
    await scanBin(page, 'R-01');
    await drained(page);
    assert.equal(await page.getAttribute('#net-status', 'data-net'), 'online');

    await siteCommand(['device', 'revoke', 'HH-REV', '--data', dataDir]);
    // The next contact, a reference pull (as the menu's refresh asks), hears 401.
    const pull = await ask(page, { type: 'reference_refresh' });
    assert.match(JSON.stringify(pull.error), /401/);
    await net(page, 'refused');
    await page.waitForSelector('#refused-banner:not([hidden])');
    assert.match(await page.textContent('#refused-banner'), /This handheld is no longer allowed on the site: ask a supervisor to set it up again\./);
    assert.equal(await page.textContent('#net-status'), 'Not allowed');
    assert.match(await page.getAttribute('#status-bar', 'aria-label'), /^Not allowed, \d+ waiting/);

    await resetSignals(page);
    await scanBurst(page, units);
    const last = await scanOf(page, units[2]);
    await page.waitForFunction((key) => /NOT sent: this handheld is not allowed on the site/
      .test(document.querySelector(`#results li[data-key="${key}"]`)?.textContent || ''), last.key);
    assert.match(await page.textContent('#scan-status'), /NOT sent: this handheld is not allowed on the site/);
    assert.doesNotMatch(await page.textContent('#results'), /· kept on this device(?!, NOT sent)/, 'no row claims it is on its way');
    const heard = await takeSignals(page);
    assert.deepEqual(heard.vibrations, units.map(() => VIBRATION.refused), 'each scan kept while refused sounds as a refusal, not as kept');
    // Its syncs are refused too (401): the bar stays red.
    await eventually(async () => {
      const value = (await allItems(page)).filter((i) => i.command === 'scan' && /401/.test(i.reason || ''));
      return { ready: value.length > 0, value };
    }, { timeoutMs: 30_000, what: 'a sync refused 401' });
    assert.equal(await page.getAttribute('#net-status', 'data-net'), 'refused');
    await shot(page, 'actors-revoked');

    // Every scan is kept, none dropped, none applied.
    const items = (await allItems(page)).filter((i) => i.command === 'scan' && units.includes(i.body.epc));
    assert.deepEqual(items.map((i) => i.state).sort(), ['queued', 'queued', 'queued']);
    assert.equal((await siteRead(site.base, token, `/v1/units/${units[0]}`)).status, 401, 'the ledger refuses the token too');
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await site.stop();
  }
});

test('a session the site closed ends on the handheld at its next contact, with words; the next scan is not posted into it', async (t) => {
  const dataDir = tempDataDir();
  const token = await addDevice(dataDir, 'HH-CLOSED');
  const units = epcs('A3', 3);
  await importReference(dataDir, { bins: ['S-01'], units });
  const { site, browser, page, errors } = await handheld(dataDir, 'HH-CLOSED', token);
  try {
    await pickMode(page, 'op-closed', 'put_away');
    const session = await sessionOpened(page);
    await scanBin(page, 'S-01');
    await scanBurst(page, [units[0]]);
    await drained(page);

    await siteCommand(['device', 'close-session', 'HH-CLOSED', '--data', dataDir]);
    // The site tells a closed session in its heartbeat's answer and refuses
    // a later scan in it `session_closed`; a site without either cannot be
    // followed.
    const beat = await fetch(`${site.base}/v1/devices/HH-CLOSED/heartbeat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ sent_at: new Date().toISOString(), queue_depth: 0, app_version: 'e2e' }),
    });
    const ack = beat.ok ? await beat.json() : {};
    if (!Array.isArray(ack.closed_sessions)) {
      t.skip(`this site does not list closed sessions in its heartbeat answer yet (${beat.status})`);
      return;
    }
    assert.ok(ack.closed_sessions.some((c) => c.session_id === session), 'the site lists the closed session');

    // The next contact: this scan's sync (refused `session_closed`) and the heartbeat after it.
    await scanBurst(page, [units[1]]);
    await page.waitForSelector('#screen-picker:not([hidden])', { timeout: 30_000 });
    assert.match(await page.textContent('#picker-status'), /A supervisor closed this session at the site\. .*scan your badge to start again/);
    assert.equal(await page.textContent('#picker-prompt'), 'Scan your operator badge');
    assert.equal(await page.getAttribute('#picker-prompt', 'class'), 'prompt');
    await shot(page, 'actors-session-closed');
    const itemsBefore = (await allItems(page)).filter((i) => i.session_id === session).length;
    // The next scan is a badge, never a scan posted into the closed session.
    await wedge(page, 'op-closed');
    await page.waitForFunction(() => document.getElementById('operator').textContent === 'op-closed');
    assert.equal((await allItems(page)).filter((i) => i.session_id === session).length, itemsBefore);
    await pickMode(page, 'op-closed', 'put_away');
    const next = await sessionOpened(page);
    assert.notEqual(next, session);
    await scanBin(page, 'S-01');
    await scanBurst(page, [units[2]]);
    await drained(page);
    const last = await scanOf(page, units[2]);
    assert.equal(last.session_id, next, 'the scan after the close is in the new session');
    assert.ok((await sessionHops(site.base, token, next)).some((h) => h.key === last.key), 'and the ledger applied it there');
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await site.stop();
  }
});

test('each outcome is heard as its kind: the dock stop and a late refusal as the alert, context scans as a tick; sound off silences all', async () => {
  const dataDir = tempDataDir();
  const token = await addDevice(dataDir, 'HH-SIG');
  const onManifest = epcs('A4', 2);
  const [offManifest, stranger] = epcs('A5', 2);
  const fresh = epcs('A6', 1);
  await importReference(dataDir, {
    bins: ['P-01'],
    unitRows: [...onManifest, offManifest].map((epc) => ({ epc, sku: 'SKU-D', state: 'in_stock', bin: 'P-01' })),
    manifests: onManifest.map((epc) => ({ manifest: 'M-SIG', state: 'packing', epc })),
    grns: [{ grn: 'GRN-SIG', qc: 'accepted', sku: 'SKU-N', expected: 1 }],
  });
  let { site, browser, page, errors } = await handheld(dataDir, 'HH-SIG', token);
  const tally = {};
  /** Runs `act` and records what it was heard as under `outcome`. */
  const heardFor = async (outcome, act, settle) => {
    await resetSignals(page);
    await act();
    if (settle) await settle();
    else await page.waitForTimeout(300);
    const heard = await takeSignals(page);
    tally[outcome] = { kinds: kindsHeard(heard), vibrate: heard.vibrations.length, tones: heard.tones.length };
    return tally[outcome];
  };
  try {
    assert.deepEqual((await heardFor('badge accepted', () => pickMode(page, 'op-sig', 'dispatch_verify'))).kinds, ['acknowledge']);
    assert.deepEqual((await heardFor('manifest accepted', () => wedge(page, 'M-SIG'), () => sessionOpened(page))).kinds, ['acknowledge']);
    assert.deepEqual((await heardFor('scan kept', () => scanBurst(page, [onManifest[0]]))).kinds, ['kept']);
    const stop = await heardFor('dock stop: not on the manifest', () => wedge(page, offManifest), () => page.waitForSelector('#alert:not([hidden])'));
    assert.deepEqual(stop.kinds, ['alert']);
    assert.equal(stop.vibrate, 1);
    await shot(page, 'actors-dock-stop');
    await heardFor('alert acknowledged', () => wedge(page, 'STOCKHOP:CONFIRM'), () => page.waitForSelector('#alert', { state: 'hidden' }));
    await drained(page);
    // The ledger's refusal of the unmatched tag is not announced a second time.
    assert.deepEqual((await heardFor('its refusal answered', () => page.waitForTimeout(2_500))).kinds, []);
    // The last scan is the refused one: UNDO has nothing to undo.
    assert.deepEqual((await heardFor('nothing to undo', () => wedge(page, 'STOCKHOP:UNDO'),
      () => page.waitForFunction(() => /Nothing to undo/.test(document.getElementById('scan-status').textContent)))).kinds, ['acknowledge']);
    await wedge(page, 'STOCKHOP:MODE');
    await page.waitForSelector('#screen-picker:not([hidden])');

    await pickMode(page, 'op-sig', 'put_away');
    await sessionOpened(page);
    assert.deepEqual((await heardFor('bin accepted', () => scanBin(page, 'P-01'))).kinds, ['acknowledge']);
    assert.deepEqual((await heardFor('refused here', () => wedge(page, 'GRN-SIG'), () => page.waitForFunction(() => /not a unit or a bin label/.test(document.getElementById('scan-status').textContent)))).kinds, ['refused']);
    await wedge(page, 'STOCKHOP:MODE');
    await page.waitForSelector('#screen-picker:not([hidden])');

    await pickMode(page, 'op-sig', 'receive');
    await page.click('#mode-choices button[data-grn="GRN-SIG"]');
    await sessionOpened(page);
    assert.deepEqual((await heardFor('SKU label accepted', () => wedge(page, 'SKU-N'), () => page.waitForFunction(() => document.getElementById('receive-sku').textContent === 'SKU SKU-N'))).kinds, ['acknowledge']);
    await wedge(page, 'STOCKHOP:MODE');
    await page.waitForSelector('#screen-picker:not([hidden])');

    await pickMode(page, 'op-sig', 'find_unit');
    assert.deepEqual((await heardFor('find result', () => wedge(page, onManifest[1]), () => page.waitForSelector('#find-result[data-found="true"]'))).kinds, ['acknowledge']);
    await wedge(page, 'STOCKHOP:MODE');
    await page.waitForSelector('#screen-picker:not([hidden])');

    // A refusal that comes after an outage: the alert, and its banner.
    await pickMode(page, 'op-sig', 'put_away');
    await sessionOpened(page);
    await scanBin(page, 'P-01');
    assert.equal((await site.stop()).code, 0);
    await net(page, 'offline');
    await scanBurst(page, [stranger]);
    site = await startSite({ dataDir, port: site.port });
    const late = await heardFor('late refusal', () => page.waitForSelector('#late-banner:not([hidden])', { timeout: 60_000 }), () => page.waitForTimeout(300));
    assert.deepEqual(late.kinds, ['alert']);
    await page.click('#late-seen');

    // Sound and vibration off: nothing at all.
    await page.click('#menu-button');
    await page.click('#menu-signals');
    await page.click('#menu-back');
    const off = await heardFor('signals off: bin, kept, refused', async () => {
      await scanBin(page, 'P-01');
      await scanBurst(page, [fresh[0]]);
      await wedge(page, 'GRN-SIG');
    }, () => page.waitForFunction(() => /not a unit or a bin label/.test(document.getElementById('scan-status').textContent)));
    assert.deepEqual(off, { kinds: [], vibrate: 0, tones: 0 });
    console.log('sound and vibration calls per outcome:');
    for (const [outcome, { kinds, vibrate, tones }] of Object.entries(tally)) {
      console.log(`  ${outcome}: ${kinds.join('+') || 'silent'} (${vibrate} vibrate, ${tones} tones)`);
    }
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await site.stop();
  }
});

test('dispatch verify: after an undo and a refused re-scan the ticks and the figure are the ledger\'s', async () => {
  const dataDir = tempDataDir();
  const token = await addDevice(dataDir, 'HH-FIG-D');
  const units = epcs('B1', 8);
  await importReference(dataDir, {
    bins: ['D-01'],
    unitRows: units.map((epc) => ({ epc, sku: 'SKU-D', state: 'in_stock', bin: 'D-01' })),
    manifests: units.map((epc) => ({ manifest: 'M-8', state: 'packing', epc })),
  });
  const { site, browser, page, errors } = await handheld(dataDir, 'HH-FIG-D', token);
  try {
    await pickMode(page, 'op-fig', 'dispatch_verify');
    await wedge(page, 'M-8');
    await sessionOpened(page);
    await scanBurst(page, units.slice(0, 6));
    await drained(page);
    await page.waitForFunction(() => document.getElementById('manifest-verified').textContent === '6');

    await undoRow(page, units[5]);
    // At once, before the site has it: the tick is off, marked as waiting.
    assert.equal(await page.textContent('#manifest-verified'), '5');
    assert.match(await page.getAttribute(`#manifest-units li[data-epc="${units[5]}"]`, 'data-verified'), /^(undo-waiting|false)$/);
    await drained(page);
    const again = await rescan(page, units[5]);
    await drained(page);
    const ledger = await read(site, token, '/v1/manifests/M-8');
    const ledgerVerified = ledger.units.filter((u) => u.verified).length;
    const shown = await eventually(async () => {
      const value = await page.evaluate(() => ({
        verified: document.getElementById('manifest-verified').textContent,
        ticks: Object.fromEntries([...document.querySelectorAll('#manifest-units li')].map((li) => [li.dataset.epc, li.dataset.verified])),
      }));
      return { ready: value.verified === String(ledgerVerified), value };
    }, { timeoutMs: 10_000, what: 'the screen to show the ledger\'s figure' });
    console.log(`dispatch verify: re-scan ${again.state}${again.reason ? ` ${again.reason}` : ''}; screen ${shown.verified}/${units.length}, ledger ${ledgerVerified}/${units.length} (${ledger.state})`);
    assert.deepEqual(shown.ticks, Object.fromEntries(ledger.units.map((u) => [u.epc, String(u.verified)])), 'each tick is the ledger\'s');
    await shot(page, 'actors-dispatch-figures');
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await site.stop();
  }
});

test('receive: after an undo and a re-scan the received and queued figures are the ledger\'s and agree with the bar', async () => {
  const dataDir = tempDataDir();
  const token = await addDevice(dataDir, 'HH-FIG-R');
  const units = epcs('B2', 3);
  await importReference(dataDir, {
    unitRows: units.map((epc) => ({ epc, sku: 'SKU-R', state: 'new' })),
    grns: [{ grn: 'GRN-R', qc: 'accepted', sku: 'SKU-R', expected: 3 }],
  });
  const { site, browser, page, errors } = await handheld(dataDir, 'HH-FIG-R', token);
  const cells = () => page.$$eval('#grn-lines tr[data-sku="SKU-R"] td', (tds) => tds.map((td) => td.textContent));
  try {
    await pickMode(page, 'op-fig', 'receive');
    await page.click('#mode-choices button[data-grn="GRN-R"]');
    await sessionOpened(page);
    await scanBurst(page, units);
    await drained(page);
    await undoRow(page, units[2]);
    await drained(page);
    const again = await rescan(page, units[2]);
    await drained(page);
    const ledger = await read(site, token, '/v1/grns/GRN-R');
    const shown = await eventually(async () => {
      const value = await cells();
      return { ready: value[2] === String(ledger.lines[0].received), value };
    }, { timeoutMs: 10_000, what: 'the table to show the ledger\'s received' });
    console.log(`receive: re-scan ${again.state}${again.reason ? ` ${again.reason}` : ''}; screen received ${shown[2]} queued ${shown[3]}, ledger received ${ledger.lines[0].received}`);
    assert.equal(shown[3], '0', 'nothing waits');
    // The bar is redrawn from the worker's next count, a moment after the drain.
    const bar = await eventually(async () => {
      const value = await page.textContent('#bar-queue');
      return { ready: value === '0', value };
    }, { timeoutMs: 10_000, what: 'the bar to show nothing waiting' });
    assert.equal(bar, '0', 'the bar agrees: nothing waits');
    await shot(page, 'actors-receive-figures');

    // A short session closed: the picker sums it up.
    await page.click('#session-close');
    await page.waitForSelector('#screen-picker:not([hidden])');
    assert.match(await page.textContent('#picker-status'), /^Receive GRN-R closed: 4 scans, \d applied, 1 of them undone, \d refused, 0 waiting to go\./);
    await shot(page, 'actors-receive-summary');
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await site.stop();
  }
});

test('cycle count: after an undo and a re-scan the seen, missing and unexpected figures are the ledger\'s', async () => {
  const dataDir = tempDataDir();
  const token = await addDevice(dataDir, 'HH-FIG-C');
  const units = epcs('B3', 4);
  await importReference(dataDir, {
    binRows: [{ bin: 'C-01', zone: 'Z-F', location: 'L-1' }],
    unitRows: units.map((epc) => ({ epc, sku: 'SKU-C', state: 'in_stock', bin: 'C-01' })),
  });
  const countId = await openCount(dataDir, { location: 'L-1', zone: 'Z-F' });
  const { site, browser, page, errors } = await handheld(dataDir, 'HH-FIG-C', token);
  try {
    await pickMode(page, 'op-fig', 'cycle_count');
    await page.waitForSelector(`#mode-choices button[data-count="${countId}"]`);
    await page.click(`#mode-choices button[data-count="${countId}"]`);
    await sessionOpened(page);
    await scanBin(page, 'C-01');
    await scanBurst(page, units.slice(0, 3));
    await drained(page);
    await undoRow(page, units[2]);
    assert.equal(await page.textContent('#count-seen'), '2', 'the undone tag comes off at once');
    await drained(page);
    const again = await rescan(page, units[2]);
    await drained(page);
    const ledger = await read(site, token, `/v1/counts/${countId}`);
    const want = [ledger.seen, ledger.missing.length, ledger.unexpected.length].map(String);
    const shown = await eventually(async () => {
      const value = await page.evaluate(() => ['count-seen', 'count-missing', 'count-unexpected'].map((id) => document.getElementById(id).textContent));
      return { ready: JSON.stringify(value) === JSON.stringify(want), value };
    }, { timeoutMs: 10_000, what: `the count's figures ${want}` });
    console.log(`cycle count: re-scan ${again.state}${again.reason ? ` ${again.reason}` : ''}; screen seen/missing/unexpected ${shown.join('/')}, ledger ${want.join('/')}`);
    await shot(page, 'actors-count-figures');
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await site.stop();
  }
});

test('put-away: a code the site knows as neither unit nor bin is told so and the bin stays; older rows keep their Undo; the glass is labelled', async () => {
  const dataDir = tempDataDir();
  const token = await addDevice(dataDir, 'HH-PUT');
  const units = epcs('B4', 6);
  await importReference(dataDir, { bins: ['E-03-01', 'E-03-02'], units });
  const { site, browser, page, errors } = await handheld(dataDir, 'HH-PUT', token);
  try {
    // Before a badge: the big prompt says so, the modes wait below it.
    assert.equal(await page.textContent('#picker-prompt'), 'Scan your operator badge');
    assert.equal(await page.getAttribute('#picker-prompt', 'class'), 'prompt');
    const below = await page.evaluate(() => document.getElementById('picker-prompt').getBoundingClientRect().bottom
      <= document.getElementById('picker-modes').getBoundingClientRect().top);
    assert.ok(below, 'the modes wait below the prompt');
    await shot(page, 'actors-picker-badge-first');

    await pickMode(page, 'op-put', 'put_away');
    const session = await sessionOpened(page);
    await scanBin(page, 'E-03-01');
    const before = (await allItems(page)).length;
    await wedge(page, 'Q-99-99');
    await page.waitForFunction(() => /Q-99-99 is neither a unit nor a bin label the site knows: not captured\./.test(document.getElementById('scan-status').textContent));
    assert.match(await page.textContent('#results li:first-child'), /The bin is still E-03-01/);
    assert.match(await page.textContent('#scan-bin'), /^Bin E-03-01:/);
    assert.equal((await allItems(page)).length, before, 'nothing queued for it');
    await shot(page, 'actors-put-away-unknown');

    // Six scans: the first keeps its Undo while within the window.
    await scanBurst(page, units);
    const first = await scanOf(page, units[0]);
    await page.waitForSelector(`#results button[data-action="undo"][data-key="${first.key}"]`);
    await page.click('#results-more');
    assert.ok(await page.locator('#results li').count() > 6, 'every row is reachable');
    await drained(page);
    const keys = (await allItems(page)).filter((i) => i.command === 'scan' && units.includes(i.body.epc)).map((i) => i.key);
    assert.equal((await sessionHops(site.base, token, session)).filter((h) => keys.includes(h.key)).length, units.length);

    // The bar's name carries its figures (its next redraw after the drain);
    // the dock's counts have words.
    await page.waitForFunction(() => /^Online, 0 waiting, /.test(document.getElementById('status-bar').getAttribute('aria-label') ?? ''));
    assert.match(await page.getAttribute('#status-bar', 'aria-label'), /^Online, 0 waiting, .*cache .*\. Opens the queue screen\.$/);
    const counted = await page.$$eval('.dock-counts > span', (spans) => spans.map((span) => [...span.children]
      .filter((child) => child.getAttribute('aria-hidden') !== 'true').map((child) => child.textContent).join('')));
    assert.deepEqual(counted.map((words) => words.replace(/^\d+/, 'N')), ['N captured', 'N could not be written', 'N turned away'], 'the counts read as words');
    // Reduced motion: a fresh row does not flash.
    await page.emulateMedia({ reducedMotion: 'reduce' });
    await scanBin(page, 'E-03-02');
    assert.equal(await page.evaluate(() => getComputedStyle(document.querySelector('#results li')).animationName), 'none');
    await shot(page, 'actors-put-away-rows');
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await site.stop();
  }
});

test('setup from a link names its failure: a revoked token keeps the link\'s values and says so', async () => {
  const dataDir = tempDataDir();
  const token = await addDevice(dataDir, 'HH-LINK');
  await siteCommand(['device', 'revoke', 'HH-LINK', '--data', dataDir]);
  const site = await startSite({ dataDir });
  const browser = await launchBrowser();
  try {
    const page = await (await browser.newContext({ viewport: { width: 480, height: 800 } })).newPage();
    const errors = [];
    page.on('pageerror', (err) => errors.push(String(err)));
    const fragment = new URLSearchParams({ site: site.base, token, device: 'HH-LINK' });
    await page.goto(`${site.base}/#${fragment}`);
    await page.waitForSelector('body[data-ready="true"]');
    await page.waitForFunction(() => document.getElementById('setup-status').dataset.failure === 'token');
    assert.match(await page.textContent('#setup-status'), /refused the device token \(401\).*HH-LINK was revoked/);
    assert.equal(await page.inputValue('#device-token'), token, 'the link\'s token stays in the field');
    assert.equal(await page.inputValue('#device-id'), 'HH-LINK');
    await shot(page, 'actors-setup-link-revoked');

    // A wrong port is named: the site's plain port given as its HTTPS
    // one is told as such; a port nothing listens on cannot be told from a
    // refused certificate by a page (a failed fetch says no more), so the
    // words name both, with a trust link that opens: http, the plain port.
    const save = async (url) => {
      await page.fill('#site-url', url);
      await page.click('#setup-save');
      await page.waitForFunction(() => !/^Checking/.test(document.getElementById('setup-status').textContent), null, { timeout: 20_000 });
      return { failure: await page.getAttribute('#setup-status', 'data-failure'), words: await page.textContent('#setup-status') };
    };
    const plain = await save(`https://127.0.0.1:${site.port}`);
    assert.equal(plain.failure, 'port', plain.words);
    assert.match(plain.words, new RegExp(`^Port ${site.port} of 127\\.0\\.0\\.1 answers plain HTTP, not HTTPS: it is the site's plain port\\.`));
    await shot(page, 'actors-setup-plain-port');
    const closed = await freePort();
    const nothing = await save(`https://127.0.0.1:${closed}`);
    assert.ok(['unreachable', 'certificate'].includes(nothing.failure), nothing.words);
    assert.match(nothing.words, new RegExp(`port ${closed}`));
    if (nothing.failure === 'certificate') assert.match(nothing.words, new RegExp(`open http://127\\.0\\.0\\.1:${site.port}/trust\\.html`));
    await shot(page, 'actors-setup-closed-port');
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await site.stop();
  }
});
