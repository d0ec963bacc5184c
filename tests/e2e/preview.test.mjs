// preview_link end to end: the official MCP SDK client makes preview links
// to servers the model starts in the sandbox, and requests follow them
// through the web server and the preview program (lib/preview/) to the
// port, through the supervisor. Node's http (which does not resolve
// *.localhost) connects to 127.0.0.1 with the preview's Host header;
// headless Chromium resolves *.localhost itself.
//
// Covered: python3 -m http.server (listing, a 20 MB download byte-exact);
// a Node app (absolute asset paths, a POST form, its own cookie with a
// Domain taken off, live SSE); a WebSocket echo (text and binary); the
// link's cookie and redirect; tampered, expired, revoked links and another
// owner's; nothing listening (502 naming the port); a port closed
// mid-stream; the preview program killed mid-stream; the channel to the
// supervisor killed mid-stream; many streams over one channel with some
// never read; the preview's script in Chromium kept from the server's
// origin.

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import { connect as netConnect } from 'node:net';
import { request } from 'node:http';
import { promisify } from 'node:util';

import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { chromium } from 'playwright-core';

import { startServer, waitFor, WEB, docker } from './lib/server.mjs';
import { connect, resultText } from './lib/client.mjs';
import { ctl } from './lib/hostile.mjs';
import { TestProvider, connectOAuth } from './lib/oauth.mjs';

const execFileP = promisify(execFile);

let srv;
let mcp;

async function sh(command, timeout = 120) {
  const r = await mcp.execute({ command, timeout });
  assert.ok(r.structuredContent, resultText(r));
  assert.equal(r.structuredContent.exit_code, 0, `${command}: ${resultText(r)}`);
  return r.structuredContent.stdout;
}

async function previewLink(args) {
  const r = await mcp.client.callTool({ name: 'preview_link', arguments: args }, undefined, { timeout: 60000 });
  assert.notEqual(r.isError, true, resultText(r));
  return r.structuredContent;
}

async function sql(query) {
  const { stdout } = await execFileP('sqlite3', ['-cmd', '.timeout 5000', srv.settings.SANDBOX_DB, query]);
  return stdout.trim();
}

/* One request to a preview URL: connects to 127.0.0.1 with its Host. */
function get(url, { method = 'GET', headers = {}, body, cookie, stream, timeout = 60000 } = {}) {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: u.port, method, path: u.pathname + u.search,
      headers: { Host: u.host, ...(cookie ? { Cookie: cookie } : {}), ...headers }, timeout }, (res) => {
      if (stream) return resolve(res);
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.end(body);
  });
}

/* Follow a link's first request: its cookie ("name=value") and where it goes. */
async function open(url) {
  const r = await get(url);
  assert.equal(r.status, 302, r.body.toString());
  const sc = r.headers['set-cookie'][0];
  assert.match(sc, /^cs-preview=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax$/);
  return { cookie: sc.split(';')[0], location: r.headers.location, origin: new URL(url).origin };
}

const NODE_APP = String.raw`
const http = require('http');
http.createServer((req, res) => {
  if (req.url === '/') {
    res.setHeader('Set-Cookie', ['app=one; Domain=preview.localhost; Path=/', 'plain=two']);
    res.end('<html><script src="/static/app.js"></script><form method="post" action="/form"></form>cookie=' + (req.headers.cookie || ''));
  } else if (req.url === '/static/app.js') {
    res.setHeader('Content-Type', 'text/javascript');
    res.end('console.log("app")');
  } else if (req.url === '/form' && req.method === 'POST') {
    let b = '';
    req.on('data', (c) => (b += c));
    req.on('end', () => res.end('got ' + b));
  } else if (req.url === '/events') {
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
    let n = 0;
    const t = setInterval(() => { res.write('data: tick ' + n++ + '\n\n'); if (n === 4) { clearInterval(t); res.end(); } }, 1000);
    req.on('close', () => clearInterval(t));
  } else if (req.url === '/early') {
    res.writeHead(413, { 'Content-Type': 'text/plain', Connection: 'close' });
    res.end('too large', () => req.socket.destroy());
  } else if (req.url === '/cut') {
    res.writeHead(200, { 'Content-Length': '1000000' });
    res.write('x'.repeat(1000));
    setTimeout(() => res.socket.destroy(), 300);
  } else { res.statusCode = 404; res.end('nope'); }
}).listen(3000, '127.0.0.1');
`;

const WS_APP = String.raw`
const http = require('http');
const crypto = require('crypto');
const srv = http.createServer((req, res) => res.end('ws only'));
srv.on('upgrade', (req, sock) => {
  const acc = crypto.createHash('sha1').update(req.headers['sec-websocket-key'] + '258EAFA5-E914-47DA-95CA-C5AB0DC85B11').digest('base64');
  sock.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ' + acc + '\r\n\r\n');
  let buf = Buffer.alloc(0);
  sock.on('data', (d) => {
    buf = Buffer.concat([buf, d]);
    for (;;) {
      if (buf.length < 2) return;
      const op = buf[0] & 15; let len = buf[1] & 127; let o = 2;
      if (len === 126) { if (buf.length < 4) return; len = buf.readUInt16BE(2); o = 4; }
      if (buf.length < o + 4 + len) return;
      const mask = buf.subarray(o, o + 4); const p = Buffer.from(buf.subarray(o + 4, o + 4 + len));
      for (let i = 0; i < p.length; i++) p[i] ^= mask[i & 3];
      buf = buf.subarray(o + 4 + len);
      if (op === 8) { sock.end(); return; }
      const h = len < 126 ? Buffer.from([0x80 | op, len]) : Buffer.from([0x80 | op, 126, len >> 8, len & 255]);
      sock.write(Buffer.concat([h, p]));
    }
  });
});
srv.listen(3001);
`;

