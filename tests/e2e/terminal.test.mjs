// Terminals: interactive programs on a PTY under the supervisor
// (terminal_start, terminal_send, terminal_read, terminal_close), the
// screen rendered in the sandbox, owners on the rows, and a terminal that
// outlives killed /mcp workers.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startServer, containerCommands, dockerExec, waitFor } from './lib/server.mjs';
import { connect, resultText, http } from './lib/client.mjs';
import { ctl } from './lib/hostile.mjs';
import { TestProvider, connectOAuth } from './lib/oauth.mjs';

const tool = (conn, name, args, timeout = 90000) =>
  conn.client.callTool({ name, arguments: args }, undefined, { timeout });

const open = new Map(); // terminals started and not closed: conn by id

async function ok(conn, name, args) {
  const r = await tool(conn, name, args);
  assert.notEqual(r.isError, true, `${name}: ${resultText(r)}`);
  assert.ok(r.structuredContent, `${name}: structuredContent`);
  if (name === 'terminal_start') open.set(r.structuredContent.terminal_id, conn);
  if (name === 'terminal_close') open.delete(args.terminal_id);
  return r.structuredContent;
}

/* What a failed test left open, closed, so the per-owner cap starts afresh. */
async function closeLeft(conn) {
  for (const id of open.keys()) await tool(conn, 'terminal_close', { terminal_id: id }).catch(() => {});
  open.clear();
}

/* A 2026-07-28 tools/call over raw HTTP (no session). */
async function modernCall(srv, name, args) {
  const V = '2026-07-28';
  const r = await http(srv, {
    body: {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name,
        arguments: args,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': V,
          'io.modelcontextprotocol/clientCapabilities': {},
          'io.modelcontextprotocol/clientInfo': { name: 'raw-2026', version: '1.0.0' },
        },
      },
    },
    headers: { 'mcp-protocol-version': V, 'mcp-method': 'tools/call', 'mcp-name': name },
  });
  assert.equal(r.status, 200, r.text);
  const m = r.json ?? JSON.parse(r.text.split('\n').filter((l) => l.startsWith('data:')).pop().slice(5));
  assert.ok(m.result, r.text);
  return m.result;
}

function reconnect(srv) {
  return waitFor(() => connect(srv, { listTools: false }), { timeout: 30000, interval: 500, what: 'the server to answer again' });
}

