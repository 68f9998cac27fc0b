// What happened on the page, for the modules that show it: a module says
// what changed (`emit`), and the screens that depend on it redraw (`on`).
// This keeps the dependencies one way: the code that reads the worker or
// the site never imports the screens that draw what it read.
//
// Events: `reference` (the reference cache's status was read; `changed`
// when its rows or the site's word on this device moved), `queue` (the
// queue was walked), `results` (a scan row changed), `captured` (the
// worker kept a scan), `mode` (the open mode's screen needs a redraw),
// `detail` (its figures do), `online` (the site's light changed), `word`
// (what the site said of this device changed: its token refused, a
// session it closed, the drain's next try).

const handlers = new Map();

/** Calls `handler(detail)` on each `name` event, in the order registered. */
export function on(name, handler) {
  if (!handlers.has(name)) handlers.set(name, []);
  handlers.get(name).push(handler);
}

/**
 * Runs every handler of `name`, one after another: at once while they
 * return nothing, each after the one before once one returns a promise.
 * Resolves when all have run.
 */
export function emit(name, detail) {
  let chain = null;
  for (const handler of handlers.get(name) || []) {
    if (chain) {
      chain = chain.then(() => handler(detail));
    } else {
      const ran = handler(detail);
      if (ran && typeof ran.then === 'function') chain = ran;
    }
  }
  return chain || Promise.resolve();
}
