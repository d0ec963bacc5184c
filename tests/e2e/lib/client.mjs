// Clients for the e2e tests: the official MCP SDK client over Streamable
// HTTP (what Claude Code uses), and raw HTTP for the transport's error cases.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

export const VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'];
export const LATEST = '2025-11-25';

/*
 * Connect the SDK client with the API key as bearer token. Lists the tools
 * once, so callTool validates structuredContent against each outputSchema.
 */
export async function connect(srv, { key = srv.key, name = 'e2e-test', listTools = true } = {}) {
  const transport = new StreamableHTTPClientTransport(new URL(srv.mcpUrl), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(transport);
  if (listTools) await client.listTools();
  return {
    client,
    transport,
    get sessionId() {
      return transport.sessionId;
    },
    /* tools/call execute. */
    execute: (args, options) =>
      client.callTool({ name: 'execute', arguments: args }, undefined, { timeout: 120000, ...options }),
    close: async () => {
      try {
        await transport.terminateSession();
      } catch {
        /* already gone */
      }
      await client.close();
    },
  };
}

/* The text of a CallToolResult's text blocks. */
export function resultText(res) {
  return (res.content ?? [])
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('\n');
}

/* The JSON-RPC messages in an SSE body (data: lines joined per event). */
export function parseSse(text) {
  const msgs = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    const data = block
      .split(/\r?\n/)
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).replace(/^ /, ''))
      .join('\n');
    if (data) msgs.push(JSON.parse(data));
  }
  return msgs;
}

/*
 * One raw HTTP request to /mcp. body: an object (sent as JSON), a string or
 * a Buffer (sent as is), or undefined. Default headers: the bearer key,
 * Content-Type application/json, Accept with both types; pass a header as
 * null to leave it out. Returns {status, headers, bytes, text, json, messages}:
 * json is the parsed JSON body or, for SSE, the last JSON-RPC response.
 */
export async function http(srv, { method = 'POST', body, headers = {}, session, version, path = '/mcp', timeout = 60000 } = {}) {
  const h = {
    authorization: `Bearer ${srv.key}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  };
  if (session) h['mcp-session-id'] = session;
  if (version) h['mcp-protocol-version'] = version;
  for (const [k, v] of Object.entries(headers)) {
    if (v === null) delete h[k.toLowerCase()];
    else h[k.toLowerCase()] = v;
  }
  if (method === 'GET' || method === 'DELETE' || body === undefined) {
    if (body === undefined) delete h['content-type'];
  }
  let payload;
  if (body !== undefined) payload = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
  const res = await fetch(srv.url + path, { method, headers: h, body: payload, signal: AbortSignal.timeout(timeout) });
  const bytes = Buffer.from(await res.arrayBuffer());
  const text = bytes.toString('utf8');
  const out = { status: res.status, headers: res.headers, bytes, text, json: undefined, messages: [] };
  const ct = res.headers.get('content-type') ?? '';
  if (ct.startsWith('text/event-stream')) {
    out.messages = parseSse(text);
    out.json = [...out.messages].reverse().find((m) => 'result' in m || 'error' in m);
  } else if (ct.startsWith('application/json') && text) {
    out.json = JSON.parse(text);
    out.messages = Array.isArray(out.json) ? out.json : [out.json];
  }
  return out;
}

export function initializeBody(version = LATEST, id = 1) {
  return {
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw-e2e', version: '1.0.0' } },
  };
}

/*
 * Open a session over raw HTTP: initialize with the given version, then
 * notifications/initialized. Returns {session, version, init} (init: the
 * initialize response).
 */
export async function openSession(srv, version = LATEST) {
  const init = await http(srv, { body: initializeBody(version) });
  if (init.status !== 200) throw new Error(`initialize: HTTP ${init.status}: ${init.text}`);
  const session = init.headers.get('mcp-session-id');
  if (!session) throw new Error('initialize: no Mcp-Session-Id header');
  const negotiated = init.json.result.protocolVersion;
  const n = await http(srv, {
    session,
    version: negotiated,
    body: { jsonrpc: '2.0', method: 'notifications/initialized' },
  });
  if (n.status !== 202) throw new Error(`notifications/initialized: HTTP ${n.status}: ${n.text}`);
  return { session, version: negotiated, init };
}

/* A JSON-RPC request in a session over raw HTTP. */
export async function call(srv, sess, method, params, { id = 7, headers } = {}) {
  const body = { jsonrpc: '2.0', id, method };
  if (params !== undefined) body.params = params;
  return http(srv, { body, session: sess.session, version: sess.version, headers });
}

/*
 * A raw POST to /mcp in a session whose response is read as it arrives:
 * chunks with their arrival time (ms since the request), the SSE messages
 * so far, and a promise for the end of the body. abort() drops the
 * connection.
 */
export function rawStream(srv, sess, body) {
  const ac = new AbortController();
  const t0 = Date.now();
  const out = { chunks: [], status: 0, headers: null, ended: false, error: null, t0 };
  out.text = () => out.chunks.map((c) => c.text).join('');
  out.messages = () => parseSse(out.text().split(/\r?\n\r?\n/).slice(0, -1).join('\n\n') + '\n\n');
  out.abort = () => ac.abort();
  out.ready = (async () => {
    const res = await fetch(srv.mcpUrl, {
      method: 'POST',
      signal: ac.signal,
      headers: {
        authorization: `Bearer ${srv.key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': sess.session,
        'mcp-protocol-version': sess.version,
      },
      body: JSON.stringify(body),
    });
    out.status = res.status;
    out.headers = res.headers;
    return res;
  })();
  out.done = out.ready.then(async (res) => {
    const dec = new TextDecoder();
    try {
      for await (const c of res.body) out.chunks.push({ at: Date.now() - t0, text: dec.decode(c, { stream: true }) });
      out.ended = true;
    } catch (e) {
      out.error = e;
    }
    return out;
  });
  return out;
}

/* A tools/call of execute as a JSON-RPC request body. */
export const execBody = (id, command, extra = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'execute', arguments: { command }, ...extra },
});
