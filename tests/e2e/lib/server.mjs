// An isolated code-sandbox instance for one test file: its own temporary
// folder and settings file (fresh API key, its own SQLite file, and a
// container and volume named with a unique test prefix, so tests never touch
// the user's sandbox), on a free loopback port, served by real lighttpd
// (lighttpd.conf), Caddy (tests/setup/serve.sh caddy: caddy/Caddyfile and
// containers/run-programs.sh), nginx (tests/setup/serve.sh nginx:
// nginx/code-sandbox.conf and containers/run-programs.sh) or Apache with
// mod_fcgid (apache/.htaccess and apache/fcgid.conf, see apacheConf below)
// with the sanitizer build of the programs (build/san/bin, or CS_BIN). The
// web server is the `web` option, else $CS_WEB, else lighttpd.
//
// stop() fails when the programs' stderr holds a sanitizer report, and
// removes the test's container and volume.

import { spawn, execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, existsSync, rmSync, readdirSync, openSync, closeSync, copyFileSync, symlinkSync, chownSync, chmodSync, readlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { exposeEngine } from './engine.mjs';

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

/* The sanitizer reports in TEXT (a program's stderr), each with the 25 lines from its first; '' if none. */
export function sanitizerReports(text) {
  const lines = String(text ?? '').split('\n');
  const hits = [];
  lines.forEach((l, i) => {
    if (SANITIZER_PATTERNS.some((re) => re.test(l))) hits.push(lines.slice(i, i + 25).join('\n'));
  });
  return hits.join('\n---\n');
}

/*
 * Run a program of the sanitizer build (FILE) with the sanitizer options:
 * {code, signal, stdout, stderr}. opts.env adds to this process's
 * environment, or replaces it with opts.clean (PATH kept); opts.input is
 * written to its stdin, opts.stdin given as its stdin instead (a file
 * descriptor or socket). Throws when its stderr holds a sanitizer report,
 * whatever its exit status: the sanitizer's exit 1 is not the program's.
 * Every test that runs a program of the build runs it through here.
 */
export function runProgram(file, args = [], { env = {}, clean = false, timeout = 120000, input, stdin } = {}) {
  const base = clean ? { PATH: process.env.PATH } : process.env;
  return new Promise((resolvePromise, reject) => {
    const child = spawn(file, args, {
      env: { ...base, ...SANITIZER_ENV, ...env },
      stdio: [stdin ?? (input === undefined ? 'ignore' : 'pipe'), 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeout);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    if (input !== undefined && child.stdin) child.stdin.end(input);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const reports = sanitizerReports(stderr);
      if (reports) {
        reject(new Error(`sanitizer report from ${file} ${args.join(' ')}:\n${reports}`));
        return;
      }
      resolvePromise({ code: code ?? 128, signal, stdout, stderr });
    });
  });
}

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
 *   web       'lighttpd', 'caddy', 'nginx', 'apache' (mod_fcgid) or
 *             'apache-proxy' (mod_proxy_fcgi: tests/setup/serve.sh apache)
 *             (default $CS_WEB, else lighttpd)
 *   apache    behind Apache: { conf: 'lines for the vhost, after the shipped
 *             snippet', server: 'lines for the server (outside the vhost)',
 *             defaults: true for a host at mod_fcgid's defaults (no
 *             apache/fcgid.conf; the settings file is .env beside the
 *             programs, as a hosting user would have it) }
 */
export const WEB = process.env.CS_WEB || 'lighttpd';

