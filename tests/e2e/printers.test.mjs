// Receive with encode at the station's printer, end to end: a real
// `stockhop-site serve` with a label printer added for the handheld's
// station (`printer add --station`), a ZT411R stand-in on the raw port on
// loopback (lib/printer.mjs), and the PWA in Debian's headless Chromium at
// 480×800. Each receive scan with encode has the site print and encode the
// unit's label at the stand-in; the ENCODE hop posts only when the tag
// reads back as written. What the receive screen says of each label is
// compared with what the ledger holds (its hops, read with an admin token)
// and with what the stand-in printed. The screen is photographed into
// artifacts/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { artifactsDir, launchBrowser, siteCommand, startSite, tempDataDir } from './lib/site.mjs';
import { addDevice, assertTouchTargets, epcs, eventually, importReference, openHandheld, pickMode, sessionOpened, siteRead, wedge } from './lib/handheld.mjs';
import { startPrinter } from './lib/printer.mjs';

/** Every hop of the ledger, in commit order, through the hop feed (admin token). */
async function ledgerHops(base, admin) {
  const hops = [];
  let after = '';
  for (;;) {
    const res = await fetch(`${base}/v1/hops?limit=1000${after ? `&after=${after}` : ''}`, { headers: { authorization: `Bearer ${admin}` } });
    assert.equal(res.status, 200, `GET /v1/hops: ${res.status}`);
    const page = await res.json();
    hops.push(...page.hops);
    if (page.hops.length === 0) return hops;
    after = page.next;
  }
}

/** The receive screen's label line of the scan row `key`: its state, reason and words. */
function labelOf(page, key) {
  return page.evaluate((k) => {
    const span = document.querySelector(`#results li[data-key="${k}"] .label`);
    return span ? { state: span.dataset.jobState, reason: span.dataset.reason ?? null, text: span.textContent } : null;
  }, key);
}

/** Scans `epc` and resolves with the key of the row it made (the newest). */
async function scanTag(page, epc) {
  const before = Number(await page.textContent('#scan-count'));
  await wedge(page, epc);
  await page.waitForFunction((n) => Number(document.getElementById('scan-count').textContent) > n, before);
  return page.getAttribute('#results li:first-child', 'data-key');
}

/** Waits until the row `key`'s label says the job settled in `state`. */
function labelSettled(page, key, state) {
  return page.waitForFunction(
    ([k, s]) => document.querySelector(`#results li[data-key="${k}"] .label`)?.dataset.jobState === s,
    [key, state],
    { timeout: 30_000 },
  );
}

