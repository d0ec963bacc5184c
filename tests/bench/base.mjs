// This build against a base build, in one run (tests/bench/run.sh base), for
// a change that must leave the speed as it was. BENCH_BASE_BIN names the
// base build's programs (say, an earlier commit's build/bin); this build is
// build/bin (or CS_BIN). Each is served by its own lighttpd at its default
// settings, with its own container, and measured in the same repetitions:
//   1. execute of `true`, one call at a time (MCP tools/call over HTTP,
//      keep-alive, an OAuth access token) for BENCH_SECONDS: p50, and the
//      server's CPU per execute (lighttpd and every program, from /proc
//      before and after: each thread's run time, measure.mjs cpuBetween);
//   2. tools/list at 8 concurrent connections (wrk, lean.mjs's load) for
//      BENCH_SECONDS: the server's CPU per request, the same way; rate and
//      p99 beside it.
// BENCH_REPS (default 5) repetitions, BENCH_SECONDS (default 5) per
// measurement; in each repetition both builds in turn for each part, the
// one that goes first alternating. Printed per figure: this build and the
// base, median (min–max) of the repetitions, and ours / base, the median
// (min–max) of the ratios within each repetition.
// Without BENCH_BASE_BIN it says so and measures nothing (it is part of
// make bench, about 2 minutes at the defaults). For instance:
//   git worktree add /tmp/base REV && make -C /tmp/base
//   BENCH_BASE_BIN=/tmp/base/build/bin tests/bench/run.sh base

import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { startServer, TOP } from '../e2e/lib/server.mjs';
import { openSession, call } from '../e2e/lib/client.mjs';
import { register, rawFlow, CLAUDE_REGISTRATION } from '../e2e/lib/oauth.mjs';
import { median, span, cpuRead, cpuBetween, wrkScript, wrkLoad, TICK_MS } from './measure.mjs';

const execFileP = promisify(execFile);
const REPS = Number(process.env.BENCH_REPS ?? 5);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const WARM = 5;

/* The commit a build folder's work tree is at, '' outside git. */
async function commitOf(dir) {
  try {
    const head = (await execFileP('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'])).stdout.trim();
    const dirty = (await execFileP('git', ['-C', dir, 'status', '--porcelain', '--untracked-files=no'])).stdout.trim();
    return dirty ? `${head}, with uncommitted changes` : head;
  } catch {
    return '';
  }
}

/* A server for one build, signed in with OAuth, its container created. */
async function target(label, name, binDir, dir) {
  const srv = await startServer({ name, binDir, mcpProcs: null });
  try {
    const client = (await register(srv, CLAUDE_REGISTRATION)).json;
    const token = (await rawFlow(srv, client)).tokens.access_token;
    const as = { ...srv, key: token };
    const sess = await openSession(as);
    const exec = async () => {
      const r = await call(as, sess, 'tools/call', { name: 'execute', arguments: { command: 'true' } }, { id: 1 });
      if (r.status !== 200 || !r.json?.result || r.json.result.isError) throw new Error(`${label} execute: HTTP ${r.status}: ${r.text.slice(0, 300)}`);
    };
    for (let i = 0; i < WARM; i++) await exec(); // the first creates the container
    const list = await call(as, sess, 'tools/list', undefined, { id: 1 });
    if (!list.json?.result?.tools) throw new Error(`${label} tools/list: HTTP ${list.status}: ${list.text.slice(0, 300)}`);
    return {
      label,
      srv,
      exec,
      url: srv.mcpUrl,
      pids: () => [srv.proc.pid, ...srv.programPids(null)],
      scripts: { 'tools/list': wrkScript(dir, `${name}.lua`, 'tools/list', token, sess) },
      commit: await commitOf(srv.bin),
    };
  } catch (e) {
    await srv.stop();
    throw e;
  }
}

/* execute of `true`, one at a time for `seconds`: p50 and CPU per call. */
async function execRun(t, seconds) {
  const pids = t.pids();
  const times = [];
  const c0 = cpuRead(pids);
  const end = process.hrtime.bigint() + BigInt(Math.round(seconds * 1e9));
  for (let now = process.hrtime.bigint(); now < end; ) {
    await t.exec();
    const after = process.hrtime.bigint();
    times.push(Number(after - now) / 1e6);
    now = after;
  }
  const cpu = cpuBetween(c0, cpuRead(pids));
  return { p50: median(times), cpu: cpu.ms / times.length, n: times.length, inexact: cpu.inexact };
}

