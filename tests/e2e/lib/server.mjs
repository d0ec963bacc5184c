// An isolated code-sandbox instance for one test file: its own temporary
// folder and settings file (fresh API key, its own SQLite file, and a
// container and volume named with a unique test prefix, so tests never touch
// the user's sandbox), on a free loopback port, served by real lighttpd
// (lighttpd.conf) or Caddy (tests/setup/serve.sh caddy: caddy/Caddyfile and
// caddy/run-programs.sh) with the sanitizer build of the programs
// (build/san/bin, or CS_BIN). The web server is the `web` option, else
// $CS_WEB, else lighttpd.
//
// stop() fails when the programs' stderr holds a sanitizer report, and
// removes the test's container and volume.

import { spawn, execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, existsSync, rmSync, readdirSync, openSync, closeSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const execFileP = promisify(execFile);

export const TOP = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
export const TEST_PREFIX = 'cs-e2e-';
// The sandbox image the tests use: the one tests/run.sh says is ready
// (CS_TEST_IMAGE: the core image while the full one still builds), else the
// full image. A test that starts a container of its own takes this one too,
// never a name the run may not have built yet.
export const TEST_IMAGE = process.env.CS_TEST_IMAGE || 'code-sandbox:latest';
// Test containers are named cs-e2e-RUN-..., RUN being the PID of the test
// run (tests/run.sh sets CS_TEST_RUN) or of this process: clean-ups remove
// only the containers of runs that have ended, never those of a run going
// on beside this one.
export const RUN = /^[0-9]+$/.test(process.env.CS_TEST_RUN ?? '') ? process.env.CS_TEST_RUN : String(process.pid);

// Sanitizer reports look like this in the programs' stderr.
const SANITIZER_PATTERNS = [
  /ERROR: AddressSanitizer/,
  /ERROR: LeakSanitizer/,
  /runtime error:/,
  /WARNING: ThreadSanitizer/,
  /AddressSanitizer:DEADLYSIGNAL/,
];

export const SANITIZER_ENV = {
  // Leak checking runs when a program exits (stop() sends SIGTERM).
  ASAN_OPTIONS: 'detect_leaks=1:abort_on_error=0:halt_on_error=1:print_summary=1:detect_stack_use_after_return=1:check_initialization_order=1',
  UBSAN_OPTIONS: 'print_stacktrace=1:halt_on_error=1:print_summary=1',
  LSAN_OPTIONS: 'print_suppressions=0',
};

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/* Poll fn until it returns a truthy value or the deadline passes. */
export async function waitFor(fn, { timeout = 20000, interval = 100, what = 'condition' } = {}) {
  const end = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) {
      throw new Error(`timed out after ${timeout} ms waiting for ${what}` + (last ? `: ${last.message}` : ''));
    }
    await sleep(interval);
  }
}

