// The public sign-in surface hardened: the client address through trusted
// proxies (IPv6 by /64), the throttle's check-and-count under parallel
// guesses, the redirect-host warning and refusal, errors shown (not
// redirected) for clients never approved, the sign-in audit and sandboxctl
// signins/unblock, registration and metadata-document rates, the cap on
// pending sign-ins, and the 2026-07-28 authorization server details
// (iss, issuer identity, application_type, offline_access).

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { startServer } from './lib/server.mjs';
import { ctl as sandboxctl } from './lib/hostile.mjs';
import {
  CLAUDE_REGISTRATION, authorizeUrl, cookiesOf, get, pkce, postSignIn, register, requestIdOf, signIn,
} from './lib/oauth.mjs';

const execFileP = promisify(execFile);

async function sql(srv, query) {
  const { stdout } = await execFileP('sqlite3', ['-cmd', '.timeout 5000', srv.settings.SANDBOX_DB, query]);
  return stdout.trim();
}

/* sandboxctl's output; throws unless it exits 0. */
async function ctl(srv, args) {
  const r = await sandboxctl(srv, args, { timeout: 60000 });
  assert.equal(r.code, 0, `sandboxctl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/* Open a sign-in page for client (from address xff when given): {request, cookie, page}. */
async function openPage(srv, client, { xff, redirectUri = client.redirect_uris[0], extra } = {}) {
  const { challenge } = pkce();
  const page = await get(authorizeUrl(srv, { clientId: client.client_id, redirectUri, challenge, extra }),
    xff ? { 'x-forwarded-for': xff } : {});
  return { page, request: requestIdOf(page.text), cookie: cookiesOf(page.headers) };
}

const LOOPBACK_CLIENT = {
  redirect_uris: ['http://127.0.0.1:40000/cb'], token_endpoint_auth_method: 'none', client_name: 'loopback app',
};

describe('sign-in behind a trusted proxy', () => {
  let srv;
  let client;
  before(async () => {
    srv = await startServer({
      name: 'signin-proxy',
      settings: {
        SANDBOX_TRUSTED_PROXIES: '127.0.0.1 ::1', SANDBOX_REGISTER_PER_HOUR: 3,
        SANDBOX_PENDING_SIGNINS: 10, SANDBOX_CIMD_FETCHES_PER_MINUTE: 5,
      },
    });
    client = (await register(srv, LOOPBACK_CLIENT, { headers: { 'x-forwarded-for': '198.51.100.1' } })).json;
  });
  after(async () => {
    await srv?.stop();
  });

  it('a wrong key delays its own address (an IPv6 one by /64), never another', async () => {
    const p = await openPage(srv, client);
    const wrong = await postSignIn(srv, { ...p, key: 'wrong-key-xxxxxxxxxxxx', headers: { 'x-forwarded-for': '203.0.113.5' } });
    assert.equal(wrong.status, 403);
    assert.match(wrong.text, /Wrong key/);
    // The same address, even behind a spoofed entry on the left: waits.
    const again = await postSignIn(srv, { ...p, key: srv.key, headers: { 'x-forwarded-for': '10.9.9.9, 203.0.113.5' } });
    assert.equal(again.status, 429);
    assert.ok(Number(again.headers.get('retry-after')) >= 1);
    // IPv6: the /64 is one address for the throttle.
    const w6 = await postSignIn(srv, { ...p, key: 'wrong-key-xxxxxxxxxxxx', headers: { 'x-forwarded-for': '2001:db8:1:2::1' } });
    assert.equal(w6.status, 403);
    const same64 = await postSignIn(srv, { ...p, key: srv.key, headers: { 'x-forwarded-for': '2001:db8:1:2:ffff::9' } });
    assert.equal(same64.status, 429);
    // The owner at another address is not delayed by any of it.
    const owner = await postSignIn(srv, { ...p, key: srv.key, headers: { 'x-forwarded-for': '2001:db8:1:3::1' } });
    assert.equal(owner.status, 303);
    assert.ok(new URL(owner.location).searchParams.get('code'));
  });

  it('parallel guesses from one address: one is compared, the others wait', async () => {
    const p = await openPage(srv, client);
    const headers = { 'x-forwarded-for': '192.0.2.77' };
    const t0 = Date.now();
    const all = await Promise.all(Array.from({ length: 8 }, () => postSignIn(srv, { ...p, key: 'wrong-key-yyyyyyyyyyy', headers })));
    const elapsed = Date.now() - t0;
    const statuses = all.map((r) => r.status).sort();
    // The first wrong key waits 1 s: tries that all come within it are
    // each refused but one. On a machine slow enough that they did not,
    // a second may be compared after the wait, never all.
    if (elapsed < 1000) assert.deepEqual(statuses, [403, 429, 429, 429, 429, 429, 429, 429]);
    else {
      assert.ok(statuses.filter((x) => x === 403).length <= 1 + Math.ceil(elapsed / 1000), `${statuses} in ${elapsed} ms`);
      assert.ok(statuses.filter((x) => x === 429).length >= 4, `${statuses} in ${elapsed} ms`);
      assert.ok(statuses.every((x) => x === 403 || x === 429), `${statuses}`);
    }
  });

  it('every attempt is audited; sandboxctl signins shows them and unblock lifts the wait', async () => {
    const rows = await sql(srv, "select result, addr from signin_attempt where addr = '203.0.113.5' order by id");
    assert.equal(rows, 'wrong_key|203.0.113.5\nthrottled|203.0.113.5');
    assert.equal(await sql(srv, "select count(*) from signin_attempt where result = 'ok' and addr = '2001:db8:1:3::1' and redirect_host = '127.0.0.1:40000'"), '1');
    // Seven throttled guesses at once: one row (a flood is a row a minute).
    assert.equal(await sql(srv, "select count(*) from signin_attempt where result = 'throttled' and addr = '192.0.2.77'"), '1');
    const listed = JSON.parse(await ctl(srv, ['--json', 'signins', '--limit', '50']));
    assert.ok(listed.some((r) => r.result === 'wrong_key' && r.address === '192.0.2.77' && r.client_name === 'loopback app'));
    assert.match(await ctl(srv, ['signins']), /wrong_key/);
    // Locked out by typos: the owner lifts the wait with sandboxctl.
    const p = await openPage(srv, client);
    const headers = { 'x-forwarded-for': '192.0.2.78' };
    assert.equal((await postSignIn(srv, { ...p, key: 'wrong-key-yyyyyyyyyyy', headers })).status, 403);
    assert.equal((await postSignIn(srv, { ...p, key: srv.key, headers })).status, 429);
    assert.match(await ctl(srv, ['unblock', '192.0.2.78']), /wait lifted/);
    assert.equal((await postSignIn(srv, { ...p, key: srv.key, headers })).status, 303);
    assert.match(await ctl(srv, ['unblock']), /lifted \d+ wait/);
  });

  it('a flood of sign-in pages from other addresses does not flush a person\'s page (security review item 8)', async () => {
    const mine = await openPage(srv, client, { xff: '198.51.100.50' });
    // 25 pages from one address (its own cap, 20, then the overall one,
    // 10, evict its own), then two each from four more.
    for (let i = 0; i < 25; i++) await openPage(srv, client, { xff: '203.0.113.77' });
    for (const n of [81, 82, 83, 84]) for (let i = 0; i < 2; i++) await openPage(srv, client, { xff: `203.0.113.${n}` });
    assert.equal(await sql(srv, 'select count(*) from oauth_request'), '10');
    const ok = await postSignIn(srv, { ...mine, key: srv.key, headers: { 'x-forwarded-for': '198.51.100.50' } });
    assert.equal(ok.status, 303);
    assert.ok(new URL(ok.location).searchParams.get('code'));
  });

  it('metadata document misses count per address, not against every first-time client (security review item 8)', async () => {
    const { challenge } = pkce();
    const u = (id) => authorizeUrl(srv, { clientId: id, redirectUri: 'http://127.0.0.1:40000/cb', challenge });
    // More misses than the whole budget (5), from different addresses:
    // none is a fetch made, so none spends the budget of another.
    for (let i = 0; i < 7; i++) {
      const r = await get(u(`https://localhost/miss-${i}.json`), { 'x-forwarded-for': `192.0.2.${10 + i}` });
      assert.equal(r.status, 400);
      assert.match(r.text, /could not be fetched|public address|resolve/, `miss ${i}`);
    }
    // One address past its own share (a fifth of the budget) is refused.
    const again = await get(u('https://localhost/miss-again.json'), { 'x-forwarded-for': '192.0.2.10' });
    assert.equal(again.status, 400);
    assert.match(again.text, /Too many client metadata documents were looked up from this address/);
  });

  it('registrations per address and hour are capped; other addresses still register', async () => {
    const h = { 'x-forwarded-for': '198.51.100.1' };
    // One was made in before(): two more fit, the fourth is refused.
    assert.equal((await register(srv, LOOPBACK_CLIENT, { headers: h })).status, 201);
    assert.equal((await register(srv, LOOPBACK_CLIENT, { headers: h })).status, 201);
    const over = await register(srv, LOOPBACK_CLIENT, { headers: h });
    assert.equal(over.status, 429);
    assert.ok(over.headers.get('retry-after'));
    assert.equal((await register(srv, LOOPBACK_CLIENT, { headers: { 'x-forwarded-for': '198.51.100.2' } })).status, 201);
  });
});

