// The OAuth 2.1 authorization server (issue 3) end to end through lighttpd:
// the MCP SDK client doing discovery, registration, sign-in, token exchange,
// a tool call and a refresh; claude.ai's registration and the whole flow over
// raw HTTP; restarts; every refusal, each checked to issue nothing; and a
// Client ID Metadata Document fetched from an allowed internal origin.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { startServer, sleep } from './lib/server.mjs';
import { makeCerts } from './lib/engine.mjs';
import { ctl as sandboxctl } from './lib/hostile.mjs';
import { call, http, initializeBody, openSession } from './lib/client.mjs';
import {
  CLAUDE_REGISTRATION, TestProvider, authorizeUrl, clientAuth, connectOAuth, cookiesOf, get, pkce,
  postSignIn, rawFlow, register, requestIdOf, signIn, tokenRequest,
} from './lib/oauth.mjs';

const execFileP = promisify(execFile);

/* Run SQL on the test server's database with the sqlite3 shell (as an operator would). */
async function sql(srv, query) {
  const { stdout } = await execFileP('sqlite3', ['-cmd', '.timeout 5000', srv.settings.SANDBOX_DB, query]);
  return stdout.trim();
}

/* How many codes, grants and tokens exist: "issues nothing" is no change. */
async function issued(srv) {
  const [codes, grants, tokens] = (await sql(srv,
    'select (select count(*) from oauth_code), (select count(*) from oauth_grant), (select count(*) from oauth_token)')).split('|').map(Number);
  return { codes, grants, tokens };
}

/* /mcp initialize with a bearer token: the HTTP status. */
async function mcpStatus(srv, token) {
  const r = await http(srv, { body: initializeBody(), headers: { authorization: `Bearer ${token}` } });
  return r;
}

