// The egress policy, seen from inside the sandbox. The test makes its own
// network and rules (containers/netpolicy.sh, scoped to its own bridge), a
// listener on 0.0.0.0 of this machine, link-local addresses on lo, and
// another container; every connection goes to this machine or to the
// containers the test starts (apt-get reaches the package mirror).

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, docker, TEST_IMAGE } from './lib/server.mjs';
import { connect, resultText } from './lib/client.mjs';
import { netpolicy, ctl, testName, status, hostAddress, listener, loAddresses, probeScript, parseProbes } from './lib/hostile.mjs';

// Link-local addresses only this file puts on lo: one allowed, one not.
const LL_ALLOWED = '169.254.77.1';
const LL_BLOCKED = '169.254.77.2';

async function ok(conn, command, opts) {
  const res = await conn.execute({ command, timeout: 300 }, opts);
  assert.notEqual(res.isError, true, resultText(res));
  return res.structuredContent;
}

describe('egress policy internet', () => {
  const net = testName('egress');
  const state = mkdtempSync(join(tmpdir(), 'cs-e2e-np-'));
  const other = `${net}-other`;
  let srv, conn, lis, unLo, gateway, otherIp, peerIp;

  before(async () => {
    const np = await netpolicy(['apply', '--network', net, '--policy', 'internet', '--allow', `${LL_ALLOWED}/32`], state);
    assert.equal(np.code, 0, np.stderr);
    unLo = await loAddresses([LL_ALLOWED, LL_BLOCKED]);
    lis = await listener();
    srv = await startServer({ name: 'egress', settings: { SANDBOX_NETWORK: net } });
    conn = await connect(srv);
    // Another container on Docker's default bridge, and one on the sandbox's network.
    const o = await docker('run', '-d', '--name', other, TEST_IMAGE, 'python3', '-m', 'http.server', '8000');
    assert.equal(o.code, 0, o.stderr);
    const p = await docker('run', '-d', '--name', `${other}-peer`, '--network', net, TEST_IMAGE, 'python3', '-m', 'http.server', '8000');
    assert.equal(p.code, 0, p.stderr);
    otherIp = (await docker('inspect', '-f', '{{.NetworkSettings.IPAddress}}', other)).stdout.trim();
    peerIp = (await docker('inspect', '-f', `{{(index .NetworkSettings.Networks "${net}").IPAddress}}`, `${other}-peer`)).stdout.trim();
    gateway = (await docker('network', 'inspect', '-f', '{{(index .IPAM.Config 0).Gateway}}', net)).stdout.trim();
  });
  after(async () => {
    await conn?.close().catch(() => {});
    await srv?.stop();
    await docker('rm', '-f', other, `${other}-peer`);
    await lis?.close();
    await unLo?.();
    await netpolicy(['remove', '--network', net], state);
    rmSync(state, { recursive: true, force: true });
  });

  it('the container is on its own network with the reduced set-up', async () => {
    await ok(conn, 'true');
    const c = JSON.parse((await docker('inspect', srv.container)).stdout)[0];
    assert.equal(c.HostConfig.NetworkMode, net);
    assert.deepEqual(Object.keys(c.NetworkSettings.Networks), [net]);
    const n = JSON.parse((await docker('network', 'inspect', net)).stdout)[0];
    assert.equal(n.Options['com.docker.network.bridge.enable_icc'], 'false');
    assert.equal(n.EnableIPv6, false);
  });

  it('the host is unreachable at the gateway and at its own address, and refusals are immediate', async () => {
    const host = hostAddress();
    assert.ok(host, 'this machine has an address');
    // The listener answers on this machine (the probe works from the host).
    const r = parseProbes((await ok(conn, probeScript([[gateway, lis.port], [host, lis.port], ['172.17.0.1', lis.port]]))).stdout);
    for (const a of [gateway, host, '172.17.0.1']) {
      assert.equal(r[a].result, 'Connection_refused', `${a}: ${JSON.stringify(r[a])}`);
      assert.ok(r[a].ms < 2000, `${a} refused at once, not dropped (${r[a].ms} ms)`);
    }
  });

  it('a link-local address is refused at once; the allow-list opens exactly what it names', async () => {
    const r = parseProbes((await ok(conn, probeScript([[LL_BLOCKED, lis.port], [LL_ALLOWED, lis.port]]))).stdout);
    assert.equal(r[LL_BLOCKED].result, 'Connection_refused', JSON.stringify(r));
    assert.ok(r[LL_BLOCKED].ms < 2000, `refused at once (${r[LL_BLOCKED].ms} ms)`);
    assert.equal(r[LL_ALLOWED].result, 'ok', JSON.stringify(r));
  });

  it('other containers are unreachable, on the default bridge and on the same network', async () => {
    assert.match(otherIp, /^\d+\.\d+\.\d+\.\d+$/);
    assert.match(peerIp, /^\d+\.\d+\.\d+\.\d+$/);
    // From the host the other container answers: the block is the policy's.
    const r = parseProbes((await ok(conn, probeScript([[otherIp, 8000], [peerIp, 8000]]))).stdout);
    assert.notEqual(r[otherIp].result, 'ok', JSON.stringify(r));
    assert.notEqual(r[peerIp].result, 'ok', JSON.stringify(r));
    assert.notEqual(r[otherIp].result, 'timeout', `rejected, not dropped: ${JSON.stringify(r)}`);
  });

  it('apt-get update && apt-get install -y of a small package works', async () => {
    const sc = await ok(conn, 'apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends hello >/dev/null && hello', { timeout: 290000 });
    assert.equal(sc.exit_code, 0, sc.stderr);
    assert.equal(sc.stdout, 'Hello, world!\n');
  });

  it('sandboxctl status shows the policy, the canary and the rules', async () => {
    const st = await status(srv);
    assert.equal(st.egress.policy, 'internet');
    assert.equal(st.egress.network, net);
    assert.match(st.egress.bridge, /^cs-[0-9a-f]{10}$/);
    assert.equal(st.egress.gateway, gateway);
    assert.equal(st.egress.canary.ok, true, JSON.stringify(st.egress));
    assert.match(st.egress.canary.detail, /No route to host/);
    assert.equal(st.egress.rules.present, true, JSON.stringify(st.egress));
    assert.equal(st.exitCode, 0, st.problems);
  });

  it('without the rules commands are refused and status says so; with them back it works', async () => {
    const rm = await netpolicy(['remove', '--network', net, '--keep-network'], state);
    assert.equal(rm.code, 0, rm.stderr);
    try {
      // The canary runs again whenever the container (re)starts.
      assert.equal((await docker('restart', '-t', '1', srv.container)).code, 0);
      const res = await conn.execute({ command: 'echo should-not-run' });
      assert.equal(res.isError, true, resultText(res));
      assert.match(resultText(res), /egress policy \(internet\) is not in force/);
      assert.match(resultText(res), /netpolicy\.sh apply/);
      assert.doesNotMatch(resultText(res), /should-not-run\n/);
      const st = await status(srv);
      assert.equal(st.egress.rules.present, false, JSON.stringify(st.egress));
      assert.equal(st.egress.canary.ok, false, JSON.stringify(st.egress));
      assert.equal(st.exitCode, 1, 'status fails');
      assert.match(st.problems, /firewall rules missing, egress policy not in force/);
      const text = (await ctl(srv, ['status'])).stdout;
      assert.match(text, /canary +FAILED/);
      assert.match(text, /rules +ERROR: missing/);
    } finally {
      const np = await netpolicy(['apply', '--network', net, '--policy', 'internet', '--allow', `${LL_ALLOWED}/32`], state);
      assert.equal(np.code, 0, np.stderr);
    }
    const sc = await ok(conn, 'echo back');
    assert.equal(sc.stdout, 'back\n');
  });

  it('the egress canary\'s verdict is not the container\'s word: with the host\'s rules missing, a root that prints "blocked" still gets commands refused', async () => {
    // The model replaces bash with one that answers every canary "blocked".
    const liar = [
      '#!/bin/sh',
      'case "$2" in *"/dev/udp/"*) echo "blocked $5 UDP port 9 rejected (No route to host)"; exit 0;; esac',
      'exec /bin/bash.real "$@"',
    ].join('\n');
    await ok(conn, `cp /bin/bash /bin/bash.real && printf '%s\\n' '${liar.replace(/'/g, "'\\''")}' > /bin/bash.liar && chmod 755 /bin/bash.liar && mv -f /bin/bash.liar /bin/bash && echo installed`);
    const rm = await netpolicy(['remove', '--network', net, '--keep-network'], state);
    assert.equal(rm.code, 0, rm.stderr);
    try {
      assert.equal((await docker('restart', '-t', '1', srv.container)).code, 0);
      const res = await conn.execute({ command: 'echo should-not-run' });
      assert.equal(res.isError, true, resultText(res));
      assert.match(resultText(res), /egress policy \(internet\) is not in force/);
      assert.match(resultText(res), /host's firewall has no rules/);
      assert.doesNotMatch(resultText(res), /should-not-run\n/);
    } finally {
      const np = await netpolicy(['apply', '--network', net, '--policy', 'internet', '--allow', `${LL_ALLOWED}/32`], state);
      assert.equal(np.code, 0, np.stderr);
      await docker('exec', srv.container, '/bin/bash.real', '-c', 'mv -f /bin/bash.real /bin/bash');
    }
    const sc = await ok(conn, 'echo back');
    assert.equal(sc.stdout, 'back\n');
  });
});

describe('egress policy none', () => {
  let srv, conn;

  before(async () => {
    srv = await startServer({ name: 'egress-none', settings: { SANDBOX_EGRESS: 'none' } });
    conn = await connect(srv);
  });
  after(async () => {
    await conn?.close().catch(() => {});
    await srv?.stop();
  });

  it('nothing works: no interface but lo, no connection', async () => {
    const res = await conn.execute({ command: 'ls /sys/class/net; timeout 5 bash -c "exec 3<>/dev/tcp/172.17.0.1/9" 2>/dev/null || echo no-connect' });
    assert.notEqual(res.isError, true, resultText(res));
    assert.equal(res.structuredContent.stdout, 'lo\nno-connect\n');
    const c = JSON.parse((await docker('inspect', srv.container)).stdout)[0];
    assert.equal(c.HostConfig.NetworkMode, 'none');
    const st = await status(srv);
    assert.equal(st.egress.policy, 'none');
    assert.equal(st.egress.canary.ok, true, JSON.stringify(st.egress));
  });
});

describe('egress policy internet without its network', () => {
  let srv, conn;

  before(async () => {
    srv = await startServer({ name: 'egress-nonet', settings: { SANDBOX_NETWORK: testName('nonet') } });
    conn = await connect(srv);
  });
  after(async () => {
    await conn?.close().catch(() => {});
    await srv?.stop();
  });

  it('refuses with the set-up step to run, and status fails', async () => {
    const res = await conn.execute({ command: 'echo should-not-run' });
    assert.equal(res.isError, true, resultText(res));
    assert.match(resultText(res), /the sandbox's network cs-e2e-.* is missing: run containers\/netpolicy\.sh apply/);
    const st = await status(srv);
    assert.equal(st.exitCode, 1);
    assert.match(st.problems, /sandbox network missing/);
  });
});
