// caddy/Caddyfile and containers/run-programs.sh: every endpoint is routed to its
// program's socket with streaming and without a read deadline, the admin
// API is off, the listener is plain HTTP on SANDBOX_HOST:SANDBOX_PORT, and
// the programs run-programs.sh starts are those lighttpd.conf routes.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { TOP } from './lib/server.mjs';

const CADDYFILE = join(TOP, 'caddy/Caddyfile');
const ENV = { PATH: process.env.PATH, HOME: '/nonexistent', CS_RUN: '/run/cs-test', SANDBOX_HOST: '127.0.0.1', SANDBOX_PORT: '8899' };

function adapt(env = ENV) {
  return JSON.parse(execFileSync('caddy', ['adapt', '--adapter', 'caddyfile', '--config', CADDYFILE], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }));
}

/* Every reverse_proxy handler under a route list, depth first. */
function proxies(handlers, out = []) {
  for (const h of handlers ?? []) {
    if (h.handler === 'reverse_proxy') out.push(h);
    for (const r of h.routes ?? []) proxies(r.handle, out);
  }
  return out;
}

test('Caddyfile: each endpoint goes to its program socket, streaming, with no read deadline', () => {
  const cfg = adapt();
  assert.equal(cfg.admin?.disabled, true, 'admin API off');
  const servers = Object.values(cfg.apps.http.servers);
  assert.equal(servers.length, 1);
  const srv = servers[0];
  assert.deepEqual(srv.listen, ['127.0.0.1:8899']);
  const routes = {};
  let catchAll = null;
  for (const r of srv.routes) {
    const paths = (r.match ?? []).flatMap((m) => m.path ?? []);
    const ps = proxies(r.handle);
    if (paths.length === 0 && ps.length === 0 && r.group) catchAll = r;
    for (const p of paths) routes[p] = ps;
  }
  const want = {
    '/mcp': 'mcp',
    '/.well-known/*': 'wellknown',
    '/authorize': 'authorize',
    '/token': 'token',
    '/revoke': 'token',
    '/register': 'register',
    '/dl/*': 'dl',
    '/up/*': 'up',
  };
  assert.deepEqual(Object.keys(routes).sort(), Object.keys(want).sort());
  for (const [path, prog] of Object.entries(want)) {
    const ps = routes[path];
    assert.equal(ps.length, 1, path);
    const p = ps[0];
    assert.deepEqual(p.upstreams, [{ dial: `unix//run/cs-test/${prog}.sock` }], path);
    assert.equal(p.transport.protocol, 'fastcgi', path);
    assert.equal(p.flush_interval, -1, `${path}: flush_interval -1 (streaming)`);
    for (const k of ['read_timeout', 'write_timeout']) assert.equal(p.transport[k], undefined, `${path}: no ${k}`);
  }
  assert.ok(catchAll, 'a catch-all route answers everything else');
  assert.match(JSON.stringify(catchAll), /"status_code":404/);
});

test('Caddyfile: the listener is plain HTTP (no certificate, no redirect), IPv6 too', () => {
  const cfg = adapt({ ...ENV, SANDBOX_HOST: '::1' });
  const srv = Object.values(cfg.apps.http.servers)[0];
  assert.deepEqual(srv.listen, ['[::1]:8899']);
  assert.equal(cfg.apps.tls, undefined, 'no certificates to manage');
  // The commented public block is there to copy.
  assert.match(readFileSync(CADDYFILE, 'utf8'), /^# sandbox\.example\.org \{$/m);
});

test('Caddyfile: valid for caddy, and formatted as caddy fmt would', () => {
  const v = spawnSync('caddy', ['validate', '--adapter', 'caddyfile', '--config', CADDYFILE], { env: ENV, encoding: 'utf8' });
  assert.equal(v.status, 0, v.stderr);
  assert.doesNotMatch(v.stderr, /not formatted/);
  const text = readFileSync(CADDYFILE, 'utf8');
  assert.equal(execFileSync('caddy', ['fmt', CADDYFILE], { encoding: 'utf8' }), text);
});

test('run-programs.sh starts the programs lighttpd.conf routes', () => {
  const conf = readFileSync(join(TOP, 'lighttpd.conf'), 'utf8');
  const lighttpd = new Set([...conf.matchAll(/\/[a-z.-]*\/?:([a-z]+):(?:\d|\$m)/g)].map((m) => m[1]));
  // Programs lighttpd starts without a route of their own (the preview
  // program, reached through mod_proxy): each named by its -x check.
  for (const m of conf.matchAll(/-x \\"\$b\/([a-z]+)\\"/g)) lighttpd.add(m[1]);
  const sh = readFileSync(join(TOP, 'containers/run-programs.sh'), 'utf8');
  const programs = new Set(/^PROGRAMS="([^"]*)"/m.exec(sh)[1].split(/\s+/));
  assert.ok(lighttpd.size >= 6, [...lighttpd].join(' '));
  assert.deepEqual([...programs].sort(), [...lighttpd].sort());
});

test('the start-up scripts pass shellcheck', { skip: spawnSync('shellcheck', ['-V']).status !== 0 && 'shellcheck is not installed' }, () => {
  const r = spawnSync('shellcheck', ['-S', 'warning', join(TOP, 'containers/run-programs.sh'), join(TOP, 'tests/setup/serve.sh')], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stdout + r.stderr);
});

test('Caddyfile: without its environment it listens on loopback and dials the socket units', () => {
  const cfg = adapt({ PATH: process.env.PATH, HOME: '/nonexistent' });
  const srv = Object.values(cfg.apps.http.servers)[0];
  assert.deepEqual(srv.listen, ['127.0.0.1:8891']);
  assert.match(JSON.stringify(srv.routes), /"dial":"unix\/\/run\/code-sandbox\/mcp\.sock"/);
});

test('the socket folder under Caddy is mode 0700 (security review item 12)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cs-runmode-'));
  try {
    const run = join(dir, 'run');
    const bin = join(dir, 'bin');
    mkdirSync(run, { mode: 0o755 });
    mkdirSync(bin);
    // No programs in CS_BIN: it stops after making the folder its own.
    const r = spawnSync('sh', [join(TOP, 'containers/run-programs.sh'), 'start'], {
      env: { PATH: process.env.PATH, CS_BIN: bin, CS_RUN: run }, encoding: 'utf8', timeout: 30000,
    });
    assert.equal(r.status, 1, r.stderr);
    assert.equal(statSync(run).mode & 0o777, 0o700);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
