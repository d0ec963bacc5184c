// The /dl benchmark (tests/bench/dl.sh, called by tests/bench/run.sh):
// download throughput of a 1 GB file through lighttpd and /dl, then Caddy
// and /dl, as a ratio to reading the same archive stream straight from the
// Docker API over its unix socket, in the same run; and /dl's peak RSS
// (VmHWM) while it sends.
//
//   BENCH_DL_MB (default 1000) file size in MB; BENCH_DL_RUNS (default 5)
//   downloads of each kind, alternating; the median of each is compared.
//   BENCH_DL_WEBS (default "lighttpd caddy"): behind each web server in turn.
// CPU per byte (utime + stime from /proc, before and after each download):
// the engine's (dockerd) for both kinds, and the web server's and /dl's for /dl.
// Both sides are read by curl into /dev/null, so the client costs the same.

import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { startServer, childPids, cmdline } from '../e2e/lib/server.mjs';
import { connect } from '../e2e/lib/client.mjs';

const execFileP = promisify(execFile);
const MB = Number(process.env.BENCH_DL_MB ?? 1000);
const RUNS = Number(process.env.BENCH_DL_RUNS ?? 5);
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

function cpuMs(pid) {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * 10; // utime + stime, USER_HZ 100
  } catch {
    return 0;
  }
}
const cpuOf = (pids) => pids.reduce((t, p) => t + cpuMs(p), 0);

/* curl into /dev/null; returns {bytes, seconds, code}. */
async function curl(args) {
  const { stdout } = await execFileP('curl', ['-sS', '-o', '/dev/null', '-w', '%{http_code} %{size_download} %{time_total}', ...args], {
    maxBuffer: 1 << 20,
  });
  const [code, bytes, seconds] = stdout.trim().split(' ');
  return { code: Number(code), bytes: Number(bytes), seconds: Number(seconds) };
}

