// Part of `make bench` (tests/bench/run.sh eras): the cost of the 2026-07-28
// stateless path against the 2025 session path on the same server, behind
// lighttpd with the normal build. Each 2026 request carries its _meta and
// is checked against its headers; each 2025 request looks its session up.
//
// tools/list and an execute of `true`, interleaved request by request (2025,
// 2026, 2025, ...), N (BENCH_N, default 30) of each per round after warm-up,
// 3 rounds: printed as the ratio of the 2026 median to the 2025 median per
// round, with the median and the spread of the rounds.

import { startServer } from '../e2e/lib/server.mjs';
import { openSession, call, http } from '../e2e/lib/client.mjs';

const N = Number(process.env.BENCH_N ?? 30);
const ROUNDS = 3;
const V = '2026-07-28';

const median = (a) => {
  const s = [...a].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

function modern(srv, method, params) {
  return http(srv, {
    body: {
      jsonrpc: '2.0',
      id: 1,
      method,
      params: { ...params, _meta: { 'io.modelcontextprotocol/protocolVersion': V, 'io.modelcontextprotocol/clientCapabilities': {} } },
    },
    headers: { 'mcp-protocol-version': V, 'mcp-method': method, ...(params.name ? { 'mcp-name': params.name } : {}) },
  });
}

async function ms(fn) {
  const t0 = process.hrtime.bigint();
  const r = await fn();
  if (r.status !== 200) throw new Error(`HTTP ${r.status}: ${r.text}`);
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

const srv = await startServer({ name: 'bench-eras', binDir: 'build/bin' });
try {
  const sess = await openSession(srv);
  const kinds = {
    'tools/list': [() => call(srv, sess, 'tools/list', {}), () => modern(srv, 'tools/list', {})],
    'execute true': [
      () => call(srv, sess, 'tools/call', { name: 'execute', arguments: { command: 'true' } }),
      () => modern(srv, 'tools/call', { name: 'execute', arguments: { command: 'true' } }),
    ],
  };
  console.log(`eras: 2026-07-28 stateless against 2025 sessions, behind ${srv.web}, ${N} interleaved pairs x ${ROUNDS} rounds`);
  for (const [name, [old, neu]] of Object.entries(kinds)) {
    for (let i = 0; i < 3; i++) await old(), await neu();
    const ratios = [];
    const meds = [];
    for (let r = 0; r < ROUNDS; r++) {
      const a = [];
      const b = [];
      for (let i = 0; i < N; i++) {
        a.push(await ms(old));
        b.push(await ms(neu));
      }
      meds.push([median(a), median(b)]);
      ratios.push(median(b) / median(a));
    }
    const spread = `${Math.min(...ratios).toFixed(2)}..${Math.max(...ratios).toFixed(2)}`;
    console.log(
      `  ${name}: 2026/2025 = ${median(ratios).toFixed(2)} (rounds ${spread}); medians ` +
        meds.map(([x, y]) => `${x.toFixed(1)}/${y.toFixed(1)} ms`).join(', '),
    );
  }
} finally {
  await srv.stop();
}
