// upload_link and /up end to end: the official MCP SDK client makes upload
// links; curl PUTs files (with a length, and chunked), headless Chromium
// uses the page (with and without JavaScript); the files are checked by
// sha256 inside the container. Also: tampered, expired, revoked and
// over-cap uploads write nothing; names are sanitised; an interrupted
// upload leaves no file; the up program's memory stays flat on 200 MB.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { execFile, spawn } from 'node:child_process';
import { createReadStream, mkdtempSync, readFileSync, rmSync, writeFileSync, openSync, writeSync, closeSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { chromium } from 'playwright-core';

import { startServer, waitFor, WEB } from './lib/server.mjs';
import { connect, resultText } from './lib/client.mjs';

const execFileP = promisify(execFile);

let srv;
let mcp;
let tmp;

async function sh(command) {
  const r = await mcp.execute({ command, timeout: 300 });
  assert.equal(r.structuredContent.exit_code, 0, `${command}: ${resultText(r)}`);
  return r.structuredContent.stdout;
}

async function link(args = {}) {
  const r = await mcp.client.callTool({ name: 'upload_link', arguments: args }, undefined, { timeout: 60000 });
  assert.notEqual(r.isError, true, resultText(r));
  return r.structuredContent;
}

async function sql(query) {
  const { stdout } = await execFileP('sqlite3', ['-cmd', '.timeout 5000', srv.settings.SANDBOX_DB, query]);
  return stdout.trim();
}

/* curl -T: returns { status, body }. */
async function curlPut(file, url, extra = []) {
  const { stdout } = await execFileP('curl', ['-sS', '-o', '-', '-w', '\n%{http_code}', ...extra, '-T', file, url],
    { maxBuffer: 1 << 20, timeout: 600000 });
  const i = stdout.lastIndexOf('\n');
  return { status: Number(stdout.slice(i + 1)), body: stdout.slice(0, i) };
}

/* A file of n pseudo-random bytes, written in 1 MiB pieces; its sha256. */
function bigFile(path, n) {
  const h = createHash('sha256');
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(1 << 20);
  let seed = 12345;
  for (let left = n; left > 0; left -= chunk.length) {
    for (let i = 0; i < chunk.length; i += 4) {
      seed = (seed * 1103515245 + 12345) >>> 0;
      chunk.writeUInt32LE(seed, i);
    }
    const part = left < chunk.length ? chunk.subarray(0, left) : chunk;
    writeSync(fd, part);
    h.update(part);
  }
  closeSync(fd);
  return h.digest('hex');
}

async function sha256In(path) {
  return (await sh(`sha256sum -- '${path}' | cut -d' ' -f1`)).trim();
}

/* Peak resident memory (VmHWM, KiB) of the up program(s). */
function upPeakKiB() {
  let max = 0;
  for (const pid of srv.programPids('up')) {
    try {
      const m = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (m) max = Math.max(max, Number(m[1]));
    } catch {
      /* gone */
    }
  }
  return max;
}

before(async () => {
  srv = await startServer({ name: 'uploads', settings: { SANDBOX_UPLOAD_MAX_BYTES: '1g' } });
  mcp = await connect(srv);
  await sh('true');
  tmp = mkdtempSync(join(tmpdir(), 'cs-up-'));
});

after(async () => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
  if (mcp) await mcp.close();
  if (srv) await srv.stop();
});

test('upload_link is listed and makes a link', async () => {
  const { tools } = await mcp.client.listTools();
  const t = tools.find((x) => x.name === 'upload_link');
  assert.ok(t, 'upload_link listed');
  const s = await link();
  assert.equal(s.folder, '/sandbox/uploads');
  assert.equal(s.max_bytes, 1 << 30);
  assert.match(s.url, new RegExp(`^${srv.url}/up/[A-Za-z0-9_-]{22}/\\d+/[A-Za-z0-9_-]{43}/$`));
  const ctl = await execFileP(join(srv.bin, 'sandboxctl'), ['links', 'list'], { env: { ...process.env, SANDBOX_ENV_FILE: srv.envFile } });
  assert.match(ctl.stdout, new RegExp(`${s.link_id}.*upload to /sandbox/uploads`));
});

