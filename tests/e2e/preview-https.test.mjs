// Preview links over https, as a public server has them: behind Caddy with
// the shipped routes and a wildcard certificate for *.preview.localhost
// (made by the test's own CA), SANDBOX_PREVIEW_URL=https://*.preview.localhost:PORT.
// What only https changes: the link's cookie is __Host- prefixed, Secure,
// HttpOnly, SameSite=Lax and host-only; the app's own cookie loses its
// Domain; a request without the cookie gets 403; a WebSocket passes
// through TLS. Node's https (which does not resolve *.localhost) connects
// to 127.0.0.1 with the preview's name for SNI and Host.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import { request } from 'node:https';
import { connect as tlsConnect } from 'node:tls';
import { promisify } from 'node:util';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { startServer, freePort, TOP } from './lib/server.mjs';
import { connect, resultText } from './lib/client.mjs';

const execFileP = promisify(execFile);

// Caddy runs it, whichever front the pass is for: once is enough.
const skip = process.env.CS_WEB && process.env.CS_WEB !== 'lighttpd' ? 'https previews run once, in the lighttpd pass (Caddy serves them)' : false;

const APP = String.raw`
const http = require('http');
const crypto = require('crypto');
const srv = http.createServer((req, res) => {
  res.setHeader('Set-Cookie', ['app=one; Domain=preview.localhost; Path=/; Secure', 'plain=two']);
  res.end('hello over tls; cookie=' + (req.headers.cookie || ''));
});
srv.on('upgrade', (req, sock) => {
  const acc = crypto.createHash('sha1').update(req.headers['sec-websocket-key'] + '258EAFA5-E914-47DA-95CA-C5AB0DC85B11').digest('base64');
  sock.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ' + acc + '\r\n\r\n');
  sock.on('data', (d) => {
    const len = d[1] & 127, mask = d.subarray(2, 6), p = Buffer.from(d.subarray(6, 6 + len));
    for (let i = 0; i < p.length; i++) p[i] ^= mask[i & 3];
    sock.write(Buffer.concat([Buffer.from([0x81, p.length]), p]));
  });
});
srv.listen(3010, '127.0.0.1');
`;

