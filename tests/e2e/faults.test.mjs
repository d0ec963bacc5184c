// Faults under the public surface: a SQLite write lock held past the busy
// timeout (a clear error, nothing stored lost, the next request works), and
// the state folder turned read-only under the running programs (clear
// errors, no crash, everything back once it is writable again).

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startServer, sleep, waitFor } from './lib/server.mjs';
import { http, initializeBody } from './lib/client.mjs';
import {
  authorizeUrl, cookiesOf, get, pkce, postSignIn, rawFlow, register, requestIdOf,
} from './lib/oauth.mjs';

const execFileP = promisify(execFile);

async function sql(srv, query) {
  const { stdout } = await execFileP('sqlite3', ['-cmd', '.timeout 20000', srv.settings.SANDBOX_DB, query]);
  return stdout.trim();
}

/* Hold SQLite's write lock (BEGIN IMMEDIATE) until release() is called. */
async function holdWriteLock(db) {
  const p = spawn('sqlite3', [db], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  p.stdout.on('data', (d) => (out += d));
  p.stdin.write('BEGIN IMMEDIATE;\nSELECT \'locked\';\n');
  await waitFor(() => out.includes('locked'), { timeout: 10000, what: 'the write lock' });
  return {
    release: () => new Promise((resolve) => {
      p.on('exit', resolve);
      p.stdin.end('ROLLBACK;\n.quit\n');
    }),
  };
}

const CLIENT = { redirect_uris: ['http://127.0.0.1:40000/cb'], token_endpoint_auth_method: 'none', client_name: 'faults' };

describe('a SQLite write lock held past the busy timeout', () => {
  let srv;
  before(async () => {
    srv = await startServer({ name: 'fault-lock' });
  });
  after(async () => {
    await srv?.stop();
  });

  it('sign-in and registration get a clear error, nothing stored is lost, the next request works', async () => {
    const client = (await register(srv, CLIENT)).json;
    const earlier = await rawFlow(srv, client);
    const { challenge } = pkce();
    const page = await get(authorizeUrl(srv, { clientId: client.client_id, redirectUri: client.redirect_uris[0], challenge }));
    const form = { request: requestIdOf(page.text), cookie: cookiesOf(page.headers) };
    const lock = await holdWriteLock(srv.settings.SANDBOX_DB);
    let busy;
    let reg;
    try {
      busy = await postSignIn(srv, { ...form, key: srv.key });
      reg = await register(srv, CLIENT);
      // Reading still works meanwhile (WAL).
      assert.equal((await fetch(`${srv.url}/.well-known/oauth-authorization-server`)).status, 200);
    } finally {
      await lock.release();
    }
    assert.equal(busy.status, 503);
    assert.equal(busy.location, null);
    assert.match(busy.text, /busy[^]*nothing was changed/);
    assert.equal(reg.status, 503, reg.text);
    assert.match(reg.text, /busy/i);
    // Nothing stored was lost: the page still works, the earlier grant is there.
    const ok = await postSignIn(srv, { ...form, key: srv.key });
    assert.equal(ok.status, 303, ok.text);
    assert.ok(new URL(ok.location).searchParams.get('code'));
    const r = await http(srv, { body: initializeBody(), headers: { authorization: `Bearer ${earlier.tokens.access_token}` } });
    assert.equal(r.status, 200, r.text);
    assert.equal(await sql(srv, `select count(*) from oauth_client where client_id = '${client.client_id}'`), '1');
    assert.equal((await register(srv, CLIENT)).status, 201);
    assert.equal(srv.sanitizerReports(), '');
  });
});

describe('the state folder read-only', () => {
  let srv;
  let state;
  let mounted = false;
  before(async () => {
    const dir = join('/tmp', `cs-e2e-state-${process.pid}-${Date.now()}`);
    state = join(dir, 'state');
    mkdirSync(state, { recursive: true });
    srv = await startServer({ name: 'fault-ro', settings: { SANDBOX_DB: join(state, 'state.db') } });
  });
  after(async () => {
    if (mounted) await execFileP('mount', ['-o', 'remount,bind,rw', state]).catch(() => {});
    if (mounted) await execFileP('umount', ['-l', state]).catch(() => {});
    await srv?.stop();
  });

  it('requests get clear errors and no program dies; once writable, everything works and nothing is lost', async (t) => {
    const client = (await register(srv, CLIENT)).json;
    const earlier = await rawFlow(srv, client);
    const pids = srv.programPids(null).sort();
    try {
      await execFileP('mount', ['--bind', state, state]);
      mounted = true;
      await execFileP('mount', ['-o', 'remount,bind,ro', state]);
    } catch (e) {
      t.skip(`cannot make a read-only bind mount here: ${e.message}`);
      return;
    }
    // Whatever each answers, it answers: success, or a clear error page.
    const answers = [];
    answers.push((await register(srv, CLIENT)).status);
    const { challenge } = pkce();
    const page = await get(authorizeUrl(srv, { clientId: client.client_id, redirectUri: client.redirect_uris[0], challenge }));
    answers.push(page.status);
    if (page.status === 200) {
      answers.push((await postSignIn(srv, { request: requestIdOf(page.text), cookie: cookiesOf(page.headers), key: srv.key })).status);
    }
    answers.push((await fetch(`${srv.url}/.well-known/oauth-authorization-server`)).status);
    for (const s of answers) assert.ok([200, 201, 303, 400, 500, 503].includes(s), `answers: ${answers}`);
    await execFileP('mount', ['-o', 'remount,bind,rw', state]);
    await sleep(200);
    // The same processes, and everything works again; nothing was lost.
    assert.deepEqual(srv.programPids(null).sort(), pids);
    const again = await rawFlow(srv, client);
    assert.ok(again.tokens.access_token);
    const r = await http(srv, { body: initializeBody(), headers: { authorization: `Bearer ${earlier.tokens.access_token}` } });
    assert.equal(r.status, 200, r.text);
    assert.equal(srv.sanitizerReports(), '');
  });
});