// A hostile preview: its script tries the server's origin (SERVER, filled
// in), reads cookies and tosses one onto the parent domains.
const EVIL_APP = String.raw`
const http = require('http');
const page = '<!doctype html><title>running</title><script>' +
  'const S = "SERVER"; const out = {};' +
  'async function t(name, url, init) { try { const r = await fetch(url, init); out[name] = "read " + r.status + " " + (await r.text()).slice(0, 40); } catch (e) { out[name] = "blocked"; } }' +
  '(async () => {' +
  ' await t("mcp", S + "/mcp", { method: "POST", body: "{}", credentials: "include" });' +
  ' await t("authorize", S + "/authorize?client_id=x", { credentials: "include" });' +
  ' out.cookie = document.cookie;' +
  ' document.cookie = "tossed=1; Domain=preview.localhost; Path=/";' +
  ' document.cookie = "tossed2=1; Domain=localhost; Path=/";' +
  ' document.cookie = "own=1; Path=/";' +
  ' out.after = document.cookie;' +
  ' document.body.textContent = JSON.stringify(out); document.title = "done";' +
  '})();</script>';
http.createServer((req, res) => {
  if (req.url === '/echo') return res.end(req.headers.cookie || '');
  res.setHeader('Content-Type', 'text/html');
  res.end(page);
}).listen(3002, '127.0.0.1');
`;

// An app whose answers are malformed on purpose (raw TCP).
const HOSTILE_APP = String.raw`
const net = require('net');
const CRLF = String.fromCharCode(13, 10);
const head = (lines) => lines.join(CRLF) + CRLF + CRLF;
net.createServer((s) => {
  let b = '';
  s.on('data', (d) => {
    b += d;
    if (!b.includes(CRLF + CRLF)) return;
    const path = b.split(' ')[1];
    if (path === '/huge') s.write('HTTP/1.1 200 OK' + CRLF + 'X-Big: ' + 'a'.repeat(40000));
    else if (path === '/lengths') s.end(head(['HTTP/1.1 200 OK', 'Content-Length: 2', 'Content-Length: 3']) + 'abc');
    else if (path === '/upgrade') s.end(head(['HTTP/1.1 101 Switching Protocols', 'Upgrade: websocket', 'Connection: Upgrade']));
    else if (path === '/nul') s.end(head(['HTTP/1.1 200 OK', 'X: a' + String.fromCharCode(0) + 'b']));
    else if (path === '/silent') s.end();
    else s.end(head(['HTTP/1.1 200 OK', 'Set-Cookie: cs-preview=mine; Path=/', 'Set-Cookie: ok=1; domain=localhost', 'Content-Length: 2']) + 'ok');
  });
}).listen(3003, '127.0.0.1');
`;

/* A WebSocket client over a raw socket (the Host header is the preview's). */
function wsOpen(url, cookie) {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const s = netConnect(Number(u.port), '127.0.0.1');
    const key = randomBytes(16).toString('base64');
    let buf = Buffer.alloc(0);
    let head = null;
    const frames = [];
    const waiters = [];
    s.on('error', reject);
    s.on('connect', () => s.write(`GET ${u.pathname} HTTP/1.1\r\nHost: ${u.host}\r\nCookie: ${cookie}\r\n` +
      `Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`));
    s.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      if (head === null) {
        const i = buf.indexOf('\r\n\r\n');
        if (i < 0) return;
        head = buf.subarray(0, i).toString();
        buf = buf.subarray(i + 4);
        const want = createHash('sha1').update(key + '258EAFA5-E914-47DA-95CA-C5AB0DC85B11').digest('base64');
        resolve({
          head,
          accepted: head.includes(want),
          send(op, payload) {
            const mask = randomBytes(4);
            const p = Buffer.from(payload);
            for (let j = 0; j < p.length; j++) p[j] ^= mask[j & 3];
            const h = p.length < 126 ? Buffer.from([0x80 | op, 0x80 | p.length]) : Buffer.from([0x80 | op, 0x80 | 126, p.length >> 8, p.length & 255]);
            s.write(Buffer.concat([h, mask, p]));
          },
          next() { return frames.length ? Promise.resolve(frames.shift()) : new Promise((r) => waiters.push(r)); },
          close() { s.destroy(); },
        });
      }
      for (;;) {
        if (buf.length < 2) return;
        const op = buf[0] & 15; let len = buf[1] & 127; let o = 2;
        if (len === 126) { if (buf.length < 4) return; len = buf.readUInt16BE(2); o = 4; }
        if (buf.length < o + len) return;
        const f = { op, data: Buffer.from(buf.subarray(o, o + len)) };
        buf = buf.subarray(o + len);
        if (waiters.length) waiters.shift()(f); else frames.push(f);
      }
    });
  });
}

