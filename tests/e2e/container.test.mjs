// The one long-lived container: created with its limits on first use, never
// recreated while it exists, started again when stopped, and recreated
// (keeping the volume's files) when removed.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, docker, TEST_IMAGE } from './lib/server.mjs';
import { connect, resultText } from './lib/client.mjs';

async function inspect(name) {
  const r = await docker('inspect', name);
  if (r.code !== 0) return null;
  return JSON.parse(r.stdout)[0];
}

describe('the sandbox container', () => {
  let srv;
  let conn;

  before(async () => {
    srv = await startServer({ name: 'container', settings: { SANDBOX_PIDS_LIMIT: 300 } });
    conn = await connect(srv);
  });
  after(async () => {
    await conn?.close().catch(() => {});
    await srv?.stop();
  });

  it('the first call creates the volume and the container', async () => {
    assert.equal(await inspect(srv.container), null, 'no container before the first call');
    const res = await conn.execute({ command: 'echo kept-across-restarts > /sandbox/keep.txt && echo ok' });
    assert.notEqual(res.isError, true, resultText(res));
    assert.equal(res.structuredContent.stdout, 'ok\n');
    const c = await inspect(srv.container);
    assert.ok(c, 'container exists');
    assert.equal(c.State.Running, true);
    const v = await docker('volume', 'inspect', srv.volume);
    assert.equal(v.code, 0, 'volume exists');
  });

  it('is created with the image, the volume at /sandbox, limits, and no privileges', async () => {
    const c = await inspect(srv.container);
    const hc = c.HostConfig;
    assert.equal(c.Config.Image, TEST_IMAGE);
    assert.equal(hc.Privileged, false);
    assert.ok((hc.SecurityOpt ?? []).some((o) => /^no-new-privileges(:true)?$/.test(o)), `SecurityOpt ${JSON.stringify(hc.SecurityOpt)}`);
    assert.equal(hc.Memory, 512 * 1024 * 1024);
    assert.equal(hc.NanoCpus, 1e9);
    assert.equal(hc.PidsLimit, 300);
    const mounts = c.Mounts ?? [];
    assert.deepEqual(
      mounts.filter((m) => m.Type === 'volume').map((m) => [m.Name, m.Destination]),
      [[srv.volume, '/sandbox']],
      'the volume, at /sandbox',
    );
    // Besides it only the previews' folder (lib/sandbox/portlane.h), read-only.
    const binds = mounts.filter((m) => m.Type !== 'volume');
    assert.deepEqual(binds.map((m) => [m.Type, m.Destination, m.RW]),
      [['bind', '/run/code-sandbox-previews', false]], JSON.stringify(binds));
    assert.match(binds[0].Source, /\/previews\/[0-9a-f]{32}$/);
    assert.deepEqual(hc.Binds ?? [], [], 'no host folder mounted');
    const ro = await docker('exec', srv.container, 'sh', '-c', 'touch /run/code-sandbox-previews/x 2>&1; echo $?');
    assert.match(ro.stdout, /Read-only file system[\s\S]*1\s*$/, ro.stdout);
    const sock = await docker('exec', srv.container, 'sh', '-c', 'test -e /var/run/docker.sock && echo present || echo absent');
    assert.equal(sock.stdout.trim(), 'absent', 'no Docker socket inside');
  });

  it('an existing container is reused, not recreated', async () => {
    const id = (await inspect(srv.container)).Id;
    await conn.execute({ command: 'true' });
    await conn.execute({ command: 'true' });
    assert.equal((await inspect(srv.container)).Id, id);
  });

  it('a stopped container is started again with its files', async () => {
    const id = (await inspect(srv.container)).Id;
    const st = await docker('stop', '-t', '1', srv.container);
    assert.equal(st.code, 0, st.stderr);
    assert.equal((await inspect(srv.container)).State.Running, false);
    const res = await conn.execute({ command: 'cat /sandbox/keep.txt' });
    assert.notEqual(res.isError, true, resultText(res));
    assert.equal(res.structuredContent.stdout, 'kept-across-restarts\n');
    const c = await inspect(srv.container);
    assert.equal(c.Id, id, 'same container');
    assert.equal(c.State.Running, true);
  });

  it('a removed container is recreated with the volume\'s files intact', async () => {
    const id = (await inspect(srv.container)).Id;
    const rm = await docker('rm', '-f', srv.container);
    assert.equal(rm.code, 0, rm.stderr);
    const res = await conn.execute({ command: 'cat /sandbox/keep.txt' });
    assert.notEqual(res.isError, true, resultText(res));
    assert.equal(res.structuredContent.stdout, 'kept-across-restarts\n');
    const c = await inspect(srv.container);
    assert.notEqual(c.Id, id, 'a new container');
    assert.equal(c.State.Running, true);
  });

  it('calls at the same time while the container is missing all succeed', async () => {
    await docker('rm', '-f', srv.container);
    const results = await Promise.all(
      Array.from({ length: 4 }, (_, i) => conn.execute({ command: `cat /sandbox/keep.txt; echo call-${i}` })),
    );
    results.forEach((res, i) => {
      // On a failure, all of the result and the programs' log lines say why.
      const why = `${JSON.stringify(res)}\n${srv.programsOutput().split('\n').slice(-60).join('\n')}`;
      assert.notEqual(res.isError, true, why);
      assert.equal(res.structuredContent.stdout, `kept-across-restarts\ncall-${i}\n`, why);
    });
    const ls = await docker('ps', '-a', '--filter', `name=^${srv.container}$`, '--format', '{{.ID}}');
    assert.equal(ls.stdout.trim().split('\n').length, 1, 'exactly one container');
  });

  it('the programs exit cleanly on SIGTERM with no sanitizer reports', async () => {
    await conn.close();
    conn = null;
    await srv.shutdown();
  });
});
