// Drives the PWA the way an operator does: device setup from a URL
// fragment, the session form, the scan field as a keyboard wedge types
// into it, and the queue screen. Reads the worker's queue through the
// page's own `window.stockhop.ask`, the call its screens use.
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
 * Makes `bins` (labels) and `units` (EPCs, new, in no bin) known to the
 * site whose data is `dataDir`, as a site imports its reference data:
 * CSV files in a temp dir through `stockhop-site import`. Run it before
 * the site starts; put-away scans only bins and units the site knows.
 */
export async function importReference(dataDir, { bins = [], units = [] }) {
  const dir = tempDataDir();
  const files = [];
  if (bins.length) {
    files.push(['bins', 'bin,zone,location\n' + bins.map((bin) => `${bin},Z-1,L-1\n`).join('')]);
  }
  if (units.length) {
    files.push(['units', 'epc,code,sku,state,bin\n' + units.map((epc) => `${epc},,SKU-1,new,\n`).join('')]);
  }
  for (const [kind, text] of files) {
    const file = join(dir, `${kind}.csv`);
    writeFileSync(file, text);
    await siteCommand(['import', kind, file, '--data', dataDir]);
  }
}

/** Opens the PWA in a fresh handheld-sized context, set up as `deviceId`. */
export async function openHandheld(browser, { pageUrl, siteUrl, token, deviceId }) {
  const context = await browser.newContext({ viewport: HANDHELD_VIEWPORT });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (err) => errors.push(String(err)));
  const fragment = new URLSearchParams({ site: siteUrl, token, device: deviceId });
  await page.goto(`${pageUrl}/#${fragment}`);
  await page.waitForSelector('body[data-ready="true"]');
  await page.waitForFunction(() => document.getElementById('setup-status').textContent.startsWith('Set up as'));
  return { context, page, errors };
}

export async function openSession(page, operatorId, mode) {
  await page.fill('#operator-id', operatorId);
  await page.selectOption('#mode', mode);
  await page.click('#session-open');
  await page.waitForFunction(() => document.getElementById('session-status').textContent.startsWith('Open:'));
  return page.evaluate(() => JSON.parse(localStorage.getItem('stockhop.session')).session_id);
}

export async function closeSession(page) {
  await page.click('#session-close');
  await page.waitForFunction(() => document.getElementById('session-status').textContent.startsWith('No open session'));
}

/**
 * Types `codes` into the scan field as a keyboard wedge does, each ended by
 * Enter, without waiting between them, then waits until the page has
 * counted every one as captured.
 */
export async function scanBurst(page, codes) {
  const before = Number(await page.textContent('#scan-count'));
  await page.focus('#scan-input');
  for (const code of codes) {
    await page.keyboard.type(code);
    await page.keyboard.press('Enter');
  }
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
  await page.keyboard.type(bin);
  await page.keyboard.press('Enter');
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
