// MCP 2026-07-28 on /mcp over raw HTTP: stateless requests (server/discover,
// the header checks, resultType), and long commands as Tasks (ext-tasks
// specification/draft/tasks.md) or as run_id handles: a command outliving
// SANDBOX_INLINE_WAIT becomes a task that tasks/get reports working then
// completed, tasks/cancel kills its tree, another owner gets -32602;
// closing the stream before the answer kills the command; the cap on
// commands at once; a restart of the programs mid-task keeps its result.
// A task holds no worker thread (more tasks than threads run while other
// requests are answered) and still ends at its timeout.
// The official v2 client has no Tasks support yet, so
// these requests are built by hand. Run behind lighttpd and Caddy.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { startServer, docker, dockerExec, waitFor, sleep, containerCommands } from './lib/server.mjs';
import { ctl } from './lib/hostile.mjs';
import { http } from './lib/client.mjs';
import { register, rawFlow } from './lib/oauth.mjs';

const execFileP = promisify(execFile);
const V = '2026-07-28';
const TASKS = 'io.modelcontextprotocol/tasks';
const INLINE = 6; // SANDBOX_INLINE_WAIT for this server, seconds

const mark = () => `${10 + Math.floor(Math.random() * 80)}.${randomBytes(3).readUIntBE(0, 3)}`;

/* A 2026-07-28 request body: _meta with the version and capabilities. */
function body(method, params = {}, { id = 1, tasks = true } = {}) {
  return {
    jsonrpc: '2.0',
    id,
    method,
    params: {
      ...params,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': V,
        'io.modelcontextprotocol/clientCapabilities': tasks ? { extensions: { [TASKS]: {} } } : {},
        'io.modelcontextprotocol/clientInfo': { name: 'raw-2026', version: '1.0.0' },
      },
    },
  };
}

/* POST a 2026 request with the headers a client must send. */
function modern(srv, method, params, { id, tasks, key, headers = {}, timeout } = {}) {
  const name = params?.name ?? params?.taskId;
  return http(srv, {
    body: body(method, params, { id, tasks }),
    headers: {
      'mcp-protocol-version': V,
      'mcp-method': method,
      ...(name !== undefined ? { 'mcp-name': name } : {}),
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...headers,
    },
    timeout,
  });
}

const execute = (srv, command, opts) => modern(srv, 'tools/call', { name: 'execute', arguments: { command } }, opts);
const taskGet = (srv, taskId, opts) => modern(srv, 'tasks/get', { taskId }, opts);


async function sql(srv, query) {
  const { stdout } = await execFileP('sqlite3', ['-cmd', '.timeout 5000', srv.settings.SANDBOX_DB, query]);
  return stdout.trim();
}

