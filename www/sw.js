// Stockhop service worker (a module worker). Listeners are registered
// synchronously at the top, as the platform requires; each event waits
// for the wasm module (`init()`) and hands itself to it. No top-level await.
//
// Releases: the site serves this script with its build id in place of the
// marker below (the id hashes every shell file, so any change to the shell
// changes this script's bytes and the browser installs a new worker). The
// worker keeps its shell in a cache named by its build, compiles only that
// cache's wasm with the glue imported here (the same build: its URL names
// it), answers the shell from that cache (so a page is always the build of
// the worker that served it), and takes over from an older worker only
// when its pages are between scans (`take_over`, sent by www/release.js).
import init, {
  ServiceWorker, schemaFits, schemaVersion, oldestCompatibleSchema,
} from './pkg/stockhop.js?build=__STOCKHOP_BUILD__';

const BUILD = '__STOCKHOP_BUILD__';
const SHELL_CACHE = `stockhop-shell-${BUILD}`;
// The shell: the files shell.json lists (the site's build id hashes the
// same list), and `/`. The list is read at install and kept in this
// build's cache with the files; the worker script itself and its glue
// (which comes with this script) are not answered from the cache.
const SHELL_LIST = '/shell.json';
const NOT_CACHED = ['sw.js', 'pkg/stockhop.js'];
// The site's command barcode sheet, kept for offline use when the site
// serves it; a shell served without the site (a bench's static server)
// still installs.
const OPTIONAL = ['/commands', '/commands.css'];
const SYNC_TAG = 'stockhop-drain';
const MODULE = '/pkg/stockhop_bg.wasm';
// How long a new worker waits for its pages to hand over between scans
// before it takes over anyway: a page from before builds had ids never
// asks, and a worker that never activates leaves that handheld behind.
const HANDOVER_WAIT_MS = 60 * 1000;
// Requests that never touch the worker: the browser sends them straight to
// the network without waking it (static routing, where the browser has
// it). The API, /healthz and /version.json are never answered from the
// cache, and a request that woke the old worker while the browser stopped
// it for a hand-over would start it again and hold the new one back.
const NETWORK_ROUTES = ['/v1/*', '/healthz', '/version.json'];
// The heartbeat a worker whose module did not start sends itself, at most
// this often (the module's own heartbeat is not running).
const REPORT_EVERY_MS = 60 * 1000;
// The longest `app_version` the site takes (its MAX_APP_VERSION_CHARS).
const APP_VERSION_MAX_CHARS = 64;
// Page messages that write to the queue: answered only for a page of this
// worker's build (a page that names none, a script or a page from before
// builds had ids, is answered).
const WRITES = new Set(['open_session', 'capture', 'capture_many', 'close_session', 'discard']);

let queue = null;
/** Why the module or the queue did not start, as {code, message}; null once it runs. */
let failure = null;
/** This worker's shell is cached and its module links: it may take over. */
let installed = false;
let reportedAt = 0;
/** The pages (client ids) that asked this installed worker to take over. */
const askedBy = new Set();
/** Called when one more page asks. */
let pageAsked = () => {};

function failureOf(err, code) {
  if (err && typeof err.code === 'string') return { code: err.code, message: String(err.message) };
  return { code, message: String(err && err.message || err) };
}

// This worker is the one in charge: only it opens the queue (one runtime
// writes the database; a worker still installing only links its module).
function active() {
  const state = self.serviceWorker ? self.serviceWorker.state : 'activated';
  return state === 'activating' || state === 'activated';
}

// The queue, opened once per worker life from this build's own module; a
// failed start is reported to the pages and the site, and retried on the
// next event rather than cached.
function ready() {
  if (!active()) {
    return Promise.reject({ code: 'NOT_ACTIVE', message: `build ${BUILD} is not the active worker yet` });
  }
  if (!queue) {
    // The databases are listed while the module compiles: a cold start
    // waits for the longer of the two, not both.
    const listed = indexedDB.databases();
    listed.catch(() => {});
    queue = caches.open(SHELL_CACHE)
      .then((cache) => cache.match(MODULE))
      .then((cached) => {
        if (!cached) throw { code: 'NOT_INSTALLED', message: `build ${BUILD} has no module in its cache` };
        return init({ module_or_path: cached });
      })
      .then(() => checkSchema(listed))
      .then(() => ServiceWorker.open(undefined, BUILD))
      .then((q) => {
        failure = null;
        declareSchema().catch(() => {});
        return q;
      }, (err) => {
        failure = failureOf(err, 'INIT_FAILED');
        queue = null;
        announce({ type: 'release', build: BUILD, error: failure });
        report(failure);
        throw failure;
      });
  }
  return queue;
}

