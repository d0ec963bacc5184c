// lighttpd.conf: every setting reaches the programs, every endpoint is
// routed when its program exists, and the file is valid for lighttpd.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, mkdtempSync, writeFileSync, chmodSync, mkdirSync, rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TOP } from './lib/server.mjs';

const conf = readFileSync(join(TOP, 'lighttpd.conf'), 'utf8');

test('lighttpd.conf passes every setting in lib/base/config.c to the programs', () => {
  const src = readFileSync(join(TOP, 'lib/base/config.c'), 'utf8');
  const table = src.slice(src.indexOf('settings[] = {'));
  const names = [...table.matchAll(/^\s*\{\s*"([A-Z][A-Z0-9_]*)"\s*,/gm)].map((m) => m[1]);
  assert.ok(names.length >= 15, `found only ${names.length} settings in lib/base/config.c`);
  const listed = conf.slice(conf.indexOf('var.cs_env'), conf.indexOf(')', conf.indexOf('var.cs_env')));
  const missing = names.filter((n) => !listed.includes(`"${n}"`));
  assert.deepEqual(missing, [], 'settings missing from var.cs_env in lighttpd.conf');
  assert.ok(listed.includes('"SANDBOX_ENV_FILE"'));
});

function parsed(binNames) {
  const dir = mkdtempSync(join(tmpdir(), 'cs-conf-'));
  try {
    const bin = join(dir, 'bin');
    mkdirSync(bin);
    mkdirSync(join(dir, 'run', 'empty'), { recursive: true });
    for (const n of binNames) {
      writeFileSync(join(bin, n), '#!/bin/sh\nexit 0\n');
      chmodSync(join(bin, n), 0o755);
    }
    const env = {
      PATH: process.env.PATH,
      CS_BIN: bin,
      CS_RUN: join(dir, 'run'),
      SANDBOX_ENV_FILE: join(dir, 'x.env'),
      SANDBOX_HOST: '127.0.0.1',
      SANDBOX_PORT: '1',
    };
    execFileSync('lighttpd', ['-tt', '-f', join(TOP, 'lighttpd.conf')], { env, stdio: 'pipe' });
    return { out: execFileSync('lighttpd', ['-p', '-f', join(TOP, 'lighttpd.conf')], { env, encoding: 'utf8' }), bin };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function routes(out) {
  // Top-level keys of fastcgi.server as lighttpd -p prints them.
  const i = out.indexOf('fastcgi.server');
  if (i < 0) return {};
  const r = {};
  const bySocket = {};
  for (const m of out.slice(i).matchAll(/^ {8}"([^"]+)"\s+=> \(\s*\(\s*"bin-path"\s+=> "([^"]+)",\s*"socket"\s+=> "([^"]+)"/gm)) {
    r[m[1]] = m[2];
    bySocket[`${m[3]}-0`] = m[2]; // lighttpd's name for the first process's socket
  }
  // An entry with a socket only is served by the process on that socket.
  for (const m of out.slice(i).matchAll(/^ {8}"([^"]+)"\s+=> \(\s*\(\s*"socket"\s+=> "([^"]+)"/gm)) r[m[1]] = bySocket[m[2]] ?? `no process on ${m[2]}`;
  return r;
}

test('lighttpd.conf routes every endpoint to its program', () => {
  const { out, bin } = parsed(['mcp', 'wellknown', 'authorize', 'token', 'register', 'dl', 'up']);
  assert.deepEqual(routes(out), {
    '/mcp': `${bin}/mcp`,
    '/.well-known/': `${bin}/wellknown`,
    '/authorize': `${bin}/authorize`,
    '/token': `${bin}/token`,
    '/revoke': `${bin}/token`,
    '/register': `${bin}/register`,
    '/dl': `${bin}/dl`,
    '/up': `${bin}/up`,
  });
  // Uploads: a large body cap on /up only (KiB), the outer one stays small.
  assert.match(out, /\$HTTP\["url"\] =\^ "\/up\/" \{[^}]*server\.max-request-size = 1073741824/);
  assert.match(out, /^\s*server\.max-request-size\s*=\s*1$/m);
  assert.match(out, /server\.stream-response-body\s*=\s*2/);
  assert.match(out, /server\.stream-request-body\s*=\s*0/);
  assert.doesNotMatch(out, /server\.username/);
});

test('lighttpd.conf routes only the programs that exist', () => {
  const { out, bin } = parsed(['mcp']);
  assert.deepEqual(routes(out), { '/mcp': `${bin}/mcp` });
});

test('lighttpd.conf works with no environment: defaults, and the installed copy has the paths', () => {
  const out = execFileSync('lighttpd', ['-p', '-f', join(TOP, 'lighttpd.conf')], { env: { PATH: process.env.PATH }, encoding: 'utf8' });
  assert.match(out, /server\.bind\s*=\s*"127\.0\.0\.1"/);
  assert.match(out, /server\.port\s*=\s*8891/);
  assert.match(out, /server\.errorlog\s*=\s*"\/run\/code-sandbox\/lighttpd\.log"/);
  // Logs may live apart from the runtime folder (the unit: a LogsDirectory).
  const logs = execFileSync('lighttpd', ['-p', '-f', join(TOP, 'lighttpd.conf')], {
    env: { PATH: process.env.PATH, CS_LOG: '/var/log/code-sandbox' }, encoding: 'utf8',
  });
  assert.match(logs, /server\.breakagelog\s*=\s*"\/var\/log\/code-sandbox\/programs\.log"/);
  // make install writes the installed paths in (the sanitizer build make
  // test made: nothing is compiled here).
  const dest = mkdtempSync(join(tmpdir(), 'cs-inst-'));
  try {
    execFileSync('make', ['-C', TOP, '--no-print-directory', '-s', 'SAN=1', 'install', `DESTDIR=${dest}`, 'PREFIX=/opt/cs', 'SYSCONFDIR=/etc/cs'], { stdio: 'pipe' });
    const conf = readFileSync(join(dest, 'opt/cs/share/code-sandbox/lighttpd.conf'), 'utf8');
    assert.match(conf, /\$\{CS_BIN:-\/opt\/cs\/lib\/code-sandbox\/cgi-bin\}/);
    const unit = readFileSync(join(dest, 'opt/cs/share/code-sandbox/systemd/code-sandbox-lighttpd.service'), 'utf8');
    assert.match(unit, /^EnvironmentFile=\/etc\/cs\/code-sandbox\/env$/m);
    assert.match(unit, /^ExecStart=\/usr\/sbin\/lighttpd -D -f \/opt\/cs\/share\/code-sandbox\/lighttpd\.conf$/m);
    assert.match(unit, /^ExecStartPre=\/opt\/cs\/sbin\/sandboxctl check$/m);
    assert.match(unit, /^LogsDirectory=code-sandbox$/m);
    const dropin = readFileSync(join(dest, 'opt/cs/share/code-sandbox/systemd/caddy.service.d/code-sandbox.conf'), 'utf8');
    assert.match(dropin, /--config \/opt\/cs\/share\/code-sandbox\/caddy\/Caddyfile/);
    for (const f of ['lighttpd.conf', 'caddy/Caddyfile', 'systemd/code-sandbox-fcgi@.service', 'systemd/code-sandbox-fcgi@.socket', 'systemd/code-sandbox-cleanup.service']) {
      assert.doesNotMatch(readFileSync(join(dest, 'opt/cs/share/code-sandbox', f), 'utf8'), /@[A-Z]+@/, `${f}: every path filled in`);
    }
  } finally {
    rmSync(dest, { recursive: true, force: true });
  }
});
