// The handheld shell's cold start is not a waterfall: index.html's <head>
// announces the page's whole ES module graph with <link rel="modulepreload">,
// so the browser fetches every module at once after the HTML instead of one
// import depth per round trip. This spec walks the graph from app.js with a
// real ES module lexer and fails when the preload list is not exactly that
// graph, printing the lines the <head> should hold; every preloaded module
// is in www/shell.json, so the service worker caches it and the build id
// covers it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { init, parse } from 'es-module-lexer';

const www = fileURLToPath(new URL('../../www/', import.meta.url));

/** The page's one module script, the root of the graph. */
const ROOT = 'app.js';

/** The `www/`-relative path `specifier` names from the `www/`-relative module `from`. */
function resolve(from, specifier) {
  const path = specifier.split(/[?#]/)[0];
  return path.startsWith('/') ? path.slice(1) : posix.normalize(posix.join(posix.dirname(from), path));
}

/** What `file` imports, static and dynamic (a dynamic import must name its module literally). */
function importsOf(file) {
  const [imports] = parse(readFileSync(join(www, file), 'utf8'), file);
  return imports.map((entry) => {
    assert.ok(entry.n !== undefined, `${file} imports a module whose name is computed: the preload list cannot name it`);
    return resolve(file, entry.n);
  });
}

/** Every module reached from ROOT, ROOT included, in the order they are first reached. */
function moduleGraph() {
  const seen = new Set();
  const visit = (file) => {
    if (seen.has(file)) return;
    seen.add(file);
    importsOf(file).forEach(visit);
  };
  visit(ROOT);
  return [...seen];
}

/** index.html's <head>, as written in www/. */
function head() {
  const html = readFileSync(join(www, 'index.html'), 'utf8');
  const match = /<head>([\s\S]*?)<\/head>/.exec(html);
  assert.ok(match, 'www/index.html has a <head>');
  return match[1];
}

/** The modules index.html's <head> preloads, `www/`-relative, in its order. */
function preloaded() {
  return [...head().matchAll(/<link\b[^>]*>/g)]
    .map((m) => m[0])
    .filter((tag) => /\brel="modulepreload"/.test(tag))
    .map((tag) => {
      const href = /\bhref="([^"]+)"/.exec(tag);
      assert.ok(href, `a modulepreload without an href: ${tag}`);
      return resolve('index.html', href[1]);
    });
}

const lines = (files) => files.map((file) => `  <link rel="modulepreload" href="/${file}">`).join('\n');

test('index.html preloads exactly the module graph reached from app.js, each module once', async () => {
  await init;
  const graph = moduleGraph();
  const listed = preloaded();
  assert.deepEqual(
    listed.filter((file, i) => listed.indexOf(file) !== i),
    [],
    'a module is preloaded twice',
  );
  const missing = graph.filter((file) => !listed.includes(file));
  const extra = listed.filter((file) => !graph.includes(file));
  assert.ok(
    missing.length === 0 && extra.length === 0,
    `www/index.html's modulepreload list is not app.js's module graph ` +
      `(not preloaded: ${missing.join(', ') || 'none'}; preloaded but not imported: ${extra.join(', ') || 'none'}). ` +
      `The <head> should hold:\n${lines(graph)}`,
  );
});

test('every preloaded module is in the shell the service worker caches', () => {
  const shell = new Set(JSON.parse(readFileSync(join(www, 'shell.json'), 'utf8')));
  const outside = preloaded().filter((file) => !shell.has(file));
  assert.deepEqual(outside, [], 'preloaded modules missing from www/shell.json (offline, the page could not load them)');
});

test('the module graph is the page\'s whole start: app.js is loaded as a module script', () => {
  const html = readFileSync(join(www, 'index.html'), 'utf8');
  assert.match(html, new RegExp(`<script type="module" src="/${ROOT}"></script>`));
});
