// This machine's Docker engine as a "remote" one: exposed on a loopback
// port by socat, plain TCP or TLS that demands a client certificate signed
// by a test CA made here with openssl. The programs then reach it with
// DOCKER_HOST=tcp://127.0.0.1:PORT (and DOCKER_TLS_VERIFY=1,
// DOCKER_CERT_PATH), as a host without Docker would: behind Apache they run
// as www-data, which may not use /var/run/docker.sock.

import { spawn, execFileSync } from 'node:child_process';
import { chownSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import net from 'node:net';
import { freePort, waitFor } from './server.mjs';

function openssl(args, cwd) {
  execFileSync('openssl', args, { cwd, stdio: 'ignore' });
}

// A CA, a server certificate for 127.0.0.1 and a client certificate
// (ca.pem, cert.pem, key.pem: what DOCKER_CERT_PATH names).
export function makeCerts(dir) {
  mkdirSync(dir, { recursive: true });
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=cs-e2e-ca',
    '-keyout', 'ca-key.pem', '-out', 'ca.pem'], dir);
  openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1',
    '-keyout', 'server-key.pem', '-out', 'server.csr'], dir);
  // subjectAltName for the server: the client checks the IP address.
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

/**
 * Expose the engine on a free loopback port; with tls, certificates are made
 * in dir (owned by uid/gid when given, so an unprivileged user can read the
 * client's key). Returns { env, port, stop() }: env holds DOCKER_HOST and,
 * with TLS, DOCKER_TLS_VERIFY and DOCKER_CERT_PATH.
 */
export async function exposeEngine({ tls = true, dir, uid, gid } = {}) {
  const port = await freePort();
  let env = { DOCKER_HOST: `tcp://127.0.0.1:${port}` };
  let listen;
  if (tls) {
    if (!dir) throw new Error('exposeEngine: a folder for the certificates is needed with TLS');
    makeCerts(dir);
    if (uid !== undefined) {
      chownSync(dir, uid, gid);
      for (const f of readdirSync(dir)) chownSync(join(dir, f), uid, gid);
    }
    listen = `OPENSSL-LISTEN:${port},bind=127.0.0.1,reuseaddr,fork,` +
      `cert=${dir}/server.pem,cafile=${dir}/ca.pem,verify=1`;
    env = { ...env, DOCKER_TLS_VERIFY: '1', DOCKER_CERT_PATH: dir };
  } else {
    listen = `TCP-LISTEN:${port},bind=127.0.0.1,reuseaddr,fork`;
  }
  const p = spawn('socat', [listen, 'UNIX-CONNECT:/var/run/docker.sock'], { stdio: 'ignore' });
  let exited = false;
  p.on('exit', () => (exited = true));
  try {
    await waitFor(async () => {
      if (exited) throw new Error('socat exited');
      return portOpen(port);
    }, { what: `socat on ${port}` });
  } catch (e) {
    p.kill();
    throw e;
  }
  return {
    env,
    port,
    stop: async () => {
      if (exited) return;
      const gone = new Promise((r) => p.once('exit', r));
      p.kill();
      await gone;
    },
  };
}
