// Chromium that trusts a site CA the way a device does once: an NSS
// database in a throwaway HOME (where Chromium on Linux reads its trust
// store), and a site name mapped to loopback.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

/** A HOME whose NSS database trusts `caFile` as a CA for TLS servers. */
export function homeTrusting(caFile) {
  const home = mkdtempSync(join(tmpdir(), 'stockhop-e2e-home-'));
  const nssdb = join(home, '.pki', 'nssdb');
  mkdirSync(nssdb, { recursive: true });
  execFileSync('certutil', ['-d', `sql:${nssdb}`, '-N', '--empty-password']);
  execFileSync('certutil', ['-d', `sql:${nssdb}`, '-A', '-t', 'C,,', '-n', 'Stockhop site CA', '-i', caFile]);
  return home;
}

/** Debian's Chromium with `home`'s trust store, `siteName` resolving to loopback. */
export async function launchTrusting(home, siteName) {
  const args = process.env.STOCKHOP_CHROMIUM_ARGS.split(' ').filter(Boolean);
  return chromium.launch({
    executablePath: process.env.STOCKHOP_CHROMIUM,
    headless: true,
    args: [...args, `--host-resolver-rules=MAP ${siteName} 127.0.0.1`],
    env: { ...process.env, HOME: home },
  });
}
