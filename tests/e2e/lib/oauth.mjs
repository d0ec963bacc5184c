// OAuth helpers for the e2e tests: PKCE pairs, registration, the sign-in
// page driven headlessly (GET the page, POST the form with its cookie, read
// the code from Location), the token endpoint over raw HTTP, and an
// OAuthClientProvider for the official MCP SDK client that signs in the
// same way (what a person does in the browser, without one).

import { createHash, randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { sleep } from './server.mjs';

/* A PKCE verifier and its S256 challenge (RFC 7636 §4.1, §4.2). */
export function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  return { verifier, challenge };
}

/* What claude.ai registers (protocol notes, "What claude.ai ... register"). */
export const CLAUDE_REGISTRATION = {
  redirect_uris: ['https://claude.ai/api/mcp/auth_callback'],
  token_endpoint_auth_method: 'client_secret_post',
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  client_name: 'Claude',
};

/* POST /register with a JSON body; returns {status, json, text, headers}. */
export async function register(srv, body, { headers = {} } = {}) {
  const r = await fetch(`${srv.url}/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await r.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: r.status, json, text, headers: r.headers };
}

/* The /authorize URL for a client and a PKCE challenge; extra params override. */
export function authorizeUrl(srv, { clientId, redirectUri, challenge, state = 'st-' + randomBytes(6).toString('hex'), extra = {} }) {
  const u = new URL(`${srv.url}/authorize`);
  const p = {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: redirectUri,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state,
    scope: 'claudeai',
    resource: srv.mcpUrl,
    prompt: 'consent',
    ...extra,
  };
  for (const [k, v] of Object.entries(p)) if (v !== undefined && v !== null) u.searchParams.set(k, v);
  return u;
}

/* GET a URL without following redirects. */
export async function get(url, headers = {}) {
  const r = await fetch(url, { redirect: 'manual', headers });
  return { status: r.status, headers: r.headers, text: await r.text() };
}

/* The hidden request id of a sign-in page. */
export function requestIdOf(html) {
  const m = /name="request" value="([^"]+)"/.exec(html);
  return m ? m[1] : null;
}

/* The cookie pairs (name=value) a response sets. */
export function cookiesOf(headers) {
  return (headers.getSetCookie?.() ?? []).map((c) => c.split(';')[0]).join('; ');
}

/* POST the sign-in form. */
export async function postSignIn(srv, { request, cookie, key, action = 'allow', headers = {} }) {
  const body = new URLSearchParams({ request, action });
  if (key !== undefined) body.set('key', key);
  const r = await fetch(`${srv.url}/authorize`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie } : {}), ...headers },
    body,
  });
  return { status: r.status, headers: r.headers, text: await r.text(), location: r.headers.get('location') };
}

/*
 * Sign in as a person would: open the page at url, type key, submit.
 * Waits out the wrong-key throttle (429 Retry-After) when other tests of
 * the same server made it wait. Returns {page, post, location, params}
 * (params: the redirect's query as an object, with code, state, iss).
 */
export async function signIn(srv, url, { key = srv.key, action = 'allow' } = {}) {
  const page = await get(url);
  if (page.status !== 200) throw new Error(`sign-in page: HTTP ${page.status}: ${page.text}`);
  const request = requestIdOf(page.text);
  const cookie = cookiesOf(page.headers);
  for (let i = 0; ; i++) {
    const post = await postSignIn(srv, { request, cookie, key, action });
    if (post.status === 429 && i < 5) {
      await sleep(1000 * Number(post.headers.get('retry-after') ?? 1) + 100);
      continue;
    }
    const params = post.location ? Object.fromEntries(new URL(post.location).searchParams) : {};
    return { page, post, location: post.location, params };
  }
}

/* POST /token (or /revoke) with form parameters; basic: [id, secret]. */
export async function tokenRequest(srv, params, { basic, path = '/token', headers = {} } = {}) {
  const h = { 'content-type': 'application/x-www-form-urlencoded', ...headers };
  if (basic) h.authorization = 'Basic ' + Buffer.from(`${encodeURIComponent(basic[0])}:${encodeURIComponent(basic[1])}`).toString('base64');
  const r = await fetch(`${srv.url}${path}`, { method: 'POST', headers: h, body: new URLSearchParams(params) });
  const text = await r.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: r.status, headers: r.headers, json, text };
}

/* Client authentication parameters for a registered client (its method). */
export function clientAuth(client) {
  if (client.token_endpoint_auth_method === 'client_secret_basic') return { basic: [client.client_id, client.client_secret], params: {} };
  if (client.token_endpoint_auth_method === 'client_secret_post') return { params: { client_id: client.client_id, client_secret: client.client_secret } };
  return { params: { client_id: client.client_id } };
}

/*
 * The whole flow over raw HTTP for a registered client: authorize, sign
 * in, exchange the code. Returns {code, tokens, redirect, verifier}.
 */
export async function rawFlow(srv, client, { redirectUri = client.redirect_uris[0], key = srv.key } = {}) {
  const { verifier, challenge } = pkce();
  const state = 'st-' + randomBytes(6).toString('hex');
  const s = await signIn(srv, authorizeUrl(srv, { clientId: client.client_id, redirectUri, challenge, state }), { key });
  if (!s.params.code) throw new Error(`sign-in gave no code: HTTP ${s.post.status} ${s.location ?? s.post.text}`);
  if (s.params.state !== state) throw new Error('state not echoed');
  const { basic, params } = clientAuth(client);
  const t = await tokenRequest(
    srv,
    { grant_type: 'authorization_code', code: s.params.code, code_verifier: verifier, redirect_uri: redirectUri, resource: srv.mcpUrl, ...params },
    { basic },
  );
  if (t.status !== 200) throw new Error(`token: HTTP ${t.status}: ${t.text}`);
  return { code: s.params.code, tokens: t.json, redirect: s, verifier };
}

/*
 * An OAuthClientProvider for the SDK that keeps everything in memory and
 * "opens the browser" by signing in headlessly.
 */
export class TestProvider {
  constructor(srv, { redirectUrl = 'http://127.0.0.1:53682/callback', clientName = 'e2e SDK client', key } = {}) {
    this.srv = srv;
    this._redirectUrl = redirectUrl;
    this.clientName = clientName;
    this.key = key ?? srv.key;
    this.info = undefined;
    this.tokenSet = undefined;
    this.verifier = undefined;
    this.code = undefined;
    this.savedTokens = [];
    this.authorizations = [];
  }
  get redirectUrl() {
    return this._redirectUrl;
  }
  get clientMetadata() {
    return {
      client_name: this.clientName,
      redirect_uris: [this._redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info) {
    this.info = info;
  }
  tokens() {
    return this.tokenSet;
  }
  saveTokens(t) {
    this.tokenSet = t;
    this.savedTokens.push(t);
  }
  saveCodeVerifier(v) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
  async redirectToAuthorization(url) {
    this.authorizations.push(url);
    const s = await signIn(this.srv, url, { key: this.key });
    if (!s.params.code) throw new Error(`headless sign-in failed: HTTP ${s.post.status} ${s.location ?? s.post.text.slice(0, 300)}`);
    this.code = s.params.code;
    this.redirect = s;
  }
}

/*
 * Connect the SDK client with OAuth: the first connect meets 401, discovers,
 * registers, "redirects" (signs in), and throws UnauthorizedError; then
 * finishAuth(code) exchanges the code and a new transport connects.
 */
/* Claude's registration: a client with a secret (client_secret_post), redirecting to claude.ai. */
export class ClaudeProvider extends TestProvider {
  constructor(srv) {
    super(srv, { redirectUrl: CLAUDE_REGISTRATION.redirect_uris[0], clientName: CLAUDE_REGISTRATION.client_name });
  }
  get clientMetadata() {
    return { ...CLAUDE_REGISTRATION };
  }
}

export async function connectOAuth(srv, provider = new TestProvider(srv), { name = 'e2e-oauth' } = {}) {
  const url = new URL(srv.mcpUrl);
  let transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
  let client = new Client({ name, version: '1.0.0' });
  try {
    await client.connect(transport);
  } catch (e) {
    if (!(e instanceof UnauthorizedError)) throw e;
    await transport.finishAuth(provider.code);
    await client.close().catch(() => {});
    transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
    client = new Client({ name, version: '1.0.0' });
    await client.connect(transport);
  }
  return { client, transport, provider };
}
