// The benchmark behind `make bench` (see tests/bench/run.sh).
//
//   N=30 (env BENCH_N) sequential calls of each kind, after 3 warm-up calls;
//   tools/list for BENCH_SECONDS (default 10) at 8 connections.

import { execFile, spawn } from 'node:child_process';
import { request, Agent } from 'node:http';
import { readFileSync, writeFileSync, rmSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startServer, docker, sleep } from '../e2e/lib/server.mjs';
import { openSession, call } from '../e2e/lib/client.mjs';

const execFileP = promisify(execFile);
const N = Number(process.env.BENCH_N ?? 30);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const WARM = 3;
const SOCK = (process.env.DOCKER_HOST ?? 'unix:///var/run/docker.sock').replace(/^unix:\/\//, '');

const median = (a) => {
  const s = [...a].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const pct = (a, p) => [...a].sort((x, y) => x - y)[Math.min(a.length - 1, Math.floor((a.length * p) / 100))];
const fmt = (ms) => `${ms.toFixed(1)} ms`;
const summary = (a) => `median ${fmt(median(a))}, p90 ${fmt(pct(a, 90))}, min ${fmt(Math.min(...a))}`;

async function timeIt(fn) {
  for (let i = 0; i < WARM; i++) await fn();
  const t = [];
  for (let i = 0; i < N; i++) {
    const t0 = process.hrtime.bigint();
    await fn();
    t.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return t;
}

// The Docker Engine API over its unix socket, as lib/engine/docker.c uses it.
const keepAlive = new Agent({ keepAlive: true, maxSockets: 1 });
function dockerApi(method, path, body, { agent = keepAlive } = {}) {
  return new Promise((res, rej) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      {
        socketPath: SOCK,
        method,
        path: `/v1.41${path}`,
        agent,
        headers: data ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } : {},
      },
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

async function rawExec(container) {
  const c = await dockerApi('POST', `/containers/${container}/exec`, {
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
    Cmd: ['bash', '-c', 'true'],
    WorkingDir: '/sandbox',
  });
  if (c.status !== 201) throw new Error(`exec create: ${c.status} ${c.body}`);
  const id = JSON.parse(c.body).Id;
  // start hijacks its connection: a connection of its own.
  const s = await dockerApi('POST', `/exec/${id}/start`, { Detach: false, Tty: false }, { agent: false });
  if (s.status !== 200) throw new Error(`exec start: ${s.status}`);
  const i = await dockerApi('GET', `/exec/${id}/json`);
  const info = JSON.parse(i.body);
  if (info.ExitCode !== 0) throw new Error(`exec exit code ${info.ExitCode}`);
}

function vm(pid) {
  try {
    const s = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (k) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(s)[1]);
    return { hwm: kb('VmHWM'), rss: kb('VmRSS') };
  } catch {
    return null;
  }
}

function wrk(srv, sess, seconds) {
  const dir = mkdtempSync(join(tmpdir(), 'cs-bench-'));
  const script = join(dir, 'tools-list.lua');
  // The key goes into a private temporary file, never onto a command line or the output.
  writeFileSync(
    script,
    [
      'wrk.method = "POST"',
      `wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'`,
      `wrk.headers["Authorization"] = "Bearer ${srv.key}"`,
      'wrk.headers["Content-Type"] = "application/json"',
      'wrk.headers["Accept"] = "application/json, text/event-stream"',
      `wrk.headers["Mcp-Session-Id"] = "${sess.session}"`,
      `wrk.headers["MCP-Protocol-Version"] = "${sess.version}"`,
      'done = function(summary, latency, requests)',
      '  io.write(string.format("BENCH non2xx=%d errors=%d\\n", summary.errors.status, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))',
      'end',
    ].join('\n'),
    { mode: 0o600 },
  );
  const args = ['-t', '2', '-c', '8', '-d', `${seconds}s`, '--latency', '-s', script, srv.mcpUrl];
  return execFileP('wrk', args, { maxBuffer: 1 << 20 })
    .then(({ stdout }) => ({ stdout, cmd: `wrk ${args.slice(0, -3).join(' ')} -s tools-list.lua ${srv.mcpUrl}` }))
    .finally(() => rmSync(dir, { recursive: true, force: true }));
}

async function main() {
  const srv = await startServer({ name: 'bench', binDir: process.env.CS_BIN ?? 'build/bin', settings: { SANDBOX_MEMORY: '2g', SANDBOX_CPUS: '2' } });
  try {
    const sess = await openSession(srv);
    const exec = async (command, timeout) => {
      const args = { command };
      if (timeout) args.timeout = timeout;
      const r = await call(srv, sess, 'tools/call', { name: 'execute', arguments: args }, { id: 1 });
      if (r.status !== 200 || !r.json?.result) throw new Error(`execute: HTTP ${r.status}: ${r.text.slice(0, 300)}`);
      if (r.json.result.isError) throw new Error(`execute: ${JSON.stringify(r.json.result).slice(0, 300)}`);
      return r.json.result;
    };
    await exec('true'); // creates the container
    const image = (await docker('inspect', '-f', '{{.Config.Image}}', srv.container)).stdout.trim();
    console.log(`code-sandbox benchmark: lighttpd + ${srv.bin}/mcp (2 processes), container ${srv.container} (${image})`);
    console.log(`machine: ${(await execFileP('nproc')).stdout.trim()} cores; N=${N} sequential calls after ${WARM} warm-up calls\n`);

    // 1. execute `true`.
    const tMcp = await timeIt(() => exec('true'));
    const tRaw = await timeIt(() => rawExec(srv.container));
    const tCli = await timeIt(() => execFileP('docker', ['exec', '-w', '/sandbox', srv.container, 'bash', '-c', 'true']));
    console.log('1. execute of `true`, end to end');
    console.log(`   MCP tools/call over HTTP (POST ${srv.mcpUrl}, keep-alive, Mcp-Session-Id):`);
    console.log(`     ${summary(tMcp)}`);
    console.log(`   raw Docker API on ${SOCK} (POST /containers/ID/exec, POST /exec/ID/start, GET /exec/ID/json):`);
    console.log(`     ${summary(tRaw)}`);
    console.log(`   docker exec -w /sandbox ${srv.container} bash -c true:`);
    console.log(`     ${summary(tCli)}`);
    console.log(`   ratio MCP / raw API:     ${(median(tMcp) / median(tRaw)).toFixed(2)}x (median), overhead ${fmt(median(tMcp) - median(tRaw))}`);
    console.log(`   ratio MCP / docker exec: ${(median(tMcp) / median(tCli)).toFixed(2)}x (median)\n`);

    // 2. tools/list at concurrency 8.
    const w = await wrk(srv, sess, SECONDS);
    const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(w.stdout)?.[1] ?? NaN);
    const bad = /BENCH non2xx=(\d+) errors=(\d+)/.exec(w.stdout);
    const lat = /Latency Distribution[\s\S]*?\n\s*50%\s+(\S+)[\s\S]*?\n\s*99%\s+(\S+)/.exec(w.stdout);
    console.log('2. tools/list at concurrency 8');
    console.log(`   command: ${w.cmd}  (Authorization, Mcp-Session-Id and MCP-Protocol-Version headers set in the script)`);
    console.log(`   ${rps.toFixed(0)} requests/s; latency p50 ${lat?.[1]}, p99 ${lat?.[2]}; non-2xx ${bad?.[1]}, socket errors ${bad?.[2]}`);
    console.log(`   ratio to execute of \`true\`: ${(rps * (median(tMcp) / 1000)).toFixed(0)} tools/list calls in the time of one execute\n`);

    // 3. Peak RSS while a command prints 1 GB.
    const pids = srv.programPids('mcp');
    const before = Object.fromEntries(pids.map((p) => [p, vm(p)]));
    let maxRss = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        for (const p of pids) maxRss = Math.max(maxRss, vm(p)?.rss ?? 0);
        await sleep(20);
      }
    })();
    const cmd = 'head -c 1000000000 /dev/zero';
    const t0 = Date.now();
    const big = await exec(cmd, 600);
    const took = Date.now() - t0;
    sampling = false;
    await sampler;
    const after = Object.fromEntries(pids.map((p) => [p, vm(p)]));
    const sc = big.structuredContent;
    console.log(`3. /mcp worker memory while \`${cmd}\` runs (1 GB on stdout)`);
    console.log(`   took ${(took / 1000).toFixed(1)} s (${(1000 / (took / 1000)).toFixed(0)} MB/s); stdout kept ${sc.stdout.length} characters, ${sc.stdout_truncated_bytes} bytes cut`);
    for (const p of pids) {
      console.log(`   pid ${p}: VmHWM before ${(before[p].hwm / 1024).toFixed(1)} MB, after ${(after[p].hwm / 1024).toFixed(1)} MB (x${(after[p].hwm / before[p].hwm).toFixed(2)})`);
    }
    const grow = Math.max(...pids.map((p) => after[p].hwm - before[p].hwm));
    console.log(`   largest peak growth ${(grow / 1024).toFixed(1)} MB = ${((grow * 1024 * 100) / 1e9).toFixed(3)}% of the output; highest RSS sampled ${(maxRss / 1024).toFixed(1)} MB`);
  } finally {
    await srv.stop();
  }
}

main().catch((e) => {
  console.error(`bench: ${e.stack ?? e}`);
  process.exit(1);
});
