// Commands as durable runs under the supervisor in the container: a result
// outlives the worker that started it (SIGKILL, a restart of the programs);
// a hostile container (a hanging /bin/bash, fake files, a killed or
// replaced supervisor) cannot hang the server or decide its state; many
// commands at once, a flood of output in bounded memory, and detached
// processes that keep running. Run behind lighttpd and Caddy (behind
// Caddy only what involves the front: workers killed, programs restarted).

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { startServer, docker, dockerExec, waitFor, sleep, WEB } from './lib/server.mjs';
import { ctl } from './lib/hostile.mjs';

import { connect, resultText } from './lib/client.mjs';

const mark = () => `m${randomBytes(5).toString('hex')}`;

// What happens in the container and the program alone, the same behind
// every front: run behind lighttpd only.
const ONE_FRONT = { skip: WEB !== 'lighttpd' ? 'the same behind every front: behind lighttpd only' : false };

/*
 * A new session, once the server answers again (after a SIGKILL, lighttpd
 * respawns the programs; with Caddy, run-programs.sh restarts them).
 */
function reconnect(srv) {
  return waitFor(() => connect(srv, { listTools: false }), { timeout: 30000, interval: 500, what: 'the server to answer again' });
}

/* get_result(run_id) from a fresh session, waiting up to `wait` seconds. */
async function getResult(srv, runId, wait = 30) {
  const c = await reconnect(srv);
  try {
    return await c.client.callTool({ name: 'get_result', arguments: { run_id: runId, wait } }, undefined, { timeout: 120000 });
  } finally {
    await c.close();
  }
}

/* The run id of the newest run whose command contains text. */
async function runIdOf(srv, text) {
  const c = await reconnect(srv);
  try {
    const r = await c.client.callTool({ name: 'get_result', arguments: {} });
    const run = r.structuredContent.runs.find((x) => x.command.includes(text));
    return run?.run_id;
  } finally {
    await c.close();
  }
}

/* Peak resident memory (kB) of each /mcp process. */
function mcpPeaks(srv) {
  return srv.programPids('mcp').map((p) => {
    try {
      return Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, 'utf8'))[1]);
    } catch {
      return 0;
    }
  });
}

/*
 * Whether a process whose command line matches the extended regular
 * expression PATTERN runs in the test's container (pgrep -f, run directly:
 * no shell whose own command line would match). pgrep's "none" (status 1,
 * nothing on stderr) is the only false: a failed docker exec or pgrep
 * throws, so "killed" never passes because nothing could be looked at.
 */
async function running(srv, pattern) {
  const r = await docker('exec', srv.container, 'pgrep', '-f', pattern);
  if (r.code === 0) return true;
  if (r.code === 1 && !(r.stderr ?? '').trim()) return false;
  throw new Error(`pgrep -f '${pattern}' in the container: status ${r.code}: ${r.stderr}`);
}

/* The engine's clock now, for docker events --since. */
async function dockerTime() {
  await sleep(50);
  return (Date.now() / 1000).toFixed(3);
}

/* The engine's exec_create events on the test's container since t. */
async function execCreates(srv, since) {
  await sleep(300);
  const r = await docker('events', '--since', since, '--until', (Date.now() / 1000).toFixed(3),
    '--filter', `container=${srv.container}`, '--filter', 'type=container', '--format', '{{.Action}}');
  return r.stdout.split('\n').filter((a) => a.startsWith('exec_create'));
}

