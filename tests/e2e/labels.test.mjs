// Real labels end to end: GS1-128 element strings (a `]C1` prefix, the
// group separator as ASCII 29 and as the site's `~`), a GS1 Digital Link
// and SGTIN EPCs typed into the scan field as a keyboard wedge types
// them, in put-away, receive, dispatch verify (a pallet by its SSCC) and
// find a unit, against a real `stockhop-site serve` with GS1 reference
// data; each screen compared with the ledger read over the API and
// photographed into artifacts/. A malformed label is refused on the
// screen in the parser's words and nothing is queued (the queue read
// through the page's own `window.stockhop.ask`). Then the parse time per
// label through the worker is printed (p50/p99; measured, not asserted).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { artifactsDir, launchBrowser, siteCommand, startSite, tempDataDir } from './lib/site.mjs';
import {
  addDevice,
  allItems,
  ask,
  drained,
  epcs,
  importReference,
  openHandheld,
  pickMode,
  scanBin,
  sessionOpened,
  siteRead,
} from './lib/handheld.mjs';

/** ASCII 29, the group separator a scanner sends for FNC1. */
const GS = '\x1d';
/** Labels timed through the worker for the parse-time figures. */
const TIMED_LABELS = 10_000;

/** The GS1 check digit of `digits` (mod 10, weights 3 and 1 from the right): test data only. */
function checkDigit(digits) {
  let sum = 0;
  [...digits].reverse().forEach((d, i) => { sum += Number(d) * (i % 2 === 0 ? 3 : 1); });
  return String((10 - (sum % 10)) % 10);
}

const GTIN_G = '09521101530001';
/** TDS's SGTIN-96 example, urn:epc:id:sgtin:0614141.812345.6789: GTIN 80614141123458, serial 6789. */
const SGTIN_EPC = '3074257BF7194E4000001A85';
const GTIN_T = '80614141123458';
const SSCC = `10614141123456789${checkDigit('10614141123456789')}`;

/** Imports `kind` rows (CSV text after its header) into the site's data. */
async function importCsv(dataDir, kind, text) {
  const file = join(tempDataDir(), `${kind}.csv`);
  writeFileSync(file, text);
  await siteCommand(['import', kind, file, '--data', dataDir]);
}

/** Types `code` into the scan field as a wedge does, control characters included, then Enter. */
async function wedgeText(page, code) {
  await page.focus('#scan-input');
  await page.keyboard.insertText(code);
  await page.keyboard.press('Enter');
}

/** The site's answer for `path` with the device token; asserts it is 200. */
async function read(site, token, path) {
  const { status, body } = await siteRead(site.base, token, path);
  assert.equal(status, 200, `GET ${path}: ${JSON.stringify(body)}`);
  return body;
}

async function shot(page, name) {
  await page.screenshot({ path: join(artifactsDir(), `${name}.png`) });
}

/** Waits until the page has counted `n` scans captured. */
function captured(page, n) {
  return page.waitForFunction((count) => Number(document.getElementById('scan-count').textContent) >= count, n, { timeout: 20_000 });
}

/** Closes the open session from the mode screen and waits for the picker. */
async function backToPicker(page) {
  await page.click('#session-close');
  await page.waitForSelector('#screen-picker:not([hidden])');
}

