// A node:test reporter for tests/run.sh: one line per test,
//   ok - e2e/execute: execute > files persist between calls (123 ms)
//   (e2e[caddy]/execute: ... when CS_WEB=caddy)
//   not ok - e2e/execute: ... with the error indented below,
// and a last line "E2E-SUMMARY passed=N failed=N skipped=N" that run.sh reads.
// Suites are not counted, except a suite that failed by itself (a hook threw)
// without any failed test inside it.

import { basename } from 'node:path';
import { inspect } from 'node:util';

// Behind Caddy (CS_WEB=caddy) the names read e2e[caddy]/FILE: ..., so a
// run through both web servers shows both.
const WEB = process.env.CS_WEB && process.env.CS_WEB !== 'lighttpd' ? `[${process.env.CS_WEB}]` : '';

function label(data) {
  const file = data.file ? basename(data.file).replace(/\.test\.mjs$/, '') : '?';
  return `e2e${WEB}/${file}: ${data.name}`;
}

function describeError(err) {
  if (!err) return '';
  let e = err;
  // node:test wraps the thrown error; show the cause.
  while (e && e.cause && (e.code === 'ERR_TEST_FAILURE' || e.failureType)) e = e.cause;
  let s = e && e.stack ? e.stack : inspect(e, { depth: 4 });
  if (e && e.code === 'ERR_ASSERTION' && e.message) s = e.message + '\n' + (e.stack ?? '').split('\n').slice(1, 4).join('\n');
  return s
    .split('\n')
    .slice(0, 40)
    .map((l) => `#   ${l}`)
    .join('\n');
}

export default async function* reporter(source) {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  const leafFails = new Map(); // file -> failed leaf tests not yet claimed by a suite
  for await (const ev of source) {
    if (ev.type !== 'test:pass' && ev.type !== 'test:fail') {
      if (ev.type === 'test:stderr' || ev.type === 'test:stdout') {
        const msg = String(ev.data.message ?? '').trimEnd();
        if (msg) yield msg.split('\n').map((l) => `# ${l}`).join('\n') + '\n';
      }
      continue;
    }
    const d = ev.data;
    const details = d.details ?? {};
    const ms = details.duration_ms !== undefined ? ` (${Math.round(details.duration_ms)} ms)` : '';
    const file = d.file ?? '?';
    if (details.type === 'suite') {
      if (ev.type === 'test:fail') {
        if (!(leafFails.get(file) > 0)) {
          failed++;
          yield `not ok - ${label(d)} (suite)${ms}\n${describeError(details.error)}\n`;
        } else {
          // Its tests were counted; still show why the suite failed (a hook).
          yield `# suite ${label(d)} failed:\n${describeError(details.error)}\n`;
        }
      }
      if (d.nesting === 0) leafFails.set(file, 0);
      continue;
    }
    if (ev.type === 'test:pass') {
      if (d.skip !== undefined || d.todo !== undefined) {
        skipped++;
        yield `ok - ${label(d)} # SKIP${typeof d.skip === 'string' ? ' ' + d.skip : ''}\n`;
      } else {
        passed++;
        yield `ok - ${label(d)}${ms}\n`;
      }
    } else {
      failed++;
      leafFails.set(file, (leafFails.get(file) ?? 0) + 1);
      yield `not ok - ${label(d)}${ms}\n${describeError(details.error)}\n`;
    }
  }
  yield `E2E-SUMMARY passed=${passed} failed=${failed} skipped=${skipped}\n`;
}
