// Starts and stops a real `stockhop-site serve` for end-to-end tests, and
// launches Debian's headless Chromium with the project's flags.
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the suite with \`cargo xtask test\``);
  return value;
};

/** A free loopback port (bound and released at once). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** A fresh data directory for one test. */
export function tempDataDir() {
  return mkdtempSync(join(tmpdir(), 'stockhop-e2e-'));
}

/**
 * Runs `stockhop-site` with `args` (e.g. `device add …`) to completion and
 * returns its stdout.
 */
export function siteCommand(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(env('STOCKHOP_SITE_BIN'), args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`stockhop-site ${args.join(' ')}: ${code}\n${err}`))));
  });
}

/**
 * Starts the site server on a port the system gives it (or on `port`, to
 * come back on the same one), serving `www` (the tree's www/ by default);
 * resolves once /healthz answers. Its address is read from its own
 * "listening" line, so no port is probed and released for another process
 * to take in between.
 */
export async function startSite({ dataDir = tempDataDir(), port, www = env('STOCKHOP_WWW'), extraArgs = [] } = {}) {
  const child = spawn(
    env('STOCKHOP_SITE_BIN'),
    [
      'serve',
      '--data',
      dataDir,
      '--http',
      `127.0.0.1:${port ?? 0}`,
      '--www',
      www,
      // Terminal ports on free loopback ports, so suites never collide.
      '--terminal-http',
      '127.0.0.1:0',
      '--terminal-tcp',
      '127.0.0.1:0',
      ...(extraArgs.includes('--https') ? [] : ['--https', '127.0.0.1:0']),
      ...extraArgs,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  child.stderr.on('data', (d) => (log += d));
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const deadline = Date.now() + 20_000;
  let base = null;
  for (;;) {
    if (!base) {
      const bound = /site server listening \(http\) addr=127\.0\.0\.1:(\d+)/.exec(log);
      if (bound) {
        port = Number(bound[1]);
        base = `http://127.0.0.1:${port}`;
      }
    }
    if (base) {
      try {
        const res = await fetch(`${base}/healthz`);
        if (res.ok) break;
      } catch {
        // not answering yet
      }
    }
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`site server did not come up on ${base ?? 'its HTTP port'}:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    base,
    port,
    dataDir,
    log: () => log,
    /** Graceful stop (SIGTERM); resolves with the exit status. */
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
    /** Hard stop (SIGKILL). */
    async kill() {
      if (child.exitCode === null) child.kill('SIGKILL');
      return exited;
    },
  };
}

/** Debian's Chromium, headless, with the flags wasm-pack.toml names. */
export async function launchBrowser() {
  const args = env('STOCKHOP_CHROMIUM_ARGS').split(' ').filter(Boolean);
  return chromium.launch({
    executablePath: env('STOCKHOP_CHROMIUM'),
    headless: true,
    args,
  });
}

/** Where screenshots and other test artefacts go. */
export function artifactsDir() {
  const dir = env('STOCKHOP_ARTIFACTS');
  mkdirSync(dir, { recursive: true });
  return dir;
}
