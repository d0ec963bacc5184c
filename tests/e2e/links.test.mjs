// share_file and /dl end to end: the official MCP SDK client makes links,
// plain fetch follows them, through real lighttpd and a real Docker engine.
// Covers exact bytes (text and 50 MB binary), headers per type, HEAD,
// ranges and conditional requests, every part of a link tampered with,
// revocation through the database, a vanished file, non-ASCII and long
// names, symbolic links, share_file's errors, key rotation and expiry.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';

import { startServer, waitFor, WEB } from './lib/server.mjs';
import { connect, resultText } from './lib/client.mjs';

const execFileP = promisify(execFile);

let srv;
let mcp;

async function sh(command) {
  const r = await mcp.execute({ command, timeout: 300 });
  assert.equal(r.structuredContent.exit_code, 0, `${command}: ${resultText(r)}`);
  return r.structuredContent.stdout;
}

async function share(path) {
  return mcp.client.callTool({ name: 'share_file', arguments: { path } }, undefined, { timeout: 120000 });
}

async function shareOk(path) {
  const r = await share(path);
  assert.notEqual(r.isError, true, `share_file(${path}): ${resultText(r)}`);
  return r.structuredContent;
}

async function get(url, headers = {}, method = 'GET') {
  const res = await fetch(url, { method, headers, redirect: 'manual', signal: AbortSignal.timeout(120000) });
  const body = Buffer.from(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, body };
}

async function sql(query) {
  const { stdout } = await execFileP('sqlite3', ['-cmd', '.timeout 5000', srv.settings.SANDBOX_DB, query]);
  return stdout.trim();
}

before(async () => {
  srv = await startServer({ name: 'links' });
  mcp = await connect(srv);
  // The first call creates the container.
  await sh('mkdir -p /sandbox/sub && printf "hello, links\\n" > /sandbox/hello.txt');
});

after(async () => {
  if (mcp) await mcp.close();
  if (srv) await srv.stop();
});

test('share_file is listed with an outputSchema', async () => {
  const { tools } = await mcp.client.listTools();
  const t = tools.find((x) => x.name === 'share_file');
  assert.ok(t, 'share_file listed');
  assert.deepEqual(t.inputSchema.required, ['path']);
  assert.equal(t.outputSchema.type, 'object');
  assert.ok(t.outputSchema.required.includes('url'));
});

