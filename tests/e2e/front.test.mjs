// What a web server in front of the programs can break, in one file that
// runs behind each front (CS_WEB: lighttpd, caddy, nginx): sign-in through
// OAuth as Claude does it (the metadata, /register, /authorize, /token,
// /revoke, then /mcp with the token), a 40 s command whose progress
// notifications and keep-alive pings arrive as they are written, a share_file
// download through /dl and an upload through /up byte for byte, and a /mcp
// worker killed mid-command whose result is still collected with get_result.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { startServer, dockerExec, waitFor, WEB } from './lib/server.mjs';
import { resultText, openSession, parseSse, rawStream, execBody } from './lib/client.mjs';
import { CLAUDE_REGISTRATION, ClaudeProvider, clientAuth, connectOAuth, tokenRequest } from './lib/oauth.mjs';

const PING = 2; // SANDBOX_PING_INTERVAL, seconds
const MIB = 1 << 20;

const mark = () => `m${randomBytes(5).toString('hex')}`;
const sha256 = (b) => createHash('sha256').update(b).digest('hex');

describe(`behind ${WEB}`, () => {
  let srv;
  let sdk; // the SDK client signed in through OAuth

  const tool = async (name, args, timeout = 120000) => {
    const r = await sdk.client.callTool({ name, arguments: args }, undefined, { timeout });
    assert.notEqual(r.isError, true, `${name}: ${resultText(r)}`);
    return r.structuredContent;
  };
  const sh = async (command) => {
    const sc = await tool('execute', { command });
    assert.equal(sc.exit_code, 0, `${command}: ${JSON.stringify(sc)}`);
    return sc.stdout;
  };

  before(async () => {
    srv = await startServer({ name: 'front', settings: { SANDBOX_PING_INTERVAL: PING } });
  });
  after(async () => {
    await sdk?.client.close().catch(() => {});
    await srv?.stop();
  });

  it('sign-in through OAuth as Claude does: discovery, registration, the sign-in page, the token, /mcp', async () => {
    const unauth = await fetch(srv.mcpUrl, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
    assert.equal(unauth.status, 401);
    assert.equal(unauth.headers.get('www-authenticate'), `Bearer resource_metadata="${srv.url}/.well-known/oauth-protected-resource/mcp"`);

    sdk = await connectOAuth(srv, new ClaudeProvider(srv), { name: 'Claude' });
    const p = sdk.provider;
    assert.equal(p.authorizations.length, 1, 'one sign-in');
    assert.equal(p.info.token_endpoint_auth_method, 'client_secret_post');
    assert.ok(p.info.client_secret, 'a client with a secret');
    assert.equal(p.redirect.params.iss, srv.url, 'RFC 9207 iss on the redirect');
    assert.ok(p.redirect.location.startsWith(`${CLAUDE_REGISTRATION.redirect_uris[0]}?`), p.redirect.location);
    assert.match(p.tokenSet.access_token, /^csat_/);
    assert.equal(await sh('echo signed-in'), 'signed-in\n');

    // The refresh token works at /token; /revoke reaches the token program.
    const { params } = clientAuth(p.info);
    const t = await tokenRequest(srv, { grant_type: 'refresh_token', refresh_token: p.tokenSet.refresh_token, ...params });
    assert.equal(t.status, 200, t.text);
    p.saveTokens(t.json);
    const rv = await tokenRequest(srv, { token: 'csrt_not-a-token', ...params }, { path: '/revoke' });
    assert.equal(rv.status, 200, rv.text);
    assert.equal(await sh('echo refreshed'), 'refreshed\n');
  });

  it('a 40 s command: progress notifications and keep-alive pings arrive as they are written', async () => {
    const sess = await openSession(srv);
    const m = mark();
    const lines = [1, 2, 3, 4, 5, 6, 7, 8].map((i) => `${m} ${i}`);
    const s = rawStream(srv, sess, execBody('long-1', `for i in 1 2 3 4 5 6 7 8; do echo "${m} $i"; sleep 5; done`, { _meta: { progressToken: 'pt-long' } }));
    await s.done;
    assert.equal(s.status, 200);
    assert.match(s.headers.get('content-type'), /^text\/event-stream/);
    assert.ok(s.ended, `the stream ended normally: ${s.error}`);
    const end = s.chunks.at(-1).at;
    const trace = () => JSON.stringify(s.chunks.map((c) => [c.at, c.text.slice(0, 80)]));
    assert.ok(end >= 39000, `the command ran 40 s (${end} ms)`);

    const final = parseSse(s.text()).find((x) => x.id === 'long-1');
    assert.ok(final, s.text());
    assert.equal(final.result.structuredContent.exit_code, 0);
    assert.equal(final.result.structuredContent.stdout, lines.map((l) => `${l}\n`).join(''));

    // Each line shows up in a progress notification soon after it was
    // printed (every 5 s), not at the end.
    const firstSeen = (l) => s.chunks.find((c) => c.text.includes('notifications/progress') && c.text.includes(l))?.at;
    lines.forEach((l) => assert.ok(firstSeen(l) !== undefined, `${l} in a progress notification: ${trace()}`));
    assert.ok(firstSeen(lines[0]) < 10000, `line 1 shown at ${firstSeen(lines[0])} ms: ${trace()}`);
    assert.ok(firstSeen(lines[3]) < end - 10000, `line 4 shown at ${firstSeen(lines[3])} ms, the end at ${end} ms: ${trace()}`);
    const progress = parseSse(s.text()).filter((x) => x.method === 'notifications/progress');
    assert.ok(progress.length >= 8, `${progress.length} progress notifications`);

    // Keep-alive comments every PING seconds, spread over the whole run.
    const pings = s.chunks.filter((c) => /^: ping$/m.test(c.text)).map((c) => c.at);
    assert.ok(pings.length >= 8, `at least 8 pings in 40 s at a ${PING} s interval: ${pings}`);
    assert.ok(pings[0] < 10000 && pings.at(-1) > end - 10000, `pings from start to end: ${pings}`);
    // Never silent for long: nothing is held back by the front.
    const gaps = s.chunks.map((c, i) => c.at - (i ? s.chunks[i - 1].at : 0));
    assert.ok(Math.max(...gaps) < 12000, `longest silence ${Math.max(...gaps)} ms: ${trace()}`);
  });

  it('share_file: a few MiB of random bytes through /dl arrive byte for byte', async () => {
    const n = 3 * MIB + 12345;
    const want = (await sh(`head -c ${n} /dev/urandom > /sandbox/front.bin && sha256sum /sandbox/front.bin`)).split(' ')[0];
    const link = await tool('share_file', { path: '/sandbox/front.bin' });
    assert.ok(link.url.startsWith(`${srv.url}/dl/`), link.url);
    const r = await fetch(link.url, { redirect: 'manual', signal: AbortSignal.timeout(120000) });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-length'), String(n));
    const body = Buffer.from(await r.arrayBuffer());
    assert.equal(body.length, n);
    assert.equal(sha256(body), want);
    // A range is the program's answer, passed on as it is.
    const part = await fetch(link.url, { headers: { range: 'bytes=1000-1999' } });
    assert.equal(part.status, 206);
    assert.ok(Buffer.from(await part.arrayBuffer()).equals(body.subarray(1000, 2000)));
    // /dl itself is the program's 404, not the front's redirect.
    assert.equal((await fetch(`${srv.url}/dl`, { redirect: 'manual' })).status, 404);
  });

  it('upload_link: files through /up, with a length and chunked, arrive byte for byte', async () => {
    const link = await tool('upload_link', { folder: 'front' });
    assert.ok(link.url.startsWith(`${srv.url}/up/`), link.url);
    const a = randomBytes(3 * MIB + 777);
    let r = await fetch(`${link.url}a.bin`, { method: 'PUT', body: a, signal: AbortSignal.timeout(120000) });
    assert.equal(r.status, 201, await r.text());
    // Chunked: a body of unknown length.
    const b = randomBytes(2 * MIB + 333);
    const pieces = [b.subarray(0, MIB), b.subarray(MIB, 2 * MIB), b.subarray(2 * MIB)];
    const stream = new ReadableStream({
      pull(c) {
        if (pieces.length) c.enqueue(pieces.shift());
        else c.close();
      },
    });
    r = await fetch(`${link.url}b.bin`, { method: 'PUT', body: stream, duplex: 'half', signal: AbortSignal.timeout(120000) });
    assert.equal(r.status, 201, await r.text());
    const sums = await sh('cd /sandbox/front && sha256sum a.bin b.bin && stat -c %s a.bin b.bin');
    assert.match(sums, new RegExp(`^${sha256(a)}  a\\.bin\\n${sha256(b)}  b\\.bin\\n${a.length}\\n${b.length}\\n$`));
    assert.equal((await fetch(`${srv.url}/up`, { redirect: 'manual' })).status, 404);
  });

  it('a /mcp worker killed mid-command: get_result still collects the real result', async () => {
    const m = mark();
    const pending = sdk.client.callTool(
      { name: 'execute', arguments: { command: `echo start-${m}; : > /sandbox/started-${m}; sleep 3; echo done-${m}; echo err-${m} >&2; exit 7` } },
      undefined,
      { timeout: 120000 },
    );
    pending.catch(() => {});
    await waitFor(async () => (await dockerExec(srv, `test -e /sandbox/started-${m}`)).code === 0, { what: 'the command to start' });
    const { runs } = await tool('get_result', {});
    const runId = runs.find((x) => x.command.includes(m))?.run_id;
    assert.ok(runId, JSON.stringify(runs));
    const killed = srv.programPids('mcp');
    assert.ok(killed.length >= 1, 'mcp processes found');
    for (const pid of killed) process.kill(pid, 'SIGKILL');
    // The same signed-in session, once the front has a worker again.
    const sc = await waitFor(() => tool('get_result', { run_id: runId, wait: 30 }, 60000), {
      timeout: 60000,
      interval: 500,
      what: 'get_result after the kill',
    });
    assert.equal(sc.exit_code, 7, JSON.stringify(sc));
    assert.equal(sc.stdout, `start-${m}\ndone-${m}\n`);
    assert.equal(sc.stderr, `err-${m}\n`);
    assert.ok(srv.programPids('mcp').every((p) => !killed.includes(p)), 'new /mcp processes serve');
  });
});