async function bench(web) {
  const srv = await startServer({ name: `bench-dl-${web}`, web, binDir: process.env.CS_BIN ?? 'build/bin', mcpProcs: null });
  let mcp;
  try {
    mcp = await connect(srv);
    const path = '/sandbox/bench-dl.bin';
    const t0 = Date.now();
    const w = await mcp.execute({ command: `head -c ${MB}000000 /dev/urandom > ${path} && stat -c %s ${path}`, timeout: 600 });
    if (w.structuredContent.exit_code !== 0) throw new Error(`making the file: ${JSON.stringify(w.structuredContent)}`);
    const size = Number(w.structuredContent.stdout.trim());
    const share = await mcp.client.callTool({ name: 'share_file', arguments: { path } });
    if (share.isError) throw new Error(`share_file: ${JSON.stringify(share.content)}`);
    const url = share.structuredContent.url;
    const rawUrl = `http://localhost/v1.41/containers/${srv.container}/archive?path=${encodeURIComponent(path)}`;
    const rawCmd = `curl --unix-socket ${SOCK} -o /dev/null '${rawUrl}'`;

    const [pid] = srv.programPids('dl');
    const dockerd = (await execFileP('pidof', ['dockerd']).catch(() => ({ stdout: '' }))).stdout.trim().split(/\s+/).filter(Boolean).map(Number);
    // The web server and dl: lighttpd is the server's process; Caddy is a
    // child of tests/setup/serve.sh.
    const webPid = web === 'lighttpd' ? srv.proc.pid : childPids(srv.proc.pid).flatMap((p) => [p, ...childPids(p)]).find((p) => /caddy$/.test(cmdline(p).split(' ')[0]));
    const ours = [webPid, pid];
    // CPU in ms per GB of the download.
    const perGB = (ms, bytes) => (ms / bytes) * 1e9;
    // One small request starts nothing big but loads the program's pages.
    await curl(['-r', '0-0', url]);
    const before = status(pid);

    console.log(`code-sandbox /dl benchmark: ${web} + ${srv.bin}/dl, container ${srv.container}`);
    console.log(`machine: ${(await execFileP('nproc')).stdout.trim()} cores; a ${(size / 1e6).toFixed(0)} MB file of random bytes (made in ${((Date.now() - t0) / 1000).toFixed(1)} s); ${RUNS} downloads of each kind, alternating\n`);

    const dl = [];
    const raw = [];
    let maxRss = 0;
    for (let i = 0; i < RUNS; i++) {
      let e0 = cpuOf(dockerd);
      const r = await curl(['--unix-socket', SOCK, rawUrl]);
      if (r.code !== 200) throw new Error(`raw archive GET: HTTP ${r.code}`);
      r.engine = perGB(cpuOf(dockerd) - e0, r.bytes);
      raw.push(r);
      e0 = cpuOf(dockerd);
      const o0 = cpuOf(ours);
      const p0 = cpuMs(pid);
      const sampler = setInterval(() => {
        try {
          maxRss = Math.max(maxRss, status(pid).rss);
        } catch {
          /* gone */
        }
      }, 50);
      const d = await curl([url]);
      clearInterval(sampler);
      if (d.code !== 200 || d.bytes !== size) throw new Error(`/dl GET: HTTP ${d.code}, ${d.bytes} bytes`);
      d.engine = perGB(cpuOf(dockerd) - e0, d.bytes);
      d.ours = perGB(cpuOf(ours) - o0, d.bytes);
      d.prog = perGB(cpuMs(pid) - p0, d.bytes);
      dl.push(d);
    }
    const after = status(pid);
    const mbps = (r) => r.bytes / 1e6 / r.seconds;
    const dlMbps = median(dl.map(mbps));
    const rawMbps = median(raw.map(mbps));

    console.log('1. throughput');
    console.log(`   raw Docker API (the tar stream, ${((raw[0].bytes - size) / 1024).toFixed(1)} KB of tar framing more):`);
    console.log(`     ${rawCmd}`);
    console.log(`     ${raw.map((r) => mbps(r).toFixed(0)).join(', ')} MB/s; median ${rawMbps.toFixed(0)} MB/s`);
    console.log(`   through ${web} and /dl (the file alone):`);
    console.log(`     curl -o /dev/null '${url.replace(/\/[^/]+\/[^/]+\/[^/]+\/([^/]+)$/, '/ID/EXPIRES/SIG/$1')}'`);
    console.log(`     ${dl.map((r) => mbps(r).toFixed(0)).join(', ')} MB/s; median ${dlMbps.toFixed(0)} MB/s`);
    const ratios = dl.map((d, i) => mbps(d) / mbps(raw[i]));
    console.log(`   ratio /dl / raw API: ${(dlMbps / rawMbps).toFixed(2)} (median throughput); per pair ${ratios.map((x) => x.toFixed(2)).join(', ')} (min ${Math.min(...ratios).toFixed(2)}, max ${Math.max(...ratios).toFixed(2)})`);
    console.log(`   CPU per GB, raw API: dockerd ${median(raw.map((r) => r.engine)).toFixed(0)} ms (median)`);
    console.log(`   CPU per GB, /dl: dockerd ${median(dl.map((r) => r.engine)).toFixed(0)} ms + ${web} and dl ${median(dl.map((r) => r.ours)).toFixed(0)} ms, of which dl ${median(dl.map((r) => r.prog)).toFixed(0)} ms (median; ${web} and dl per download ${dl.map((r) => r.ours.toFixed(0)).join(', ')})\n`);
    console.log('2. /dl memory while sending');
    console.log(`   pid ${pid}: VmHWM before ${(before.hwm / 1024).toFixed(1)} MB, after ${(after.hwm / 1024).toFixed(1)} MB (grew ${((after.hwm - before.hwm) / 1024).toFixed(1)} MB while sending ${((RUNS * size) / 1e9).toFixed(1)} GB); highest RSS sampled ${(maxRss / 1024).toFixed(1)} MB`);

    await mcp.execute({ command: `rm -f ${path}` });
  } catch (e) {
    console.error(srv.logs().split('\n').filter((l) => !/migrated/.test(l)).slice(-20).join('\n'));
    throw e;
  } finally {
    if (mcp) await mcp.close();
    await srv.stop();
  }
}

for (const web of (process.env.BENCH_DL_WEBS ?? 'lighttpd caddy').split(/\s+/).filter(Boolean)) {
  await bench(web);
  console.log('');
}