test('a text file: result, exact bytes and headers', async () => {
  const r = await share('hello.txt');
  assert.notEqual(r.isError, true, resultText(r));
  const s = r.structuredContent;
  assert.equal(s.path, '/sandbox/hello.txt');
  assert.equal(s.name, 'hello.txt');
  assert.equal(s.size, 13);
  assert.equal(s.content_type, 'text/plain; charset=utf-8');
  assert.match(s.url, new RegExp(`^${srv.url}/dl/[A-Za-z0-9_-]{22}/\\d+/[A-Za-z0-9_-]{43}/hello\\.txt$`));
  assert.match(s.expires, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.equal(Date.parse(s.expires) / 1000, s.expires_at);
  const now = Date.now() / 1000;
  assert.ok(s.expires_at > now + 86400 - 120 && s.expires_at <= now + 86400 + 5, 'expires after LINK_TTL');
  const text = resultText(r);
  assert.ok(text.includes(s.url) && text.includes(s.expires) && text.includes('text/plain'), text);
  const link = r.content.find((c) => c.type === 'resource_link');
  assert.ok(link, 'a resource_link block');
  assert.equal(link.uri, s.url);
  assert.equal(link.name, 'hello.txt');
  assert.equal(link.mimeType, s.content_type);

  const d = await get(s.url);
  assert.equal(d.status, 200);
  assert.equal(d.body.toString(), 'hello, links\n');
  assert.equal(d.headers.get('content-length'), '13');
  assert.equal(d.headers.get('content-type'), 'text/plain; charset=utf-8');
  assert.equal(d.headers.get('content-disposition'), 'inline; filename="hello.txt"');
  assert.equal(d.headers.get('x-content-type-options'), 'nosniff');
  assert.match(d.headers.get('cache-control'), /private/);
  assert.equal(d.headers.get('content-security-policy'), 'sandbox');
  assert.equal(d.headers.get('accept-ranges'), 'bytes');
  assert.match(d.headers.get('etag'), /^"[0-9a-f]+-[0-9a-f]+-[0-9a-f]+"$/);
  assert.ok(!Number.isNaN(Date.parse(d.headers.get('last-modified'))));

  const rows = await sql(`SELECT path, size, client_id, downloads, state FROM links WHERE id = '${s.link_id}'`);
  assert.equal(rows, '/sandbox/hello.txt|13|api-key|1|active');
});

test('a 50 MB binary arrives byte for byte', async () => {
  const out = await sh('head -c 50000000 /dev/urandom > /sandbox/big.bin && sha256sum /sandbox/big.bin');
  const want = out.split(' ')[0];
  const s = await shareOk('/sandbox/big.bin');
  assert.equal(s.size, 50000000);
  assert.equal(s.content_type, 'application/octet-stream');
  const d = await get(s.url);
  assert.equal(d.status, 200);
  assert.equal(d.headers.get('content-length'), '50000000');
  assert.match(d.headers.get('content-disposition'), /^attachment; filename="big.bin"$/);
  assert.equal(d.body.length, 50000000);
  assert.equal(createHash('sha256').update(d.body).digest('hex'), want);
});

test('the first bytes leave before the last arrive, in bounded memory', async () => {
  // A 200 MB file: the first chunk must reach the client long before the
  // whole file could have been read, and /dl must not grow by its size.
  await sh('head -c 200000000 /dev/zero > /sandbox/stream.bin');
  const s = await shareOk('stream.bin');
  const [pid] = srv.programPids('dl');
  const hwm = () => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
  // Warm the program up once so the baseline includes its libraries.
  await get(s.url, { range: 'bytes=0-0' });
  const before = hwm();
  const t0 = Date.now();
  const res = await fetch(s.url, { signal: AbortSignal.timeout(120000) });
  const reader = res.body.getReader();
  let first = 0;
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (!first) first = Date.now() - t0;
    total += value.length;
  }
  const all = Date.now() - t0;
  assert.equal(total, 200000000);
  assert.ok(first < all / 2, `first bytes after ${first} ms, all after ${all} ms`);
  const grown = hwm() - before;
  assert.ok(grown < 32 * 1024, `/dl peak RSS grew by ${grown} kB while sending 200 MB`);
  await sh('rm -f /sandbox/stream.bin');
});

test('headers per type: inline media, attachments for pages and unknowns', async () => {
  const files = {
    'page.html': ['text/html; charset=utf-8', 'attachment', 'sandbox'],
    'pic.svg': ['image/svg+xml', 'attachment', 'sandbox'],
    'data.xml': ['application/xml', 'attachment', 'sandbox'],
    'doc.pdf': ['application/pdf', 'inline', null],
    'img.png': ['image/png', 'inline', 'sandbox'],
    'clip.mp4': ['video/mp4', 'inline', 'sandbox'],
    'song.mp3': ['audio/mpeg', 'inline', 'sandbox'],
    'table.csv': ['text/csv; charset=utf-8', 'inline', 'sandbox'],
    'data.json': ['application/json', 'inline', 'sandbox'],
    'arch.tar.gz': ['application/gzip', 'attachment', 'sandbox'],
    'arch.zip': ['application/zip', 'attachment', 'sandbox'],
    'sheet.xlsx': ['application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', 'attachment', 'sandbox'],
    'Makefile': ['application/octet-stream', 'attachment', 'sandbox'],
  };
  await sh(`cd /sandbox/sub && for f in ${Object.keys(files).join(' ')}; do echo "<script>alert(1)</script>" > "$f"; done`);
  for (const [name, [type, disp, csp]] of Object.entries(files)) {
    const s = await shareOk(`sub/${name}`);
    assert.equal(s.content_type, type, name);
    const d = await get(s.url);
    assert.equal(d.status, 200, name);
    assert.equal(d.headers.get('content-type'), type, name);
    assert.equal(d.headers.get('content-disposition'), `${disp}; filename="${name}"`, name);
    assert.equal(d.headers.get('content-security-policy'), csp, name);
    assert.equal(d.headers.get('x-content-type-options'), 'nosniff', name);
  }
});