describe('MCP 2026-07-28 and Tasks over raw HTTP', () => {
  let srv;

  before(async () => {
    srv = await startServer({
      name: 'tasks',
      settings: { SANDBOX_INLINE_WAIT: INLINE, SANDBOX_MAX_RUNNING_PER_OWNER: 4 },
    });
  });
  after(async () => {
    await srv?.stop();
  });

  it('server/discover: versions of both eras, tools and the Tasks extension, caching hints, no session', async () => {
    const r = await modern(srv, 'server/discover', {});
    assert.equal(r.status, 200, r.text);
    const res = r.json.result;
    assert.equal(res.resultType, 'complete');
    assert.deepEqual(res.supportedVersions, ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26']);
    assert.deepEqual(res.capabilities, { tools: {}, extensions: { [TASKS]: {} } });
    assert.equal(res._meta['io.modelcontextprotocol/serverInfo'].name, 'code-sandbox');
    assert.ok(Number.isInteger(res.ttlMs) && res.ttlMs >= 0);
    assert.equal(res.cacheScope, 'public');
    assert.match(res.instructions, /kills its command/);
    assert.equal(r.headers.get('mcp-session-id'), null);
    // No session to end or stream to open: GET and DELETE are 405.
    for (const method of ['GET', 'DELETE']) {
      const x = await http(srv, { method, headers: { 'mcp-protocol-version': V } });
      assert.equal(x.status, 405, `${method}: ${x.text}`);
    }
    const list = await modern(srv, 'tools/list', {});
    assert.deepEqual(list.json.result.tools.map((t) => t.name), ['execute', 'get_result', 'share_file', 'upload_link', 'view_image', 'terminal_start', 'terminal_send', 'terminal_read', 'terminal_close', 'terminal_link', 'preview_link', 'snapshot', 'snapshots', 'restore', 'snapshot_delete']);
    assert.equal(list.json.result.cacheScope, 'public');
    assert.match(list.json.result.tools[0].description, /kills the command/);
  });

  it('the header checks: -32020 for a wrong Mcp-Name (Base64 form accepted), -32022 for an unknown version, 404 for removed methods', async () => {
    const wrong = await modern(srv, 'tools/call', { name: 'execute', arguments: { command: 'true' } }, { headers: { 'mcp-name': 'get_result' } });
    assert.equal(wrong.status, 400, wrong.text);
    assert.equal(wrong.json.error.code, -32020);
    const b64 = await modern(srv, 'tools/call', { name: 'execute', arguments: { command: 'echo b64' } }, {
      headers: { 'mcp-name': `=?base64?${Buffer.from('execute').toString('base64')}?=` },
    });
    assert.equal(b64.status, 200, b64.text);
    assert.equal(b64.json.result.structuredContent.stdout, 'b64\n');
    const badB64 = await modern(srv, 'tools/call', { name: 'execute', arguments: { command: 'true' } }, { headers: { 'mcp-name': '=?base64?ZXhlY3V0ZQ?=' } });
    assert.equal(badB64.status, 400, badB64.text);
    assert.equal(badB64.json.error.code, -32020);
    const mismatch = await http(srv, { body: body('tools/list'), headers: { 'mcp-protocol-version': '2099-01-01', 'mcp-method': 'tools/list' } });
    assert.equal(mismatch.status, 400, mismatch.text);
    assert.equal(mismatch.json.error.code, -32020);
    const b = body('tools/list', {}, { id: 'v-1' });
    b.params._meta['io.modelcontextprotocol/protocolVersion'] = '2099-01-01';
    const version = await http(srv, { body: b, headers: { 'mcp-protocol-version': '2099-01-01', 'mcp-method': 'tools/list' } });
    assert.equal(version.status, 400, version.text);
    assert.equal(version.json.id, 'v-1');
    assert.equal(version.json.error.code, -32022);
    assert.deepEqual(version.json.error.data, { supported: ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26'], requested: '2099-01-01' });
    for (const method of ['initialize', 'ping', 'tasks/list', 'tasks/result']) {
      const r = await modern(srv, method, {}, { id: 'gone-1' });
      assert.equal(r.status, 404, `${method}: ${r.text}`);
      assert.equal(r.json.error.code, -32601);
      assert.equal(r.json.id, 'gone-1');
    }
  });

  it('a short command answers inline: resultType complete, the exact output', async () => {
    const r = await execute(srv, 'printf "a\\nb"');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.result.resultType, 'complete');
    assert.equal(r.json.result.structuredContent.stdout, 'a\nb');
    assert.equal(r.json.result.isError, false);
  });

  it('tasks/* without the extension declared: -32021 (400); an unknown task: -32602; a wrong Mcp-Name: -32020', async () => {
    const gated = await taskGet(srv, 'nope', { tasks: false });
    assert.equal(gated.status, 400, gated.text);
    assert.equal(gated.json.error.code, -32021);
    assert.deepEqual(gated.json.error.data.requiredCapabilities, { extensions: { [TASKS]: {} } });
    const unknown = await taskGet(srv, 'no-such-task');
    assert.equal(unknown.json.error.code, -32602, unknown.text);
    const name = await modern(srv, 'tasks/get', { taskId: 'abc' }, { headers: { 'mcp-name': 'xyz' } });
    assert.equal(name.status, 400);
    assert.equal(name.json.error.code, -32020);
  });

  it('a 30 s command becomes a task: working (elapsed, newest line), then completed with the exact output; another owner gets -32602', async () => {
    const m = mark();
    const t0 = Date.now();
    const r = await execute(srv, `echo start-${m}; sleep 30; echo end-${m}`, { timeout: 30000 });
    assert.ok(Date.now() - t0 < (INLINE + 10) * 1000, `answered after ${Date.now() - t0} ms`);
    assert.equal(r.status, 200, r.text);
    const task = r.json.result;
    assert.equal(task.resultType, 'task', r.text);
    assert.equal(task.status, 'working');
    assert.match(task.taskId, /^[A-Za-z0-9_-]{16,}$/);
    assert.ok(Number.isInteger(task.ttlMs) && task.ttlMs > 0);
    assert.ok(Number.isInteger(task.pollIntervalMs) && task.pollIntervalMs > 0);
    assert.ok(!('result' in task) && !('error' in task));
    assert.ok(!Number.isNaN(Date.parse(task.createdAt)) && !Number.isNaN(Date.parse(task.lastUpdatedAt)));

    // Durable before the answer: tasks/get finds it at once.
    const first = await taskGet(srv, task.taskId);
    assert.equal(first.status, 200, first.text);
    assert.equal(first.json.result.resultType, 'complete');
    assert.equal(first.json.result.status, 'working');

    // The newest output line shows up in statusMessage.
    const working = await waitFor(
      async () => {
        const g = await taskGet(srv, task.taskId);
        return g.json.result.status === 'working' && g.json.result.statusMessage.includes(`start-${m}`) && g.json.result;
      },
      { timeout: 20000, interval: 1000, what: 'the newest line in statusMessage' },
    );
    assert.match(working.statusMessage, /Running for \d+s/);

    // Polls while it runs are answered over the supervisor's channel: no
    // engine exec per poll (each process opens its channel once).
    await Promise.all([taskGet(srv, task.taskId), taskGet(srv, task.taskId)]);
    await sleep(50);
    const since = (Date.now() / 1000).toFixed(3);
    for (let i = 0; i < 6; i++) assert.equal((await taskGet(srv, task.taskId)).json.result.status, 'working');
    await sleep(300);
    const ev = await docker('events', '--since', since, '--until', (Date.now() / 1000).toFixed(3),
      '--filter', `container=${srv.container}`, '--filter', 'type=container', '--format', '{{.Action}}');
    const execs = ev.stdout.split('\n').filter((a) => a.startsWith('exec_create'));
    assert.ok(execs.length <= 2, `${execs.length} execs for 6 polls:\n${execs.join('\n')}`);

    // Another owner (a personal key, signed in through its own client): the task is not theirs to see.
    const added = await ctl(srv, ['--json', 'keys', 'add', 'other']);
    assert.equal(added.code, 0, added.stderr);
    const other = await register(srv, { redirect_uris: ['http://127.0.0.1:9/cb'], token_endpoint_auth_method: 'none', client_name: 'other' });
    const { tokens } = await rawFlow(srv, other.json, { key: JSON.parse(added.stdout).key });
    for (const method of ['tasks/get', 'tasks/cancel', 'tasks/update']) {
      const o = await modern(srv, method, { taskId: task.taskId }, { key: tokens.access_token });
      assert.equal(o.json?.error?.code, -32602, `${method}: ${o.text}`);
    }
    const upd = await modern(srv, 'tasks/update', { taskId: task.taskId, inputResponses: {} });
    assert.deepEqual(upd.json.result.resultType, 'complete');

    const done = await waitFor(
      async () => {
        const g = await taskGet(srv, task.taskId);
        return g.json.result.status !== 'working' && g.json.result;
      },
      { timeout: 120000, interval: 2000, what: 'the task to complete' },
    );
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.equal(done.result.structuredContent.stdout, `start-${m}\nend-${m}\n`);
    assert.equal(done.result.structuredContent.exit_code, 0);
    assert.equal(done.result.isError, false);
    assert.equal(await sql(srv, `select handle || ' ' || state from run where id = '${task.taskId}'`), 'task exit');
  });

  it('tasks/cancel kills the whole tree (checked in the container); the task ends cancelled; a second cancel is acknowledged', async () => {
    const m = mark();
    const r = await execute(srv, `sh -c 'sleep 4${m}' & sleep 5${m}; wait`, { timeout: 30000 });
    const task = r.json.result;
    assert.equal(task.resultType, 'task', r.text);
    const mine = (cmds) => cmds.filter((c) => c.includes(`sleep 4${m}`) || c.includes(`sleep 5${m}`));
    await waitFor(async () => mine(await containerCommands(srv)).length >= 2, { timeout: 10000, what: 'both sleeps running' });
    const c = await modern(srv, 'tasks/cancel', { taskId: task.taskId });
    assert.equal(c.status, 200, c.text);
    assert.deepEqual(Object.keys(c.json.result).sort(), ['_meta', 'resultType']);
    await waitFor(async () => mine(await containerCommands(srv)).length === 0, { timeout: 5000, what: 'the tree to be killed' });
    const g = await waitFor(async () => {
      const x = await taskGet(srv, task.taskId);
      return x.json.result.status !== 'working' && x.json.result;
    }, { timeout: 10000, what: 'the cancelled status' });
    assert.equal(g.status, 'cancelled', JSON.stringify(g));
    const again = await modern(srv, 'tasks/cancel', { taskId: task.taskId });
    assert.equal(again.json.result.resultType, 'complete');
  });

  it('without the Tasks extension a long command comes back as a handle naming run_id; get_result waits at most a capped time', async () => {
    const m = mark();
    const t0 = Date.now();
    const r = await execute(srv, `sleep 12; echo late-${m}`, { tasks: false, timeout: 30000 });
    assert.ok(Date.now() - t0 < (INLINE + 10) * 1000);
    const res = r.json.result;
    assert.equal(res.resultType, 'complete', r.text);
    assert.equal(res.structuredContent.running, true);
    const runId = res.structuredContent.run_id;
    assert.match(res.content[0].text, new RegExp(`get_result\\(run_id="${runId}"\\)`));
    for (;;) {
      const t1 = Date.now();
      const g = await modern(srv, 'tools/call', { name: 'get_result', arguments: { run_id: runId, wait: 600 } }, { tasks: false, timeout: 30000 });
      // Capped at 3/4 of the inline wait (4 s here), never the 600 asked for.
      assert.ok(Date.now() - t1 < INLINE * 1000 + 3000, `get_result took ${Date.now() - t1} ms`);
      if (g.json.result.structuredContent.state === 'running') continue;
      assert.equal(g.json.result.structuredContent.stdout, `late-${m}\n`);
      break;
    }
  });

  it('closing the stream before the answer kills the command within a few seconds (checked in the container)', async () => {
    const m = mark();
    const ac = new AbortController();
    const res = await fetch(`${srv.mcpUrl}`, {
      method: 'POST',
      signal: ac.signal,
      headers: {
        authorization: `Bearer ${srv.key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': V,
        'mcp-method': 'tools/call',
        'mcp-name': 'execute',
      },
      body: JSON.stringify(body('tools/call', { name: 'execute', arguments: { command: `sh -c 'sleep 4${m}' & sleep 5${m}; wait` } })),
    });
    assert.equal(res.headers.get('content-type'), 'text/event-stream');
    const mine = (cmds) => cmds.filter((c) => c.includes(`sleep 4${m}`) || c.includes(`sleep 5${m}`));
    // Running, and still before the inline wait ends (no answer yet).
    await waitFor(async () => mine(await containerCommands(srv)).length >= 2, { timeout: INLINE * 1000 - 1000, what: 'both sleeps running' });
    const closed = Date.now();
    ac.abort();
    // Until the answer the program writes a keep-alive every 250 ms and
    // watches its FastCGI connection: lighttpd closes it as soon as the
    // client goes, Caddy once a write to the client failed. About 0.6 s
    // behind lighttpd and 1.2 s behind Caddy here (tests/bench/close.mjs);
    // the bound leaves room for a loaded machine.
    const limit = 4000;
    await waitFor(async () => mine(await containerCommands(srv)).length === 0, { timeout: limit, what: 'the tree to be killed after the close' });
    assert.ok(Date.now() - closed < limit, `killed ${Date.now() - closed} ms after the close`);
    await waitFor(async () => (await sql(srv, `select state from run where command like '%sleep 5${m}%'`)) === 'cancel', { timeout: 10000, what: 'the run marked cancel' });
  });

  it('the cap on commands at once: a clear error beyond it (SANDBOX_MAX_RUNNING_PER_OWNER)', async () => {
    const tasks = [];
    try {
      const started = await Promise.all([1, 2, 3, 4].map(() => execute(srv, 'sleep 60', { timeout: 30000 })));
      for (const r of started) tasks.push(r.json.result.taskId);
      assert.ok(tasks.every(Boolean), started.map((r) => r.text).join('\n'));
      const over = await execute(srv, 'echo one more');
      assert.equal(over.json.result.isError, true);
      assert.match(over.json.result.content[0].text, /Not started: 4 of your commands are already running.*SANDBOX_MAX_RUNNING_PER_OWNER/);
    } finally {
      for (const t of tasks) if (t) await modern(srv, 'tasks/cancel', { taskId: t });
    }
    await waitFor(async () => (await execute(srv, 'echo again')).json.result.structuredContent?.stdout === 'again\n', { timeout: 15000, what: 'room again' });
  });

  it('a restart of the programs mid-task: the task completes with its real output (the supervisor keeps it)', async () => {
    const m = mark();
    const r = await execute(srv, `echo start-${m}; sleep 10; echo end-${m}`, { timeout: 30000 });
    const task = r.json.result;
    assert.equal(task.resultType, 'task', r.text);
    await srv.restart();
    const g = await taskGet(srv, task.taskId);
    assert.equal(g.status, 200, g.text);
    assert.equal(g.json.result.taskId, task.taskId);
    // The worker that watched it stopped at SIGTERM; the command ran on
    // under the supervisor, whose record a later tasks/get collects.
    const done = await waitFor(
      async () => {
        const d = await taskGet(srv, task.taskId);
        return d.json.result.status !== 'working' && d.json.result;
      },
      { timeout: 60000, interval: 1000, what: 'the task to complete after the restart' },
    );
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.equal(done.result.structuredContent.stdout, `start-${m}\nend-${m}\n`);
    assert.equal(done.result.structuredContent.exit_code, 0);
    assert.equal(await sql(srv, `select handle || ' ' || state from run where id = '${task.taskId}'`), 'task exit');
  });
});

// Tasks and handles hold no worker thread: with one thread in each /mcp
// process, more long tasks than threads are started (two at a time, each
// answered after the inline wait), and other requests are still answered;
// every task is working, then cancelled with its tree killed.
describe('tasks hold no worker thread', () => {
  let srv;

  before(async () => {
    srv = await startServer({
      name: 'tasks-threads',
      settings: { SANDBOX_THREADS: 1, SANDBOX_INLINE_WAIT: 2, SANDBOX_MAX_RUNNING_PER_OWNER: 8 },
    });
  });
  after(async () => {
    await srv?.stop();
  });

  it('six long tasks on two worker threads; discover, a short execute, tasks/get and tasks/cancel still answered', async () => {
    const m = mark();
    const tasks = [];
    try {
      for (let batch = 0; batch < 3; batch++) {
        const rs = await Promise.all([0, 1].map((i) => execute(srv, `sleep 30${batch}${i}${m}`, { timeout: 20000 })));
        for (const r of rs) {
          assert.equal(r.json?.result?.resultType, 'task', r.text);
          tasks.push(r.json.result.taskId);
        }
      }
      const mine = (cmds) => cmds.filter((c) => c.includes(`${m}`) && c.startsWith('sleep 30'));
      await waitFor(async () => mine(await containerCommands(srv)).length === 6, { timeout: 10000, what: 'six sleeps running' });
      const d = await modern(srv, 'server/discover', {}, { timeout: 10000 });
      assert.equal(d.status, 200, d.text);
      const short = await execute(srv, `echo free-${m}`, { timeout: 10000 });
      assert.equal(short.json.result.structuredContent.stdout, `free-${m}\n`, short.text);
      for (const t of tasks) {
        const g = await taskGet(srv, t, { timeout: 10000 });
        assert.equal(g.json.result.status, 'working', g.text);
      }
      // The rows are the count: none of the six has a worker.
      assert.equal(await sql(srv, "select count(*) from run where state = 'running' and handle = 'task'"), '6');
    } finally {
      for (const t of tasks) await modern(srv, 'tasks/cancel', { taskId: t }, { timeout: 10000 });
    }
    await waitFor(async () => (await containerCommands(srv)).filter((c) => c.includes(`${m}`) && c.startsWith('sleep 30')).length === 0, {
      timeout: 10000,
      what: 'the trees killed',
    });
    for (const t of tasks) {
      const g = await taskGet(srv, t, { timeout: 10000 });
      assert.equal(g.json.result.status, 'cancelled', g.text);
    }
  });

  it('a released task still times out: the supervisor kills it at its timeout, the server says timed out', async () => {
    const m = mark();
    const r = await modern(srv, 'tools/call', { name: 'execute', arguments: { command: `echo t-${m}; sleep 6${m}`, timeout: 5 } }, { timeout: 20000 });
    const task = r.json.result;
    assert.equal(task.resultType, 'task', r.text);
    await waitFor(async () => (await containerCommands(srv)).some((c) => c.includes(`sleep 6${m}`)), { timeout: 4000, what: 'the command running' });
    // Killed in the container at 5 s with no one asking; the listing of
    // recent runs then collects it.
    await waitFor(async () => (await containerCommands(srv)).filter((c) => c.includes(`sleep 6${m}`)).length === 0, {
      timeout: 20000,
      what: 'the supervisor to kill it',
    });
    const list = await modern(srv, 'tools/call', { name: 'get_result', arguments: {} }, { timeout: 10000 });
    assert.equal(list.json.result.structuredContent.runs.find((x) => x.run_id === task.taskId)?.state, 'timeout', list.text);
    const done = (await taskGet(srv, task.taskId, { timeout: 10000 })).json.result;
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.equal(done.result.structuredContent.timed_out, true, JSON.stringify(done));
    assert.equal(done.result.structuredContent.stdout, `t-${m}\n`);
    assert.equal(await sql(srv, `select handle || ' ' || state from run where id = '${task.taskId}'`), 'task timeout');
  });
});
