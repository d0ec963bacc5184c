// initialize, version negotiation, the tool list, ping and sessions shared
// by both /mcp worker processes: the official SDK client and raw HTTP.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startServer } from './lib/server.mjs';
import { connect, http, initializeBody, openSession, call, VERSIONS, LATEST } from './lib/client.mjs';

describe('initialize and tools/list', () => {
  let srv;
  let conn;

  before(async () => {
    srv = await startServer({ name: 'init' });
  });
  after(async () => {
    await conn?.close().catch(() => {});
    await srv?.stop();
  });

  it('the SDK client connects with the API key and gets a session', async () => {
    conn = await connect(srv);
    assert.match(conn.sessionId, /^[\x21-\x7e]{16,}$/, 'Mcp-Session-Id is visible ASCII and long enough to be random');
  });

  it('serverInfo names the server and its version; tools capability; instructions', async () => {
    const info = conn.client.getServerVersion();
    assert.equal(typeof info.name, 'string');
    assert.ok(info.name.length > 0);
    assert.equal(typeof info.version, 'string');
    assert.ok(info.version.length > 0);
    const caps = conn.client.getServerCapabilities();
    assert.ok(caps.tools && typeof caps.tools === 'object', 'tools capability advertised');
    const instr = conn.client.getInstructions();
    assert.equal(typeof instr, 'string');
    assert.ok(instr.length >= 80, 'instructions say what the sandbox is and how to use it');
    assert.match(instr, /execute/, 'instructions name the execute tool');
    assert.match(instr, /\/sandbox/, 'instructions name the /sandbox folder');
  });

  for (const v of VERSIONS) {
    it(`initialize with ${v} is answered with ${v}`, async () => {
      const r = await http(srv, { body: initializeBody(v, 11) });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.id, 11);
      assert.equal(r.json.jsonrpc, '2.0');
      assert.equal(r.json.result.protocolVersion, v);
      assert.ok(r.headers.get('mcp-session-id'), 'session id issued');
      assert.ok(r.json.result.serverInfo.name);
      assert.ok(r.json.result.capabilities.tools);
    });
  }

  it('initialize with an unknown version is answered with 2025-11-25', async () => {
    const r = await http(srv, { body: initializeBody('1999-01-01', 'x') });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.id, 'x');
    assert.equal(r.json.result.protocolVersion, LATEST);
  });

  it('each initialize opens a different session', async () => {
    const a = await openSession(srv);
    const b = await openSession(srv);
    assert.notEqual(a.session, b.session);
  });

  it('ping is answered with an empty result', async () => {
    assert.deepEqual(await conn.client.ping(), {});
  });

  it('tools/list has execute with inputSchema, outputSchema and annotations', async () => {
    const { tools } = await conn.client.listTools();
    const ex = tools.find((t) => t.name === 'execute');
    assert.ok(ex, `execute listed (got ${tools.map((t) => t.name).join(', ')})`);
    for (const t of tools) assert.match(t.name, /^[A-Za-z0-9_.-]{1,128}$/);
    assert.equal(typeof ex.description, 'string');
    assert.ok(ex.description.length > 20);
    const is = ex.inputSchema;
    assert.equal(is.type, 'object');
    assert.equal(is.properties.command.type, 'string');
    assert.equal(is.properties.timeout.type, 'integer');
    assert.deepEqual(is.required, ['command']);
    if ('default' in is.properties.timeout) assert.equal(is.properties.timeout.default, 3600);
    const os = ex.outputSchema;
    assert.ok(os, 'outputSchema declared');
    assert.equal(os.type, 'object');
    for (const p of ['exit_code', 'stdout', 'stderr', 'timed_out', 'stdout_truncated_bytes', 'stderr_truncated_bytes', 'duration_ms']) {
      assert.ok(os.properties[p], `outputSchema has ${p}`);
    }
    const an = ex.annotations;
    assert.ok(an, 'annotations present');
    assert.equal(an.readOnlyHint, false, 'execute can change the sandbox');
    for (const h of ['destructiveHint', 'idempotentHint', 'openWorldHint']) {
      if (h in an) assert.equal(typeof an[h], 'boolean', `${h} is a boolean`);
    }
  });

  it('a session opened on one worker process is used on both', async () => {
    const pids = srv.programPids('mcp');
    assert.equal(pids.length, 2, `two /mcp processes (found ${pids.length})`);
    const wchar = (pid) => Number(/wchar: (\d+)/.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))[1]);
    const sess = await openSession(srv);
    // Create the container first: this test is about sessions.
    const warm = await call(srv, sess, 'tools/call', { name: 'execute', arguments: { command: 'true' } }, { id: 99 });
    assert.ok(warm.json?.result?.structuredContent, warm.text);
    assert.notEqual(warm.json.result.isError, true, warm.text);
    const before = pids.map(wchar);
    // Concurrent requests that each take a while: lighttpd gives them to the
    // least busy process, so both serve requests of this one session.
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        call(srv, sess, 'tools/call', { name: 'execute', arguments: { command: 'sleep 1; echo w' + i } }, { id: 100 + i }),
      ),
    );
    results.forEach((r, i) => {
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.id, 100 + i);
      assert.ok(r.json.result?.structuredContent, r.text);
      assert.equal(r.json.result.structuredContent.stdout, `w${i}\n`);
    });
    const after = pids.map(wchar);
    pids.forEach((p, i) => assert.ok(after[i] > before[i], `process ${p} served some of the requests`));
  });

  it('a session outlives a restart of the server (sessions are kept in SQLite)', async () => {
    const sess = await openSession(srv);
    await srv.restart();
    const r = await call(srv, sess, 'ping', undefined, { id: 'after-restart' });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json, { jsonrpc: '2.0', id: 'after-restart', result: {} });
  });

  it('the programs exit cleanly on SIGTERM with no sanitizer reports', async () => {
    await conn.close();
    conn = null;
    await srv.shutdown();
  });
});
