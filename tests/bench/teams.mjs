// tests/bench/run.sh teams: what a sandbox per person costs.
//
//   1. execute of `true` in SANDBOX_SCOPE=person (the sandbox table is
//      consulted and written on every call) against SANDBOX_SCOPE=shared,
//      two servers side by side, calls interleaved one by one, BENCH_N
//      (default 30) of each after 3 warm-up calls;
//   2. the first execute after an idle stop (the container is started
//      again) against a warm execute, interleaved, BENCH_RESTARTS (default
//      5) repetitions.
// Printed as medians with spread, and ratios.

import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createHash } from 'node:crypto';
import { startServer, docker } from '../e2e/lib/server.mjs';
import { openSession, call } from '../e2e/lib/client.mjs';

const execFileP = promisify(execFile);
const N = Number(process.env.BENCH_N ?? 30);
const RESTARTS = Number(process.env.BENCH_RESTARTS ?? 5);
const WARM = 3;

const median = (a) => {
  const s = [...a].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const fmt = (ms) => `${ms.toFixed(1)} ms`;
const spread = (a) => `median ${fmt(median(a))}, min ${fmt(Math.min(...a))}, max ${fmt(Math.max(...a))}`;

async function execute(srv, sess) {
  const t0 = process.hrtime.bigint();
  const r = await call(srv, sess, 'tools/call', { name: 'execute', arguments: { command: 'true' } }, { id: 1 });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 200 || !r.json?.result || r.json.result.isError) {
    throw new Error(`execute: HTTP ${r.status}: ${r.text.slice(0, 300)}`);
  }
  return ms;
}

async function main() {
  const bin = process.env.CS_BIN ?? 'build/bin';
  const shared = await startServer({ name: 'bench-shared', binDir: bin });
  const person = await startServer({ name: 'bench-person', binDir: bin, settings: { SANDBOX_SCOPE: 'person' } });
  // The operator's key as a bearer: owner "operator", its own sandbox.
  const own = `${person.container}-${createHash('sha256').update('operator').digest('hex').slice(0, 12)}`;
  try {
    const s1 = await openSession(shared);
    const s2 = await openSession(person);
    for (let i = 0; i < WARM; i++) {
      await execute(shared, s1);
      await execute(person, s2);
    }
    const tShared = [];
    const tPerson = [];
    for (let i = 0; i < N; i++) {
      tShared.push(await execute(shared, s1));
      tPerson.push(await execute(person, s2));
    }
    console.log(`sandbox per person: lighttpd + ${bin}/mcp; N=${N} interleaved calls after ${WARM} warm-up calls`);
    console.log('1. execute of `true`, end to end');
    console.log(`   SANDBOX_SCOPE=shared: ${spread(tShared)}`);
    console.log(`   SANDBOX_SCOPE=person: ${spread(tPerson)}`);
    console.log(`   ratio person / shared: ${(median(tPerson) / median(tShared)).toFixed(2)}x (median), ` +
      `difference ${fmt(median(tPerson) - median(tShared))}\n`);

    const ctl = (args) => execFileP(join(person.bin, 'sandboxctl'), args,
      { env: { ...process.env, SANDBOX_ENV_FILE: person.envFile }, timeout: 120000 });
    const tWarm = [];
    const tCold = [];
    for (let i = 0; i < RESTARTS; i++) {
      tWarm.push(await execute(person, s2));
      await ctl(['sandboxes', 'stop', 'operator']);
      const state = (await docker('inspect', '-f', '{{.State.Running}}', own)).stdout.trim();
      if (state !== 'false') throw new Error(`${own} not stopped: ${state}`);
      tCold.push(await execute(person, s2));
    }
    console.log(`2. the first execute after an idle stop (container started again), ${RESTARTS} interleaved repetitions`);
    console.log(`   warm:          ${spread(tWarm)}`);
    console.log(`   after a stop:  ${spread(tCold)}`);
    console.log(`   ratio after a stop / warm: ${(median(tCold) / median(tWarm)).toFixed(1)}x (median)`);
  } finally {
    await shared.stop();
    await person.stop();
    await docker('rm', '-f', own);
    await docker('volume', 'rm', '-f', `${person.volume}-${own.slice(person.container.length + 1)}`);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
