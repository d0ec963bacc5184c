// Snapshots against the engine's own calls, interleaved in one run
// (tests/bench/run.sh snapshots; part of make bench):
//   1. snapshot (the tool, end to end) against the engine's commit plus an
//      archive GET of /sandbox (docker commit, docker cp out), same data;
//   2. restore against an archive PUT of the same data into a new
//      container's volume plus that container's create and start;
//   3. the /sandbox share of a second snapshot after a one-file change, as
//      a ratio to the first's, bytes on the host and time (each round's
//      restore makes a new volume, so a first snapshot is taken of it).
// BENCH_SNAP_MB (default 1024) in BENCH_SNAP_FILES files (default 10000),
// BENCH_SNAP_ROUNDS rounds (default 3).

import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { promisify } from 'node:util';
import { startServer, docker } from '../e2e/lib/server.mjs';
import { connect, resultText } from '../e2e/lib/client.mjs';

const MB = Number(process.env.BENCH_SNAP_MB ?? 1024);
const FILES = Number(process.env.BENCH_SNAP_FILES ?? 10000);
const ROUNDS = Number(process.env.BENCH_SNAP_ROUNDS ?? 3);

const median = (a) => {
  const s = [...a].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const ms = async (fn) => {
  const t0 = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t0) / 1e6;
};
const sh = async (cmd) => {
  try {
    await promisify(execFile)('sh', ['-c', cmd], { maxBuffer: 1 << 20 });
  } catch (e) {
    throw new Error(`${cmd}: ${e.stderr ?? e.message}`);
  }
};
const must = (r, what) => {
  if (r.code !== 0) throw new Error(`${what}: ${r.stderr}`);
  return r;
};

const srv = await startServer({ name: 'bench-snap', binDir: 'build/bin', settings: { SANDBOX_SNAPSHOTS: 100, SANDBOX_SNAPSHOT_BYTES: '200g' } });
const conn = await connect(srv);
const tool = (name, args) => conn.client.callTool({ name, arguments: args }, undefined, { timeout: 3600000 });
const ids = [];
const raw = [];
try {
  const per = Math.max(1, Math.floor((MB * 1048576) / FILES));
  let r = await conn.execute({
    command: `set -e; mkdir -p /sandbox/data; cd /sandbox/data; head -c ${per * FILES} /dev/urandom | split -a 5 -d -b ${per} - f; ls | wc -l`,
    timeout: 3600,
  }, { timeout: 3600000 });
  if (r.isError) throw new Error(resultText(r));
  console.log(`snapshots: /sandbox ${MB} MB in ${r.structuredContent.stdout.trim()} files`);

  const snap = [], engSnap = [], rest = [], engRest = [];
  let first;
  for (let i = 0; i < ROUNDS; i++) {
    // Ours: snapshot.
    let out;
    snap.push(await ms(async () => {
      out = await tool('snapshot', { note: `bench ${i}` });
    }));
    if (out.isError) throw new Error(resultText(out));
    ids.push(out.structuredContent.snapshot_id);
    first ??= out.structuredContent;
    // The engine's: commit plus the archive GET of the same data.
    const tag = `code-sandbox-snap:bench-${process.pid}-${i}`;
    raw.push(tag);
    engSnap.push(await ms(async () => {
      must(await docker('commit', '-p', srv.container, tag), 'docker commit');
      await sh(`docker cp ${srv.container}:/sandbox - > /dev/null`);
    }));
    // Ours: restore.
    rest.push(await ms(async () => {
      out = await tool('restore', { snapshot_id: ids[ids.length - 1] });
    }));
    if (out.isError) throw new Error(resultText(out));
    // The engine's: a new volume filled by an archive PUT of the same
    // data, a container created and started on it.
    const name = `${srv.container}-benchraw-${i}`;
    const file = `/tmp/${name}.tar`;
    await sh(`docker cp ${srv.container}:/sandbox - > ${file}`);
    engRest.push(await ms(async () => {
      must(await docker('create', '--name', name, '-v', `${name}:/sandbox`, '--network', 'none', tag, 'sleep', 'infinity'), 'docker create');
      await sh(`docker cp -a - ${name}:/ < ${file}`);
      must(await docker('start', name), 'docker start');
    }));
    await docker('rm', '-f', name);
    await docker('volume', 'rm', '-f', name);
    rmSync(file, { force: true });
  }
  // A first snapshot of this volume, a one-file change, a second one.
  let base;
  const baseMs = await ms(async () => {
    base = await tool('snapshot', { note: 'first of this volume' });
  });
  if (base.isError) throw new Error(resultText(base));
  ids.push(base.structuredContent.snapshot_id);
  first = base.structuredContent;
  await conn.execute({ command: 'echo changed > /sandbox/data/f00000' });
  let second;
  const secondMs = await ms(async () => {
    second = await tool('snapshot', { note: 'one file changed' });
  });
  if (second.isError) throw new Error(resultText(second));
  ids.push(second.structuredContent.snapshot_id);
  const s1 = median(snap), e1 = median(engSnap), s2 = median(rest), e2 = median(engRest);
  // Each round's ratio (ours against the engine's, measured side by side).
  const spread = (ours, eng) => {
    const r = ours.map((x, i) => x / eng[i]);
    return `rounds ${Math.min(...r).toFixed(2)}x to ${Math.max(...r).toFixed(2)}x`;
  };
  console.log(`snapshot: median ${(s1 / 1000).toFixed(2)} s against commit + archive GET ${(e1 / 1000).toFixed(2)} s: ${(s1 / e1).toFixed(2)}x, ${spread(snap, engSnap)} (target at most 1.5x)`);
  console.log(`restore:  median ${(s2 / 1000).toFixed(2)} s against archive PUT + create + start ${(e2 / 1000).toFixed(2)} s: ${(s2 / e2).toFixed(2)}x, ${spread(rest, engRest)} (target at most 1.5x)`);
  const sc = second.structuredContent;
  console.log(`second snapshot after a one-file change (${sc.kept_as} of a ${first.kept_as}): /sandbox ${sc.sandbox_bytes} bytes against ${first.sandbox_bytes}: ` +
    `${(sc.sandbox_bytes / first.sandbox_bytes).toFixed(4)}x (target at most 0.1x); ` +
    `${(secondMs / 1000).toFixed(2)} s against ${(baseMs / 1000).toFixed(2)} s, the layer's commit in both: ${(secondMs / baseMs).toFixed(2)}x`);
} finally {
  for (const id of ids) await tool('snapshot_delete', { snapshot_id: id }).catch(() => {});
  await conn.close().catch(() => {});
  await srv.stop().catch(() => {});
  for (const t of raw) await docker('rmi', '-f', t);
  for (const id of ids) await docker('rmi', '-f', `code-sandbox-snap:${id}`);
  const v = await docker('volume', 'ls', '-q', '--filter', `name=${srv.volume}-s`);
  for (const n of v.stdout.split('\n').filter(Boolean)) await docker('volume', 'rm', '-f', n);
}
