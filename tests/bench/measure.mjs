// What the benchmarks that compare servers in one run share (lean.mjs,
// base.mjs): medians with their spread, a process's CPU from /proc, and a
// wrk run against /mcp with the server's CPU per request.

import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort, sleep } from '../e2e/lib/server.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));

const execFileP = promisify(execFile);
export const TICK_MS = 10; // USER_HZ is 100 on Linux

export const median = (a) => {
  const s = [...a].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
export const spread = (a, f = (x) => x.toFixed(2)) => `median ${f(median(a))} (min ${f(Math.min(...a))}, max ${f(Math.max(...a))})`;
/* The same, short: "median (min–max)". */
export const span = (a, f = (x) => x.toFixed(2)) => `${f(median(a))} (${f(Math.min(...a))}–${f(Math.max(...a))})`;

/* utime + stime of a process in ms (0 when gone): 10 ms steps. */
export function cpuMs(pid) {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * TICK_MS; // fields 14, 15
  } catch {
    return 0;
  }
}

/*
 * A reading of processes' CPU, for cpuBetween: per process its utime +
 * stime (cpuMs, exited threads included) and the run time of each of its
 * threads in ns (/proc/PID/task/TID/schedstat, the same count the kernel
 * turns into utime + stime, without the 10 ms steps).
 */
export function cpuRead(pids) {
  const out = new Map();
  for (const p of pids) {
    const tasks = new Map();
    let ok = true;
    try {
      for (const t of readdirSync(`/proc/${p}/task`)) tasks.set(t, Number(readFileSync(`/proc/${p}/task/${t}/schedstat`, 'utf8').split(' ')[0]));
    } catch {
      ok = false; // gone, or no schedstat
    }
    out.set(p, { ms: cpuMs(p), tasks, ok });
  }
  return out;
}

/*
 * CPU in ms of the processes pids (default: all of reading a) between two
 * readings: from the threads' run times for a process whose threads of the
 * first reading are all there in the second, else from its utime + stime
 * (off by less than TICK_MS); inexact counts the processes measured so.
 */
export function cpuBetween(a, b, pids = [...a.keys()]) {
  let ms = 0;
  let inexact = 0;
  for (const p of pids) {
    const x = a.get(p);
    const y = b.get(p);
    if (!x || !y) continue;
    if (x.ok && y.ok && [...x.tasks.keys()].every((t) => y.tasks.has(t))) {
      for (const [t, ns] of y.tasks) ms += (ns - (x.tasks.get(t) ?? 0)) / 1e6;
    } else {
      ms += y.ms - x.ms;
      inexact++;
    }
  }
  return { ms, inexact };
}

/*
 * A wrk script POSTing one JSON-RPC request without params in a session;
 * the token goes into a private temporary file in dir, never onto a
 * command line.
 */
export function wrkScript(dir, file, method, token, sess) {
  const p = join(dir, file);
  writeFileSync(
    p,
    [
      'wrk.method = "POST"',
      `wrk.body = '{"jsonrpc":"2.0","id":1,"method":"${method}"}'`,
      `wrk.headers["Authorization"] = "Bearer ${token}"`,
      'wrk.headers["Content-Type"] = "application/json"',
      'wrk.headers["Accept"] = "application/json, text/event-stream"',
      `wrk.headers["Mcp-Session-Id"] = "${sess.session}"`,
      `wrk.headers["MCP-Protocol-Version"] = "${sess.version}"`,
      'done = function(summary, latency, requests)',
      '  io.write(string.format("BENCH requests=%d non2xx=%d errors=%d p99us=%d\\n", summary.requests, summary.errors.status, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout, latency:percentile(99)))',
      'end',
    ].join('\n'),
    { mode: 0o600 },
  );
  return p;
}

/*
 * One wrk run (2 threads, 8 connections, `seconds` long) against a target
 * {label, url, pids(), scripts: {METHOD: wrkScript path}}; pids()[0] is the
 * web server (or the one process serving), the rest its programs. Returns
 * rate (requests/s), p99 (ms), the CPU per request in ms of all of them
 * (cpu), of the web server (web) and of the programs (progs) (cpuBetween),
 * n requests, inexact (the processes measured in 10 ms steps) and what
 * midway(pids) returned halfway through the run (mid, null without it).
 */
export async function wrkLoad(target, method, { seconds, midway = null }) {
  const pids = target.pids();
  const web = pids.slice(0, 1);
  const c0 = cpuRead(pids);
  const args = ['-t', '2', '-c', '8', '-d', `${seconds}s`, '--latency', '-s', target.scripts[method], target.url];
  const run = execFileP('wrk', args, { maxBuffer: 1 << 20 });
  let mid = null;
  if (midway) {
    await sleep((seconds * 1000) / 2);
    mid = midway(pids);
  }
  const { stdout } = await run;
  const c1 = cpuRead(pids);
  const all = cpuBetween(c0, c1);
  const w = cpuBetween(c0, c1, web).ms;
  const m = /BENCH requests=(\d+) non2xx=(\d+) errors=(\d+) p99us=(\d+)/.exec(stdout);
  const n = Number(m[1]);
  if (Number(m[2]) || Number(m[3])) throw new Error(`${target.label} ${method}: ${m[2]} non-2xx, ${m[3]} socket errors`);
  return {
    rate: Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)[1]),
    p99: Number(m[4]) / 1000,
    cpu: all.ms / n,
    web: w / n,
    progs: (all.ms - w) / n,
    n,
    inexact: all.inexact,
    mid,
  };
}

/*
 * The Node reference server (reference/server.mjs) on a free loopback port,
 * doing its work in container: { proc, token, url, key, srvLike }.
 */
export async function startReference(container) {
  const port = await freePort();
  const token = randomBytes(32).toString('base64url');
  const proc = spawn(process.execPath, [join(HERE, 'reference/server.mjs'), String(port), container], {
    env: { ...process.env, REF_TOKEN: token },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise((res, rej) => {
    proc.stdout.once('data', res);
    proc.once('exit', (c) => rej(new Error(`reference server exited ${c}`)));
  });
  const url = `http://127.0.0.1:${port}`;
  return { proc, token, url: `${url}/mcp`, key: token, srvLike: { url, key: token } };
}
