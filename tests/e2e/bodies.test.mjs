// Request bodies at the web server: each route capped near its program's
// own cap (413, nothing stored), and a body that stalls cut after
// SANDBOX_BODY_DEADLINE (lighttpd's read deadline; under Caddy, which passes
// bodies on as they come, the program's), freeing the worker; a long
// command's response is not cut by that deadline.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startServer } from './lib/server.mjs';
import { connect, http, initializeBody } from './lib/client.mjs';
import { register } from './lib/oauth.mjs';

const DEADLINE = 3;

/* Send headers announcing length bytes and only part of the body; resolve when the server closes. */
function stall(srv, path, length) {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    let reply = '';
    const s = net.connect(srv.port, srv.host, () => {
      s.write(`POST ${path} HTTP/1.1\r\nHost: ${srv.host}:${srv.port}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${length}\r\nConnection: close\r\n\r\n{"a":`);
    });
    s.setEncoding('latin1');
    s.on('data', (d) => (reply += d));
    s.on('close', () => resolve({ ms: Date.now() - t0, reply }));
    s.on('error', reject);
    setTimeout(() => {
      s.destroy();
      reject(new Error(`the stalled body was not cut within 30 s (${path})`));
    }, 30000);
  });
}

describe('request bodies', () => {
  let srv;
  before(async () => {
    srv = await startServer({
      name: 'bodies',
      settings: { SANDBOX_THREADS: 2 },
      env: { SANDBOX_BODY_DEADLINE: String(DEADLINE) },
    });
  });
  after(async () => {
    await srv?.stop();
  });

  it('bodies over a route\'s cap are refused with 413 and nothing is stored', async () => {
    const big = (n) => JSON.stringify({ redirect_uris: ['http://127.0.0.1:1/cb'], client_name: 'x'.repeat(n) });
    assert.equal((await register(srv, big(40 * 1024))).status, 413);
    const tok = await fetch(`${srv.url}/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'a='.padEnd(40 * 1024, 'b') });
    assert.equal(tok.status, 413);
    const meta = await fetch(`${srv.url}/.well-known/oauth-authorization-server`, { method: 'POST', body: 'x'.repeat(8 * 1024) });
    assert.equal(meta.status, 413);
    const mcp = await http(srv, { body: 'x'.repeat(2 * 1024 * 1024) });
    assert.equal(mcp.status, 413);
    // Still serving.
    assert.equal((await register(srv, { redirect_uris: ['http://127.0.0.1:1/cb'] })).status, 201);
    assert.equal((await http(srv, { body: initializeBody() })).status, 200);
  });

  it('a stalled body is cut after the deadline and its worker serves again', async () => {
    // Both of the program's threads held by stalled bodies: new requests
    // are served once they are cut.
    const stalls = [stall(srv, '/register', 2000), stall(srv, '/register', 2000)];
    const cut = await Promise.all(stalls);
    for (const c of cut) {
      assert.ok(c.ms >= (DEADLINE - 1) * 1000, `cut after ${c.ms} ms`);
      assert.doesNotMatch(c.reply, /^HTTP\/1\.1 201/);
    }
    const t0 = Date.now();
    assert.equal((await register(srv, { redirect_uris: ['http://127.0.0.1:1/cb'] })).status, 201);
    assert.ok(Date.now() - t0 < 5000);
  });

  it('the body deadline does not cut a long command\'s response', async () => {
    const conn = await connect(srv);
    try {
      const res = await conn.execute({ command: `sleep ${DEADLINE * 3}; echo finished` });
      assert.equal(res.structuredContent.stdout, 'finished\n');
    } finally {
      await conn.close();
    }
  });
});
