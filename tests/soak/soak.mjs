// Soak: SOAK_CLIENTS clients (default 200) of mixed traffic for SOAK_MINUTES
// (default 10) against one server behind WEB (lighttpd or caddy): OAuth
// sign-in over raw HTTP, tools/list, short and long execute, share_file and
// the download, get_result, cancellation. Each client is one MCP SDK
// client that waits 1 to 3 s between actions (a busy person, not a flood).
// Every minute it prints the machine's load average and the RSS, threads
// and open file descriptors of every process of the server (web server and
// programs). At the end it stops starting actions, waits for every one in
// flight (each is bounded by a timeout) and prints the counts, and the
// errors grouped by what they said (server errors apart from actions that
// got no answer in time, which a loaded machine can cause). Exit status 0
// only with no error, every action finished, no sanitizer report, and
// (after the first two minutes, the warm-up):
//   - RSS: no process's peak in the second half of the run above its peak
//     in the first half by more than RSS_GROWTH (10 %) plus RSS_SLACK (4 MiB):
//     memory that levels off passes, a leak (growth with the requests
//     served) does not;
//   - descriptors: every program within FD_BASE + FD_PER_THREAD per thread
//     it has started (threads start on demand up to SANDBOX_THREADS and stay)
//     under load: each thread holds its database connection (the file and
//     its WAL), the FastCGI connection of its request and that request's
//     engine connections (an execute has several open at once); and once
//     the load has ended (IDLE_WAIT later), every program back within
//     FD_BASE + FD_IDLE_PER_THREAD per thread (only the database
//     connections stay). The web server: within FD_BASE + FD_PER_CLIENT per
//     client under load, FD_BASE + 1 per client idle (keep-alive
//     connections). Under load the count follows the requests in flight,
//     so it is bounded, not compared over time; a descriptor that leaks
//     with requests fails the idle check.
//
//   node tests/soak/soak.mjs lighttpd|caddy
//
// Traffic goes only to the server on 127.0.0.1. The configuration it
// needs is set below (settings) and printed.

import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { loadavg } from 'node:os';
import { startServer, childPids, sleep } from '../e2e/lib/server.mjs';
import { connect } from '../e2e/lib/client.mjs';
import { rawFlow, register } from '../e2e/lib/oauth.mjs';

const web = process.argv[2] ?? 'lighttpd';
const MINUTES = Number(process.env.SOAK_MINUTES ?? 10);
const CLIENTS = Number(process.env.SOAK_CLIENTS ?? 200);
const ACTION_TIMEOUT = 120000;

// What the load needs, raised from the defaults and printed: 200 clients
// share one address (127.0.0.1) and one owner (the operator), so the
// per-address limits and the running-command caps are raised; /mcp gets
// enough threads for every client's long command at once, and the
// container enough memory and processes for them.
const settings = {
  SANDBOX_THREADS: 128,
  SANDBOX_MAX_RUNNING: 1000,
  SANDBOX_MAX_RUNNING_PER_OWNER: 1000,
  SANDBOX_REGISTER_PER_HOUR: 1000000,
  SANDBOX_PENDING_SIGNINS: 100000,
  SANDBOX_MEMORY: '1g',
  SANDBOX_CPUS: '1',
  SANDBOX_PIDS_LIMIT: 4096,
  SANDBOX_CLEANUP_INTERVAL: 31536000,
};

const RSS_GROWTH = 0.10;
const RSS_SLACK = 4096; // KiB
const FD_BASE = 16;
const FD_PER_THREAD = 12;
const FD_IDLE_PER_THREAD = 2;
const FD_PER_CLIENT = 4;
const IDLE_WAIT = 15000;

function procInfo(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const rss = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
    const threads = Number(/Threads:\s+(\d+)/.exec(status)?.[1] ?? 0);
    const name = /Name:\s+(\S+)/.exec(status)?.[1] ?? '?';
    const fds = readdirSync(`/proc/${pid}/fd`).length;
    return { pid, name, rss, threads, fds };
  } catch {
    return null;
  }
}

