// The tail of execute (tests/bench/run.sh tail): execute of `true`, one call
// at a time (MCP tools/call over HTTP, keep-alive, an OAuth access token),
// code-sandbox behind lighttpd at its default settings against the Node
// reference server (tests/bench/reference/server.mjs) working in the same
// container, interleaved: BENCH_REPS (default 3) repetitions of
// BENCH_SECONDS (default 15) each, the one that goes first alternating.
// Printed per server: p50 and p99 per repetition, their median (min–max).
// The check (exit 1 when not met): in every repetition our p99 is at most
// twice our p50 of the same run, and the median of our p99s is no worse
// than the Node reference's. The guard's refreshes (the engine inspect
// behind the trust of a passing verdict, the canary, the disk samples) run
// beside the requests, not in them: a p99 far above the p50 is a request
// that waited for one.

import { execFile } from 'node:child_process';
import { loadavg } from 'node:os';
import { promisify } from 'node:util';
import { startServer } from '../e2e/lib/server.mjs';
import { openSession, call } from '../e2e/lib/client.mjs';
import { register, rawFlow, CLAUDE_REGISTRATION } from '../e2e/lib/oauth.mjs';
import { median, span, startReference } from './measure.mjs';

const execFileP = promisify(execFile);
const REPS = Number(process.env.BENCH_REPS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
const WARM = 20;

const pct = (a, p) => {
  const s = [...a].sort((x, y) => x - y);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};

/* execute of `true` through srv (url, key) in session sess: a call. */
function executor(label, srv, sess) {
  return async () => {
    const r = await call(srv, sess, 'tools/call', { name: 'execute', arguments: { command: 'true' } }, { id: 1 });
    if (r.status !== 200 || !r.json?.result || r.json.result.isError) throw new Error(`${label} execute: HTTP ${r.status}: ${r.text.slice(0, 300)}`);
  };
}

/* One call at a time for SECONDS: p50, p99, count. */
async function run(exec) {
  const times = [];
  const end = process.hrtime.bigint() + BigInt(Math.round(SECONDS * 1e9));
  for (let now = process.hrtime.bigint(); now < end; ) {
    await exec();
    const after = process.hrtime.bigint();
    times.push(Number(after - now) / 1e6);
    now = after;
  }
  return { p50: median(times), p99: pct(times, 99), max: Math.max(...times), n: times.length };
}

async function main() {
  const load0 = loadavg();
  const srv = await startServer({ name: 'bench-tail', binDir: process.env.CS_BIN ?? 'build/bin', mcpProcs: null });
  let ref;
  try {
    const client = (await register(srv, CLAUDE_REGISTRATION)).json;
    const token = (await rawFlow(srv, client)).tokens.access_token;
    const as = { ...srv, key: token };
    const ours = executor('code-sandbox', as, await openSession(as));
    for (let i = 0; i < WARM; i++) await ours(); // the first creates the container
    ref = await startReference(srv.container);
    const node = executor('Node reference', ref.srvLike, await openSession(ref.srvLike));
    for (let i = 0; i < WARM; i++) await node();

    console.log(`execute tail: lighttpd + ${srv.bin} (default settings) against the Node reference (tests/bench/reference/server.mjs), the same container`);
    console.log(`machine: ${(await execFileP('nproc')).stdout.trim()} cores, load average ${load0.map((x) => x.toFixed(2)).join(' ')} at the start; ${REPS} repetitions, interleaved, ${SECONDS} s each, one call at a time\n`);
    const res = { ours: [], node: [] };
    for (let i = 0; i < REPS; i++) {
      const order = i % 2 ? ['node', 'ours'] : ['ours', 'node'];
      for (const k of order) res[k].push(await run(k === 'ours' ? ours : node));
    }
    const f = (v) => v.toFixed(1);
    for (const [k, label] of [['ours', 'code-sandbox  '], ['node', 'Node reference']]) {
      const r = res[k];
      console.log(`   ${label} p50 ${span(r.map((x) => x.p50), f)} ms; p99 ${span(r.map((x) => x.p99), f)} ms; max ${span(r.map((x) => x.max), f)} ms; calls ${span(r.map((x) => x.n), (v) => v.toFixed(0))}`);
      console.log(`     per repetition p50/p99: ${r.map((x) => `${f(x.p50)}/${f(x.p99)}`).join(', ')}`);
    }
    const ratios = res.ours.map((x) => x.p99 / x.p50);
    const oursP99 = median(res.ours.map((x) => x.p99));
    const nodeP99 = median(res.node.map((x) => x.p99));
    const tailOk = ratios.every((x) => x <= 2);
    const refOk = oursP99 <= nodeP99;
    console.log(`   ours p99 / p50 per repetition: ${ratios.map((x) => x.toFixed(2)).join(', ')} (target at most 2 in each: ${tailOk ? 'met' : 'NOT met'})`);
    console.log(`   ours p99 ${f(oursP99)} ms against the Node reference's ${f(nodeP99)} ms (medians; target no worse: ${refOk ? 'met' : 'NOT met'})`);
    console.log(`load average at the end: ${loadavg().map((x) => x.toFixed(2)).join(' ')} (other work shares this machine; see the spread)`);
    if (!tailOk || !refOk) process.exitCode = 1;
  } finally {
    if (ref) ref.proc.kill('SIGTERM');
    await srv.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