test('HEAD, single ranges, 416, If-Range and If-None-Match', async () => {
  await sh('printf "0123456789abcdefghij" > /sandbox/r.txt');
  const s = await shareOk('r.txt');
  const full = await get(s.url);
  const etag = full.headers.get('etag');

  const h = await get(s.url, {}, 'HEAD');
  assert.equal(h.status, 200);
  assert.equal(h.body.length, 0);
  assert.equal(h.headers.get('content-length'), '20');
  assert.equal(h.headers.get('etag'), etag, 'HEAD and GET agree on the ETag');
  assert.equal(h.headers.get('last-modified'), full.headers.get('last-modified'));
  assert.equal(h.headers.get('content-type'), 'text/plain; charset=utf-8');

  const cases = [
    ['bytes=0-4', 206, '01234', 'bytes 0-4/20'],
    ['bytes=5-9', 206, '56789', 'bytes 5-9/20'],
    ['bytes=15-', 206, 'fghij', 'bytes 15-19/20'],
    ['bytes=-3', 206, 'hij', 'bytes 17-19/20'],
    ['bytes=-100', 206, '0123456789abcdefghij', 'bytes 0-19/20'],
    ['bytes=10-1000', 206, 'abcdefghij', 'bytes 10-19/20'],
    ['bytes=19-19', 206, 'j', 'bytes 19-19/20'],
  ];
  for (const [range, status, body, cr] of cases) {
    const d = await get(s.url, { range });
    assert.equal(d.status, status, range);
    assert.equal(d.body.toString(), body, range);
    assert.equal(d.headers.get('content-length'), String(body.length), range);
    assert.equal(d.headers.get('content-range'), cr, range);
  }
  // Several ranges: /dl sends the whole file (RFC 9110 §14.2 allows it);
  // lighttpd, which applies ranges to whole backend responses itself, may
  // then answer 206 with the ranges coalesced or as multipart/byteranges.
  const multi = await get(s.url, { range: 'bytes=0-1,5-6' });
  if (multi.status === 206) {
    assert.match(multi.body.toString(), /01[\s\S]*56/);
  } else {
    assert.equal(multi.status, 200);
    assert.equal(multi.body.toString(), '0123456789abcdefghij');
  }
  // An invalid range (last before first) is ignored by /dl; lighttpd,
  // which also handles ranges of whole responses, answers 416.
  assert.ok([200, 416].includes((await get(s.url, { range: 'bytes=9-2' })).status));
  for (const range of ['bytes=20-', 'bytes=-0', 'bytes=100-200']) {
    const d = await get(s.url, { range });
    assert.equal(d.status, 416, range);
    assert.equal(d.headers.get('content-range'), 'bytes */20', range);
  }
  const hr = await get(s.url, { range: 'bytes=0-4' }, 'HEAD');
  assert.equal(hr.status, 206);
  assert.equal(hr.headers.get('content-length'), '5');
  assert.equal(hr.body.length, 0);

  assert.equal((await get(s.url, { range: 'bytes=0-4', 'if-range': etag })).status, 206);
  assert.equal((await get(s.url, { range: 'bytes=0-4', 'if-range': '"stale"' })).status, 200);
  const nm = await get(s.url, { 'if-none-match': etag });
  assert.equal(nm.status, 304);
  assert.equal(nm.body.length, 0);
  assert.equal(nm.headers.get('etag'), etag);
  assert.equal((await get(s.url, { 'if-none-match': '"other"' })).status, 200);

  // A range near the end of the 50 MB file.
  const big = await shareOk('big.bin');
  const whole = await get(big.url);
  const tail = await get(big.url, { range: 'bytes=-1000' });
  assert.equal(tail.status, 206);
  assert.ok(tail.body.equals(whole.body.subarray(50000000 - 1000)));
  const mid = await get(big.url, { range: 'bytes=1000000-1999999' });
  assert.ok(mid.body.equals(whole.body.subarray(1000000, 2000000)));
});

