// The preview benchmark (tests/bench/run.sh preview): the same requests
// sent through a preview link (lighttpd, the preview program, the
// supervisor in the container) and straight from the host to the
// container's address, in one run, interleaved:
//   1. latency of a 1 KiB page, keep-alive on the client's side: p50 and
//      spread of each;
//   2. a large response (BENCH_PREVIEW_MB, default 1000): throughput of
//      each, the preview program's peak RSS and its CPU per MB, and
//      the engine's exec stream alone (docker exec cat of the same file);
//   3. 50 connections at once through the link: errors.
//
//   BENCH_PREVIEW_MB (default 1000), BENCH_PREVIEW_RUNS (default 3),
//   BENCH_PREVIEW_REQS (default 200 per kind, latency).

import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { promisify } from 'node:util';
import { startServer, docker } from '../e2e/lib/server.mjs';
import { connect } from '../e2e/lib/client.mjs';

const execFileP = promisify(execFile);
const MB = Number(process.env.BENCH_PREVIEW_MB ?? 1000);
const RUNS = Number(process.env.BENCH_PREVIEW_RUNS ?? 3);
const REQS = Number(process.env.BENCH_PREVIEW_REQS ?? 200);

const median = (a) => {
  const s = [...a].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const pct = (a, p) => [...a].sort((x, y) => x - y)[Math.min(a.length - 1, Math.floor(a.length * p))];

function get(agent, host, port, path, hostHeader, cookie) {
  return new Promise((resolve, reject) => {
    const t = process.hrtime.bigint();
    const req = request({ agent, host, port, path, headers: { Host: hostHeader, ...(cookie ? { Cookie: cookie } : {}) } }, (res) => {
      let n = 0;
      res.on('data', (c) => (n += c.length));
      res.on('end', () => resolve({ status: res.statusCode, n, ms: Number(process.hrtime.bigint() - t) / 1e6, headers: res.headers }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

function cpuTicks(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(f[11]) + Number(f[12]);
}
function hwm(pid) {
  return Number(/^VmHWM:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
}

const srv = await startServer({ name: 'bench-preview', binDir: 'build/bin', web: 'lighttpd' });
try {
  const mcp = await connect(srv);
  const r = await mcp.execute({ command: `mkdir -p /sandbox/bench && cd /sandbox/bench && head -c 1024 /dev/urandom > page.bin && ` +
    `head -c ${MB * 1000000} /dev/zero > big.bin && (setsid nohup python3 -m http.server 8000 --bind 0.0.0.0 > /tmp/bench-http.log 2>&1 &) && sleep 1 && curl -sI localhost:8000/page.bin | head -1`, timeout: 600 });
  if (r.structuredContent.exit_code !== 0) throw new Error(r.structuredContent.stderr);
  const ip = (await docker('inspect', '-f', '{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}', srv.container)).stdout.trim().split(' ')[0];
  const l = (await mcp.client.callTool({ name: 'preview_link', arguments: { port: 8000 } })).structuredContent;
  const u = new URL(l.url);
  const first = await get(undefined, '127.0.0.1', u.port, u.pathname, u.host);
  const cookie = first.headers['set-cookie'][0].split(';')[0];
  const pid = srv.programPids('preview')[0];
  console.log(`preview bench: ${ip}:8000 direct, ${u.host} through lighttpd`);

  // 1. Latency, interleaved.
  const ka = new Agent({ keepAlive: true, maxSockets: 1 });
  const lat = { direct: [], preview: [] };
  for (let i = 0; i < 10; i++) { await get(ka, ip, 8000, '/page.bin', `${ip}:8000`); await get(ka, '127.0.0.1', u.port, '/page.bin', u.host, cookie); }
  for (let i = 0; i < REQS; i++) {
    lat.direct.push((await get(ka, ip, 8000, '/page.bin', `${ip}:8000`)).ms);
    const p = await get(ka, '127.0.0.1', u.port, '/page.bin', u.host, cookie);
    if (p.status !== 200 || p.n !== 1024) throw new Error(`preview answered ${p.status} with ${p.n} bytes`);
    lat.preview.push(p.ms);
  }
  const f = (a) => `p50 ${median(a).toFixed(1)} ms (p10 ${pct(a, 0.1).toFixed(1)}, p90 ${pct(a, 0.9).toFixed(1)})`;
  console.log(`  1 KiB page, ${REQS} each: direct ${f(lat.direct)}; preview ${f(lat.preview)}; difference of p50s ${(median(lat.preview) - median(lat.direct)).toFixed(1)} ms (target: at most 3 ms)`);

  // 2. Throughput, interleaved; the preview program's CPU and peak RSS.
  const tp = { direct: [], preview: [] };
  let ticks = 0;
  for (let i = 0; i < RUNS; i++) {
    const d = await execFileP('curl', ['-sS', '-o', '/dev/null', '-w', '%{size_download} %{time_total}', `http://${ip}:8000/big.bin`], { maxBuffer: 1 << 20 });
    const [db, ds] = d.stdout.trim().split(' ').map(Number);
    tp.direct.push(db / 1e6 / ds);
    const c0 = cpuTicks(pid);
    const p = await execFileP('curl', ['-sS', '-o', '/dev/null', '-H', `Host: ${u.host}`, '-H', `Cookie: ${cookie}`, '-w', '%{size_download} %{time_total}',
      `http://127.0.0.1:${u.port}/big.bin`], { maxBuffer: 1 << 20 });
    ticks += cpuTicks(pid) - c0;
    const [pb, ps] = p.stdout.trim().split(' ').map(Number);
    if (pb !== db) throw new Error(`preview sent ${pb} bytes, direct ${db}`);
    tp.preview.push(pb / 1e6 / ps);
  }
  const g = (a) => `${median(a).toFixed(0)} MB/s (${Math.min(...a).toFixed(0)}-${Math.max(...a).toFixed(0)})`;
  console.log(`  ${MB} MB, ${RUNS} each: direct ${g(tp.direct)}; preview ${g(tp.preview)}; ratio ${(median(tp.preview) / median(tp.direct)).toFixed(2)} (target: at least 0.5)`);
  console.log(`  preview program: ${(ticks * 10 / (MB * RUNS)).toFixed(2)} ms CPU per MB; peak RSS ${hwm(pid)} KiB`);

  // The engine's exec stream alone, the pipe previews go through: a
  // `docker exec` printing the same bytes, read to the end.
  const ex = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = process.hrtime.bigint();
    const e = await execFileP('sh', ['-c', `docker exec ${srv.container} cat /sandbox/bench/big.bin | wc -c`], { maxBuffer: 1 << 20 });
    const s = Number(process.hrtime.bigint() - t0) / 1e9;
    if (Number(e.stdout.trim()) !== MB * 1000000) throw new Error(`docker exec gave ${e.stdout.trim()} bytes`);
    ex.push(MB / s);
  }
  console.log(`  the engine's exec stream (docker exec cat, ${RUNS} runs): ${g(ex)}; ratio to direct ${(median(ex) / median(tp.direct)).toFixed(2)}`);

  // 3. 50 connections at once.
  const many = await Promise.allSettled(Array.from({ length: 50 }, () => get(new Agent({ keepAlive: false }), '127.0.0.1', u.port, '/page.bin', u.host, cookie)));
  const errors = many.filter((x) => x.status !== 'fulfilled' || x.value.status !== 200 || x.value.n !== 1024).length;
  const times = many.filter((x) => x.status === 'fulfilled').map((x) => x.value.ms);
  console.log(`  50 connections at once: ${errors} errors; slowest ${Math.max(...times).toFixed(0)} ms`);
  await mcp.close?.();
} finally {
  await srv.stop();
}
