// The Streamable HTTP transport's error cases, over raw HTTP.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { startServer } from './lib/server.mjs';
import { http, initializeBody, openSession, call, LATEST } from './lib/client.mjs';

const ping = (id) => ({ jsonrpc: '2.0', id, method: 'ping' });

describe('transport errors', () => {
  let srv;
  let sess;

  before(async () => {
    srv = await startServer({ name: 'transport' });
    sess = await openSession(srv);
  });
  after(async () => {
    await srv?.stop();
  });

  it('no Authorization: 401 with WWW-Authenticate naming the resource metadata', async () => {
    const r = await http(srv, { body: initializeBody(), headers: { authorization: null } });
    assert.equal(r.status, 401);
    const wa = r.headers.get('www-authenticate') ?? '';
    assert.match(wa, /^Bearer /);
    assert.match(wa, /resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp"/);
  });

  it('a wrong bearer token: 401 with resource_metadata and invalid_token', async () => {
    for (const auth of ['Bearer not-the-key', `Bearer ${srv.key}x`, `Basic ${Buffer.from('a:b').toString('base64')}`, `Bearer ${srv.key.slice(0, -1)}`]) {
      const r = await http(srv, { body: initializeBody(), headers: { authorization: auth } });
      assert.equal(r.status, 401, `for ${auth.split(' ')[0]} ...`);
      assert.match(r.headers.get('www-authenticate') ?? '', /resource_metadata=/);
    }
    const r = await http(srv, { body: initializeBody(), headers: { authorization: 'Bearer not-the-key' } });
    assert.match(r.headers.get('www-authenticate'), /error="invalid_token"/);
  });

  it('a wrong bearer token is refused inside a valid session too', async () => {
    const r = await http(srv, { body: ping(1), session: sess.session, version: sess.version, headers: { authorization: 'Bearer nope-nope-nope' } });
    assert.equal(r.status, 401);
  });

  it('a foreign Origin: 403', async () => {
    for (const origin of ['https://evil.example', 'http://127.0.0.1.evil.example', 'null']) {
      const r = await http(srv, { body: initializeBody(), headers: { origin } });
      assert.equal(r.status, 403, `Origin ${origin}`);
    }
    const r = await http(srv, { body: ping(1), session: sess.session, version: sess.version, headers: { origin: 'https://evil.example' } });
    assert.equal(r.status, 403);
  });

  it('the server\'s own (loopback) origin and a missing Origin are fine', async () => {
    for (const origin of [srv.url, `http://localhost:${srv.port}`]) {
      const r = await http(srv, { body: initializeBody(), headers: { origin } });
      assert.equal(r.status, 200, `Origin ${origin}: ${r.text}`);
    }
    const r = await http(srv, { body: initializeBody(), headers: { origin: null } });
    assert.equal(r.status, 200);
  });

  it('Accept without application/json or text/event-stream: 406', async () => {
    const r = await http(srv, { body: initializeBody(), headers: { accept: 'text/html' } });
    assert.equal(r.status, 406);
  });

  it('Accept: */* is fine', async () => {
    const r = await http(srv, { body: initializeBody(), headers: { accept: '*/*' } });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.result.protocolVersion, LATEST);
    const p = await http(srv, { body: ping(3), session: sess.session, version: sess.version, headers: { accept: '*/*' } });
    assert.equal(p.status, 200);
    assert.deepEqual(p.json, { jsonrpc: '2.0', id: 3, result: {} });
  });

  it('a body that is not JSON: 400 with -32700 and id null', async () => {
    for (const body of ['{"jsonrpc": "2.0", "id": 1, "method": "ping"', 'hello', '']) {
      const r = await http(srv, { body, session: sess.session, version: sess.version });
      assert.equal(r.status, 400, `body ${JSON.stringify(body)}: ${r.text}`);
      assert.equal(r.json.error.code, -32700);
      assert.equal(r.json.id, null);
      assert.equal(r.json.jsonrpc, '2.0');
    }
    const r = await http(srv, { body: 'not json' });
    assert.equal(r.status, 400);
    assert.equal(r.json.error.code, -32700);
  });

  it('JSON that is not a JSON-RPC message: -32600', async () => {
    const cases = [
      [{ foo: 1 }, null],
      [{ jsonrpc: '1.0', id: 5, method: 'ping' }, 5],
      [{ jsonrpc: '2.0', id: 6, method: 42 }, 6],
      [{ jsonrpc: '2.0', id: { a: 1 }, method: 'ping' }, null],
      [42, null],
    ];
    for (const [body, id] of cases) {
      const r = await http(srv, { body, session: sess.session, version: sess.version });
      const what = `body ${JSON.stringify(body)} answered ${r.status} ${r.text}`;
      assert.equal(r.status, 400, what);
      assert.equal(r.json.error.code, -32600, what);
      assert.equal(r.json.id, id, what);
    }
  });

  it('an unknown method in a session: -32601 with the request\'s id', async () => {
    const r = await call(srv, sess, 'no/such/method', {}, { id: 'req-77' });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.id, 'req-77');
    assert.equal(r.json.error.code, -32601);
  });

  it('a request without a session that is not initialize: 400 with -32000', async () => {
    for (const method of ['tools/list', 'server/discover', 'ping']) {
      const r = await http(srv, { body: { jsonrpc: '2.0', id: 9, method } });
      assert.equal(r.status, 400, `${method}: ${r.text}`);
      assert.equal(r.json.error.code, -32000, method);
    }
  });

  it('an unknown session id: 404', async () => {
    const r = await http(srv, { body: ping(1), session: 'no-such-session-0123456789abcdef', version: LATEST });
    assert.equal(r.status, 404);
  });

  it('notifications are answered 202 with an empty body', async () => {
    const r = await http(srv, { body: { jsonrpc: '2.0', method: 'notifications/initialized' }, session: sess.session, version: sess.version });
    assert.equal(r.status, 202);
    assert.equal(r.text, '');
    const c = await http(srv, {
      body: { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 12345, reason: 'test' } },
      session: sess.session,
      version: sess.version,
    });
    assert.equal(c.status, 202);
    assert.equal(c.text, '');
  });

  it('a JSON-RPC response from the client is answered 202', async () => {
    const r = await http(srv, { body: { jsonrpc: '2.0', id: 'srv-1', result: {} }, session: sess.session, version: sess.version });
    assert.equal(r.status, 202);
    assert.equal(r.text, '');
  });

  it('MCP-Protocol-Version: absent or another supported version is fine, an unsupported one is 400', async () => {
    const absent = await http(srv, { body: ping(1), session: sess.session });
    assert.equal(absent.status, 200, absent.text);
    const other = await http(srv, { body: ping(2), session: sess.session, version: '2025-03-26' });
    assert.equal(other.status, 200, other.text);
    const bad = await http(srv, { body: ping(3), session: sess.session, version: '1999-01-01' });
    assert.equal(bad.status, 400, bad.text);
  });

  it('GET /mcp: 405', async () => {
    const r = await http(srv, { method: 'GET', session: sess.session, version: sess.version, headers: { accept: 'text/event-stream' } });
    assert.equal(r.status, 405);
  });

  it('a batch is refused (-32600) under 2025-11-25', async () => {
    const r = await http(srv, { body: [ping(1), ping(2)], session: sess.session, version: sess.version });
    assert.equal(sess.version, '2025-11-25');
    const err = Array.isArray(r.json) ? r.json[0] : r.json;
    assert.equal(err.error.code, -32600, r.text);
    assert.ok(r.status === 400 || r.status === 200, `status ${r.status}`);
  });

  it('a batch is answered under 2025-03-26', async () => {
    const old = await openSession(srv, '2025-03-26');
    assert.equal(old.version, '2025-03-26');
    const r = await http(srv, {
      body: [ping(1), { jsonrpc: '2.0', method: 'notifications/initialized' }, { jsonrpc: '2.0', id: 'b', method: 'tools/list' }],
      session: old.session,
      version: old.version,
    });
    assert.equal(r.status, 200, r.text);
    const msgs = r.messages;
    assert.equal(msgs.length, 2, `two responses for two requests: ${r.text}`);
    const byId = Object.fromEntries(msgs.map((m) => [m.id, m]));
    assert.deepEqual(byId[1].result, {});
    assert.ok(byId.b.result.tools.some((t) => t.name === 'execute'));
  });

  it('a body over the cap: 413', async () => {
    const big = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'execute', arguments: { command: 'echo ' + 'x'.repeat(16 << 20) } },
    });
    const r = await http(srv, { body: big, session: sess.session, version: sess.version });
    assert.equal(r.status, 413);
    // The session still works afterwards.
    const p = await http(srv, { body: ping(2), session: sess.session, version: sess.version });
    assert.equal(p.status, 200);
  });

  it('a chunked body (no Content-Length) over a small cap: 413, not cut short', async () => {
    // Caddy passes a chunked body without CONTENT_LENGTH: the program must
    // notice the excess itself rather than parse the first max bytes.
    const post = (path, ctype, body) => new Promise((resolve, reject) => {
      const req = request(srv.url + path, {
        method: 'POST',
        headers: { 'content-type': ctype, 'transfer-encoding': 'chunked' },
      }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode));
      });
      req.on('error', reject);
      req.write(body.slice(0, 100));
      req.end(body.slice(100));
    });
    const form = 'grant_type=authorization_code&client_id=x&pad=' + 'a'.repeat(9000);
    assert.equal(await post('/token', 'application/x-www-form-urlencoded', form), 413);
    const reg = JSON.stringify({ redirect_uris: ['https://a.example/cb'], pad: 'x'.repeat(17000) });
    assert.equal(await post('/register', 'application/json', reg), 413);
    const signin = 'request=x&key=' + 'k'.repeat(5000);
    assert.equal(await post('/authorize', 'application/x-www-form-urlencoded', signin), 413);
  });

  it('DELETE ends the session; it is then unknown (404)', async () => {
    const s = await openSession(srv);
    const ok = await http(srv, { body: ping(1), session: s.session, version: s.version });
    assert.equal(ok.status, 200);
    const d = await http(srv, { method: 'DELETE', session: s.session, version: s.version });
    assert.ok(d.status === 200 || d.status === 204, `DELETE: ${d.status} ${d.text}`);
    const after = await http(srv, { body: ping(2), session: s.session, version: s.version });
    assert.equal(after.status, 404);
    const again = await http(srv, { method: 'DELETE', session: s.session, version: s.version });
    assert.equal(again.status, 404);
  });

  it('paths other than /mcp are not served', async () => {
    for (const path of ['/', '/mcp/', '/mcpx', '/index.html', '/lighttpd.conf', '/.env']) {
      const r = await http(srv, { path, method: 'GET' });
      assert.ok(r.status === 404 || r.status === 403, `${path}: ${r.status}`);
      assert.doesNotMatch(r.text, /SANDBOX_API_KEY|server\.port/);
    }
  });

  it('the programs exit cleanly on SIGTERM with no sanitizer reports', async () => {
    await srv.shutdown();
  });
});