test('every part of a link tampered with: 403; malformed: 400/404', async () => {
  const s = await shareOk('hello.txt');
  const u = new URL(s.url);
  const [, dl, id, exp, sig, name] = u.pathname.split('/');
  assert.equal(dl, 'dl');
  const flip = (str, i = 0) => str.slice(0, i) + (str[i] === 'A' ? 'B' : 'A') + str.slice(i + 1);
  const base = `${u.origin}/dl`;
  const tampered = {
    'id': `${base}/${flip(id)}/${exp}/${sig}/${name}`,
    'id (last character)': `${base}/${flip(id, id.length - 1)}/${exp}/${sig}/${name}`,
    'expiry (later)': `${base}/${id}/${Number(exp) + 1000}/${sig}/${name}`,
    'expiry (earlier)': `${base}/${id}/${Number(exp) - 1}/${sig}/${name}`,
    'signature': `${base}/${id}/${exp}/${flip(sig)}/${name}`,
    'signature (last character)': `${base}/${id}/${exp}/${flip(sig, 42)}/${name}`,
    'name': `${base}/${id}/${exp}/${sig}/big.bin`,
    'name (case)': `${base}/${id}/${exp}/${sig}/HELLO.txt`,
    'another link\'s signature': null,
  };
  const other = new URL((await shareOk('r.txt')).url).pathname.split('/');
  tampered["another link's signature"] = `${base}/${id}/${exp}/${other[4]}/${name}`;
  for (const [what, url] of Object.entries(tampered)) {
    const d = await get(url);
    assert.equal(d.status, 403, `${what}: ${url}`);
    assert.match(d.headers.get('content-type'), /^text\/plain/);
    assert.equal(d.headers.get('cache-control'), 'no-store');
  }
  const malformed = {
    [`${base}/${id}/${exp}/${sig}`]: 404,
    [`${base}/${id}/${exp}/${sig}/${name}/x`]: 404,
    [`${base}/`]: 404,
    [`${base}`]: 404,
    [`${base}/${id.slice(1)}/${exp}/${sig}/${name}`]: 400,
    [`${base}/${id}/0${exp}/${sig}/${name}`]: 400,
    [`${base}/${id}/${exp}x/${sig}/${name}`]: 400,
    [`${base}/${id}/${exp}/${sig}A/${name}`]: 400,
    [`${base}/${id}/${exp}/${sig}/a%2`]: 400,
  };
  for (const [url, status] of Object.entries(malformed)) {
    assert.equal((await get(url)).status, status, url);
  }
  // Query strings change nothing; methods other than GET and HEAD do.
  assert.equal((await get(`${s.url}?x=1`)).status, 200);
  const post = await fetch(s.url, { method: 'POST', body: 'x' });
  await post.arrayBuffer();
  assert.equal(post.status, 405);
  assert.equal(post.headers.get('allow'), 'GET, HEAD');
});

test('revocation through the database: 410 on the next request', async () => {
  const s = await shareOk('hello.txt');
  assert.equal((await get(s.url)).status, 200);
  await sql(`UPDATE link SET revoked = unixepoch() WHERE id = '${s.link_id}'`);
  const d = await get(s.url);
  assert.equal(d.status, 410);
  assert.match(d.body.toString(), /revoked/);
  assert.equal(await sql(`SELECT state, downloads FROM links WHERE id = '${s.link_id}'`), 'revoked|1');
  // Another link to the same file is unaffected.
  assert.equal((await get((await shareOk('hello.txt')).url)).status, 200);
  // An operator can also shorten a link.
  const t = await shareOk('hello.txt');
  await sql(`UPDATE link SET expires = unixepoch() - 1 WHERE id = '${t.link_id}'`);
  assert.equal((await get(t.url)).status, 410);
  assert.equal(await sql(`SELECT state FROM links WHERE id = '${t.link_id}'`), 'expired');
});

