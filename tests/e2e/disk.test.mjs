// Disk limits. /sandbox on a fixed-size file system (containers/
// sandbox-disk.sh, a loop device): filling it fails the command with
// ENOSPC and a clear note, and sign-in and links still work. /sandbox on
// the host's disk: the watchdog stops the command past SANDBOX_DISK_LIMIT
// and refuses new ones until files are removed; the container's own layer
// is watched against SANDBOX_LAYER_LIMIT.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, docker } from './lib/server.mjs';
import { connect, resultText } from './lib/client.mjs';
import { register, rawFlow } from './lib/oauth.mjs';
import { sandboxDisk, status, run } from './lib/hostile.mjs';

const loop = (await run('losetup', ['-f'])).code === 0;

describe('/sandbox on a fixed-size file system', { skip: loop ? false : 'no loop devices here (the watchdog test below covers the fallback)' }, () => {
  const diskDir = mkdtempSync(join(tmpdir(), 'cs-e2e-disk-'));
  let srv, conn;

  before(async () => {
    srv = await startServer({ name: 'disk-fs', settings: { SANDBOX_DISK_LIMIT: '32m' } });
    const r = await sandboxDisk(['create', '--volume', srv.volume, '--size', '32m'], diskDir);
    assert.equal(r.code, 0, r.stderr);
    conn = await connect(srv);
  });
  after(async () => {
    await conn?.close().catch(() => {});
    await srv?.stop();
    await sandboxDisk(['remove', '--volume', srv.volume], diskDir);
    rmSync(diskDir, { recursive: true, force: true });
  });

  it('filling it fails the command with ENOSPC and a note saying why', async () => {
    let res = await conn.execute({ command: 'printf "shared before\\n" > /sandbox/small.txt && df -B1 --output=size /sandbox | tail -1' });
    assert.notEqual(res.isError, true, resultText(res));
    assert.ok(Number(res.structuredContent.stdout) <= 32 << 20, res.structuredContent.stdout);
    res = await conn.execute({ command: 'dd if=/dev/zero of=/sandbox/big bs=1M count=64' });
    assert.notEqual(res.structuredContent.exit_code, 0);
    assert.match(res.structuredContent.stderr, /No space left on device/);
    assert.match(res.structuredContent.notice, /\/sandbox is full: its file system holds at most 32\.0 MiB \(SANDBOX_DISK_LIMIT\)/);
    const st = await status(srv);
    assert.equal(st.disk.mode, 'filesystem');
    assert.equal(st.disk.sandbox.measured, 'on the host');
    assert.ok(st.disk.sandbox.used_bytes > 20 << 20, JSON.stringify(st.disk));
  });

  it('with /sandbox full, a new sign-in and a download link still work', async () => {
    const client = (await register(srv, { redirect_uris: ['http://127.0.0.1:9/cb'], token_endpoint_auth_method: 'none', client_name: 'disk full' })).json;
    const flow = await rawFlow(srv, client);
    assert.ok(flow.tokens.access_token, 'signed in');
    const sh = await conn.client.callTool({ name: 'share_file', arguments: { path: '/sandbox/small.txt' } });
    assert.notEqual(sh.isError, true, resultText(sh));
    const dl = await fetch(sh.structuredContent.url);
    assert.equal(dl.status, 200);
    assert.equal(await dl.text(), 'shared before\n');
    const res = await conn.execute({ command: 'rm /sandbox/big && echo room' });
    assert.equal(res.structuredContent.stdout, 'room\n');
  });
});