function serverPids(srv) {
  const set = new Set([srv.proc.pid, ...childPids(srv.proc.pid), ...srv.programPids(null)]);
  return [...set].filter((p) => {
    try {
      const exe = readlinkSync(`/proc/${p}/exe`);
      return !/\/(sh|dash|bash|sleep|node)$/.test(exe);
    } catch {
      return false;
    }
  });
}

const t0 = Date.now();
const counts = {};
// Errors grouped by action and what they said (numbers and ids folded), each
// with a count, its first and last time and one full example.
const groups = new Map();
let inflight = 0;
function note(kind, ok, detail) {
  counts[kind] ??= { ok: 0, err: 0 };
  if (ok) {
    counts[kind].ok++;
    return;
  }
  counts[kind].err++;
  const t = Math.round((Date.now() - t0) / 1000);
  const text = String(detail);
  const key = `${kind}: ${text.replace(/[0-9a-f]{8,}|[A-Za-z0-9_-]{16,}|\d+/g, 'N').slice(0, 160)}`;
  const g = groups.get(key) ?? { n: 0, first: t, last: t, example: text.slice(0, 400), timeout: /^no answer in /.test(text) };
  g.n++;
  g.last = t;
  groups.set(key, g);
}

async function timed(kind, fn) {
  inflight++;
  let timer;
  try {
    await Promise.race([
      fn(),
      new Promise((_, rej) => {
        timer = setTimeout(() => rej(new Error(`no answer in ${ACTION_TIMEOUT} ms`)), ACTION_TIMEOUT);
      }),
    ]);
    note(kind, true);
  } catch (e) {
    note(kind, false, e?.message ?? String(e));
  } finally {
    clearTimeout(timer);
    inflight--;
  }
}

const ACTIONS = [
  ['tools/list', 25],
  ['execute short', 20],
  ['execute long', 10],
  ['share + download', 10],
  ['get_result', 10],
  ['cancel', 5],
  ['sign-in', 10],
  ['ping', 10],
];
const TOTAL = ACTIONS.reduce((a, [, w]) => a + w, 0);
function pick() {
  let r = Math.random() * TOTAL;
  for (const [k, w] of ACTIONS) if ((r -= w) < 0) return k;
  return ACTIONS[0][0];
}

async function action(srv, conn, oauthClient, i, kind) {
  const c = conn.client;
  switch (kind) {
    case 'tools/list': {
      const r = await c.listTools();
      if (r.tools.length < 3) throw new Error('tools missing');
      return;
    }
    case 'ping':
      await c.ping();
      return;
    case 'execute short': {
      const r = await conn.execute({ command: `echo c${i}` });
      if (r.structuredContent?.stdout !== `c${i}\n`) throw new Error(JSON.stringify(r).slice(0, 200));
      return;
    }
    case 'execute long': {
      const r = await conn.execute({ command: `for n in 1 2 3; do echo $n; sleep 1; done` }, { onprogress: () => {} });
      if (r.structuredContent?.stdout !== '1\n2\n3\n') throw new Error(JSON.stringify(r).slice(0, 200));
      return;
    }
    case 'share + download': {
      const w = await conn.execute({ command: `mkdir -p /sandbox/soak && echo file-${i} > /sandbox/soak/f${i}.txt` });
      if (w.structuredContent?.exit_code !== 0) throw new Error(`write failed: ${JSON.stringify(w).slice(0, 200)}`);
      const s = await c.callTool({ name: 'share_file', arguments: { path: `/sandbox/soak/f${i}.txt` } }, undefined, { timeout: ACTION_TIMEOUT });
      const url = s.structuredContent?.url;
      if (!url) throw new Error(`share_file: ${JSON.stringify(s).slice(0, 200)}`);
      const d = await fetch(url, { signal: AbortSignal.timeout(30000) });
      const body = await d.text();
      if (d.status !== 200 || body !== `file-${i}\n`) throw new Error(`download: ${d.status} ${body.slice(0, 80)}`);
      return;
    }
    case 'get_result': {
      const r = await conn.execute({ command: `echo r${i}` });
      const id = r.structuredContent?.run_id;
      if (!id) throw new Error(`no run_id: ${JSON.stringify(r).slice(0, 200)}`);
      const g = await c.callTool({ name: 'get_result', arguments: { run_id: id } }, undefined, { timeout: ACTION_TIMEOUT });
      if (g.isError || !JSON.stringify(g).includes(`r${i}`)) throw new Error(`get_result: ${JSON.stringify(g).slice(0, 200)}`);
      return;
    }
    case 'cancel': {
      const ac = new AbortController();
      const call = conn.execute({ command: 'sleep 60' }, { signal: ac.signal });
      await sleep(500 + Math.random() * 1000);
      ac.abort(new Error('soak cancel'));
      try {
        await call;
        throw new Error('the cancelled call answered');
      } catch (e) {
        if (!/soak cancel|abort/i.test(e?.message ?? '')) throw e;
      }
      return;
    }
    case 'sign-in': {
      const f = await rawFlow(srv, oauthClient);
      if (!f.tokens.access_token) throw new Error('no token');
      return;
    }
  }
}