test('200 MB with curl PUT (length known) and chunked arrive exact (chunked behind lighttpd: 413 past 4 MiB); memory stays flat', async () => {
  const s = await link({ folder: 'big' });
  const f = join(tmp, 'big.bin');
  const sum = bigFile(f, 200 << 20);
  const before = upPeakKiB();
  let r = await curlPut(f, `${s.url}big.bin`);
  assert.equal(r.status, 201, r.body);
  assert.match(r.body, /Stored \/sandbox\/big\/big\.bin \(209715200 bytes\)/);
  assert.equal(await sha256In('/sandbox/big/big.bin'), sum);
  // Chunked: curl reads stdin, so it cannot know the length.
  const chunked = (file, name) => new Promise((res, rej) => {
    const c = spawn('curl', ['-sS', '-o', '-', '-w', '\n%{http_code}', '-T', '-', `${s.url}${name}`]);
    let out = '';
    c.stdout.on('data', (d) => (out += d));
    c.on('error', rej);
    c.on('close', () => {
      const i = out.lastIndexOf('\n');
      res({ status: Number(out.slice(i + 1)), body: out.slice(0, i) });
    });
    c.stdin.on('error', () => {});
    createReadStream(file).on('error', () => {}).pipe(c.stdin);
  });
  r = await chunked(f, 'chunked.bin');
  let stored = 2;
  if (WEB === 'lighttpd') {
    // lighttpd reads a chunked body whole before the program sees it: at
    // most 4 MiB, past that 413 with a message to send a length (so that
    // a stranger cannot make it spool a large body); smaller ones arrive.
    assert.equal(r.status, 413, r.body);
    assert.match(r.body, /without a length .* may be at most\s+4 MiB[^]*curl -T FILE URL/, r.body);
    const small = join(tmp, 'small.bin');
    const smallSum = bigFile(small, (3 << 20) + 5);
    r = await chunked(small, 'chunked-small.bin');
    assert.equal(r.status, 201, r.body);
    assert.equal(await sha256In('/sandbox/big/chunked-small.bin'), smallSum);
    assert.equal(await sh('ls -A /sandbox/big | tr "\\n" "|"'), 'big.bin|chunked-small.bin|');
    rmSync(small);
    stored = 1;
  } else {
    assert.equal(r.status, 201, r.body);
    assert.equal(await sha256In('/sandbox/big/chunked.bin'), sum);
  }
  const after = upPeakKiB();
  // 200 MB passed through twice; the program's peak grew by far less.
  assert.ok(after - before < 32 * 1024, `up's peak RSS grew from ${before} to ${after} KiB`);
  rmSync(f);
  const n = await sql(`select count(*) from upload where link_id = '${s.link_id}' and state = 'ok' and size = 209715200`);
  assert.equal(n, String(stored));
});

test('an existing file is kept; the new one gets "name (2)"', async () => {
  const s = await link();
  const f = join(tmp, 'a.txt');
  writeFileSync(f, 'one\n');
  assert.equal((await curlPut(f, `${s.url}a.txt`)).status, 201);
  writeFileSync(f, 'two\n');
  const r = await curlPut(f, `${s.url}a.txt`);
  assert.equal(r.status, 201);
  assert.match(r.body, /a \(2\)\.txt/);
  assert.equal(await sh('cat /sandbox/uploads/a.txt "/sandbox/uploads/a (2).txt"'), 'one\ntwo\n');
  // overwrite: true replaces.
  const o = await link({ overwrite: true });
  writeFileSync(f, 'three\n');
  assert.equal((await curlPut(f, `${o.url}a.txt`)).status, 201);
  assert.equal(await sh('cat /sandbox/uploads/a.txt'), 'three\n');
});

test('names with ../ and newline are sanitised; NUL and bad escapes refused', async () => {
  const s = await link({ folder: 'names' });
  const f = join(tmp, 'n.txt');
  writeFileSync(f, 'x');
  const stored = [];
  for (const [sent, want] of [['..%5C..%5Cetc%5Cpasswd', '_._.._etc_passwd'], ['line%0Abreak', 'line_break'], ['%C3%A9t%C3%A9.txt', 'été.txt'], ['.hidden', '_hidden'], ['100%25.txt', '100%.txt']]) {
    const r = await curlPut(f, `${s.url}${sent}`);
    // A web server may refuse control characters in a URL itself (400:
    // lighttpd a newline); what reaches the program is sanitised.
    // The form's file names carry them too (the page's test).
    if (/%0A/.test(sent) && r.status === 400) continue;
    assert.equal(r.status, 201, `${sent}: ${r.body}`);
    assert.ok(r.body.includes(`/sandbox/names/${want} `), `${sent}: ${r.body}`);
    stored.push(want);
  }
  // Strict decoding: a NUL or a malformed escape is a clear 400, never a
  // name guessed at; nothing is stored. A web server may refuse such a URL
  // itself with its own 400 (lighttpd %00; Caddy, Go's URL parser, all
  // three); whatever reaches the program gets its message.
  for (const [sent, why, lighttpdPasses] of [['a%00b', /NUL byte \(%00\)/, false], ['bad%zz.txt', /two hexadecimal digits/, true], ['cut%4', /two hexadecimal digits/, true]]) {
    const r = await curlPut(f, `${s.url}${sent}`);
    assert.equal(r.status, 400, `${sent}: ${r.body}`);
    if ((lighttpdPasses && srv.web === 'lighttpd') || /The file name/.test(r.body)) assert.match(r.body, why, `${sent}: ${r.body}`);
  }
  const want = stored.sort().join('|') + '|';
  assert.equal(await sh('ls -A /sandbox/names | LC_ALL=C sort | tr "\\n" "|"'), want);
  assert.equal(await sh('test -e /etc/passwd && ls -A /sandbox | grep -c "^\\.cs-up" || true'), '0\n');
});