async function main() {
  const baseBin = process.env.BENCH_BASE_BIN;
  if (!baseBin) {
    console.log('base: BENCH_BASE_BIN is not set (a base build\'s programs, such as an earlier commit\'s build/bin): nothing to compare, skipped');
    return;
  }
  if (!existsSync(join(resolve(TOP, baseBin), 'mcp'))) throw new Error(`BENCH_BASE_BIN=${baseBin}: no mcp program there`);
  const load0 = loadavg();
  const dir = mkdtempSync(join(tmpdir(), 'cs-bench-'));
  const started = [];
  try {
    const ours = await target('this build', 'bench-ours', process.env.CS_BIN ?? 'build/bin', dir);
    started.push(ours);
    const base = await target('base build', 'bench-base', baseBin, dir);
    started.push(base);
    const builds = [ours, base];
    const desc = (t) => `${t.srv.bin}${t.commit ? ` (${t.commit})` : ''}`;
    console.log(`code-sandbox against a base build: this build ${desc(ours)}, base ${desc(base)}; each behind lighttpd at its default settings, its own container`);
    console.log(`machine: ${(await execFileP('nproc')).stdout.trim()} cores, load average ${load0.map((x) => x.toFixed(2)).join(' ')} at the start; ${REPS} repetitions, both builds in each, interleaved, ${SECONDS} s per measurement\n`);

    const res = new Map(builds.map((t) => [t, { exec: [], list: [] }]));
    for (let i = 0; i < REPS; i++) {
      const order = i % 2 ? [base, ours] : [ours, base];
      for (const t of order) res.get(t).exec.push(await execRun(t, SECONDS));
      for (const t of order) res.get(t).list.push(await wrkLoad(t, 'tools/list', { seconds: SECONDS }));
    }

    const o = res.get(ours);
    const b = res.get(base);
    const row = (what, unit, key, part, f) => {
      const x = o[part].map((r) => r[key]);
      const y = b[part].map((r) => r[key]);
      const ratio = x.map((v, i) => v / y[i]);
      console.log(`   ${what.padEnd(24)} ours ${span(x, f)} ${unit}; base ${span(y, f)} ${unit}; ours / base ${span(ratio, (v) => v.toFixed(3))}`);
    };
    const calls = (rs) => span(rs.map((r) => r.n), (v) => v.toFixed(0));
    // The threads' run times are exact; a process measured by utime + stime
    // (a thread of it ended meanwhile) is off by less than one 10 ms tick.
    const within = (rs, unit) => {
      const worst = Math.max(...rs.map((r) => (TICK_MS * r.inexact) / r.n));
      return worst ? `CPU within ${worst.toFixed(4)} ms per ${unit} (some processes counted in 10 ms ticks)` : 'CPU from each thread\'s run time (schedstat), exact';
    };
    console.log('1. execute of `true`, one call at a time (MCP tools/call over HTTP, keep-alive, OAuth access token)');
    row('p50', 'ms', 'p50', 'exec', (v) => v.toFixed(2));
    row('server CPU per call', 'ms', 'cpu', 'exec', (v) => v.toFixed(3));
    console.log(`   calls per measurement: ours ${calls(o.exec)}, base ${calls(b.exec)}; ${within([...o.exec, ...b.exec], 'call')}\n`);
    console.log('2. tools/list, 8 concurrent connections (wrk -t 2 -c 8, OAuth access token)');
    row('server CPU per request', 'ms', 'cpu', 'list', (v) => v.toFixed(3));
    row('  of which the programs', 'ms', 'progs', 'list', (v) => v.toFixed(3));
    row('rate', 'req/s', 'rate', 'list', (v) => v.toFixed(0));
    row('p99', 'ms', 'p99', 'list', (v) => v.toFixed(2));
    console.log(`   requests per measurement: ours ${calls(o.list)}, base ${calls(b.list)}; ${within([...o.list, ...b.list], 'request')}\n`);
    console.log(`load average at the end: ${loadavg().map((x) => x.toFixed(2)).join(' ')} (other work shares this machine; see the spread)`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    for (const t of started.reverse()) await t.srv.stop();
  }
}

main().catch((e) => {
  console.error(`bench: ${e.stack ?? e}`);
  process.exit(1);
});
