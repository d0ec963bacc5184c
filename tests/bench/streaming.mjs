// The long-command benchmark behind `make bench` (see tests/bench/run.sh),
// behind lighttpd and behind Caddy (BENCH_WEBS="lighttpd caddy"):
//
//   1. Progress latency: a command prints a line with its time
//      (`date +%s%N`, the same clock as the host's) every 0.37 s; for each
//      line, the time until the first notifications/progress carrying it
//      reaches the client. The reference is the same command over the raw
//      Docker API (exec create + start) in the same run: the time until its
//      stream delivers the line.
//   2. JSON-RPC ping latency (sequential over one keep-alive connection for
//      BENCH_PING_SECONDS=6 s) on an idle server, then while 32 long
//      commands stream output and progress (SSE) at once; p50/p99 and their
//      ratio.

import { request, Agent } from 'node:http';
import { startServer, sleep } from '../e2e/lib/server.mjs';
import { openSession, parseSse } from '../e2e/lib/client.mjs';

const WEBS = (process.env.BENCH_WEBS ?? 'lighttpd caddy').split(/\s+/).filter(Boolean);
const LINES = Number(process.env.BENCH_LINES ?? 40);
const PING_SECONDS = Number(process.env.BENCH_PING_SECONDS ?? 6);
const LONG = 32;
const SOCK = (process.env.DOCKER_HOST ?? 'unix:///var/run/docker.sock').replace(/^unix:\/\//, '');

const pct = (a, p) => [...a].sort((x, y) => x - y)[Math.min(a.length - 1, Math.floor((a.length * p) / 100))];
const ms = (x) => `${x.toFixed(1)} ms`;
const dist = (a) => `p50 ${ms(pct(a, 50))}, p90 ${ms(pct(a, 90))}, p99 ${ms(pct(a, 99))}, max ${ms(Math.max(...a))} (n=${a.length})`;
const nowMs = () => performance.timeOrigin + performance.now();

// The command: LINES lines "L<i> <ns since the epoch>", gap seconds apart.
// Progress goes out at most about once a second: with a 0.37 s gap lines
// fall at every phase of that second and most wait; with a 1.2 s gap each
// line follows a quiet second and goes out at once.
const lineCmd = (gap) => `for i in $(seq 1 ${LINES}); do echo "L$i $(date +%s%N)"; sleep ${gap}; done`;
const GAPS = (process.env.BENCH_GAPS ?? '0.37 1.2').split(/\s+/).filter(Boolean);

/* "L<i> <ns>": the line's number and when it was printed (ms since the epoch). */
function parseLine(line) {
  const m = /^L(\d+) (\d{19})$/.exec(line);
  if (!m) return null;
  const ns = BigInt(m[2]);
  return { n: Number(m[1]), at: Number(ns / 1000000n) + Number(ns % 1000000n) / 1e6 };
}

/* A POST to /mcp whose SSE body is read as it arrives; onEvent(msg, t). */
function sseCall(srv, sess, body, onEvent, agent) {
  return new Promise((res, rej) => {
    const data = JSON.stringify(body);
    const u = new URL(srv.mcpUrl);
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: 'POST',
        agent,
        headers: {
          authorization: `Bearer ${srv.key}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-session-id': sess.session,
          'mcp-protocol-version': sess.version,
          'content-length': Buffer.byteLength(data),
        },
      },
      (r) => {
        let buf = '';
        let last;
        r.setEncoding('utf8');
        r.on('data', (c) => {
          const t = nowMs();
          buf += c;
          let i;
          while ((i = buf.indexOf('\n\n')) >= 0) {
            const block = buf.slice(0, i + 2);
            buf = buf.slice(i + 2);
            for (const m of parseSse(block)) {
              if ('id' in m) last = m;
              onEvent?.(m, t);
            }
          }
        });
        r.on('end', () => res({ status: r.statusCode, result: last }));
        r.on('error', rej);
      },
    );
    req.on('error', rej);
    req.end(data);
  });
}

/* The same command over the raw Docker API: line -> arrival time. */
function dockerApi(method, path, body, onData) {
  return new Promise((res, rej) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      {
        socketPath: SOCK,
        method,
        path: `/v1.41${path}`,
        agent: false,
        headers: data ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } : {},
      },
      (r) => {
        const chunks = [];
        r.on('data', (c) => (onData ? onData(c, nowMs()) : chunks.push(c)));
        r.on('end', () => res({ status: r.statusCode, body: Buffer.concat(chunks) }));
        r.on('error', rej);
      },
    );
    req.on('error', rej);
    if (data) req.write(data);
    req.end();
  });
}

async function rawLines(container, LINE_CMD) {
  const c = await dockerApi('POST', `/containers/${container}/exec`, {
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
    Cmd: ['bash', '-c', LINE_CMD],
    WorkingDir: '/sandbox',
  });
  if (c.status !== 201) throw new Error(`exec create: ${c.status} ${c.body}`);
  const id = JSON.parse(c.body).Id;
  const lat = [];
  let pending = Buffer.alloc(0);
  let text = '';
  await dockerApi('POST', `/exec/${id}/start`, { Detach: false, Tty: false }, (chunk, t) => {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= 8) {
      const len = pending.readUInt32BE(4);
      if (pending.length < 8 + len) break;
      text += pending.subarray(8, 8 + len).toString('utf8');
      pending = pending.subarray(8 + len);
    }
    let i;
    while ((i = text.indexOf('\n')) >= 0) {
      const p = parseLine(text.slice(0, i));
      text = text.slice(i + 1);
      if (p) lat.push(t - p.at);
    }
  });
  return lat;
}

async function progressLatency(srv, sess, LINE_CMD) {
  const seen = new Map(); // line number -> latency of its first notification
  const agent = new Agent({ keepAlive: false });
  const r = await sseCall(
    srv,
    sess,
    { jsonrpc: '2.0', id: 'lat', method: 'tools/call', params: { name: 'execute', arguments: { command: LINE_CMD }, _meta: { progressToken: 'lat' } } },
    (m, t) => {
      if (m.method !== 'notifications/progress' || !m.params.message) return;
      for (const l of m.params.message.split('\n')) {
        const p = parseLine(l);
        if (p && !seen.has(p.n)) seen.set(p.n, t - p.at);
      }
    },
    agent,
  );
  if (r.status !== 200 || r.result?.result?.isError) throw new Error(`execute: ${r.status} ${JSON.stringify(r.result).slice(0, 300)}`);
  return { lat: [...seen.values()], missing: LINES - seen.size };
}

/* Sequential JSON-RPC pings over one keep-alive connection for PING_SECONDS. */
async function pings(srv, sess) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
  const u = new URL(srv.mcpUrl);
  const one = () =>
    new Promise((res, rej) => {
      const t0 = performance.now();
      const req = request(
        {
          host: u.hostname,
          port: u.port,
          path: u.pathname,
          method: 'POST',
          agent,
          headers: {
            authorization: `Bearer ${srv.key}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-session-id': sess.session,
            'mcp-protocol-version': sess.version,
            'content-length': Buffer.byteLength(body),
          },
        },
        (r) => {
          r.resume();
          r.on('end', () => (r.statusCode === 200 ? res(performance.now() - t0) : rej(new Error(`ping: HTTP ${r.statusCode}`))));
        },
      );
      req.on('error', rej);
      req.end(body);
    });
  for (let i = 0; i < 20; i++) await one();
  const t = [];
  const end = Date.now() + PING_SECONDS * 1000;
  while (Date.now() < end) t.push(await one());
  agent.destroy();
  return t;
}

