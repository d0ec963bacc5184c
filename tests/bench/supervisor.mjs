// Commands under the supervisor (tests/bench/run.sh supervisor), against
// the raw Engine API floor measured in the same run, interleaved:
//   - execute `true` p50 at concurrency 1, against the Engine API exec of
//     `bash -c true` (create + start + inspect);
//   - execute rate at concurrency 8, against the Engine API's exec rate at
//     concurrency 8;
//   - server CPU per execute: utime+stime of the /mcp processes and the web
//     server from /proc, before and after;
//   - the supervisor's CPU per execute: its channel processes in the
//     container, with the runs they reaped (from the host's /proc);
//   - the fallback, one engine exec per command (a second server with
//     SANDBOX_CHANNEL=0), p50 against the same floor.
// REPS (env BENCH_REPS, default 5) interleaved repetitions of N (BENCH_N,
// default 20) calls each; median and spread (min..max) of the repetitions.

import { request, Agent } from 'node:http';
import { readFileSync, readdirSync } from 'node:fs';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startServer, childPids } from '../e2e/lib/server.mjs';
import { openSession, call } from '../e2e/lib/client.mjs';

const execFileP = promisify(execFile);
const REPS = Number(process.env.BENCH_REPS ?? 5);
const N = Number(process.env.BENCH_N ?? 20);
const CONC = 8;
const SOCK = (process.env.DOCKER_HOST ?? 'unix:///var/run/docker.sock').replace(/^unix:\/\//, '');
const TICK = 100; // USER_HZ: /proc/PID/stat counts in 1/100 s
// Calls per N in the concurrent phase that also measures CPU: enough that a
// 10 ms tick is 1/40 of a call's share (0.025 ms).
const CPU_CALLS = 20;

const median = (a) => {
  const s = [...a].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const spread = (a) => `${Math.min(...a).toFixed(2)}..${Math.max(...a).toFixed(2)}`;

function dockerApi(method, path, body, agent) {
  return new Promise((res, rej) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      { socketPath: SOCK, method, path: `/v1.41${path}`, agent,
        headers: data ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } : {} },
      (r) => {
        const chunks = [];
        r.on('data', (c) => chunks.push(c));
        r.on('end', () => res({ status: r.statusCode, body: Buffer.concat(chunks) }));
        r.on('error', rej);
      },
    );
    req.on('error', rej);
    if (data) req.write(data);
    req.end();
  });
}

function rawExecWith(agent) {
  return async (container) => {
    const c = await dockerApi('POST', `/containers/${container}/exec`,
      { AttachStdout: true, AttachStderr: true, Tty: false, Cmd: ['bash', '-c', 'true'], WorkingDir: '/sandbox' }, agent);
    if (c.status !== 201) throw new Error(`exec create: ${c.status} ${c.body}`);
    const id = JSON.parse(c.body).Id;
    const s = await dockerApi('POST', `/exec/${id}/start`, { Detach: false, Tty: false }, false);
    if (s.status !== 200) throw new Error(`exec start: ${s.status}`);
    const i = await dockerApi('GET', `/exec/${id}/json`, undefined, agent);
    if (JSON.parse(i.body).ExitCode !== 0) throw new Error('exec failed');
  };
}

function cpuTicks(pids) {
  let t = 0;
  for (const p of pids) {
    try {
      const f = readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1].split(' ');
      t += Number(f[11]) + Number(f[12]);
    } catch {
      /* gone */
    }
  }
  return t;
}

async function p50(fn, n) {
  const t = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    await fn();
    t.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return median(t);
}

async function rate(fn, n, conc) {
  const t0 = process.hrtime.bigint();
  let next = 0;
  await Promise.all(Array.from({ length: conc }, async () => {
    while (next++ < n) await fn();
  }));
  return n / (Number(process.hrtime.bigint() - t0) / 1e9);
}

/* Pids of the container's "supervisor channel" processes (host /proc). */
function supervisorPids(containerId) {
  const pids = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (!readFileSync(`/proc/${d}/cmdline`, 'latin1').includes('supervisor\0channel')) continue;
      if (readFileSync(`/proc/${d}/cgroup`, 'latin1').includes(containerId)) pids.push(Number(d));
    } catch {
      /* gone */
    }
  }
  return pids;
}

/* utime+stime+cutime+cstime: a process and the children it reaped. */
function cpuTicksAll(pids) {
  let t = 0;
  for (const p of pids) {
    try {
      const f = readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1].split(' ');
      t += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
    } catch {
      /* gone */
    }
  }
  return t;
}

