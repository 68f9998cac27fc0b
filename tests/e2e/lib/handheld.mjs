// Drives the PWA the way an operator does: device setup from a URL
// fragment, the mode picker, the scan field as a keyboard wedge types
// into it, and the queue screen. Reads the worker's queue through the
// page's own `window.stockhop.ask`, the call its screens use.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { siteCommand, tempDataDir } from './site.mjs';

/** A handheld viewport (MC3390xR-class screen). */
export const HANDHELD_VIEWPORT = { width: 480, height: 800 };

/** Registers a device with the site and returns its bearer token. */
export async function addDevice(dataDir, deviceId, { profile = 'mc3390xr', commissioned = true } = {}) {
  const args = ['device', 'add', deviceId, '--profile', profile, '--data', dataDir];
  if (commissioned) args.push('--commissioned');
  const token = (await siteCommand(args)).trim();
  if (!/^\S+$/.test(token)) throw new Error(`device add printed more than a token: ${JSON.stringify(token)}`);
  return token;
}

/**
 * Makes reference data known to the site whose data is `dataDir`, as a
 * site imports it: CSV files in a temp dir through `stockhop-site import`.
 * `bins` (labels, zone Z-1) and `units` (EPCs, new, in no bin) are the
 * short forms; `binRows`, `unitRows`, `grns` and `manifests` give every
 * column (`{bin, zone, location}`, `{epc, code, sku, state, bin}`,
 * `{grn, qc, sku, expected}`, `{manifest, state, epc}`). Run it before
 * the site starts, or while it runs (the handheld reads the changes).
 */
export async function importReference(dataDir, { bins = [], units = [], binRows = [], unitRows = [], grns = [], manifests = [] }) {
  const dir = tempDataDir();
  const allBins = [...bins.map((bin) => ({ bin, zone: 'Z-1', location: 'L-1' })), ...binRows];
  const allUnits = [...units.map((epc) => ({ epc, sku: 'SKU-1', state: 'new' })), ...unitRows];
  const files = [];
  if (allBins.length) {
    files.push(['bins', 'bin,zone,location\n' + allBins.map((b) => `${b.bin},${b.zone},${b.location}\n`).join('')]);
  }
  if (allUnits.length) {
    files.push(['units', 'epc,code,sku,state,bin\n' + allUnits.map((u) => `${u.epc},${u.code ?? ''},${u.sku ?? ''},${u.state ?? 'new'},${u.bin ?? ''}\n`).join('')]);
  }
  if (grns.length) {
    files.push(['grns', 'grn,qc,sku,expected\n' + grns.map((g) => `${g.grn},${g.qc},${g.sku},${g.expected}\n`).join('')]);
  }
  if (manifests.length) {
    files.push(['manifests', 'manifest,state,epc\n' + manifests.map((m) => `${m.manifest},${m.state},${m.epc}\n`).join('')]);
  }
  for (const [kind, text] of files) {
    const file = join(dir, `${kind}.csv`);
    writeFileSync(file, text);
    await siteCommand(['import', kind, file, '--data', dataDir]);
  }
}

/** Opens a count of `zone` at `location` (`stockhop-site count open`); resolves with its id. */
export async function openCount(dataDir, { location, zone }) {
  const out = await siteCommand(['count', 'open', '--location', location, '--zone', zone, '--data', dataDir]);
  return out.trim();
}

/** A read endpoint of the site with the device token (`/v1/units/{epc}`, …): status and JSON. */
export async function siteRead(siteUrl, token, path) {
  const res = await fetch(`${siteUrl}${path}`, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, body: res.ok ? await res.json() : await res.text() };
}

/**
 * Opens the PWA in a fresh handheld-sized context, set up as `deviceId`;
 * `initScript` runs in the page before the app (to instrument it).
 */
export async function openHandheld(browser, { pageUrl, siteUrl, token, deviceId, initScript }) {
  const context = await browser.newContext({ viewport: HANDHELD_VIEWPORT });
  if (initScript) await context.addInitScript(initScript);
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (err) => errors.push(String(err)));
  const fragment = new URLSearchParams({ site: siteUrl, token, device: deviceId });
  await page.goto(`${pageUrl}/#${fragment}`);
  await page.waitForSelector('body[data-ready="true"]');
  await page.waitForFunction(() => document.getElementById('setup-status').textContent.startsWith('Set up as'));
  // Setup is done once: the app shows the mode picker, not the form.
  await page.waitForSelector('#screen-picker:not([hidden])');
  return { context, page, errors };
}

/** Types one code into the scan field as a keyboard wedge does: the text, then Enter. */
export async function wedge(page, code) {
  await page.keyboard.type(code);
  await page.keyboard.press('Enter');
}

/**
 * Signs `operatorId` in on the picker (a badge scan) and taps `mode`: the
 * mode screen shows. Returns the mode screen's locator.
 */
export async function pickMode(page, operatorId, mode) {
  await page.waitForSelector('#screen-picker:not([hidden])');
  if ((await page.textContent('#operator')) !== operatorId) {
    await page.click('#operator-change');
    await wedge(page, operatorId);
    await page.waitForFunction((op) => document.getElementById('operator').textContent === op, operatorId);
  }
  await page.click(`#pick-${mode}`);
  await page.waitForSelector(`#screen-mode:not([hidden])[data-mode="${mode}"]`);
}

