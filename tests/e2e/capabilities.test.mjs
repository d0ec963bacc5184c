// The sandbox's capabilities, decided from evidence: the container keeps
// CHOWN DAC_OVERRIDE FOWNER FSETID KILL SETGID SETUID (CapEff 0xfb) and
// nothing else. The root workflows a model needs work with that set
// (apt-get install is in egress.test.mjs); each kept capability is needed
// by one of them (shown in throwaway containers without it); the dropped
// ones (raw sockets, device nodes, chroot, ...) are gone.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, docker, TEST_IMAGE } from './lib/server.mjs';
import { connect, resultText } from './lib/client.mjs';
import { testName } from './lib/hostile.mjs';

const KEPT = ['CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'SETGID', 'SETUID'];

async function ok(conn, command) {
  const res = await conn.execute({ command, timeout: 300 });
  assert.notEqual(res.isError, true, resultText(res));
  assert.equal(res.structuredContent.exit_code, 0, resultText(res));
  return res.structuredContent.stdout;
}

// A wheel made by hand (a zip with the module and its metadata), so pip
// installs from a local file without reaching any index.
const WHEEL = `
mkdir -p /sandbox/w && cd /sandbox/w && python3 - <<'PY'
import zipfile, hashlib, base64
files = {
  'csdemo/__init__.py': 'V = "wheel-ok"\\n',
  'csdemo-1.0.dist-info/METADATA': 'Metadata-Version: 2.1\\nName: csdemo\\nVersion: 1.0\\n',
  'csdemo-1.0.dist-info/WHEEL': 'Wheel-Version: 1.0\\nGenerator: hand\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n',
}
rec = ''
for n, t in files.items():
  h = base64.urlsafe_b64encode(hashlib.sha256(t.encode()).digest()).rstrip(b'=').decode()
  rec += f'{n},sha256={h},{len(t.encode())}\\n'
rec += 'csdemo-1.0.dist-info/RECORD,,\\n'
with zipfile.ZipFile('csdemo-1.0-py3-none-any.whl', 'w') as z:
  for n, t in files.items(): z.writestr(n, t)
  z.writestr('csdemo-1.0.dist-info/RECORD', rec)
PY
`;

describe('capabilities of the sandbox', () => {
  let srv, conn;

  before(async () => {
    srv = await startServer({ name: 'caps' });
    conn = await connect(srv);
  });
  after(async () => {
    await conn?.close().catch(() => {});
    await srv?.stop();
  });

  it('CapEff and the bounding set are exactly the kept capabilities', async () => {
    const out = await ok(conn, 'grep -E "^Cap(Eff|Bnd|Prm):" /proc/self/status');
    assert.match(out, /CapEff:\s+00000000000000fb/);
    assert.match(out, /CapBnd:\s+00000000000000fb/);
    const c = JSON.parse((await docker('inspect', srv.container)).stdout)[0];
    assert.deepEqual(c.HostConfig.CapDrop, ['ALL']);
    assert.deepEqual([...c.HostConfig.CapAdd].sort(), KEPT);
  });

  it('root workflows work: chown, su to a user, kill its process, bind a port above 1024', async () => {
    const out = await ok(conn, `
      set -e
      id u1 >/dev/null 2>&1 || useradd -m u1
      touch /sandbox/owned && chown u1:u1 /sandbox/owned && stat -c %U /sandbox/owned
      su u1 -c whoami
      su u1 -c 'exec sleep 300' & sleep 0.5
      p=$(pgrep -u u1 -x sleep); kill "$p"; wait || true
      pgrep -u u1 -x sleep || echo killed
      python3 -c 'import socket; s=socket.socket(); s.bind(("0.0.0.0", 8080)); s.listen(); print("bound 8080")'
      su u1 -c "python3 -c 'import socket; s=socket.socket(); s.bind((\\"0.0.0.0\\", 8081)); print(\\"user bound 8081\\")'"
    `);
    assert.equal(out, 'u1\nu1\nkilled\nbound 8080\nuser bound 8081\n');
  });

  it('pip and npm -g install from local packages (PEP 668 override in place)', async () => {
    const pip = await ok(conn, `${WHEEL}
      pip install --no-index -q /sandbox/w/csdemo-1.0-py3-none-any.whl 2>&1 | grep -v -i warning || true
      cd / && python3 -c 'import csdemo; print(csdemo.V)'`);
    assert.match(pip, /wheel-ok\n$/);
    const npm = await ok(conn, `
      mkdir -p /sandbox/n/cs-demo && cd /sandbox/n/cs-demo
      printf '{"name":"cs-demo","version":"1.0.0","bin":{"cs-demo":"cli.js"}}' > package.json
      printf '#!/usr/bin/env node\\nconsole.log("npm-ok")\\n' > cli.js
      npm pack --silent >/dev/null && npm install -g --offline --no-audit --no-fund ./cs-demo-1.0.0.tgz >/dev/null 2>&1
      cd / && cs-demo`);
    assert.equal(npm, 'npm-ok\n');
  });

  it('dropped: raw sockets, device nodes, chroot (which work in the same image with their capabilities)', async () => {
    const probes = `
      python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)' 2>/dev/null && echo raw || echo no-raw
      mknod /tmp/null2 c 1 3 2>/dev/null && echo mknod || echo no-mknod
      chroot / true 2>/dev/null && echo chroot || echo no-chroot`;
    const out = await ok(conn, probes);
    assert.equal(out, 'no-raw\nno-mknod\nno-chroot\n');
    // The positive control: the same probes, in a throwaway container of
    // the same image given NET_RAW, MKNOD and SYS_CHROOT, all succeed (so
    // "no-..." above is the missing capability, not a broken probe).
    const all = [...KEPT, 'NET_RAW', 'MKNOD', 'SYS_CHROOT'].flatMap((c) => ['--cap-add', c]);
    const yes = await docker('run', '--rm', '--name', testName('caps-control'), '--network', 'none', '--cap-drop', 'ALL', ...all,
      '--security-opt', 'no-new-privileges', TEST_IMAGE, 'bash', '-c', probes);
    assert.equal(yes.code, 0, yes.stderr);
    assert.equal(yes.stdout, 'raw\nmknod\nchroot\n');
  });

  it('each kept capability is needed: without it, its workflow fails', async () => {
    // What fails without each one (apt-get update fails without
    // DAC_OVERRIDE, its chmods without FOWNER: the same operations).
    const needs = {
      CHOWN: 'touch /tmp/f && chown nobody /tmp/f',
      DAC_OVERRIDE: 'mkdir /tmp/d && chown nobody /tmp/d && chmod 700 /tmp/d && touch /tmp/d/x',
      FOWNER: 'touch /tmp/f && chown nobody /tmp/f && chmod 600 /tmp/f',
      FSETID: 'touch /tmp/f && chgrp nogroup /tmp/f && chmod g+s /tmp/f && stat -c %A /tmp/f | grep -qi s',
      KILL: "su nobody -s /bin/sh -c 'exec sleep 30' & sleep 0.5; kill $(pgrep -u nobody -x sleep)",
      SETGID: 'su nobody -s /bin/sh -c true',
      SETUID: 'su nobody -s /bin/sh -c true',
    };
    const name = testName('caps');
    for (const [cap, cmd] of Object.entries(needs)) {
      const base = ['run', '--rm', '--name', `${name}-${cap.toLowerCase()}`, '--network', 'none', '--cap-drop', 'ALL', '--security-opt', 'no-new-privileges', TEST_IMAGE, 'bash', '-c'];
      const all = KEPT.flatMap((c) => ['--cap-add', c]);
      const without = KEPT.filter((c) => c !== cap).flatMap((c) => ['--cap-add', c]);
      const yes = await docker(...base.slice(0, 8), ...all, ...base.slice(8), cmd);
      assert.equal(yes.code, 0, `${cap} kept: ${cmd}: ${yes.stderr}`);
      const no = await docker(...base.slice(0, 8), ...without, ...base.slice(8), cmd);
      assert.notEqual(no.code, 0, `without ${cap} "${cmd}" should fail`);
    }
  });
});