async function bench(web) {
  const srv = await startServer({
    name: `bench-stream-${web}`,
    web,
    binDir: process.env.CS_BIN ?? 'build/bin',
    settings: { SANDBOX_MEMORY: '2g', SANDBOX_CPUS: '2' },
  });
  try {
    const sess = await openSession(srv);
    await sseCall(srv, sess, { jsonrpc: '2.0', id: 0, method: 'tools/call', params: { name: 'execute', arguments: { command: 'true' } } });
    console.log(`\n== behind ${web} (${srv.bin}/mcp), container ${srv.container}`);

    // 1. Progress latency, against the raw Docker stream of the same command.
    for (const gap of GAPS) {
      const LINE_CMD = lineCmd(gap);
      console.log(`4. line printed -> its notifications/progress at the client; command (${LINES} lines, one every ${gap} s):`);
      console.log(`     ${LINE_CMD}`);
      const p = await progressLatency(srv, sess, LINE_CMD);
      const raw = await rawLines(srv.container, LINE_CMD);
      console.log(`   MCP tools/call with _meta.progressToken over SSE (${web}): ${dist(p.lat)}${p.missing ? `; ${p.missing} lines never shown` : ''}`);
      console.log(`   raw Docker API stream (POST /exec/ID/start on ${SOCK}), same command: ${dist(raw)}`);
      console.log(`   ratio MCP / raw: ${(pct(p.lat, 50) / pct(raw, 50)).toFixed(1)}x (p50). Progress goes out at most about once a second:`);
      console.log(`   a line after a quiet second at once, others with the next notification (<= ~1 s)`);
    }

    // 2. Ping while 32 long commands stream.
    const idle = await pings(srv, sess);
    const agent = new Agent({ keepAlive: false });
    let events = 0;
    const longCmd = 'for i in $(seq 1 100); do echo "streaming line $i"; sleep 0.25; done';
    const longs = Array.from({ length: LONG }, (_, i) =>
      sseCall(
        srv,
        sess,
        { jsonrpc: '2.0', id: `long-${i}`, method: 'tools/call', params: { name: 'execute', arguments: { command: longCmd }, _meta: { progressToken: `p${i}` } } },
        () => events++,
        agent,
      ),
    );
    // Until every one of them is streaming.
    const t0 = Date.now();
    while (events < LONG * 3 && Date.now() - t0 < 20000) await sleep(100);
    const e0 = events;
    const tl = Date.now();
    const loaded = await pings(srv, sess);
    const rate = ((events - e0) / ((Date.now() - tl) / 1000)).toFixed(0);
    const results = await Promise.all(longs);
    const good = (r) => r.status === 200 && r.result?.result && !r.result.result.isError;
    const ok = results.filter(good).length;
    console.log(`5. JSON-RPC ping, sequential for ${PING_SECONDS} s over one keep-alive connection (POST ${srv.mcpUrl} {"method":"ping"}):`);
    console.log(`   idle server:                       ${dist(idle)}`);
    console.log(`   while ${LONG} commands stream:        ${dist(loaded)}`);
    console.log(`     (each: ${longCmd}; with progress, ${rate} SSE events/s reached the client meanwhile; ${ok}/${LONG} completed)`);
    const bad = results.find((r) => !good(r));
    if (bad) console.log(`     a command that did not complete: HTTP ${bad.status} ${JSON.stringify(bad.result).slice(0, 300)}`);
    console.log(`   ratio loaded / idle: p50 ${(pct(loaded, 50) / pct(idle, 50)).toFixed(2)}x, p99 ${(pct(loaded, 99) / pct(idle, 99)).toFixed(2)}x`);
  } finally {
    await srv.stop();
  }
}

async function main() {
  console.log('code-sandbox long-command benchmark');
  for (const web of WEBS) await bench(web);
}

main().catch((e) => {
  console.error(`bench: ${e.stack ?? e}`);
  process.exit(1);
});