// Start the module as an installed worker starts, so a worker started for
// a message has it compiling while the event is dispatched. Before its
// install there is no module of this build to start.
if (active()) {
  caches.has(SHELL_CACHE)
    .then((has) => has && caches.open(SHELL_CACHE).then((cache) => cache.match(MODULE)))
    .then((cached) => {
      if (cached) ready().catch(() => {});
    });
}

// A queue database newer than this build's schema (a rollback) is opened
// only when it declares this build compatible (its meta record `schema`:
// {version, oldest_compatible}); otherwise nothing is opened or written.
async function checkSchema(listed) {
  const stored = (await listed).find((db) => db.name === 'stockhop');
  if (!stored || schemaFits(stored.version, undefined)) return;
  const db = await request(indexedDB.open('stockhop'));
  let declared;
  try {
    const record = db.objectStoreNames.contains('meta')
      ? await request(db.transaction('meta').objectStore('meta').get('schema'))
      : undefined;
    declared = record && record.value ? record.value.oldest_compatible : undefined;
  } finally {
    db.close();
  }
  if (!schemaFits(stored.version, declared)) {
    throw { code: 'SCHEMA_NEWER', message: `the queue has schema v${stored.version}, newer than this build's` };
  }
}

// This build's declaration in its queue database, for an older build
// after a rollback: the oldest schema whose workers may keep capturing on
// it. Written only on this build's own schema (a newer one keeps its own);
// until it is written, an older build treats the database as incompatible.
async function declareSchema() {
  const ours = schemaVersion();
  const oldest = oldestCompatibleSchema();
  const db = await request(indexedDB.open('stockhop'));
  try {
    if (db.version !== ours || !db.objectStoreNames.contains('meta')) return;
    // Read first: on every start but the first the declaration stands, and
    // a read does not hold the queue's writes (the first capture's) back.
    const current = await request(db.transaction('meta').objectStore('meta').get('schema'));
    if (current && current.value && current.value.version === ours && current.value.oldest_compatible === oldest) return;
    const store = db.transaction('meta', 'readwrite').objectStore('meta');
    await request(store.put({ name: 'schema', value: { version: ours, oldest_compatible: oldest } }));
  } finally {
    db.close();
  }
}

async function announce(message) {
  const pages = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
  for (const page of pages) page.postMessage(message);
}

// The site's heartbeat, sent here because the module is not running: the
// build and the failure's code in `app_version`, the depth as IndexedDB
// holds it. Best effort: a device not set up, or an unreadable queue,
// sends nothing.
async function report(problem) {
  const now = Date.now();
  if (now - reportedAt < REPORT_EVERY_MS) return;
  reportedAt = now;
  try {
    const known = await indexedDB.databases();
    if (!known.some((db) => db.name === 'stockhop')) return;
    const db = await request(indexedDB.open('stockhop'));
    try {
      if (!db.objectStoreNames.contains('meta')) return;
      const tx = db.transaction(['items', 'meta']);
      const device = await request(tx.objectStore('meta').get('device'));
      if (!device || !device.value) return;
      let depth = 0;
      const byState = tx.objectStore('items').index('by_state');
      for (const state of ['queued', 'sending', 'blocked']) depth += await request(byState.count(state));
      const { site_url: site, device_id: id, device_token: token } = device.value;
      await fetch(`${site.replace(/\/+$/, '')}/v1/devices/${encodeURIComponent(id)}/heartbeat`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          sent_at: new Date(now).toISOString(),
          queue_depth: depth,
          app_version: `${BUILD} ${problem.code}`.slice(0, APP_VERSION_MAX_CHARS),
        }),
      });
    } finally {
      db.close();
    }
  } catch {
    // Nothing more to do: the page shows the failure, and the next event retries.
  }
}

