// DOCKER_HOST=tcp://: the same client reaches an engine over TCP, plain and
// with TLS client certificates (DOCKER_TLS_VERIFY, DOCKER_CERT_PATH). The
// "remote" engine is this machine's real one, exposed on a loopback port by
// socat: plain TCP, or TLS that demands a client certificate signed by a
// test CA made here with openssl.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from './lib/server.mjs';
import { exposeEngine } from './lib/engine.mjs';
import { connect, resultText } from './lib/client.mjs';

for (const tls of [false, true]) {
  describe(`a Docker engine over tcp:// ${tls ? 'with TLS client certificates' : 'without TLS'}`, () => {
    let dir, proxy, srv, conn, env;

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'cs-e2e-tls-'));
      proxy = await exposeEngine({ tls, dir });
      env = proxy.env;
      srv = await startServer({ name: tls ? 'tls' : 'tcp', settings: env });
      conn = await connect(srv);
    });
    after(async () => {
      await conn?.close().catch(() => {});
      await srv?.stop();
      await proxy?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    it('execute runs a command through it', async () => {
      const res = await conn.execute({ command: 'echo remote-ok; echo e >&2; exit 4' }, { timeout: 120000 });
      assert.equal(res.isError, false, resultText(res));
      assert.equal(res.structuredContent.stdout, 'remote-ok\n');
      assert.equal(res.structuredContent.stderr, 'e\n');
      assert.equal(res.structuredContent.exit_code, 4);
    });

    if (tls) {
      it('without the client certificate the engine is refused with a clear error', async () => {
        const other = await startServer({ name: 'tls-nocert',
          settings: { ...env, DOCKER_CERT_PATH: join(dir, 'missing') } });
        const c2 = await connect(other);
        try {
          const t0 = Date.now();
          const res = await c2.execute({ command: 'echo hi' }, { timeout: 60000 });
          assert.equal(res.isError, true, resultText(res));
          assert.match(resultText(res), /DOCKER_HOST|engine/i);
          assert.ok(Date.now() - t0 < 20000, 'answered quickly');
        } finally {
          await c2.close().catch(() => {});
          await other.stop();
        }
      });
    }

    it('the programs exit cleanly on SIGTERM with no sanitizer reports', async () => {
      await conn.close();
      conn = null;
      await srv.shutdown();
    });
  });
}
