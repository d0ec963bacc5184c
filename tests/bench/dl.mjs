// The /dl benchmark (tests/bench/dl.sh, called by tests/bench/run.sh):
// download throughput of a 1 GB file through lighttpd and /dl, then Caddy
// and /dl, as a ratio to reading the same archive stream straight from the
// Docker API over its unix socket, in the same run; and /dl's peak RSS
// (VmHWM) while it sends.
//
//   BENCH_DL_MB (default 1000) file size in MB; BENCH_DL_RUNS (default 5)
//   downloads of each kind, alternating; the median of each is compared.
//   BENCH_DL_WEBS (default "lighttpd caddy"): behind each web server in turn.
//   BENCH_BASE_BIN: a second build's programs (e.g. main's build/bin), served
//   by a second instance behind the same web server and measured in the same
//   rounds, its downloads interleaved with the others.
// CPU per byte (utime + stime from /proc, before and after each download):
// the engine's (dockerd; not the archive helper it starts per request) for
// both kinds, the web server's and /dl's for /dl, and the client's (curl, a
// child of this process: cutime + cstime); and the whole machine's busy CPU
// per GB with its idle share (/proc/stat), which says whether the two cores
// were the limit. Both sides are read by the same curl into /dev/null; the
// raw side is curl --unix-socket to the engine.

import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { promisify } from 'node:util';
import { startServer, childPids, cmdline } from '../e2e/lib/server.mjs';
import { connect } from '../e2e/lib/client.mjs';

