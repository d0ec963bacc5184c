// Commands under the supervisor (tests/bench/run.sh supervisor), against
// the raw Engine API floor measured in the same run, interleaved:
//   - execute `true` p50 at concurrency 1, against the Engine API exec of
//     `bash -c true` (create + start + inspect);
//   - execute rate at concurrency 8, against the Engine API's exec rate at
//     concurrency 8;
//   - server CPU per execute: utime+stime of the /mcp processes and the web
//     server from /proc, before and after;
//   - the supervisor's one-shot path is what execute uses when no channel
//     exists (today: always), so the first ratio is also "fallback vs floor".
// REPS (env BENCH_REPS, default 5) interleaved repetitions of N (BENCH_N,
// default 20) calls each; median and spread (min..max) of the repetitions.

import { request, Agent } from 'node:http';
import { readFileSync } from 'node:fs';
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

async function main() {
  const srv = await startServer({ name: 'bench-sup', binDir: process.env.CS_BIN ?? 'build/bin', settings: { SANDBOX_MEMORY: '2g', SANDBOX_CPUS: '2' } });
  try {
    const sessions = await Promise.all(Array.from({ length: CONC }, () => openSession(srv)));
    const exec = (sess) => async () => {
      const r = await call(srv, sess, 'tools/call', { name: 'execute', arguments: { command: 'true' } }, { id: 1 });
      if (r.status !== 200 || !r.json?.result || r.json.result.isError) throw new Error(`execute: HTTP ${r.status}: ${r.text.slice(0, 300)}`);
    };
    const agents = Array.from({ length: CONC }, () => new Agent({ keepAlive: true, maxSockets: 1 }));
    const raws = agents.map(rawExecWith);
    const one = exec(sessions[0]);
    for (let i = 0; i < 3; i++) {
      await one();
      await raws[0](srv.container);
    }
    const server = () => [...srv.programPids('mcp'), srv.proc.pid, ...childPids(srv.proc.pid)];
    console.log(`supervisor benchmark: ${srv.bin}/mcp behind lighttpd, container ${srv.container}`);
    console.log(`machine: ${(await execFileP('nproc')).stdout.trim()} cores; ${REPS} interleaved repetitions of ${N} calls; median and spread (min..max) of the repetitions\n`);
    const r = { p50: [], rawP50: [], ratio: [], rate: [], rawRate: [], rateRatio: [], cpu: [] };
    for (let rep = 0; rep < REPS; rep++) {
      const a = await p50(one, N);
      const b = await p50(() => raws[0](srv.container), N);
      r.p50.push(a);
      r.rawP50.push(b);
      r.ratio.push(a / b);
      let k = 0;
      const c0 = cpuTicks(server());
      const x = await rate(() => exec(sessions[k++ % CONC])(), N * 2, CONC);
      const c1 = cpuTicks(server());
      let j = 0;
      const y = await rate(() => raws[j++ % CONC](srv.container), N * 2, CONC);
      r.rate.push(x);
      r.rawRate.push(y);
      r.rateRatio.push(x / y);
      r.cpu.push(((c1 - c0) * (1000 / TICK)) / (N * 2));
    }
    console.log(` execute \`true\` p50, concurrency 1:   ${median(r.p50).toFixed(2)} ms (${spread(r.p50)})`);
    console.log(` Engine API bash -c true p50:         ${median(r.rawP50).toFixed(2)} ms (${spread(r.rawP50)})`);
    console.log(` ratio execute / Engine API:          ${median(r.ratio).toFixed(2)}x (${spread(r.ratio)})  [target with the channel: <= 0.2x; one-shot fallback: <= floor + 2 ms]`);
    console.log(` execute rate, concurrency ${CONC}:        ${median(r.rate).toFixed(1)}/s (${spread(r.rate)})`);
    console.log(` Engine API exec rate, concurrency ${CONC}: ${median(r.rawRate).toFixed(1)}/s (${spread(r.rawRate)})`);
    console.log(` ratio of rates:                      ${median(r.rateRatio).toFixed(2)}x (${spread(r.rateRatio)})  [target with the channel: >= 5x]`);
    console.log(` server CPU per execute (/mcp + web server, /proc): ${median(r.cpu).toFixed(2)} ms (${spread(r.cpu)})  [target <= 1 ms]`);
    console.log(' supervisor CPU: not measured (one short-lived process per command)');
  } finally {
    await srv.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