// Behind Apache, previews need mod_proxy (apache/proxy-fcgi.conf): the
// shared-hosting set-up (mod_fcgid, .htaccess) cannot route them, and
// preview_link says so (the last test).
const web = WEB === 'apache' ? 'apache-proxy' : WEB;

// What the supervisor's mux and the preview program do alone, the same
// behind every front: run behind lighttpd only.
const ONE_FRONT = { skip: WEB !== 'lighttpd' ? 'the same behind every front: behind lighttpd only' : false };

before(async () => {
  srv = await startServer({ name: 'preview', web });
  mcp = await connect(srv);
  await sh(`mkdir -p /sandbox/pv && cd /sandbox/pv && head -c 20000000 /dev/urandom > big.bin && echo hello > hello.txt && sha256sum big.bin | cut -d' ' -f1`);
  await sh(`cat > /tmp/pv-app.js <<'EOF'\n${NODE_APP}\nEOF\ncat > /tmp/pv-ws.js <<'EOF'\n${WS_APP}\nEOF\n` +
    `cd /sandbox/pv && (setsid nohup python3 -m http.server 8000 --bind 127.0.0.1 > /tmp/http.log 2>&1 &) ; ` +
    `(setsid nohup node /tmp/pv-app.js > /tmp/app.log 2>&1 &) ; (setsid nohup node /tmp/pv-ws.js > /tmp/ws.log 2>&1 &) ; ` +
    `for i in $(seq 50); do curl -s localhost:8000 >/dev/null && curl -s localhost:3000 >/dev/null && curl -s localhost:3001 >/dev/null && exit 0; sleep 0.2; done; exit 1`);
});

after(async () => {
  await mcp?.close?.();
  await srv?.stop();
});

test('preview_link answers at once with a link on its own origin', async () => {
  const l = await previewLink({ port: 8000 });
  assert.match(l.url, new RegExp(`^http://[a-z2-7]{26}\\.preview\\.localhost:${srv.port}/\\.preview/[A-Za-z0-9_-]{43}/$`));
  assert.equal(l.port, 8000);
  assert.match(l.link_id, /^[a-z2-7]{26}$/);
  assert.ok(l.url.startsWith(`http://${l.link_id}.`));
  const r = await mcp.client.callTool({ name: 'preview_link', arguments: { port: 8000 } });
  assert.match(resultText(r), /curl -sI localhost:8000/);
  const bad = await mcp.client.callTool({ name: 'preview_link', arguments: { port: 70000 } });
  assert.equal(bad.isError, true);
  const badPath = await mcp.client.callTool({ name: 'preview_link', arguments: { port: 80, path: 'no slash' } });
  assert.equal(badPath.isError, true);
  // The operator's listing names it, with its owner on the row.
  assert.equal(await sql(`select port || ' ' || owner from preview where id = '${l.link_id}'`), '8000 operator');
});

test('python3 -m http.server: the folder listed, 20 MB byte-exact', async () => {
  const l = await previewLink({ port: 8000, path: '/' });
  const { cookie, location } = await open(l.url);
  assert.equal(location, '/');
  const list = await get(new URL('/', l.url).href, { cookie });
  assert.equal(list.status, 200);
  assert.match(list.body.toString(), /big\.bin/);
  assert.match(list.body.toString(), /hello\.txt/);
  const want = (await sh(`sha256sum /sandbox/pv/big.bin | cut -d' ' -f1`)).trim();
  const big = await get(new URL('/big.bin', l.url).href, { cookie, timeout: 120000 });
  assert.equal(big.status, 200);
  assert.equal(big.body.length, 20000000);
  assert.equal(createHash('sha256').update(big.body).digest('hex'), want);
});

