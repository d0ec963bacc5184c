// Configuration drift: a container made by hand with another memory limit
// is updated in place; one made privileged (or otherwise weaker) is refused
// with the difference named until `sandboxctl recreate`; one labelled with
// an older version is recreated on the same volume, /sandbox intact, and
// the first result says so. The OCI runtime setting reaches the engine:
// the test names io.containerd.runc.v2, runc under the name every Docker
// engine lists among its runtimes (docker info) and records on a container
// only when a create asks for it (one made without a runtime records
// runc), so the name on the container can only have come from the setting.
// (runsc, gVisor's runtime, would need the engine's daemon.json edited and
// the engine restarted: not done on a machine others use.)

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, docker, TEST_IMAGE } from './lib/server.mjs';
import { connect, resultText } from './lib/client.mjs';
import { ctl, handMade, status, testName } from './lib/hostile.mjs';

const RUNTIME = 'io.containerd.runc.v2';

async function inspect(name) {
  const r = await docker('inspect', name);
  return r.code === 0 ? JSON.parse(r.stdout)[0] : null;
}

describe('configuration drift', () => {
  let srv, conn;

  before(async () => {
    srv = await startServer({ name: 'drift', settings: { SANDBOX_RUNTIME: RUNTIME } });
    conn = await connect(srv);
  });
  after(async () => {
    await conn?.close().catch(() => {});
    await srv?.stop();
  });

  it('a container made with another memory limit is updated in place', async () => {
    const id = await handMade(srv, { memory: '300m' });
    assert.equal((await inspect(srv.container)).HostConfig.Memory, 300 << 20);
    const res = await conn.execute({ command: 'echo hi > /sandbox/kept; cat /sandbox/kept' });
    assert.notEqual(res.isError, true, resultText(res));
    assert.equal(res.structuredContent.stdout, 'hi\n');
    const c = await inspect(srv.container);
    assert.equal(c.Id, id, 'the same container');
    assert.equal(c.HostConfig.Memory, 512 << 20);
    assert.equal(c.HostConfig.MemorySwap, 512 << 20);
  });

  it('the runtime setting is passed to the engine (a name the engine records only when sent)', async () => {
    // The set-up, confirmed: the engine knows the name, and a container
    // created without a runtime records another one.
    const info = await docker('info', '--format', '{{json .Runtimes}}');
    assert.ok(Object.keys(JSON.parse(info.stdout)).includes(RUNTIME), `the engine lists ${RUNTIME}: ${info.stdout}`);
    const plain = testName('plain');
    try {
      assert.equal((await docker('create', '--name', plain, TEST_IMAGE, 'true')).code, 0);
      assert.notEqual((await inspect(plain)).HostConfig.Runtime, RUNTIME, 'a container made without a runtime');
    } finally {
      await docker('rm', '-f', plain);
    }
    await docker('rm', '-f', srv.container);
    const res = await conn.execute({ command: 'true' });
    assert.notEqual(res.isError, true, resultText(res));
    const c = await inspect(srv.container);
    assert.equal(c.HostConfig.Runtime, RUNTIME);
    assert.equal(c.Config.Labels['code-sandbox.version'], '3');
  });

  it('a container on another runtime than the setting is refused, naming both', async () => {
    await docker('rm', '-f', srv.container);
    await handMade(srv, { runtime: '' });
    const res = await conn.execute({ command: 'true' });
    assert.equal(res.isError, true, resultText(res));
    assert.match(resultText(res), new RegExp(`runtime runc, configured ${RUNTIME.replace(/\./g, '\\.')}`));
    const r = await ctl(srv, ['recreate']);
    assert.equal(r.code, 0, r.stderr);
    const again = await conn.execute({ command: 'true' });
    assert.notEqual(again.isError, true, resultText(again));
    assert.equal((await inspect(srv.container)).HostConfig.Runtime, RUNTIME);
  });

  it('a privileged container is refused, naming the difference and the way out', async () => {
    await docker('rm', '-f', srv.container);
    const id = await handMade(srv, { privileged: true, extra: ['--cap-add', 'NET_RAW'], start: false });
    const res = await conn.execute({ command: 'echo should-not-run' });
    assert.equal(res.isError, true, resultText(res));
    const text = resultText(res);
    assert.match(text, /privileged/);
    assert.match(text, /extra capability NET_RAW/);
    assert.match(text, /sandboxctl recreate/);
    const left = await inspect(srv.container);
    assert.equal(left.Id, id, 'left as it is');
    assert.equal(left.State.Running, false, 'never started');
    const st = await status(srv);
    assert.match(st.spec.verdict, /refused/);
    assert.match(st.spec.differences, /privileged/);
    assert.match(st.problems, /container not as configured/);
    const r = await ctl(srv, ['recreate']);
    assert.equal(r.code, 0, r.stderr);
    const again = await conn.execute({ command: 'cat /sandbox/kept' });
    assert.notEqual(again.isError, true, resultText(again));
    assert.equal(again.structuredContent.stdout, 'hi\n');
    const c = await inspect(srv.container);
    assert.equal(c.HostConfig.Privileged, false);
  });

  it('a Docker socket or another mount is refused', async () => {
    await docker('rm', '-f', srv.container);
    await handMade(srv, { extra: ['-v', '/var/run/docker.sock:/var/run/docker.sock'] });
    const res = await conn.execute({ command: 'true' });
    assert.equal(res.isError, true, resultText(res));
    assert.match(resultText(res), /the Docker socket is mounted/);
  });

  it('seccomp, AppArmor or systempaths unconfined, or the host\'s cgroup namespace, are refused (security review item 12)', async () => {
    for (const [extra, re] of [
      [['--security-opt', 'seccomp=unconfined'], /seccomp unconfined/],
      [['--security-opt', 'apparmor=unconfined'], /apparmor unconfined/],
      [['--security-opt', 'systempaths=unconfined'], /systempaths unconfined/],
      [['--cgroupns', 'host'], /the host's cgroup namespace/],
    ]) {
      await docker('rm', '-f', srv.container);
      await handMade(srv, { extra, start: false });
      const res = await conn.execute({ command: 'echo should-not-run' });
      assert.equal(res.isError, true, resultText(res));
      assert.match(resultText(res), re);
    }
    await docker('rm', '-f', srv.container);
  });

  it('a container of an older version is recreated on the same volume, and the result says so', async () => {
    await docker('rm', '-f', srv.container);
    // Version 1: the label predates the version label.
    const id = await handMade(srv, { version: null });
    await docker('exec', srv.container, 'bash', '-c', 'echo old-files > /sandbox/old.txt; echo pkg > /usr/local/old-package');
    const res = await conn.execute({ command: 'cat /sandbox/old.txt; ls /usr/local/old-package 2>&1 || true' });
    assert.notEqual(res.isError, true, resultText(res));
    assert.match(res.structuredContent.stdout, /^old-files\n.*No such file/s);
    assert.match(res.structuredContent.notice, /recreated for this version/);
    assert.match(resultText(res), /packages and files installed outside \/sandbox are gone/);
    const c = await inspect(srv.container);
    assert.notEqual(c.Id, id, 'a new container');
    assert.equal(c.Config.Labels['code-sandbox.version'], '3');
    const next = await conn.execute({ command: 'true' });
    assert.notEqual(next.isError, true, resultText(next));
    assert.equal(next.structuredContent.notice, undefined, 'only the first result says so');
  });
});
