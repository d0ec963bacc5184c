// Apache httpd with mod_proxy_fcgi, for those who run their own Apache:
// apache/proxy-fcgi.conf as shipped (tests/setup/serve.sh apache), the
// programs on their sockets started by containers/run-programs.sh, Apache's
// workers as www-data. Each route reaches its own program (each socket
// needs a name of its own after fcgi://), Authorization passes, progress
// streams as it is written, /dl and /up arrive byte for byte.
// Runs behind Apache only (CS_WEB=apache; tests/run.sh's Apache pass).

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { startServer, WEB } from './lib/server.mjs';
import { resultText, openSession, parseSse, rawStream, execBody } from './lib/client.mjs';
import { TestProvider, clientAuth, connectOAuth, tokenRequest } from './lib/oauth.mjs';

const skip = WEB !== 'apache' && 'behind Apache only (CS_WEB=apache)';
const MIB = 1 << 20;
const sha256 = (b) => createHash('sha256').update(b).digest('hex');

describe('Apache with mod_proxy_fcgi (apache/proxy-fcgi.conf)', { skip }, () => {
  let srv;
  let sdk;

  const tool = async (name, args) => {
    const r = await sdk.client.callTool({ name, arguments: args }, undefined, { timeout: 120000 });
    assert.notEqual(r.isError, true, `${name}: ${resultText(r)}`);
    return r.structuredContent;
  };

  before(async () => {
    srv = await startServer({ name: 'apache-proxy', web: 'apache-proxy', settings: { SANDBOX_PING_INTERVAL: 2 } });
  });
  after(async () => {
    await sdk?.client.close().catch(() => {});
    await srv?.stop();
  });

  it('each route reaches its program: sign-in through OAuth, /token and /revoke, then /mcp with the token', async () => {
    const r = await fetch(`${srv.url}/.well-known/oauth-authorization-server`);
    assert.equal(r.status, 200);
    assert.equal((await r.json()).issuer, srv.url);
    for (const path of ['/', '/nothing', '/mcp/x']) {
      assert.ok([403, 404].includes((await fetch(srv.url + path)).status), `${path} is not served`);
    }
    sdk = await connectOAuth(srv, new TestProvider(srv), { name: 'e2e-apache-proxy' });
    const { params } = clientAuth(sdk.provider.info);
    const t = await tokenRequest(srv, { grant_type: 'refresh_token', refresh_token: sdk.provider.tokenSet.refresh_token, ...params });
    assert.equal(t.status, 200, t.text);
    sdk.provider.saveTokens(t.json);
    const rv = await tokenRequest(srv, { token: 'csrt_not-a-token', ...params }, { path: '/revoke' });
    assert.equal(rv.status, 200, rv.text);
    assert.equal((await tool('execute', { command: 'echo through-proxy' })).stdout, 'through-proxy\n');
  });

  it('progress and pings stream as they are written', async () => {
    const sess = await openSession(srv);
    const m = `m${randomBytes(4).toString('hex')}`;
    const s = rawStream(srv, sess, execBody('px-1', `for i in 1 2 3 4 5 6; do echo "${m} $i"; sleep 1; done`, { _meta: { progressToken: 'pt-px' } }));
    await s.done;
    assert.ok(s.ended, `the stream ended: ${s.error}`);
    const final = parseSse(s.text()).find((x) => x.id === 'px-1');
    assert.equal(final?.result.structuredContent.exit_code, 0, s.text());
    const first = s.chunks.find((c) => c.text.includes(`${m} 1`))?.at;
    assert.ok(first !== undefined && first < s.chunks.at(-1).at - 3000, `line 1 at ${first} ms, the end at ${s.chunks.at(-1).at} ms`);
  });

  it('/dl and /up arrive byte for byte', async () => {
    const n = 3 * MIB + 99;
    const sum = (await tool('execute', { command: `head -c ${n} /dev/urandom > /sandbox/px.bin && sha256sum /sandbox/px.bin` })).stdout.split(' ')[0];
    const dl = await tool('share_file', { path: '/sandbox/px.bin' });
    const body = Buffer.from(await (await fetch(dl.url, { signal: AbortSignal.timeout(120000) })).arrayBuffer());
    assert.equal(body.length, n);
    assert.equal(sha256(body), sum);
    const up = await tool('upload_link', { folder: 'px' });
    const a = randomBytes(2 * MIB + 5);
    const r = await fetch(`${up.url}a.bin`, { method: 'PUT', body: a, signal: AbortSignal.timeout(120000) });
    assert.equal(r.status, 201, await r.text());
    assert.equal((await tool('execute', { command: 'sha256sum < /sandbox/px/a.bin' })).stdout, `${sha256(a)}  -\n`);
  });

  it('the programs exit cleanly on SIGTERM with no sanitizer reports', async () => {
    await sdk?.client.close().catch(() => {});
    sdk = null;
    await srv.shutdown();
  });
});
