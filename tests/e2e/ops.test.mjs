// Operations: the FILE_TTL clean-up (by sandboxctl and by the programs'
// own hourly trigger), a command hitting the memory limit, sandboxctl
// against the test's real database, and the programs answering plain CGI.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startServer, dockerExec, docker, waitFor, runProgram } from './lib/server.mjs';
import { ctl } from './lib/hostile.mjs';
import { connect, resultText } from './lib/client.mjs';

const execFileP = promisify(execFile);


function sql(srv, q) {
  return execFileP('sqlite3', [srv.settings.SANDBOX_DB, q]).then((r) => r.stdout.trim());
}

async function ls(srv) {
  const r = await dockerExec(srv, 'cd /sandbox && for f in * .[!.]*; do [ -e "$f" ] || [ -L "$f" ] && printf "%s\\n" "$f"; done; true');
  return r.stdout.split('\n').filter(Boolean).sort();
}

// Entries aged with touch -d: names with spaces and newlines, a symlink
// (judged by itself, never followed), a folder changed deep inside.
const STAGE = `
set -e
cd /sandbox
mkdir -p old/deep/er nested/a/b fresh
echo x > old/deep/er/f
echo y > 'with space
and newline'
echo z > nested/a/b/recent
echo w > fresh/x
ln -sfn /etc old-link
touch -d '3 hours ago' old/deep/er/f old/deep/er old/deep old 'with space
and newline' .old-hidden nested/a nested
touch -h -d '3 hours ago' old-link
`;

