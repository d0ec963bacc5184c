// The lean-server benchmark (tests/bench/run.sh lean): code-sandbox behind
// lighttpd at its default settings against the Node reference server
// (tests/bench/reference/server.mjs, the official TypeScript SDK v1), in one
// run, interleaved:
//   1. tools/list and ping at 8 concurrent connections (wrk, a real OAuth
//      access token): requests per second, p99, and the server's CPU per
//      request (from /proc of lighttpd and every program, or of the Node
//      process, before and after: each thread's run time, measure.mjs
//      cpuBetween), the web server's share and
//      the programs' share separately (the programs are the part that is
//      ours; the sum is what the host pays);
//   2. memory: PSS (/proc/PID/smaps_rollup) of lighttpd and every program,
//      idle and under the load, per program; RSS at each repetition (flat);
//      and the group in distinct physical pages (footprint.mjs), which no
//      neighbour sharing the same libraries changes;
//      Caddy's own memory separately;
//   3. plain CGI: CPU of one tools/list served by starting the program as a
//      CGI, against the CPU per request of the FastCGI processes.
//
//   BENCH_REPS (default 5) repetitions, BENCH_SECONDS (default 5) of load
//   per measurement, BENCH_CGI (default 40) CGI requests. BENCH_BASE_BIN:
//   a second build's programs (say, the previous commit's build/bin) served
//   the same way and measured in the same rounds, interleaved, for a
//   before/after in one run.

import { execFile, spawn } from 'node:child_process';
import { readFileSync, rmSync, mkdtempSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { startServer, sleep, cmdline, childPids, waitFor } from '../e2e/lib/server.mjs';
import { openSession } from '../e2e/lib/client.mjs';
import { footprintKb } from './footprint.mjs';
import { median, spread, wrkScript as script, wrkLoad, startReference, TICK_MS } from './measure.mjs';
import { register, rawFlow, CLAUDE_REGISTRATION } from '../e2e/lib/oauth.mjs';

const execFileP = promisify(execFile);
const REPS = Number(process.env.BENCH_REPS ?? 5);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CGI_N = Number(process.env.BENCH_CGI ?? 40);

function mem(pid) {
  try {
    const s = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const kb = (k) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(s)?.[1] ?? 0);
    const t = /^Threads:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return { pss: kb('Pss'), rss: kb('Rss'), threads: Number(t?.[1] ?? 0) };
  } catch {
    return { pss: 0, rss: 0, threads: 0 };
  }
}
const name = (pid) => cmdline(pid).split(' ')[0].split('/').pop();
const mib = (kb) => (kb / 1024).toFixed(1);

// One wrk run against one server: rate, p99, CPU per request, memory mid-run.
async function load(target, method, sampleMem) {
  const midway = sampleMem ? (pids) => ({ during: Object.fromEntries(pids.map((p) => [p, mem(p)])), foot: footprintKb(pids) }) : null;
  const r = await wrkLoad(target, method, { seconds: SECONDS, midway });
  return { ...r, during: r.mid?.during ?? null, foot: r.mid?.foot ?? 0 };
}

// tools/list as a plain CGI: the program started once per request.
async function cgiOnce(srv, token, sess) {
  const body = '{"jsonrpc":"2.0","id":1,"method":"tools/list"}';
  const env = {
    PATH: process.env.PATH,
    SANDBOX_ENV_FILE: srv.envFile,
    GATEWAY_INTERFACE: 'CGI/1.1',
    REQUEST_METHOD: 'POST',
    REQUEST_URI: '/mcp',
    SCRIPT_NAME: '/mcp',
    SERVER_NAME: '127.0.0.1',
    SERVER_PORT: String(srv.port),
    SERVER_PROTOCOL: 'HTTP/1.1',
    REMOTE_ADDR: '127.0.0.1',
    HTTP_HOST: `127.0.0.1:${srv.port}`,
    CONTENT_TYPE: 'application/json',
    CONTENT_LENGTH: String(body.length),
    HTTP_ACCEPT: 'application/json, text/event-stream',
    HTTP_AUTHORIZATION: `Bearer ${token}`,
    HTTP_MCP_SESSION_ID: sess.session,
    HTTP_MCP_PROTOCOL_VERSION: sess.version,
  };
  const out = await new Promise((res, rej) => {
    const p = spawn(join(srv.bin, 'mcp'), [], { env, stdio: ['pipe', 'pipe', 'ignore'] });
    let o = '';
    p.stdout.on('data', (d) => (o += d));
    p.on('error', rej);
    p.on('exit', () => res(o));
    p.stdin.end(body);
  });
  if (!/"tools"/.test(out)) throw new Error(`CGI tools/list: ${out.slice(0, 300)}`);
}

