// Part of `make bench` (tests/bench/run.sh close): how long after a
// 2026-07-28 client closes the response stream of a running execute the
// command is killed, behind lighttpd and behind Caddy (BENCH_WEBS), with
// the normal build. Each trial starts `sleep` with a unique argument,
// waits until it runs, aborts the request, and a watcher inside the
// container (started before the abort) prints the time the process went
// away, on the same clock as the host's. BENCH_N trials per web server
// (default 8), printed as median, spread and each value. The reference
// is the web server itself: lighttpd drops the FastCGI connection as soon
// as the client goes, Caddy only when a write to the client fails.

import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { startServer, waitFor } from '../e2e/lib/server.mjs';

const WEBS = (process.env.BENCH_WEBS ?? 'lighttpd caddy').split(/\s+/).filter(Boolean);
const N = Number(process.env.BENCH_N ?? 8);
const V = '2026-07-28';

const median = (a) => {
  const s = [...a].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

function call(srv, command, signal) {
  return fetch(srv.mcpUrl, {
    method: 'POST',
    signal,
    headers: {
      authorization: `Bearer ${srv.key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': V,
      'mcp-method': 'tools/call',
      'mcp-name': 'execute',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name: 'execute',
        arguments: { command },
        _meta: { 'io.modelcontextprotocol/protocolVersion': V, 'io.modelcontextprotocol/clientCapabilities': {} },
      },
    }),
  });
}

/*
 * A watcher in the container: finds the process whose command line holds
 * tag, says "found", then prints the time (ms since the epoch) it is gone.
 */
function watch(srv, tag) {
  const script = `while :; do for p in /proc/[0-9]*; do
  c=$(tr '\\0' ' ' 2>/dev/null < $p/cmdline); case "$c" in "sleep ${tag}"*) pid=\${p#/proc/}; break 2;; esac; done; sleep 0.02; done
echo found; while [ -e /proc/$pid ]; do sleep 0.01; done; echo "gone $(( $(date +%s%N) / 1000000 ))"`;
  const child = spawn('docker', ['exec', srv.container, 'bash', '-c', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  const found = new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('found')) resolve();
    });
    child.on('exit', () => reject(new Error(`watcher ended: ${out}`)));
  });
  const gone = new Promise((resolve, reject) => {
    child.on('exit', () => {
      const m = /gone (\d+)/.exec(out);
      m ? resolve(Number(m[1])) : reject(new Error(`watcher: ${out}`));
    });
  });
  found.catch(() => {});
  return { found, gone, child };
}

for (const web of WEBS) {
  const srv = await startServer({ name: `bench-close-${web}`, binDir: 'build/bin', web, settings: { SANDBOX_INLINE_WAIT: 30 } });
  try {
    // Warm: the container, the supervisor in place.
    await (await call(srv, 'true')).text();
    const times = [];
    let lost = 0;
    for (let i = 0; times.length < N; i++) {
      if (lost > N) throw new Error(`${lost} trials lost (the watcher in the container ended early)`);
      const tag = `${100 + i}.${randomBytes(3).readUIntBE(0, 3)}`;
      const w = watch(srv, tag);
      const ac = new AbortController();
      const res = await call(srv, `sleep ${tag}`, ac.signal);
      await w.found;
      // Somewhere within the program's keep-alive period: every phase.
      await new Promise((r) => setTimeout(r, 200 + Math.random() * 1000));
      const closed = Date.now();
      ac.abort();
      res.body?.cancel().catch(() => {});
      let gone;
      try {
        gone = await Promise.race([w.gone, new Promise((_, rej) => setTimeout(() => rej(new Error('not killed within 30 s')), 30000))]);
      } catch (e) {
        // A watcher that ended early (the engine busy or restarted): the
        // trial says nothing; one never killed is a failure.
        if (/not killed/.test(e.message)) throw e;
        lost++;
        continue;
      }
      times.push(gone - closed);
      await waitFor(async () => true, { timeout: 100 });
    }
    const s = [...times].sort((a, b) => a - b);
    console.log(`close: behind ${web}, stream closed to command killed, n=${N}: median ${median(times)} ms, ` +
      `min ${s[0]} ms, max ${s[s.length - 1]} ms; each: ${times.join(' ')}${lost ? ` (${lost} trials lost to the watcher)` : ''}`);
  } finally {
    await srv.stop();
  }
}