async function main() {
  const settings = { SANDBOX_MEMORY: '2g', SANDBOX_CPUS: '2' };
  const binDir = process.env.CS_BIN ?? 'build/bin';
  const srv = await startServer({ name: 'bench-sup', binDir, settings });
  // The fallback: the same program with no channel, one engine exec per command.
  const one = await startServer({ name: 'bench-sup1', binDir, settings: { ...settings, SANDBOX_CHANNEL: '0' } });
  try {
    const sessions = await Promise.all(Array.from({ length: CONC }, () => openSession(srv)));
    const oneSession = await openSession(one);
    const exec = (s, sess) => async () => {
      const r = await call(s, sess, 'tools/call', { name: 'execute', arguments: { command: 'true' } }, { id: 1 });
      if (r.status !== 200 || !r.json?.result || r.json.result.isError) throw new Error(`execute: HTTP ${r.status}: ${r.text.slice(0, 300)}`);
    };
    const agents = Array.from({ length: CONC }, () => new Agent({ keepAlive: true, maxSockets: 1 }));
    const raws = agents.map(rawExecWith);
    const first = exec(srv, sessions[0]);
    const fallback = exec(one, oneSession);
    for (let i = 0; i < 3; i++) {
      await Promise.all(sessions.map((x) => exec(srv, x)()));
      await fallback();
      await raws[0](srv.container);
    }
    const cid = JSON.parse((await execFileP('docker', ['inspect', srv.container])).stdout)[0].Id;
    // Each process once: the /mcp programs are children of the web server.
    const server = () => [...new Set([...srv.programPids('mcp'), srv.proc.pid, ...childPids(srv.proc.pid)])];
    console.log(`supervisor benchmark: ${srv.bin}/mcp behind lighttpd, container ${srv.container}; fallback (SANDBOX_CHANNEL=0) on ${one.container}`);
    console.log(`machine: ${(await execFileP('nproc')).stdout.trim()} cores; ${REPS} interleaved repetitions of ${N} calls; median and spread (min..max) of the repetitions\n`);
    const r = { p50: [], rawP50: [], ratio: [], fb: [], fbOver: [], rate: [], rawRate: [], rateRatio: [], cpu: [], supCpu: [] };
    for (let rep = 0; rep < REPS; rep++) {
      const a = await p50(first, N);
      const b = await p50(() => raws[0](srv.container), N);
      const f = await p50(fallback, N);
      r.p50.push(a);
      r.rawP50.push(b);
      r.ratio.push(a / b);
      r.fb.push(f);
      r.fbOver.push(f - b);
      let k = 0;
      const c0 = cpuTicks(server());
      const s0 = cpuTicksAll(supervisorPids(cid));
      const x = await rate(() => exec(srv, sessions[k++ % CONC])(), N * CPU_CALLS, CONC);
      const c1 = cpuTicks(server());
      const s1 = cpuTicksAll(supervisorPids(cid));
      let j = 0;
      const y = await rate(() => raws[j++ % CONC](srv.container), N * 2, CONC);
      r.rate.push(x);
      r.rawRate.push(y);
      r.rateRatio.push(x / y);
      r.cpu.push(((c1 - c0) * (1000 / TICK)) / (N * CPU_CALLS));
      r.supCpu.push(((s1 - s0) * (1000 / TICK)) / (N * CPU_CALLS));
    }
    console.log(` execute \`true\` p50, concurrency 1:   ${median(r.p50).toFixed(2)} ms (${spread(r.p50)})`);
    console.log(` Engine API bash -c true p50:         ${median(r.rawP50).toFixed(2)} ms (${spread(r.rawP50)})`);
    console.log(` ratio execute / Engine API:          ${median(r.ratio).toFixed(2)}x (${spread(r.ratio)})  [target <= 0.2x]`);
    console.log(` fallback (one exec per command) p50: ${median(r.fb).toFixed(2)} ms (${spread(r.fb)}), floor + ${median(r.fbOver).toFixed(2)} ms (${spread(r.fbOver)})  [target <= floor + 2 ms]`);
    console.log(` execute rate, concurrency ${CONC}:        ${median(r.rate).toFixed(1)}/s (${spread(r.rate)})`);
    console.log(` Engine API exec rate, concurrency ${CONC}: ${median(r.rawRate).toFixed(1)}/s (${spread(r.rawRate)})`);
    console.log(` ratio of rates:                      ${median(r.rateRatio).toFixed(2)}x (${spread(r.rateRatio)})  [target >= 5x]`);
    console.log(` server CPU per execute (/mcp + web server, /proc): ${median(r.cpu).toFixed(2)} ms (${spread(r.cpu)})  [target <= 1 ms]`);
    console.log(` supervisor CPU per execute (its channel processes and what they reaped: the run, bash, true): ${median(r.supCpu).toFixed(2)} ms (${spread(r.supCpu)})`);
  } finally {
    await one.stop();
    await srv.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
