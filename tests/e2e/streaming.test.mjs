// Long commands (issue 5) through the SDK client and raw HTTP: progress
// notifications carrying the newest output while a command runs, keep-alive
// pings on the raw stream, cancellation that kills the whole process tree
// (checked inside the container), a client that disconnects and fetches
// the result later with get_result, 32 long commands at once with short
// requests served meanwhile, and SIGTERM during a running command. Run
// behind lighttpd and behind Caddy (CS_WEB=caddy).

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startServer, dockerExec, waitFor, pidAlive, sleep, WEB, containerCommands } from './lib/server.mjs';
import { connect, resultText, openSession, http, parseSse, rawStream, execBody } from './lib/client.mjs';

const PING = 1; // SANDBOX_PING_INTERVAL for this server, seconds

const mark = () => `m${randomBytes(5).toString('hex')}`;

/* The recent runs get_result() lists. */
async function listRuns(conn) {
  const res = await conn.client.callTool({ name: 'get_result', arguments: {} });
  assert.notEqual(res.isError, true, resultText(res));
  assert.ok(Array.isArray(res.structuredContent?.runs), JSON.stringify(res).slice(0, 500));
  return res.structuredContent.runs;
}

async function findRun(conn, marker) {
  return (await listRuns(conn)).find((r) => typeof r.command === 'string' && r.command.includes(marker));
}

