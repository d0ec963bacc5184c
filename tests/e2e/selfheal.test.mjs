// Self-healing between calls: a killed container is restarted (not
// recreated) with its files and installed state; ten first calls arriving
// together against a missing container make exactly one.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, docker } from './lib/server.mjs';
import { connect, resultText } from './lib/client.mjs';

async function inspect(name) {
  const r = await docker('inspect', name);
  return r.code === 0 ? JSON.parse(r.stdout)[0] : null;
}

describe('self-healing', () => {
  let srv;

  before(async () => {
    srv = await startServer({ name: 'selfheal' });
  });
  after(async () => {
    await srv?.stop();
  });

  it('ten simultaneous first calls against a missing container all succeed, with one container', async () => {
    assert.equal(await inspect(srv.container), null);
    const conns = await Promise.all(Array.from({ length: 10 }, (_, i) => connect(srv, { name: `first-${i}` })));
    try {
      const results = await Promise.all(conns.map((c, i) => c.execute({ command: `echo call-${i}` })));
      results.forEach((res, i) => {
        assert.notEqual(res.isError, true, resultText(res));
        assert.equal(res.structuredContent.stdout, `call-${i}\n`);
      });
    } finally {
      await Promise.all(conns.map((c) => c.close().catch(() => {})));
    }
    const ls = await docker('ps', '-a', '--filter', `name=^${srv.container}$`, '--format', '{{.ID}}');
    assert.equal(ls.stdout.trim().split('\n').length, 1, 'exactly one container');
  });

  it('a killed container is started again, not recreated, with files and installed state intact', async () => {
    const conn = await connect(srv);
    try {
      await conn.execute({ command: 'echo kept > /sandbox/k && mkdir -p /opt/installed && echo tool > /opt/installed/t' });
      const id = (await inspect(srv.container)).Id;
      const k = await docker('kill', srv.container);
      assert.equal(k.code, 0, k.stderr);
      // The restart policy may bring it back by itself; either way the next call works.
      const res = await conn.execute({ command: 'cat /sandbox/k /opt/installed/t' });
      assert.notEqual(res.isError, true, resultText(res));
      assert.equal(res.structuredContent.stdout, 'kept\ntool\n');
      assert.equal((await inspect(srv.container)).Id, id, 'same container');
    } finally {
      await conn.close().catch(() => {});
    }
  });
});
