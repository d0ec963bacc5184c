// Terminals (tests/bench/run.sh terminal): time to echo, measured against
// execute `true` in the same run, all at concurrency 1, interleaved:
//   - execute `true` (the floor: one command through the supervisor);
//   - an MCP ping (what every call costs before any tool: HTTP, the front,
//     the session and the bearer check);
//   - terminal_read of an idle terminal (one screen read over the
//     supervisor's channel);
//   - echo: one character sent to `cat` until it is on the screen the
//     server holds: terminal_send with wait_ms 50, which answers as soon as
//     the screen changed (so the 150 ms quiet window is not part of it),
//     then a terminal_read only if the character is not there yet;
//   - the terminal link: one keystroke POSTed until the page's event stream
//     carries the screen with it.
// REPS (env BENCH_REPS, default 5) repetitions of N (BENCH_N, default 20)
// of each; median and spread (min..max) of the repetitions' p50s.

import { startServer } from '../e2e/lib/server.mjs';
import { connect } from '../e2e/lib/client.mjs';

const REPS = Number(process.env.BENCH_REPS ?? 5);
const N = Number(process.env.BENCH_N ?? 20);

const median = (a) => {
  const s = [...a].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const spread = (a) => `${Math.min(...a).toFixed(1)}..${Math.max(...a).toFixed(1)}`;

const srv = await startServer({ name: 'bench-terminal', binDir: process.env.CS_BIN ?? 'build/bin', mcpProcs: null });
const conn = await connect(srv, { listTools: false });
const call = async (name, args) => {
  const r = await conn.client.callTool({ name, arguments: args }, undefined, { timeout: 60000 });
  if (r.isError) throw new Error(`${name}: ${JSON.stringify(r).slice(0, 300)}`);
  return r.structuredContent;
};

try {
  const t = await call('terminal_start', { command: 'stty -icanon; cat', cols: 200, rows: 10 });
  const id = t.terminal_id;
  // The link's page: its cookie, then its event stream.
  const link = (await call('terminal_link', { terminal_id: id })).url;
  const open = await fetch(link, { redirect: 'manual' });
  const cookie = open.headers.get('set-cookie').split(';')[0];
  const base = new URL(open.headers.get('location'), srv.url).href;
  const ac = new AbortController();
  const ev = await fetch(`${base}events`, { headers: { cookie }, signal: ac.signal });
  const reader = ev.body.getReader();
  const dec = new TextDecoder();
  let buf = '';
  let waiting = null;
  (async () => {
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ done: true }));
      if (done) return;
      buf += dec.decode(value, { stream: true });
      let i;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const msg = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const data = msg.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
        if (data && waiting && data.includes(waiting.mark)) waiting.resolve();
      }
    }
  })();

  let n = 0;
  const mark = () => `${String.fromCharCode(97 + (n % 26))}`;
  const res = { exec: [], ping: [], read: [], echo: [], link: [] };
  let line = 0;
  let extra = 0;
  for (let rep = 0; rep < REPS; rep++) {
    const one = { exec: [], ping: [], read: [], echo: [], link: [] };
    for (let k = 0; k < N; k++) {
      let t0 = performance.now();
      await call('execute', { command: 'true' });
      one.exec.push(performance.now() - t0);

      t0 = performance.now();
      await conn.client.ping();
      one.ping.push(performance.now() - t0);

      t0 = performance.now();
      await call('terminal_read', { terminal_id: id, scrollback: 0 });
      one.read.push(performance.now() - t0);

      // Echo through the tools: a fresh line each 150 characters.
      n++;
      const ch = mark();
      if (++line % 150 === 0) await call('terminal_send', { terminal_id: id, keys: ['Enter'], wait_ms: 0 });
      const before = (await call('terminal_read', { terminal_id: id, scrollback: 0 })).screen;
      const count = (s) => s.split(ch).length;
      t0 = performance.now();
      let s = (await call('terminal_send', { terminal_id: id, input: ch, wait_ms: 50 })).screen;
      while (count(s) <= count(before)) {
        extra++;
        s = (await call('terminal_read', { terminal_id: id, scrollback: 0 })).screen;
      }
      one.echo.push(performance.now() - t0);

      // Echo through the link: POST a keystroke, wait for its screen event.
      n++;
      const m = `${mark()}${n}`;
      if (++line % 150 === 0) line = 0;
      const seen = new Promise((resolve) => { waiting = { mark: m, resolve }; });
      t0 = performance.now();
      const p = await fetch(`${base}keys`, { method: 'POST', body: m, headers: { cookie, origin: srv.url, 'content-type': 'text/plain' } });
      if (p.status !== 204) throw new Error(`keys: HTTP ${p.status}`);
      await seen;
      one.link.push(performance.now() - t0);
      await call('terminal_send', { terminal_id: id, keys: ['Enter'], wait_ms: 0 });
    }
    for (const k of Object.keys(res)) res[k].push(median(one[k]));
  }
  ac.abort();
  await call('terminal_close', { terminal_id: id });
  const show = (label, a) => console.log(`${label.padEnd(58)} p50 ${median(a).toFixed(1)} ms (${spread(a)})`);
  console.log(`terminals: ${REPS} x ${N} at concurrency 1, behind lighttpd`);
  show('execute `true` (floor)', res.exec);
  show('MCP ping (no tool)', res.ping);
  show('terminal_read of an idle terminal', res.read);
  show('echo: a character to cat, until on the server\'s screen', res.echo);
  show('link: a keystroke POSTed, until in the page\'s event stream', res.link);
  console.log(`echo / execute: ${(median(res.echo) / median(res.exec)).toFixed(2)}; ` +
    `link / execute: ${(median(res.link) / median(res.exec)).toFixed(2)}; ` +
    `echoes that needed a terminal_read after the send: ${extra} of ${REPS * N}`);
} finally {
  await conn.close().catch(() => {});
  await srv.stop();
}