describe('/sandbox on the host\'s disk: the watchdog', () => {
  let srv, conn;

  before(async () => {
    srv = await startServer({ name: 'disk-watch', settings: { SANDBOX_DISK_LIMIT: '16m', SANDBOX_LAYER_LIMIT: '24m' } });
    conn = await connect(srv);
  });
  after(async () => {
    await conn?.close().catch(() => {});
    await srv?.stop();
  });

  it('stops a command that writes past the limit and refuses new ones until files go', async () => {
    let res = await conn.execute({ command: 'true' });
    assert.notEqual(res.isError, true, resultText(res));
    assert.equal((await status(srv)).disk.mode, 'watchdog');
    // 1 MiB every 0.2 s: past 16 MiB after about 3 s; 400 MiB if never stopped.
    res = await conn.execute({ command: 'for i in $(seq 1 400); do head -c 1M /dev/zero > /sandbox/f$i; sleep 0.2; done; echo finished' }, { timeout: 200000 });
    assert.equal(res.isError, true, resultText(res));
    assert.doesNotMatch(res.structuredContent.stdout, /finished/);
    assert.match(res.structuredContent.notice, /^Stopped: \/sandbox holds .* more than its limit of 16\.0 MiB \(SANDBOX_DISK_LIMIT, watched\)/);
    res = await conn.execute({ command: 'echo should-not-run' });
    assert.equal(res.isError, true);
    assert.match(resultText(res), /Refused: \/sandbox holds/);
    const st = await status(srv);
    assert.equal(st.disk.mode, 'watchdog');
    assert.ok(st.disk.sandbox.used_bytes > 16 << 20, JSON.stringify(st.disk));
    assert.equal(st.disk.sandbox.limit_bytes, 16 << 20);
    await docker('exec', srv.container, 'sh', '-c', 'rm -f /sandbox/f*');
    res = await conn.execute({ command: 'echo free' });
    assert.notEqual(res.isError, true, resultText(res));
    assert.equal(res.structuredContent.stdout, 'free\n');
  });

  it('the container\'s own layer is watched against SANDBOX_LAYER_LIMIT', async () => {
    let res = await conn.execute({ command: 'head -c 30M /dev/zero > /root/big && echo written' });
    assert.equal(res.structuredContent.stdout, 'written\n');
    // Samples are kept per container start: a restart measures afresh.
    assert.equal((await docker('restart', '-t', '1', srv.container)).code, 0);
    res = await conn.execute({ command: 'echo should-not-run' });
    assert.equal(res.isError, true, resultText(res));
    assert.match(resultText(res), /own layer .* more than its limit of 24\.0 MiB \(SANDBOX_LAYER_LIMIT\)/);
    const st = await status(srv);
    assert.ok(st.disk.layer.used_bytes > 24 << 20, JSON.stringify(st.disk));
    await docker('exec', srv.container, 'rm', '-f', '/root/big');
    res = await conn.execute({ command: 'echo ok' });
    assert.notEqual(res.isError, true, resultText(res));
  });

  // The tests run as root on a local engine: the volume is measured on the
  // host, so a container that forges df and du changes nothing.
  it('a container that forges df and du is still measured on the host', async () => {
    let res = await conn.execute({ command: 'printf \'#!/bin/sh\\necho "0\t/sandbox"\\n\' > /usr/bin/du && printf \'#!/bin/sh\\necho "Filesystem 1-blocks Used Available Capacity Mounted on"\\necho "fake 1048576 0 1048576 0%% /sandbox"\\n\' > /usr/bin/df && du -sx -B1 /sandbox && df -P -B1 /sandbox | tail -n 1' });
    assert.equal(res.structuredContent.stdout, '0\t/sandbox\nfake 1048576 0 1048576 0% /sandbox\n', resultText(res));
    res = await conn.execute({ command: 'for i in $(seq 1 400); do head -c 1M /dev/zero > /sandbox/g$i; sleep 0.2; done; echo finished' }, { timeout: 200000 });
    assert.equal(res.isError, true, resultText(res));
    assert.match(res.structuredContent.notice, /^Stopped: \/sandbox holds .* more than its limit of 16\.0 MiB/);
    res = await conn.execute({ command: 'echo should-not-run' });
    assert.equal(res.isError, true, resultText(res));
    assert.match(resultText(res), /Refused: \/sandbox holds .* more than its limit of 16\.0 MiB/);
    const st = await status(srv);
    assert.equal(st.disk.mode, 'watchdog');
    assert.equal(st.disk.sandbox.measured, 'on the host');
    assert.ok(st.disk.sandbox.used_bytes > 16 << 20, JSON.stringify(st.disk));
    await docker('exec', srv.container, 'sh', '-c', 'rm -f /sandbox/g*');
    res = await conn.execute({ command: 'echo free' });
    assert.notEqual(res.isError, true, resultText(res));
  });
});

// Per-person volumes are plain local volumes, and the units run as a user
// that cannot read the engine's folders: behind Apache the programs run as
// www-data and reach the engine over TLS, so nothing is measured on the
// host. The container's root forges df and du; the engine measures.
describe('per-person disk limit holds against the container\'s root: a volume this host cannot read is measured by the engine', () => {
  let srv, conn;

  before(async () => {
    srv = await startServer({ name: 'disk-engine', web: 'apache', settings: { SANDBOX_DISK_LIMIT: '16m' } });
    conn = await connect(srv);
  });
  after(async () => {
    await conn?.close().catch(() => {});
    await srv?.stop();
  });

  it('a container that forges df and du is stopped and refused past the limit', async () => {
    let res = await conn.execute({ command: 'printf \'#!/bin/sh\\necho "0\t/sandbox"\\n\' > /usr/bin/du && printf \'#!/bin/sh\\necho "Filesystem 1-blocks Used Available Capacity Mounted on"\\necho "fake 1048576 0 1048576 0%% /sandbox"\\n\' > /usr/bin/df && du -sx -B1 /sandbox' });
    assert.equal(res.structuredContent.stdout, '0\t/sandbox\n', resultText(res));
    // 1 MiB every 0.2 s: 400 MiB if never stopped.
    res = await conn.execute({ command: 'for i in $(seq 1 400); do head -c 1M /dev/zero > /sandbox/g$i; sleep 0.2; done; echo finished' }, { timeout: 200000 });
    assert.equal(res.isError, true, resultText(res));
    assert.doesNotMatch(res.structuredContent.stdout, /finished/);
    assert.match(res.structuredContent.notice, /^Stopped: \/sandbox holds .* more than its limit of 16\.0 MiB/);
    res = await conn.execute({ command: 'echo should-not-run' });
    assert.equal(res.isError, true, resultText(res));
    assert.match(resultText(res), /Refused: \/sandbox holds .* more than its limit of 16\.0 MiB/);
    const st = await status(srv);
    assert.equal(st.disk.mode, 'watchdog');
    assert.equal(st.disk.sandbox.measured, 'by the engine', JSON.stringify(st.disk));
    assert.ok(st.disk.sandbox.used_bytes > 16 << 20, JSON.stringify(st.disk));
    await docker('exec', srv.container, 'sh', '-c', 'rm -f /sandbox/g*');
    res = await conn.execute({ command: 'echo free' });
    assert.notEqual(res.isError, true, resultText(res));
  });
});