test('tampered, expired, revoked and over-cap uploads are refused; nothing is written', async () => {
  const s = await link({ folder: 'refused', max_bytes: 1000 });
  const f = join(tmp, 'r.txt');
  writeFileSync(f, 'y'.repeat(600));
  const m = /^(.*\/up\/)([^/]+)\/(\d+)\/([^/]+)\/$/.exec(s.url);
  const [, base, id, exp, sig] = m;
  const flip = (x) => x.slice(0, -1) + (x.endsWith('A') ? 'B' : 'A');
  for (const [url, status] of [
    [`${base}${id}/${exp}/${flip(sig)}/r.txt`, 403],
    [`${base}${flip(id)}/${exp}/${sig}/r.txt`, 403],
    [`${base}${id}/${Number(exp) + 1}/${sig}/r.txt`, 403],
  ]) {
    assert.equal((await curlPut(f, url)).status, status, url);
  }
  // Over the cap: 600 fits, a second 600 does not (also chunked).
  assert.equal((await curlPut(f, `${s.url}first.txt`)).status, 201);
  assert.equal((await curlPut(f, `${s.url}second.txt`)).status, 413);
  assert.equal((await curlPut(f, `${s.url}third.txt`, ['-H', 'Transfer-Encoding: chunked'])).status, 413);
  // Expired (shortened in the database) and revoked (sandboxctl).
  await sql(`update upload_link set expires = unixepoch() - 1 where id = '${s.link_id}'`);
  assert.equal((await curlPut(f, `${s.url}late.txt`)).status, 410);
  const s2 = await link({ folder: 'refused' });
  await execFileP(join(srv.bin, 'sandboxctl'), ['links', 'revoke', s2.link_id], { env: { ...process.env, SANDBOX_ENV_FILE: srv.envFile } });
  assert.equal((await curlPut(f, `${s2.url}revoked.txt`)).status, 410);
  assert.equal(await sh('ls -A /sandbox/refused | tr "\\n" "|"'), 'first.txt|');
  assert.ok(Number(await sql(`select count(*) from upload where link_id = '${s.link_id}' and state = 'refused'`)) >= 2);
});

test('a folder that cannot be made: 409, nothing stored', async () => {
  await sh('echo file > /sandbox/notadir');
  const s = await link({ folder: 'notadir' });
  const f = join(tmp, 'x.txt');
  writeFileSync(f, 'x');
  const r = await curlPut(f, `${s.url}x.txt`);
  assert.equal(r.status, 409, r.body);
  assert.match(r.body, /\/sandbox\/notadir cannot be made/);
  assert.equal(await sh('cat /sandbox/notadir'), 'file\n');
  assert.equal(await sql(`select used_bytes from upload_link where id = '${s.link_id}'`), '0');
});

// Not behind Caddy: it passes the answer on only once it has sent the
// whole body, but it never holds a body itself (it streams it to the
// program, which reads nothing of a bad link's).
test('a made-up link is refused before its body is read', { skip: WEB === 'caddy' && 'Caddy answers only once the whole body is sent' }, async () => {
  const u = new URL(`${srv.url}/up/AAAAAAAAAAAAAAAAAAAAAA/9999999999/${'A'.repeat(43)}/x.bin`);
  // 1 GB announced, 1 MB sent: the answer comes without the rest.
  const status = await new Promise((res, rej) => {
    const req = request({ host: u.hostname, port: u.port, path: u.pathname, method: 'PUT', headers: { 'Content-Length': String(1 << 30) }, timeout: 30000 });
    req.on('timeout', () => {
      req.destroy();
      res('no answer within 30 s');
    });
    req.on('error', rej);
    req.on('response', (r) => {
      r.resume();
      req.destroy();
      res(r.statusCode);
    });
    req.write(Buffer.alloc(1 << 20, 7));
  });
  assert.equal(status, 403);
});