describe('long commands', () => {
  let srv;
  let conn;

  before(async () => {
    // 32 long commands at once, all one owner's: above the default per-owner cap (28).
    srv = await startServer({ name: 'streaming', settings: { SANDBOX_PING_INTERVAL: PING, MAX_OUTPUT_BYTES: 100000, SANDBOX_MAX_RUNNING_PER_OWNER: 40 } });
    conn = await connect(srv);
    // The container exists before any timing below.
    await conn.execute({ command: 'true' });
  });
  after(async () => {
    await conn?.close().catch(() => {});
    await srv?.stop();
  });

  it('progress notifications carry the newest lines while a command prints a line a second', async () => {
    const seen = [];
    const t0 = Date.now();
    const m = mark();
    // A request timeout shorter than the command: only progress resetting
    // it (as Claude Code does) lets the call finish.
    const res = await conn.client.callTool(
      { name: 'execute', arguments: { command: `for i in 1 2 3 4 5 6 7 8; do echo "${m} line $i"; sleep 1; done` } },
      undefined,
      { onprogress: (p) => seen.push({ at: Date.now() - t0, ...p }), resetTimeoutOnProgress: true, timeout: 5000 },
    );
    const end = Date.now() - t0;
    assert.notEqual(res.isError, true, resultText(res));
    const sc = res.structuredContent;
    assert.equal(sc.exit_code, 0);
    assert.equal(sc.stdout, [1, 2, 3, 4, 5, 6, 7, 8].map((i) => `${m} line ${i}\n`).join(''));
    assert.match(sc.run_id, /^[A-Za-z0-9_-]{8,}$/);
    assert.match(resultText(res), new RegExp(`run_id ${sc.run_id}`));

    const trace = JSON.stringify(seen);
    assert.ok(seen.length >= 5, `at least 5 notifications in ${end} ms: ${trace}`);
    assert.ok(seen[0].at < end - 4000, `first notification at ${seen[0].at} ms, the result at ${end} ms: ${trace}`);
    for (let i = 1; i < seen.length; i++) {
      assert.ok(seen[i].progress > seen[i - 1].progress, `progress strictly increasing: ${trace}`);
    }
    // Messages: the newest lines (at most 3), in order, never going back.
    const withMsg = seen.filter((p) => p.message);
    assert.ok(withMsg.length >= 4, `at least 4 notifications with output: ${trace}`);
    let newest = 0;
    const lines = new Set();
    for (const p of withMsg) {
      const ls = p.message.split('\n');
      assert.ok(ls.length >= 1 && ls.length <= 3, `1 to 3 lines: ${JSON.stringify(p.message)}`);
      const nums = ls.map((l) => {
        const x = new RegExp(`^${m} line (\\d)$`).exec(l);
        assert.ok(x, `a line the command printed: ${JSON.stringify(l)}`);
        return Number(x[1]);
      });
      nums.forEach((n, i) => i && assert.equal(n, nums[i - 1] + 1, `consecutive lines: ${JSON.stringify(p.message)}`));
      assert.ok(nums.at(-1) >= newest, `the newest line never goes back: ${trace}`);
      newest = nums.at(-1);
      nums.forEach((n) => lines.add(n));
    }
    assert.ok(lines.has(1), `the first line shows up: ${trace}`);
    assert.ok(lines.size >= 6, `most lines show up while the command runs: ${trace}`);
    // Each line is shown soon after it was printed, not at the end.
    const firstWith = (n) => withMsg.find((p) => p.message.split('\n').includes(`${m} line ${n}`));
    assert.ok(firstWith(1).at < end - 5000, `line 1 shown at ${firstWith(1).at} ms of ${end}`);
  });

  it('a command longer than the ping interval shows ": ping" lines on the raw stream, as they happen', async () => {
    const sess = await openSession(srv);
    const s = rawStream(srv, sess, execBody('ping-1', 'sleep 5; echo slept'));
    await s.done;
    assert.equal(s.status, 200);
    assert.match(s.headers.get('content-type'), /^text\/event-stream/);
    assert.ok(s.ended, `the stream ended normally: ${s.error}`);
    const pings = s.chunks.filter((c) => /^: ping$/m.test(c.text));
    const end = s.chunks.at(-1).at;
    assert.ok(pings.length >= 3, `at least 3 pings in a 5 s command at a ${PING} s interval: ${JSON.stringify(s.chunks)}`);
    // Streamed, not buffered: pings arrive spread out, well before the end.
    assert.ok(pings[0].at < end - 2000, `first ping at ${pings[0].at} ms, end at ${end} ms`);
    assert.ok(pings.at(-1).at - pings[0].at >= 2000, `pings spread over the run: ${pings.map((p) => p.at)}`);
    const final = parseSse(s.text()).find((x) => x.id === 'ping-1');
    assert.ok(final, s.text());
    assert.equal(final.result.structuredContent.stdout, 'slept\n');
  });

  it('a short command over SSE gets just its result event', async () => {
    const sess = await openSession(srv);
    const s = rawStream(srv, sess, execBody('short-1', 'echo quick'));
    await s.done;
    assert.equal(s.status, 200);
    assert.match(s.headers.get('content-type'), /^text\/event-stream/);
    const msgs = parseSse(s.text());
    assert.equal(msgs.length, 1, s.text());
    assert.equal(msgs[0].id, 'short-1');
    assert.equal(msgs[0].result.structuredContent.stdout, 'quick\n');
  });

  it('cancelling through the SDK (AbortSignal) kills the whole process tree and marks the run "cancel"', async () => {
    const m = mark();
    // Children, a grandchild in a subshell, a nested bash's own child.
    const command = `echo started-${m}; sleep 311 & (sleep 312 &); bash -c 'sleep 313 & wait' & sleep 310; echo ${m}`;
    const ac = new AbortController();
    const seen = [];
    const call = conn.client.callTool({ name: 'execute', arguments: { command } }, undefined, {
      signal: ac.signal,
      onprogress: (p) => seen.push(p),
      timeout: 120000,
    });
    call.catch(() => {});
    // Running: its output arrived as progress, its processes are there.
    await waitFor(() => seen.some((p) => (p.message ?? '').includes(`started-${m}`)), { timeout: 20000, what: 'progress with the first line' });
    await waitFor(async () => (await containerCommands(srv)).filter((c) => /^sleep 31[0-3] ?$/.test(c)).length === 4, {
      timeout: 10000,
      what: 'the four sleeps running',
    });
    const t0 = Date.now();
    ac.abort(new Error('stop it'));
    await assert.rejects(call);
    let left = [];
    await waitFor(
      async () => {
        left = (await containerCommands(srv)).filter((c) => /sleep 31[0-3]/.test(c));
        return left.length === 0;
      },
      { timeout: 15000, interval: 100, what: 'no process of the command left' },
    ).catch((e) => assert.fail(`${e.message}: ${left.join(' | ')}`));
    const took = Date.now() - t0;
    assert.ok(took < 3000, `the tree was gone ${took} ms after the cancellation (the check itself takes ~0.2 s)`);
    // The run is recorded as cancelled.
    let run;
    await waitFor(async () => (run = await findRun(conn, m))?.state === 'cancel', { timeout: 10000, what: 'state cancel' }).catch((e) =>
      assert.fail(`${e.message}: ${JSON.stringify(run)}`),
    );
    // The session still works.
    const after = await conn.execute({ command: 'echo still-here' });
    assert.equal(after.structuredContent.stdout, 'still-here\n');
  });

  it('a cancelled request gets no result: its SSE stream just ends', async () => {
    const sess = await openSession(srv);
    const m = mark();
    const s = rawStream(srv, sess, execBody('to-cancel', `echo go-${m}; sleep 320`, { _meta: { progressToken: 'pt-c' } }));
    await waitFor(() => s.text().includes(`go-${m}`), { timeout: 20000, what: 'the first output as progress' });
    const n = await http(srv, {
      session: sess.session,
      version: sess.version,
      body: { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'to-cancel', reason: 'test' } },
    });
    assert.equal(n.status, 202, n.text);
    const t0 = Date.now();
    await Promise.race([s.done, sleep(15000)]);
    assert.ok(s.ended, `the stream ended within 15 s of the cancellation (${Date.now() - t0} ms): ${s.error ?? ''}`);
    const msgs = parseSse(s.text());
    assert.equal(msgs.filter((x) => x.id === 'to-cancel').length, 0, `no response to a cancelled request: ${s.text()}`);
    assert.ok(msgs.every((x) => x.method === 'notifications/progress'), s.text());
    assert.ok(!(await containerCommands(srv)).some((c) => /sleep 320/.test(c)), 'the command was killed');
  });

  it('a client that disconnects mid-command: the command runs on and a new session gets its result', async () => {
    const sess = await openSession(srv);
    const m = mark();
    const command = `echo begin-${m}; sleep 4; echo end-${m}; echo err-${m} >&2; exit 7`;
    const s = rawStream(srv, sess, execBody('lost-1', command));
    await s.ready;
    await sleep(1500);
    s.abort();
    await s.done;
    assert.ok(!s.ended, 'the connection was dropped before the result');
    assert.ok(!s.text().includes('"id":"lost-1"'), 'no result before the drop');

    const other = await connect(srv, { name: 'e2e-later' });
    try {
      const run = await findRun(other, m);
      assert.ok(run, 'the run is listed by get_result()');
      assert.equal(run.state, 'running', JSON.stringify(run));
      assert.ok(Number.isInteger(run.started_seconds_ago), JSON.stringify(run));
      const res = await other.client.callTool({ name: 'get_result', arguments: { run_id: run.run_id, wait: 30 } }, undefined, { timeout: 60000 });
      assert.notEqual(res.isError, true, resultText(res));
      const sc = res.structuredContent;
      assert.equal(sc.run_id, run.run_id);
      assert.equal(sc.exit_code, 7);
      assert.equal(sc.stdout, `begin-${m}\nend-${m}\n`);
      assert.equal(sc.stderr, `err-${m}\n`);
      assert.match(resultText(res), /end-/);
      // Listed as finished now, with its exit code.
      const done = await findRun(other, m);
      assert.equal(done.state, 'exit');
      assert.equal(done.exit_code, 7);
    } finally {
      await other.close();
    }
  });

  it('32 long commands at once: ping, tools/list and a short execute are served meanwhile', async () => {
    const N = 32;
    const m = mark();
    const progress = Array.from({ length: N }, () => 0);
    let settled = 0;
    const clients = [conn, await connect(srv, { name: 'e2e-many' })];
    const longs = Array.from({ length: N }, (_, i) =>
      clients[i % 2].client
        .callTool({ name: 'execute', arguments: { command: `sleep 20; echo ${m}-${i}` } }, undefined, {
          onprogress: () => progress[i]++,
          resetTimeoutOnProgress: true,
          timeout: 60000,
        })
        .finally(() => settled++),
    );
    try {
      // All running: each has had a progress notification (one a ping interval).
      await waitFor(() => progress.every((n) => n > 0), { timeout: 30000, what: 'progress on all 32 calls' }).catch((e) =>
        assert.fail(`${e.message}: ${progress.join(',')}`),
      );
      // A call's progress can come before its command has started under
      // load: all of them running within a few seconds.
      let running = 0;
      await waitFor(async () => {
        running = (await containerCommands(srv)).filter((c) => c.startsWith('sleep 20')).length;
        return running === N;
      }, { timeout: 6000, interval: 500, what: `${N} commands running in the container` }).catch(() => {});
      assert.equal(running, N, `${N} commands running in the container`);
      const timed = async (what, fn) => {
        const t0 = Date.now();
        const v = await fn();
        return { what, ms: Date.now() - t0, v };
      };
      const other = await openSession(srv);
      const results = [];
      for (let round = 0; round < 3; round++) {
        results.push(await timed('ping', () => conn.client.ping()));
        results.push(await timed('tools/list', () => conn.client.listTools()));
        results.push(await timed('execute echo', () => conn.execute({ command: 'echo short' })));
        results.push(await timed('raw ping', () => http(srv, { session: other.session, version: other.version, body: { jsonrpc: '2.0', id: 9, method: 'ping' } })));
      }
      const summary = results.map((r) => `${r.what} ${r.ms} ms`).join(', ');
      assert.equal(settled, 0, `the long commands were still running while the short requests were served (${summary})`);
      for (const r of results.filter((x) => x.what === 'execute echo')) assert.equal(r.v.structuredContent.stdout, 'short\n');
      for (const r of results.filter((x) => x.what === 'raw ping')) assert.equal(r.v.status, 200);
      // Generous: a queued request would wait for a long command (~20 s).
      for (const r of results) assert.ok(r.ms < (r.what === 'execute echo' ? 8000 : 3000), `${r.what} took ${r.ms} ms (${summary})`);
      const all = await Promise.all(longs);
      all.forEach((res, i) => {
        assert.notEqual(res.isError, true, resultText(res));
        assert.equal(res.structuredContent.stdout, `${m}-${i}\n`);
      });
    } finally {
      await Promise.allSettled(longs);
      await clients[1].close();
    }
  });

  it('SIGTERM during a running execute: the stream ends with a "restarting" result, the programs exit, the command runs on', async () => {
    const sess = await openSession(srv);
    const m = mark();
    const s = rawStream(srv, sess, execBody('term-1', `echo up-${m}; sleep 8; echo finished > /sandbox/term-${m}`, { _meta: { progressToken: 'pt-t' } }));
    await waitFor(() => s.text().includes(`up-${m}`), { timeout: 20000, what: 'the first output as progress' });
    const pids = srv.programPids('mcp');
    assert.ok(pids.length >= 1, 'mcp processes found');
    for (const p of pids) process.kill(p, 'SIGTERM');
    await Promise.race([s.done, sleep(15000)]);
    assert.ok(s.ended, `the stream ended cleanly: ${s.error ?? 'still open after 15 s'}`);
    const final = parseSse(s.text()).find((x) => x.id === 'term-1');
    assert.ok(final, `a result: ${s.text()}`);
    assert.equal(final.result.isError, true);
    assert.match(resultText(final.result), /restart/i);
    assert.match(resultText(final.result), new RegExp(`up-${m}`), 'the output so far');
    const runId = final.result.structuredContent?.run_id;
    assert.ok(runId, JSON.stringify(final.result));
    await waitFor(() => pids.every((p) => !pidAlive(p)), { timeout: 15000, what: 'the mcp processes to exit' });
    assert.equal(srv.sanitizerReports(), '', 'no sanitizer report on the way out');
    // The command was not touched: still running, then done.
    assert.ok((await containerCommands(srv)).some((c) => c.includes(`term-${m}`)), 'the command is still running');
    await waitFor(async () => (await dockerExec(srv, `cat /sandbox/term-${m}`)).stdout === 'finished\n', {
      timeout: 20000,
      what: 'the command to finish in the container',
    });
    // New processes take over (lighttpd respawns them; with Caddy,
    // run-programs.sh restarts them) and collect the run's real result from
    // the supervisor's record in the container.
    const again = await waitFor(
      async () => {
        const c = await connect(srv, { name: 'e2e-after-term' });
        return c;
      },
      { timeout: 30000, interval: 500, what: 'the server to answer again' },
    ).catch((e) => assert.fail(`${e.message}\n${srv.logs().split('\n').filter((l) => !/ info: /.test(l)).slice(-30).join('\n')}`));
    try {
      const res = await again.client.callTool({ name: 'get_result', arguments: { run_id: runId, wait: 10 } });
      assert.equal(res.structuredContent?.exit_code, 0, resultText(res));
      assert.equal(res.structuredContent.stdout, `up-${m}\n`);
      const run = (await listRuns(again)).find((r) => r.run_id === runId);
      assert.equal(run?.state, 'exit', JSON.stringify(run));
    } finally {
      await again.close();
    }
  });

  it('stopping the whole server (serve.sh caddy gets SIGTERM) during an execute: the stream ends with the "restarting" result', { skip: WEB !== 'caddy' && 'lighttpd ends its connections at once on SIGTERM' }, async () => {
    const sess = await openSession(srv);
    const m = mark();
    const s = rawStream(srv, sess, execBody('stop-1', `echo up-${m}; sleep 6`, { _meta: { progressToken: 'pt-s' } }));
    await waitFor(() => s.text().includes(`up-${m}`), { timeout: 20000, what: 'the first output as progress' });
    await conn.close();
    conn = null;
    await srv.shutdown();
    await Promise.race([s.done, sleep(5000)]);
    assert.ok(s.ended, `the stream ended cleanly: ${s.error ?? 'still open'}`);
    const final = parseSse(s.text()).find((x) => x.id === 'stop-1');
    assert.ok(final, `a result: ${s.text()}`);
    assert.equal(final.result.isError, true);
    assert.match(resultText(final.result), /restart/i);
  });

  it('the programs exit cleanly on SIGTERM with no sanitizer reports', async () => {
    await conn?.close();
    conn = null;
    await srv.shutdown();
  });
});
