// DOCKER_HOST=tcp://: the same client reaches an engine over TCP, plain and
// with TLS client certificates (DOCKER_TLS_VERIFY, DOCKER_CERT_PATH). The
// "remote" engine is this machine's real one, exposed on a loopback port by
// socat: plain TCP, or TLS that demands a client certificate signed by a
// test CA made here with openssl.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, freePort, waitFor } from './lib/server.mjs';
import { connect, resultText } from './lib/client.mjs';
import net from 'node:net';

function openssl(args, cwd) {
  execFileSync('openssl', args, { cwd, stdio: 'ignore' });
}

// A CA, a server certificate for 127.0.0.1 and a client certificate.
function makeCerts(dir) {
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=cs-e2e-ca',
    '-keyout', 'ca-key.pem', '-out', 'ca.pem'], dir);
  openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1',
    '-keyout', 'server-key.pem', '-out', 'server.csr'], dir);
  // subjectAltName for the server: curl checks the IP address.
  execFileSync('sh', ['-c', 'printf "subjectAltName=IP:127.0.0.1\\n" > san.ext && ' +
    'openssl x509 -req -in server.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial ' +
    '-days 2 -extfile san.ext -out server-cert.pem'], { cwd: dir, stdio: 'ignore' });
  execFileSync('sh', ['-c', 'cat server-cert.pem server-key.pem > server.pem'], { cwd: dir });
  openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=cs-e2e-client',
    '-keyout', 'key.pem', '-out', 'client.csr'], dir);
  execFileSync('sh', ['-c', 'printf "extendedKeyUsage=clientAuth\\n" > client.ext && ' +
    'openssl x509 -req -in client.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial ' +
    '-days 2 -extfile client.ext -out cert.pem'], { cwd: dir, stdio: 'ignore' });
}

function portOpen(port) {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => { s.destroy(); resolve(true); });
    s.on('error', () => resolve(false));
  });
}

async function socat(listen, port) {
  const p = spawn('socat', [listen, 'UNIX-CONNECT:/var/run/docker.sock'], { stdio: 'ignore' });
  await waitFor(() => portOpen(port), { what: `socat on ${port}` });
  return p;
}

for (const tls of [false, true]) {
  describe(`a Docker engine over tcp:// ${tls ? 'with TLS client certificates' : 'without TLS'}`, () => {
    let dir, proxy, srv, conn, env;

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'cs-e2e-tls-'));
      const port = await freePort();
      env = { DOCKER_HOST: `tcp://127.0.0.1:${port}` };
      if (tls) {
        makeCerts(dir);
        proxy = await socat(`OPENSSL-LISTEN:${port},bind=127.0.0.1,reuseaddr,fork,` +
          `cert=${dir}/server.pem,cafile=${dir}/ca.pem,verify=1`, port);
        env = { ...env, DOCKER_TLS_VERIFY: '1', DOCKER_CERT_PATH: dir };
      } else {
        proxy = await socat(`TCP-LISTEN:${port},bind=127.0.0.1,reuseaddr,fork`, port);
      }
      srv = await startServer({ name: tls ? 'tls' : 'tcp', settings: env });
      conn = await connect(srv);
    });
    after(async () => {
      await conn?.close().catch(() => {});
      await srv?.stop();
      proxy?.kill();
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