describe('supervisor', () => {
  let srv;
  before(async () => {
    // 50 commands at once below: above the default caps on running commands.
    srv = await startServer({ name: 'sup', settings: { MAX_OUTPUT_BYTES: '2000', SANDBOX_MAX_RUNNING: '100', SANDBOX_MAX_RUNNING_PER_OWNER: '100' } });
  });
  after(async () => {
    await srv?.stop();
  });

  it('commands run under the supervisor, uploaded to a fresh path, in their own session', async () => {
    const c = await connect(srv);
    const r = await c.execute({ command: 'tr "\\0" " " < /proc/$PPID/cmdline; echo; ps -o sid= -o pgid= -p $$ | tr -s " "; echo $$' });
    await c.close();
    const out = r.structuredContent.stdout.split('\n');
    // Its parent is the supervisor: the channel's (a child per run) or, as
    // the fallback, one started for this command alone.
    assert.match(out[0], /^\/run\/code-sandbox\/sup-[A-Za-z0-9_-]+\/supervisor (run|channel) /);
    const [sid, pgid] = out[1].trim().split(' ');
    assert.equal(sid, out[2].trim(), 'the command leads its own session');
    assert.equal(pgid, out[2].trim(), 'and its own process group');
    assert.match(srv.programsOutput(), /supervisor installed in container/);
  });

  it('a /mcp worker killed with SIGKILL mid-command: get_result from a new session returns the real output and exit code', async () => {
    const m = mark();
    const c = await connect(srv);
    c.execute({ command: `echo start-${m}; : > /sandbox/started-${m}; sleep 3; echo done-${m}; echo err-${m} >&2; exit 7` }).catch(() => {});
    await waitFor(async () => (await dockerExec(srv, `test -e /sandbox/started-${m}`)).code === 0, { what: 'the command to start' });
    const runId = await runIdOf(srv, m);
    for (const pid of srv.programPids('mcp')) process.kill(pid, 'SIGKILL');
    await c.close().catch(() => {});
    const r = await getResult(srv, runId, 30);
    const sc = r.structuredContent;
    assert.ok(sc, JSON.stringify(r));
    assert.equal(sc.exit_code, 7, resultText(r));
    assert.equal(sc.stdout, `start-${m}\ndone-${m}\n`);
    assert.equal(sc.stderr, `err-${m}\n`);
  });

  it('the programs stopped and started mid-command: get_result returns the real result', async () => {
    const m = mark();
    const c = await connect(srv);
    c.execute({ command: `echo a-${m}; : > /sandbox/started-${m}; sleep 4; echo b-${m}` }).catch(() => {});
    await waitFor(async () => (await dockerExec(srv, `test -e /sandbox/started-${m}`)).code === 0, { what: 'the command to start' });
    const runId = await runIdOf(srv, m);
    await srv.restart();
    await c.close().catch(() => {});
    const r = await getResult(srv, runId, 30);
    assert.equal(r.structuredContent?.exit_code, 0, resultText(r));
    assert.equal(r.structuredContent.stdout, `a-${m}\nb-${m}\n`);
  });

  it('the container restarted mid-command, its worker killed: the run ends as killed with the container; the next execute works', ONE_FRONT, async () => {
    const m = mark();
    const c = await reconnect(srv);
    c.execute({ command: `: > /sandbox/started-${m}; sleep 30` }).catch(() => {});
    await waitFor(async () => (await dockerExec(srv, `test -e /sandbox/started-${m}`)).code === 0, { what: 'the command to start' });
    const runId = await runIdOf(srv, m);
    for (const pid of srv.programPids('mcp')) process.kill(pid, 'SIGKILL');
    await docker('restart', '-t', '0', srv.container);
    await c.close().catch(() => {});
    const r = await getResult(srv, runId, 20);
    assert.match(resultText(r), /killed with the container/i);
    const d = await reconnect(srv);
    const next = await d.execute({ command: 'echo next' });
    assert.equal(next.structuredContent.stdout, 'next\n', resultText(next));
    await d.close();
  });

  it('a command that kills its supervisor, writes fake files or replaces the binary leaves the server unaffected', async () => {
    const c = await reconnect(srv);
    let r = await c.execute({ command: 'echo before; kill -9 $PPID; sleep 1; echo after' });
    assert.equal(r.structuredContent.timed_out, false);
    assert.equal(r.structuredContent.cancelled, false);
    r = await c.execute({ command: 'mkdir -p /run/code-sandbox; for f in timeout cancel oom; do : > /run/code-sandbox/x.$f; done; exit 137' });
    assert.equal(r.structuredContent.exit_code, 137);
    assert.equal(r.structuredContent.timed_out, false, 'a timeout is the server\'s verdict');
    assert.equal(r.structuredContent.cancelled, false);
    r = await c.execute({ command: 'p=$(readlink /proc/$PPID/exe); rm -f "$p"; printf "#!/bin/sh\\necho fake\\n" > "$p"; chmod +x "$p"; echo replaced' });
    assert.equal(r.structuredContent.stdout, 'replaced\n');
    r = await c.execute({ command: 'echo still-works' });
    assert.equal(r.structuredContent.stdout, 'still-works\n', resultText(r));
    assert.equal(r.structuredContent.exit_code, 0);
    await c.close();
  });

  it('a detached background process keeps running after its command ends', async () => {
    const m = mark();
    const c = await connect(srv);
    const t0 = Date.now();
    const r = await c.execute({ command: `setsid nohup sh -c 'sleep 2; echo alive > /sandbox/bg-${m}; while :; do echo spam; sleep 0.2; done' >/dev/null 2>&1 & (sleep 2; echo bg-out-${m}) & echo started` });
    assert.equal(r.structuredContent.stdout, 'started\n');
    assert.ok(Date.now() - t0 < 1800, 'the call does not wait for the background processes');
    await waitFor(async () => (await dockerExec(srv, `cat /sandbox/bg-${m}`)).stdout === 'alive\n', { timeout: 15000, what: 'the detached process to write its file' });
    const again = await c.execute({ command: 'echo next' });
    assert.equal(again.structuredContent.stdout, 'next\n');
    await dockerExec(srv, `pkill -f bg-${m} || true`);
    await c.close();
  });

  it('50 commands at once all get their own output, over the channel', async () => {
    const c = await connect(srv);
    await c.execute({ command: 'true' });	// each worker's channel is open
    const since = await dockerTime();
    const rs = await Promise.all(Array.from({ length: 50 }, (_, i) => c.execute({ command: `echo n-${i}; printf '\\xff\\xfe' >&2` })));
    rs.forEach((r, i) => {
      assert.equal(r.structuredContent.stdout, `n-${i}\n`);
      assert.equal(r.structuredContent.stderr, '\uFFFD\uFFFD', 'non-UTF-8 bytes repaired');
    });
    // One exec per worker process (a channel), not one per command.
    const execs = await execCreates(srv, since);
    assert.ok(execs.length <= srv.programPids('mcp').length + 2, `${execs.length} execs for 50 commands:\n${execs.join('\n')}`);
    await c.close();
  });

  it('the channel carries commands: no engine exec per command; re-established after its supervisor is killed', async () => {
    const c = await connect(srv);
    await c.execute({ command: 'true' });
    let since = await dockerTime();
    for (let i = 0; i < 10; i++) {
      const r = await c.execute({ command: `echo c-${i}` });
      assert.equal(r.structuredContent.stdout, `c-${i}\n`);
    }
    let execs = await execCreates(srv, since);
    assert.ok(execs.length <= 1, `${execs.length} execs for 10 commands:\n${execs.join('\n')}`);
    // The channel's own process killed under a running command: the run
    // goes on under its own process and keeps its record; the call returns
    // its real result from there.
    since = await dockerTime();
    let r = await c.execute({ command: 'kill -9 "$(ps -o ppid= -p $PPID | tr -d " ")"; sleep 1; echo survived; exit 3', timeout: 30 });
    assert.equal(r.structuredContent.exit_code, 3, resultText(r));
    assert.equal(r.structuredContent.stdout, 'survived\n');
    // Every supervisor process killed: the run ends with a clear state.
    r = await c.execute({ command: 'pkill -9 -f "supervisor channel"; sleep 1; echo gone', timeout: 30 });
    assert.ok(r.structuredContent, resultText(r));
    assert.notEqual(r.structuredContent.stdout, 'gone\n', resultText(r));
    // The next commands open a new channel, then use it.
    for (let i = 0; i < 5; i++) {
      r = await c.execute({ command: `echo again-${i}` });
      assert.equal(r.structuredContent.stdout, `again-${i}\n`, resultText(r));
    }
    execs = await execCreates(srv, since);
    assert.ok(execs.some((a) => /supervisor channel/.test(a)), execs.join('\n'));
    assert.ok(execs.length <= 8, `${execs.length} execs:\n${execs.join('\n')}`);
    await c.close();
  });

  it('cancellation over the channel kills the whole tree', async () => {
    const m = mark();
    const c = await connect(srv);
    await c.execute({ command: 'true' });
    const ac = new AbortController();
    const p = c.execute({ command: `sh -c 'sleep 300 # ${m}-child' & setsid sh -c 'sleep 300 # ${m}-other' & sleep 300 # ${m}` }, { signal: ac.signal }).catch(() => 'aborted');
    await waitFor(async () => running(srv, `${m}-child`), { what: 'the command to start' });
    const since = await dockerTime();
    ac.abort();
    assert.equal(await p, 'aborted');
    await waitFor(async () => !(await running(srv, `${m}(-child)?$`)), { timeout: 10000, what: 'the group to be killed' });
    const runId = await runIdOf(srv, `${m}-child`);
    const g = await getResult(srv, runId, 15);
    assert.equal(g.structuredContent?.cancelled, true, resultText(g));
    // The kill went over the channel: no "supervisor kill" exec.
    const execs = await execCreates(srv, since);
    assert.ok(!execs.some((a) => / kill /.test(a)), execs.join('\n'));
    await dockerExec(srv, `pkill -f ${m}-other || true`);
    await c.close();
  });

  it('a flood of output cancelled: the tree is killed within seconds and the next command runs', async () => {
    const m = mark();
    const c = await connect(srv);
    const ac = new AbortController();
    const p = c.execute({ command: `yes ${m}-flood` }, { signal: ac.signal }).catch(() => 'aborted');
    await waitFor(async () => running(srv, `^yes ${m}-flood`), { what: 'the flood to start' });
    await sleep(1500);
    const t0 = Date.now();
    ac.abort();
    assert.equal(await p, 'aborted');
    await waitFor(async () => !(await running(srv, `^yes ${m}-flood`)), { timeout: 15000, what: 'the flood to be killed' });
    assert.ok(Date.now() - t0 < 15000);
    const r = await c.execute({ command: 'echo after-flood' });
    assert.equal(r.structuredContent.stdout, 'after-flood\n', resultText(r));
    await c.close();
  });

  it('a command printing 1 GB: output cut to the bound, worker memory bounded', ONE_FRONT, async () => {
    const c = await connect(srv);
    const before = Math.max(...mcpPeaks(srv));
    const r = await c.execute({ command: 'head -c 1000000000 /dev/zero | tr "\\0" x; echo; echo end', timeout: 300 });
    const sc = r.structuredContent;
    assert.equal(sc.exit_code, 0, resultText(r));
    assert.ok(sc.stdout_truncated_bytes > 999990000, `cut ${sc.stdout_truncated_bytes}`);
    assert.ok(sc.stdout.endsWith('x\nend\n'));
    const after = Math.max(...mcpPeaks(srv));
    assert.ok(after - before < 200 * 1024, `peak memory grew by ${after - before} kB`);
    await c.close();
  });

  it('/bin/bash replaced by one that hangs: execute with timeout 2 returns in seconds, cancellation and status stay bounded', ONE_FRONT, async () => {
    const m = mark();
    // Hangs unless its arguments hold the user's marker.
    const fake = `#!/bin/bash.real\ncase "$*" in *${m}*) exec /bin/bash.real "$@";; esac\nsleep infinity\n`;
    let r = await dockerExec(srv, `cp /bin/bash /bin/bash.real && printf '%s' '${fake.replace(/'/g, "'\\''")}' > /bin/bash.new && chmod 755 /bin/bash.new && mv /bin/bash.new /bin/bash`);
    assert.equal(r.code, 0, r.stderr);
    try {
      const c = await connect(srv);
      const t0 = Date.now();
      r = await c.execute({ command: 'sleep 100', timeout: 2 });
      // At most one check through bash (the egress canary or a disk sample,
      // 6 s each) may hang first; then the handle runs no more of them.
      assert.ok(Date.now() - t0 < 12000, `returned after ${Date.now() - t0} ms`);
      assert.equal(r.structuredContent.timed_out, true);
      const t1 = Date.now();
      r = await c.execute({ command: `echo ok-${m}`, timeout: 5 });
      assert.equal(r.structuredContent.stdout, `ok-${m}\n`);
      assert.ok(Date.now() - t1 < 5000);
      // Cancellation goes through the supervisor, never through bash.
      const ac = new AbortController();
      const t2 = Date.now();
      const p = c.execute({ command: `sleep 100 # ${m}-cancel` }, { signal: ac.signal }).catch(() => 'aborted');
      await waitFor(async () => (await runIdOf(srv, `${m}-cancel`)) !== undefined, { what: 'the run to start' });
      await sleep(300);
      ac.abort();
      assert.equal(await p, 'aborted');
      const runId = await runIdOf(srv, `${m}-cancel`);
      const g = await getResult(srv, runId, 15);
      assert.equal(g.structuredContent?.cancelled, true, resultText(g));
      assert.ok(Date.now() - t2 < 15000, `cancelled after ${Date.now() - t2} ms`);
      // sandboxctl status reports the hang instead of waiting for it.
      const t3 = Date.now();
      const st = await ctl(srv, ['--json', 'status'], { timeout: 60000 });
      assert.ok(Date.now() - t3 < 20000, `status took ${Date.now() - t3} ms`);
      assert.match(String(st.stdout), /usage_error|did not finish/, String(st.stdout).slice(0, 500));
      await c.close();
    } finally {
      // Not through bash: it hangs.
      await docker('exec', srv.container, '/bin/bash.real', '-c', 'mv /bin/bash.real /bin/bash');
    }
  });
});