async function clientLoop(srv, i, end) {
  let conn;
  await timed('connect', async () => {
    conn = await connect(srv, { name: `soak-${i}`, listTools: false });
  });
  if (!conn) return;
  const oauthClient = (await register(srv, {
    redirect_uris: ['http://127.0.0.1:40000/cb'], token_endpoint_auth_method: 'none', client_name: `soak ${i}`,
  })).json;
  await sleep(Math.random() * 5000);
  while (Date.now() < end) {
    const kind = pick();
    await timed(kind, () => action(srv, conn, oauthClient, i, kind));
    await sleep(1000 + Math.random() * 2000);
  }
  await conn.close().catch(() => {});
}

const srv = await startServer({ name: `soak-${web}`, web, settings, binDir: process.env.CS_BIN ?? 'build/bin' });
console.log(`soak: ${web}, ${CLIENTS} clients, ${MINUTES} min, settings ${JSON.stringify(settings)}`);
const samples = [];
function sample(minute) {
  const procs = serverPids(srv).map(procInfo).filter(Boolean).sort((a, b) => a.name.localeCompare(b.name) || a.pid - b.pid);
  samples.push({ minute, procs });
  const line = procs.map((p) => `${p.name}[${p.pid}] rss=${(p.rss / 1024).toFixed(1)}M thr=${p.threads} fds=${p.fds}`).join('  ');
  const done = Object.values(counts).reduce((a, c) => a + c.ok + c.err, 0);
  const errs = Object.values(counts).reduce((a, c) => a + c.err, 0);
  const load = loadavg().map((x) => x.toFixed(1)).join(' ');
  console.log(`minute ${minute}: load ${load} actions=${done} errors=${errs} inflight=${inflight} | ${line}`);
}
// The engine is shared: a restart of dockerd during the run (by anyone)
// fails the Docker-backed calls in flight with "cannot reach the Docker
// engine"; it is reported so such errors are not taken for the server's.
const enginePid = () => {
  try {
    return readFileSync('/var/run/docker.pid', 'utf8').trim();
  } catch {
    return null;
  }
};
const engineAtStart = enginePid();
let engineChanges = 0;
let engineLast = engineAtStart;
const start = Date.now();
const end = start + MINUTES * 60000;
sample(0);
const engineWatch = setInterval(() => {
  const now = enginePid();
  if (now !== engineLast) {
    engineChanges++;
    console.log(`soak: the Docker engine restarted at ${Math.round((Date.now() - start) / 1000)} s (dockerd ${engineLast} -> ${now})`);
    engineLast = now;
  }
}, 2000);
const ticker = setInterval(() => sample(Math.round((Date.now() - start) / 60000)), 60000);
const loops = Array.from({ length: CLIENTS }, (_, i) => clientLoop(srv, i, end));
await Promise.all(loops);
clearInterval(ticker);
clearInterval(engineWatch);
sample(`end (${((Date.now() - start) / 60000).toFixed(1)})`);
// Cancelled commands end on the server a few seconds after their client
// went: then the programs are idle.
await sleep(IDLE_WAIT);
const idle = serverPids(srv).map(procInfo).filter(Boolean);