test('a vanished file is 404; a file replaced by a directory too', async () => {
  await sh('echo temp > /sandbox/gone.txt && echo temp > /sandbox/dir.txt');
  const s = await shareOk('gone.txt');
  const t = await shareOk('dir.txt');
  assert.equal((await get(s.url)).status, 200);
  await sh('rm /sandbox/gone.txt && rm /sandbox/dir.txt && mkdir /sandbox/dir.txt && echo x > /sandbox/dir.txt/inner');
  for (const url of [s.url, t.url]) {
    assert.equal((await get(url)).status, 404, url);
    assert.equal((await get(url, {}, 'HEAD')).status, 404, url);
  }
  // The file as it is at download time: recreated with other content.
  await sh('echo "new content" > /sandbox/gone.txt');
  const d = await get(s.url);
  assert.equal(d.status, 200);
  assert.equal(d.body.toString(), 'new content\n');
});

test('non-ASCII and long file names', async () => {
  const name = 'résumé 日本 "q" #1.txt';
  await sh(`printf 'unicode body' > '/sandbox/sub/${name}'`);
  const s = await shareOk(`sub/${name}`);
  assert.equal(s.name, name);
  assert.ok(s.url.endsWith('/r%C3%A9sum%C3%A9%20%E6%97%A5%E6%9C%AC%20%22q%22%20%231.txt'), s.url);
  const d = await get(s.url);
  assert.equal(d.status, 200);
  assert.equal(d.body.toString(), 'unicode body');
  const cd = d.headers.get('content-disposition');
  assert.ok(cd.startsWith('inline; filename="r__sum__ ______ _q_ #1.txt"; filename*=UTF-8\'\''), cd);
  assert.equal(decodeURIComponent(cd.split("UTF-8''")[1]), name);

  // 200 bytes: the engine's tar needs a long-name header for it.
  const long = `${'n'.repeat(196)}.bin`;
  await sh(`head -c 100000 /dev/urandom > /sandbox/${long}`);
  const l = await shareOk(long);
  const ld = await get(l.url);
  assert.equal(ld.status, 200);
  assert.equal(ld.body.length, 100000);
  const want = (await sh(`sha256sum /sandbox/${long}`)).split(' ')[0];
  assert.equal(createHash('sha256').update(ld.body).digest('hex'), want);
});

test('paths are normalised and symbolic links followed', async () => {
  assert.equal((await shareOk('./sub/../hello.txt')).path, '/sandbox/hello.txt');
  assert.equal((await shareOk('/sandbox//sub/./../hello.txt')).path, '/sandbox/hello.txt');
  await sh('ln -sf hello.txt /sandbox/alias.txt && ln -sf /sandbox/alias.txt /sandbox/sub/alias2.txt');
  const s = await shareOk('sub/alias2.txt');
  assert.equal(s.path, '/sandbox/hello.txt');
  assert.equal((await get(s.url)).body.toString(), 'hello, links\n');
  // Files outside /sandbox can be shared by absolute path.
  const e = await shareOk('/etc/hostname');
  assert.equal((await get(e.url)).status, 200);
});

test('share_file errors say what to do', async () => {
  const cases = [
    ['missing.txt', /No file at \/sandbox\/missing\.txt/],
    ['/', /directory/],
    ['../../..', /goes above/],
    ['', /non-empty/],
  ];
  for (const [path, re] of cases) {
    const r = await share(path);
    assert.equal(r.isError, true, path);
    assert.match(resultText(r), re, path);
  }
  await sh('ln -sf loop1 /sandbox/loop2 && ln -sf loop2 /sandbox/loop1; mkfifo /sandbox/fifo || true');
  assert.match(resultText(await share('loop1')), /symbolic link loop/);
  const f = await share('fifo');
  assert.equal(f.isError, true);
  assert.match(resultText(f), /not a regular file/);
  for (const args of [{}, { path: 42 }, { path: 'x'.repeat(5000) }]) {
    const r = await mcp.client.callTool({ name: 'share_file', arguments: args });
    assert.equal(r.isError, true, JSON.stringify(args).slice(0, 40));
  }
});