describe('terminals', () => {
  let srv;
  let conn;

  before(async () => {
    srv = await startServer({ name: 'terminal', settings: { TERMINAL_MAX: 3 } });
    conn = await connect(srv);
  });
  after(async () => {
    await conn?.close().catch(() => {});
    await srv?.stop();
  });

  it('the tools are listed, and their descriptions say when to prefer execute', async () => {
    const { tools } = await conn.client.listTools();
    for (const n of ['terminal_start', 'terminal_send', 'terminal_read', 'terminal_close']) {
      const t = tools.find((x) => x.name === n);
      assert.ok(t, `${n} listed`);
      assert.ok(t.inputSchema && t.outputSchema, `${n} schemas`);
    }
    assert.match(tools.find((x) => x.name === 'terminal_start').description, /Prefer execute/);
  });

  it('a Python REPL: 6*7 gives 42, Ctrl-D ends it and the exit is reported', async () => {
    const s = await ok(conn, 'terminal_start', { command: 'python3', cols: 80, rows: 24 });
    assert.match(s.terminal_id, /^t-[A-Za-z0-9_-]+$/);
    assert.match(s.screen, />>> ?$/m, s.screen);
    assert.equal(s.exited, false);
    assert.equal(s.exit_code, null);
    assert.doesNotMatch(s.screen, /\x1b/, 'no escape codes');
    const s2 = await ok(conn, 'terminal_send', { terminal_id: s.terminal_id, input: '6*7\n' });
    assert.match(s2.screen, /^>>> 6\*7\n42\n>>> ?$/m, s2.screen);
    const s3 = await ok(conn, 'terminal_send', { terminal_id: s.terminal_id, keys: ['Ctrl-D'] });
    assert.equal(s3.exited, true, JSON.stringify(s3));
    assert.equal(s3.exit_code, 0);
    const c = await ok(conn, 'terminal_close', { terminal_id: s.terminal_id });
    assert.equal(c.closed, true);
    const again = await tool(conn, 'terminal_read', { terminal_id: s.terminal_id });
    assert.equal(again.isError, true);
    assert.match(resultText(again), /closed/);
  });

  it('a short wait answers as soon as the screen changed; a long wait holds up no other call', async () => {
    const s = await ok(conn, 'terminal_start', { command: 'stty -icanon; cat', cols: 60, rows: 5 });
    // Under 150 ms the quiet window is not waited for: the echo answers.
    let fastest = Infinity;
    for (const ch of 'vwxyz') {
      const t0 = performance.now();
      const r = await ok(conn, 'terminal_send', { terminal_id: s.terminal_id, input: ch, wait_ms: 140 });
      fastest = Math.min(fastest, performance.now() - t0);
      assert.ok(r.screen.includes(ch), r.screen);
    }
    assert.ok(fastest < 120, `the fastest of 5 echoes took ${fastest.toFixed(1)} ms, not under the 140 ms wait`);
    await ok(conn, 'terminal_close', { terminal_id: s.terminal_id });
    // A program that is never quiet: a send waits its whole wait_ms, and a
    // read meanwhile still answers at once. Its loop is bash's builtins alone
    // (the pause is a read from a FIFO it holds open), so no fork under load
    // makes it quiet for the 150 ms window.
    const busy = await ok(conn, 'terminal_start', { command: 'f=$(mktemp -u); mkfifo $f; exec 3<>$f; rm $f; while :; do echo $EPOCHREALTIME; read -t 0.05 -u 3; done', cols: 60, rows: 5 });
    const order = [];
    const send = ok(conn, 'terminal_send', { terminal_id: busy.terminal_id, input: '', wait_ms: 6000 }).then(() => order.push('send'));
    await new Promise((r) => setTimeout(r, 300));
    await ok(conn, 'terminal_read', { terminal_id: busy.terminal_id, scrollback: 0 }).then(() => order.push('read'));
    await send;
    assert.deepEqual(order, ['read', 'send']);
    await ok(conn, 'terminal_close', { terminal_id: busy.terminal_id });
  });

  it('an editor saves exactly the text typed', async (t) => {
    const which = await conn.execute({ command: 'command -v vim.tiny || command -v vim || command -v vi || command -v nano || true' });
    const ed = which.structuredContent.stdout.trim();
    if (!ed) {
      t.skip('no vim or nano in the sandbox image');
      return;
    }
    await conn.execute({ command: 'rm -f /sandbox/edited.txt' });
    const s = await ok(conn, 'terminal_start', { command: `${ed} /sandbox/edited.txt`, cols: 80, rows: 24 });
    if (/nano/.test(ed)) {
      await ok(conn, 'terminal_send', { terminal_id: s.terminal_id, input: 'first line\nsecond: ünï\n' });
      await ok(conn, 'terminal_send', { terminal_id: s.terminal_id, input: '\x0f' });
      await ok(conn, 'terminal_send', { terminal_id: s.terminal_id, keys: ['Enter'] });
      await ok(conn, 'terminal_send', { terminal_id: s.terminal_id, input: '\x18' });
    } else {
      await ok(conn, 'terminal_send', { terminal_id: s.terminal_id, input: 'ifirst line\nsecond: ünï', keys: ['Escape'] });
      await ok(conn, 'terminal_send', { terminal_id: s.terminal_id, input: ':wq\n' });
    }
    const r = await conn.execute({ command: 'od -c /sandbox/edited.txt | head; cat /sandbox/edited.txt' });
    assert.match(r.structuredContent.stdout, /first line\nsecond: ünï\n$/);
    await tool(conn, 'terminal_close', { terminal_id: s.terminal_id });
  });

  it('top renders a screen of readable lines', async () => {
    const s = await ok(conn, 'terminal_start', { command: 'top -d 1', cols: 100, rows: 30, wait_ms: 3000 });
    let r;
    await waitFor(async () => /^top - .*load average/m.test((r = await ok(conn, 'terminal_read', { terminal_id: s.terminal_id, scrollback: 0 })).screen),
      { timeout: 5000, interval: 200, what: "top's screen" }).catch((e) => assert.fail(`${e.message}: ${JSON.stringify(r?.screen)}`));
    assert.match(r.screen, /PID\s+USER/);
    assert.doesNotMatch(r.screen, /\x1b|\[\d+;\d+H/, 'no escape codes');
    await ok(conn, 'terminal_close', { terminal_id: s.terminal_id });
  });

  it('Ctrl-C interrupts sleep within a second; terminal_close leaves no process of its tree', async () => {
    const s = await ok(conn, 'terminal_start', { command: 'bash', cols: 80, rows: 24 });
    await ok(conn, 'terminal_send', { terminal_id: s.terminal_id, input: 'sleep 100; echo after\n', wait_ms: 500 });
    const cmds = await containerCommands(srv);
    assert.ok(cmds.some((c) => /^sleep 100 ?$/.test(c)), cmds.join(' | '));
    const t0 = Date.now();
    const r = await ok(conn, 'terminal_send', { terminal_id: s.terminal_id, keys: ['Ctrl-C'] });
    const took = Date.now() - t0;
    assert.ok(took < 1000, `Ctrl-C answered in ${took} ms`);
    assert.match(r.screen, /\^C/);
    assert.doesNotMatch(r.screen, /^after$/m);
    assert.ok(!(await containerCommands(srv)).some((c) => /^sleep 100 ?$/.test(c)), 'the sleep is gone');
    // A tree on the terminal: a background job in its own group, and a pipeline.
    await ok(conn, 'terminal_send', { terminal_id: s.terminal_id, input: 'sleep 301 & sleep 302 | cat &\n' });
    assert.equal((await containerCommands(srv)).filter((c) => /^sleep 30[12] ?$/.test(c)).length, 2);
    const c = await ok(conn, 'terminal_close', { terminal_id: s.terminal_id });
    assert.equal(c.closed, true);
    await waitFor(async () => !(await containerCommands(srv)).some((x) => /^sleep 30[12] ?$|^bash ?$/.test(x)), { timeout: 3000, what: 'no process of the terminal left' });
  });

  it('a terminal survives /mcp workers killed with SIGKILL', async () => {
    const s = await ok(conn, 'terminal_start', { command: 'bash', cols: 80, rows: 24 });
    await ok(conn, 'terminal_send', { terminal_id: s.terminal_id, input: 'sleep 8; echo done\n', wait_ms: 300 });
    for (const pid of srv.programPids('mcp')) process.kill(pid, 'SIGKILL');
    await conn.close().catch(() => {});
    conn = await reconnect(srv);
    const r = await ok(conn, 'terminal_read', { terminal_id: s.terminal_id });
    assert.match(r.screen, /sleep 8; echo done/);
    let screen = '';
    await waitFor(async () => /^done$/m.test((screen = (await ok(conn, 'terminal_read', { terminal_id: s.terminal_id })).screen)), {
      timeout: 45000,
      interval: 1000,
      what: 'done on the screen',
    }).catch((e) => assert.fail(`${e.message}: ${screen}`));
    await ok(conn, 'terminal_close', { terminal_id: s.terminal_id });
  });

  it('a terminal whose daemon is stopped answers with a clear error, and holds up no other call', async () => {
    const s = await ok(conn, 'terminal_start', { command: 'bash', cols: 80, rows: 24 });
    // The shell's parent is the terminal's daemon.
    const r = await ok(conn, 'terminal_send', { terminal_id: s.terminal_id, input: 'echo "P=$PPID."\n', wait_ms: 1000 });
    const pid = /^P=(\d+)\.$/m.exec(r.screen)?.[1];
    assert.ok(pid, r.screen);
    await dockerExec(srv, `kill -STOP ${pid}`);
    try {
      const t0 = Date.now();
      const stuck = tool(conn, 'terminal_read', { terminal_id: s.terminal_id });
      // Meanwhile the channel serves commands and other terminals.
      const e = await tool(conn, 'execute', { command: 'echo still-served' });
      assert.match(resultText(e), /still-served/);
      assert.ok(Date.now() - t0 < 5000, 'execute was not held up');
      const x = await stuck;
      assert.equal(x.isError, true, resultText(x));
      assert.match(resultText(x), /did not answer/);
    } finally {
      await dockerExec(srv, `kill -CONT ${pid}`);
    }
    const back = await ok(conn, 'terminal_read', { terminal_id: s.terminal_id });
    assert.match(back.screen, /P=\d+\./);
    await ok(conn, 'terminal_close', { terminal_id: s.terminal_id });
  });

  it('bad arguments get clear errors; the per-owner cap holds', async () => {
    await closeLeft(conn);
    for (const [name, args, re] of [
      ['terminal_send', { terminal_id: 't-nosuch', input: 'x' }, /No terminal/],
      ['terminal_send', { terminal_id: '../x' }, /not a terminal id/],
      ['terminal_start', { cols: 5 }, /cols must be/],
      ['terminal_start', { nope: 1 }, /Unknown argument/],
    ]) {
      const r = await tool(conn, name, args);
      assert.equal(r.isError, true, JSON.stringify(r).slice(0, 300));
      assert.match(resultText(r), re);
    }
    const s = await ok(conn, 'terminal_start', { command: 'cat' });
    const k = await tool(conn, 'terminal_send', { terminal_id: s.terminal_id, keys: ['Hyper-Q'] });
    assert.equal(k.isError, true);
    assert.match(resultText(k), /not a key name/);
    const ids = [s.terminal_id];
    ids.push((await ok(conn, 'terminal_start', { command: 'cat' })).terminal_id);
    ids.push((await ok(conn, 'terminal_start', { command: 'cat' })).terminal_id);
    const over = await tool(conn, 'terminal_start', { command: 'cat' });
    assert.equal(over.isError, true);
    assert.match(resultText(over), /most one user may have/);
    for (const id of ids) await ok(conn, 'terminal_close', { terminal_id: id });
  });

  it("another owner's terminal id is refused", async () => {
    await closeLeft(conn);
    const s = await ok(conn, 'terminal_start', { command: 'bash' });
    const key = JSON.parse((await ctl(srv, ['--json', 'keys', 'add', 'mallory'])).stdout).key;
    const provider = new TestProvider(srv, { key, clientName: 'other client' });
    const other = await connectOAuth(srv, provider, { name: 'e2e-mallory' });
    try {
      for (const name of ['terminal_read', 'terminal_send', 'terminal_close']) {
        const args = { terminal_id: s.terminal_id, ...(name === 'terminal_send' ? { input: 'echo stolen\n' } : {}) };
        const r = await other.client.callTool({ name, arguments: args });
        assert.equal(r.isError, true, `${name}: ${resultText(r)}`);
        assert.match(resultText(r), /No terminal/);
      }
    } finally {
      await other.client.close().catch(() => {});
    }
    const r = await ok(conn, 'terminal_read', { terminal_id: s.terminal_id });
    assert.doesNotMatch(r.screen, /stolen/);
    await ok(conn, 'terminal_close', { terminal_id: s.terminal_id });
  });

  it('the 2026-07-28 era: a terminal driven without a session', async () => {
    const s = (await modernCall(srv, 'terminal_start', { command: 'bash', cols: 60, rows: 10 })).structuredContent;
    assert.match(s.terminal_id, /^t-/);
    const r = (await modernCall(srv, 'terminal_send', { terminal_id: s.terminal_id, input: 'echo $((6*7))\n' })).structuredContent;
    assert.match(r.screen, /^42$/m, r.screen);
    const c = (await modernCall(srv, 'terminal_close', { terminal_id: s.terminal_id })).structuredContent;
    assert.equal(c.closed, true);
  });

  it('sandboxctl lists and closes terminals; status counts them', async () => {
    await closeLeft(conn);
    const s = await ok(conn, 'terminal_start', { command: 'bash' });
    await ok(conn, 'terminal_send', { terminal_id: s.terminal_id, input: 'sleep 303\n', wait_ms: 300 });
    const list = JSON.parse((await ctl(srv, ['--json', 'terminals', 'list'])).stdout);
    const row = list.find((t) => t.id === s.terminal_id);
    assert.ok(row, JSON.stringify(list));
    assert.equal(row.state, 'open');
    assert.equal(row.owner, 'operator');
    const st = JSON.parse((await ctl(srv, ['--json', 'status'])).stdout);
    assert.ok(st.database.terminals.open >= 1, JSON.stringify(st.database.terminals));
    const text = await ctl(srv, ['status']);
    assert.match(text.stdout, /terminals \d+ open of \d+/);
    const r = await ctl(srv, ['terminals', 'close', s.terminal_id]);
    assert.equal(r.code, 0, r.stderr);
    await waitFor(async () => !(await containerCommands(srv)).some((x) => /^sleep 303 ?$/.test(x)), { timeout: 3000, what: 'the terminal ended' });
    const after = await tool(conn, 'terminal_read', { terminal_id: s.terminal_id });
    assert.equal(after.isError, true);
    assert.equal((await ctl(srv, ['terminals', 'close', s.terminal_id])).code, 1, 'closing twice says so');
  });
});

describe('terminals without the channel (SANDBOX_CHANNEL=0: one engine exec per call), closing when idle (TERMINAL_IDLE=10)', () => {
  let srv;
  let conn;

  before(async () => {
    srv = await startServer({ name: 'terminal-nochan', settings: { SANDBOX_CHANNEL: 0, TERMINAL_IDLE: 10 } });
    conn = await connect(srv);
  });
  after(async () => {
    await conn?.close().catch(() => {});
    await srv?.stop();
  });

  it('start, type, read and close', async () => {
    const s = await ok(conn, 'terminal_start', { command: 'bash', cols: 60, rows: 10 });
    const r = await ok(conn, 'terminal_send', { terminal_id: s.terminal_id, input: 'echo $((6*7))\n' });
    assert.match(r.screen, /^42$/m, r.screen);
    const c = await ok(conn, 'terminal_close', { terminal_id: s.terminal_id });
    assert.equal(c.closed, true);
  });

  it('a terminal that closed itself when idle reads closed in sandboxctl terminals list and status', async () => {
    const quiet = await ok(conn, 'terminal_start', { command: 'cat', cols: 40, rows: 5 });
    // Output keeps a terminal alive however long since the last call.
    const busy = await ok(conn, 'terminal_start', { command: 'while :; do date; sleep 1; done', cols: 40, rows: 5 });
    const state = (list, id) => list.find((t) => t.id === id)?.state;
    let list = JSON.parse((await ctl(srv, ['--json', 'terminals', 'list'])).stdout);
    assert.equal(state(list, quiet.terminal_id), 'open');
    // The daemon ends 10 s after the last input or output; the row is
    // checked against the sandbox once 30 s old (a start in flight): the
    // rows are made older in the database rather than waited for.
    await promisify(execFile)('sqlite3', ['-cmd', '.timeout 5000', srv.settings.SANDBOX_DB,
      `UPDATE terminal SET created = created - 60 WHERE id IN ('${quiet.terminal_id}', '${busy.terminal_id}')`]);
    await waitFor(async () => {
      list = JSON.parse((await ctl(srv, ['--json', 'terminals', 'list'])).stdout);
      return state(list, quiet.terminal_id) === 'closed';
    }, { timeout: 60000, interval: 2000, what: 'the idle terminal listed closed' });
    assert.equal(state(list, busy.terminal_id), 'open', JSON.stringify(list));
    const st = JSON.parse((await ctl(srv, ['--json', 'status'])).stdout);
    assert.equal(st.database.terminals.open, 1, JSON.stringify(st.database.terminals));
    const r = await tool(conn, 'terminal_read', { terminal_id: quiet.terminal_id });
    assert.equal(r.isError, true);
    assert.match(resultText(r), /closed/);
    await ok(conn, 'terminal_close', { terminal_id: busy.terminal_id });
    assert.equal(JSON.parse((await ctl(srv, ['--json', 'status'])).stdout).database.terminals.open, 0);
  });
});