describe('sign-in without trusted proxies: forwarding headers are ignored', () => {
  let srv;
  before(async () => {
    srv = await startServer({ name: 'signin-direct', settings: { SANDBOX_PENDING_SIGNINS: 10, SANDBOX_CIMD_FETCHES_PER_MINUTE: 5 } });
  });
  after(async () => {
    await srv?.stop();
  });

  it('X-Forwarded-For from an untrusted peer does not change the address', async () => {
    const client = (await register(srv, LOOPBACK_CLIENT)).json;
    const p = await openPage(srv, client);
    assert.equal((await postSignIn(srv, { ...p, key: 'wrong-key-zzzzzzzzzzz', headers: { 'x-forwarded-for': '203.0.113.9' } })).status, 403);
    assert.equal(await sql(srv, "select addr from signin_attempt order by id desc limit 1"), '127.0.0.1');
    // The wrong key counted against the peer, not the address it claimed
    // (read from the throttle table: a timed retry would race the 1 s wait).
    assert.equal(await sql(srv, "select group_concat(addr) from oauth_throttle where failures > 0"), '127.0.0.1');
    await ctl(srv, ['unblock', '127.0.0.1']);
  });

  it('pending sign-ins are capped: the oldest pages stop working', async () => {
    const client = (await register(srv, LOOPBACK_CLIENT)).json;
    const first = await openPage(srv, client);
    for (let i = 0; i < 11; i++) await openPage(srv, client);
    assert.equal(await sql(srv, 'select count(*) from oauth_request'), '10');
    const late = await postSignIn(srv, { ...first, key: srv.key });
    assert.equal(late.status, 400);
    assert.match(late.text, /expired/);
  });

  it('unknown redirect hosts are named in a warning; Claude and loopback are not', async () => {
    const other = (await register(srv, { ...CLAUDE_REGISTRATION, client_name: 'Claude', redirect_uris: ['https://claude.evil.example/api/mcp/auth_callback'] })).json;
    const warned = await openPage(srv, other);
    assert.equal(warned.page.status, 200);
    assert.match(warned.page.text, /id="unknown-host"[^]*claude\.evil\.example/);
    assert.ok(warned.page.text.indexOf('unknown-host') < warned.page.text.indexOf('name="key"'), 'the warning comes before the key field');
    const claude = (await register(srv, CLAUDE_REGISTRATION)).json;
    assert.doesNotMatch((await openPage(srv, claude)).page.text, /unknown-host/);
    const loop = (await register(srv, LOOPBACK_CLIENT)).json;
    assert.doesNotMatch((await openPage(srv, loop)).page.text, /unknown-host/);
  });

  it('errors of a client never approved are shown on a page; cancel too', async () => {
    const client = (await register(srv, LOOPBACK_CLIENT)).json;
    const bad = await openPage(srv, client, { extra: { code_challenge_method: 'plain' } });
    assert.equal(bad.page.status, 400);
    assert.equal(bad.page.headers.get('location'), null);
    assert.match(bad.page.text, /invalid_request/);
    const p = await openPage(srv, client);
    const cancel = await postSignIn(srv, { ...p, action: 'deny' });
    assert.equal(cancel.status, 200);
    assert.equal(cancel.location, null);
    assert.match(cancel.text, /cancelled/);
    assert.equal(await sql(srv, `select approved is null from oauth_client where client_id = '${client.client_id}'`), '1');
  });

  it('2026-07-28: iss on every redirect, byte-identical to the issuer and authorization_servers', async () => {
    const as = await (await fetch(`${srv.url}/.well-known/oauth-authorization-server`)).json();
    const pr = await (await fetch(`${srv.url}/.well-known/oauth-protected-resource/mcp`)).json();
    assert.equal(as.issuer, pr.authorization_servers[0]);
    assert.equal(as.authorization_response_iss_parameter_supported, true);
    assert.equal(as.client_id_metadata_document_supported, true);
    assert.ok(as.scopes_supported.includes('offline_access'));
    const client = (await register(srv, LOOPBACK_CLIENT)).json;
    const { challenge } = pkce();
    const ok = await signIn(srv, authorizeUrl(srv, { clientId: client.client_id, redirectUri: client.redirect_uris[0], challenge }));
    assert.equal(ok.params.iss, as.issuer);
    // Approved now: an error goes back to it, with iss too.
    const err = await get(authorizeUrl(srv, { clientId: client.client_id, redirectUri: client.redirect_uris[0], challenge, extra: { response_type: 'token' } }));
    assert.equal(err.status, 303);
    const loc = new URL(err.headers.get('location'));
    assert.equal(loc.searchParams.get('error'), 'unsupported_response_type');
    assert.equal(loc.searchParams.get('iss'), as.issuer);
    // Cancel of an approved client goes back with access_denied and iss.
    const p = await openPage(srv, client);
    const deny = await postSignIn(srv, { ...p, action: 'deny' });
    assert.equal(deny.status, 303);
    assert.equal(new URL(deny.location).searchParams.get('iss'), as.issuer);
  });

  it('approval is per client and redirect URI, cleared when its redirect_uris change (security review item 9)', async () => {
    const a = 'http://127.0.0.1:40000/cb';
    const b = 'http://127.0.0.1:40001/elsewhere';
    const client = (await register(srv, { ...LOOPBACK_CLIENT, redirect_uris: [a, b] })).json;
    const { challenge } = pkce();
    const ok = await signIn(srv, authorizeUrl(srv, { clientId: client.client_id, redirectUri: a, challenge }));
    assert.ok(ok.params.code);
    const bad = (uri) => get(authorizeUrl(srv, { clientId: client.client_id, redirectUri: uri, challenge, extra: { response_type: 'token' } }));
    // Signed in through a: errors go back to a.
    assert.equal((await bad(a)).status, 303);
    // Never through b: its errors are shown on a page, not redirected.
    const viaB = await bad(b);
    assert.equal(viaB.status, 400);
    assert.equal(viaB.headers.get('location'), null);
    const p = await openPage(srv, client, { redirectUri: b });
    const cancel = await postSignIn(srv, { ...p, action: 'deny' });
    assert.equal(cancel.status, 200);
    assert.equal(cancel.location, null);
    // The client's redirect_uris change (as a metadata document fetched
    // again would): no URI keeps its approval.
    await sql(srv, `update oauth_client set redirect_uris = '["${a}","http://127.0.0.1:40002/new"]' where client_id = '${client.client_id}'`);
    const after = await bad(a);
    assert.equal(after.status, 400);
    assert.equal(after.headers.get('location'), null);
  });

  it('2026-07-28: application_type is accepted, stored and echoed; other values refused', async () => {
    for (const t of ['native', 'web']) {
      const r = await register(srv, { ...LOOPBACK_CLIENT, application_type: t });
      assert.equal(r.status, 201);
      assert.equal(r.json.application_type, t);
      assert.equal(await sql(srv, `select json_extract(metadata, '$.application_type') from oauth_client where client_id = '${r.json.client_id}'`), t);
    }
    for (const t of ['desktop', 7]) {
      const r = await register(srv, { ...LOOPBACK_CLIENT, application_type: t });
      assert.equal(r.status, 400);
      assert.equal(r.json.error, 'invalid_client_metadata');
    }
  });

  it('metadata document fetches are rate limited per host', async () => {
    // localhost resolves on this machine and is refused as not public; the
    // second fetch of the same host within the minute is not even tried.
    const { challenge } = pkce();
    const u = (id) => authorizeUrl(srv, { clientId: id, redirectUri: 'http://127.0.0.1:40000/cb', challenge });
    const first = await get(u('https://localhost/client-1.json'));
    assert.equal(first.status, 400);
    assert.match(first.text, /public address|resolve/);
    const second = await get(u('https://localhost/client-2.json'));
    assert.equal(second.status, 400);
    assert.match(second.text, /Too many client metadata documents/);
  });
});

describe('sign-in with SANDBOX_REDIRECT_UNKNOWN=refuse', () => {
  let srv;
  before(async () => {
    srv = await startServer({ name: 'signin-refuse', settings: { SANDBOX_REDIRECT_UNKNOWN: 'refuse' } });
  });
  after(async () => {
    await srv?.stop();
  });

  it('an unknown redirect host is refused on a page and nothing is stored', async () => {
    const other = (await register(srv, { ...CLAUDE_REGISTRATION, redirect_uris: ['https://evil.example/cb'] })).json;
    const r = await openPage(srv, other);
    assert.equal(r.page.status, 403);
    assert.equal(r.page.headers.get('location'), null);
    assert.match(r.page.text, /evil\.example/);
    assert.equal(await sql(srv, 'select count(*) from oauth_request'), '0');
    const claude = (await register(srv, CLAUDE_REGISTRATION)).json;
    assert.equal((await openPage(srv, claude)).page.status, 200);
  });
});
