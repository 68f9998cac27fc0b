// The page's one way to the service worker: a message and its reply over a
// MessageChannel, named with this page's build and held while a hand-over
// to a new build is under way (release.js). The messages are listed at
// the top of app.js.

import * as release from '../release.js';

let registration = null;

/** The worker in charge of this page. */
export async function worker() {
  if (!registration) registration = await navigator.serviceWorker.ready;
  return navigator.serviceWorker.controller || registration.active;
}

/** Sends `message` to the worker; resolves with its reply. */
export async function ask(message) {
  await release.passage();
  const target = await worker();
  return release.track(new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = (event) => resolve(event.data);
    target.postMessage({ ...message, build: release.build }, [channel.port2]);
  }));
}