test('a Node app: absolute assets, a POST form, its own cookie host-only, live SSE', async () => {
  const l = await previewLink({ port: 3000 });
  const { cookie } = await open(l.url);
  const home = await get(new URL('/', l.url).href, { cookie: `${cookie}; mine=yes` });
  assert.equal(home.status, 200);
  // The app sees its own cookies, never the preview's.
  assert.match(home.body.toString(), /cookie=mine=yes$/);
  const sc = home.headers['set-cookie'];
  assert.deepEqual(sc, ['app=one; Path=/', 'plain=two']);
  const js = await get(new URL('/static/app.js', l.url).href, { cookie });
  assert.equal(js.status, 200);
  assert.equal(js.body.toString(), 'console.log("app")');
  const form = await get(new URL('/form', l.url).href, { method: 'POST', cookie, body: 'a=1&b=2',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': '7' } });
  assert.equal(form.body.toString(), 'got a=1&b=2');
  // SSE: each event arrives about when sent, not all at the end.
  const res = await get(new URL('/events', l.url).href, { cookie, stream: true });
  assert.equal(res.statusCode, 200);
  const t0 = Date.now();
  const times = [];
  await new Promise((resolve) => {
    res.on('data', (c) => { for (const _ of c.toString().matchAll(/data: tick/g)) times.push(Date.now() - t0); });
    res.on('end', resolve);
  });
  assert.equal(times.length, 4, String(times));
  assert.ok(times[0] < 2500, String(times));
  assert.ok(times[3] - times[0] > 2000, `events came together: ${times}`);
});

test('WebSocket: a text and a binary message echoed through the link', async () => {
  const l = await previewLink({ port: 3001 });
  const { cookie } = await open(l.url);
  const ws = await wsOpen(new URL('/ws', l.url).href, cookie);
  assert.match(ws.head, /^HTTP\/1\.1 101 /);
  assert.ok(ws.accepted, ws.head);
  ws.send(1, 'hello preview');
  const a = await ws.next();
  assert.equal(a.op, 1);
  assert.equal(a.data.toString(), 'hello preview');
  const bin = randomBytes(300);
  ws.send(2, bin);
  const b = await ws.next();
  assert.equal(b.op, 2);
  assert.deepEqual(b.data, bin);
  ws.close();
});

test('Chromium: a preview cannot reach the server\'s origin nor its cookies', async (t) => {
  const app = EVIL_APP.replace('SERVER', srv.url);
  await sh(`cat > /tmp/pv-evil.js <<'EOF'\n${app}\nEOF\n(setsid nohup node /tmp/pv-evil.js > /tmp/evil.log 2>&1 &) ; ` +
    `for i in $(seq 50); do curl -s localhost:3002 >/dev/null && exit 0; sleep 0.2; done; exit 1`);
  const l = await previewLink({ port: 3002 });
  const l2 = await previewLink({ port: 3002, path: '/echo' });
  const profile = mkdtempSync(join(tmpdir(), 'cs-chromium-'));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium', headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    // A cookie of the server's origin, as a sign-in would leave.
    await browser.addCookies([{ name: 'server_secret', value: 's3cret', url: srv.url }]);
    const page = await browser.newPage();
    const resp = await page.goto(l.url);
    assert.equal(resp.status(), 200);
    assert.equal(new URL(page.url()).pathname, '/', 'redirected to the clean path');
    await page.waitForFunction(() => document.title === 'done', null, { timeout: 30000 });
    const out = JSON.parse(await page.textContent('body'));
    assert.equal(out.mcp, 'blocked', JSON.stringify(out));
    assert.equal(out.authorize, 'blocked', JSON.stringify(out));
    assert.doesNotMatch(out.cookie, /server_secret|cs-preview/, 'neither the server\'s cookie nor the preview\'s own');
    assert.doesNotMatch(out.after, /tossed2/);
    // From the server's side: /mcp refused the preview's origin.
    const origin = new URL(l.url).origin;
    await waitFor(() => srv.programsOutput().includes(origin), { timeout: 10000, what: 'the refusal logged' });
    // The server's origin never got the tossed cookies.
    const cookies = await browser.cookies(srv.url);
    assert.deepEqual(cookies.map((c) => c.name), ['server_secret']);
    // Nor does another preview (its own origin) get this one's cookies
    // from the server side, but what the browser holds for the parent.
    // Another preview's app (landing on /echo: no script runs there)
    // sees none of the first one's cookies.
    const page2 = await browser.newPage();
    const echo = await page2.goto(l2.url);
    assert.equal(new URL(page2.url()).pathname, '/echo');
    const seen = await echo.text();
    assert.doesNotMatch(seen, /own=1|server_secret|cs-preview|tossed2/, seen);
    // A script may set a cookie on the preview domain's parent (the
    // browser's rule, not the server's): docs/links.md advises a preview
    // domain of its own, under no other site.
    if (/tossed=1/.test(seen)) t.diagnostic('a cookie a script set on preview.localhost reached another preview');
  } finally {
    await browser.close();
    rmSync(profile, { recursive: true, force: true });
  }
});

test('an app\'s malformed answers: a 502 page, the program unharmed', ONE_FRONT, async () => {
  await sh(`cat > /tmp/pv-hostile.js <<'EOF'\n${HOSTILE_APP}\nEOF\n(setsid nohup node /tmp/pv-hostile.js > /tmp/hostile.log 2>&1 &) ; ` +
    `for i in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/3003) 2>/dev/null && exit 0; sleep 0.2; done; exit 1`);
  const l = await previewLink({ port: 3003 });
  const { cookie } = await open(l.url);
  for (const [path, why] of [['/huge', /longer than 16 KiB/], ['/lengths', /two framings/], ['/upgrade', /upgrade that was not asked/],
    ['/nul', /control byte/], ['/silent', /without an answer/]]) {
    const r = await get(new URL(path, l.url).href, { cookie });
    assert.equal(r.status, 502, `${path}: ${r.body}`);
    assert.match(r.body.toString(), why, `${path}: ${r.body}`);
  }
  const ok = await get(new URL('/ok', l.url).href, { cookie });
  assert.equal(ok.status, 200);
  assert.deepEqual(ok.headers['set-cookie'], ['ok=1'], 'the preview\'s cookie name and Domain are not the app\'s');
  assert.equal(ok.body.toString(), 'ok');
});

test('refused: no cookie, a tampered link, expired, revoked', async () => {
  const l = await previewLink({ port: 8000 });
  const origin = new URL(l.url).origin;
  const none = await get(origin + '/');
  assert.equal(none.status, 403);
  assert.match(none.body.toString(), /needs its link/);
  const sig = l.url.match(/\/\.preview\/([^/]+)\//)[1];
  const tampered = l.url.replace(sig, (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1));
  assert.equal((await get(tampered)).status, 403);
  // Another link's signature on this host.
  const other = await previewLink({ port: 8000 });
  const osig = other.url.match(/\/\.preview\/([^/]+)\//)[1];
  assert.equal((await get(`${origin}/.preview/${osig}/`)).status, 403);
  assert.equal((await get(origin + '/', { cookie: `cs-preview=${osig}` })).status, 403);
  const { cookie } = await open(l.url);
  assert.equal((await get(origin + '/', { cookie })).status, 200);
  await sql(`update preview set expires = unixepoch() - 1 where id = '${l.link_id}'`);
  const exp = await get(origin + '/', { cookie });
  assert.equal(exp.status, 410);
  assert.match(exp.body.toString(), /expired/);
  const { cookie: c2 } = await open(other.url);
  const { stdout } = await execFileP(`${srv.bin}/sandboxctl`, ['links', 'revoke', other.link_id], { env: { ...process.env, SANDBOX_ENV_FILE: srv.envFile } });
  assert.match(stdout, /revoked/);
  const rev = await get(new URL(other.url).origin + '/', { cookie: c2 });
  assert.equal(rev.status, 410);
  assert.match(rev.body.toString(), /revoked/);
  const list = await execFileP(`${srv.bin}/sandboxctl`, ['links', 'list'], { env: { ...process.env, SANDBOX_ENV_FILE: srv.envFile } });
  assert.match(list.stdout, new RegExp(`${other.link_id}.*revoked.*preview of port 8000`));
});

test('an app that answers before it takes the whole body (413): its answer, not a 502', async () => {
  const l = await previewLink({ port: 3000 });
  const { cookie } = await open(l.url);
  const u = new URL(l.url);
  const body = Buffer.alloc(4 << 20, 120);
  const s = netConnect({ host: '127.0.0.1', port: Number(u.port) });
  let got = '';
  const ended = new Promise((resolve) => { s.on('close', resolve); s.on('end', resolve); });
  s.on('data', (d) => (got += d.toString('latin1')));
  s.on('error', () => {});
  s.write(`POST /early HTTP/1.1\r\nHost: ${u.host}\r\nCookie: ${cookie}\r\nContent-Length: ${body.length}\r\n\r\n`);
  s.write(body);
  await Promise.race([ended, new Promise((r) => setTimeout(r, 20000))]);
  s.destroy();
  assert.match(got, /^HTTP\/1\.1 413 /, got.slice(0, 300));
  assert.match(got, /too large/);
});

test('nothing listening: a 502 page naming the port', async () => {
  const l = await previewLink({ port: 3999 });
  const { cookie } = await open(l.url);
  const r = await get(new URL('/', l.url).href, { cookie });
  assert.equal(r.status, 502);
  assert.match(r.body.toString(), /Nothing listens on port 3999/);
});

test('a port closed mid-stream ends the response; the next request works', async () => {
  const l = await previewLink({ port: 3000 });
  const { cookie } = await open(l.url);
  const res = await get(new URL('/cut', l.url).href, { cookie, stream: true });
  let got = 0;
  await new Promise((resolve) => {
    res.on('data', (c) => (got += c.length));
    res.on('end', resolve);
    res.on('error', resolve);
    res.on('aborted', resolve);
    res.on('close', resolve);
  });
  assert.ok(got >= 1000 && got < 1000000, String(got));
  assert.equal((await get(new URL('/static/app.js', l.url).href, { cookie })).status, 200);
});

test('the preview program killed mid-stream: the next request works', ONE_FRONT, async () => {
  const l = await previewLink({ port: 8000 });
  const { cookie } = await open(l.url);
  const res = await get(new URL('/big.bin', l.url).href, { cookie, stream: true });
  const pids = srv.programPids('preview');
  assert.ok(pids.length >= 1, 'the preview program runs');
  await new Promise((resolve) => res.once('data', resolve));
  for (const p of pids) process.kill(p, 'SIGKILL');
  await new Promise((resolve) => { res.on('close', resolve); res.on('error', resolve); res.resume(); });
  await waitFor(async () => (await get(new URL('/hello.txt', l.url).href, { cookie }).catch(() => ({ status: 0 }))).status === 200,
    { timeout: 20000, what: 'the preview program back' });
  assert.equal((await get(new URL('/hello.txt', l.url).href, { cookie })).body.toString(), 'hello\n');
});

// The one exec of "supervisor mux" that carries every preview connection
// to the container (lib/sandbox/portconn.c), killed as the container's root
// could: the response in flight ends, and the very next request gets a new
// channel.
const KILL_MUX = `for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null | grep -Eq '^/run/code-sandbox/[^ ]* mux( --lane [^ ]*)? $' && kill -9 \${p#/proc/} && echo killed; done; true`;

/*
 * A download, its first bytes read, then the mux killed: the bytes that
 * came in all, and a request after it.
 */
async function killMuxMidStream(l) {
  const { cookie } = await open(l.url);
  const res = await get(new URL('/big.bin', l.url).href, { cookie, stream: true });
  // The first bytes, then nothing read until the kill: the file cannot
  // have come whole before it (nor its end gone unseen).
  let got = 0;
  await new Promise((resolve) => res.once('data', (c) => { got += c.length; res.pause(); resolve(); }));
  const done = new Promise((resolve) => {
    for (const e of ['end', 'close', 'error', 'aborted']) res.on(e, resolve);
  });
  assert.match(await sh(KILL_MUX), /killed/);
  res.on('data', (c) => (got += c.length));
  res.resume();
  await done;
  const next = await get(new URL('/hello.txt', l.url).href, { cookie });
  assert.equal(next.status, 200, next.body.toString());
  assert.equal(next.body.toString(), 'hello\n');
  // Many at once over the new channel.
  for (const r of await Promise.all(Array.from({ length: 10 }, () => get(new URL('/hello.txt', l.url).href, { cookie }))))
    assert.equal(r.body.toString(), 'hello\n');
  return got;
}

test('the channel to the supervisor killed mid-stream: a connection handed over goes on; the next request works', ONE_FRONT, async () => {
  // The supervisor handed the app's connection over on the lane
  // (lib/sandbox/portlane.h): the channel's end is not the connection's.
  const got = await killMuxMidStream(await previewLink({ port: 8000 }));
  assert.equal(got, 20000000, 'the download went on whole');
});

const LANE_JUNK = `
import array, glob, os, socket
socks = glob.glob('/run/code-sandbox-previews/*.sock')
assert socks, 'no lane socket'
def give(path, data, fds):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(path)
    live.add(path)
    anc = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', fds))] if fds else []
    s.sendmsg([data], anc)
    s.close()
live = set()
r, w = os.pipe()
t = socket.create_connection(('127.0.0.1', 8000))
for p in socks:
    try:
        give(p, b'junk', [])
    except ConnectionRefusedError:
        continue  # a socket of a preview program gone
    give(p, b'k' * 16, [r])
    give(p, b'k' * 16, [t.fileno(), w])
    give(p, b'k' * 16, [t.fileno()])
    for i in range(200):
        give(p, os.urandom(16), [t.fileno()])
    idle = [socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) for i in range(20)]
    for s in idle:
        s.connect(p)
print('sent', len(live))
`;

test('the lane: what the sandbox sends on it is checked; previews go on', ONE_FRONT, async () => {
  const l = await previewLink({ port: 8000 });
  const { cookie } = await open(l.url);
  const pid = srv.programPids('preview')[0];
  assert.match(await sh(`python3 - <<'EOF'\n${LANE_JUNK}\nEOF`), /sent [1-9]/);
  for (const r of await Promise.all(Array.from({ length: 5 }, () => get(new URL('/hello.txt', l.url).href, { cookie }))))
    assert.equal(r.body.toString(), 'hello\n');
  assert.equal(srv.programPids('preview')[0], pid, 'the preview program is the same');
  const fds = readdirSync(`/proc/${pid}/fd`).length;
  assert.ok(fds < 200, `the preview program holds ${fds} descriptors`);
});

const URGENT_APP = `
import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('127.0.0.1', 3004)); s.listen(8)
def answer(c):
    if not c.recv(65536):
        return
    c.sendall(b'HTTP/1.1 200 OK\\r\\nContent-Type: text/plain\\r\\n\\r\\n' + b'a' * 100000)
    time.sleep(0.3)
    c.send(b'!', socket.MSG_OOB)
    c.sendall(b'b' * 100000 + b'end')
    time.sleep(0.3)
while True:
    c, _ = s.accept()
    try:
        answer(c)
    except OSError:
        pass
    c.close()
`;

test('an app that sends an urgent byte: the answer comes whole, the program does not spin', ONE_FRONT, async () => {
  await sh(`cat > /tmp/pv-urgent.py <<'EOF'\n${URGENT_APP}\nEOF\n(setsid nohup python3 /tmp/pv-urgent.py > /tmp/urgent.log 2>&1 &); ` +
    `for i in $(seq 50); do (echo > /dev/tcp/127.0.0.1/3004) 2>/dev/null && exit 0; sleep 0.1; done; exit 1`);
  const l = await previewLink({ port: 3004 });
  const { cookie } = await open(l.url);
  const pid = srv.programPids('preview')[0];
  const cpu = () => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ').slice(11, 13).reduce((a, b) => a + Number(b), 0);
  const before = cpu();
  const r = await get(new URL('/', l.url).href, { cookie, timeout: 20000 });
  assert.equal(r.status, 200);
  const body = r.body.toString();
  assert.ok(body.startsWith('a'.repeat(100000)) && body.endsWith('b'.repeat(100000) + 'end'), `${body.length} bytes`);
  const ticks = cpu() - before;
  assert.ok(ticks < 50, `the preview program used ${ticks} ticks of CPU for 200 KB`);
});

test('SANDBOX_PREVIEW_SOCKETS=off: through the engine, byte-exact; the channel killed mid-stream ends the response', ONE_FRONT, async () => {
  const s2 = await startServer({ name: 'pvoff', web, settings: { SANDBOX_PREVIEW_SOCKETS: 'off' } });
  const saved = mcp;
  try {
    mcp = await connect(s2);
    const want = (await sh(`mkdir -p /sandbox/pv && cd /sandbox/pv && head -c 20000000 /dev/urandom > big.bin && echo hello > hello.txt && ` +
      `(setsid nohup python3 -m http.server 8000 --bind 127.0.0.1 > /tmp/http.log 2>&1 &) ; ` +
      `for i in $(seq 50); do curl -s localhost:8000 >/dev/null && break; sleep 0.2; done; sha256sum big.bin | cut -d' ' -f1`)).trim();
    const ins = JSON.parse((await docker('inspect', s2.container)).stdout)[0];
    assert.deepEqual(ins.Mounts.map((m) => m.Destination), ['/sandbox'], 'no previews folder');
    const l = await previewLink({ port: 8000 });
    const { cookie } = await open(l.url);
    const big = await get(new URL('/big.bin', l.url).href, { cookie });
    assert.equal(big.status, 200);
    assert.equal(createHash('sha256').update(big.body).digest('hex'), want);
    const got = await killMuxMidStream(l);
    assert.ok(got < 20000000, `the whole file came after its channel was killed (${got})`);
    await mcp.close?.();
  } finally {
    mcp = saved;
    await s2.stop();
  }
});

function rssKiB(pid) {
  return Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
}

test('many streams over one channel, one never read: the others go on, memory stays bounded', ONE_FRONT, async (t) => {
  const l = await previewLink({ port: 8000 });
  const { cookie } = await open(l.url);
  const u = new URL(l.url);
  const pid = srv.programPids('preview')[0];
  const before = rssKiB(pid);
  // Three downloads of 20 MB that nobody reads: each holds its stream's
  // window, and no more, in the preview program.
  const stalled = [];
  for (let i = 0; i < 3; i++) {
    const s = netConnect({ host: '127.0.0.1', port: Number(u.port) });
    s.write(`GET /big.bin HTTP/1.1\r\nHost: ${u.host}\r\nCookie: ${cookie}\r\n\r\n`);
    s.pause();
    stalled.push(s);
  }
  await new Promise((r) => setTimeout(r, 2000));
  const want = (await sh(`sha256sum /sandbox/pv/big.bin | cut -d' ' -f1`)).trim();
  const t0 = Date.now();
  const [big, ...small] = await Promise.all([
    get(new URL('/big.bin', l.url).href, { cookie, timeout: 60000 }),
    ...Array.from({ length: 30 }, () => get(new URL('/hello.txt', l.url).href, { cookie, timeout: 30000 })),
  ]);
  const ms = Date.now() - t0;
  assert.equal(createHash('sha256').update(big.body).digest('hex'), want);
  for (const r of small) assert.equal(r.body.toString(), 'hello\n');
  assert.ok(ms < 30000, `the others waited for the stalled ones: ${ms} ms`);
  const grown = rssKiB(pid) - before;
  t.diagnostic(`30 small and one 20 MB answer beside 3 stalled streams: ${ms} ms; the program grew by ${grown} KiB`);
  for (const s of stalled) s.destroy();
  assert.ok(grown < 64 * 1024, `the preview program grew by ${grown} KiB with 3 stalled streams`);
  // The stalled streams' ends reach the app: the owner's count falls back.
  await waitFor(async () => (await sql('select coalesce(sum(open_now), 0) from preview')) === '0',
    { timeout: 20000, what: 'the stalled connections closed' });
});

test('a front that cannot route previews: preview_link says so', { skip: WEB !== 'apache' && WEB !== 'lighttpd' ? 'behind Apache and lighttpd' : false }, async () => {
  // A server whose front never starts the preview program: Apache with
  // mod_fcgid (the shared-hosting set-up), or lighttpd without the
  // program in CS_BIN.
  let bin;
  if (WEB !== 'apache') {
    const { mkdtempSync, readdirSync, symlinkSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    bin = mkdtempSync(join(tmpdir(), 'cs-e2e-nopreview-'));
    for (const f of readdirSync(srv.bin)) if (f !== 'preview') symlinkSync(join(srv.bin, f), join(bin, f));
  }
  const s2 = await startServer({ name: 'nopreview', web: WEB === 'apache' ? 'apache' : 'lighttpd', binDir: bin });
  try {
    const m2 = await connect(s2);
    const r = await m2.client.callTool({ name: 'preview_link', arguments: { port: 8000 } });
    assert.equal(r.isError, true);
    assert.match(resultText(r), /does not serve previews: no preview program has run here/);
    assert.match(resultText(r), /docs\/links\.md/);
    await m2.close?.();
  } finally {
    await s2.stop();
  }
});

// Person scope: each owner's link shows their own sandbox; one owner's
// cookie opens nothing of another's; SANDBOX_PREVIEW_CONNECTIONS caps an
// owner's open connections, which sandboxctl status counts.
describe('person scope', { skip: WEB !== 'lighttpd' ? 'behind lighttpd only' : false }, () => {
  let ps;
  const people = {};
  const hash12 = (o) => createHash('sha256').update(o).digest('hex').slice(0, 12);
  const SLOW = String.raw`
import http.server, os, time
class H(http.server.SimpleHTTPRequestHandler):
    def do_GET(self):
        if self.path == '/slow':
            # Held until the test lets it go (at most 60 s).
            for _ in range(600):
                if os.path.exists('/tmp/go'):
                    break
                time.sleep(0.1)
            self.path = '/who.txt'
        return super().do_GET()
http.server.ThreadingHTTPServer(('127.0.0.1', 8000), H).serve_forever()
`;

  before(async () => {
    ps = await startServer({ name: 'preview-person', settings: { SANDBOX_SCOPE: 'person', SANDBOX_PREVIEW_CONNECTIONS: 2, SANDBOX_ALLOW_KEY_BEARER: 0 } });
    for (const name of ['alice', 'bob']) {
      const r = await ctl(ps, ['--json', 'keys', 'add', name], { env: {} });
      assert.equal(r.code, 0, r.stderr);
      const key = JSON.parse(r.stdout).key;
      const sdk = await connectOAuth(ps, new TestProvider(ps, { key, clientName: 'preview client' }), { name: `e2e-${name}` });
      const call = (tool, args) => sdk.client.callTool({ name: tool, arguments: args }, undefined, { timeout: 180000 });
      const r2 = await call('execute', { command: `mkdir -p /sandbox/w && cd /sandbox/w && echo ${name} > who.txt && cat > /tmp/slow.py <<'EOF'\n${SLOW}\nEOF\n` +
        `(setsid nohup python3 /tmp/slow.py > /tmp/slow.log 2>&1 &); for i in $(seq 50); do curl -s localhost:8000 >/dev/null && exit 0; sleep 0.2; done; exit 1`, timeout: 60 });
      assert.equal(r2.structuredContent.exit_code, 0, resultText(r2));
      people[name] = { sdk, call };
    }
  });

  after(async () => {
    for (const p of Object.values(people)) await p.sdk.client.close().catch(() => {});
    if (!ps) return;
    try {
      await ps.stop();
    } finally {
      for (const n of ['alice', 'bob']) {
        await docker('rm', '-f', `${ps.container}-${hash12(n)}`).catch(() => {});
        await docker('volume', 'rm', '-f', `${ps.volume}-${hash12(n)}`).catch(() => {});
      }
    }
  });

  test('each owner\'s link shows their own sandbox; another\'s cookie opens nothing', async () => {
    const la = (await people.alice.call('preview_link', { port: 8000 })).structuredContent;
    const lb = (await people.bob.call('preview_link', { port: 8000 })).structuredContent;
    const a = await open(la.url);
    const b = await open(lb.url);
    assert.equal((await get(new URL('/who.txt', la.url).href, { cookie: a.cookie })).body.toString(), 'alice\n');
    assert.equal((await get(new URL('/who.txt', lb.url).href, { cookie: b.cookie })).body.toString(), 'bob\n');
    assert.equal((await get(new URL('/who.txt', lb.url).href, { cookie: a.cookie })).status, 403);
    assert.equal((await get(`${new URL(lb.url).origin}/.preview/${la.url.match(/\/\.preview\/([^/]+)\//)[1]}/`)).status, 403);
  });

  test('SANDBOX_PREVIEW_CONNECTIONS caps an owner\'s open connections; status counts them', async () => {
    const la = (await people.alice.call('preview_link', { port: 8000 })).structuredContent;
    const lb = (await people.bob.call('preview_link', { port: 8000 })).structuredContent;
    const a = await open(la.url);
    const b = await open(lb.url);
    const slow = [get(new URL('/slow', la.url).href, { cookie: a.cookie }), get(new URL('/slow', la.url).href, { cookie: a.cookie })];
    await waitFor(async () => /"preview_connections":\s*2\b/.test((await ctl(ps, ['--json', 'status'], { env: {} })).stdout),
      { timeout: 30000, what: 'two open connections in status' });
    const third = await get(new URL('/who.txt', la.url).href, { cookie: a.cookie });
    assert.equal(third.status, 429);
    assert.match(third.body.toString(), /SANDBOX_PREVIEW_CONNECTIONS/);
    // Another owner is not held back by alice's.
    assert.equal((await get(new URL('/who.txt', lb.url).href, { cookie: b.cookie })).status, 200);
    await people.alice.call('execute', { command: 'touch /tmp/go' });
    for (const r of await Promise.all(slow)) assert.equal(r.status, 200);
    assert.equal((await get(new URL('/who.txt', la.url).href, { cookie: a.cookie })).status, 200);
    const st = await ctl(ps, ['status'], { env: {} });
    assert.match(st.stdout, /previews \d+ active links, 0 open connections/);
  });
});
