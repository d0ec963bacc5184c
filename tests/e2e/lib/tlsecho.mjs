// The secrets tests' HTTPS server (tests/e2e/proxy.test.mjs), run inside a
// network namespace the test makes: node tlsecho.mjs CERT KEY ADDR LOG
// [GITROOT]. It listens on ADDR:443 (TLS, the test CA's certificate) and
// ADDR:80 (plain), ADDR:8443 (TLS, not redirected to the proxy: the
// benchmark's straight path), a TCP listener on ADDR:7000 answering "hi", appends each request's host, path and Authorization and
// X-Api-Key headers to LOG as a JSON line, and answers:
//   /echo-auth     the request's headers as JSON
//   /token         the value of $TOKEN (to see it masked)
//   /big?mb=N      N MiB of zeros (the benchmark's download)
//   /git/...       git http-backend on GITROOT, behind HTTP Basic
//                  (user "git", password $GIT_PASSWORD)
//   anything else  "hello HOST"
import https from 'node:https';
import http from 'node:http';
import net from 'node:net';
import { spawn } from 'node:child_process';
import { appendFileSync, readFileSync } from 'node:fs';

const [, , cert, key, addr, log, gitRoot] = process.argv;

function git(req, res) {
  const want = `Basic ${Buffer.from(`git:${process.env.GIT_PASSWORD}`).toString('base64')}`;
  if (req.headers.authorization !== want) {
    res.writeHead(401, { 'www-authenticate': 'Basic realm="git"', 'content-length': 0 });
    res.end();
    return;
  }
  const u = new URL(req.url, 'https://x');
  const child = spawn('git', ['http-backend'], {
    env: {
      ...process.env, GIT_PROJECT_ROOT: gitRoot, GIT_HTTP_EXPORT_ALL: '1',
      PATH_INFO: u.pathname.slice(4), QUERY_STRING: u.search.slice(1),
      REQUEST_METHOD: req.method, CONTENT_TYPE: req.headers['content-type'] ?? '',
      REMOTE_USER: 'git', REMOTE_ADDR: '127.0.0.1',
    },
  });
  req.pipe(child.stdin);
  let buf = Buffer.alloc(0);
  let head = true;
  child.stdout.on('data', (d) => {
    if (!head) { res.write(d); return; }
    buf = Buffer.concat([buf, d]);
    const end = buf.indexOf('\r\n\r\n');
    if (end < 0) return;
    head = false;
    const headers = {};
    let status = 200;
    for (const line of buf.subarray(0, end).toString().split('\r\n')) {
      const i = line.indexOf(':');
      const k = line.slice(0, i).trim().toLowerCase();
      const v = line.slice(i + 1).trim();
      if (k === 'status') status = Number.parseInt(v, 10);
      else headers[k] = v;
    }
    res.writeHead(status, headers);
    res.write(buf.subarray(end + 4));
  });
  child.on('close', () => res.end());
}

const ZEROS = Buffer.alloc(1 << 20);

function handler(req, res) {
  if (req.url.startsWith('/big')) {
    const mb = Math.min(1024, Number.parseInt(new URL(req.url, 'https://x').searchParams.get('mb') ?? '1', 10) || 1);
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': mb << 20 });
    let left = mb;
    const more = () => {
      while (left > 0) {
        left--;
        if (!res.write(ZEROS)) { res.once('drain', more); return; }
      }
      res.end();
    };
    more();
    return;
  }
  appendFileSync(log, `${JSON.stringify({ host: req.headers.host, path: req.url, tls: !!req.socket.encrypted, authorization: req.headers.authorization ?? null, xApiKey: req.headers['x-api-key'] ?? null })}\n`);
  if (req.url.startsWith('/git/')) return git(req, res);
  let body;
  if (req.url.startsWith('/echo-auth')) body = `${JSON.stringify(req.headers)}\n`;
  else if (req.url.startsWith('/token')) body = `token=${process.env.TOKEN}\n`;
  else body = `hello ${req.headers.host}\n`;
  res.writeHead(200, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

const tls = { cert: readFileSync(cert), key: readFileSync(key) };
https.createServer(tls, handler).listen(8443, addr);
https.createServer(tls, handler).listen(443, addr, () => {
  net.createServer((c) => c.end('hi\n')).listen(7000, addr, () => {
    http.createServer(handler).listen(80, addr, () => console.log('listening'));
  });
});