describe('previews over https', { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'cs-e2e-phttps-'));
  let srv, mcp, port, ca;

  /* One request over TLS to a preview URL, trusting the test CA only. */
  const get = (url, { cookie } = {}) => {
    const u = new URL(url);
    return new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: u.port, servername: u.hostname, ca, path: u.pathname + u.search,
        headers: { Host: u.host, ...(cookie ? { Cookie: cookie } : {}) }, timeout: 30000 }, (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString() }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.end();
    });
  };

  before(async () => {
    const o = (args) => execFileP('openssl', args, { cwd: dir });
    await o(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
      '-keyout', 'ca.key', '-out', 'ca.pem', '-subj', '/CN=cs e2e preview CA',
      '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign']);
    await o(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'srv.key',
      '-out', 'srv.csr', '-subj', '/CN=*.preview.localhost']);
    writeFileSync(join(dir, 'ext.cnf'), 'subjectAltName=DNS:*.preview.localhost\n');
    await o(['x509', '-req', '-in', 'srv.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2',
      '-out', 'srv.pem', '-extfile', 'ext.cnf']);
    ca = readFileSync(join(dir, 'ca.pem'));
    port = await freePort();
    // The shipped Caddyfile, with a TLS site of the same routes for the
    // previews' names. No redirect listener on port 80.
    const shipped = readFileSync(join(TOP, 'caddy/Caddyfile'), 'utf8');
    assert.match(shipped, /^\{\n/m);
    const conf = shipped.replace(/^\{\n/m, '{\n\tauto_https disable_redirects\n') +
      `\nhttps://*.preview.localhost:${port} {\n\tbind 127.0.0.1\n\ttls ${join(dir, 'srv.pem')} ${join(dir, 'srv.key')}\n\timport routes\n}\n`;
    writeFileSync(join(dir, 'Caddyfile'), conf);
    srv = await startServer({ name: 'preview-https', web: 'caddy',
      settings: { SANDBOX_PREVIEW_URL: `https://*.preview.localhost:${port}` },
      env: { CS_CADDYFILE: join(dir, 'Caddyfile') } });
    mcp = await connect(srv);
    const r = await mcp.execute({ command: `cat > /tmp/tls-app.js <<'EOF'\n${APP}\nEOF\n(setsid nohup node /tmp/tls-app.js > /tmp/tls-app.log 2>&1 &) ; ` +
      'for i in $(seq 50); do curl -s localhost:3010 >/dev/null && exit 0; sleep 0.2; done; exit 1', timeout: 60 });
    assert.equal(r.structuredContent?.exit_code, 0, resultText(r));
  });

  after(async () => {
    await mcp?.close?.();
    await srv?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the link sets a __Host- cookie (Secure, HttpOnly, SameSite=Lax, host-only) and the app works with it; without it 403; the app\'s Domain is taken off', async () => {
    const r = await mcp.client.callTool({ name: 'preview_link', arguments: { port: 3010 } });
    assert.notEqual(r.isError, true, resultText(r));
    const url = r.structuredContent.url;
    assert.match(url, new RegExp(`^https://[a-z2-7]{26}\\.preview\\.localhost:${port}/\\.preview/[A-Za-z0-9_-]{43}/$`));
    const origin = new URL(url).origin;
    const land = await get(url);
    assert.equal(land.status, 302, land.body);
    const sc = land.headers['set-cookie'];
    assert.equal(sc.length, 1, JSON.stringify(sc));
    assert.match(sc[0], /^__Host-cs-preview=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax; Secure$/);
    assert.doesNotMatch(sc[0], /Domain=/i);
    assert.equal(new URL(land.headers.location, origin).pathname, '/');
    const cookie = sc[0].split(';')[0];
    const page = await get(`${origin}/`, { cookie });
    assert.equal(page.status, 200, page.body);
    assert.match(page.body, /^hello over tls; cookie=$/, 'the link\'s cookie does not reach the app');
    const own = page.headers['set-cookie'];
    assert.equal(own.length, 2, JSON.stringify(own));
    assert.match(own[0], /^app=one;/);
    assert.doesNotMatch(own[0], /domain/i, 'the app cannot set a cookie for the parent domain');
    assert.equal(own[1], 'plain=two');
    const none = await get(`${origin}/`);
    assert.equal(none.status, 403, none.body);
  });

  it('a WebSocket passes through TLS unchanged', async () => {
    const r = await mcp.client.callTool({ name: 'preview_link', arguments: { port: 3010 } });
    const url = new URL(r.structuredContent.url);
    const land = await get(url.href);
    const cookie = land.headers['set-cookie'][0].split(';')[0];
    const text = await new Promise((resolve, reject) => {
      const s = tlsConnect({ host: '127.0.0.1', port: Number(url.port), servername: url.hostname, ca }, () => {
        s.write(`GET /ws HTTP/1.1\r\nHost: ${url.host}\r\nCookie: ${cookie}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`);
      });
      let buf = Buffer.alloc(0);
      let sent = false;
      s.on('data', (d) => {
        buf = Buffer.concat([buf, d]);
        if (!sent) {
          const end = buf.indexOf('\r\n\r\n');
          if (end < 0) return;
          assert.match(buf.subarray(0, end).toString(), /^HTTP\/1\.1 101 /);
          buf = buf.subarray(end + 4);
          const p = Buffer.from('hi over tls');
          const mask = randomBytes(4);
          const m = Buffer.from(p.map((b, i) => b ^ mask[i & 3]));
          s.write(Buffer.concat([Buffer.from([0x81, 0x80 | p.length]), mask, m]));
          sent = true;
        }
        if (buf.length >= 2 && buf.length >= 2 + (buf[1] & 127)) {
          resolve(buf.subarray(2, 2 + (buf[1] & 127)).toString());
          s.destroy();
        }
      });
      s.on('error', reject);
      setTimeout(() => reject(new Error('no echo within 20 s')), 20000).unref();
    });
    assert.equal(text, 'hi over tls');
  });
});