function request(req) {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

// The site's build, when it names one: a static server without the site
// (a bench's) answers 404 and names none.
async function servedBuild() {
  const response = await fetch('/version.json', { cache: 'no-store' });
  if (response.status === 404) return null;
  if (!response.ok) throw new Error(`/version.json: ${response.status}`);
  return (await response.json()).build;
}

// Caches this build's shell, all of one build: the files are fetched past
// the HTTP cache, then the site must still serve this build (a deploy
// during the install fails it; the browser installs the new build next),
// and the module must link with this build's glue. A failed install leaves
// nothing cached and the current worker in charge.
async function install() {
  const cache = await caches.open(SHELL_CACHE);
  try {
    const listed = await fetch(new Request(SHELL_LIST, { cache: 'no-cache' }));
    if (!listed.ok) throw new Error(`${SHELL_LIST}: ${listed.status}`);
    const paths = shellPaths(await listed.json());
    // The optional files alongside the shell's, not one round trip after them.
    await Promise.all([
      cache.addAll([...paths].map((path) => new Request(path, { cache: 'no-cache' }))),
      ...OPTIONAL.map((path) => cache.add(new Request(path, { cache: 'no-cache' })).catch(() => {})),
    ]);
    const served = await servedBuild();
    if (served !== null && served !== BUILD) {
      throw { code: 'BUILD_CHANGED', message: `the site now serves build ${served}, not ${BUILD}` };
    }
    await init({ module_or_path: await cache.match(MODULE) });
    installed = true;
  } catch (err) {
    await caches.delete(SHELL_CACHE);
    const problem = failureOf(err, 'INSTALL_FAILED');
    announce({ type: 'release', build: BUILD, error: problem });
    report(problem);
    throw err;
  }
}

// Waits until every open page has asked to hand over (each between scans,
// and from then on sending nothing to the old worker), unless no older
// worker is running, or no page is open, or the pages do not ask in time.
// The browser activates this worker once it has stopped the old one, and
// asks it to stop only once: a page's request that reaches the old worker
// while it stops starts it again, and it then runs on for as long as any
// page keeps talking to it. So the take-over waits for the last page.
async function handOver() {
  const deadline = Date.now() + HANDOVER_WAIT_MS;
  const pages = () => self.clients.matchAll({ type: 'window', includeUncontrolled: true });
  if (self.registration.active && (await pages()).length > 0) {
    announce({ type: 'release_ready', build: BUILD });
    while (Date.now() < deadline && !(await pages()).every((page) => askedBy.has(page.id))) {
      await new Promise((resolve) => {
        pageAsked = resolve;
        setTimeout(resolve, deadline - Date.now());
      });
    }
  }
  await self.skipWaiting();
}

// Settles once a newer worker has installed and waits to take over: the
// browser activates it only when this worker's events have ended, so a
// long event here (a Background Sync drain backing off while the site is
// down) must end then. Nothing is lost: the items stay queued for the
// worker that takes over.
// A worker started again while a newer one installs or waits (the browser
// stops an idle worker and starts it for the next event) watches that one
// too: its `updatefound` came before this life of the worker.
const superseded = new Promise((resolve) => {
  const watch = (next) => {
    if (!next || next === self.serviceWorker) return;
    if (next.state === 'installed' || next.state === 'activating') resolve();
    next.addEventListener('statechange', () => {
      if (next.state === 'installed' || next.state === 'activating') resolve();
    });
  };
  self.registration.addEventListener('updatefound', () => watch(self.registration.installing));
  watch(self.registration.installing);
  watch(self.registration.waiting);
});

self.addEventListener('install', (event) => {
  if (event.addRoutes) {
    const routes = NETWORK_ROUTES.map((urlPattern) => ({ condition: { urlPattern }, source: 'network' }));
    // Without the routes every request still works, through the fetch handler.
    event.waitUntil(event.addRoutes(routes).catch(() => {}));
  }
  event.waitUntil(install().then(handOver));
});

self.addEventListener('activate', (event) => {
  event.waitUntil(Promise.all([
    self.clients.claim(),
    caches.keys().then((keys) => Promise.all(
      keys.filter((key) => key.startsWith('stockhop-shell-') && key !== SHELL_CACHE).map((key) => caches.delete(key)))),
  ]));
  // Not part of activation: the queue may wait for the drain lock the
  // worker being replaced still holds, and until activation ends no page
  // of this build can load (a hand-over's reload would hang on it).
  ready().then((q) => q.wake()).catch(() => {});
});

self.addEventListener('message', (event) => {
  const port = event.ports[0];
  const data = event.data || {};
  const answer = (reply) => {
    if (port) port.postMessage({ ...reply, build: BUILD });
  };
  // The messaging floor, answered without the module (the benchmark's baseline).
  if (data.type === 'ping') {
    if (port) port.postMessage({ ok: true });
    return;
  }
  // A page between scans lets this worker take over (once it is installed).
  if (data.type === 'take_over') {
    // Installed in this life, or in an earlier one (a waiting worker the
    // browser stopped and started again for this message).
    const ready = installed || ['installed', 'activating', 'activated'].includes(self.serviceWorker?.state);
    answer({ ok: ready });
    if (ready) {
      if (event.source) askedBy.add(event.source.id);
      pageAsked();
      // Asked again once installed and waiting: the browser may not have
      // acted on the install's own request (it left this worker waiting).
      if (self.registration.waiting === self.serviceWorker) event.waitUntil(self.skipWaiting());
    }
    return;
  }
  // Which build this worker runs, and whether its queue started.
  if (data.type === 'build') {
    event.waitUntil(ready().then(
      () => answer({ ok: true, started: true }),
      (error) => answer({ ok: true, started: false, error }),
    ));
    return;
  }
  const { build: pageBuild, ...message } = data;
  if (WRITES.has(message.type) && pageBuild && pageBuild !== BUILD) {
    answer({ ok: false, error: { code: 'BUILD_MISMATCH', message: `this page is build ${pageBuild}, the worker runs ${BUILD}: reload` } });
    return;
  }
  const handled = ready()
    .then((q) => q.handleMessage(message, undefined))
    .then(answer, (err) => {
      if (failure) report(failure);
      answer({ ok: false, error: failureOf(err, 'WORKER') });
    });
  // A write holds the worker until it is answered; a read or a wake (a
  // drain) does not hold back a newer worker's activation.
  event.waitUntil(WRITES.has(message.type) ? handled : Promise.race([handled, superseded]));
});

self.addEventListener('sync', (event) => {
  if (event.tag === SYNC_TAG) {
    event.waitUntil(Promise.race([
      ready().then((q) => q.handleSync(event.lastChance)),
      superseded.then(() => Promise.reject(new Error('a newer build takes over'))),
    ]));
  }
});

self.addEventListener('fetch', (event) => {
  const request = event.request;
  const url = new URL(request.url);
  // The API, /healthz (the page's online light) and /version.json (the
  // build the site serves) are never answered from the cache.
  if (request.method !== 'GET' || url.origin !== self.location.origin || url.pathname.startsWith('/v1/')
      || url.pathname === '/healthz' || url.pathname === '/version.json') {
    return;
  }
  event.respondWith(answer(request, url.pathname));
  if (request.mode === 'navigate') {
    event.waitUntil(Promise.race([ready().then((q) => q.wake()).catch(() => {}), superseded]));
  }
});

// The paths the shell answers, from shell.json's list of files.
function shellPaths(files) {
  return new Set(['/', ...files.filter((file) => !NOT_CACHED.includes(file)).map((file) => `/${file}`)]);
}

// This build's shell paths, read once per worker life from the list in
// its own cache (null while the cache has none).
let shell = null;
function cachedShell() {
  if (!shell) {
    shell = caches.open(SHELL_CACHE)
      .then((cache) => cache.match(SHELL_LIST))
      .then((listed) => (listed ? listed.json() : null))
      .then((files) => {
        if (!files) shell = null;
        return files && shellPaths(files);
      });
  }
  return shell;
}

// A shell file from this build's cache, anything else network-first.
async function answer(request, path) {
  const paths = await cachedShell();
  if (!paths) return fetch(request);
  return paths.has(path) ? fromShell(request) : networkFirst(request);
}

// The shell from this worker's own build: the page it serves is the build
// it runs. The network only when the cache lacks the file (before this
// worker's install), and then not kept: it may be another build's.
async function fromShell(request) {
  const cache = await caches.open(SHELL_CACHE);
  return (await cache.match(request, { ignoreSearch: true })) || fetch(request);
}

// Everything else network-first: fresh when online, from the cache when not.
async function networkFirst(request) {
  const cache = await caches.open(SHELL_CACHE);
  try {
    const response = await fetch(request);
    if (response.ok) cache.put(request, response.clone());
    return response;
  } catch (err) {
    const cached = await cache.match(request, { ignoreSearch: true })
      || (request.mode === 'navigate' ? await cache.match('/index.html') : undefined);
    if (cached) return cached;
    throw err;
  }
}
