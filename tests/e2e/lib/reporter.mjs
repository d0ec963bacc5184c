// A node:test reporter for tests/run.sh: one line per test,
//   ok - e2e/execute: execute > files persist between calls (123 ms)
//   (e2e[caddy]/execute: ... when CS_WEB=caddy)
//   not ok - e2e/execute: ... with the error indented below,
// and a last line "E2E-SUMMARY passed=N failed=N skipped=N" that run.sh reads.
// Suites are not counted, except a suite that failed by itself (a hook threw)
// without any failed test inside it, and a skipped suite: node:test never
// runs its body, so each test written in it (read from the file) is one
// "ok - ... # SKIP reason" line.
// A file that stops early fails: a test node:test queued that never
// passed or failed (the file's process exited mid-way, even with status
// 0) is a "not ok" line, and so is a file that ran no test at all.

import { readFileSync } from 'node:fs';
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

// The tests written in the call that starts at LINE:COLUMN of FILE (a
// describe): each it(...) / test(...) in its parentheses, with its name
// when it is a plain string. Strings, template literals, comments and
// regular expressions are stepped over; a test declared in a loop counts
// once.
export function declaredTests(file, line, column) {
  let src;
  try {
    src = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  let i = 0;
  for (let l = 1; l < line && i >= 0; l++) i = src.indexOf('\n', i) + 1;
  if (i < 0) return [];
  i += (column ?? 1) - 1;
  const open = src.indexOf('(', i);
  if (open < 0) return [];
  const tests = [];
  let depth = 0;
  let prev = ''; // the last significant character, to tell a regex from a division
  const str = (q, k) => {
    // k: index after the opening quote; returns [end index, text]
    let out = '';
    while (k < src.length && src[k] !== q) {
      if (src[k] === '\\') {
        out += src[k + 1];
        k += 2;
        continue;
      }
      if (q === '`' && src[k] === '$' && src[k + 1] === '{') {
        let d = 1;
        k += 2;
        while (k < src.length && d > 0) {
          if (src[k] === '{') d++;
          else if (src[k] === '}') d--;
          else if (src[k] === '`' || src[k] === "'" || src[k] === '"') k = str(src[k], k + 1)[0];
          k++;
        }
        out += '${...}';
        continue;
      }
      out += src[k++];
    }
    return [k, out];
  };
  for (let k = open; k < src.length; k++) {
    const c = src[k];
    if (c === '/' && src[k + 1] === '/') {
      k = src.indexOf('\n', k);
      if (k < 0) break;
      continue;
    }
    if (c === '/' && src[k + 1] === '*') {
      k = src.indexOf('*/', k + 2) + 1;
      if (k <= 0) break;
      continue;
    }
    if (c === "'" || c === '"' || c === '`') {
      k = str(c, k + 1)[0];
      prev = 'a';
      continue;
    }
    if (c === '/' && (prev === '' || '(,=:[!&|?{};+-*%<>~^'.includes(prev))) {
      // a regular expression literal
      let inClass = false;
      for (k++; k < src.length && src[k] !== '\n'; k++) {
        if (src[k] === '\\') k++;
        else if (src[k] === '[') inClass = true;
        else if (src[k] === ']') inClass = false;
        else if (src[k] === '/' && !inClass) break;
      }
      prev = 'a';
      continue;
    }
    if (/\s/.test(c)) continue;
    if (c === '(') depth++;
    else if (c === ')' && --depth === 0) break;
    if (/[A-Za-z_$]/.test(c)) {
      let e = k;
      while (e < src.length && /[\w$]/.test(src[e])) e++;
      const word = src.slice(k, e);
      const before = src.slice(0, k).trimEnd().slice(-1);
      if ((word === 'it' || word === 'test') && before !== '.') {
        let m = e;
        const mod = /^\s*\.\s*(skip|only|todo)\b/.exec(src.slice(m));
        if (mod) m += mod[0].length;
        const call = /^\s*\(\s*/.exec(src.slice(m));
        if (call) {
          m += call[0].length;
          const q = src[m];
          tests.push(q === "'" || q === '"' || q === '`' ? str(q, m + 1)[1] : null);
        }
      }
      k = e - 1;
      prev = 'a';
      continue;
    }
    prev = c;
  }
  return tests;
}

export default async function* reporter(source) {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  const leafFails = new Map(); // file -> failed leaf tests not yet claimed by a suite
  // Per file: the tests queued and not yet passed or failed, and how many
  // it reported at all.
  const open = new Map(); // "file:line:column:name" -> count
  const files = new Map(); // file -> tests reported
  const key = (d) => `${d.file}\0${d.line}\0${d.column}\0${d.nesting}\0${d.name}`;
  const isFile = (d) => d.file && d.name === d.file;
  for await (const ev of source) {
    const d0 = ev.data ?? {};
    if (ev.type === 'test:enqueue' && d0.file) {
      if (isFile(d0)) {
        if (!files.has(d0.file)) files.set(d0.file, 0);
      } else {
        open.set(key(d0), (open.get(key(d0)) ?? 0) + 1);
      }
    }
    if ((ev.type === 'test:pass' || ev.type === 'test:fail') && d0.file && !isFile(d0)) {
      const n = open.get(key(d0));
      if (n > 1) open.set(key(d0), n - 1);
      else open.delete(key(d0));
      files.set(d0.file, (files.get(d0.file) ?? 0) + 1);
    }
    if (ev.type === 'test:fail' && isFile(d0)) files.set(d0.file, (files.get(d0.file) ?? 0) + 1);
    if (ev.type === 'test:pass' && isFile(d0)) {
      // node:test passes a file that reported no test (it exited before
      // its tests were queued): counted below as a file that ran nothing.
      continue;
    }
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
      if (ev.type === 'test:pass' && d.skip !== undefined) {
        // A skipped suite: its tests, as the file declares them.
        const why = typeof d.skip === 'string' ? ' ' + d.skip : '';
        const names = d.file ? declaredTests(d.file, d.line, d.column) : [];
        if (names.length === 0) names.push(null);
        for (const [i, n] of names.entries()) {
          skipped++;
          const what = n ?? (names.length > 1 ? `test ${i + 1}` : '(its tests)');
          yield `ok - ${label({ ...d, name: `${d.name} > ${what}` })} # SKIP${why}\n`;
        }
      }
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
  // The tests of files that stopped early.
  for (const [k, n] of open) {
    const [file, , , , name] = k.split('\0');
    for (let i = 0; i < n; i++) {
      failed++;
      files.set(file, (files.get(file) ?? 0) + 1);
      yield `not ok - ${label({ file, name })}: never finished (the file's process ended before it passed or failed)\n`;
    }
  }
  for (const [file, n] of files) {
    if (n === 0) {
      failed++;
      yield `not ok - ${label({ file, name: 'the file ran no test' })}\n`;
    }
  }
  yield `E2E-SUMMARY passed=${passed} failed=${failed} skipped=${skipped}\n`;
}
