// The Docker engine restarted under a running server: the next call works
// without restarting anything. This kills the machine's dockerd and starts
// it again with containers/ensure-docker.sh, so tests/run.sh runs this file
// alone, after the others (*.serial.test.mjs).

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startServer, docker, waitFor, TOP } from './lib/server.mjs';
import { connect, resultText } from './lib/client.mjs';
import { authorizeUrl, cookiesOf, get, pkce, postSignIn, register, requestIdOf, tokenRequest } from './lib/oauth.mjs';

const execFileP = promisify(execFile);

function dockerdPid() {
  try {
    const pid = Number(readFileSync('/var/run/docker.pid', 'utf8').trim());
    process.kill(pid, 0);
    return pid;
  } catch {
    return 0;
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const remote = (process.env.DOCKER_HOST ?? '').startsWith('tcp://');

describe('a restarted Docker engine', { skip: remote ? 'remote engine' : false }, () => {
  let srv;
  let conn;

  before(async () => {
    srv = await startServer({ name: 'enginerestart' });
    conn = await connect(srv);
  });
  after(async () => {
    // Whatever happened, leave an engine running for everyone else.
    await execFileP(join(TOP, 'containers/ensure-docker.sh')).catch(() => {});
    await conn?.close().catch(() => {});
    await srv?.stop();
  });

  it('the next call after the engine came back works, files intact', async (t) => {
    const first = await conn.execute({ command: 'echo survived > /sandbox/s' });
    assert.equal(first.structuredContent.exit_code, 0, resultText(first));
    // A sign-in that spans the restart: page before, key during, code after.
    const client = (await register(srv, { redirect_uris: ['http://127.0.0.1:40000/cb'], token_endpoint_auth_method: 'none' })).json;
    const { verifier, challenge } = pkce();
    const page = await get(authorizeUrl(srv, { clientId: client.client_id, redirectUri: client.redirect_uris[0], challenge }));
    assert.equal(page.status, 200);
    const pid = dockerdPid();
    if (!pid) {
      t.skip('no local dockerd with /var/run/docker.pid');
      return;
    }
    process.kill(pid, 'SIGKILL');
    await waitFor(() => !alive(pid), { timeout: 20000, what: 'dockerd to exit' });
    // While it is down: a clear error, quickly.
    const down = await conn.execute({ command: 'true' }, { timeout: 30000 });
    assert.equal(down.isError, true, JSON.stringify(down));
    assert.match(resultText(down), /docker/i);
    // Signing in does not need the engine.
    const post = await postSignIn(srv, { request: requestIdOf(page.text), cookie: cookiesOf(page.headers), key: srv.key });
    assert.equal(post.status, 303, post.text);
    const code = new URL(post.location).searchParams.get('code');
    const up = await execFileP(join(TOP, 'containers/ensure-docker.sh'), { timeout: 120000 });
    assert.match(up.stdout + up.stderr, /ready|^$/);
    const tok = await tokenRequest(srv, { grant_type: 'authorization_code', code, code_verifier: verifier,
      redirect_uri: client.redirect_uris[0], client_id: client.client_id, resource: srv.mcpUrl });
    assert.equal(tok.status, 200, tok.text);
    const res = await conn.execute({ command: 'cat /sandbox/s' });
    assert.notEqual(res.isError, true, resultText(res));
    assert.equal(res.structuredContent.stdout, 'survived\n');
    const ps = await docker('ps', '--filter', `name=^${srv.container}$`, '--format', '{{.Status}}');
    assert.match(ps.stdout, /^Up/);
  });

  it('dockerd killed mid-command: the call ends with a clear result, the run reaches a final state, the next execute works', async (t) => {
    const pid = dockerdPid();
    if (!pid) {
      t.skip('no local dockerd with /var/run/docker.pid');
      return;
    }
    const m = `m${Date.now()}`;
    const p = conn.execute({ command: `echo s-${m}; : > /sandbox/started-${m}; sleep 6; echo e-${m}` });
    await waitFor(async () => (await docker('exec', srv.container, 'test', '-e', `/sandbox/started-${m}`)).code === 0, { what: 'the command to start' });
    process.kill(pid, 'SIGKILL');
    await waitFor(() => !alive(pid), { timeout: 20000, what: 'dockerd to exit' });
    const r = await p;
    assert.equal(r.isError, true, resultText(r));
    assert.match(resultText(r), /engine/i);
    const runId = r.structuredContent?.run_id;
    assert.ok(runId, JSON.stringify(r));
    await execFileP(join(TOP, 'containers/ensure-docker.sh'), { timeout: 120000 });
    const g = await conn.client.callTool({ name: 'get_result', arguments: { run_id: runId, wait: 30 } }, undefined, { timeout: 60000 });
    const text = resultText(g);
    // The container either survived (the real result) or restarted (said so).
    assert.ok(g.structuredContent?.exit_code === 0 ? text.includes(`e-${m}`) : /killed with the container|without a result/i.test(text),
      `${text}\n${srv.logs().split('\n').filter((l) => !/ info: database/.test(l)).slice(-25).join('\n')}`);
    const list = await conn.client.callTool({ name: 'get_result', arguments: {} });
    assert.notEqual(list.structuredContent.runs.find((x) => x.run_id === runId)?.state, 'running');
    const next = await conn.execute({ command: 'echo next' });
    assert.equal(next.structuredContent?.stdout, 'next\n', resultText(next));
  });

  it('a snapshot survives dockerd killed mid-restore: the sandbox stays as before, and the snapshot restores once the engine is back', async (t) => {
    const pid = dockerdPid();
    if (!pid) {
      t.skip('no local dockerd with /var/run/docker.pid');
      return;
    }
    const made = await conn.execute({ command: 'set -e; mkdir -p /sandbox/snap; cd /sandbox/snap; ' +
      'head -c 400000000 /dev/urandom | split -d -a 3 -b 4000000 - f; echo before > /sandbox/marker', timeout: 300 }, { timeout: 320000 });
    assert.equal(made.structuredContent?.exit_code, 0, resultText(made));
    const tool = (name, args) => conn.client.callTool({ name, arguments: args }, undefined, { timeout: 300000 });
    const s = await tool('snapshot', { note: 'before the engine restarts' });
    assert.notEqual(s.isError, true, resultText(s));
    const id = s.structuredContent.snapshot_id;
    await conn.execute({ command: 'echo after > /sandbox/marker; rm /sandbox/snap/f000' });
    // The restore under way (its helper, stopped, takes the archive into the new volume): the engine dies.
    const p = tool('restore', { snapshot_id: id });
    await waitFor(async () => (await docker('ps', '-aq', '--filter', `name=${srv.container}-restore-`)).stdout.trim() !== '',
      { timeout: 60000, interval: 50, what: 'the restore to be under way' });
    process.kill(pid, 'SIGKILL');
    await waitFor(() => !alive(pid), { timeout: 20000, what: 'dockerd to exit' });
    const r = await p;
    assert.equal(r.isError, true, `the restore ended before the engine died: ${resultText(r)}`);
    assert.match(resultText(r), /Not restored/);
    await execFileP(join(TOP, 'containers/ensure-docker.sh'), { timeout: 120000 });
    // As before the restore: the later change is there, nothing of the snapshot's.
    const now = await conn.execute({ command: 'cat /sandbox/marker; ls /sandbox/snap | wc -l' });
    assert.equal(now.structuredContent?.stdout, 'after\n99\n', resultText(now));
    // The snapshot is still there and restores.
    const list = await tool('snapshots', {});
    assert.ok(list.structuredContent.snapshots.some((x) => x.snapshot_id === id), resultText(list));
    const again = await tool('restore', { snapshot_id: id });
    assert.notEqual(again.isError, true, resultText(again));
    const back = await conn.execute({ command: 'cat /sandbox/marker; ls /sandbox/snap | wc -l' });
    assert.equal(back.structuredContent?.stdout, 'before\n100\n', resultText(back));
    // Nothing of the failed try is left: one volume generation, no helper.
    const vols = await docker('volume', 'ls', '-q', '--filter', `name=${srv.volume}-s`);
    assert.equal(vols.stdout.trim().split('\n').filter(Boolean).length, 1, vols.stdout);
    const helpers = await docker('ps', '-aq', '--filter', `name=${srv.container}-`);
    assert.equal(helpers.stdout.trim(), '', 'no helper or set-aside container left');
    await tool('snapshot_delete', { snapshot_id: id });
    await docker('rmi', '-f', `code-sandbox-snap:${id}`);
  });
});
