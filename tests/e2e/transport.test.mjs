// What crosses the Wi-Fi to a fleet: every shell file (www/shell.json's
// list) comes back compressed as the client accepts (br, else gzip), decodes
// to the very bytes sent uncompressed, and each encoding has its own strong
// ETag, so a client holding one encoding's tag is never answered 304 for
// another's. The HTTPS port speaks HTTP/2 to a client that offers it by
// ALPN and HTTP/1.1 to one that offers only that.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { startSite, tempDataDir } from './lib/site.mjs';

const SHELL = JSON.parse(readFileSync(new URL('../../www/shell.json', import.meta.url), 'utf8'));
const SITE_NAME = 'stockhop.test';

/** GET `path` on the plain port with `headers`: status, headers and the body as sent. */
function get(base, path, headers = {}) {
  return new Promise((resolve, reject) => {
    http.get(new URL(path, base), { headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
    }).on('error', reject);
  });
}

const DECODE = { br: brotliDecompressSync, gzip: gunzipSync };

test('every shell file comes back in br and gzip, decodes to the plain bytes, and each encoding has its own ETag', async () => {
  const site = await startSite();
  try {
    for (const file of SHELL) {
      const path = `/${file}`;
      const plain = await get(site.base, path, { 'accept-encoding': 'identity' });
      assert.equal(plain.status, 200, path);
      assert.equal(plain.headers['content-encoding'], undefined, `${path} identity is not encoded`);
      const tags = new Set([plain.headers.etag]);
      for (const encoding of ['br', 'gzip']) {
        const sent = await get(site.base, path, { 'accept-encoding': encoding === 'br' ? 'gzip, br' : 'gzip' });
        assert.equal(sent.status, 200, path);
        const used = sent.headers['content-encoding'];
        if (file.endsWith('.png')) {
          assert.equal(used, undefined, `${path}: a PNG is compressed already`);
          assert.equal(sent.headers.etag, plain.headers.etag);
          continue;
        }
        assert.equal(used, encoding, `${path} in ${encoding}`);
        assert.match(sent.headers.vary ?? '', /accept-encoding/i, `${path} varies by encoding`);
        assert.ok(DECODE[encoding](sent.body).equals(plain.body), `${path} in ${encoding} decodes to the plain bytes`);
        assert.match(sent.headers.etag, /^"[0-9a-f]+-(br|gzip)"$/, `${path}: a strong ETag naming the encoding`);
        tags.add(sent.headers.etag);
      }
      if (file.endsWith('.png')) continue;
      assert.equal(tags.size, 3, `${path}: identity, br and gzip each have their own ETag: ${[...tags]}`);
      const [identityTag, brTag, gzipTag] = [...tags];
      const again = (tag, encoding) => get(site.base, path, { 'accept-encoding': encoding, 'if-none-match': tag });
      assert.equal((await again(brTag, 'gzip, br')).status, 304, `${path}: br's own tag is 304`);
      assert.equal((await again(gzipTag, 'gzip, br')).status, 200, `${path}: gzip's tag is not 304 for br`);
      assert.equal((await again(brTag, 'identity')).status, 200, `${path}: br's tag is not 304 for identity`);
      assert.equal((await again(identityTag, 'gzip')).status, 200, `${path}: identity's tag is not 304 for gzip`);
    }
    const wasm = await get(site.base, '/pkg/stockhop_bg.wasm', { 'accept-encoding': 'gzip, deflate, br' });
    assert.equal(wasm.headers['content-encoding'], 'br', 'a browser gets the module in br');
    assert.ok(wasm.body.length < 0.5 * readFileSync(new URL('../../www/pkg/stockhop_bg.wasm', import.meta.url)).length,
      'the module crosses the network at under half its size');
  } finally {
    await site.stop();
  }
});

test('the HTTPS port speaks HTTP/2 to a client that offers it by ALPN and HTTP/1.1 to one that does not', async () => {
  const dataDir = tempDataDir();
  const site = await startSite({ dataDir, extraArgs: ['--https', '127.0.0.1:0', '--tls-name', SITE_NAME] });
  try {
    const port = Number(/site server listening \(https\) addr=127\.0\.0\.1:(\d+)/.exec(site.log())[1]);
    const ca = readFileSync(join(dataDir, 'tls', 'ca.crt'));

    const session = http2.connect(`https://127.0.0.1:${port}`, { ca, servername: SITE_NAME });
    try {
      const answer = await new Promise((resolve, reject) => {
        session.once('error', reject);
        const stream = session.request({ ':path': '/app.js', 'accept-encoding': 'br' });
        let headers;
        stream.on('response', (h) => (headers = h));
        stream.on('data', () => {});
        stream.on('end', () => resolve(headers));
        stream.on('error', reject);
      });
      assert.equal(session.alpnProtocol, 'h2');
      assert.equal(answer[':status'], 200);
      assert.equal(answer['content-encoding'], 'br');
    } finally {
      session.close();
    }

    const old = await new Promise((resolve, reject) => {
      const request = https.get({
        host: '127.0.0.1', port, path: '/app.js', servername: SITE_NAME, ca, ALPNProtocols: ['http/1.1'], agent: false,
      }, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode, alpn: res.socket.alpnProtocol, version: res.httpVersion }));
      });
      request.on('error', reject);
    });
    assert.deepEqual(old, { status: 200, alpn: 'http/1.1', version: '1.1' });
  } finally {
    await site.stop();
  }
});
