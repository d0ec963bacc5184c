// The settings that size a program's threads are honoured: threads start on
// demand (an idle program keeps one worker), never more than SANDBOX_THREADS
// serve at once, and requests beyond that wait their turn and are answered.
// (SANDBOX_DB_CACHE: tests/unit/test_db_cache.c.) CS_MCP_PROCS sizes the
// /mcp processes (one by default). Outbound HTTP is libcurl's OpenSSL
// flavour (lib/base/xfer.c): the programs that reach the engine or fetch a
// metadata document load it, the others do not, and none links
// libcurl-gnutls.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { startServer, sleep, TOP } from './lib/server.mjs';
import { openSession, call } from './lib/client.mjs';

// Threads by name (/proc/PID/task/*/comm): the program names its own
// (lib/http/pool.c, lib/sandbox/chan.c, lib/sandbox/guard.c,
// lib/ops/cleanup.c); the main thread keeps the program's name. Anything else (a library's thread) is counted
// under its own name and fails the check below.
const OWN = new Set(['cs-worker', 'cs-signal', 'cs-channel', 'cs-cleanup', 'cs-guard']);

// name -> count, and tid -> name, of a process's threads.
function threadNames(pid) {
  const names = {};
  const byTid = new Map();
  let tids = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return { names, byTid };
  }
  for (const t of tids) {
    let n;
    try {
      n = readFileSync(`/proc/${pid}/task/${t}/comm`, 'utf8').trim();
    } catch {
      continue;
    }
    if (t === String(pid)) n = 'main';
    names[n] = (names[n] ?? 0) + 1;
    byTid.set(t, n);
  }
  return { names, byTid };
}

test('threads start on demand and stay within SANDBOX_THREADS', async () => {
  const srv = await startServer({ name: 'lean', settings: { SANDBOX_THREADS: 3 } });
  try {
    // After the start's few requests, no program holds SANDBOX_THREADS
    // workers (one idle, a second if a start-up request overlapped).
    for (const p of srv.programPids(null)) {
      const { names: n } = threadNames(p);
      assert.ok((n['cs-worker'] ?? 0) <= 2, `pid ${p} idle: ${JSON.stringify(n)}`);
    }
    const sess = await openSession(srv);
    const pids = srv.programPids('mcp');
    let most = 0;
    const strangers = new Set();
    let sampling = true;
    // Threads are named at birth (lib/base/thread.c); a worker is still a
    // thread named so in two samples running, so one caught mid-rename is
    // not counted.
    const before = new Map();
    const sampler = (async () => {
      while (sampling) {
        for (const p of pids) {
          const { byTid } = threadNames(p);
          const last = before.get(p) ?? new Map();
          let workers = 0;
          for (const [t, n] of byTid) {
            if (n === 'cs-worker' && last.get(t) === 'cs-worker') workers++;
            if (n !== 'main' && !OWN.has(n) && last.get(t) === n) strangers.add(n);
          }
          most = Math.max(most, workers);
          before.set(p, byTid);
        }
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
    assert.ok(most >= 2, `workers started on demand (at most ${most} seen)`);
    assert.ok(most <= 3, `at most SANDBOX_THREADS workers: ${most} seen`);
    assert.deepEqual([...strangers], [], 'no thread the program did not start and name');

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

// The programs that talk to the engine, or fetch a client's metadata document.
const NET = ['mcp', 'dl', 'up', 'authorize'];

test('ldd: the programs that reach the engine link libcurl (OpenSSL), the others not; none libcurl-gnutls', async () => {
  const bin = resolve(TOP, process.env.CS_BIN ?? 'build/san/bin');
  for (const n of ['wellknown', 'token', 'register', 'sandboxctl', ...NET]) {
    const out = execFileSync('ldd', [join(bin, n)], { encoding: 'utf8' });
    assert.doesNotMatch(out, /libcurl-gnutls/, `${n} links libcurl-gnutls`);
    const want = NET.includes(n) || n === 'sandboxctl';
    assert.equal(/libcurl\.so\.4/.test(out), want, `${n} ${want ? 'links' : 'does not link'} libcurl:\n${out}`);
  }
});

test('one /mcp process by default, CS_MCP_PROCS more; libcurl loaded where it is used; a long request holds back no other', async () => {
  const one = await startServer({ name: 'lean-procs', mcpProcs: null });
  try {
    assert.equal(one.programPids('mcp').length, 1, 'one /mcp process at the default');
    // Loaded libraries: what the program's own memory pays for.
    const curl = {};
    for (const p of one.programPids(null)) {
      curl[progName(p)] = /libcurl\.so/.test(readFileSync(`/proc/${p}/maps`, 'utf8'));
    }
    for (const n of ['wellknown', 'token', 'register', ...NET]) {
      assert.equal(curl[n], NET.includes(n), `${n} ${NET.includes(n) ? 'loads' : 'does not load'} libcurl`);
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