/** The open session's id as the page keeps it (null before it opens). */
export function sessionId(page) {
  return page.evaluate(() => JSON.parse(localStorage.getItem('stockhop.session'))?.session_id ?? null);
}

/** Waits until the mode screen's session is open; resolves with its id. */
export async function sessionOpened(page) {
  await page.waitForSelector('#screen-mode[data-open="true"]');
  await page.waitForFunction(() => document.getElementById('session-status').textContent.startsWith('Open:'));
  return sessionId(page);
}

/** Picks a mode that needs nothing but the device (put-away) and returns its session id. */
export async function openSession(page, operatorId, mode) {
  await pickMode(page, operatorId, mode);
  return sessionOpened(page);
}

/** Closes the open session from the mode screen: the picker shows again. */
export async function closeSession(page) {
  await page.click('#session-close');
  await page.waitForSelector('#screen-picker:not([hidden])');
}

/** Opens the queue screen from the status bar. */
export async function openQueue(page) {
  await page.click('#status-bar');
  await page.waitForSelector('#screen-queue:not([hidden])');
}

/**
 * Types `codes` into the scan field as a keyboard wedge does, each ended by
 * Enter, without waiting between them, then waits until the page has
 * counted every one as captured.
 */
export async function scanBurst(page, codes) {
  const before = Number(await page.textContent('#scan-count'));
  await page.focus('#scan-input');
  for (const code of codes) await wedge(page, code);
  const expected = before + codes.length;
  await page.waitForFunction(
    (n) => Number(document.getElementById('scan-count').textContent) >= n,
    expected,
    { timeout: 60_000 },
  );
  const failed = Number(await page.textContent('#scan-failed'));
  if (failed !== 0) throw new Error(`${failed} scans were not captured`);
  return expected;
}

/**
 * Scans a bin label in a put-away session and waits until the page has
 * chosen that bin: the units scanned next go into it.
 */
export async function scanBin(page, bin) {
  await page.focus('#scan-input');
  await wedge(page, bin);
  await page.waitForFunction(
    (label) => document.getElementById('scan-bin').textContent.startsWith(`Bin ${label}:`),
    bin,
  );
}

/** `n` distinct 24-hex-digit EPCs; `prefix` (two hex digits) tells tests apart. */
export function epcs(prefix, n, start = 0) {
  return Array.from({ length: n }, (_, i) => `E280${prefix}${(start + i).toString(16).toUpperCase().padStart(18, '0')}`);
}

export function ask(page, message) {
  return page.evaluate((m) => window.stockhop.ask(m), message);
}

export async function counts(page) {
  const reply = await ask(page, { type: 'counts' });
  if (!reply.ok) throw new Error(`counts: ${JSON.stringify(reply)}`);
  return reply;
}

/** Every item in the worker's queue, all pages. */
export async function allItems(page) {
  const items = [];
  let after;
  for (;;) {
    const reply = await ask(page, { type: 'list', after, limit: 200 });
    if (!reply.ok) throw new Error(`list: ${JSON.stringify(reply)}`);
    items.push(...reply.items);
    if (reply.next_after == null || reply.items.length === 0) return items;
    after = reply.next_after;
  }
}

/**
 * Polls `check` until it returns `{ ready: true, value }` or `timeoutMs`
 * passes; resolves with `value`.
 */
export async function eventually(check, { timeoutMs, what, intervalMs = 250 }) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { ready, value } = await check();
    if (ready) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Waits until nothing is queued or in flight; resolves with the counts. */
export function drained(page, { timeoutMs = 90_000 } = {}) {
  return eventually(
    async () => {
      const value = await counts(page);
      return { ready: value.queued === 0 && value.sending === 0, value };
    },
    { timeoutMs, what: 'the queue to drain' },
  );
}

/** The ledger's hops for a session, as the device reads them. */
export async function sessionHops(siteUrl, token, sessionId) {
  const res = await fetch(`${siteUrl}/v1/sessions/${sessionId}/hops`, {
    headers: { authorization: `Bearer ${token}` },
  });
  if (!res.ok) throw new Error(`GET hops ${sessionId}: ${res.status} ${await res.text()}`);
  const body = await res.json();
  return Array.isArray(body) ? body : body.hops;
}

/**
 * Fails unless every button, link and field shown (`targets`, a CSS
 * selector) is at least 44 px each way (a gloved thumb).
 */
export async function assertTouchTargets(page, targets = 'button, a, input, select') {
  const small = await page.evaluate((targets) => [...document.querySelectorAll(targets)]
    .filter((e) => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden')
    .map((e) => {
      const r = e.getBoundingClientRect();
      return { what: e.id || e.textContent.trim().slice(0, 24), width: Math.round(r.width), height: Math.round(r.height) };
    })
    .filter((b) => b.width < 44 || b.height < 44), targets);
  assert.deepEqual(small, [], 'touch targets under 44 px');
}
