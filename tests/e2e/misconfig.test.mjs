// Misconfigurations an operator makes, each shown where they look: a
// refusal caused by SANDBOX_PUBLIC_URL logs one line with what was expected
// and what arrived (origin, resource, audience, issuer), once per process;
// an engine that cannot be reached or an image that is missing is logged
// with its cause and kept in the run's record (sandboxctl audit); sandboxctl
// status exits non-zero in each broken state; sandboxctl check refuses bad
// settings with their reason; plain CGI with stdin a connected socket (as
// Apache's mod_cgid gives) starts no background work.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer, connect as netConnect } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { TOP, startServer, waitFor, runProgram } from './lib/server.mjs';
import { ctl as sandboxctl } from './lib/hostile.mjs';
import { connect, resultText, initializeBody } from './lib/client.mjs';
import { register, CLAUDE_REGISTRATION, authorizeUrl, get, pkce, rawFlow, requestIdOf, cookiesOf, postSignIn } from './lib/oauth.mjs';

const execFileP = promisify(execFile);

/* sandboxctl (the test build) with settings from env only; {code, stdout, stderr}. */
const ctl = (bin, args, env) => sandboxctl(bin, args, { env, clean: true, timeout: 60000 });

describe('configuration refusals are logged once, with expected and arrived', () => {
  let srv;
  before(async () => {
    srv = await startServer({ name: 'misconf' });
  });
  after(() => srv?.stop());

  it('origin: a foreign Origin on /mcp', async () => {
    for (let i = 0; i < 6; i++) {
      const origin = `https://wrong${i}.example`;
      const r = await fetch(srv.mcpUrl, { method: 'POST', headers: { origin, 'content-type': 'application/json' }, body: '{}' });
      assert.equal(r.status, 403);
    }
    const log = await waitFor(() => /origin mismatch/.test(srv.programsOutput()) && srv.programsOutput(), { what: 'the origin line' });
    assert.match(log, new RegExp(`mcp\\[\\d+\\] warn: refused: origin mismatch: expected ${srv.url.replace(/\./g, '\\.')}, got https://wrong\\d\\.example \\(check SANDBOX_PUBLIC_URL`));
    // Once per process, however many requests it refused.
    const pids = [...log.matchAll(/mcp\[(\d+)\] warn: refused: origin mismatch/g)].map((m) => m[1]);
    assert.equal(new Set(pids).size, pids.length, 'one line per process');
    assert.ok(pids.length <= 2, 'there are two /mcp processes');
  });

  it('resource: /authorize for another server\'s MCP URL', async () => {
    const reg = await register(srv, CLAUDE_REGISTRATION);
    const { challenge } = pkce();
    const r = await get(authorizeUrl(srv, {
      clientId: reg.json.client_id, redirectUri: CLAUDE_REGISTRATION.redirect_uris[0], challenge,
      extra: { resource: 'https://old.example/mcp' },
    }));
    // A client never approved sees the error on a page (RFC 9700 §4.11.2: no open redirect).
    assert.equal(r.status, 400, r.text);
    assert.match(r.text, /invalid_target/);
    const log = await waitFor(() => /resource mismatch/.test(srv.programsOutput()) && srv.programsOutput(), { what: 'the resource line' });
    assert.match(log, new RegExp(`resource mismatch: expected ${srv.mcpUrl.replace(/\./g, '\\.')}, got https://old\\.example/mcp`));
  });

  it('origin: the sign-in form posted from another origin', async () => {
    const reg = await register(srv, CLAUDE_REGISTRATION);
    const { challenge } = pkce();
    const page = await get(authorizeUrl(srv, { clientId: reg.json.client_id, redirectUri: CLAUDE_REGISTRATION.redirect_uris[0], challenge }));
    const post = await postSignIn(srv, {
      request: requestIdOf(page.text), cookie: cookiesOf(page.headers), key: srv.key,
      headers: { origin: 'https://proxy.example' },
    });
    assert.equal(post.status, 403);
    await waitFor(() => /authorize\[\d+\] warn: refused: origin mismatch: expected \S+, got https:\/\/proxy\.example/.test(srv.programsOutput()), {
      what: 'the sign-in origin line',
    });
  });

  it('audience: a token issued for another public URL', async () => {
    const reg = await register(srv, CLAUDE_REGISTRATION);
    const { tokens } = await rawFlow(srv, reg.json);
    // As if SANDBOX_PUBLIC_URL changed since the sign-in.
    await execFileP('sqlite3', [srv.settings.SANDBOX_DB, "UPDATE oauth_grant SET resource = 'https://old.example/mcp'"]);
    const r = await fetch(srv.mcpUrl, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens.access_token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(initializeBody()),
    });
    assert.equal(r.status, 401);
    await waitFor(() => new RegExp(`audience mismatch: expected ${srv.mcpUrl.replace(/\./g, '\\.')}, got https://old\\.example/mcp`).test(srv.programsOutput()), {
      what: 'the audience line',
    });
  });

  it('issuer: metadata asked for at another host', async () => {
    // fetch() sets Host from the URL: ask through a raw socket instead.
    const text = await new Promise((res, rej) => {
      const s = netConnect(srv.port, '127.0.0.1', () => {
        s.write('GET /.well-known/oauth-authorization-server HTTP/1.1\r\nHost: sandbox.example.org\r\nConnection: close\r\n\r\n');
      });
      let buf = '';
      s.on('data', (d) => (buf += d));
      s.on('end', () => res(buf));
      s.on('error', rej);
    });
    assert.match(text, /^HTTP\/1\.1 200/);
    await waitFor(() => /issuer mismatch: expected http:\/\/127\.0\.0\.1:\d+, got requests for host sandbox\.example\.org/.test(srv.programsOutput()), {
      what: 'the issuer line',
    });
  });
});

