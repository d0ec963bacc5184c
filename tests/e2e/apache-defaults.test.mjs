// Apache with mod_fcgid left at its defaults, as a host that sets nothing
// for the sandbox: no apache/fcgid.conf (FcgidOutputBufferSize 64 KiB,
// FcgidIOTimeout 40 s, FcgidBusyTimeout 300 s, FcgidMaxRequestLen 128 KiB,
// no FcgidInitialEnv), only the hosting user's .htaccess and the settings
// as .env beside the programs. What docs/operating.md ("Apache with
// mod_fcgid") says works there, works: sign-in as Claude does, a short
// execute, /dl, uploads up to 128 KiB, and a command longer than the IO
// timeout through its handle (2026-07-28) and get_result. What it says
// breaks, breaks that way: a larger body is refused, a streamed answer is
// held back to its end (progress and pings arrive all at once), and a 2025
// stream silent past the IO timeout is cut (the command runs on;
// get_result collects it).
// Then mod_fcgid's process manager killing a busy worker mid-command (its
// FcgidBusyTimeout, 300 s at the default, short here): the stream ends with
// the "restarting" result and get_result still collects the real result;
// and stopping idle processes (FcgidIdleTimeout): they exit cleanly.
// Runs behind Apache only (CS_WEB=apache; tests/run.sh's Apache pass).

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { startServer, waitFor, WEB } from './lib/server.mjs';
import { resultText, openSession, parseSse, rawStream, execBody, http } from './lib/client.mjs';
import { ClaudeProvider, connectOAuth } from './lib/oauth.mjs';

const skip = WEB !== 'apache' && 'behind Apache only (CS_WEB=apache)';
const V = '2026-07-28';
const INLINE = 8; // SANDBOX_INLINE_WAIT, seconds
const PING = 60; // SANDBOX_PING_INTERVAL: a 2025 stream silent past mod_fcgid's 40 s

const mark = () => `m${randomBytes(5).toString('hex')}`;
const sha256 = (b) => createHash('sha256').update(b).digest('hex');

/* A 2026-07-28 tools/call (no session, no Tasks extension: a run_id handle). */
function call2026(srv, name, args, { timeout = 60000 } = {}) {
  return http(srv, {
    body: {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name,
        arguments: args,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': V,
          'io.modelcontextprotocol/clientCapabilities': {},
          'io.modelcontextprotocol/clientInfo': { name: 'raw-2026', version: '1.0.0' },
        },
      },
    },
    headers: { 'mcp-protocol-version': V, 'mcp-method': 'tools/call', 'mcp-name': name },
    timeout,
  });
}

/* get_result until the run has ended; each call is answered within INLINE. */
async function collect(srv, runId, { until = 120000 } = {}) {
  const end = Date.now() + until;
  for (;;) {
    const t0 = Date.now();
    const g = await call2026(srv, 'get_result', { run_id: runId, wait: 600 });
    assert.equal(g.status, 200, g.text);
    assert.ok(Date.now() - t0 < 40000, 'each get_result answers within mod_fcgid\'s IO timeout');
    const sc = g.json.result.structuredContent;
    if (sc.state !== 'running') return sc;
    assert.ok(Date.now() < end, `run ${runId} still running`);
  }
}