test('receive with encode: the station printer prints and encodes each label, and the screen says what the ledger decided', async () => {
  const dataDir = tempDataDir();
  const token = await addDevice(dataDir, 'HH-ENC');
  const admin = (await siteCommand(['admin', 'add', 'supervisor', '--data', dataDir])).trim();
  const [good, wrong, voided] = epcs('E5', 3);
  await importReference(dataDir, { grns: [{ grn: 'GRN-ENC', qc: 'accepted', sku: 'SKU-E', expected: 3 }] });
  const printer = await startPrinter();
  await siteCommand(['printer', 'add', 'ZT-E2E', '--address', printer.address, '--station', 'HH-ENC', '--data', dataDir]);
  const site = await startSite({ dataDir });
  const browser = await launchBrowser();
  try {
    const { page, errors } = await openHandheld(browser, { pageUrl: site.base, siteUrl: site.base, token, deviceId: 'HH-ENC' });
    // The site visits the printer as it starts: it answers its host status.
    await printer.until('a host status answer', () => printer.statusAnswers > 0);

    await pickMode(page, 'op-enc', 'receive');
    await page.click('#mode-choices button[data-grn="GRN-ENC"]');
    const session = await sessionOpened(page);
    await page.waitForSelector('#grn-lines tr[data-sku="SKU-E"]');
    await page.click('#encode-toggle');
    assert.equal(await page.getAttribute('#encode-toggle', 'aria-pressed'), 'true');
    await page.waitForSelector('#station-printer[data-state="ready"][data-printer="ZT-E2E"]');
    assert.match(await page.textContent('#station-printer'), /Labels print and encode at ZT-E2E/);
    await page.focus('#scan-input');
    await wedge(page, 'SKU-E');
    await page.waitForFunction(() => document.getElementById('receive-sku').textContent === 'SKU SKU-E');

    // A tag that reads back as written: printed, and its ENCODE posts.
    const goodKey = await scanTag(page, good);
    await labelSettled(page, goodKey, 'printed');
    const goodLabel = await labelOf(page, goodKey);
    assert.match(goodLabel.text, /Tag written and read back at ZT-E2E: ENCODE recorded/);
    const goodJob = await siteRead(site.base, token, `/v1/devices/HH-ENC/print-jobs/${goodKey}`);
    assert.equal(goodJob.status, 200);
    assert.equal(goodJob.body.job.state, 'printed');
    assert.equal(goodJob.body.job.read_back, good);
    assert.equal(printer.printedOf(goodJob.body.job.job_id), 1, 'printed once');
    assert.equal(printer.printed.find((p) => p.jobId === goodJob.body.job.job_id).written, good, 'the stand-in was asked to write the scanned EPC');

    // A tag that reads back wrong: refused, no ENCODE, and the screen says a person decides.
    printer.faults.wrong_read_back = 'E28000000000000000000BAD';
    const wrongKey = await scanTag(page, wrong);
    await labelSettled(page, wrongKey, 'refused');
    const wrongLabel = await labelOf(page, wrongKey);
    assert.equal(wrongLabel.reason, 'read_back_mismatch');
    assert.match(wrongLabel.text, /read back wrong at ZT-E2E: wrote .*, read E28000000000000000000BAD; no ENCODE/);
    assert.match(wrongLabel.text, /a supervisor decides on the site's view/);

    // A void tag: nothing reads back.
    printer.faults.wrong_read_back = null;
    printer.faults.void_tag = true;
    const voidKey = await scanTag(page, voided);
    await labelSettled(page, voidKey, 'refused');
    const voidLabel = await labelOf(page, voidKey);
    assert.equal(voidLabel.reason, 'void_tag');
    assert.match(voidLabel.text, /Void tag at ZT-E2E: nothing read back, so no ENCODE/);

    await page.waitForFunction(() => document.querySelectorAll('#results li[data-kind="applied"]').length >= 3);
    await assertTouchTargets(page, 'button, a, input');
    await page.screenshot({ path: join(artifactsDir(), 'screen-receive-encode.png') });
    // The scan rows, each with its label's outcome in words.
    await page.evaluate(() => document.getElementById('results').scrollIntoView({ block: 'start' }));
    await page.screenshot({ path: join(artifactsDir(), 'screen-receive-encode-labels.png') });

    // The ledger: a RECEIVE from the handheld for each tag, and an ENCODE
    // from the printer for the one that read back as written, only.
    const hops = await eventually(async () => {
      const value = await ledgerHops(site.base, admin);
      return { ready: value.filter((h) => h.kind === 'RECEIVE').length === 3, value };
    }, { timeoutMs: 10_000, what: 'three RECEIVE hops' });
    const receives = hops.filter((h) => h.kind === 'RECEIVE');
    assert.deepEqual(receives.map((h) => [h.epc, h.device_id, h.session_id]), [good, wrong, voided].map((epc) => [epc, 'HH-ENC', session]));
    const encodes = hops.filter((h) => h.kind === 'ENCODE');
    assert.deepEqual(encodes.map((h) => [h.epc, h.device_id]), [[good, 'ZT-E2E']], 'one ENCODE, from the printer, for the tag that read back');
    assert.equal(encodes[0].hop_id, goodJob.body.job.hop_id, 'the hop the screen reported is the ledger\'s');

    // Each label the screen shows matches the job the ledger settled.
    for (const [key, label] of [[goodKey, goodLabel], [wrongKey, wrongLabel], [voidKey, voidLabel]]) {
      const { body } = await siteRead(site.base, token, `/v1/devices/HH-ENC/print-jobs/${key}`);
      assert.equal(label.state, body.job.state, `${key}: the screen says what the ledger holds`);
      assert.equal(label.reason, body.job.reason ?? null);
      assert.equal(printer.printedOf(body.job.job_id), 1, 'each label printed once');
    }
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await site.stop();
    await printer.close();
  }
});