describe('operations', () => {
  let srv;
  let conn;

  before(async () => {
    srv = await startServer({ name: 'ops', settings: { FILE_TTL: 3600, SANDBOX_MEMORY: '96m' } });
    conn = await connect(srv);
  });
  after(async () => {
    await conn?.close().catch(() => {});
    await srv?.stop();
  });

  it('sandboxctl cleanup removes entries unchanged for FILE_TTL and keeps the rest', async () => {
    const res = await conn.execute({ command: STAGE });
    assert.equal(res.structuredContent.exit_code, 0, resultText(res));
    const r = await ctl(srv, ['--json', 'cleanup']);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.ran, true);
    assert.equal(out.state, 'ok');
    assert.equal(out.removed, 4, r.stdout);
    assert.deepEqual(out.names.sort(), ["$'with space\\nand newline'", '.old-hidden', 'old', 'old-link'].sort());
    assert.deepEqual(await ls(srv), ['fresh', 'nested']);
    // The symlink was removed as a link: its target is intact.
    assert.equal((await dockerExec(srv, 'test -f /etc/hostname && echo ok')).stdout.trim(), 'ok');
    // The pass is recorded.
    assert.equal(await sql(srv, "select trigger || ' ' || state || ' ' || removed from cleanup_run order by id desc limit 1"), 'sandboxctl ok 4');
  });

  it('the programs start a pass by themselves when one is due, without delaying the request', async () => {
    await dockerExec(srv, "mkdir -p /sandbox/auto-old && touch -d '2 hours ago' /sandbox/auto-old");
    // The very first request of this server started a pass already (due on
    // a new database; the container did not exist yet): make one due again.
    const autoBefore = Number(await sql(srv, "select count(*) from cleanup_run where trigger = 'auto'"));
    await sql(srv, 'update cleanup_lease set last_run = 0');
    // Each process looks at most once a minute; a fresh session's first
    // requests may land on a process that has looked already, so restart.
    await conn.close();
    await srv.restart();
    conn = await connect(srv);
    const t0 = Date.now();
    const res = await conn.execute({ command: 'echo hi' });
    assert.equal(res.structuredContent.stdout, 'hi\n');
    assert.ok(Date.now() - t0 < 10000);
    await waitFor(async () => !(await ls(srv)).includes('auto-old'), { timeout: 30000, what: 'auto-old removed' });
    await waitFor(async () => (await sql(srv, "select count(*) from cleanup_run where trigger = 'auto' and state = 'ok' and names like '%auto-old%'")) === '1', {
      timeout: 10000,
      what: 'an automatic pass recorded',
    });
    // Not due again: further requests start no second pass.
    await conn.execute({ command: 'true' });
    assert.equal(Number(await sql(srv, "select count(*) from cleanup_run where trigger = 'auto'")), autoBefore + 1);
    assert.match(srv.programsOutput(), /cleanup: removed \/sandbox\/auto-old/);
  });

  it('a command killed by the memory limit says so, and the sandbox goes on', async () => {
    await conn.execute({ command: 'echo before-oom > /sandbox/fresh/keep' });
    const res = await conn.execute({ command: 'head -c 400m /dev/zero | tail' });
    assert.equal(res.structuredContent.exit_code, 137, resultText(res));
    assert.match(resultText(res), /out of memory/i);
    const after = await conn.execute({ command: 'cat /sandbox/fresh/keep' });
    assert.equal(after.structuredContent.stdout, 'before-oom\n');
    // An ordinary SIGKILL is not called out of memory.
    const k = await conn.execute({ command: 'kill -KILL $$' });
    assert.equal(k.structuredContent.exit_code, 137);
    assert.doesNotMatch(resultText(k), /out of memory/i);
  });

  it('sandboxctl status, audit, clients and tokens read the real database', async () => {
    const st = await ctl(srv, ['status', '--json']);
    assert.equal(st.code, 0, st.stderr);
    const s = JSON.parse(st.stdout);
    assert.equal(s.engine.reachable, true);
    assert.equal(s.image.present, true);
    assert.equal(s.container.running, true);
    assert.equal(s.container.memory, 96 * 1024 * 1024);
    assert.ok(s.volume.used_bytes > 0);
    assert.ok(s.database.schema_version >= 5);
    assert.ok(s.database.sessions.live >= 1);
    const human = await ctl(srv, ['status']);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /engine .*Docker/);
    assert.match(human.stdout, /cleanup +last/);

    const a = await ctl(srv, ['audit', '--json', '--limit', '3']);
    assert.equal(a.code, 0, a.stderr);
    const rows = JSON.parse(a.stdout);
    assert.equal(rows.length, 3);
    assert.equal(rows[0].command, 'kill -KILL $$');
    assert.equal(rows[0].exit_code, 137);
    assert.equal(rows[0].client_id, 'api-key');
    const ah = await ctl(srv, ['audit']);
    assert.match(ah.stdout, /kill -KILL/);

    for (const what of ['clients', 'tokens']) {
      const r = await ctl(srv, [what, 'list', '--json']);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(JSON.parse(r.stdout), []);
    }
    const l = await ctl(srv, ['links', 'list', '--json']);
    if (l.code === 0) assert.ok(Array.isArray(JSON.parse(l.stdout)));
    else assert.match(l.stderr, /no download links/);
    const bad = await ctl(srv, ['frobnicate']);
    assert.equal(bad.code, 2);
  });

  it('audit rows past SANDBOX_AUDIT_RETENTION are pruned by the clean-up pass', async () => {
    await sql(srv, "insert into run (id, client_id, command, timeout, started, finished, state) values ('ancient', 'api-key', 'echo old', 60, 1000, 1001, 'exit')");
    const r = await ctl(srv, ['cleanup', '--json']);
    assert.equal(JSON.parse(r.stdout).runs_pruned, 1, r.stdout);
    assert.equal(await sql(srv, "select count(*) from run where id = 'ancient'"), '0');
  });

  it('sandboxctl rotate-key writes a new key atomically, mode 600, without printing it', async () => {
    const copy = join(srv.dir, 'rotate.env');
    copyFileSync(srv.envFile, copy);
    const before = readFileSync(copy, 'utf8');
    const r = await ctl(srv, ['rotate-key'], { envFile: copy });
    assert.equal(r.code, 0, r.stderr);
    const after = readFileSync(copy, 'utf8');
    const key = after.match(/^SANDBOX_API_KEY=(.*)$/m)[1];
    assert.notEqual(key, srv.key);
    assert.ok(key.length >= 40);
    assert.equal((after.match(/SANDBOX_API_KEY=/g) ?? []).length, 1);
    assert.equal(after.replace(/^SANDBOX_API_KEY=.*$/m, ''), before.replace(/^SANDBOX_API_KEY=.*$/m, ''));
    assert.equal(statSync(copy).mode & 0o777, 0o600);
    assert.ok(!r.stdout.includes(key), 'the key is not printed');
    assert.match(r.stdout, /download link/);
    assert.match(r.stdout, /Restart/);
    const shown = await ctl(srv, ['rotate-key', '--show-key', '--json'], { envFile: copy });
    const j = JSON.parse(shown.stdout);
    assert.equal(j.key, readFileSync(copy, 'utf8').match(/^SANDBOX_API_KEY=(.*)$/m)[1]);
  });

  it('the same program answers a plain CGI request', async () => {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'cgi', version: '1' } },
    });
    const bodyFile = join(srv.dir, 'cgi-body.json');
    writeFileSync(bodyFile, body);
    const env = {
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
    };
    const { code, stdout, stderr } = await runProgram(join(srv.bin, 'mcp'), [], { env, clean: true, input: readFileSync(bodyFile), timeout: 30000 });
    assert.equal(code, 0, stderr);
    const [head, json] = stdout.split(/\r?\n\r?\n/);
    assert.match(head, /^Status: 200/);
    assert.match(head, /Mcp-Session-Id: \S+/i);
    assert.equal(JSON.parse(json).result.protocolVersion, '2025-11-25');
  });
});
