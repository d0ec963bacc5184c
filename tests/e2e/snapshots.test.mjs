// Snapshots: snapshot, snapshots, restore and snapshot_delete (and
// sandboxctl snapshots), against the real engine: /sandbox's files, owners,
// modes, times and links, and a package installed in the container, brought
// back exactly; restore refused while a command runs, then forced; one
// restore at a time and no snapshot during one (a lease that lapses when
// its process is killed); on 2026-07-28 a long restore answers with a task
// or a run_id, and tasks/cancel stops it before its switch; limits;
// another owner's snapshot; a restore that fails midway; a restart.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { startServer, docker, sleep } from './lib/server.mjs';
import { connect, resultText, http } from './lib/client.mjs';
import { ctl, run } from './lib/hostile.mjs';
import { TestProvider, connectOAuth } from './lib/oauth.mjs';

const tool = (conn, name, args = {}) =>
  conn.client.callTool({ name, arguments: args }, undefined, { timeout: 300000 });

async function sh(conn, command) {
  const r = await conn.execute({ command, timeout: 120 });
  assert.notEqual(r.isError, true, `${command}: ${resultText(r)}`);
  assert.equal(r.structuredContent.exit_code, 0, `${command}: ${resultText(r)}`);
  return r.structuredContent.stdout;
}

async function inspect(name) {
  const r = await docker('inspect', name);
  return r.code === 0 ? JSON.parse(r.stdout)[0] : null;
}

/* Every path of /sandbox with owner, mode, type, size, mtime, link target, content hash. */
const MANIFEST = `cd /sandbox && find . -path ./lost+found -prune -o -print0 | sort -z | ` +
  `while IFS= read -r -d '' p; do ` +
  `s=$(stat -c '%u:%g %a %F %s %Y' "$p"); ` +
  `if [ -L "$p" ]; then t="-> $(readlink "$p")"; elif [ -f "$p" ]; then t=$(md5sum < "$p" | cut -c1-32); else t=; fi; ` +
  `printf '%s %s %s\\n' "$p" "$s" "$t"; done`;

/* A .deb made in the container: cs-snap-hello prints a line. */
const MAKE_DEB = `set -e; rm -rf /tmp/pkg; mkdir -p /tmp/pkg/DEBIAN /tmp/pkg/usr/local/bin
printf 'Package: cs-snap-test\\nVersion: 1.0\\nArchitecture: all\\nMaintainer: test <t@localhost>\\nDescription: snapshot test\\n' > /tmp/pkg/DEBIAN/control
printf '#!/bin/sh\\necho hello from the package\\n' > /tmp/pkg/usr/local/bin/cs-snap-hello
chmod 755 /tmp/pkg/usr/local/bin/cs-snap-hello
dpkg-deb --build /tmp/pkg /tmp/cs-snap-test.deb >/dev/null
dpkg -i /tmp/cs-snap-test.deb >/dev/null
rm -rf /tmp/pkg /tmp/cs-snap-test.deb
cs-snap-hello`;

/* The snapshot images of a server's sandbox, by the ids its tools returned. */
async function removeImages(ids) {
  for (const id of ids) await docker('rmi', '-f', `code-sandbox-snap:${id}`).catch(() => {});
}

async function removeGenerations(srv, base = srv.volume) {
  const r = await docker('volume', 'ls', '-q', '--filter', `name=${base}-s`);
  for (const v of r.stdout.split('\n').filter(Boolean)) await docker('volume', 'rm', '-f', v);
  const c = await docker('ps', '-aq', '--filter', `name=${srv.container}-`);
  for (const id of c.stdout.split('\n').filter(Boolean)) await docker('rm', '-f', id);
}

