// Stockhop service worker (a module worker). Listeners are registered
// synchronously at the top, as the platform requires; each event waits
// for the wasm module (`init()`) and hands itself to it. No top-level await.
import init, { ServiceWorker } from './pkg/stockhop.js';

const SHELL_CACHE = 'stockhop-shell-v1';
const SHELL = [
  '/',
  '/index.html',
  '/app.js',
  '/reasons.js',
  '/signal.js',
  '/app.css',
  '/manifest.webmanifest',
  '/icons/icon-192.png',
  '/icons/icon-512.png',
  '/pkg/stockhop.js',
  '/pkg/stockhop_bg.wasm',
];
// The site's command barcode sheet, kept for offline use when the site
// serves it; a shell served without the site (a bench's static server)
// still installs.
const OPTIONAL = ['/commands', '/commands.css'];
const SYNC_TAG = 'stockhop-drain';
const MODULE = '/pkg/stockhop_bg.wasm';

let queue = null;

// The queue, opened once per worker life; a failed open is retried on the
// next event rather than cached. The module comes from the shell cache when
// it is there (a worker started again then compiles it without the
// network), else from the network.
function ready() {
  if (!queue) {
    queue = caches.match(MODULE)
      .then((cached) => init(cached ? { module_or_path: cached } : undefined))
      .then(() => ServiceWorker.open());
    queue.catch(() => { queue = null; });
  }
  return queue;
}

// Start loading the module as the worker starts, so a worker started for
// a message has it compiling while the event is dispatched.
ready().catch(() => {});

self.addEventListener('install', (event) => {
  event.waitUntil(
    caches.open(SHELL_CACHE)
      .then((cache) => cache.addAll(SHELL)
        .then(() => Promise.all(OPTIONAL.map((path) => cache.add(path).catch(() => {})))))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(Promise.all([
    self.clients.claim(),
    caches.keys().then((keys) => Promise.all(
      keys.filter((key) => key !== SHELL_CACHE).map((key) => caches.delete(key)))),
    ready().then((q) => q.wake()).catch(() => {}),
  ]));
});

self.addEventListener('message', (event) => {
  const port = event.ports[0];
  // The messaging floor, answered without the module (the benchmark's baseline).
  if (event.data && event.data.type === 'ping') {
    if (port) port.postMessage({ ok: true });
    return;
  }
  event.waitUntil(
    ready()
      .then((q) => q.handleMessage(event.data, port))
      .catch((err) => {
        if (port) port.postMessage({ ok: false, error: { code: 'WORKER', message: String(err && err.message || err) } });
      }),
  );
});

self.addEventListener('sync', (event) => {
  if (event.tag === SYNC_TAG) {
    event.waitUntil(ready().then((q) => q.handleSync(event.lastChance)));
  }
});

self.addEventListener('fetch', (event) => {
  const request = event.request;
  const url = new URL(request.url);
  // The API and /healthz (the page's online light) are never answered from
  // the cache.
  if (request.method !== 'GET' || url.origin !== self.location.origin || url.pathname.startsWith('/v1/')
      || url.pathname === '/healthz') {
    return;
  }
  event.respondWith(networkFirst(request));
  if (request.mode === 'navigate') {
    event.waitUntil(ready().then((q) => q.wake()).catch(() => {}));
  }
});

// The app shell network-first: fresh when online, from the cache when not.
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
