// The egress rules survive a restart of the Docker engine: they live in the
// host's firewall, in chains of their own that Docker does not flush, and
// the network's bridge keeps its name. Kills the machine's dockerd and
// starts it again (containers/ensure-docker.sh), so tests/run.sh runs this
// file alone, after the others (*.serial.test.mjs).

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startServer, docker, waitFor, TOP } from './lib/server.mjs';
import { connect, resultText } from './lib/client.mjs';
import { netpolicy, testName, status, listener, probeScript, parseProbes } from './lib/hostile.mjs';

const execFileP = promisify(execFile);
const remote = (process.env.DOCKER_HOST ?? '').startsWith('tcp://');

function dockerdPid() {
  try {
    const pid = Number(readFileSync('/var/run/docker.pid', 'utf8').trim());
    process.kill(pid, 0);
    return pid;
  } catch {
    return 0;
  }
}

describe('egress rules across a dockerd restart', { skip: remote ? 'remote engine' : false }, () => {
  const net = testName('egress-restart');
  const state = mkdtempSync(join(tmpdir(), 'cs-e2e-np-'));
  let srv, conn, lis, gateway;

  before(async () => {
    const np = await netpolicy(['apply', '--network', net, '--policy', 'internet'], state);
    assert.equal(np.code, 0, np.stderr);
    lis = await listener();
    srv = await startServer({ name: 'egress-restart', settings: { SANDBOX_NETWORK: net } });
    conn = await connect(srv);
    gateway = (await docker('network', 'inspect', '-f', '{{(index .IPAM.Config 0).Gateway}}', net)).stdout.trim();
  });
  after(async () => {
    await execFileP(join(TOP, 'containers/ensure-docker.sh')).catch(() => {});
    await conn?.close().catch(() => {});
    await srv?.stop();
    await lis?.close();
    await netpolicy(['remove', '--network', net], state);
    rmSync(state, { recursive: true, force: true });
  });

  it('after the engine restarts the rules are there and the host stays unreachable', async (t) => {
    let res = await conn.execute({ command: probeScript([[gateway, lis.port]]) });
    assert.notEqual(res.isError, true, resultText(res));
    assert.equal(parseProbes(res.structuredContent.stdout)[gateway].result, 'Connection_refused');
    const pid = dockerdPid();
    if (!pid) {
      t.skip('no local dockerd with /var/run/docker.pid');
      return;
    }
    process.kill(pid, 'SIGKILL');
    await waitFor(() => !dockerdPid() || dockerdPid() !== pid, { timeout: 20000, what: 'dockerd to exit' });
    await execFileP(join(TOP, 'containers/ensure-docker.sh'), { timeout: 120000 });
    const check = await netpolicy(['check', '--network', net], state);
    assert.equal(check.code, 0, check.stdout + check.stderr);
    res = await conn.execute({ command: probeScript([[gateway, lis.port]]) });
    assert.notEqual(res.isError, true, resultText(res));
    const p = parseProbes(res.structuredContent.stdout)[gateway];
    assert.equal(p.result, 'Connection_refused', JSON.stringify(p));
    const st = await status(srv);
    assert.equal(st.egress.rules.present, true, JSON.stringify(st.egress));
    assert.equal(st.egress.canary.ok, true, JSON.stringify(st.egress));
  });
});