describe('OAuth: the MCP SDK client', () => {
  let srv;
  before(async () => {
    srv = await startServer({ name: 'oauth-sdk' });
  });
  after(async () => {
    await srv?.stop();
  });

  it('metadata: RFC 9728 at both paths, RFC 8414 with the issuer as the public origin', async () => {
    for (const p of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
      const r = await fetch(srv.url + p);
      assert.equal(r.status, 200, p);
      const m = await r.json();
      assert.equal(m.resource, srv.mcpUrl);
      assert.deepEqual(m.authorization_servers, [srv.url]);
      assert.deepEqual(m.bearer_methods_supported, ['header']);
      assert.ok(Array.isArray(m.scopes_supported));
    }
    for (const p of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
      const r = await fetch(srv.url + p);
      assert.equal(r.status, 200, p);
      const m = await r.json();
      assert.equal(m.issuer, srv.url);
      assert.equal(m.authorization_endpoint, `${srv.url}/authorize`);
      assert.equal(m.token_endpoint, `${srv.url}/token`);
      assert.equal(m.registration_endpoint, `${srv.url}/register`);
      assert.equal(m.revocation_endpoint, `${srv.url}/revoke`);
      assert.deepEqual(m.code_challenge_methods_supported, ['S256']);
      assert.deepEqual(m.response_types_supported, ['code']);
      assert.deepEqual(m.grant_types_supported, ['authorization_code', 'refresh_token']);
      assert.deepEqual([...m.token_endpoint_auth_methods_supported].sort(), ['client_secret_basic', 'client_secret_post', 'none']);
      assert.equal(m.client_id_metadata_document_supported, true);
      assert.equal(m.authorization_response_iss_parameter_supported, true);
    }
    assert.equal((await fetch(`${srv.url}/.well-known/nothing-here`)).status, 404);
    const r = await http(srv, { body: initializeBody(), headers: { authorization: null } });
    assert.equal(r.status, 401);
    assert.equal(r.headers.get('www-authenticate'), `Bearer resource_metadata="${srv.url}/.well-known/oauth-protected-resource/mcp"`);
  });

  let sdk;
  it('discovery, registration, sign-in, token exchange and a tool call', async () => {
    sdk = await connectOAuth(srv);
    const p = sdk.provider;
    assert.equal(p.authorizations.length, 1, 'one sign-in');
    assert.ok(p.info.client_id.startsWith('csc_'));
    assert.equal(p.info.client_secret, undefined, 'a public client gets no secret');
    assert.match(p.tokenSet.access_token, /^csat_/);
    assert.match(p.tokenSet.refresh_token, /^csrt_/);
    assert.equal(p.tokenSet.expires_in, 3600);
    const auth = new URL(p.authorizations[0]);
    assert.equal(auth.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(auth.searchParams.get('resource'), srv.mcpUrl);
    assert.equal(p.redirect.params.iss, srv.url, 'RFC 9207 iss');
    const res = await sdk.client.callTool({ name: 'execute', arguments: { command: 'echo signed-in' } }, undefined, { timeout: 120000 });
    assert.equal(res.structuredContent.stdout, 'signed-in\n');
    // Nothing but hashes in the database.
    const dump = await sql(srv, 'select token_hash from oauth_token');
    assert.ok(!dump.includes(p.tokenSet.access_token) && !dump.includes(p.tokenSet.refresh_token.slice(5)));
    assert.match(dump.split('\n')[0], /^[0-9a-f]{64}$/);
  });

  it('the SDK refreshes when its access token is refused, and the refresh token rotates', async () => {
    const p = sdk.provider;
    const old = { ...p.tokenSet };
    p.tokenSet = { ...old, access_token: 'csat_not-a-valid-token' };
    const res = await sdk.client.listTools();
    assert.ok(res.tools.length > 0);
    assert.notEqual(p.tokenSet.access_token, old.access_token);
    assert.notEqual(p.tokenSet.refresh_token, old.refresh_token, 'rotated');
    assert.equal(p.authorizations.length, 1, 'no new sign-in');
    const r = await sdk.client.callTool({ name: 'execute', arguments: { command: 'echo refreshed' } }, undefined, { timeout: 120000 });
    assert.equal(r.structuredContent.stdout, 'refreshed\n');
  });

  it('restarting the programs keeps the sign-in: tokens still work, refresh too', async () => {
    const p = sdk.provider;
    await sdk.client.close();
    await srv.restart();
    const again = await connectOAuth(srv, p);
    assert.equal(p.authorizations.length, 1, 'no new sign-in after the restart');
    const r = await again.client.callTool({ name: 'execute', arguments: { command: 'echo after-restart' } }, undefined, { timeout: 120000 });
    assert.equal(r.structuredContent.stdout, 'after-restart\n');
    const { params } = clientAuth(p.info);
    const t = await tokenRequest(srv, { grant_type: 'refresh_token', refresh_token: p.tokenSet.refresh_token, ...params });
    assert.equal(t.status, 200, t.text);
    await again.client.close();
  });

  it('operator views answer who is signed in', async () => {
    const clients = await sql(srv, 'select name, auth_method, grants from oauth_clients');
    assert.match(clients, /e2e SDK client\|none\|1/);
    const live = await sql(srv, 'select client_name from oauth_live_grants');
    assert.match(live, /e2e SDK client/);
    const toks = await sql(srv, "select kind, state from oauth_tokens where state = 'live'");
    assert.match(toks, /access\|live/);
    assert.match(toks, /refresh\|live/);
  });
});

describe('OAuth: claude.ai over raw HTTP', () => {
  let srv;
  let claude;
  before(async () => {
    srv = await startServer({ name: 'oauth-claude' });
  });
  after(async () => {
    await srv?.stop();
  });

  it('registration exactly as claude.ai sends it: 201, every field echoed, a secret', async () => {
    const r = await register(srv, CLAUDE_REGISTRATION);
    assert.equal(r.status, 201, r.text);
    claude = r.json;
    for (const [k, v] of Object.entries(CLAUDE_REGISTRATION)) assert.deepEqual(claude[k], v, k);
    assert.match(claude.client_id, /^csc_/);
    assert.match(claude.client_secret, /^cscs_/);
    assert.equal(claude.client_secret_expires_at, 0);
    assert.ok(Math.abs(claude.client_id_issued_at - Date.now() / 1000) < 60);
    assert.equal(r.headers.get('cache-control'), 'no-store');
  });

  let tokens;
  it('the whole flow: sign-in page, redirect with code, state and iss, token, /mcp', async () => {
    const { verifier, challenge } = pkce();
    const url = authorizeUrl(srv, { clientId: claude.client_id, redirectUri: claude.redirect_uris[0], challenge, state: 'claude-state-1' });
    const page = await get(url);
    assert.equal(page.status, 200);
    assert.match(page.text, /Claude/);
    assert.match(page.text, /claude\.ai/);
    assert.match(page.text, /type="password"/);
    assert.match(page.headers.get('content-security-policy'), /default-src 'none'/);
    assert.match(page.headers.get('content-security-policy'), /frame-ancestors 'none'/);
    assert.match(page.headers.get('content-security-policy'), /form-action 'self' https:\/\/claude\.ai/);
    assert.equal(page.headers.get('x-frame-options'), 'DENY');
    assert.equal(page.headers.get('referrer-policy'), 'no-referrer');
    assert.equal(page.headers.get('cache-control'), 'no-store');
    const post = await postSignIn(srv, { request: requestIdOf(page.text), cookie: cookiesOf(page.headers), key: srv.key });
    assert.equal(post.status, 303, post.text);
    const loc = new URL(post.location);
    assert.equal(`${loc.origin}${loc.pathname}`, 'https://claude.ai/api/mcp/auth_callback');
    assert.equal(loc.searchParams.get('state'), 'claude-state-1');
    assert.equal(loc.searchParams.get('iss'), srv.url);
    const code = loc.searchParams.get('code');
    assert.ok(code && code.length >= 43);
    const t = await tokenRequest(srv, {
      grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: claude.redirect_uris[0],
      resource: srv.mcpUrl, client_id: claude.client_id, client_secret: claude.client_secret,
    });
    assert.equal(t.status, 200, t.text);
    assert.equal(t.headers.get('cache-control'), 'no-store');
    assert.equal(t.json.token_type, 'Bearer');
    assert.equal(t.json.expires_in, 3600);
    assert.ok(t.json.refresh_token);
    tokens = t.json;
    const m = await mcpStatus(srv, tokens.access_token);
    assert.equal(m.status, 200, m.text);
  });

  it('refresh with client_secret_post rotates; the new access token works', async () => {
    const t = await tokenRequest(srv, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: claude.client_id, client_secret: claude.client_secret });
    assert.equal(t.status, 200, t.text);
    assert.notEqual(t.json.refresh_token, tokens.refresh_token);
    assert.equal((await mcpStatus(srv, t.json.access_token)).status, 200);
    tokens = t.json;
  });

  it('revocation (RFC 7009): a refresh token takes its grant with it', async () => {
    const r = await tokenRequest(srv, { token: tokens.refresh_token, client_id: claude.client_id, client_secret: claude.client_secret }, { path: '/revoke' });
    assert.equal(r.status, 200);
    assert.equal((await mcpStatus(srv, tokens.access_token)).status, 401);
    const t = await tokenRequest(srv, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: claude.client_id, client_secret: claude.client_secret });
    assert.equal(t.status, 400);
    assert.equal(t.json.error, 'invalid_grant');
    const unknown = await tokenRequest(srv, { token: 'csat_unknown', client_id: claude.client_id, client_secret: claude.client_secret }, { path: '/revoke' });
    assert.equal(unknown.status, 200, 'unknown tokens are answered 200 too');
  });

  it('revoking an access token ends that token only', async () => {
    const { tokens: t } = await rawFlow(srv, claude);
    const r = await tokenRequest(srv, { token: t.access_token, client_id: claude.client_id, client_secret: claude.client_secret }, { path: '/revoke' });
    assert.equal(r.status, 200);
    assert.equal((await mcpStatus(srv, t.access_token)).status, 401);
    const again = await tokenRequest(srv, { grant_type: 'refresh_token', refresh_token: t.refresh_token, client_id: claude.client_id, client_secret: claude.client_secret });
    assert.equal(again.status, 200, again.text);
  });

  it('every revocation path ends the token on the next request of an open session: /revoke, sandboxctl, a row deleted with sqlite3', async () => {
    // Nothing about a token is kept between requests: each request sees
    // what was committed before it, by any process.
    const ctl = async (args) => {
      const r = await sandboxctl(srv, args);
      assert.equal(r.code, 0, `sandboxctl ${args.join(' ')}: ${r.stderr}`);
      return r;
    };
    const ways = {
      '/revoke': (t) => tokenRequest(srv, { token: t.access_token, client_id: claude.client_id, client_secret: claude.client_secret }, { path: '/revoke' }),
      'sandboxctl tokens revoke': async () => ctl(['tokens', 'revoke', await sql(srv, 'select max(id) from oauth_grant')]),
      'sqlite3 DELETE': (t) => sql(srv, `delete from oauth_token where kind = 'access' and grant_id = (select max(id) from oauth_grant)`).then(() => t),
    };
    for (const [how, revoke] of Object.entries(ways)) {
      const { tokens: t } = await rawFlow(srv, claude);
      const me = { ...srv, key: t.access_token };
      const sess = await openSession(me);
      for (let i = 0; i < 3; i++) assert.equal((await call(me, sess, 'tools/list')).status, 200, how);
      if (how === '/revoke') {
        // last_used, written after the lookups when a minute has passed.
        const old = Math.floor(Date.now() / 1000) - 120;
        await sql(srv, `update oauth_grant set last_used = ${old} where id = (select max(id) from oauth_grant); update session set last_used = ${old}`);
        assert.equal((await call(me, sess, 'tools/list')).status, 200);
        const [g, n] = (await sql(srv, `select (select last_used from oauth_grant where id = (select max(id) from oauth_grant)), (select count(*) from session where last_used = ${old})`)).split('|').map(Number);
        assert.ok(g > old, `the grant's last_used was written (${g})`);
        assert.ok(n < Number(await sql(srv, 'select count(*) from session')), "this session's last_used was written");
      }
      await revoke(t);
      const r = await call(me, sess, 'tools/list');
      assert.equal(r.status, 401, `${how}: ${r.text}`);
      assert.match(r.headers.get('www-authenticate') ?? '', /invalid_token/);
    }
  });

  it('client_secret_basic clients, and Claude Code style loopback clients on any port', async () => {
    const basic = (await register(srv, { redirect_uris: ['https://app.example.com/cb'], client_name: 'basic app' })).json;
    assert.equal(basic.token_endpoint_auth_method, 'client_secret_basic', 'RFC 7591 default');
    const { tokens: t } = await rawFlow(srv, basic);
    assert.equal((await mcpStatus(srv, t.access_token)).status, 200);
    assert.equal(t.refresh_token, undefined, 'no refresh_token grant registered, no refresh token');

    const cc = (await register(srv, { redirect_uris: ['http://localhost:33418/callback'], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], client_name: 'Claude Code' })).json;
    const { tokens: t2, redirect } = await rawFlow(srv, cc, { redirectUri: 'http://localhost:51234/callback' });
    assert.ok(redirect.location.startsWith('http://localhost:51234/callback?'));
    assert.equal((await mcpStatus(srv, t2.access_token)).status, 200);
  });
});