const execFileP = promisify(execFile);
const MB = Number(process.env.BENCH_DL_MB ?? 1000);
const RUNS = Number(process.env.BENCH_DL_RUNS ?? 5);
const SOCK = (process.env.DOCKER_HOST ?? 'unix:///var/run/docker.sock').replace(/^unix:\/\//, '');
const BASE = process.env.BENCH_BASE_BIN ?? '';

const median = (a) => {
  const s = [...a].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
/* "median (min–max)" */
const spread = (a, f = (x) => x.toFixed(2)) => `${f(median(a))} (${f(Math.min(...a))}–${f(Math.max(...a))})`;
const load = () => loadavg().map((x) => x.toFixed(2)).join(' ');

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
/* The engine's: dockerd's own. It writes an archive through a helper process
 * it starts per request, whose CPU reaches dockerd's children's only when
 * dockerd reaps it, at no fixed time: the whole machine's figure holds it. */
const cpuOf = (pids) => pids.reduce((t, p) => t + cpuMs(p), 0);
/* Bytes a process wrote by system calls (/proc/PID/io wchar): the web server
 * writes each body byte to the client once, and again when it goes through
 * a temporary file (lighttpd past 64 KiB held); sendfile counts once. */
function wchar(pid) {
  try {
    return Number(/^wchar:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}
/* CPU of this process's waited-for children (curl). */
function childCpuMs() {
  const s = readFileSync('/proc/self/stat', 'utf8');
  const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
  return (Number(f[13]) + Number(f[14])) * 10;
}
/*
 * The whole machine's CPU (/proc/stat, ms): busy (user, nice, system, irq,
 * softirq, steal) and idle (idle, iowait). Busy per GB is every process's
 * share at once, the engine's archive helper (a child dockerd starts per
 * request, whose CPU no pid above holds) included; the idle share tells
 * whether a download was held by CPU (none idle) or by waiting.
 */
function machineMs() {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  return { busy: (f[0] + f[1] + f[2] + f[5] + f[6] + f[7]) * 10, idle: (f[3] + f[4]) * 10 };
}
function machineSince(m0, bytes) {
  const m1 = machineMs();
  const busy = m1.busy - m0.busy;
  const idle = m1.idle - m0.idle;
  return { busy: perGB(busy, bytes), idle: busy + idle > 0 ? idle / (busy + idle) : 0 };
}
// CPU in ms per GB of the download.
const perGB = (ms, bytes) => (ms / bytes) * 1e9;

/* curl into /dev/null; returns {bytes, seconds, code, client}. */
async function curl(args) {
  const c0 = childCpuMs();
  const { stdout } = await execFileP('curl', ['-sS', '-o', '/dev/null', '-w', '%{http_code} %{size_download} %{time_total}', ...args], {
    maxBuffer: 1 << 20,
  });
  const [code, bytes, seconds] = stdout.trim().split(' ');
  return { code: Number(code), bytes: Number(bytes), seconds: Number(seconds), client: perGB(childCpuMs() - c0, Number(bytes)) };
}
const mbps = (r) => r.bytes / 1e6 / r.seconds;

/* An instance with a shared file of MB megabytes; what to measure it by. */
async function instance(web, name, binDir) {
  const srv = await startServer({ name, web, binDir, mcpProcs: null });
  const t = { srv, mcp: null, dl: [], maxRss: 0 };
  try {
    t.mcp = await connect(srv);
    t.path = '/sandbox/bench-dl.bin';
    const t0 = Date.now();
    const w = await t.mcp.execute({ command: `head -c ${MB}000000 /dev/urandom > ${t.path} && stat -c %s ${t.path}`, timeout: 600 });
    if (w.structuredContent.exit_code !== 0) throw new Error(`making the file: ${JSON.stringify(w.structuredContent)}`);
    t.made = (Date.now() - t0) / 1000;
    t.size = Number(w.structuredContent.stdout.trim());
    const share = await t.mcp.client.callTool({ name: 'share_file', arguments: { path: t.path } });
    if (share.isError) throw new Error(`share_file: ${JSON.stringify(share.content)}`);
    t.url = share.structuredContent.url;
    t.rawUrl = `http://localhost/v1.41/containers/${srv.container}/archive?path=${encodeURIComponent(t.path)}`;
    [t.pid] = srv.programPids('dl');
    // The web server and dl: lighttpd is the server's process; Caddy is a
    // child of tests/setup/serve.sh.
    t.webPid = web === 'lighttpd' ? srv.proc.pid : childPids(srv.proc.pid).flatMap((p) => [p, ...childPids(p)]).find((p) => /caddy$/.test(cmdline(p).split(' ')[0]));
    // One small request starts nothing big but loads the program's pages.
    await curl(['-r', '0-0', t.url]);
    t.before = status(t.pid);
  } catch (e) {
    await close(t, e);
    throw e;
  }
  return t;
}

async function close(t, e) {
  if (e) console.error(t.srv.logs().split('\n').filter((l) => !/migrated/.test(l)).slice(-20).join('\n'));
  try {
    if (t.mcp && !e) await t.mcp.execute({ command: `rm -f ${t.path}` });
  } finally {
    if (t.mcp) await t.mcp.close();
    await t.srv.stop();
  }
}

/* One download through the web server and /dl, with its CPU per GB. */
async function download(t, dockerd) {
  const e0 = cpuOf(dockerd);
  const w0 = cpuMs(t.webPid);
  const p0 = cpuMs(t.pid);
  const io0 = wchar(t.webPid);
  const m0 = machineMs();
  const sampler = setInterval(() => {
    try {
      t.maxRss = Math.max(t.maxRss, status(t.pid).rss);
    } catch {
      /* gone */
    }
  }, 50);
  const d = await curl([t.url]);
  d.machine = machineSince(m0, d.bytes);
  clearInterval(sampler);
  if (d.code !== 200 || d.bytes !== t.size) throw new Error(`/dl GET: HTTP ${d.code}, ${d.bytes} bytes`);
  d.engine = perGB(cpuOf(dockerd) - e0, d.bytes);
  d.web = perGB(cpuMs(t.webPid) - w0, d.bytes);
  d.prog = perGB(cpuMs(t.pid) - p0, d.bytes);
  // What the web server wrote past the body and its headers: temporary files.
  d.spill = Math.max(0, wchar(t.webPid) - io0 - d.bytes - 4096);
  d.ours = d.web + d.prog;
  t.dl.push(d);
  return d;
}

/* Busy CPU per GB of the whole machine, and its idle share. */
const machineLine = (a) =>
  `busy ${spread(a.map((r) => r.machine.busy), (x) => x.toFixed(0))} ms of CPU per GB, idle ${spread(a.map((r) => r.machine.idle * 100), (x) => x.toFixed(0))}% of the time`;
/*
 * What the machine's CPU alone allows: were both kinds held by CPU only, the
 * ratio of throughputs would be the inverse ratio of their busy CPU per GB.
 */
const machineBound = (dl, raw) =>
  `with every core busy the ratio could be at most ${(median(raw.map((r) => r.machine.busy)) / median(dl.map((r) => r.machine.busy))).toFixed(2)} (raw's busy CPU per GB / this one's)`;

function report(t, web, label, raw) {
  const dl = t.dl;
  const after = status(t.pid);
  const ratios = dl.map((d, i) => mbps(d) / mbps(raw[i]));
  console.log(`   through ${web} and /dl, ${label} (the file alone):`);
  console.log(`     curl -o /dev/null '${t.url.replace(/\/[^/]+\/[^/]+\/[^/]+\/([^/]+)$/, '/ID/EXPIRES/SIG/$1')}'`);
  console.log(`     ${dl.map((r) => mbps(r).toFixed(0)).join(', ')} MB/s; median ${median(dl.map(mbps)).toFixed(0)} MB/s`);
  console.log(`     ratio to the raw API, per pair ${ratios.map((x) => x.toFixed(2)).join(', ')}: ${spread(ratios)}; of the medians ${(median(dl.map(mbps)) / median(raw.map(mbps))).toFixed(2)}`);
  console.log(`     CPU per GB (median, min–max): dockerd ${spread(dl.map((r) => r.engine), (x) => x.toFixed(0))} ms; ${web} ${spread(dl.map((r) => r.web), (x) => x.toFixed(0))} ms; dl ${spread(dl.map((r) => r.prog), (x) => x.toFixed(0))} ms; curl ${spread(dl.map((r) => r.client), (x) => x.toFixed(0))} ms`);
  console.log(`     the whole machine: ${machineLine(dl)}; ${machineBound(dl, raw)}`);
  console.log(`     ${web} wrote to temporary files: ${spread(dl.map((r) => r.spill / 1e6), (x) => x.toFixed(0))} MB per download (/proc/PID/io wchar less the body)`);
  console.log(`     /dl memory: pid ${t.pid} VmHWM before ${(t.before.hwm / 1024).toFixed(1)} MB, after ${(after.hwm / 1024).toFixed(1)} MB (grew ${((after.hwm - t.before.hwm) / 1024).toFixed(1)} MB while sending ${((dl.length * t.size) / 1e9).toFixed(1)} GB); highest RSS sampled ${(t.maxRss / 1024).toFixed(1)} MB`);
  return ratios;
}

async function bench(web) {
  const load0 = load();
  const ours = await instance(web, `bench-dl-${web}`, process.env.CS_BIN ?? 'build/bin');
  let base = null;
  try {
    if (BASE) base = await instance(web, `bench-dl-base-${web}`, BASE);
    const dockerd = (await execFileP('pidof', ['dockerd']).catch(() => ({ stdout: '' }))).stdout.trim().split(/\s+/).filter(Boolean).map(Number);
    const rawCmd = `curl --unix-socket ${SOCK} -o /dev/null '${ours.rawUrl}'`;

    console.log(`code-sandbox /dl benchmark: ${web} + ${ours.srv.bin}/dl, container ${ours.srv.container}`);
    if (base) console.log(`base build (BENCH_BASE_BIN): ${base.srv.bin}/dl behind a second ${web}, container ${base.srv.container}`);
    console.log(`machine: ${(await execFileP('nproc')).stdout.trim()} cores, load average ${load0} at the start; a ${(ours.size / 1e6).toFixed(0)} MB file of random bytes (made in ${ours.made.toFixed(1)} s); ${RUNS} downloads of each kind, interleaved\n`);

    const raw = [];
    for (let i = 0; i < RUNS; i++) {
      // The order turns each round, so no kind always follows another.
      const kinds = base ? ['raw', 'ours', 'base'] : ['raw', 'ours'];
      for (let k = 0; k < kinds.length; k++) {
        const kind = kinds[(k + i) % kinds.length];
        if (kind === 'raw') {
          const e0 = cpuOf(dockerd);
          const m0 = machineMs();
          const r = await curl(['--unix-socket', SOCK, ours.rawUrl]);
          if (r.code !== 200) throw new Error(`raw archive GET: HTTP ${r.code}`);
          r.machine = machineSince(m0, r.bytes);
          r.engine = perGB(cpuOf(dockerd) - e0, r.bytes);
          raw.push(r);
        } else await download(kind === 'ours' ? ours : base, dockerd);
      }
    }

    console.log('1. throughput');
    console.log(`   raw Docker API (the tar stream, ${((raw[0].bytes - ours.size) / 1024).toFixed(1)} KB of tar framing more):`);
    console.log(`     ${rawCmd}`);
    console.log(`     ${raw.map((r) => mbps(r).toFixed(0)).join(', ')} MB/s; median ${median(raw.map(mbps)).toFixed(0)} MB/s`);
    console.log(`     CPU per GB (median, min–max): dockerd ${spread(raw.map((r) => r.engine), (x) => x.toFixed(0))} ms; curl ${spread(raw.map((r) => r.client), (x) => x.toFixed(0))} ms`);
    console.log(`     the whole machine: ${machineLine(raw)}`);
    const ro = report(ours, web, 'this build', raw);
    if (base) {
      const rb = report(base, web, 'base build', raw);
      console.log(`   this build / base build, per round: throughput ${spread(ours.dl.map((d, i) => mbps(d) / mbps(base.dl[i])))}; ${web} + dl CPU per GB ${spread(ours.dl.map((d, i) => d.ours / base.dl[i].ours))}`);
      console.log(`   ratio to raw, this build ${median(ro).toFixed(2)}, base build ${median(rb).toFixed(2)}`);
    }
    console.log(`   load average at the end: ${load()}`);
  } catch (e) {
    console.error(ours.srv.logs().split('\n').slice(-20).join('\n'));
    throw e;
  } finally {
    if (base) await close(base);
    await close(ours);
  }
}

for (const web of (process.env.BENCH_DL_WEBS ?? 'lighttpd caddy').split(/\s+/).filter(Boolean)) {
  await bench(web);
  console.log('');
}
