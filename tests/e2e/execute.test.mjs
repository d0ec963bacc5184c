// The execute tool through the SDK client: output, exit codes, files, the
// working folder, fresh shells, timeouts that kill the whole tree, middle
// truncation, non-UTF-8 output and bad arguments.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, containerCommands, waitFor } from './lib/server.mjs';
import { connect, resultText, openSession, call, parseSse } from './lib/client.mjs';

const MAX = 1000; // MAX_OUTPUT_BYTES for this server

function sc(res) {
  assert.ok(res.structuredContent, `structuredContent present: ${JSON.stringify(res).slice(0, 500)}`);
  return res.structuredContent;
}

/* Split a truncated stream at its "[... N bytes cut ...]" line. */
function splitCut(s) {
  const m = /\[\.\.\. (\d+) bytes cut \.\.\.\]/.exec(s);
  assert.ok(m, `cut marker in ${JSON.stringify(s.slice(0, 200))}...`);
  return { head: s.slice(0, m.index), tail: s.slice(m.index + m[0].length), cut: Number(m[1]) };
}

function checkTruncated(kept, original, cutBytes) {
  const { head, tail, cut } = splitCut(kept);
  assert.equal(cut, cutBytes, 'the marker and *_truncated_bytes agree');
  // The marker sits on a line of its own, so a newline may have been added
  // before and after it: accept the reading in which the kept beginning and
  // end are exactly a prefix and a suffix of the output, and kept + cut adds
  // up to everything the command wrote.
  const heads = [head];
  if (head.endsWith('\n')) heads.push(head.slice(0, -1));
  const tails = [tail];
  if (tail.startsWith('\n')) tails.push(tail.slice(1));
  const fits = [];
  for (const h of heads) {
    for (const t of tails) {
      if (original.startsWith(h) && original.endsWith(t) && h.length + t.length + cut === original.length) fits.push([h, t]);
    }
  }
  assert.ok(
    fits.length > 0,
    `kept beginning and end plus ${cut} bytes cut make up the ${original.length} bytes written ` +
      `(head ${JSON.stringify(head.slice(-20))}, tail ${JSON.stringify(tail.slice(0, 20))})`,
  );
  const [h, t] = fits[0];
  assert.ok(h.length > 0, 'the beginning is kept');
  assert.ok(t.length > 0, 'the end is kept');
  assert.ok(h.length + t.length <= MAX, `at most MAX_OUTPUT_BYTES kept (${h.length + t.length})`);
}

