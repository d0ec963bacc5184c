// The /up benchmark (tests/bench/run.sh up): upload throughput of a 1 GB
// file with curl -T through an upload link, behind lighttpd and behind
// Caddy, as a ratio to PUTting the same bytes (as a tar, as /up sends them)
// straight into the Docker Engine API's archive endpoint over its unix
// socket, in the same run, alternating; and the up program's peak RSS.
//
//   BENCH_UP_MB (default 1000) file size in MB; BENCH_UP_RUNS (default 3)
//   uploads of each kind per web server; BENCH_UP_WEB (default
//   "lighttpd caddy"). Medians are compared; min and max show the spread.
//
// Both sides are sent by curl from the same file on this machine's disk.
// Behind lighttpd the time includes lighttpd reading the whole body to its
// spool before the program starts (lighttpd.conf explains why); behind
// Caddy the body streams through.

import { execFile } from 'node:child_process';
import { randomFillSync } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startServer } from '../e2e/lib/server.mjs';
import { connect } from '../e2e/lib/client.mjs';

const execFileP = promisify(execFile);
const MB = Number(process.env.BENCH_UP_MB ?? 1000);
const RUNS = Number(process.env.BENCH_UP_RUNS ?? 3);
const WEBS = (process.env.BENCH_UP_WEB ?? 'lighttpd caddy').split(/\s+/).filter(Boolean);
const SOCK = (process.env.DOCKER_HOST ?? 'unix:///var/run/docker.sock').replace(/^unix:\/\//, '');

const median = (a) => {
  const s = [...a].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

function status(pid) {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(s)?.[1] ?? 0);
  return { hwm: kb('VmHWM'), rss: kb('VmRSS') };
}

/* curl -T FILE URL; returns {code, bytes uploaded, seconds}. */
async function curlPut(file, url, extra = []) {
  const { stdout } = await execFileP('curl', ['-sS', '-o', '/dev/null', '-w', '%{http_code} %{size_upload} %{time_total}',
    ...extra, '-T', file, url], { maxBuffer: 1 << 20 });
  const [code, bytes, seconds] = stdout.trim().split(' ');
  return { code: Number(code), bytes: Number(bytes), seconds: Number(seconds) };
}

const dir = mkdtempSync(join(tmpdir(), 'cs-bench-up-'));
const file = join(dir, 'bench-up.bin');
const tarFile = join(dir, 'bench-up.tar');
try {
  // The file: random (incompressible) bytes, and the same as a tar.
  const t0 = Date.now();
  const fd = openSync(file, 'w');
  const chunk = Buffer.alloc(1 << 20);
  for (let i = 0; i < MB; i++) {
    randomFillSync(chunk);
    writeSync(fd, chunk, 0, Math.min(chunk.length, 1000000));
  }
  closeSync(fd);
  await execFileP('tar', ['-cf', tarFile, '-C', dir, 'bench-up.bin']);
  const size = MB * 1000000;
  console.log(`code-sandbox /up benchmark: a ${MB} MB file (made in ${((Date.now() - t0) / 1000).toFixed(1)} s); ` +
    `${RUNS} uploads of each kind per web server, alternating; ${(await execFileP('nproc')).stdout.trim()} cores\n`);

  for (const web of WEBS) {
    const srv = await startServer({ name: `bench-up-${web}`, web, binDir: process.env.CS_BIN ?? 'build/bin',
      settings: { SANDBOX_UPLOAD_MAX_BYTES: '1t', SANDBOX_MEMORY: '1g' } });
    let mcp;
    try {
      mcp = await connect(srv);
      await mcp.execute({ command: 'mkdir -p /sandbox/bench-raw /sandbox/bench-up', timeout: 60 });
      const rawUrl = `http://localhost/v1.41/containers/${srv.container}/archive?path=${encodeURIComponent('/sandbox/bench-raw')}`;
      const link = await mcp.client.callTool({ name: 'upload_link', arguments: { folder: '/sandbox/bench-up', overwrite: true } });
      if (link.isError) throw new Error(`upload_link: ${JSON.stringify(link.content)}`);
      const url = `${link.structuredContent.url}bench-up.bin`;
      // A small upload loads the program's pages first.
      const warm = join(dir, 'warm');
      rmSync(warm, { force: true });
      await execFileP('sh', ['-c', `printf x > ${warm}`]);
      await curlPut(warm, `${link.structuredContent.url}warm`);
      const [pid] = srv.programPids('up');
      const before = status(pid);
      let maxRss = 0;

      const raw = [];
      const up = [];
      for (let i = 0; i < RUNS; i++) {
        const r = await curlPut(tarFile, rawUrl, ['--unix-socket', SOCK, '-H', 'Content-Type: application/x-tar']);
        if (r.code !== 200) throw new Error(`raw archive PUT: HTTP ${r.code}`);
        raw.push(r);
        await mcp.execute({ command: 'rm -f /sandbox/bench-raw/bench-up.bin', timeout: 60 });
        const sampler = setInterval(() => {
          try {
            maxRss = Math.max(maxRss, status(pid).rss);
          } catch {
            /* gone */
          }
        }, 50);
        const u = await curlPut(file, url);
        clearInterval(sampler);
        if (u.code !== 201 || u.bytes !== size) throw new Error(`/up PUT: HTTP ${u.code}, ${u.bytes} bytes`);
        up.push(u);
        await mcp.execute({ command: 'rm -f /sandbox/bench-up/bench-up.bin', timeout: 60 });
      }
      const after = status(pid);
      const mbps = (r) => size / 1e6 / r.seconds;
      const rawM = median(raw.map(mbps));
      const upM = median(up.map(mbps));
      const spread = (a) => `${Math.min(...a.map(mbps)).toFixed(0)}-${Math.max(...a.map(mbps)).toFixed(0)}`;
      console.log(`behind ${web}:`);
      console.log(`  raw Engine API archive PUT (the file as a tar, ${((raw[0].bytes - size) / 1024).toFixed(1)} KB of tar framing more):`);
      console.log(`    curl --unix-socket ${SOCK} -T bench-up.tar '${rawUrl}'`);
      console.log(`    ${raw.map((r) => mbps(r).toFixed(0)).join(', ')} MB/s; median ${rawM.toFixed(0)} (spread ${spread(raw)})`);
      console.log(`  through ${web} and /up (curl -T bench-up.bin LINK/bench-up.bin):`);
      console.log(`    ${up.map((r) => mbps(r).toFixed(0)).join(', ')} MB/s; median ${upM.toFixed(0)} (spread ${spread(up)})`);
      console.log(`  ratio /up / raw API: ${(upM / rawM).toFixed(2)} (median throughput)`);
      console.log(`  up (pid ${pid}): VmHWM ${(before.hwm / 1024).toFixed(1)} MB before, ${(after.hwm / 1024).toFixed(1)} MB after ` +
        `${((RUNS * size) / 1e9).toFixed(1)} GB; highest RSS sampled ${(maxRss / 1024).toFixed(1)} MB\n`);
    } catch (e) {
      console.log(srv.logs().split('\n').slice(-30).join('\n'));
      throw e;
    } finally {
      if (mcp) await mcp.close();
      await srv.stop();
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