describe('OAuth: refusals issue nothing', () => {
  let srv;
  let pub;	// a public client
  let conf;	// a confidential client (client_secret_post)
  before(async () => {
    srv = await startServer({ name: 'oauth-refuse' });
    pub = (await register(srv, { redirect_uris: ['http://127.0.0.1:40000/cb'], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], client_name: 'pub' })).json;
    conf = (await register(srv, CLAUDE_REGISTRATION)).json;
  });
  after(async () => {
    await srv?.stop();
  });

  it('registration: bad redirect URIs and metadata are refused with RFC 7591 errors', async () => {
    const before = await sql(srv, 'select count(*) from oauth_client');
    const cases = [
      [{ redirect_uris: ['javascript:alert(1)'] }, 'invalid_redirect_uri'],
      [{ redirect_uris: ['data:text/html,x'] }, 'invalid_redirect_uri'],
      [{ redirect_uris: ['http://evil.example/cb'] }, 'invalid_redirect_uri'],
      [{ redirect_uris: ['https://claude.ai/cb#frag'] }, 'invalid_redirect_uri'],
      [{ redirect_uris: ['https://a@claude.ai/cb'] }, 'invalid_redirect_uri'],
      [{ redirect_uris: [] }, 'invalid_redirect_uri'],
      [{}, 'invalid_redirect_uri'],
      [{ redirect_uris: Array.from({ length: 9 }, (_, i) => `https://a.example/${i}`) }, 'invalid_redirect_uri'],
      [{ redirect_uris: ['https://a.example/' + 'x'.repeat(1100)] }, 'invalid_redirect_uri'],
      [{ redirect_uris: ['https://a.example/cb'], token_endpoint_auth_method: 'private_key_jwt' }, 'invalid_client_metadata'],
      [{ redirect_uris: ['https://a.example/cb'], grant_types: ['client_credentials'] }, 'invalid_client_metadata'],
      [{ redirect_uris: ['https://a.example/cb'], response_types: ['token'] }, 'invalid_client_metadata'],
      [{ redirect_uris: ['https://a.example/cb'], client_name: 'x'.repeat(300) }, 'invalid_client_metadata'],
      ['{"redirect_uris": [', 'invalid_client_metadata'],
    ];
    for (const [body, error] of cases) {
      const r = await register(srv, body);
      assert.equal(r.status, 400, `${JSON.stringify(body).slice(0, 80)}: ${r.text}`);
      assert.equal(r.json.error, error, JSON.stringify(body).slice(0, 80));
      assert.ok(r.json.error_description);
    }
    const big = await register(srv, { redirect_uris: ['https://a.example/cb'], pad: 'x'.repeat(20000) });
    assert.equal(big.status, 413);
    assert.equal(await sql(srv, 'select count(*) from oauth_client'), before, 'nothing registered');
  });

  it('authorize: unknown client and unregistered redirect URI are shown, never redirected', async () => {
    const n0 = await issued(srv);
    const { challenge } = pkce();
    const cases = [
      authorizeUrl(srv, { clientId: 'csc_unknown', redirectUri: 'https://claude.ai/api/mcp/auth_callback', challenge }),
      authorizeUrl(srv, { clientId: conf.client_id, redirectUri: 'https://evil.example/cb', challenge }),
      authorizeUrl(srv, { clientId: conf.client_id, redirectUri: 'https://claude.ai/api/mcp/auth_callback/x', challenge }),
      authorizeUrl(srv, { clientId: pub.client_id, redirectUri: 'http://127.0.0.1:40000/other', challenge }),
      authorizeUrl(srv, { clientId: conf.client_id, redirectUri: 'https://claude.ai/api/mcp/auth_callback', challenge, extra: { client_id: undefined } }),
      // A CIMD client_id on a loopback address is never fetched.
      authorizeUrl(srv, { clientId: `https://127.0.0.1:${srv.port}/client.json`, redirectUri: 'https://claude.ai/cb', challenge }),
    ];
    cases[4].searchParams.delete('client_id');
    for (const u of cases) {
      const r = await get(u);
      assert.equal(r.status, 400, u.toString());
      assert.equal(r.headers.get('location'), null);
      assert.match(r.headers.get('content-type'), /text\/html/);
      assert.match(r.headers.get('content-security-policy'), /default-src 'none'/);
    }
    // Repeated parameters (RFC 6749 §3.1) are refused on the page too.
    const dup = await get(`${srv.url}/authorize?client_id=${conf.client_id}&client_id=x`);
    assert.equal(dup.status, 400);
    assert.deepEqual(await issued(srv), n0);
  });

  it('authorize: missing or plain PKCE, wrong response_type and resource: a page until approved, then go back as errors', async () => {
    const { challenge } = pkce();
    const base = { clientId: pub.client_id, redirectUri: 'http://127.0.0.1:40000/cb', challenge, state: 's1' };
    // Never approved (RFC 9700 §4.11.2): the error is shown, not redirected.
    const shown = await get(authorizeUrl(srv, { ...base, extra: { response_type: 'token' } }));
    assert.equal(shown.status, 400);
    assert.equal(shown.headers.get('location'), null);
    assert.match(shown.text, /unsupported_response_type/);
    // The owner approves it once; from then on errors go back to it.
    const first = await signIn(srv, authorizeUrl(srv, base));
    assert.ok(first.params.code, 'signed in');
    const n0 = await issued(srv);
    const cases = [
      [{ code_challenge: undefined, code_challenge_method: undefined }, 'invalid_request'],
      [{ code_challenge_method: 'plain' }, 'invalid_request'],
      [{ code_challenge_method: undefined }, 'invalid_request'],
      [{ code_challenge: 'too-short' }, 'invalid_request'],
      [{ response_type: 'token' }, 'unsupported_response_type'],
      [{ resource: 'https://other.example/mcp' }, 'invalid_target'],
      [{ resource: `${srv.url}/mcp/` }, 'invalid_target'],
    ];
    for (const [extra, error] of cases) {
      const r = await get(authorizeUrl(srv, { ...base, extra }));
      assert.equal(r.status, 303, JSON.stringify(extra));
      const loc = new URL(r.headers.get('location'));
      assert.equal(loc.searchParams.get('error'), error, JSON.stringify(extra));
      assert.equal(loc.searchParams.get('state'), 's1');
      assert.equal(loc.searchParams.get('iss'), srv.url);
      assert.equal(loc.searchParams.get('code'), null);
    }
    // Unknown scopes are ignored, not refused.
    const ok = await get(authorizeUrl(srv, { ...base, extra: { scope: 'claudeai offline_access whatever' } }));
    assert.equal(ok.status, 200);
    assert.deepEqual(await issued(srv), n0);
  });

  it('sign-in: a wrong key issues nothing and is throttled with growing delays', async () => {
    const n0 = await issued(srv);
    const { challenge } = pkce();
    const page = await get(authorizeUrl(srv, { clientId: pub.client_id, redirectUri: 'http://127.0.0.1:40000/cb', challenge }));
    const form = { request: requestIdOf(page.text), cookie: cookiesOf(page.headers) };
    const wrong = await postSignIn(srv, { ...form, key: 'not-the-key' });
    assert.equal(wrong.status, 403);
    assert.equal(wrong.location, null);
    assert.match(wrong.text, /Wrong key/);
    // At once again: throttled, even with the right key.
    const fast = await postSignIn(srv, { ...form, key: srv.key });
    assert.equal(fast.status, 429);
    assert.equal(fast.location, null);
    assert.ok(Number(fast.headers.get('retry-after')) >= 1);
    await sleep(1100);
    const wrong2 = await postSignIn(srv, { ...form, key: srv.key + 'x' });
    assert.equal(wrong2.status, 403);
    const fast2 = await postSignIn(srv, { ...form, key: srv.key });
    assert.equal(fast2.status, 429);
    assert.equal(Number(fast2.headers.get('retry-after')), 2, 'the delay doubles');
    assert.deepEqual(await issued(srv), n0);
    await sleep(2100);
    const good = await postSignIn(srv, { ...form, key: srv.key });
    assert.equal(good.status, 303, 'the right key after the wait');
    assert.ok(new URL(good.location).searchParams.get('code'));
    // The page was used: posting it again is refused.
    const replay = await postSignIn(srv, { ...form, key: srv.key });
    assert.equal(replay.status, 400);
    assert.equal(replay.location, null);
  });

  it('sign-in: the form is bound to its page (cookie, request id, same-origin)', async () => {
    const { challenge } = pkce();
    const page = await get(authorizeUrl(srv, { clientId: pub.client_id, redirectUri: 'http://127.0.0.1:40000/cb', challenge }));
    const request = requestIdOf(page.text);
    const cookie = cookiesOf(page.headers);
    assert.match(page.headers.get('set-cookie'), /HttpOnly/);
    assert.match(page.headers.get('set-cookie'), /SameSite=Strict/);
    const n0 = await issued(srv);
    for (const [what, args] of [
      ['no cookie', { request, key: srv.key }],
      ['another page\'s cookie', { request, cookie: cookie.replace(/=.*/, '=forged'), key: srv.key }],
      ['unknown request', { request: 'forged', cookie, key: srv.key }],
      ['cross-site', { request, cookie, key: srv.key, headers: { 'sec-fetch-site': 'cross-site' } }],
      ['foreign Origin', { request, cookie, key: srv.key, headers: { origin: 'https://evil.example' } }],
    ]) {
      const r = await postSignIn(srv, args);
      assert.ok(r.status === 403 || r.status === 400, `${what}: ${r.status}`);
      assert.equal(r.location, null, what);
    }
    assert.deepEqual(await issued(srv), n0);
    // Cancel goes back with access_denied.
    const deny = await postSignIn(srv, { request, cookie, action: 'deny' });
    assert.equal(deny.status, 303);
    assert.equal(new URL(deny.location).searchParams.get('error'), 'access_denied');
    assert.deepEqual(await issued(srv), n0);
  });

  /* A fresh code for a client, with its verifier. */
  async function code(client, redirectUri = client.redirect_uris[0]) {
    const { verifier, challenge } = pkce();
    const s = await signIn(srv, authorizeUrl(srv, { clientId: client.client_id, redirectUri, challenge }));
    assert.ok(s.params.code, `no code: ${s.post.status} ${s.post.text.slice(0, 200)}`);
    return { code: s.params.code, verifier, redirectUri };
  }

  it('token: wrong verifier, another client\'s code, wrong redirect, wrong resource, expired code', async () => {
    const c = await code(pub);
    const n0 = await issued(srv);
    const base = { grant_type: 'authorization_code', code: c.code, redirect_uri: c.redirectUri, client_id: pub.client_id };
    const cases = [
      [{ code_verifier: pkce().verifier }, 'invalid_grant'],
      [{ code_verifier: c.code }, 'invalid_grant'],
      [{ code_verifier: c.verifier, redirect_uri: 'http://127.0.0.1:40000/other' }, 'invalid_grant'],
      [{ code_verifier: c.verifier, resource: 'https://other.example/mcp' }, 'invalid_target'],
      [{ code_verifier: c.verifier, code: 'garbage' }, 'invalid_grant'],
      [{ code_verifier: undefined }, 'invalid_request'],
    ];
    for (const [extra, error] of cases) {
      const p = { ...base, ...extra };
      for (const k of Object.keys(p)) if (p[k] === undefined) delete p[k];
      const t = await tokenRequest(srv, p);
      assert.equal(t.status, 400, JSON.stringify(extra));
      assert.equal(t.json.error, error, JSON.stringify(extra));
      assert.equal(t.json.access_token, undefined);
    }
    // Another client presenting the code (with the right verifier).
    const other = await tokenRequest(srv, { ...base, code_verifier: c.verifier, client_id: conf.client_id, client_secret: conf.client_secret });
    assert.equal(other.status, 400);
    assert.equal(other.json.error, 'invalid_grant');
    assert.deepEqual(await issued(srv), n0, 'nothing issued');
    // An expired code.
    const c2 = await code(pub);
    await sql(srv, 'update oauth_code set expires = 0 where used = 0');
    const late = await tokenRequest(srv, { ...base, code: c2.code, code_verifier: c2.verifier });
    assert.equal(late.status, 400);
    assert.equal(late.json.error, 'invalid_grant');
  });

  it('token: a reused code fails and revokes what it issued', async () => {
    const c = await code(pub);
    const p = { grant_type: 'authorization_code', code: c.code, code_verifier: c.verifier, redirect_uri: c.redirectUri, client_id: pub.client_id };
    const first = await tokenRequest(srv, p);
    assert.equal(first.status, 200, first.text);
    assert.equal((await mcpStatus(srv, first.json.access_token)).status, 200);
    const n0 = await issued(srv);
    const second = await tokenRequest(srv, p);
    assert.equal(second.status, 400);
    assert.equal(second.json.error, 'invalid_grant');
    assert.equal(second.json.access_token, undefined);
    assert.ok((await issued(srv)).tokens < n0.tokens, 'the first tokens are gone');
    assert.equal((await mcpStatus(srv, first.json.access_token)).status, 401);
    const r = await tokenRequest(srv, { grant_type: 'refresh_token', refresh_token: first.json.refresh_token, client_id: pub.client_id });
    assert.equal(r.json.error, 'invalid_grant');
  });

  it('token: a used code shown by another client, or without its verifier, revokes nothing', async () => {
    const c = await code(pub);
    const p = { grant_type: 'authorization_code', code: c.code, code_verifier: c.verifier, redirect_uri: c.redirectUri, client_id: pub.client_id };
    const first = await tokenRequest(srv, p);
    assert.equal(first.status, 200, first.text);
    const other = (await register(srv, { redirect_uris: ['http://127.0.0.1:40000/cb'], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], client_name: 'other' })).json;
    for (const q of [{ ...p, client_id: other.client_id }, { ...p, code_verifier: 'z'.repeat(43) }]) {
      const t = await tokenRequest(srv, q);
      assert.equal(t.status, 400, t.text);
      assert.equal(t.json.error, 'invalid_grant');
    }
    assert.equal((await mcpStatus(srv, first.json.access_token)).status, 200, 'the tokens issued stand');
  });

  it('token: client authentication per registered method, 401 invalid_client', async () => {
    const c = await code(conf);
    const n0 = await issued(srv);
    const base = { grant_type: 'authorization_code', code: c.code, code_verifier: c.verifier, redirect_uri: c.redirectUri };
    const cases = [
      [{ ...base, client_id: conf.client_id, client_secret: 'cscs_wrong' }, {}],
      [{ ...base, client_id: conf.client_id }, {}],
      [{ ...base }, { basic: [conf.client_id, conf.client_secret] }],	// registered post, tried basic
      [{ ...base, client_id: 'csc_unknown', client_secret: conf.client_secret }, {}],
      [{ ...base }, { basic: [conf.client_id, 'wrong'] }],
    ];
    for (const [params, opts] of cases) {
      const t = await tokenRequest(srv, params, opts);
      assert.equal(t.status, 401, JSON.stringify(params).slice(0, 120));
      assert.equal(t.json.error, 'invalid_client');
      if (opts.basic) assert.match(t.headers.get('www-authenticate') ?? '', /^Basic /);
    }
    const missing = await tokenRequest(srv, { ...base });
    assert.equal(missing.status, 400);
    assert.equal(missing.json.error, 'invalid_request');
    assert.deepEqual(await issued(srv), n0, 'nothing issued');
    const ok = await tokenRequest(srv, { ...base, client_id: conf.client_id, client_secret: conf.client_secret });
    assert.equal(ok.status, 200, 'the code was not burnt by failed client authentication');
    const bad = await tokenRequest(srv, { grant_type: 'password', client_id: pub.client_id });
    assert.equal(bad.json.error, 'unsupported_grant_type');
    const json = await tokenRequest(srv, {}, { headers: { 'content-type': 'application/json' } });
    assert.equal(json.status, 400);
  });

  it('/mcp: garbage, expired and other-audience tokens get 401 invalid_token', async () => {
    const c = await code(pub);
    const t = (await tokenRequest(srv, { grant_type: 'authorization_code', code: c.code, code_verifier: c.verifier, redirect_uri: c.redirectUri, client_id: pub.client_id })).json;
    assert.equal((await mcpStatus(srv, t.access_token)).status, 200);
    for (const bad of ['garbage', 'csat_' + 'A'.repeat(43), t.refresh_token, t.access_token + 'x', 'x'.repeat(5000)]) {
      const r = await mcpStatus(srv, bad);
      assert.equal(r.status, 401);
      assert.match(r.headers.get('www-authenticate'), /error="invalid_token"/);
      assert.match(r.headers.get('www-authenticate'), /resource_metadata="/);
    }
    const hash = (await sql(srv, "select token_hash from oauth_token where kind = 'access' order by created desc, rowid desc limit 1"));
    await sql(srv, `update oauth_grant set resource = 'https://other.example/mcp' where id = (select grant_id from oauth_token where token_hash = '${hash}')`);
    assert.equal((await mcpStatus(srv, t.access_token)).status, 401, 'a token for another resource');
    const rr = await tokenRequest(srv, { grant_type: 'refresh_token', refresh_token: t.refresh_token, client_id: pub.client_id });
    assert.equal(rr.status, 400);
    await sql(srv, `update oauth_grant set resource = '${srv.mcpUrl}' where id = (select grant_id from oauth_token where token_hash = '${hash}')`);
    assert.equal((await mcpStatus(srv, t.access_token)).status, 200);
    await sql(srv, `update oauth_token set expires = ${Math.floor(Date.now() / 1000) - 1} where token_hash = '${hash}'`);
    const exp = await mcpStatus(srv, t.access_token);
    assert.equal(exp.status, 401, 'an expired token');
    assert.match(exp.headers.get('www-authenticate'), /error="invalid_token"/);
  });

  it('refresh reuse: once within the grace replaces the lost pair; again revokes the grant', async () => {
    const { tokens: t0 } = await rawFlow(srv, pub);
    const refresh = (rt) => tokenRequest(srv, { grant_type: 'refresh_token', refresh_token: rt, client_id: pub.client_id });
    const t1 = (await refresh(t0.refresh_token)).json;
    assert.ok(t1.access_token);
    // The client lost t1 and presents t0 again at once: one replacement.
    const t2 = await refresh(t0.refresh_token);
    assert.equal(t2.status, 200, t2.text);
    assert.equal((await mcpStatus(srv, t1.access_token)).status, 401, 'the lost pair is revoked');
    assert.equal((await refresh(t1.refresh_token)).json.error, 'invalid_grant');
    // That was t1 reused: it revoked the grant; t2 dies with it.
    assert.equal((await mcpStatus(srv, t2.json.access_token)).status, 401);

    // A second grant: after the grace, an old token revokes everything.
    const { tokens: u0 } = await rawFlow(srv, pub);
    const u1 = (await refresh(u0.refresh_token)).json;
    assert.equal((await mcpStatus(srv, u1.access_token)).status, 200);
    const n0 = await issued(srv);
    await sql(srv, 'update oauth_token set rotated = rotated - 3600 where rotated is not null');
    const late = await refresh(u0.refresh_token);
    assert.equal(late.status, 400);
    assert.equal(late.json.error, 'invalid_grant');
    assert.ok((await issued(srv)).tokens < n0.tokens);
    assert.equal((await mcpStatus(srv, u1.access_token)).status, 401);
    assert.equal((await refresh(u1.refresh_token)).json.error, 'invalid_grant');

    // A third: once the new token was used, the old one gets no grace.
    const { tokens: v0 } = await rawFlow(srv, pub);
    const v1 = (await refresh(v0.refresh_token)).json;
    const v2 = (await refresh(v1.refresh_token)).json;
    assert.ok(v2.access_token);
    assert.equal((await refresh(v0.refresh_token)).json.error, 'invalid_grant');
    assert.equal((await mcpStatus(srv, v2.access_token)).status, 401);
  });
});

