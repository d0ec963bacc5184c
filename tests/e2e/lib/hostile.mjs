// Helpers for the tests of the sandbox's isolation (egress policy,
// capabilities, disk limits, configuration drift): the set-up scripts as
// root, sandboxctl, listeners on this machine's own addresses, and
// containers made by hand. Everything a test makes is named from its
// cs-e2e-RUN-... prefix and removed by the test.

import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { TOP, RUN, TEST_PREFIX, TEST_IMAGE, docker, runProgram } from './server.mjs';

const execFileP = promisify(execFile);

export async function run(cmd, args, { env = {}, timeout = 120000 } = {}) {
  try {
    const { stdout, stderr } = await execFileP(cmd, args, { env: { ...process.env, ...env }, timeout, maxBuffer: 16 << 20 });
    return { code: 0, stdout, stderr };
  } catch (e) {
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? String(e) };
  }
}

/* A name for something of this test run: cs-e2e-RUN-what-RANDOM. */
export function testName(what) {
  return `${TEST_PREFIX}${RUN}-${what}-${randomBytes(3).toString('hex')}`;
}

/* containers/netpolicy.sh with its state kept out of /var/lib. */
export function netpolicy(args, stateDir) {
  return run(join(TOP, 'containers/netpolicy.sh'), args, { env: { CS_NETPOLICY_STATE: stateDir } });
}

export function sandboxDisk(args, diskDir) {
  return run(join(TOP, 'containers/sandbox-disk.sh'), args, { env: { CS_DISK_DIR: diskDir } });
}

/*
 * sandboxctl (the sanitizer build: srv.bin, or a folder) with the test's
 * settings (srv.envFile; opts.envFile another, opts.env more settings,
 * opts.clean none but those): {code, stdout, stderr}. Throws on a sanitizer
 * report in its stderr (lib/server.mjs runProgram).
 */
export function ctl(srv, args, { env = {}, envFile, clean = false, timeout = 120000, input } = {}) {
  const bin = typeof srv === 'string' ? srv : srv.bin;
  const file = envFile ?? (typeof srv === 'string' ? undefined : srv.envFile);
  return runProgram(join(bin, 'sandboxctl'), args, { env: { ...(file === undefined ? {} : { SANDBOX_ENV_FILE: file }), ...env }, clean, timeout, input });
}

/* sandboxctl --json status (exit 1 when something stops commands). */
export async function status(srv) {
  const r = await ctl(srv, ['--json', 'status']);
  if (r.code !== 0 && r.code !== 1) throw new Error(`sandboxctl status: ${r.stderr}`);
  const st = JSON.parse(r.stdout);
  st.exitCode = r.code;
  return st;
}

/* This machine's own IPv4 address (not loopback, not a bridge of Docker's). */
export function hostAddress() {
  for (const [name, addrs] of Object.entries(networkInterfaces())) {
    if (name === 'lo' || /^(docker|br-|cs-|veth)/.test(name)) continue;
    for (const a of addrs ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return null;
}

/* A TCP listener on 0.0.0.0 answering "hi\n"; {port, close}. */
export async function listener() {
  const srv = createServer((s) => s.end('hi\n'));
  await new Promise((res, rej) => {
    srv.once('error', rej);
    srv.listen(0, '0.0.0.0', res);
  });
  return { port: srv.address().port, close: () => new Promise((r) => srv.close(r)) };
}

/* Put addresses on lo (removed by the returned function). */
export async function loAddresses(addrs) {
  for (const a of addrs) {
    await run('ip', ['addr', 'del', `${a}/32`, 'dev', 'lo']);
    const r = await run('ip', ['addr', 'add', `${a}/32`, 'dev', 'lo']);
    if (r.code !== 0) throw new Error(`ip addr add ${a}: ${r.stderr}`);
  }
  return async () => {
    for (const a of addrs) await run('ip', ['addr', 'del', `${a}/32`, 'dev', 'lo']);
  };
}

/*
 * A bash snippet for execute: try a TCP connection to each "addr port"
 * with a 5 s limit and print "addr RESULT MS" per line, RESULT being ok
 * (it answered hi), or the error.
 */
export function probeScript(targets) {
  const lines = targets.map(([a, p]) => `probe ${a} ${p}`).join('\n');
  return `probe() {
  local t0=$(date +%s%N) m
  m=$(timeout 5 bash -c 'exec 3<>/dev/tcp/$0/$1 && head -c 3 <&3' "$1" "$2" 2>&1); r=$?
  local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  case $r:$m in 0:hi*) m=ok;; 124:*) m=timeout;; *) m=\${m##*: }; m=\${m// /_};; esac
  echo "$1 $m $ms"
}
${lines}`;
}

export function parseProbes(stdout) {
  const out = {};
  for (const l of stdout.trim().split('\n')) {
    const [a, m, ms] = l.split(' ');
    out[a] = { result: m, ms: Number(ms) };
  }
  return out;
}

/*
 * Create (and start) the sandbox container by hand, as this version of the
 * server would, with changes: {memory, version, privileged, extra}; with
 * start false only created (this machine cannot start privileged ones);
 * on the test's SANDBOX_RUNTIME unless runtime names another ('': the
 * engine's default).
 */
export async function handMade(srv, { memory = '512m', version = '3', privileged = false, network = srv.settings.SANDBOX_NETWORK ?? 'code-sandbox', extra = [], start = true, runtime = srv.settings.SANDBOX_RUNTIME ?? '' } = {}) {
  const caps = ['CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'SETGID', 'SETUID'];
  const args = [...(start ? ['run', '-d'] : ['create']), '--name', srv.container, '--label', 'code-sandbox=sandbox'];
  if (version !== null) args.push('--label', `code-sandbox.version=${version}`);
  // runc cannot start a privileged container with every capability dropped.
  if (!privileged) args.push('--cap-drop', 'ALL', ...caps.flatMap((c) => ['--cap-add', c]));
  args.push('--security-opt', 'no-new-privileges', '--cgroupns', 'private', '--init', '--network', network);
  args.push('--memory', memory, '--memory-swap', memory, '--cpus', String(srv.settings.SANDBOX_CPUS ?? 1));
  args.push('--pids-limit', String(srv.settings.SANDBOX_PIDS_LIMIT ?? 1024));
  args.push('--mount', `type=volume,source=${srv.volume},target=/sandbox`, '-w', '/sandbox');
  if (privileged) args.push('--privileged');
  if (runtime) args.push('--runtime', runtime);
  args.push(...extra, TEST_IMAGE, 'sleep', 'infinity');
  const r = await docker(...args);
  if (r.code !== 0) throw new Error(`docker run: ${r.stderr}`);
  return r.stdout.trim();
}
