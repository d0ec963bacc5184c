// The settings that size a program's threads are honoured: threads start on
// demand (an idle program keeps one worker), never more than SANDBOX_THREADS
// serve at once, and requests beyond that wait their turn and are answered.
// (SANDBOX_DB_CACHE: tests/unit/test_db_cache.c.) CS_MCP_PROCS sizes the
// /mcp processes (one by default), and no program loads libcurl (outbound
// HTTP is lib/base/httpc.c).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startServer, sleep } from './lib/server.mjs';
import { openSession, call } from './lib/client.mjs';

// Besides the workers: the main thread, the signal thread and, during a
// clean-up pass, its thread.
const HELPERS = 3;

function threads(pid) {
  try {
    return Number(/^Threads:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
  } catch {
    return 0;
  }
}

test('threads start on demand and stay within SANDBOX_THREADS', async () => {
  const srv = await startServer({ name: 'lean', settings: { SANDBOX_THREADS: 3 } });
  try {
    // Before any request, every program has one worker.
    for (const p of srv.programPids(null)) assert.ok(threads(p) <= 1 + HELPERS, `pid ${p}: ${threads(p)} threads idle`);
    const sess = await openSession(srv);
    const pids = srv.programPids('mcp');
    let most = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        for (const p of pids) most = Math.max(most, threads(p));
        await sleep(20);
      }
    })();
    // Ten commands of a second each against 2 processes of 3 threads.
    const runs = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        call(srv, sess, 'tools/call', { name: 'execute', arguments: { command: 'sleep 1; echo done' } }, { id: 100 + i }),
      ),
    );
    sampling = false;
    await sampler;
    for (const r of runs) {
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.result.structuredContent.exit_code, 0, r.text);
    }
    assert.ok(most >= 2 + 2, `threads started on demand (at most ${most} seen)`);
    assert.ok(most <= 3 + HELPERS, `at most SANDBOX_THREADS workers: ${most} threads seen`);

    assert.equal(srv.sanitizerReports(), '');
  } finally {
    await srv.stop();
  }
});

// cmdline of a program's process: its name.
function progName(pid) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0].split('/').pop();
  } catch {
    return '';
  }
}

test('one /mcp process by default, CS_MCP_PROCS more; no program loads libcurl; a long request holds back no other', async () => {
  const one = await startServer({ name: 'lean-procs', mcpProcs: null });
  try {
    assert.equal(one.programPids('mcp').length, 1, 'one /mcp process at the default');
    // Loaded libraries: what the program's own memory pays for.
    const curl = {};
    for (const p of one.programPids(null)) {
      curl[progName(p)] = /libcurl\.so/.test(readFileSync(`/proc/${p}/maps`, 'utf8'));
    }
    // Outbound HTTP is our own client (lib/base/httpc.c): no program loads libcurl.
    for (const n of ['wellknown', 'token', 'register', 'mcp', 'dl', 'up', 'authorize']) {
      assert.equal(curl[n], false, `${n} does not load libcurl`);
    }
    const sess = await openSession(one);
    // In the one process, one thread at a time waits in accept() and takes
    // the requests after its own; a request that holds it lets another
    // thread in (lib/http/pool.c), so a quick request is answered while a long
    // one runs.
    const order = [];
    const long = call(one, sess, 'tools/call', { name: 'execute', arguments: { command: 'sleep 3; echo late' } }, { id: 200 }).then((r) => {
      order.push('long');
      return r;
    });
    await sleep(500);
    const quick = await call(one, sess, 'ping', undefined, { id: 201 });
    order.push('quick');
    assert.equal(quick.status, 200, quick.text);
    assert.equal((await long).json.result.structuredContent.exit_code, 0);
    assert.deepEqual(order, ['quick', 'long'], 'a ping is answered while a command holds a thread');
    assert.equal(one.sanitizerReports(), '');
  } finally {
    await one.stop();
  }
  const three = await startServer({ name: 'lean-procs3', mcpProcs: 3 });
  try {
    assert.equal(three.programPids('mcp').length, 3, 'CS_MCP_PROCS=3: three /mcp processes');
  } finally {
    await three.stop();
  }
});