test('GS1 labels in put-away, receive, dispatch verify and find match the ledger; a malformed label is refused before it is queued', async () => {
  const dataDir = tempDataDir();
  const token = await addDevice(dataDir, 'HH-GS1');
  const [pa1, pa2, pa3, dv1, dv2, dv3, rc1] = epcs('C1', 7);
  const [fresh] = epcs('C2', 1);
  await importReference(dataDir, { bins: ['B-01', 'B-02'] });
  await importCsv(dataDir, 'skus', `sku,gtin\nSKU-G,${GTIN_G}\nSKU-T,${GTIN_T}\n`);
  await importCsv(dataDir, 'units', 'epc,code,sku,state,bin,gtin,serial,lot,expiry\n'
    + [[pa1, 'PA-1'], [pa2, 'PA-2'], [pa3, 'PA-3'], [dv1, 'DV-1'], [dv2, 'DV-2'], [dv3, 'DV-3']]
      .map(([epc, serial]) => `${epc},,SKU-G,in_stock,B-01,${GTIN_G},${serial},,\n`).join('')
    + `${rc1},,SKU-T,new,,${GTIN_T},R-1,,\n`);
  await importCsv(dataDir, 'manifests', `manifest,state,epc,sscc\nM-1,packing,${dv1},${SSCC}\nM-1,packing,${dv2},${SSCC}\nM-1,packing,${dv3},\n`);
  await importReference(dataDir, { grns: [{ grn: 'GRN-G', qc: 'accepted', sku: 'SKU-T', expected: 3 }] });

  const site = await startSite({ dataDir });
  const browser = await launchBrowser();
  try {
    const { page, errors } = await openHandheld(browser, { pageUrl: site.base, siteUrl: site.base, token, deviceId: 'HH-GS1' });
    // The cache holds the units' GS1 keys and the SKUs before any scan.
    await page.waitForFunction(async () => {
      const status = await window.stockhop.ask({ type: 'reference_status' });
      return status.ok && status.complete && status.units >= 7;
    }, null, { timeout: 30_000 });

    // Put-away: a bin, then three units by their labels: GS1-128 with `]C1`
    // and ASCII 29, with the site's `~` and no prefix, and a Digital Link.
    await pickMode(page, 'op-gs1', 'put_away');
    await sessionOpened(page);
    await scanBin(page, 'B-02');
    await wedgeText(page, `]C101${GTIN_G}21PA-1${GS}10LOT-1`);
    await wedgeText(page, `~01${GTIN_G}21PA-2~10LOT-1`);
    await wedgeText(page, `https://id.example.com/01/${GTIN_G}/21/PA-3?17=271231`);
    await captured(page, 3);

    // A malformed label: refused on the screen in the parser's words, the
    // AI named and the code in small print, and nothing queued.
    const before = (await allItems(page)).length;
    await wedgeText(page, ']C1010952110153000221PA-9');
    await page.waitForFunction(() => document.getElementById('scan-refused').textContent === '1');
    const status = await page.textContent('#scan-status');
    assert.match(status, /check digit of \(01\) 09521101530002 should be 1/, status);
    // The row is drawn after the dock's count moves: wait for it.
    await page.waitForSelector('#results li[data-kind="refused"] .code');
    const refusedCode = await page.$eval('#results li[data-kind="refused"] .code', (small) => small.textContent);
    assert.equal(refusedCode, 'label_check_digit', 'the code in small print');
    assert.equal((await allItems(page)).length, before, 'a refused label is not queued');
    await wedgeText(page, `]C101${GTIN_G}17271399`);
    await page.waitForFunction(() => document.getElementById('scan-refused').textContent === '2');
    assert.match(await page.textContent('#scan-status'), /\(17\) 271399 is not a date/);
    assert.equal((await allItems(page)).length, before, 'a label with a bad date is not queued');
    assert.equal(Number(await page.textContent('#scan-count')), 3);
    await shot(page, 'labels-put-away');
    await drained(page);
    const putScans = (await allItems(page)).filter((item) => item.command === 'scan' && item.body.mode === 'put_away');
    assert.deepEqual(putScans.map((item) => item.body.epc), [pa1, pa2, pa3], 'each label names its unit by EPC');
    for (const epc of [pa1, pa2, pa3]) {
      const unit = await read(site, token, `/v1/units/${epc}`);
      assert.equal(unit.bin, 'B-02');
      assert.equal(unit.state, 'in_stock');
    }
    await backToPicker(page);

    // Receive: a unit's GS1-128 (its SKU from its GTIN, its lot and expiry),
    // an SGTIN tag the site does not know (its SKU from the tag's GTIN), and
    // a SKU lot label before a fresh tag, which carries its lot.
    await pickMode(page, 'op-gs1', 'receive');
    await page.waitForSelector('#mode-choices button[data-grn="GRN-G"]');
    await page.click('#mode-choices button[data-grn="GRN-G"]');
    await sessionOpened(page);
    await wedgeText(page, `]C101${GTIN_T}1727123110LOT-7${GS}21R-1`);
    await captured(page, 4);
    await page.waitForSelector('#receive-label');
    assert.equal(await page.getAttribute('#receive-label', 'data-lot'), 'LOT-7');
    assert.equal(await page.getAttribute('#receive-label', 'data-expiry'), '2027-12-31');
    await wedgeText(page, SGTIN_EPC);
    await captured(page, 5);
    await wedgeText(page, `(01)${GTIN_T}(10)LOT-8(17)280600`);
    await page.waitForFunction(() => /SKU SKU-T · lot LOT-8 · expiry 2028-06-30/.test(document.getElementById('receive-sku').textContent));
    await wedgeText(page, fresh);
    await captured(page, 6);
    await page.waitForFunction(() => document.querySelector('#grn-lines tr[data-sku="SKU-T"] td:last-child').textContent !== '0', null, { timeout: 10_000 });
    await shot(page, 'labels-receive');
    await drained(page);
    const receiveScans = (await allItems(page)).filter((item) => item.command === 'scan' && item.body.mode === 'receive');
    assert.deepEqual(receiveScans.map((item) => [item.body.epc, item.body.gtin, item.body.lot ?? null, item.body.expiry ?? null]), [
      [rc1, GTIN_T, 'LOT-7', '2027-12-31'],
      [SGTIN_EPC, GTIN_T, null, null],
      [fresh, GTIN_T, 'LOT-8', '2028-06-30'],
    ]);
    const received = await read(site, token, `/v1/units/${rc1}`);
    assert.deepEqual([received.sku, received.lot, received.expiry], ['SKU-T', 'LOT-7', '2027-12-31'], 'the screen\'s lot and expiry are the ledger\'s');
    const tagged = await read(site, token, `/v1/units/${SGTIN_EPC}`);
    assert.deepEqual([tagged.sku, tagged.gtin, tagged.serial], ['SKU-T', GTIN_T, '6789']);
    const carton = await read(site, token, `/v1/units/${fresh}`);
    assert.deepEqual([carton.sku, carton.lot, carton.expiry], ['SKU-T', 'LOT-8', '2028-06-30']);
    const grn = await read(site, token, '/v1/grns/GRN-G');
    assert.deepEqual(grn.lines.map((l) => [l.sku, l.received]), [['SKU-T', 3]]);
    await backToPicker(page);

    // Dispatch verify: the manifest, its pallet by the SSCC, and the third
    // unit by its GS1-128 with `~`; the ticks are the site's answers.
    await pickMode(page, 'op-gs1', 'dispatch_verify');
    await wedgeText(page, 'M-1');
    await sessionOpened(page);
    await page.waitForSelector(`#manifest-units li[data-sscc="${SSCC}"]`);
    await wedgeText(page, `]C100${SSCC}`);
    await captured(page, 7);
    await wedgeText(page, `]C101${GTIN_G}21DV-3~10LOT-D`);
    await captured(page, 8);
    await drained(page);
    await page.waitForFunction(() => [...document.querySelectorAll('#manifest-units li')].every((li) => li.dataset.verified === 'true'), null, { timeout: 20_000 });
    assert.equal(await page.textContent('#manifest-verified'), '3');
    await shot(page, 'labels-dispatch');
    const manifest = await read(site, token, '/v1/manifests/M-1');
    assert.deepEqual(manifest.units.map((u) => [u.epc, u.verified]), [[dv1, true], [dv2, true], [dv3, true]]);
    const screenTicks = await page.$$eval('#manifest-units li', (lis) => lis.map((li) => [li.dataset.epc, li.dataset.verified === 'true']));
    assert.deepEqual(screenTicks, manifest.units.map((u) => [u.epc, u.verified]), 'the screen ticks what the ledger verified');
    const palletScan = (await allItems(page)).find((item) => item.command === 'scan' && item.body.sscc);
    assert.deepEqual([palletScan.body.sscc, palletScan.body.epc ?? null], [SSCC, null], 'a pallet is named by its SSCC alone');
    await backToPicker(page);

    // Find a unit, offline, by a Digital Link, a bracketed label and a
    // GS1-128: each answer is the ledger's unit.
    await pickMode(page, 'op-gs1', 'find_unit');
    const pulled = await ask(page, { type: 'reference_refresh' });
    assert.ok(pulled.ok, JSON.stringify(pulled));
    const { code } = await site.stop();
    assert.equal(code, 0);
    await page.waitForFunction(() => document.getElementById('net-status').dataset.net === 'offline', null, { timeout: 20_000 });
    const finds = [
      [`https://example.com/01/${GTIN_G.slice(1)}/21/PA-1`, pa1, 'B-02'],
      [`(01)${GTIN_T}(21)R-1`, rc1, null],
      [`]C101${GTIN_G}21DV-3${GS}10X`, dv3, null],
    ];
    for (const [label, epc] of finds) {
      await wedgeText(page, label);
      await page.waitForFunction((e) => document.getElementById('find-result')?.dataset.found === 'true'
        && document.getElementById('find-result').textContent.includes(e), epc);
    }
    await shot(page, 'labels-find');
    assert.equal(await page.textContent('#find-gtin'), GTIN_G);
    assert.equal(await page.textContent('#find-serial'), 'DV-3');
    assert.equal(await page.textContent('#find-state'), 'dispatched', 'the cache followed the dispatch');
    await wedgeText(page, `]C101${GTIN_G}21NOPE`);
    await page.waitForFunction(() => document.getElementById('find-result').dataset.found === 'false');
    assert.deepEqual(errors, []);

    // The parse time per label in the worker, through the page's own call.
    const labels = [
      `]C101${GTIN_G}21PA-1${GS}10LOT-1`,
      `~01${GTIN_G}21PA-2~10LOT-1`,
      `https://id.example.com/01/${GTIN_G}/21/PA-3?17=271231`,
      SGTIN_EPC,
      `]C100${SSCC}`,
      `(01)${GTIN_T}(10)LOT-8(17)280600`,
      'B-01',
    ];
    const times = await page.evaluate(async ({ labels: texts, n }) => {
      const out = [];
      for (let i = 0; i < n; i += 1) {
        const t0 = performance.now();
        const reply = await window.stockhop.ask({ type: 'read_label', text: texts[i % texts.length] });
        out.push(performance.now() - t0);
        if (!reply.ok || reply.refused) throw new Error(JSON.stringify(reply));
      }
      return out;
    }, { labels, n: TIMED_LABELS });
    times.sort((a, b) => a - b);
    const at = (q) => times[Math.min(times.length - 1, Math.floor(q * times.length))].toFixed(2);
    console.log(`read_label through the worker, ${TIMED_LABELS} labels (the round trip and the cache's read included): p50 ${at(0.5)} ms, p99 ${at(0.99)} ms`);
  } finally {
    await browser.close();
    await site.stop();
  }
});
