// A loopback HTTP proxy in front of the site server, for the network faults
// the end-to-end suite needs: a slow link (a delay before each request goes
// upstream) and a lost response (the server's reply is read in full, then
// the device's connection is dropped without it). Plain HTTP/1.1 only; each
// request opens its own upstream connection.
import http from 'node:http';

export async function startProxy({ upstream, port = 0 }) {
  const state = {
    delayMs: 0,
    /** Drop the responses of the next N requests whose path matches. */
    dropNext: 0,
    dropPath: '/v1/sync',
    dropped: 0,
    /** Requests received in full, sent upstream, and answered upstream. */
    received: 0,
    started: 0,
    /** Numbers (in order received, from 1) of the requests answered upstream. */
    answered: [],
    /** The path of each request received, by its number less one. */
    paths: [],
    forwarded: 0,
  };
  const target = new URL(upstream);
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks);
      state.received += 1;
      const number = state.received;
      state.paths.push(req.url);
      if (state.delayMs > 0) await new Promise((r) => setTimeout(r, state.delayMs));
      const headers = { ...req.headers, host: target.host };
      state.started += 1;
      const up = http.request(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers },
        (upRes) => {
          const parts = [];
          upRes.on('data', (c) => parts.push(c));
          upRes.on('end', () => {
            state.forwarded += 1;
            state.answered.push(number);
            if (state.dropNext > 0 && req.url.startsWith(state.dropPath)) {
              state.dropNext -= 1;
              state.dropped += 1;
              req.socket.destroy();
              return;
            }
            res.writeHead(upRes.statusCode, upRes.headers);
            res.end(Buffer.concat(parts));
          });
        },
      );
      up.on('error', () => req.socket.destroy());
      up.end(body);
    });
  });
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  const address = server.address();
  return {
    base: `http://127.0.0.1:${address.port}`,
    port: address.port,
    state,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