// Flatness after the warm-up (see the top of this file): the samples from
// minute 2 on (the last one taken when the load ended), in two halves.
const warm = samples.filter((s) => typeof s.minute !== 'number' || s.minute >= 2);
const half = Math.ceil(warm.length / 2);
const firstHalf = warm.slice(0, half);
const secondHalf = warm.slice(half);
const maxOf = (set, pid, f) => Math.max(0, ...set.map((s) => s.procs.find((q) => q.pid === pid)?.[f] ?? 0));
let flat = secondHalf.length > 0;
if (!flat) console.log('soak: too short to judge flatness (at least 3 minutes)');
const programs = new Set(srv.programPids(null));
for (const p of samples[samples.length - 1].procs) {
  if (!firstHalf.some((s) => s.procs.some((q) => q.pid === p.pid))) {
    console.log(`soak: ${p.name}[${p.pid}] was not there after the warm-up (restarted?)`);
    flat = false;
    continue;
  }
  const r1 = maxOf(firstHalf, p.pid, 'rss');
  const r2 = maxOf(secondHalf, p.pid, 'rss');
  const f1 = maxOf(firstHalf, p.pid, 'fds');
  const f2 = maxOf(secondHalf, p.pid, 'fds');
  const rssOk = r2 <= r1 * (1 + RSS_GROWTH) + RSS_SLACK;
  // Per thread for a program, per client for the web server.
  const isProgram = programs.has(p.pid);
  const per = isProgram ? FD_PER_THREAD : FD_PER_CLIENT;
  const perIdle = isProgram ? FD_IDLE_PER_THREAD : 1;
  const units = (q) => (isProgram ? q.threads : CLIENTS);
  const what = isProgram ? 'thread' : 'client';
  const over = samples.map((s) => s.procs.find((q) => q.pid === p.pid)).filter((q) => q && q.fds > FD_BASE + per * units(q));
  const q = idle.find((x) => x.pid === p.pid);
  const idleOk = !!q && q.fds <= FD_BASE + perIdle * units(q);
  const fdOk = over.length === 0 && idleOk;
  const bound = `within ${FD_BASE} + ${per} per ${what} ${over.length ? `NO (${over[0].fds} fds, ${over[0].threads} threads)` : 'yes'}; ` +
    `idle ${q?.fds} fds, within ${FD_BASE} + ${perIdle} per ${what} ${idleOk ? 'yes' : 'NO'}`;
  if (!rssOk || !fdOk) flat = false;
  console.log(`soak: ${p.name}[${p.pid}] rss peak ${(r1 / 1024).toFixed(1)}M then ${(r2 / 1024).toFixed(1)}M ` +
    `${rssOk ? 'flat' : 'GROWS'}; fds peak ${f1} then ${f2}, ${bound}; threads ${p.threads}`);
}
for (const [k, c] of Object.entries(counts)) console.log(`soak: ${k}: ${c.ok} ok, ${c.err} errors`);
const sorted = [...groups.entries()].sort((a, b) => b[1].n - a[1].n);
for (const [key, g] of sorted) {
  console.log(`soak error (${g.timeout ? 'no answer in time' : 'server'}): ${g.n} x ${key} [${g.first}-${g.last} s]`);
  console.log(`  e.g. ${g.example}`);
}
const timeouts = sorted.filter(([, g]) => g.timeout).reduce((a, [, g]) => a + g.n, 0);
const reports = srv.sanitizerReports?.() ?? '';
if (reports) console.log(`soak: sanitizer reports:\n${reports}`);
await srv.stop({ keepDir: !!process.env.CS_KEEP_TEST_DIRS });
const totalErr = Object.values(counts).reduce((a, c) => a + c.err, 0);
console.log(`soak: ${web}: ${totalErr} errors (${totalErr - timeouts} answered with an error, ${timeouts} not answered in time), ` +
  `${inflight} unfinished, ${flat ? 'flat' : 'NOT flat'}` +
  (engineChanges ? `; the Docker engine restarted ${engineChanges} time(s) during the run (not by this run): run it again on a quiet engine` : ''));
process.exit(totalErr === 0 && inflight === 0 && flat && !reports ? 0 : 1);
