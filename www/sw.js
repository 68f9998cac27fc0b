// The capture service worker. Listeners are registered synchronously (a
// worker may not await at the top level); each event waits for the wasm
// module's init() and is then handed to it.
import init, { mintKey, coreVersion } from './pkg/stockhop.js';

const ready = init({ module_or_path: new URL('./pkg/stockhop_bg.wasm', import.meta.url) });

self.addEventListener('install', (event) => {
  event.waitUntil(ready.then(() => self.skipWaiting()));
});

self.addEventListener('activate', (event) => {
  event.waitUntil(ready.then(() => self.clients.claim()));
});

self.addEventListener('message', (event) => {
  const port = event.ports[0];
  event.waitUntil(
    ready
      .then(() => {
        if (event.data && event.data.type === 'ping') {
          return { ok: true, version: coreVersion(), key: mintKey() };
        }
        return { ok: false, error: `unknown message ${JSON.stringify(event.data)}` };
      })
      .catch((err) => ({ ok: false, error: String(err) }))
      .then((reply) => port && port.postMessage(reply)),
  );
});