describe('engine and image errors: logged, kept in the record, status fails', () => {
  it('an unreachable engine socket is named, logged and kept', async () => {
    const srv = await startServer({ name: 'noengine', settings: { DOCKER_HOST: 'unix:///nonexistent-cs/docker.sock' } });
    try {
      const conn = await connect(srv);
      const res = await conn.execute({ command: 'true' });
      await conn.close();
      assert.equal(res.isError, true);
      assert.match(resultText(res), /cannot connect to the unix socket \/nonexistent-cs\/docker\.sock: No such file or directory/);
      assert.doesNotMatch(resultText(res), /localhost port 80/);
      await waitFor(() => /run \S+: could not run: .*unix socket \/nonexistent-cs\/docker\.sock/.test(srv.programsOutput()), { what: 'the log line' });
      const audit = await ctl(srv.bin, ['audit'], { SANDBOX_ENV_FILE: srv.envFile });
      assert.equal(audit.code, 0, audit.stderr);
      assert.match(audit.stdout, /error.*\n.*why:.*unix socket \/nonexistent-cs\/docker\.sock/);
      const st = await ctl(srv.bin, ['status'], { SANDBOX_ENV_FILE: srv.envFile });
      assert.equal(st.code, 1, 'status fails with the engine unreachable');
      assert.match(st.stdout, /status\s+BROKEN: engine unreachable/);
    } finally {
      await srv.stop();
    }
  });

  it('a missing image is logged and kept; status fails', async () => {
    const srv = await startServer({ name: 'noimage', settings: { SANDBOX_IMAGE: 'cs-e2e-no-such-image:none' } });
    try {
      const conn = await connect(srv);
      const res = await conn.execute({ command: 'true' });
      await conn.close();
      assert.equal(res.isError, true);
      await waitFor(() => /run \S+: could not run: .*cs-e2e-no-such-image:none/.test(srv.programsOutput()), { what: 'the log line' });
      const audit = await ctl(srv.bin, ['audit', '--json'], { SANDBOX_ENV_FILE: srv.envFile });
      const row = JSON.parse(audit.stdout).find((r) => r.state === 'error');
      assert.match(row.error, /cs-e2e-no-such-image:none/);
      const st = await ctl(srv.bin, ['status', '--json'], { SANDBOX_ENV_FILE: srv.envFile });
      assert.equal(st.code, 1);
      const j = JSON.parse(st.stdout);
      assert.equal(j.healthy, false);
      assert.match(j.problems, /image missing/);
    } finally {
      await srv.stop();
    }
  });
});