export function freePort() {
  return new Promise((res, rej) => {
    const s = createServer();
    s.unref();
    s.on('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });
}

export async function docker(...args) {
  try {
    const { stdout } = await execFileP('docker', args, { maxBuffer: 64 << 20 });
    return { code: 0, stdout };
  } catch (e) {
    return { code: e.code ?? 1, stdout: e.stdout ?? '', stderr: e.stderr ?? String(e) };
  }
}

function envLine(k, v) {
  if (/[\r\n]/.test(String(v))) throw new Error(`setting ${k} contains a newline`);
  return `${k}=${v}\n`;
}

export function pidAlive(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 3 (after "pid (comm)") is the state; Z is a zombie (exited).
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/* The direct children of a process (the FastCGI programs lighttpd spawned). */
export function childPids(pid) {
  const out = [];
  try {
    for (const t of readdirSync(`/proc/${pid}/task`)) {
      const c = readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8').trim();
      if (c) out.push(...c.split(/\s+/).map(Number));
    }
  } catch {
    /* gone */
  }
  return out;
}

function killAll(pids) {
  for (const k of pids) {
    try {
      process.kill(k, 'SIGKILL');
    } catch {
      /* gone meanwhile */
    }
  }
}

/* Command line of a process, '' when gone. */
export function cmdline(pid) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
  } catch {
    return '';
  }
}

/**
 * Start a server.
 *   name      short name for the container prefix (letters, digits, '-')
 *   settings  extra lines for the settings file ({MAX_OUTPUT_BYTES: 1000});
 *             a value of null leaves a default setting out
 *   env       extra environment for the web server and the programs
 *             (overrides the file)
 *   binDir    programs folder (default $CS_BIN or build/san/bin)
 *   web       'lighttpd' or 'caddy' (default $CS_WEB, else lighttpd)
 */
export const WEB = process.env.CS_WEB || 'lighttpd';

// mcpProcs: /mcp processes (CS_MCP_PROCS); the tests run two, so that a
// session is seen to be shared between processes; null leaves the web
// server's default (one), as the benchmarks measure it.
export async function startServer({ name = 'test', settings = {}, env = {}, binDir, web = WEB, mcpProcs = 2 } = {}) {
  if (web !== 'lighttpd' && web !== 'caddy') throw new Error(`unknown web server ${web}`);
  const bin = resolve(TOP, binDir ?? process.env.CS_BIN ?? 'build/san/bin');
  if (!existsSync(join(bin, 'mcp'))) {
    throw new Error(`${bin}/mcp is missing: build it first (make SAN=1 all)`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'cs-e2e-'));
  const runDir = join(dir, 'run');
  const envFile = join(dir, 'sandbox.env');
  const prefix = `${TEST_PREFIX}${RUN}-${name.replace(/[^a-zA-Z0-9-]/g, '-')}-${randomBytes(4).toString('hex')}`;
  const key = randomBytes(32).toString('base64url');
  const port = await freePort();
  const base = {
    SANDBOX_API_KEY: key,
    SANDBOX_HOST: '127.0.0.1',
    SANDBOX_PORT: port,
    SANDBOX_DB: join(dir, 'state.db'),
    SANDBOX_CONTAINER: prefix,
    SANDBOX_VOLUME: `${prefix}-data`,
    SANDBOX_ALLOW_KEY_BEARER: 1,
    // Small enough that many test containers fit on a 2-core machine.
    SANDBOX_MEMORY: '512m',
    SANDBOX_CPUS: '1',
  };
  // tests/run.sh names the image that is ready (CS_TEST_IMAGE: the core
  // image while the full one still builds); the default otherwise.
  if (process.env.CS_TEST_IMAGE) base.SANDBOX_IMAGE = TEST_IMAGE;
  const all = { ...base, ...settings };
  let text = '# code-sandbox e2e test settings (temporary)\n';
  for (const [k, v] of Object.entries(all)) if (v !== null && v !== undefined) text += envLine(k, v);
  writeFileSync(envFile, text, { mode: 0o600 });

  const srv = {
    dir,
    envFile,
    bin,
    key,
    port,
    host: '127.0.0.1',
    url: `http://127.0.0.1:${port}`,
    mcpUrl: `http://127.0.0.1:${port}/mcp`,
    container: all.SANDBOX_CONTAINER,
    volume: all.SANDBOX_VOLUME,
    settings: all,
    env,
    web,
    runDir,
    proc: null,
    stopped: false,
  };

  srv.programsLog = join(runDir, 'programs.log');
  srv.lighttpdLog = join(runDir, 'lighttpd.log');
  // Caddy's and tests/setup/serve.sh's output (Caddy only).
  srv.serveLog = join(dir, 'serve.log');

  srv.logs = () => {
    let s = '';
    for (const f of [srv.lighttpdLog, srv.serveLog, srv.programsLog]) {
      if (existsSync(f)) s += `==> ${f} <==\n` + readFileSync(f, 'utf8');
    }
    return s;
  };

  /* The programs' stderr: sanitizer reports and log lines. */
  srv.programsOutput = () => (existsSync(srv.programsLog) ? readFileSync(srv.programsLog, 'utf8') : '');

  /* The sanitizer reports found so far ('' if none). */
  srv.sanitizerReports = () => {
    const out = srv.programsOutput();
    const lines = out.split('\n');
    const hits = [];
    lines.forEach((l, i) => {
      if (SANITIZER_PATTERNS.some((re) => re.test(l))) hits.push(lines.slice(i, i + 25).join('\n'));
    });
    return hits.join('\n---\n');
  };

  /*
   * PIDs of the running FastCGI processes of one program (default mcp), or
   * of all programs (prog null). lighttpd's children; for Caddy, the PIDs
   * caddy/run-programs.sh keeps in CS_RUN/NAME.pids.
   */
  srv.programPids = (prog = 'mcp') => {
    if (!srv.proc) return [];
    let pids;
    if (web === 'lighttpd') {
      pids = childPids(srv.proc.pid);
    } else {
      pids = [];
      try {
        for (const f of readdirSync(runDir)) {
          if (!f.endsWith('.pids')) continue;
          pids.push(...readFileSync(join(runDir, f), 'utf8').split(/\s+/).filter(Boolean).map(Number));
        }
      } catch {
        /* not started yet */
      }
    }
    const want = prog === null ? `${srv.bin}/` : join(srv.bin, prog);
    return pids.filter((p) => pidAlive(p) && (cmdline(p) + ' ').startsWith(prog === null ? want : want + ' '));
  };

  srv.launch = async () => {
    mkdirSync(runDir, { recursive: true });
    const procEnv = {
      PATH: process.env.PATH,
      CS_BIN: bin,
      CS_RUN: runDir,
      SANDBOX_ENV_FILE: envFile,
      SANDBOX_HOST: srv.host,
      SANDBOX_PORT: String(srv.port),
      ...(mcpProcs ? { CS_MCP_PROCS: String(mcpProcs) } : {}),
      ...SANITIZER_ENV,
      ...env,
    };
    let p;
    let early = '';
    if (web === 'lighttpd') {
      p = spawn('lighttpd', ['-D', '-f', join(TOP, 'lighttpd.conf')], {
        env: procEnv,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      p.stdout.on('data', (d) => (early += d));
      p.stderr.on('data', (d) => (early += d));
    } else {
      // Caddy keeps its state (autosave.json) under XDG folders: the test's own.
      const home = join(dir, 'caddy-home');
      mkdirSync(home, { recursive: true });
      const out = openSync(srv.serveLog, 'a');
      try {
        p = spawn('/bin/sh', [join(TOP, 'tests/setup/serve.sh'), 'caddy'], {
          env: { HOME: home, XDG_DATA_HOME: home, XDG_CONFIG_HOME: home, ...procEnv },
          stdio: ['ignore', out, out],
        });
      } finally {
        closeSync(out);
      }
    }
    srv.proc = p;
    srv.stopped = false;
    let exited = null;
    p.on('exit', (code, sig) => (exited = { code, sig }));
    await waitFor(
      async () => {
        if (exited) throw new Error(`${web} exited (${JSON.stringify(exited)}): ${early}\n${srv.logs()}`);
        try {
          const r = await fetch(srv.mcpUrl, { method: 'GET', signal: AbortSignal.timeout(2000) });
          await r.arrayBuffer();
          // Any answer from the program (not lighttpd's 503 while
          // spawning, not Caddy's 502 before the socket is there).
          return r.status !== 503 && r.status !== 502;
        } catch {
          return false;
        }
      },
      { timeout: 30000, what: `${web} on ${srv.url}` },
    );
  };

  /*
   * Stop the web server and the programs; throws on sanitizer reports.
   * lighttpd sends its programs SIGTERM; for Caddy, serve.sh stops the
   * programs (run-programs.sh: SIGTERM, SIGKILL after 20 s), then Caddy.
   */
  srv.shutdown = async () => {
    const p = srv.proc;
    if (!p || srv.stopped) return;
    srv.stopped = true;
    const kids = web === 'lighttpd' ? childPids(p.pid) : srv.programPids(null);
    const helpers = web === 'lighttpd' ? [] : childPids(p.pid); // run-programs.sh, caddy
    if (p.exitCode === null && p.signalCode === null) {
      const gone = new Promise((r) => p.once('exit', r));
      p.kill('SIGTERM');
      await Promise.race([gone, sleep(web === 'lighttpd' ? 15000 : 40000)]);
      if (p.exitCode === null && p.signalCode === null) {
        p.kill('SIGKILL');
        await gone;
        killAll(helpers);
      }
    }
    // The programs get SIGTERM from lighttpd (from run-programs.sh with
    // Caddy) and must exit by themselves, writing any leak report on the way
    // out. run-programs.sh kills those that do not, and says so.
    let stuck = [];
    if (web === 'caddy') {
      const killed = /run-programs: still running after .*/.exec(existsSync(srv.serveLog) ? readFileSync(srv.serveLog, 'utf8') : '');
      if (killed) stuck.push(killed[0]);
    }
    try {
      await waitFor(() => kids.every((k) => !pidAlive(k)), { timeout: 15000, what: 'programs to exit' });
    } catch {
      const left = kids.filter(pidAlive);
      stuck.push(...left.map(cmdline));
      killAll(left);
    }
    const reports = srv.sanitizerReports();
    if (reports) throw new Error(`sanitizer reports in ${srv.programsLog}:\n${reports}`);
    if (stuck.length) {
      throw new Error(`programs did not exit within 15 s of SIGTERM: ${stuck.join(', ')}`);
    }
  };

  srv.restart = async () => {
    await srv.shutdown();
    await srv.launch();
  };

  /* Remove the test's container and volume. */
  srv.cleanup = async () => {
    await docker('rm', '-f', srv.container);
    await docker('volume', 'rm', '-f', srv.volume);
  };

  srv.stop = async ({ keepDir = false } = {}) => {
    try {
      await srv.shutdown();
    } finally {
      await srv.cleanup();
      if (!keepDir && !process.env.CS_KEEP_TEST_DIRS) rmSync(dir, { recursive: true, force: true });
    }
  };

  // A port taken between freePort() and lighttpd's bind: try another.
  for (let attempt = 0; ; attempt++) {
    try {
      await srv.launch();
      break;
    } catch (e) {
      srv.stopped = true;
      if (srv.proc) {
        const pids = [...srv.programPids(null), ...(web === 'lighttpd' ? [] : childPids(srv.proc.pid))];
        if (srv.proc.exitCode === null) srv.proc.kill('SIGKILL');
        killAll(pids);
      }
      if (attempt >= 2 || !/address already in use/i.test(e.message)) {
        await srv.cleanup();
        if (!process.env.CS_KEEP_TEST_DIRS) rmSync(dir, { recursive: true, force: true });
        throw e;
      }
      srv.port = await freePort();
      srv.url = `http://127.0.0.1:${srv.port}`;
      srv.mcpUrl = `${srv.url}/mcp`;
      all.SANDBOX_PORT = srv.port;
      writeFileSync(envFile, text.replace(/^SANDBOX_PORT=.*$/m, `SANDBOX_PORT=${srv.port}`), { mode: 0o600 });
      text = readFileSync(envFile, 'utf8');
    }
  }
  return srv;
}

/* Run a command in the test's container with the docker CLI. */
export async function dockerExec(srv, command) {
  return docker('exec', srv.container, 'bash', '-c', command);
}