// mcpProcs: /mcp processes (CS_MCP_PROCS); the tests run two, so that a
// session is seen to be shared between processes; null leaves the web
// server's default (one), as the benchmarks measure it.
export async function startServer({ name = 'test', settings = {}, env = {}, binDir, web = WEB, mcpProcs = 2, apache = {} } = {}) {
  if (!['lighttpd', 'caddy', 'nginx', 'apache', 'apache-proxy'].includes(web)) throw new Error(`unknown web server ${web}`);
  const bin = resolve(TOP, binDir ?? process.env.CS_BIN ?? 'build/san/bin');
  if (!existsSync(join(bin, 'mcp'))) {
    throw new Error(`${bin}/mcp is missing: build it first (make SAN=1 all)`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'cs-e2e-'));
  const runDir = join(dir, 'run');
  // Behind Apache the programs run as www-data, in the document root www/
  // (the shipped .htaccess and links to the programs), and reach the engine
  // over TCP with TLS (they may not use the Docker socket).
  const www = join(dir, 'www');
  const wwwUser = web === 'apache' ? userIds('www-data') : null;
  const envFile = web === 'apache' && apache.defaults ? join(www, '.env') : join(dir, 'sandbox.env');
  let engine = null;
  // Behind mod_proxy_fcgi, Apache's workers (www-data) pass through to the
  // sockets in CS_RUN (group www-data); the programs run as root.
  if (web === 'apache-proxy') chmodSync(dir, 0o711);
  if (web === 'apache') {
    chownSync(dir, wwwUser.uid, wwwUser.gid);
    mkdirSync(www);
    if (!('DOCKER_HOST' in settings)) {
      engine = await exposeEngine({ tls: true, dir: join(dir, 'engine'), ...wwwUser });
    }
  }
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
  const all = { ...base, ...(engine ? engine.env : {}), ...settings };
  let text = '# code-sandbox e2e test settings (temporary)\n';
  for (const [k, v] of Object.entries(all)) if (v !== null && v !== undefined) text += envLine(k, v);
  writeFileSync(envFile, text, { mode: 0o600 });
  if (wwwUser) chownSync(envFile, wwwUser.uid, wwwUser.gid);

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
    www,
    proc: null,
    stopped: false,
  };

  // Behind Apache the programs' stderr is Apache's error log (mod_fcgid
  // gives them its descriptor).
  srv.programsLog = join(runDir, web === 'apache' ? 'error.log' : 'programs.log');
  srv.lighttpdLog = join(runDir, 'lighttpd.log');
  // tests/setup/serve.sh's output, Caddy's or nginx's with it (not lighttpd).
  srv.serveLog = join(dir, 'serve.log');

  srv.logs = () => {
    let s = '';
    for (const f of [srv.lighttpdLog, srv.serveLog, join(runDir, 'apache/error.log'), srv.programsLog]) {
      if (existsSync(f)) s += `==> ${f} <==\n` + readFileSync(f, 'utf8');
    }
    return s;
  };

  /* The programs' stderr: sanitizer reports and log lines. */
  srv.programsOutput = () => (existsSync(srv.programsLog) ? readFileSync(srv.programsLog, 'utf8') : '');

  /* The sanitizer reports found so far ('' if none). */
  srv.sanitizerReports = () => sanitizerReports(srv.programsOutput());

  /*
   * PIDs of the running FastCGI processes of one program (default mcp), or
   * of all programs (prog null). lighttpd's children; for Caddy and nginx,
   * the PIDs containers/run-programs.sh keeps in CS_RUN/NAME.pids; behind
   * Apache the children of mod_fcgid's process manager (a child of
   * Apache's), named by their path in the document root.
   */
  srv.programPids = (prog = 'mcp') => {
    if (!srv.proc) return [];
    let pids;
    if (web === 'lighttpd') {
      pids = childPids(srv.proc.pid);
    } else if (web === 'apache') {
      pids = childPids(srv.proc.pid).flatMap(childPids);
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
    const home = web === 'apache' ? www : srv.bin;
    const want = prog === null ? `${home}/` : join(home, prog);
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
    if (web === 'lighttpd' || web === 'apache') {
      p = web === 'lighttpd'
        ? spawn('lighttpd', ['-D', '-f', join(TOP, 'lighttpd.conf')], {
          env: procEnv,
          stdio: ['ignore', 'pipe', 'pipe'],
        })
        : spawn('apache2', ['-f', apacheConf(srv, { ...SANITIZER_ENV, ...env }, apache), '-DFOREGROUND'], {
          // mod_fcgid passes PATH on to the programs, and FcgidInitialEnv;
          // TMPDIR (the test's env) is where Apache spools request bodies.
          env: { PATH: process.env.PATH, LANG: 'C', ...(env.TMPDIR ? { TMPDIR: env.TMPDIR } : {}) },
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
        p = spawn('/bin/sh', [join(TOP, 'tests/setup/serve.sh'), web === 'apache-proxy' ? 'apache' : web], {
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
   * lighttpd sends its programs SIGTERM, and so does mod_fcgid's process
   * manager when Apache stops; for Caddy and nginx, serve.sh stops the
   * programs (run-programs.sh: SIGTERM, SIGKILL after 20 s), then the web
   * server.
   */
  srv.shutdown = async () => {
    const p = srv.proc;
    if (!p || srv.stopped) return;
    srv.stopped = true;
    const kids = web === 'lighttpd' ? childPids(p.pid) : srv.programPids(null);
    // run-programs.sh, caddy or nginx; Apache's children (mod_fcgid's process manager).
    const helpers = web === 'lighttpd' ? [] : childPids(p.pid);
    if (p.exitCode === null && p.signalCode === null) {
      const gone = new Promise((r) => p.once('exit', r));
      p.kill('SIGTERM');
      // A timer that is cleared: left running, it would keep the test
      // file's process alive that long after its last test.
      let timer;
      await Promise.race([gone, new Promise((r) => (timer = setTimeout(r, web === 'lighttpd' ? 15000 : 40000)))]);
      clearTimeout(timer);
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
    if (web !== 'lighttpd') {
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
    await engine?.stop();
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
        if (web === 'apache') for (const k of childPids(srv.proc.pid)) pids.push(...childPids(k));
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

/* uid and gid of a user, from /etc/passwd. */
export function userIds(user) {
  const line = readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.startsWith(`${user}:`));
  if (!line) throw new Error(`no user ${user} on this machine`);
  const f = line.split(':');
  return { uid: Number(f[2]), gid: Number(f[3]) };
}

/* A value in Apache's configuration: quoted, never expanded. */
function apacheQuote(v) {
  const s = String(v);
  if (/[\r\n]/.test(s) || s.includes('${')) throw new Error(`cannot pass ${s} in Apache's configuration`);
  return `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/*
 * The test's Apache: its own configuration in CS_RUN (port, pid and log
 * files, mod_fcgid's sockets and table), started as root in the
 * foreground, workers and programs as www-data. The document root www/
 * holds the shipped apache/.htaccess and links to the programs, in a
 * <Directory> that allows the overrides it needs; the shipped
 * apache/fcgid.conf is included in the vhost (unless opts.defaults).
 * Returns the configuration file's path.
 */
function apacheConf(srv, progEnv, opts) {
  const run = srv.runDir;
  const www = srv.www;
  copyFileSync(join(TOP, 'apache/.htaccess'), join(www, '.htaccess'));
  for (const f of readdirSync(srv.bin)) {
    if (f === 'sandboxctl') continue;
    const l = join(www, f);
    let have = null;
    try {
      have = readlinkSync(l);
    } catch {
      /* none yet */
    }
    if (have === null) symlinkSync(join(srv.bin, f), l);
  }
  const mod = (m, f) => `LoadModule ${m}_module /usr/lib/apache2/modules/${f ?? `mod_${m}`}.so`;
  const lines = [
    `ServerRoot ${run}`,
    'ServerName 127.0.0.1',
    `Listen ${srv.host}:${srv.port}`,
    `PidFile ${run}/httpd.pid`,
    `DefaultRuntimeDir ${run}`,
    `Mutex file:${run} default`,
    'User www-data',
    'Group www-data',
    `ErrorLog ${srv.programsLog}`,
    'LogLevel warn fcgid:info',
    mod('mpm_event'),
    mod('authz_core'),
    mod('rewrite'),
    mod('fcgid'),
    // Small: a test needs few workers (and each long stream holds one).
    'StartServers 1',
    'ServerLimit 4',
    'ThreadsPerChild 32',
    'MaxRequestWorkers 128',
    'MinSpareThreads 8',
    'MaxSpareThreads 64',
    `FcgidIPCDir ${run}/fcgid`,
    `FcgidProcessTableFile ${run}/fcgid_shm`,
    ...(opts.server ? opts.server.split('\n') : []),
    `<VirtualHost ${srv.host}:${srv.port}>`,
    `	DocumentRoot ${www}`,
    `	<Directory ${www}>`,
    '		AllowOverride FileInfo AuthConfig Options=ExecCGI,SymLinksIfOwnerMatch',
    '		Require all granted',
    '	</Directory>',
  ];
  if (!opts.defaults) {
    lines.push(`	Define CS_SETTINGS ${srv.envFile}`, `	Include ${join(TOP, 'apache/fcgid.conf')}`);
  }
  // The sanitizer options and the test's own environment.
  for (const [k, v] of Object.entries(progEnv)) lines.push(`	FcgidInitialEnv ${k} ${apacheQuote(v)}`);
  if (opts.conf) lines.push(...opts.conf.split('\n').map((l) => `\t${l}`));
  lines.push('</VirtualHost>', '');
  const conf = join(run, 'httpd.conf');
  writeFileSync(conf, lines.join('\n'));
  return conf;
}

/* Run a command in the test's container with the docker CLI. */
export async function dockerExec(srv, command) {
  return docker('exec', srv.container, 'bash', '-c', command);
}

/*
 * Every process's command line in the test's container (no ps needed). The
 * list must show the listing shell itself, or this throws: a list that is
 * empty because the container is gone or /proc unreadable never passes
 * for "nothing of the command left".
 */
export async function containerCommands(srv) {
  const r = await dockerExec(srv, 'for p in /proc/[0-9]*; do [ -r $p/cmdline ] && { tr "\\0" " " < $p/cmdline; echo; }; done 2>/dev/null; true');
  if (r.code !== 0) throw new Error(`listing the container's processes: ${r.stderr}`);
  const cmds = r.stdout.split('\n').filter(Boolean);
  if (!cmds.some((c) => c.startsWith('bash -c for p in /proc/'))) throw new Error(`the container's process list misses the listing itself:\n${r.stdout}`);
  return cmds;
}