function childCpuMs() {
  const s = readFileSync('/proc/self/stat', 'utf8');
  const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
  return (Number(f[13]) + Number(f[14])) * TICK_MS; // cutime, cstime
}

async function main() {
  const load0 = loadavg();
  const srv = await startServer({ name: 'bench-lean', binDir: process.env.CS_BIN ?? 'build/bin', mcpProcs: null });
  const baseSrv = process.env.BENCH_BASE_BIN ? await startServer({ name: 'bench-lean-base', binDir: process.env.BENCH_BASE_BIN, mcpProcs: null }) : null;
  let ref;
  const dir = mkdtempSync(join(tmpdir(), 'cs-bench-'));
  try {
    const client = (await register(srv, CLAUDE_REGISTRATION)).json;
    const { tokens } = await rawFlow(srv, client);
    const token = tokens.access_token;
    const sess = await openSession({ ...srv, key: token });
    let base = null;
    if (baseSrv) {
      const bclient = (await register(baseSrv, CLAUDE_REGISTRATION)).json;
      const btoken = (await rawFlow(baseSrv, bclient)).tokens.access_token;
      const bsess = await openSession({ ...baseSrv, key: btoken });
      base = {
        label: 'base build',
        url: baseSrv.mcpUrl,
        pids: () => [baseSrv.proc.pid, ...baseSrv.programPids(null)],
        scripts: { 'tools/list': script(dir, 'f.lua', 'tools/list', btoken, bsess), ping: script(dir, 'g.lua', 'ping', btoken, bsess) },
      };
    }
    ref = await startReference(srv.container);
    const refSess = await openSession(ref.srvLike);

    const ours = {
      label: 'code-sandbox',
      url: srv.mcpUrl,
      pids: () => [srv.proc.pid, ...srv.programPids(null)],
      scripts: { 'tools/list': script(dir, 'a.lua', 'tools/list', token, sess), ping: script(dir, 'b.lua', 'ping', token, sess) },
    };
    const node = {
      label: 'Node reference',
      url: ref.url,
      pids: () => [ref.proc.pid],
      scripts: { 'tools/list': script(dir, 'c.lua', 'tools/list', ref.token, refSess), ping: script(dir, 'd.lua', 'ping', ref.token, refSess) },
    };
    await sleep(500);
    const idle = Object.fromEntries(ours.pids().map((p) => [p, mem(p)]));
    const baseIdle = base ? base.pids().reduce((t, p) => t + mem(p).pss, 0) : 0;
    const refIdle = mem(ref.proc.pid);
    const footIdle = footprintKb(ours.pids());
    const baseFootIdle = base ? footprintKb(base.pids()) : 0;
    const foot = { ours: 0, base: 0, node: 0 };

    console.log(`code-sandbox lean benchmark: lighttpd + ${srv.bin} (default settings) against the Node reference (tests/bench/reference/server.mjs, @modelcontextprotocol/sdk v1)`);
    console.log(`machine: ${(await execFileP('nproc')).stdout.trim()} cores, load average ${load0.map((x) => x.toFixed(2)).join(' ')} at the start; ${REPS} repetitions, interleaved, ${SECONDS} s each`);
    console.log(`load: wrk -t 2 -c 8 -d ${SECONDS}s --latency -s SCRIPT URL (POST, Authorization: Bearer <OAuth access token>, Mcp-Session-Id, MCP-Protocol-Version)\n`);

    const res = { ours: { 'tools/list': [], ping: [] }, node: { 'tools/list': [], ping: [] }, base: { 'tools/list': [], ping: [] } };
    const rss = {};
    let loaded = null;
    let refLoaded = null;
    let baseLoaded = 0;
    if (base) console.log(`base build (BENCH_BASE_BIN): ${process.env.BENCH_BASE_BIN}, measured in the same rounds\n`);
    for (let i = 0; i < REPS; i++) {
      for (const method of ['tools/list', 'ping']) {
        const all = base ? [ours, node, base] : [ours, node];
        const order = all.map((_, k) => all[(k + i) % all.length]);
        for (const t of order) {
          const r = await load(t, method, method === 'tools/list');
          (t === ours ? res.ours : t === node ? res.node : res.base)[method].push(r);
          if (r.during) foot[t === ours ? 'ours' : t === base ? 'base' : 'node'] = r.foot;
          if (r.during && t === base) baseLoaded = Object.values(r.during).reduce((x, m) => x + m.pss, 0);
          if (r.during && t === ours) {
            loaded = r.during;
            for (const [p, m] of Object.entries(r.during)) (rss[p] ??= []).push(m.rss);
          }
          if (r.during && t === node) refLoaded = r.during[ref.proc.pid];
        }
      }
    }

    for (const method of ['tools/list', 'ping']) {
      const o = res.ours[method];
      const n = res.node[method];
      console.log(`${method === 'tools/list' ? 1 : 2}. ${method}, 8 concurrent`);
      console.log(`   code-sandbox:   rate ${spread(o.map((r) => r.rate), (x) => x.toFixed(0))} req/s; p99 ${spread(o.map((r) => r.p99))} ms; server CPU ${spread(o.map((r) => r.cpu), (x) => x.toFixed(3))} ms/request`);
      console.log(`     of which lighttpd ${spread(o.map((r) => r.web), (x) => x.toFixed(3))} ms/request, the programs ${spread(o.map((r) => r.progs), (x) => x.toFixed(3))} ms/request`);
      console.log(`   Node reference: rate ${spread(n.map((r) => r.rate), (x) => x.toFixed(0))} req/s; p99 ${spread(n.map((r) => r.p99))} ms; server CPU ${spread(n.map((r) => r.cpu), (x) => x.toFixed(3))} ms/request`);
      const ratios = o.map((r, i) => r.cpu / n[i].cpu);
      console.log(`   CPU per request, ours (lighttpd + programs) / Node, per repetition: ${ratios.map((x) => x.toFixed(3)).join(', ')}; ${spread(ratios, (x) => x.toFixed(3))}`);
      const pr = o.map((r, i) => r.progs / n[i].cpu);
      console.log(`   CPU per request, the programs alone / Node, per repetition: ${pr.map((x) => x.toFixed(3)).join(', ')}; ${spread(pr, (x) => x.toFixed(3))}`);
      // lighttpd opens a FastCGI connection per request (1.4 keeps none):
      // its share is the floor under any program behind it.
      const wr = o.map((r, i) => r.web / n[i].cpu);
      console.log(`   CPU per request, lighttpd alone / Node (its floor behind any FastCGI program): ${spread(wr, (x) => x.toFixed(3))}`);
      console.log(`   rate, ours / Node: ${spread(o.map((r, i) => r.rate / n[i].rate))}`);
      const b = res.base[method];
      if (b.length) {
        console.log(`   base build:     rate ${spread(b.map((r) => r.rate), (x) => x.toFixed(0))} req/s; p99 ${spread(b.map((r) => r.p99))} ms; server CPU ${spread(b.map((r) => r.cpu), (x) => x.toFixed(3))} ms/request`);
        console.log(`     of which lighttpd ${spread(b.map((r) => r.web), (x) => x.toFixed(3))} ms/request, the programs ${spread(b.map((r) => r.progs), (x) => x.toFixed(3))} ms/request`);
        console.log(`   CPU per request, ours / base build: ${spread(o.map((r, i) => r.cpu / b[i].cpu), (x) => x.toFixed(3))}; the programs alone: ${spread(o.map((r, i) => r.progs / b[i].progs), (x) => x.toFixed(3))}`);
        console.log(`   base build / Node: ${spread(b.map((r, i) => r.cpu / n[i].cpu), (x) => x.toFixed(3))}; its programs alone / Node: ${spread(b.map((r, i) => r.progs / n[i].cpu), (x) => x.toFixed(3))}`);
      }
      console.log('');
    }

    console.log('3. memory (PSS from /proc/PID/smaps_rollup; under load: halfway through a tools/list run of the last repetition)');
    let ti = 0;
    let tl = 0;
    for (const p of ours.pids()) {
      const a = idle[p] ?? mem(p);
      const b = loaded?.[p] ?? a;
      ti += a.pss;
      tl += b.pss;
      console.log(`   ${name(p).padEnd(10)} pid ${String(p).padEnd(7)} PSS idle ${mib(a.pss).padStart(5)} MiB, under load ${mib(b.pss).padStart(5)} MiB; threads ${a.threads} -> ${b.threads}; RSS under load per repetition ${(rss[p] ?? []).map(mib).join(', ')} MiB`);
    }
    console.log(`   lighttpd + every program: PSS idle ${mib(ti)} MiB, under load ${mib(tl)} MiB`);
    if (base) console.log(`   base build, lighttpd + every program: PSS idle ${mib(baseIdle)} MiB, under load ${mib(baseLoaded)} MiB`);
    console.log(`   lighttpd + every program in distinct physical pages (tests/bench/footprint.mjs: each shared page counted once and wholly, whatever else maps it; what the group holds if it ran alone): idle ${mib(footIdle)} MiB, under load ${mib(foot.ours)} MiB`);
    if (base) console.log(`   base build, the same: idle ${mib(baseFootIdle)} MiB, under load ${mib(foot.base)} MiB`);
    console.log(`   Node reference: PSS idle ${mib(refIdle.pss)} MiB, under load ${mib(refLoaded?.pss ?? 0)} MiB; RSS under load ${mib(refLoaded?.rss ?? 0)} MiB; ratio of PSS under load, Node / ours: ${((refLoaded?.pss ?? 0) / tl).toFixed(1)}x; distinct pages under load ${mib(foot.node)} MiB, Node / ours ${(foot.node / (foot.ours || 1)).toFixed(1)}x`);
    // The target: lighttpd and every program, in distinct pages, at most
    // 0.15 of the Node reference's RSS under the same load.
    const rssRatio = foot.ours / (refLoaded?.rss || 1);
    console.log(`   ours in distinct pages / Node's RSS under load: ${rssRatio.toFixed(3)} (target at most 0.15: ${rssRatio <= 0.15 ? 'met' : 'NOT met'}); against Node's RSS before any request (${mib(refIdle.rss ?? 0)} MiB): ${(footIdle / (refIdle.rss || 1)).toFixed(3)}\n`);

    // 4. plain CGI against FastCGI.
    const fcgi = median(res.ours['tools/list'].map((r) => r.cpu));
    const c0 = childCpuMs();
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < CGI_N; i++) await cgiOnce(srv, token, sess);
    const wall = Number(process.hrtime.bigint() - t0) / 1e6 / CGI_N;
    const cgi = (childCpuMs() - c0) / CGI_N;
    console.log('4. plain CGI: build/bin/mcp started once per tools/list request (stdin/stdout, the CGI environment), sequentially');
    console.log(`   ${CGI_N} requests: CPU ${cgi.toFixed(2)} ms/request (the program alone, without a web server's fork), wall ${wall.toFixed(2)} ms/request`);
    console.log(`   FastCGI (1. above, lighttpd included): ${fcgi.toFixed(3)} ms/request; CGI / FastCGI: ${(cgi / fcgi).toFixed(0)}x\n`);
    console.log(`load average at the end: ${loadavg().map((x) => x.toFixed(2)).join(' ')} (other work shares this machine; see the spread)`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    if (ref) ref.proc.kill('SIGTERM');
    if (baseSrv) await baseSrv.stop();
    await srv.stop();
  }

  // 5. Caddy's own memory, reported separately.
  const cs = await startServer({ name: 'bench-lean-caddy', web: 'caddy', binDir: process.env.CS_BIN ?? 'build/bin', mcpProcs: null });
  try {
    const sess = await openSession(cs);
    const cdir = mkdtempSync(join(tmpdir(), 'cs-bench-'));
    const caddy = () => childPids(cs.proc.pid).flatMap((p) => [p, ...childPids(p)]).filter((p) => name(p) === 'caddy');
    try {
      const [cp] = caddy();
      const a = mem(cp);
      const s = script(cdir, 'e.lua', 'tools/list', cs.key, sess);
      const run = execFileP('wrk', ['-t', '2', '-c', '8', '-d', `${SECONDS}s`, '-s', s, cs.mcpUrl]);
      await sleep((SECONDS * 1000) / 2);
      const b = mem(cp);
      await run;
      const progs = cs.programPids(null).reduce((t, p) => t + mem(p).pss, 0);
      console.log(`5. Caddy (not counted above): caddy pid ${cp} PSS idle ${mib(a.pss)} MiB, under tools/list load ${mib(b.pss)} MiB (RSS ${mib(b.rss)} MiB); the programs behind it ${mib(progs)} MiB PSS after the load`);
    } finally {
      rmSync(cdir, { recursive: true, force: true });
    }
  } finally {
    await cs.stop();
  }
}

main().catch((e) => {
  console.error(`bench: ${e.stack ?? e}`);
  process.exit(1);
});
