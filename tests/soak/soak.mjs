// Soak: SOAK_CLIENTS clients (default 200) of mixed traffic for SOAK_MINUTES
// (default 10) against one server behind WEB (lighttpd or caddy): OAuth
// sign-in over raw HTTP, tools/list, short and long execute, share_file and
// the download, get_result, cancellation. Each client is one MCP SDK
// client that waits 1 to 3 s between actions (a busy person, not a flood).
// Every minute it prints the RSS and open file descriptors of every process
// of the server (web server and programs). At the end it stops starting
// actions, waits for every one in flight (each is bounded by a timeout) and
// prints the counts. Exit status 0 only with no error, every action
// finished, and RSS and file descriptors flat from minute 2 to the end.
//
//   node tests/soak/soak.mjs lighttpd|caddy
//
// Traffic goes only to the server on 127.0.0.1. The configuration it
// needs is set below (settings) and printed.

import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { startServer, childPids, sleep } from '../e2e/lib/server.mjs';
import { connect } from '../e2e/lib/client.mjs';
import { rawFlow, register } from '../e2e/lib/oauth.mjs';

const web = process.argv[2] ?? 'lighttpd';
const MINUTES = Number(process.env.SOAK_MINUTES ?? 10);
const CLIENTS = Number(process.env.SOAK_CLIENTS ?? 200);
const ACTION_TIMEOUT = 120000;

// 200 clients share one address (127.0.0.1): the per-address limits are
// raised; /mcp gets enough threads for every client's long command at once.
const settings = {
  SANDBOX_THREADS: 128,
  SANDBOX_REGISTER_PER_HOUR: 1000000,
  SANDBOX_PENDING_SIGNINS: 100000,
  SANDBOX_MEMORY: '1g',
  SANDBOX_CPUS: '1',
  SANDBOX_PIDS_LIMIT: 4096,
  SANDBOX_CLEANUP_INTERVAL: 31536000,
};

function procInfo(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const rss = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
    const name = /Name:\s+(\S+)/.exec(status)?.[1] ?? '?';
    const fds = readdirSync(`/proc/${pid}/fd`).length;
    return { pid, name, rss, fds };
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
const errors = [];
let inflight = 0;
function note(kind, ok, detail) {
  counts[kind] ??= { ok: 0, err: 0 };
  if (ok) counts[kind].ok++;
  else {
    counts[kind].err++;
    if (errors.length < 50) errors.push(`${kind} at ${((Date.now() - t0) / 1000).toFixed(0)} s: ${detail}`);
  }
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
      if (w.structuredContent?.exit_code !== 0) throw new Error('write failed');
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
      if (!id) throw new Error('no run_id');
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
  const line = procs.map((p) => `${p.name}[${p.pid}] rss=${(p.rss / 1024).toFixed(1)}M fds=${p.fds}`).join('  ');
  const done = Object.values(counts).reduce((a, c) => a + c.ok + c.err, 0);
  const errs = Object.values(counts).reduce((a, c) => a + c.err, 0);
  console.log(`minute ${minute}: actions=${done} errors=${errs} inflight=${inflight} | ${line}`);
}
const start = Date.now();
const end = start + MINUTES * 60000;
sample(0);
const ticker = setInterval(() => sample(Math.round((Date.now() - start) / 60000)), 60000);
const loops = Array.from({ length: CLIENTS }, (_, i) => clientLoop(srv, i, end));
await Promise.all(loops);
clearInterval(ticker);
sample(`end (${((Date.now() - start) / 60000).toFixed(1)})`);

let flat = true;
const m2 = samples.find((s) => s.minute === 2) ?? samples[1];
const last = samples[samples.length - 1];
for (const p of last.procs) {
  const b = m2?.procs.find((q) => q.pid === p.pid);
  if (!b) {
    console.log(`soak: ${p.name}[${p.pid}] was not there at minute 2`);
    continue;
  }
  const maxRss = Math.max(...samples.filter((s) => typeof s.minute === 'number' && s.minute >= 2)
    .map((s) => s.procs.find((q) => q.pid === p.pid)?.rss ?? 0), p.rss);
  const rssOk = maxRss <= b.rss * 1.15 + 8192;
  const fdOk = p.fds <= b.fds + 8;
  if (!rssOk || !fdOk) flat = false;
  console.log(`soak: ${p.name}[${p.pid}] rss minute 2 ${(b.rss / 1024).toFixed(1)}M, max after ${(maxRss / 1024).toFixed(1)}M, end ${(p.rss / 1024).toFixed(1)}M ${rssOk ? 'flat' : 'GROWS'}; fds ${b.fds} -> ${p.fds} ${fdOk ? 'flat' : 'GROW'}`);
}
for (const [k, c] of Object.entries(counts)) console.log(`soak: ${k}: ${c.ok} ok, ${c.err} errors`);
for (const e of errors) console.log(`soak error: ${e}`);
const reports = srv.sanitizerReports?.() ?? '';
await srv.stop();
const totalErr = Object.values(counts).reduce((a, c) => a + c.err, 0);
console.log(`soak: ${web}: ${totalErr} errors, ${inflight} unfinished, ${flat ? 'flat' : 'NOT flat'}`);
process.exit(totalErr === 0 && inflight === 0 && flat && !reports ? 0 : 1);
