// The shell the service worker caches for offline use is www/shell.json's
// list (the site's build id hashes the same list). Everything the page
// loads from www/ must be in it, or a handheld that starts offline has a
// page that cannot load: the page's scripts, styles, manifest and icons
// from index.html, every ES module reached from them by `import`, and the
// worker's own imports. No module imports one that imports it back, and
// the page defines none of the site's constants itself (it reads them
// from GET /v1/handheld/constants).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, posix, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const www = fileURLToPath(new URL('../../www/', import.meta.url));

/** A `www/`-relative path for `ref` as written in `from` (a `www/`-relative file). */
function resolveRef(from, ref) {
  const path = ref.split(/[?#]/)[0];
  return path.startsWith('/') ? path.slice(1) : posix.normalize(posix.join(posix.dirname(from), path));
}

/** The files a module imports (static, re-exported and literal dynamic imports), `www/`-relative. */
function importsOf(file) {
  const text = readFileSync(join(www, file), 'utf8').replace(/^\s*\/\/.*$/gm, '');
  const refs = [
    ...text.matchAll(/^\s*(?:import|export)\s[^;]*?\bfrom\s+'([^']+)'/gm),
    ...text.matchAll(/^\s*import\s+'([^']+)'/gm),
    ...text.matchAll(/\bimport\(\s*'([^']+)'\s*\)/g),
  ].map((m) => m[1]);
  return refs.map((ref) => resolveRef(file, ref));
}

/** What index.html loads itself: scripts, styles, the manifest, icons. */
function pageRefs() {
  const html = readFileSync(join(www, 'index.html'), 'utf8');
  const refs = [...html.matchAll(/<(?:script|link)\b[^>]*?\b(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
  const manifest = JSON.parse(readFileSync(join(www, 'manifest.webmanifest'), 'utf8'));
  return [...refs, ...(manifest.icons || []).map((icon) => icon.src)].map((ref) => resolveRef('index.html', ref));
}

/** Every module reached from `roots`, with its imports. */
function graph(roots) {
  const edges = new Map();
  const stack = roots.filter((file) => file.endsWith('.js'));
  while (stack.length) {
    const file = stack.pop();
    if (edges.has(file)) continue;
    const deps = importsOf(file);
    edges.set(file, deps);
    stack.push(...deps.filter((dep) => dep.endsWith('.js')));
  }
  return edges;
}

/** The import circles in `edges`, each as a path of files. */
function circles(edges) {
  const found = [];
  const state = new Map();
  const path = [];
  const visit = (file) => {
    state.set(file, 'open');
    path.push(file);
    for (const dep of edges.get(file) || []) {
      if (state.get(dep) === 'open') found.push([...path.slice(path.indexOf(dep)), dep].join(' → '));
      else if (!state.has(dep)) visit(dep);
    }
    path.pop();
    state.set(file, 'done');
  };
  for (const file of edges.keys()) if (!state.has(file)) visit(file);
  return found;
}

/** Every `.js` file under `dir`, `www/`-relative (the wasm package's build output aside). */
function scripts(dir = www) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'pkg' ? [] : scripts(path);
    return entry.name.endsWith('.js') ? [relative(www, path).split('\\').join('/')] : [];
  });
}

const shell = JSON.parse(readFileSync(join(www, 'shell.json'), 'utf8'));

test('every file the page and the worker load from www/ is in the shell the worker caches, and each listed file exists', () => {
  const page = pageRefs();
  const edges = graph([...page, 'sw.js']);
  const loaded = new Set([...page, ...edges.keys(), ...[...edges.values()].flat()]);
  assert.ok(loaded.has('app.js') && loaded.has('app/state.js') && loaded.has('pkg/stockhop.js'), `the graph was read: ${[...loaded].join(' ')}`);
  const missing = [...loaded].filter((file) => !shell.includes(file));
  assert.deepEqual(missing, [], 'loaded by the page or the worker but not in www/shell.json');
  assert.ok(shell.includes('shell.json') && shell.includes('pkg/stockhop_bg.wasm'), 'the list and the module are in the shell');
  const absent = shell.filter((file) => !existsSync(join(www, file)));
  assert.deepEqual(absent, [], 'listed in www/shell.json but not in www/');
  assert.equal(new Set(shell).size, shell.length, 'each file listed once');
});

test('every script of the page is loaded by it, and no module imports one that imports it back', () => {
  const edges = graph([...pageRefs()]);
  const unused = scripts().filter((file) => file !== 'sw.js' && !edges.has(file));
  assert.deepEqual(unused, [], 'scripts in www/ the page never loads');
  assert.deepEqual(circles(edges), [], 'import circles');
});

test('the page defines none of the site\'s constants: the command barcodes and the undo window come from the site', () => {
  for (const file of scripts()) {
    const text = readFileSync(join(www, file), 'utf8');
    assert.doesNotMatch(text, /STOCKHOP:[A-Z]/, `${file} names a command barcode`);
    assert.doesNotMatch(text, /UNDO_WINDOW/, `${file} defines an undo window`);
  }
});