describe('Apache with mod_fcgid at its defaults', { skip }, () => {
  let srv;
  let sdk;

  before(async () => {
    srv = await startServer({
      name: 'fcgid-defaults',
      web: 'apache',
      apache: { defaults: true },
      settings: { SANDBOX_INLINE_WAIT: INLINE, SANDBOX_PING_INTERVAL: PING },
    });
  });
  after(async () => {
    await sdk?.client.close().catch(() => {});
    await srv?.stop();
  });

  it('sign-in through OAuth as Claude does, then a short execute', async () => {
    sdk = await connectOAuth(srv, new ClaudeProvider(srv), { name: 'Claude' });
    assert.match(sdk.provider.tokenSet.access_token, /^csat_/);
    const r = await sdk.client.callTool({ name: 'execute', arguments: { command: 'echo at-defaults' } }, undefined, { timeout: 120000 });
    assert.equal(r.isError, false, resultText(r));
    assert.equal(r.structuredContent.stdout, 'at-defaults\n');
  });

  it('share_file: /dl arrives byte for byte', async () => {
    const n = 2 * (1 << 20) + 4321;
    const sh = await sdk.client.callTool({ name: 'execute', arguments: { command: `head -c ${n} /dev/urandom > /sandbox/d.bin && sha256sum /sandbox/d.bin` } });
    assert.equal(sh.structuredContent.exit_code, 0, resultText(sh));
    const link = (await sdk.client.callTool({ name: 'share_file', arguments: { path: '/sandbox/d.bin' } })).structuredContent;
    const r = await fetch(link.url, { signal: AbortSignal.timeout(120000) });
    assert.equal(r.status, 200);
    const body = Buffer.from(await r.arrayBuffer());
    assert.equal(body.length, n);
    assert.equal(sha256(body), sh.structuredContent.stdout.split(' ')[0]);
  });

  it('uploads up to FcgidMaxRequestLen (128 KiB) pass; a larger body is refused by mod_fcgid', async () => {
    const link = (await sdk.client.callTool({ name: 'upload_link', arguments: { folder: 'fcgid' } })).structuredContent;
    const small = randomBytes(100 * 1024);
    let r = await fetch(`${link.url}small.bin`, { method: 'PUT', body: small, signal: AbortSignal.timeout(60000) });
    assert.equal(r.status, 201, await r.text());
    r = await fetch(`${link.url}big.bin`, { method: 'PUT', body: randomBytes(200 * 1024), signal: AbortSignal.timeout(60000) });
    await r.arrayBuffer();
    assert.equal(r.status, 500);
    await waitFor(() => /exceeds MaxRequestLen/.test(srv.programsOutput()), { what: 'mod_fcgid to say why' });
    const sh = await sdk.client.callTool({ name: 'execute', arguments: { command: 'sha256sum /sandbox/fcgid/small.bin; ls /sandbox/fcgid' } });
    assert.equal(sh.structuredContent.stdout, `${sha256(small)}  /sandbox/fcgid/small.bin\nsmall.bin\n`);
  });

  it('a streamed answer is held back to its end: progress and the result arrive together', async () => {
    const sess = await openSession(srv);
    const m = mark();
    const s = rawStream(srv, sess, execBody('held-1', `for i in 1 2 3 4 5 6; do echo "${m} $i"; sleep 1; done`, { _meta: { progressToken: 'pt-held' } }));
    await s.done;
    assert.equal(s.status, 200);
    assert.ok(s.ended, `the stream ended: ${s.error}`);
    const msgs = parseSse(s.text());
    const final = msgs.find((x) => x.id === 'held-1');
    assert.equal(final?.result.structuredContent.exit_code, 0, s.text());
    assert.ok(msgs.filter((x) => x.method === 'notifications/progress').length >= 3, 'progress was written');
    // Nothing reached the client before the command's end (about 6 s).
    const first = s.chunks[0].at;
    assert.ok(first >= 5000, `first bytes after ${first} ms: mod_fcgid's output buffer held them`);
    assert.ok(s.chunks.at(-1).at - first < 1500, 'everything at once');
  });

  it('a command past the IO timeout: as a 2026-07-28 handle and get_result it works; a silent 2025 stream is cut, get_result still collects', async () => {
    const m = mark();
    // 2026-07-28: the answer (a handle) comes after SANDBOX_INLINE_WAIT.
    const handled = (async () => {
      const t0 = Date.now();
      const r = await call2026(srv, 'execute', { command: `sleep 45; echo handle-${m}`, timeout: 120 });
      assert.equal(r.status, 200, r.text);
      const sc = r.json.result.structuredContent;
      assert.equal(sc.running, true, r.text);
      assert.ok(Date.now() - t0 < 30000, `the handle within the inline wait (${Date.now() - t0} ms)`);
      const done = await collect(srv, sc.run_id);
      assert.equal(done.exit_code, 0, JSON.stringify(done));
      assert.equal(done.stdout, `handle-${m}\n`);
    })();
    // 2025: one stream for the whole command, no byte for 45 s (pings
    // every 60 s): mod_fcgid gives up at 40 s.
    const cut = (async () => {
      const sess = await openSession(srv);
      const t0 = Date.now();
      const s = rawStream(srv, sess, execBody('cut-1', `sleep 45; echo stream-${m}`));
      await s.done;
      const took = Date.now() - t0;
      const final = parseSse(s.text()).find((x) => x.id === 'cut-1');
      assert.equal(final, undefined, `no result on the cut stream: ${s.status} ${s.text()}`);
      assert.ok(took >= 35000 && took < 60000, `cut at mod_fcgid's IO timeout (${took} ms, status ${s.status})`);
      // The command ran on: its result is collected.
      const list = await call2026(srv, 'get_result', {});
      const runId = list.json.result.structuredContent.runs.find((x) => x.command.includes(`stream-${m}`))?.run_id;
      assert.ok(runId, list.text);
      const done = await collect(srv, runId);
      assert.equal(done.exit_code, 0, JSON.stringify(done));
      assert.equal(done.stdout, `stream-${m}\n`);
    })();
    await Promise.all([handled, cut]);
  });

  it('the programs exit cleanly on SIGTERM with no sanitizer reports', async () => {
    await sdk?.client.close().catch(() => {});
    sdk = null;
    await srv.shutdown();
  });
});