describe('execute', () => {
  let srv;
  let conn;

  before(async () => {
    srv = await startServer({ name: 'execute', settings: { MAX_OUTPUT_BYTES: MAX, SANDBOX_PING_INTERVAL: 1 } });
    conn = await connect(srv);
  });
  after(async () => {
    await conn?.close().catch(() => {});
    await srv?.stop();
  });

  it('stdout, stderr and exit code, in content text and structuredContent', async () => {
    const res = await conn.execute({ command: 'echo out-line; echo err-line >&2; exit 3' });
    assert.notEqual(res.isError, true, 'a non-zero exit code is an ordinary result');
    const s = sc(res);
    assert.equal(s.stdout, 'out-line\n');
    assert.equal(s.stderr, 'err-line\n');
    assert.equal(s.exit_code, 3);
    assert.equal(s.timed_out, false);
    assert.equal(s.stdout_truncated_bytes, 0);
    assert.equal(s.stderr_truncated_bytes, 0);
    assert.ok(Number.isInteger(s.duration_ms) && s.duration_ms >= 0, `duration_ms ${s.duration_ms}`);
    const text = resultText(res);
    assert.match(text, /out-line/);
    assert.match(text, /err-line/);
    assert.match(text, /\b3\b/);
  });

  it('exit code 0 and empty streams', async () => {
    const res = await conn.execute({ command: 'true' });
    assert.notEqual(res.isError, true, resultText(res));
    const s = sc(res);
    assert.equal(s.exit_code, 0);
    assert.equal(s.stdout, '');
    assert.equal(s.stderr, '');
    assert.ok(resultText(res).length > 0, 'the text says something even with no output');
  });

  it('a missing program is an ordinary result with exit code 127', async () => {
    const res = await conn.execute({ command: 'no-such-program-xyz' });
    assert.notEqual(res.isError, true, resultText(res));
    const s = sc(res);
    assert.equal(s.exit_code, 127);
    assert.match(s.stderr, /no-such-program-xyz/);
  });

  it('runs bash in /sandbox', async () => {
    const s = sc(await conn.execute({ command: 'pwd; echo "$BASH_VERSION" | cut -c1' }));
    assert.equal(s.stdout.split('\n')[0], '/sandbox');
    assert.match(s.stdout.split('\n')[1], /^[0-9]$/);
  });

  it('files persist between calls', async () => {
    const s1 = sc(await conn.execute({ command: 'mkdir -p d && echo persisted-123 > d/f.txt' }));
    assert.equal(s1.exit_code, 0, s1.stderr);
    const s2 = sc(await conn.execute({ command: 'cat /sandbox/d/f.txt' }));
    assert.equal(s2.stdout, 'persisted-123\n');
  });

  it('each call is a fresh bash: cd and exports do not carry over', async () => {
    const s1 = sc(await conn.execute({ command: 'cd /tmp; export CARRY=yes; echo "$CARRY $(pwd)"' }));
    assert.equal(s1.stdout, 'yes /tmp\n');
    const s2 = sc(await conn.execute({ command: 'echo "[${CARRY:-}] $(pwd)"' }));
    assert.equal(s2.stdout, '[] /sandbox\n');
  });

  it('input on stdin is not waited for', async () => {
    const s = sc(await conn.execute({ command: 'cat; echo done', timeout: 30 }));
    assert.equal(s.timed_out, false);
    assert.match(s.stdout, /done\n$/);
  });

  it('stdin: the text is fed to the command, then closed', async () => {
    const text = 'héllo\nwörld\n\tlast line without newline';
    const s = sc(await conn.execute({ command: 'wc -c; echo line-two', stdin: text, timeout: 30 }));
    assert.equal(s.exit_code, 0, s.stderr);
    assert.equal(s.stdout, `${Buffer.byteLength(text)}\nline-two\n`, 'wc -c counts exactly the bytes given');
    const s2 = sc(await conn.execute({ command: 'cat', stdin: text }));
    assert.equal(s2.stdout, text, 'the bytes arrive as given');
    const s3 = sc(await conn.execute({ command: 'read -r a; echo "[$a] $LINENO"; cat /proc/self/fd/0 | wc -c', stdin: 'x y\n' }));
    assert.equal(s3.stdout.split('\n')[0].startsWith('[x y]'), true, s3.stdout);
    const big = 'z'.repeat(300 * 1024);
    const s4 = sc(await conn.execute({ command: 'wc -c', stdin: big }));
    assert.equal(s4.stdout.trim(), String(big.length), 'a large input arrives whole');
  });

  it('stdin_base64: bytes that are not UTF-8 arrive exactly', async () => {
    const bytes = Buffer.from([0, 1, 0xff, 0xfe, 0x80, 0x0a, 0xc3, 0x28, 0x7f, 0x00]);
    const s = sc(await conn.execute({ command: 'od -An -tx1 | tr -s " \n" " "', stdin_base64: bytes.toString('base64') }));
    assert.equal(s.stdout.trim(), [...bytes].map((b) => b.toString(16).padStart(2, '0')).join(' '));
    const s2 = sc(await conn.execute({ command: 'wc -c', stdin_base64: Buffer.alloc(5).toString('base64') }));
    assert.equal(s2.stdout.trim(), '5');
  });

  it('stdin: bad arguments get clear errors', async () => {
    for (const [args, re] of [
      [{ command: 'cat', stdin: 'a', stdin_base64: 'YQ==' }, /not both/],
      [{ command: 'cat', stdin: 5 }, /stdin must be a string/],
      [{ command: 'cat', stdin_base64: 'not base64!' }, /not valid standard base64/],
      [{ command: 'cat', stdin: 'y'.repeat(512 * 1024 + 1) }, /longer than/],
    ]) {
      const res = await conn.execute(args);
      assert.equal(res.isError, true, JSON.stringify(res).slice(0, 300));
      assert.match(resultText(res), re);
    }
  });

  it('the timeout kills the whole process tree and says so', async () => {
    const started = Date.now();
    const call = conn.execute({
      command: "echo before-timeout; sleep 301 & (sleep 302 &); bash -c 'sleep 303 & wait' & sleep 300",
      timeout: 8,
    });
    // The tree runs before the timeout: the four sleeps are there.
    let seen = [];
    await waitFor(async () => (seen = (await containerCommands(srv)).filter((c) => /^sleep 30[0-3] ?$/.test(c))).length === 4, {
      timeout: 6000,
      what: 'the four sleeps running',
    }).catch((e) => assert.fail(`${e.message}: ${seen.join(' | ')}`));
    const res = await call;
    const took = Date.now() - started;
    assert.equal(res.isError, true, `a timeout is an error result: ${JSON.stringify(res).slice(0, 600)}`);
    const s = sc(res);
    assert.equal(s.timed_out, true);
    assert.ok(s.exit_code === null || Number.isInteger(s.exit_code));
    assert.equal(s.stdout, 'before-timeout\n', 'output so far is kept');
    assert.match(resultText(res), /tim(ed|e) ?out/i);
    assert.ok(took >= 7900, `returned after ${took} ms, before the deadline`);
    assert.ok(took < 36000, `returned ${took} ms after an 8 s timeout`);
    // Nothing of the command is left running in the container.
    await waitFor(
      async () => {
        const ps = (await containerCommands(srv)).join('\n');
        return !/sleep 30[0-3]/.test(ps) ? true : (srv.lastPs = ps, false);
      },
      { timeout: 15000, what: 'no sleep left in the container' },
    ).catch((e) => assert.fail(`${e.message}\n${srv.lastPs}`));
  });

  it('a command that ends before its timeout is not marked timed out', async () => {
    const res = await conn.execute({ command: 'sleep 1; echo ok', timeout: 20 });
    assert.notEqual(res.isError, true, resultText(res));
    const s = sc(res);
    assert.equal(s.timed_out, false);
    assert.equal(s.stdout, 'ok\n');
    assert.ok(s.duration_ms >= 900, `duration_ms ${s.duration_ms}`);
  });

  it('a client that accepts SSE gets keep-alive pings while the command runs, streamed through lighttpd', async () => {
    const sess = await openSession(srv);
    const t0 = Date.now();
    const res = await fetch(srv.mcpUrl, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${srv.key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': sess.session,
        'mcp-protocol-version': sess.version,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 'sse-1', method: 'tools/call', params: { name: 'execute', arguments: { command: 'sleep 6; echo slept' } } }),
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type'), /^text\/event-stream/);
    const chunks = [];
    const dec = new TextDecoder();
    for await (const c of res.body) chunks.push({ at: Date.now() - t0, text: dec.decode(c, { stream: true }) });
    const end = chunks.at(-1).at;
    const body = chunks.map((c) => c.text).join('');
    assert.match(body, /^: ping$/m, 'keep-alive comments on the stream');
    // With SANDBOX_PING_INTERVAL=1 the first ping is due after about a second;
    // a buffered response would arrive all at once when the command ends.
    assert.ok(end - chunks[0].at >= 2000, `first bytes at ${chunks[0].at} ms, last at ${end} ms: streamed, not buffered`);
    const msgs = parseSse(body);
    const final = msgs.find((m) => m.id === 'sse-1');
    assert.ok(final, body);
    assert.equal(final.result.structuredContent.stdout, 'slept\n');
  });

  it('long output keeps the beginning and the end and counts the bytes cut', async () => {
    // ~9 KB on stdout, ~6 KB on stderr: both above MAX_OUTPUT_BYTES (1000).
    const res = await conn.execute({ command: 'echo BEGIN; seq 1 2000; echo END; seq 5000 6200 >&2' });
    assert.notEqual(res.isError, true, resultText(res));
    const s = sc(res);
    const out = 'BEGIN\n' + Array.from({ length: 2000 }, (_, i) => `${i + 1}\n`).join('') + 'END\n';
    const err = Array.from({ length: 1201 }, (_, i) => `${5000 + i}\n`).join('');
    assert.ok(s.stdout_truncated_bytes > 0);
    assert.ok(s.stderr_truncated_bytes > 0);
    checkTruncated(s.stdout, out, s.stdout_truncated_bytes);
    checkTruncated(s.stderr, err, s.stderr_truncated_bytes);
    assert.ok(s.stdout.startsWith('BEGIN\n1\n2\n'));
    assert.ok(s.stdout.endsWith('2000\nEND\n'));
    assert.match(resultText(res), new RegExp(`\\[\\.\\.\\. ${s.stdout_truncated_bytes} bytes cut \\.\\.\\.\\]`));
    assert.equal(s.exit_code, 0);
  });

  it('output just under the limit is not cut', async () => {
    const s = sc(await conn.execute({ command: `head -c ${MAX - 10} /dev/zero | tr '\\0' a` }));
    assert.equal(s.stdout, 'a'.repeat(MAX - 10));
    assert.equal(s.stdout_truncated_bytes, 0);
  });

  it('50 MB of output: bounded result, every byte counted', async () => {
    const n = 50_000_000;
    const res = await conn.execute({ command: `yes abcdefghi | head -c ${n}; echo; echo tail-mark` });
    const s = sc(res);
    assert.equal(s.exit_code, 0);
    assert.ok(s.stdout.length < MAX + 100, `kept ${s.stdout.length} characters`);
    assert.ok(s.stdout.startsWith('abcdefghi\n'));
    assert.ok(s.stdout.endsWith('\ntail-mark\n'));
    checkTruncated(s.stdout, 'abcdefghi\n'.repeat(n / 10) + '\ntail-mark\n', s.stdout_truncated_bytes);
    assert.ok(s.stdout_truncated_bytes >= n - MAX, `cut ${s.stdout_truncated_bytes}`);
  });

  it('bytes that are not UTF-8 still give valid JSON, shown as U+FFFD', async () => {
    const res = await conn.execute({ command: "printf 'a\\xffb\\xc3\\x28c\\xe2\\x82d\\n'; printf 'caf\\xc3\\xa9 \\xe2\\x9c\\x93\\n'; printf 'e\\xfe\\n' >&2" });
    const s = sc(res);
    const lines = s.stdout.split('\n');
    assert.match(lines[0], /^a\uFFFDb\uFFFD\(c\uFFFD+d$/);
    assert.equal(lines[1], 'café ✓', 'valid UTF-8 is kept as is');
    assert.equal(s.stderr, 'e\uFFFD\n');
    // The raw response is valid UTF-8 JSON as well.
    const sess = await openSession(srv);
    const raw = await call(srv, sess, 'tools/call', { name: 'execute', arguments: { command: "printf '\\x80\\x81\\xc0\\xaf\\xed\\xa0\\x80z'" } });
    assert.equal(raw.status, 200);
    assert.doesNotThrow(() => new TextDecoder('utf-8', { fatal: true }).decode(raw.bytes), 'the response body is valid UTF-8');
    const out = raw.json.result.structuredContent.stdout;
    assert.ok(out.endsWith('z') && /^\uFFFD+z$/.test(out), JSON.stringify(out));
  });

  it('NUL bytes give valid JSON', async () => {
    const s = sc(await conn.execute({ command: "printf 'x\\0y'" }));
    assert.equal(s.stdout, 'x\uFFFDy');
  });

  const bad = [
    ['a missing command', {}],
    ['a command that is not a string', { command: 42 }],
    ['timeout 0', { command: 'true', timeout: 0 }],
    ['a negative timeout', { command: 'true', timeout: -5 }],
    ['a timeout that is too large', { command: 'true', timeout: 1e12 }],
    ['a fractional timeout', { command: 'true', timeout: 1.5 }],
    ['a timeout that is a string', { command: 'true', timeout: '10' }],
  ];
  for (const [what, args] of bad) {
    it(`${what} gives an isError result with a message`, async () => {
      const res = await conn.execute(args);
      assert.equal(res.isError, true, JSON.stringify(res));
      const text = resultText(res);
      assert.ok(text.length > 10, `message: ${text}`);
      assert.match(text, /command|timeout/i);
    });
  }

  it('the largest allowed timeout is accepted', async () => {
    const res = await conn.execute({ command: 'echo fine', timeout: 86400 });
    assert.notEqual(res.isError, true, resultText(res));
    assert.equal(sc(res).stdout, 'fine\n');
  });

  it('an unknown tool is a JSON-RPC error -32602', async () => {
    await assert.rejects(conn.client.callTool({ name: 'no_such_tool', arguments: {} }), (e) => {
      assert.equal(e.code, -32602);
      return true;
    });
  });

  it('the programs exit cleanly on SIGTERM with no sanitizer reports', async () => {
    await conn.close();
    conn = null;
    await srv.shutdown();
  });
});