describe('OAuth: the API key as a bearer token is off by default', () => {
  let srv;
  before(async () => {
    srv = await startServer({ name: 'oauth-nokey', settings: { SANDBOX_ALLOW_KEY_BEARER: null } });
  });
  after(async () => {
    await srv?.stop();
  });

  it('Authorization: Bearer <SANDBOX_API_KEY> is refused with invalid_token', async () => {
    const r = await mcpStatus(srv, srv.key);
    assert.equal(r.status, 401);
    assert.match(r.headers.get('www-authenticate'), /error="invalid_token"/);
  });

  it('an OAuth token works on the same server', async () => {
    const sdk = await connectOAuth(srv, new TestProvider(srv));
    const tools = await sdk.client.listTools();
    assert.ok(tools.tools.some((t) => t.name === 'execute'));
    await sdk.client.close();
  });
});

// A Client ID Metadata Document on an internal host: a local HTTPS origin
// (127.0.0.1, its certificate from a CA the test makes with openssl) that
// the operator allows with SANDBOX_CIMD_ALLOW_ADDRS and SANDBOX_CIMD_CA. The
// SDK client takes the document's URL as its client_id (the server says it
// supports them), signs in and calls a tool. Loopback addresses not named
// stay refused, and so does a certificate from another CA.
describe('OAuth: a Client ID Metadata Document signs in end to end', () => {
  let srv, origin, other, dir;
  const redirectUrl = 'http://127.0.0.1:53683/callback';
  const docs = new Map();
  const serve = (certs) => createHttpsServer(certs, (req, res) => {
    const doc = docs.get(req.url);
    res.writeHead(doc ? 200 : 404, { 'content-type': 'application/json' });
    res.end(doc ? JSON.stringify(doc) : '{}');
  });
  const listen = (s) => new Promise((res) => s.listen(0, '127.0.0.1', () => res(s.address().port)));

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cs-e2e-cimd-'));
    makeCerts(join(dir, 'ca'));
    makeCerts(join(dir, 'other'));
    // The programs may run as another user: the CA file is readable by all.
    chmodSync(dir, 0o755);
    chmodSync(join(dir, 'ca'), 0o755);
    chmodSync(join(dir, 'ca/ca.pem'), 0o644);
    const certs = (d) => ({ cert: readFileSync(join(dir, d, 'server-cert.pem')), key: readFileSync(join(dir, d, 'server-key.pem')) });
    origin = serve(certs('ca'));
    other = serve(certs('other'));
    origin.port = await listen(origin);
    other.port = await listen(other);
    srv = await startServer({
      name: 'oauth-cimd',
      settings: { SANDBOX_CIMD_ALLOW_ADDRS: '127.0.0.1', SANDBOX_CIMD_CA: join(dir, 'ca/ca.pem') },
    });
  });
  after(async () => {
    await srv?.stop();
    origin?.close();
    other?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const doc = (url, extra = {}) => ({
    client_id: url, client_name: 'internal registry client', redirect_uris: [redirectUrl],
    grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none', ...extra,
  });

  it('the SDK client signs in with the document URL as client_id and calls a tool', async () => {
    const url = `https://127.0.0.1:${origin.port}/clients/sdk.json`;
    docs.set('/clients/sdk.json', doc(url));
    const provider = new TestProvider(srv, { redirectUrl, clientName: 'internal registry client' });
    provider.clientMetadataUrl = url;
    const sdk = await connectOAuth(srv, provider);
    try {
      assert.equal(provider.info.client_id, url, 'no registration: the URL is the client_id');
      assert.ok(provider.tokenSet?.access_token, 'tokens issued');
      const r = await sdk.client.callTool({ name: 'execute', arguments: { command: 'echo cimd-ok' } });
      assert.equal(r.structuredContent?.stdout, 'cimd-ok\n', JSON.stringify(r).slice(0, 500));
    } finally {
      await sdk.client.close();
    }
    // Fetched from the origin and stored as a metadata-document client.
    assert.equal(await sql(srv, `select cimd || ' ' || auth_method from oauth_client where client_id = '${url}'`), '1 none');
    assert.equal(await sql(srv, "select count(*) from oauth_client where cimd = 0"), '0', 'nothing registered');
  });

  it('the raw flow: code, token and /mcp with the document client', async () => {
    const url = `https://127.0.0.1:${origin.port}/clients/raw.json`;
    docs.set('/clients/raw.json', doc(url, { client_name: 'raw' }));
    const { tokens } = await rawFlow(srv, { client_id: url, redirect_uris: [redirectUrl], token_endpoint_auth_method: 'none' });
    assert.equal((await mcpStatus(srv, tokens.access_token)).status, 200);
  });

  it('still refused: a loopback address not named, a certificate from another CA, a document naming another client_id', async () => {
    const { challenge } = pkce();
    const n0 = await issued(srv);
    const page = async (clientId) => {
      const r = await get(authorizeUrl(srv, { clientId, redirectUri: redirectUrl, challenge }));
      assert.equal(r.status, 400, `${clientId}: ${r.text.slice(0, 300)}`);
      assert.equal(r.headers.get('location'), null);
      return r.text;
    };
    docs.set('/clients/x.json', doc('https://example.com/x.json'));
    // 127.0.0.2 is loopback too, but not in SANDBOX_CIMD_ALLOW_ADDRS.
    assert.match(await page(`https://127.0.0.2:${origin.port}/clients/sdk.json`), /not on a public address/);
    // The page says only that the fetch failed (no relay for scanning
    // hosts); the operator's log names the certificate.
    const bad = await page(`https://127.0.0.1:${other.port}/clients/other.json`);
    assert.match(bad, /could not be fetched\./);
    assert.doesNotMatch(bad, /certificate|SSL|TLS/i);
    assert.match(srv.programsOutput(), new RegExp(`cimd: fetching from 127\\.0\\.0\\.1 \\(127\\.0\\.0\\.1\\) failed: .*(certificate|SSL)`, 'i'));
    assert.match(await page(`https://127.0.0.1:${origin.port}/clients/x.json`), /client_id/);
    assert.deepEqual(await issued(srv), n0);
  });
});