describe('snapshots (shared scope)', () => {
  let srv;
  let conn;
  const ids = [];
  let first;
  let manifest;

  before(async () => {
    srv = await startServer({ name: 'snapshots', settings: { SANDBOX_SNAPSHOTS: 3 } });
    conn = await connect(srv);
  });
  after(async () => {
    await conn?.close().catch(() => {});
    try {
      await srv?.stop();
    } finally {
      if (srv) {
        await removeGenerations(srv);
        await removeImages(ids);
      }
    }
  });

  it('lists the four tools, the snapshot tool telling the model to take one before a risky step', async () => {
    const { tools } = await conn.client.listTools();
    const names = tools.map((t) => t.name);
    for (const n of ['snapshot', 'snapshots', 'restore', 'snapshot_delete']) assert.ok(names.includes(n), n);
    assert.match(tools.find((t) => t.name === 'snapshot').description, /before a risky step/);
  });

  it('takes a snapshot of files, owners, modes, times, links and a package', async () => {
    await sh(conn, `set -e; cd /sandbox; mkdir -p d/e; echo one > d/changed.txt; echo keep > removed.txt
      echo deep > d/e/deep.txt; ln -s d/changed.txt link; ln -s /etc/hostname abs-link; ln -s missing dangling
      echo theirs > owned.txt; chown 1234:5678 owned.txt; chmod 0640 owned.txt; chmod 0751 d
      echo old > old.txt; touch -d '2001-02-03 04:05:06' old.txt; mkfifo fifo
      head -c 300000 /dev/urandom > big.bin; mkdir -p "with space/ünï"; echo x > "with space/ünï/f"`);
    assert.equal((await sh(conn, MAKE_DEB)).trim(), 'hello from the package');
    manifest = await sh(conn, MANIFEST);
    assert.match(manifest, /\.\/owned\.txt 1234:5678 640 regular file/);
    assert.match(manifest, /\.\/link \S+ 777 symbolic link \d+ \d+ -> d\/changed\.txt/);
    const r = await tool(conn, 'snapshot', { note: 'before the risky step' });
    assert.notEqual(r.isError, true, resultText(r));
    first = r.structuredContent.snapshot_id;
    ids.push(first);
    assert.match(first, /^snap-[0-9a-f]{16}$/);
    assert.ok(r.structuredContent.sandbox_bytes > 300000, JSON.stringify(r.structuredContent));
    assert.ok(r.structuredContent.layer_bytes > 0, JSON.stringify(r.structuredContent));
    // On the host, outside the container, readable by the server alone.
    const file = join(dirname(srv.envFile), 'snapshots', `${first}.tar`);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(statSync(dirname(file)).mode & 0o777, 0o700);
  });

  it('snapshots() lists it with its note and size', async () => {
    const r = await tool(conn, 'snapshots');
    assert.notEqual(r.isError, true, resultText(r));
    const list = r.structuredContent.snapshots;
    assert.equal(list.length, 1);
    assert.equal(list[0].snapshot_id, first);
    assert.equal(list[0].note, 'before the risky step');
    assert.match(resultText(r), /before the risky step/);
  });

  it('restore brings back every file, owner, mode, time and link, and the package', async () => {
    const before = await inspect(srv.container);
    await sh(conn, `set -e; cd /sandbox; echo two > d/changed.txt; rm removed.txt; rm link; ln -s old.txt link
      chown 0:0 owned.txt; chmod 0600 owned.txt; touch old.txt; rm -rf d/e; echo new > added.txt; mkdir added-dir
      rm dangling; dpkg -r cs-snap-test >/dev/null; ! command -v cs-snap-hello`);
    assert.notEqual(await sh(conn, MANIFEST), manifest);
    const r = await tool(conn, 'restore', { snapshot_id: first });
    assert.notEqual(r.isError, true, resultText(r));
    assert.equal(r.structuredContent.restored, true);
    assert.equal(await sh(conn, MANIFEST), manifest);
    assert.equal((await sh(conn, 'cs-snap-hello')).trim(), 'hello from the package');
    assert.match(await sh(conn, 'dpkg -s cs-snap-test'), /Status: install ok installed/);
    assert.equal((await sh(conn, 'ls /sandbox/added.txt /sandbox/added-dir 2>&1 || true')).includes('No such file'), true);

    // Made again with today's settings: limits, capabilities, network, labels.
    const after = await inspect(srv.container);
    assert.notEqual(after.Id, before.Id);
    assert.equal(after.Config.Image, `code-sandbox-snap:${first}`);
    for (const k of ['Memory', 'MemorySwap', 'NanoCpus', 'PidsLimit', 'CapDrop', 'CapAdd', 'NetworkMode',
      'Privileged', 'SecurityOpt', 'ShmSize', 'Init', 'CgroupnsMode', 'RestartPolicy']) {
      assert.deepEqual(after.HostConfig[k], before.HostConfig[k], k);
    }
    assert.deepEqual(after.Config.Labels, before.Config.Labels);
    const vols = after.Mounts.filter((m) => m.Type === 'volume');
    assert.equal(vols.length, 1);
    assert.equal(vols[0].Destination, '/sandbox');
    assert.ok(vols[0].Name.startsWith(`${srv.volume}-s`), vols[0].Name);
    assert.deepEqual(after.Mounts.filter((m) => m.Type !== 'volume').map((m) => [m.Destination, m.RW]),
      [['/run/code-sandbox-previews', false]]);
    // The old volume is gone; the supervisor was uploaded afresh.
    assert.notEqual((await docker('volume', 'inspect', srv.volume)).code, 0, 'the old volume is removed');
    const st = JSON.parse((await ctl(srv, ['--json', 'status'])).stdout);
    assert.equal(st.spec?.verdict, 'as configured', JSON.stringify(st.spec));
    assert.equal(st.healthy, true, st.problems);
  });

  it('restore while a command runs is refused, then forced: the command is stopped and says why', async () => {
    const running = conn.execute({ command: 'echo started; sleep 60; echo never', timeout: 120 });
    await sleep(1500);
    const refused = await tool(conn, 'restore', { snapshot_id: first });
    assert.equal(refused.isError, true);
    assert.match(resultText(refused), /Commands still run in this sandbox \(run_id [^)]+\): restore refused/);
    assert.match(resultText(refused), /force: true/);
    const forced = await tool(conn, 'restore', { snapshot_id: first, force: true });
    assert.notEqual(forced.isError, true, resultText(forced));
    const res = await running;
    const text = resultText(res);
    assert.match(text, /restored to snapshot snap-[0-9a-f]{16} \(restore with force\)/);
    assert.doesNotMatch(text, /never/);
    assert.equal(await sh(conn, MANIFEST), manifest);
  });

  it('each restore is logged with who asked, and one runs at a time', async () => {
    const db = join(dirname(srv.envFile), 'state.db');
    const rows = (await run('sqlite3', [db, "select asked_by, client, state from snapshot_restore order by id"])).stdout.trim().split('\n');
    assert.deepEqual(rows.slice(0, 3).map((l) => l.replace(/\|[^|]+\|/, '|client|')), ['operator|client|done', 'operator|client|failed', 'operator|client|done'], rows.join('\n'));
    const both = await Promise.all([tool(conn, 'restore', { snapshot_id: first }), tool(conn, 'restore', { snapshot_id: first })]);
    const texts = both.map(resultText);
    assert.equal(both.filter((r) => r.isError !== true).length >= 1, true, texts.join(' / '));
    for (const r of both) if (r.isError) assert.match(resultText(r), /Another restore of this sandbox is under way/);
    assert.equal(await sh(conn, MANIFEST), manifest);
  });

  it('while a restore holds the sandbox, a snapshot, another restore and deleting its snapshot are refused; a killed restore\'s hold lapses', async () => {
    const db = join(dirname(srv.envFile), 'state.db');
    const sql = (q) => run('sqlite3', ['-cmd', '.timeout 5000', db, q]);
    // A real restore and a snapshot asked while it runs.
    const restoring = tool(conn, 'restore', { snapshot_id: first });
    await sleep(300);
    const snap = await tool(conn, 'snapshot', { note: 'during a restore' });
    assert.notEqual((await restoring).isError, true);
    if (snap.isError) assert.match(resultText(snap), new RegExp(`A restore of this sandbox \\(to snapshot ${first}\\) is under way: take the snapshot when it is done`));
    else await tool(conn, 'snapshot_delete', { snapshot_id: snap.structuredContent.snapshot_id });
    // The row of a restore under way, as its process writes it.
    const now = Math.floor(Date.now() / 1000);
    await sql(`insert into snapshot_restore (snapshot_id, container, client, started, state, deadline) values ('${first}', '${srv.container}', 'test', ${now}, 'running', ${now + 120})`);
    let r = await tool(conn, 'snapshot', { note: 'refused' });
    assert.equal(r.isError, true);
    assert.match(resultText(r), new RegExp(`A restore of this sandbox \\(to snapshot ${first}\\) is under way`));
    r = await tool(conn, 'restore', { snapshot_id: first });
    assert.equal(r.isError, true);
    assert.match(resultText(r), /Another restore of this sandbox is under way: try again when it is done/);
    r = await tool(conn, 'snapshot_delete', { snapshot_id: first });
    assert.equal(r.isError, true);
    assert.match(resultText(r), new RegExp(`Snapshot ${first} is being restored now: delete it when the restore is done`));
    const c = await ctl(srv, ['snapshots', 'create']);
    assert.notEqual(c.code, 0);
    assert.match(c.stdout + c.stderr, /is under way/);
    // Its process killed: nothing moves the deadline on, and the hold lapses.
    await sql(`update snapshot_restore set deadline = ${now - 1} where client = 'test'`);
    r = await tool(conn, 'restore', { snapshot_id: first });
    assert.notEqual(r.isError, true, resultText(r));
    const row = (await sql("select state, message from snapshot_restore where client = 'test'")).stdout.trim();
    assert.match(row, /^failed\|the restoring process stopped before the end \(its lease lapsed\)$/);
    assert.equal(await sh(conn, MANIFEST), manifest);
  });

  it('limits: past SANDBOX_SNAPSHOTS a clear error naming the limit and how to delete', async () => {
    for (let i = 0; i < 2; i++) {
      const r = await tool(conn, 'snapshot', { note: `n${i}` });
      assert.notEqual(r.isError, true, resultText(r));
      ids.push(r.structuredContent.snapshot_id);
    }
    const r = await tool(conn, 'snapshot', { note: 'one too many' });
    assert.equal(r.isError, true);
    assert.match(resultText(r), /limit of 3 snapshots per sandbox \(SANDBOX_SNAPSHOTS\)/);
    assert.match(resultText(r), /snapshot_delete/);
  });

  it('another id, a bad id and arguments get clear errors', async () => {
    let r = await tool(conn, 'restore', { snapshot_id: 'snap-0123456789abcdef' });
    assert.equal(r.isError, true);
    assert.match(resultText(r), /No snapshot snap-0123456789abcdef of this sandbox/);
    r = await tool(conn, 'restore', { snapshot_id: '../../etc/passwd' });
    assert.equal(r.isError, true);
    assert.match(resultText(r), /No snapshot/);
    r = await tool(conn, 'snapshot_delete', { snapshot_id: 'snap-0123456789abcdef' });
    assert.equal(r.isError, true);
    r = await tool(conn, 'snapshot', { note: 7 });
    assert.equal(r.isError, true);
    assert.match(resultText(r), /note must be a string/);
  });

  it('a restore that fails midway (a bad entry in the archive) leaves the sandbox as it was', async () => {
    const id = ids[ids.length - 1];
    const file = join(dirname(srv.envFile), 'snapshots', `${id}.tar`);
    const data = readFileSync(file);
    // Break the checksum of the last entry's header, keeping the size: the
    // check fails when the restore has already sent most of the archive.
    let last = -1;
    for (let off = 0; off + 512 <= data.length; off += 512) {
      const magic = data.subarray(off + 257, off + 262).toString('latin1');
      if (magic === 'ustar') last = off;
    }
    assert.ok(last > 0);
    const broken = Buffer.from(data);
    broken[last + 150] ^= 0x01;
    writeFileSync(file, broken);
    await sh(conn, 'echo after > /sandbox/after.txt');
    const beforeId = (await inspect(srv.container)).Id;
    const r = await tool(conn, 'restore', { snapshot_id: id });
    assert.equal(r.isError, true);
    assert.match(resultText(r), /snapshot archive: bad header checksum/);
    assert.equal((await inspect(srv.container)).Id, beforeId, 'the same container');
    assert.equal((await sh(conn, 'cat /sandbox/after.txt')).trim(), 'after');
    assert.equal((await sh(conn, 'cs-snap-hello')).trim(), 'hello from the package');
    writeFileSync(file, data);
    // Only the restore's helper container and volume would be left: none.
    const vols = (await docker('volume', 'ls', '-q', '--filter', `name=${srv.volume}-s`)).stdout.split('\n').filter(Boolean);
    assert.equal(vols.length, 1, vols.join(' '));
  });

  it('sandboxctl snapshots list, status, delete', async () => {
    let r = await ctl(srv, ['snapshots', 'list']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^3 snapshots/);
    assert.match(r.stdout, new RegExp(first));
    r = await ctl(srv, ['status']);
    assert.match(r.stdout, /snapshots 1 sandbox with snapshots/);
    assert.match(r.stdout, /3 snapshots/);
    r = await ctl(srv, ['snapshots', 'delete', ids[1]]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal((await docker('image', 'inspect', `code-sandbox-snap:${ids[1]}`)).code === 0, false);
    r = await ctl(srv, ['snapshots', 'list', 'alice']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /SANDBOX_SCOPE is shared/);
  });

  it('FILE_TTL clean-up never touches a snapshot', async () => {
    const kept = () => readdirSync(join(dirname(srv.envFile), 'snapshots')).filter((f) => /\.(tar|snar)$/.test(f)).sort();
    const before = kept();
    const r = await ctl(srv, ['cleanup']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(kept(), before);
    for (const s of (await tool(conn, 'snapshots')).structuredContent.snapshots)
      assert.ok(before.includes(`${s.snapshot_id}.tar`), `${s.snapshot_id}: ${before.join(' ')}`);
  });

  it('a snapshot survives a restart of the programs, and sandboxctl restores it', async () => {
    await srv.restart();
    await conn.close().catch(() => {});
    conn = await connect(srv);
    const r = await tool(conn, 'snapshots');
    assert.equal(r.structuredContent.snapshots.length, 2);
    await sh(conn, 'rm -rf /sandbox/d; dpkg -r cs-snap-test >/dev/null');
    const c = await ctl(srv, ['snapshots', 'restore', first]);
    assert.equal(c.code, 0, c.stderr);
    assert.match(c.stdout, /restored to snapshot/);
    assert.equal(await sh(conn, MANIFEST), manifest);
    assert.equal((await sh(conn, 'cs-snap-hello')).trim(), 'hello from the package');
  });

  it('deleting the snapshot the sandbox runs from keeps its image: recreate still has the packages', async () => {
    const r = await tool(conn, 'snapshot_delete', { snapshot_id: first });
    assert.notEqual(r.isError, true, resultText(r));
    assert.equal((await docker('image', 'inspect', `code-sandbox-snap:${first}`)).code, 0);
    const c = await ctl(srv, ['recreate']);
    assert.equal(c.code, 0, c.stderr);
    assert.equal((await sh(conn, 'cs-snap-hello')).trim(), 'hello from the package');
    assert.equal((await tool(conn, 'snapshots')).structuredContent.snapshots.length, 1);
  });
});

const hash12 = (owner) => createHash('sha256').update(owner).digest('hex').slice(0, 12);

describe('snapshots kept as differences', () => {
  let srv;
  let conn;
  const ids = [];
  const snapDir = () => join(dirname(srv.envFile), 'snapshots');
  const onHost = () => readdirSync(snapDir()).filter((f) => /\.(tar|snar)$/.test(f)).sort();
  const take = async (note) => {
    const r = await tool(conn, 'snapshot', { note });
    assert.notEqual(r.isError, true, resultText(r));
    ids.push(r.structuredContent.snapshot_id);
    return r.structuredContent;
  };
  const restore = async (id) => {
    const r = await tool(conn, 'restore', { snapshot_id: id });
    assert.notEqual(r.isError, true, resultText(r));
  };

  before(async () => {
    srv = await startServer({ name: 'snapshots-diff' });
    conn = await connect(srv);
  });
  after(async () => {
    await conn?.close().catch(() => {});
    try {
      await srv?.stop();
    } finally {
      if (srv) {
        await removeGenerations(srv);
        await removeImages(ids);
      }
    }
  });

  it('a second snapshot after a one-file change keeps only the difference; each restores exactly, removals too', async () => {
    await sh(conn, `set -e; mkdir -p /sandbox/inc/old /sandbox/inc/sub; cd /sandbox/inc
      for i in $(seq 1 100); do head -c 100000 /dev/urandom > f$i; done
      echo keep > gone.txt; echo in-old > old/x; echo one > sub/small.txt; chown 1234:5678 sub/small.txt`);
    const s1 = await take('before the change');
    const m1 = await sh(conn, MANIFEST);
    assert.ok(s1.sandbox_bytes > 10000000, JSON.stringify(s1));
    await sh(conn, 'set -e; cd /sandbox/inc; sleep 1; echo two >> sub/small.txt; rm gone.txt; rm -r old');
    const s2 = await take('one file changed, two removed');
    const m2 = await sh(conn, MANIFEST);
    assert.equal(s2.kept_as, 'diff', JSON.stringify(s2));
    assert.ok(s2.sandbox_bytes < 0.1 * s1.sandbox_bytes, `second ${s2.sandbox_bytes} bytes, first ${s1.sandbox_bytes}`);
    const tar = (id) => statSync(join(snapDir(), `${id}.tar`)).size;
    assert.ok(tar(s2.snapshot_id) < 0.1 * tar(s1.snapshot_id), 'the files on the host');
    // Afterwards: more changes, all undone by a restore of the first.
    await sh(conn, 'set -e; cd /sandbox/inc; echo late > after.txt; echo changed > f7; mkdir newdir; echo n > newdir/n');
    await restore(s1.snapshot_id);
    assert.equal(await sh(conn, MANIFEST), m1);
    // The first one deleted: the second still restores, from the first's
    // archive kept aside, its removals too (gone.txt and old/ are back now).
    let r = await tool(conn, 'snapshot_delete', { snapshot_id: s1.snapshot_id });
    assert.notEqual(r.isError, true, resultText(r));
    const listed = (await tool(conn, 'snapshots')).structuredContent.snapshots.map((x) => x.snapshot_id);
    assert.deepEqual(listed.filter((x) => x === s1.snapshot_id || x === s2.snapshot_id), [s2.snapshot_id]);
    assert.ok(onHost().includes(`${s1.snapshot_id}.tar`), 'the base is kept while the second builds on it');
    r = await tool(conn, 'restore', { snapshot_id: s1.snapshot_id });
    assert.equal(r.isError, true);
    assert.match(resultText(r), /No snapshot/);
    await restore(s2.snapshot_id);
    assert.equal(await sh(conn, MANIFEST), m2);
    // The last to build on it gone, the base goes too.
    r = await tool(conn, 'snapshot_delete', { snapshot_id: s2.snapshot_id });
    assert.notEqual(r.isError, true, resultText(r));
    assert.deepEqual(onHost().filter((f) => f.startsWith(s1.snapshot_id) || f.startsWith(s2.snapshot_id)), []);
  });

  it('after a restore the next snapshot is a full one (a new volume), and a hostile difference is refused on restore', async () => {
    const s3 = await take('after restores');
    assert.equal(s3.kept_as, 'full', JSON.stringify(s3));
    await sh(conn, 'echo more > /sandbox/inc/more.txt');
    const s4 = await take('a difference');
    assert.equal(s4.kept_as, 'diff', JSON.stringify(s4));
    // A name outside /sandbox slipped into the difference on the host.
    const path = join(snapDir(), `${s4.snapshot_id}.tar`);
    const buf = readFileSync(path);
    const at = buf.indexOf('sandbox/inc/more.txt');
    assert.ok(at >= 0);
    buf.write('../../etc/more.txt\0', at, 'latin1');
    // The header's checksum made right again, so only the name is wrong.
    const h = Math.floor(at / 512) * 512;
    buf.fill(' ', h + 148, h + 156);
    let sum = 0;
    for (let i = h; i < h + 512; i++) sum += buf[i];
    buf.write(`${sum.toString(8).padStart(6, '0')}\0 `, h + 148, 'latin1');
    writeFileSync(path, buf);
    const before = await sh(conn, MANIFEST);
    const r = await tool(conn, 'restore', { snapshot_id: s4.snapshot_id });
    assert.equal(r.isError, true);
    assert.match(resultText(r), /outside the archive's folder/);
    assert.equal(await sh(conn, MANIFEST), before);
  });
});

describe('snapshots (person scope)', () => {
  let srv;
  const people = {};
  const ids = [];

  async function person(name) {
    const r = await ctl(srv, ['--json', 'keys', 'add', name]);
    assert.equal(r.code, 0, r.stderr);
    const { key } = JSON.parse(r.stdout);
    const sdk = await connectOAuth(srv, new TestProvider(srv, { key, clientName: 'snap client' }), { name: `e2e-${name}` });
    return sdk;
  }

  before(async () => {
    srv = await startServer({ name: 'snap-person', settings: { SANDBOX_SCOPE: 'person', SANDBOX_ALLOW_KEY_BEARER: 0 } });
    for (const n of ['alice', 'bob']) people[n] = await person(n);
  });
  after(async () => {
    for (const p of Object.values(people)) await p.client.close().catch(() => {});
    try {
      await srv?.stop();
    } finally {
      if (srv) {
        for (const n of ['alice', 'bob']) {
          await docker('rm', '-f', `${srv.container}-${hash12(n)}`).catch(() => {});
          await docker('volume', 'rm', '-f', `${srv.volume}-${hash12(n)}`).catch(() => {});
          await removeGenerations(srv, `${srv.volume}-${hash12(n)}`);
        }
        await removeImages(ids);
      }
    }
  });

  it("another owner's snapshot is not found; removing a sandbox removes its snapshots and says so", async () => {
    const a = people.alice;
    let r = await a.client.callTool({ name: 'execute', arguments: { command: 'echo alice > /sandbox/a.txt' } });
    assert.notEqual(r.isError, true, resultText(r));
    r = await tool(a, 'snapshot', { note: 'alice' });
    assert.notEqual(r.isError, true, resultText(r));
    const id = r.structuredContent.snapshot_id;
    ids.push(id);
    for (const [name, args] of [['restore', { snapshot_id: id }], ['snapshot_delete', { snapshot_id: id }]]) {
      r = await tool(people.bob, name, args);
      assert.equal(r.isError, true);
      assert.match(resultText(r), /No snapshot snap-[0-9a-f]{16} of this sandbox/);
    }
    r = await tool(people.bob, 'snapshots');
    assert.equal(r.structuredContent.snapshots.length, 0);
    r = await ctl(srv, ['snapshots', 'list', 'alice']);
    assert.match(r.stdout, new RegExp(id));
    r = await ctl(srv, ['snapshots', 'list']);
    assert.equal(r.code, 2);
    // Alice restores her own, after a change.
    await a.client.callTool({ name: 'execute', arguments: { command: 'echo changed > /sandbox/a.txt' } });
    r = await tool(a, 'restore', { snapshot_id: id });
    assert.notEqual(r.isError, true, resultText(r));
    r = await a.client.callTool({ name: 'execute', arguments: { command: 'cat /sandbox/a.txt' } });
    assert.equal(r.structuredContent.stdout, 'alice\n');
    // The operator removes her sandbox: the snapshots go with it.
    r = await ctl(srv, ['sandboxes', 'remove', 'alice']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /removed with its volume and 1 snapshot/);
    assert.notEqual((await docker('image', 'inspect', `code-sandbox-snap:${id}`)).code, 0);
    const left = (await docker('volume', 'ls', '-q', '--filter', `name=${srv.volume}-${hash12('alice')}`)).stdout.trim();
    assert.equal(left, '');
  });
});

describe('snapshots: the layer depth stays bounded over repeated restores', () => {
  let srv;
  let conn;
  const ids = [];

  before(async () => {
    srv = await startServer({ name: 'snap-depth', settings: { SANDBOX_SNAPSHOT_DEPTH: 1 } });
    conn = await connect(srv);
  });
  after(async () => {
    await conn?.close().catch(() => {});
    try {
      await srv?.stop();
    } finally {
      if (srv) {
        await removeGenerations(srv);
        await removeImages(ids);
      }
    }
  });

  const layers = async (id) =>
    Number((await docker('image', 'inspect', '-f', '{{len .RootFS.Layers}}', `code-sandbox-snap:${id}`)).stdout.trim());

  it('past SANDBOX_SNAPSHOT_DEPTH a snapshot is flattened to one layer, and restores with its packages and environment', async () => {
    const base = Number((await docker('image', 'inspect', '-f', '{{len .RootFS.Layers}}', (await inspect(srv.container ?? '')) ? (await inspect(srv.container)).Config.Image : srv.settings?.SANDBOX_IMAGE ?? 'code-sandbox:latest')).stdout.trim() || 0);
    assert.equal((await sh(conn, MAKE_DEB)).trim(), 'hello from the package');
    const path = await sh(conn, 'echo $PATH');
    let r = await tool(conn, 'snapshot', { note: 'one' });
    assert.notEqual(r.isError, true, resultText(r));
    ids.push(r.structuredContent.snapshot_id);
    assert.equal(await layers(ids[0]), base + 1);
    r = await tool(conn, 'restore', { snapshot_id: ids[0] });
    assert.notEqual(r.isError, true, resultText(r));
    await sh(conn, 'echo two > /sandbox/two.txt');
    r = await tool(conn, 'snapshot', { note: 'two' });
    assert.notEqual(r.isError, true, resultText(r));
    ids.push(r.structuredContent.snapshot_id);
    assert.equal(await layers(ids[1]), 1, 'flattened');
    await sh(conn, 'dpkg -r cs-snap-test >/dev/null; rm /sandbox/two.txt');
    r = await tool(conn, 'restore', { snapshot_id: ids[1] });
    assert.notEqual(r.isError, true, resultText(r));
    assert.equal((await sh(conn, 'cs-snap-hello')).trim(), 'hello from the package');
    assert.equal((await sh(conn, 'cat /sandbox/two.txt')).trim(), 'two');
    assert.equal(await sh(conn, 'echo $PATH'), path);
    r = await tool(conn, 'snapshot', { note: 'three' });
    assert.notEqual(r.isError, true, resultText(r));
    ids.push(r.structuredContent.snapshot_id);
    assert.equal(await layers(ids[2]), 2, 'one layer over the flat one');
  });
});

/* A 2026-07-28 tools/call or tasks/get over raw HTTP, declaring Tasks or not. */
const V26 = '2026-07-28';
const TASKS = 'io.modelcontextprotocol/tasks';
function modern(srv, method, params, { tasks = true, id = 1 } = {}) {
  return http(srv, {
    body: {
      jsonrpc: '2.0', id, method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': V26,
          'io.modelcontextprotocol/clientCapabilities': tasks ? { extensions: { [TASKS]: {} } } : {},
          'io.modelcontextprotocol/clientInfo': { name: 'raw-2026', version: '1.0.0' },
        },
      },
    },
    headers: { 'mcp-protocol-version': V26, 'mcp-method': method, 'mcp-name': params.name ?? params.taskId },
    timeout: 300000,
  });
}
const call26 = (srv, name, args, opts) => modern(srv, 'tools/call', { name, arguments: args }, opts);