// What a link holder who knows (or guessed) the API key could sign under
// the old scheme: HMAC(HMAC(key, label), "code-sandbox link v1" NUL id NUL
// expires NUL path NUL).
function apiKeySignature(key, id, expires, path) {
  const k = createHmac('sha256', key).update('code-sandbox download links v1').digest();
  return createHmac('sha256', k).update(`code-sandbox link v1\0${id}\0${expires}\0${path}\0`).digest('base64url');
}

test('link signatures are keyed from a server-side random secret, not the API key (security review item 7)', async () => {
  const s = await shareOk('hello.txt');
  const [id, exp, sig] = new URL(s.url).pathname.split('/').slice(2, 5);
  assert.equal((await get(s.url)).status, 200);
  // The API key alone neither reproduces the signature nor signs a
  // shorter-lived twin of the link.
  assert.notEqual(apiKeySignature(srv.key, id, exp, '/sandbox/hello.txt'), sig);
  const shorter = Number(exp) - 60;
  const forged = s.url.replace(`/${exp}/${sig}/`, `/${shorter}/${apiKeySignature(srv.key, id, shorter, '/sandbox/hello.txt')}/`);
  assert.equal((await get(forged)).status, 403);
  assert.equal(await sql("select count(*) from server_secret where name = 'links' and length(value) = 43"), '1');
  // A link made before the secret (legacy_key = 1) keeps its API-key
  // signature until it expires; its new-key URL is no longer valid.
  await sql(`update link set legacy_key = 1 where id = '${id}'`);
  assert.equal((await get(forged)).status, 200);
  assert.equal((await get(s.url)).status, 403);
  await sql(`update link set legacy_key = 0 where id = '${id}'`);
  // Deleting the secret invalidates every link (a new one is made).
  await sql("delete from server_secret where name = 'links'");
  assert.equal((await get(s.url)).status, 403);
});

test('rotating the API key invalidates every link', async () => {
  const s = await shareOk('hello.txt');
  assert.equal((await get(s.url)).status, 200);
  await mcp.close();
  mcp = null;
  const newKey = randomBytes(32).toString('base64url');
  writeFileSync(srv.envFile, readFileSync(srv.envFile, 'utf8').replace(/^SANDBOX_API_KEY=.*$/m, `SANDBOX_API_KEY=${newKey}`));
  srv.key = newKey;
  await srv.restart();
  assert.equal((await get(s.url)).status, 403);
  mcp = await connect(srv);
  const t = await shareOk('hello.txt');
  assert.equal((await get(t.url)).status, 200);
  assert.equal((await get(s.url)).status, 403);
});

// The expiry is the program's own check, the same behind every front.
test('links expire after LINK_TTL', { skip: WEB !== 'lighttpd' ? 'behind lighttpd only' : false }, async () => {
  const short = await startServer({ name: 'links-ttl', settings: { LINK_TTL: 10 } });
  let c;
  try {
    c = await connect(short);
    const w = await c.execute({ command: 'echo soon > /sandbox/soon.txt' });
    assert.equal(w.structuredContent.exit_code, 0);
    const r = await c.client.callTool({ name: 'share_file', arguments: { path: 'soon.txt' } });
    const s = r.structuredContent;
    assert.ok(s.expires_at - Date.now() / 1000 <= 11, 'expires within LINK_TTL');
    // Valid until the expiry (checked while clearly before it).
    if (Date.now() / 1000 < s.expires_at - 2) assert.equal((await get(s.url)).status, 200);
    // Then gone: wait until past the expiry, then expect 410.
    await waitFor(() => Date.now() / 1000 >= s.expires_at + 1, { timeout: 30000, what: 'the expiry' });
    const d = await get(s.url);
    assert.equal(d.status, 410);
    assert.match(d.body.toString(), /expired/);
    assert.equal((await get(s.url, {}, 'HEAD')).status, 410);
  } finally {
    if (c) await c.close();
    await short.stop();
  }
});
