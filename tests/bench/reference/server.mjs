// The Node reference server for `make bench` (tests/bench/lean.mjs): the
// official TypeScript SDK v1 (@modelcontextprotocol/sdk, from the e2e
// suite's modules) serving the same three tools over Streamable HTTP with
// sessions, doing the same work through `docker exec`. It exists only to be
// measured against; the figures compared are tools/list and ping.
//
//   node tests/bench/reference/server.mjs PORT CONTAINER
// The bearer token is read from the environment (REF_TOKEN), compared by
// its SHA-256 hash as the C server compares its access tokens.

import { createServer } from 'node:http';
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { McpServer } from '../../e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/server/mcp.js';
import { StreamableHTTPServerTransport } from '../../e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/server/streamableHttp.js';
import { z } from '../../e2e/node_modules/zod/index.js';

const execFileP = promisify(execFile);
const [port, container] = process.argv.slice(2);
const tokenHash = createHash('sha256').update(process.env.REF_TOKEN ?? '').digest();
const runs = new Map();
let nextRun = 1;

function newServer() {
  const s = new McpServer({ name: 'node-reference', version: '1.0.0' });
  s.registerTool(
    'execute',
    {
      description: 'Run a bash command in the sandbox and return stdout, stderr and the exit code.',
      inputSchema: { command: z.string(), timeout: z.number().int().min(1).max(86400).optional() },
    },
    async ({ command, timeout = 3600 }) => {
      const id = String(nextRun++);
      const r = await execFileP('docker', ['exec', '-w', '/sandbox', container, 'bash', '-c', command], {
        timeout: timeout * 1000,
        maxBuffer: 1 << 20,
      }).then(
        (o) => ({ exit_code: 0, stdout: o.stdout, stderr: o.stderr }),
        (e) => ({ exit_code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' }),
      );
      runs.set(id, r);
      const out = { run_id: id, ...r };
      return { content: [{ type: 'text', text: JSON.stringify(out) }], structuredContent: out };
    },
  );
  s.registerTool(
    'get_result',
    { description: "Return an earlier execute call's result.", inputSchema: { run_id: z.string().optional(), wait: z.number().optional() } },
    async ({ run_id }) => {
      const r = run_id ? runs.get(run_id) : { runs: [...runs.keys()] };
      if (!r) return { isError: true, content: [{ type: 'text', text: 'no such run' }] };
      return { content: [{ type: 'text', text: JSON.stringify(r) }] };
    },
  );
  s.registerTool(
    'share_file',
    { description: 'Return a download link for a file in the sandbox.', inputSchema: { path: z.string() } },
    async ({ path }) => {
      const r = await execFileP('docker', ['exec', container, 'stat', '-c', '%s', '--', path]).catch(() => null);
      if (!r) return { isError: true, content: [{ type: 'text', text: 'no such file' }] };
      return { content: [{ type: 'text', text: `http://127.0.0.1:${port}/dl/${randomUUID()} (${r.stdout.trim()} bytes)` }] };
    },
  );
  return s;
}

const sessions = new Map();

function authorised(req) {
  const m = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
  return m !== null && timingSafeEqual(createHash('sha256').update(m[1]).digest(), tokenHash);
}

createServer(async (req, res) => {
  if (!authorised(req)) {
    res.writeHead(401, { 'www-authenticate': 'Bearer' }).end();
    return;
  }
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
  const sid = req.headers['mcp-session-id'];
  let t = sid ? sessions.get(sid) : undefined;
  if (!t) {
    if (sid) {
      res.writeHead(404).end();
      return;
    }
    t = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (id) => sessions.set(id, t),
    });
    await newServer().connect(t);
  }
  await t.handleRequest(req, res, body);
}).listen(Number(port), '127.0.0.1', () => console.log(`listening ${port}`));