test('an interrupted upload leaves no file', async () => {
  const s = await link({ folder: 'cut' });
  const u = new URL(`${s.url}cut.bin`);
  await new Promise((res) => {
    const req = request({ host: u.hostname, port: u.port, path: u.pathname, method: 'PUT', headers: { 'Content-Length': String(50 << 20) } });
    req.on('error', () => res());
    req.on('response', () => res());
    req.write(Buffer.alloc(8 << 20, 7), () => setTimeout(() => { req.destroy(); res(); }, 500));
  });
  // Both web servers stream a body with a length on to the program (so
  // that a bad link is refused before its body is read): the program sees
  // the cut, records it and removes the hidden folder.
  await waitFor(async () => (await sql(`select count(*) from upload where link_id = '${s.link_id}' and state = 'interrupted'`)) === '1',
    { timeout: 60000, what: 'the interrupted upload recorded' });
  assert.equal(await sh('mkdir -p /sandbox/cut; ls -A /sandbox/cut | wc -l'), '0\n');
});

/* The page in headless Chromium, with and without JavaScript. */
async function withBrowser(js, fn) {
  const profile = mkdtempSync(join(tmpdir(), 'cs-chromium-'));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    javaScriptEnabled: js,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const errors = [];
  try {
    const page = await browser.newPage();
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    await fn(page);
  } finally {
    await browser.close();
    rmSync(profile, { recursive: true, force: true });
  }
  // A CSP violation (an inline script or style refused) shows up here.
  assert.deepEqual(errors, []);
}

for (const js of [false, true]) {
  test(`the page uploads two files ${js ? 'with' : 'without'} JavaScript`, async () => {
    const folder = js ? 'page-js' : 'page-nojs';
    const s = await link({ folder });
    const a = join(tmp, 'first file.txt');
    const b = join(tmp, 'second.bin');
    writeFileSync(a, 'hello from the page\n');
    const sumB = bigFile(b, 3 << 20);
    await withBrowser(js, async (page) => {
      const res = await page.goto(s.url);
      assert.equal(res.status(), 200);
      const csp = res.headers()['content-security-policy'];
      assert.match(csp, /default-src 'none'/);
      assert.match(csp, /script-src 'nonce-/);
      assert.match(await page.textContent('body'), new RegExp(`/sandbox/${folder}`));
      await page.setInputFiles('#files', [a, b]);
      if (js) {
        // Each file is PUT with a progress bar; the page says when done.
        await page.waitForSelector('#done:not([hidden])', { timeout: 60000 });
        const items = await page.locator('#list li').allTextContents();
        assert.equal(items.length, 2);
        assert.ok(items.every((t) => /Stored/.test(t)), items.join(' / '));
      } else {
        await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
        const text = await page.textContent('body');
        assert.match(text, /Upload finished/);
        assert.match(text, new RegExp(`first file\\.txt \\(20 bytes\\): stored as /sandbox/${folder}/first file\\.txt`));
        assert.match(text, /Return to Claude/);
      }
    });
    assert.equal(await sh(`cat '/sandbox/${folder}/first file.txt'`), 'hello from the page\n');
    assert.equal(await sha256In(`/sandbox/${folder}/second.bin`), sumB);
  });
}

test('the form sanitises file names with control characters and ../', async () => {
  const s = await link({ folder: 'form-names' });
  const boundary = 'x-boundary-7MA4YWxk';
  const part = (name, body) => `--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="${name}"\r\n` +
    `Content-Type: application/octet-stream\r\n\r\n${body}\r\n`;
  const post = (body) => fetch(s.url, { method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, body });
  let res = await post(part('../../evil.sh', 'a') + part('tab\there.txt', 'b') + part('ctl\u0001.txt', 'c') + part('C:\\\\x\\\\win.txt', 'd') + `--${boundary}--\r\n`);
  assert.equal(res.status, 200, await res.text());
  // A bare newline inside the quoted name is sanitised; a NUL in a part's
  // headers refuses the whole post (400, nothing stored).
  res = await post(part('new\nline.txt', 'e') + `--${boundary}--\r\n`);
  assert.equal(res.status, 200);
  res = await post(part('nul\u0000.txt', 'f') + `--${boundary}--\r\n`);
  assert.equal(res.status, 400);
  assert.equal(await sh('ls -A /sandbox/form-names | LC_ALL=C sort | tr "\\n" "|"'), 'C:_x_win.txt|_._.._evil.sh|ctl_.txt|new_line.txt|tab_here.txt|');
});