describe('sandboxctl in broken states', () => {
  let dir;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'cs-e2e-ctl-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));
  const bin = join(TOP, process.env.CS_BIN ?? 'build/san/bin');
  const key = 'k'.repeat(40);

  it('names a missing settings file as such', async () => {
    const r = await ctl(bin, ['-e', join(dir, 'missing.env'), 'status'], {});
    assert.equal(r.code, 1);
    assert.match(r.stderr, /settings file \S+missing\.env does not exist/);
  });

  it('fails on a database it cannot open', async () => {
    const env = join(dir, 'db.env');
    writeFileSync(env, `SANDBOX_API_KEY=${key}\nSANDBOX_DB=${dir}\n`, { mode: 0o600 });
    const r = await ctl(bin, ['status'], { SANDBOX_ENV_FILE: env });
    assert.equal(r.code, 1, r.stdout);
  });

  it('check refuses a public URL with a path, naming the fix', async () => {
    const r = await ctl(bin, ['check'], { SANDBOX_API_KEY: key, SANDBOX_ENV_FILE: '', SANDBOX_PUBLIC_URL: 'https://sb.example.com/mcp', SANDBOX_DB: join(dir, 'x.db') });
    assert.equal(r.code, 1);
    assert.equal(r.stderr.trim().split('\n').length, 1, 'one line');
    assert.match(r.stderr, /SANDBOX_PUBLIC_URL: must be an origin .* set SANDBOX_PUBLIC_URL=https:\/\/sb\.example\.com \(clients then use https:\/\/sb\.example\.com\/mcp\)/);
  });

  it('check refuses a wildcard listen address without a public URL', async () => {
    const r = await ctl(bin, ['check'], { SANDBOX_API_KEY: key, SANDBOX_HOST: '0.0.0.0', SANDBOX_DB: join(dir, 'x.db') });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /SANDBOX_PUBLIC_URL: required when SANDBOX_HOST is 0\.0\.0\.0/);
    const ok = await ctl(bin, ['check'], { SANDBOX_API_KEY: key, SANDBOX_HOST: '0.0.0.0', SANDBOX_PUBLIC_URL: 'https://sb.example.com', SANDBOX_DB: join(dir, 'x.db') });
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /clients add https:\/\/sb\.example\.com\/mcp/);
  });

  it('prints its help on stdout', async () => {
    const r = await ctl(bin, ['--help'], {});
    assert.equal(r.code, 0);
    assert.match(r.stdout, /usage: sandboxctl/);
    assert.equal(r.stderr, '');
  });
});

describe('plain CGI', () => {
  let srv;
  before(async () => {
    srv = await startServer({ name: 'cgisock', settings: { FILE_TTL: 3600 } });
  });
  after(() => srv?.stop());

  it('with stdin a connected socket (mod_cgid) serves the request and starts no background work', async () => {
    const body = JSON.stringify(initializeBody());
    // A connected unix socket pair: the program gets one end as fd 0.
    const path = join(srv.dir, 'cgi.sock');
    const server = createServer();
    const accepted = new Promise((res) => server.once('connection', res));
    await new Promise((res) => server.listen(path, res));
    const sock = netConnect(path);
    await new Promise((res) => sock.once('connect', res));
    const peer = await accepted;
    const child = runProgram(join(srv.bin, 'mcp'), [], {
      stdin: sock,
      clean: true,
      timeout: 60000,
      env: {
        SANDBOX_ENV_FILE: srv.envFile,
        GATEWAY_INTERFACE: 'CGI/1.1',
        REQUEST_METHOD: 'POST',
        REQUEST_URI: '/mcp',
        SCRIPT_NAME: '/mcp',
        SERVER_PROTOCOL: 'HTTP/1.1',
        CONTENT_TYPE: 'application/json',
        CONTENT_LENGTH: String(Buffer.byteLength(body)),
        HTTP_AUTHORIZATION: `Bearer ${srv.key}`,
        HTTP_ACCEPT: 'application/json, text/event-stream',
      },
    });
    sock.destroy();	// the child holds its own copy
    peer.end(body);
    const { code, stdout: out, stderr: err } = await child;
    peer.destroy();
    server.close();
    assert.equal(code, 0, err);
    assert.match(out, /^Status: 200/);
    // No clean-up pass was started: none recorded, none logged.
    const { stdout } = await execFileP('sqlite3', [srv.settings.SANDBOX_DB, "SELECT count(*) FROM sqlite_master WHERE name = 'cleanup_run'"]);
    if (stdout.trim() === '1') {
      const runs = await execFileP('sqlite3', [srv.settings.SANDBOX_DB, 'SELECT count(*) FROM cleanup_run']);
      assert.equal(runs.stdout.trim(), '0', 'no clean-up pass in CGI mode');
    }
    assert.doesNotMatch(err, /cleanup/i);
  });
});