describe('snapshots: a long restore on 2026-07-28 answers with a task or a run_id', () => {
  let srv;
  const ids = [];

  before(async () => {
    srv = await startServer({ name: 'snap-task', settings: { SANDBOX_INLINE_WAIT: 1 } });
  });
  after(async () => {
    try {
      await srv?.stop();
    } finally {
      if (srv) {
        await removeGenerations(srv);
        await removeImages(ids);
      }
    }
  });

  /* A command; one outliving the 1 s inline wait is waited for with get_result. */
  const sh26 = async (command) => {
    let res = (await call26(srv, 'execute', { command }, { tasks: false })).json?.result;
    for (let i = 0; res?.structuredContent?.running || res?.structuredContent?.state === 'running'; i++) {
      assert.ok(i < 60, 'still running');
      res = (await call26(srv, 'get_result', { run_id: res.structuredContent.run_id, wait: 5 }, { tasks: false })).json?.result;
    }
    assert.equal(res?.structuredContent?.exit_code, 0, JSON.stringify(res));
    return res.structuredContent.stdout;
  };

  it('with Tasks declared: a CreateTaskResult at once, tasks/get working then completed; the sandbox restored', async () => {
    await sh26('mkdir -p /sandbox/t && head -c 150000000 /dev/urandom > /sandbox/t/big && echo one > /sandbox/t/a');
    let r = await call26(srv, 'snapshot', { note: 'task' });
    const id = r.json.result.structuredContent.snapshot_id;
    assert.ok(id, r.text);
    ids.push(id);
    await sh26('echo two > /sandbox/t/a; echo added > /sandbox/t/b');
    const t0 = Date.now();
    r = await call26(srv, 'restore', { snapshot_id: id });
    const task = r.json?.result;
    assert.equal(task?.resultType, 'task', r.text);
    assert.equal(task.status, 'working');
    assert.match(task.statusMessage, new RegExp(`Restoring to snapshot ${id}`));
    const taskId = task.taskId;
    // While it goes on: a snapshot is refused, tasks/get says working.
    const during = await call26(srv, 'snapshot', { note: 'during' }, { tasks: false });
    if (during.json.result.isError) assert.match(during.json.result.content[0].text, /A restore of this sandbox \(to snapshot .*\) is under way/);
    else ids.push(during.json.result.structuredContent.snapshot_id);
    let done;
    for (let i = 0; i < 150 && !done; i++) {
      const g = await modern(srv, 'tasks/get', { taskId });
      assert.equal(g.status, 200, g.text);
      if (g.json.result.status === 'completed') done = g.json.result;
      else {
        assert.equal(g.json.result.status, 'working', g.text);
        await sleep(400);
      }
    }
    assert.ok(done, 'the task completed');
    assert.ok(Date.now() - t0 < 120000);
    assert.equal(done.result.structuredContent.restored, true, JSON.stringify(done));
    assert.notEqual(done.result.isError, true);
    assert.equal((await sh26('cat /sandbox/t/a; ls /sandbox/t')).trim(), 'one\na\nbig');
  });

  it('without Tasks: a run_id handle, and get_result returns the restore\'s result', async () => {
    await sh26('echo three > /sandbox/t/a');
    const id = ids[0];
    const r = await call26(srv, 'restore', { snapshot_id: id }, { tasks: false });
    const res = r.json?.result;
    assert.equal(res?.resultType, 'complete', r.text);
    assert.equal(res.structuredContent.running, true, r.text);
    const runId = res.structuredContent.run_id;
    assert.match(res.content[0].text, new RegExp(`get_result\\(run_id="${runId}"\\)`));
    let final;
    for (let i = 0; i < 60 && !final; i++) {
      const g = await call26(srv, 'get_result', { run_id: runId, wait: 5 }, { tasks: false });
      if (g.json.result.structuredContent?.state !== 'running') final = g.json.result;
    }
    assert.ok(final, 'the restore finished');
    assert.equal(final.structuredContent.restored, true, JSON.stringify(final));
    assert.equal((await sh26('cat /sandbox/t/a')).trim(), 'one');
  });

  it('tasks/cancel of a restore under way: the task ends cancelled and the sandbox is as it was', async () => {
    // A snapshot large enough that its archive is still streaming when
    // the cancel comes.
    await sh26('head -c 80000000 /dev/urandom > /sandbox/t/big2');
    let r = await call26(srv, 'snapshot', { note: 'to cancel' }, { tasks: false });
    const id = r.json.result.structuredContent?.snapshot_id;
    assert.ok(id, r.text);
    ids.push(id);
    await sh26('rm /sandbox/t/big2; echo after > /sandbox/t/a');
    const vols = async () => (await docker('volume', 'ls', '-q', '--filter', `name=${srv.volume}`)).stdout.split('\n').filter(Boolean).sort();
    const volsBefore = await vols();
    r = await call26(srv, 'restore', { snapshot_id: id });
    const task = r.json?.result;
    assert.equal(task?.resultType, 'task', r.text);
    const c = await modern(srv, 'tasks/cancel', { taskId: task.taskId });
    assert.equal(c.status, 200, c.text);
    assert.ok(c.json.result, c.text);
    let end;
    for (let i = 0; i < 150 && !end; i++) {
      const g = await modern(srv, 'tasks/get', { taskId: task.taskId });
      assert.equal(g.status, 200, g.text);
      if (g.json.result.status !== 'working') end = g.json.result;
      else await sleep(400);
    }
    assert.ok(end, 'the task ended');
    // A cancelled task carries no result, only its status.
    assert.equal(end.status, 'cancelled', JSON.stringify(end));
    assert.ok(!('result' in end), JSON.stringify(end));
    assert.match(end.statusMessage, /Cancelled/, JSON.stringify(end));
    // The restores' log and the run's stored result say so.
    const db = join(dirname(srv.envFile), 'state.db');
    const row = (await run('sqlite3', [db, `select state, message from snapshot_restore where run_id = '${task.taskId}'`])).stdout.trim();
    assert.match(row, /^failed\|cancelled by its client before the switch/, row);
    const stored = JSON.parse((await run('sqlite3', [db, `select result from run where id = '${task.taskId}'`])).stdout);
    assert.equal(stored.isError, true, JSON.stringify(stored));
    assert.deepEqual([stored.structuredContent.restored, stored.structuredContent.cancelled], [false, true], JSON.stringify(stored));
    // The sandbox as it was: its files, its volume, no container set aside.
    assert.equal((await sh26('cat /sandbox/t/a; ls /sandbox/t')).trim(), 'after\na\nbig');
    assert.deepEqual(await vols(), volsBefore, 'no new volume left');
    const aside = await docker('ps', '-a', '-q', '--filter', `name=${srv.container}-old-`);
    assert.equal(aside.stdout.trim(), '', 'no container set aside');
    // Its hold is let go: a snapshot is taken at once.
    r = await call26(srv, 'snapshot', { note: 'after the cancel' }, { tasks: false });
    assert.notEqual(r.json.result.isError, true, r.text);
    ids.push(r.json.result.structuredContent.snapshot_id);
  });
});