describe('mod_fcgid\'s process manager kills a busy /mcp worker mid-command (FcgidBusyTimeout)', { skip }, () => {
  let srv;

  before(async () => {
    srv = await startServer({
      name: 'fcgid-busy',
      web: 'apache',
      // A request busy over 5 s is killed (SIGTERM) at the next scan; a
      // process idle for 4 s is stopped (SIGTERM) too.
      apache: {
        conf: 'FcgidBusyTimeout 5\nFcgidIdleTimeout 4',
        server: 'FcgidBusyScanInterval 1\nFcgidIdleScanInterval 1',
      },
    });
    // The container first: made within a request, it could outlast 5 s.
    await waitFor(async () => {
      const r = await call2026(srv, 'execute', { command: 'true' }, { timeout: 30000 });
      return r.json?.result?.structuredContent?.exit_code === 0;
    }, { timeout: 90000, interval: 1000, what: 'the sandbox ready' });
  });
  after(async () => {
    await srv?.stop();
  });

  it('the stream ends with the "restarting" result; get_result collects the real result', async () => {
    const sess = await openSession(srv);
    const m = mark();
    const s = rawStream(srv, sess, execBody('busy-1', `echo start-${m}; sleep 15; echo done-${m}; exit 3`, { _meta: { progressToken: 'pt-busy' } }));
    await waitFor(() => s.text().includes(`start-${m}`), { timeout: 20000, what: 'the first output as progress' });
    const busy = srv.programPids('mcp');
    // apache/fcgid.conf sizes each process for one request at a time.
    for (const p of busy) assert.match(readFileSync(`/proc/${p}/environ`, 'latin1'), /(^|\0)SANDBOX_THREADS=1\0/);
    await s.done;
    const final = parseSse(s.text()).find((x) => x.id === 'busy-1');
    assert.ok(final, `a result on the stream: ${s.status} ${s.text()}`);
    assert.equal(final.result.isError, true);
    assert.match(resultText(final.result), /restart/i);
    assert.ok(s.chunks.at(-1).at < 14000, `ended by mod_fcgid before the command (${s.chunks.at(-1).at} ms)`);
    const runId = final.result.structuredContent?.run_id;
    assert.ok(runId, JSON.stringify(final.result));
    // mod_fcgid's own words, and the process it stopped is gone.
    await waitFor(() => /mod_fcgid: \/mcp took longer than busy timeout \(5 secs\)/.test(srv.programsOutput()), { what: 'mod_fcgid to log the busy timeout' });
    await waitFor(() => busy.every((p) => !srv.programPids('mcp').includes(p)), { what: 'the busy process to exit' });
    // A new process answers; the command ran to its end meanwhile.
    const done = await waitFor(async () => {
      // Short waits: a request busy over 5 s is killed here.
      const g = await call2026(srv, 'get_result', { run_id: runId, wait: 2 });
      const sc = g.json?.result?.structuredContent;
      return sc && sc.state !== 'running' ? sc : null;
    }, { timeout: 60000, interval: 500, what: 'the run collected' });
    assert.equal(done.exit_code, 3, JSON.stringify(done));
    assert.equal(done.stdout, `start-${m}\ndone-${m}\n`);
  });

  it('idle processes are stopped by mod_fcgid and exit cleanly', async () => {
    const idle = /mod_fcgid: process .*\/mcp\((\d+)\) exit\(idle timeout\), terminated by calling exit\(\), return code: 0/;
    const [, pid] = await waitFor(() => idle.exec(srv.programsOutput()), { timeout: 30000, what: 'an idle /mcp process stopped' });
    assert.ok(!srv.programPids('mcp').includes(Number(pid)));
    assert.equal(srv.sanitizerReports(), '');
  });

  it('the programs exit cleanly on SIGTERM with no sanitizer reports', async () => {
    await srv.shutdown();
  });
});
