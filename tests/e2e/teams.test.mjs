// Teams on one server: personal keys (sandboxctl keys), owners and a
// sandbox per person (SANDBOX_SCOPE=person), each person signing in through
// the real OAuth flow with the official SDK client.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { startServer, docker, waitFor, sleep } from './lib/server.mjs';
import { ctl as sandboxctl } from './lib/hostile.mjs';
import { resultText } from './lib/client.mjs';
import { TestProvider, connectOAuth, signIn, authorizeUrl, pkce, register, CLAUDE_REGISTRATION } from './lib/oauth.mjs';


/* sandboxctl (sanitizer build) with the test's settings; env overrides. */
const ctl = (srv, args, env = {}) => sandboxctl(srv, args, { env });

async function addKey(srv, name) {
  const r = await ctl(srv, ['--json', 'keys', 'add', name]);
  assert.equal(r.code, 0, r.stderr);
  const o = JSON.parse(r.stdout);
  assert.equal(o.owner, name);
  assert.match(o.key, /^cspk_[A-Za-z0-9_-]{43}$/);
  return o.key;
}

/* A person: their key, signed in through OAuth with the SDK. */
async function person(srv, name) {
  const key = await addKey(srv, name);
  const provider = new TestProvider(srv, { key, clientName: 'team client' });
  const sdk = await connectOAuth(srv, provider, { name: `e2e-${name}` });
  const run = async (command, timeout = 120) =>
    sdk.client.callTool({ name: 'execute', arguments: { command, timeout } }, undefined, { timeout: 180000 });
  const sh = async (command) => {
    const r = await run(command);
    assert.notEqual(r.isError, true, `${name}: ${command}: ${resultText(r)}`);
    return r.structuredContent;
  };
  const getResult = (args = {}) =>
    sdk.client.callTool({ name: 'get_result', arguments: args }, undefined, { timeout: 60000 });
  return { name, key, provider, ...sdk, run, sh, getResult };
}

const hash12 = (owner) => createHash('sha256').update(owner).digest('hex').slice(0, 12);

async function running(container) {
  const r = await docker('inspect', '-f', '{{.State.Running}}', container);
  return r.code === 0 ? r.stdout.trim() : 'absent';
}

describe('SANDBOX_SCOPE=person', () => {
  let srv;
  const people = {};
  const names = ['alice', 'bob', 'carol'];

  before(async () => {
    srv = await startServer({
      name: 'teams',
      settings: { SANDBOX_SCOPE: 'person', SANDBOX_MAX_SANDBOXES: 2, SANDBOX_ALLOW_KEY_BEARER: 0 },
    });
    for (const n of ['alice', 'bob']) people[n] = await person(srv, n);
  });

  after(async () => {
    for (const p of Object.values(people)) await p.client.close().catch(() => {});
    if (!srv) return;
    try {
      await srv.stop();
    } finally {
      for (const n of names) {
        await docker('rm', '-f', `${srv.container}-${hash12(n)}`).catch(() => {});
        await docker('volume', 'rm', '-f', `${srv.volume}-${hash12(n)}`).catch(() => {});
      }
    }
  });

  it('says whose key signed in only after sign-in', async () => {
    assert.match(people.alice.client.getInstructions(), /signed in as "alice" \(a personal key\)/);
    assert.match(people.bob.client.getInstructions(), /signed in as "bob"/);
    const html = people.alice.provider.redirect.page.text;
    assert.doesNotMatch(html, /alice/);
  });

  it('each person has their own container and volume: files are not shared', async () => {
    const a = await people.alice.sh('echo from-alice > /sandbox/mine.txt && hostname');
    const b = await people.bob.sh('cat /sandbox/mine.txt 2>&1 || echo absent; echo from-bob > /sandbox/bob.txt');
    assert.match(b.stdout, /absent/);
    assert.equal((await people.alice.sh('cat /sandbox/mine.txt; ls /sandbox')).stdout, 'from-alice\nmine.txt\n');
    assert.equal(await running(`${srv.container}-${hash12('alice')}`), 'true');
    assert.equal(await running(`${srv.container}-${hash12('bob')}`), 'true');
    assert.equal(await running(srv.container), 'absent', 'no shared container in person scope');
    assert.ok(a.stdout.trim().length > 0);
  });

  it('get_result lists and returns only the caller\'s runs', async () => {
    const a = await people.alice.sh('echo only-alice-sees-this');
    const listA = resultText(await people.alice.getResult());
    const listB = resultText(await people.bob.getResult());
    assert.match(listA, /only-alice-sees-this/);
    assert.doesNotMatch(listB, /only-alice-sees-this/);
    assert.match(listB, /from-bob/);
    const other = await people.bob.getResult({ run_id: a.run_id });
    assert.equal(other.isError, true);
    assert.match(resultText(other), /No run/);
    const own = await people.alice.getResult({ run_id: a.run_id });
    assert.match(resultText(own), /only-alice-sees-this/);
  });

  it('a session belongs to its owner: another owner\'s token cannot use it', async () => {
    const post = (token, session) => fetch(srv.mcpUrl, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${token}`, 'Mcp-Session-Id': session, 'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' }),
    });
    const session = people.alice.transport.sessionId;
    assert.ok(session);
    assert.equal((await post(people.alice.provider.tokens().access_token, session)).status, 200);
    assert.equal((await post(people.bob.provider.tokens().access_token, session)).status, 404);
    // Nor end it.
    const del = await fetch(srv.mcpUrl, {
      method: 'DELETE',
      headers: { Authorization: `Bearer ${people.bob.provider.tokens().access_token}`, 'Mcp-Session-Id': session },
    });
    assert.equal(del.status, 404);
    assert.equal((await post(people.alice.provider.tokens().access_token, session)).status, 200);
  });

  it('a shared link serves the file from its owner\'s sandbox', async () => {
    const r = await people.alice.client.callTool({ name: 'share_file', arguments: { path: 'mine.txt' } });
    assert.notEqual(r.isError, true, resultText(r));
    const res = await fetch(r.structuredContent.url);
    assert.equal(res.status, 200);
    assert.equal(await res.text(), 'from-alice\n');
    const miss = await people.bob.client.callTool({ name: 'share_file', arguments: { path: 'mine.txt' } });
    assert.equal(miss.isError, true, 'bob has no mine.txt');
  });

  it('an idle sandbox is stopped, and comes back with its files and an installed package', async () => {
    // A package built and installed in alice's container (no network).
    await people.alice.sh(
      'set -e; d=$(mktemp -d); mkdir -p $d/DEBIAN $d/usr/local/bin; ' +
        'printf "Package: cs-team-probe\\nVersion: 1.0\\nArchitecture: all\\nMaintainer: t <t@localhost>\\nDescription: probe\\n" > $d/DEBIAN/control; ' +
        'printf "#!/bin/sh\\necho probe-ok\\n" > $d/usr/local/bin/cs-team-probe; chmod 755 $d/usr/local/bin/cs-team-probe; ' +
        'dpkg-deb --build $d /tmp/probe.deb >/dev/null && dpkg -i /tmp/probe.deb >/dev/null',
    );
    // Idle: used more than SANDBOX_IDLE_STOP (1 s here) ago, nothing running.
    await sleep(2100);
    const r = await ctl(srv, ['sandboxes', 'stop-idle'], { SANDBOX_IDLE_STOP: '1' });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /2 idle sandboxes stopped/);
    assert.equal(await running(`${srv.container}-${hash12('alice')}`), 'false');
    assert.equal(await running(`${srv.container}-${hash12('bob')}`), 'false');
    const list = JSON.parse((await ctl(srv, ['--json', 'sandboxes', 'list'])).stdout);
    assert.deepEqual(list.map((s) => [s.owner, s.running, s.stop_reason]).sort(),
      [['alice', false, 'idle'], ['bob', false, 'idle']]);
    const back = await people.alice.sh('cat /sandbox/mine.txt && cs-team-probe && dpkg -s cs-team-probe | grep -c installed');
    assert.equal(back.stdout, 'from-alice\nprobe-ok\n1\n');
    assert.equal(await running(`${srv.container}-${hash12('alice')}`), 'true');
  });

  it('at the cap the least recently used idle sandbox is stopped; all busy is refused', async () => {
    // alice runs; bob is stopped. carol makes two running: the cap.
    people.carol = await person(srv, 'carol');
    await people.carol.sh('true');
    assert.equal(await running(`${srv.container}-${hash12('carol')}`), 'true');
    // bob starts: alice (least recently used, idle) is stopped for him.
    await people.bob.sh('true');
    assert.equal(await running(`${srv.container}-${hash12('alice')}`), 'false');
    assert.equal(await running(`${srv.container}-${hash12('bob')}`), 'true');
    assert.equal(await running(`${srv.container}-${hash12('carol')}`), 'true');
    // bob and carol busy: alice is refused with a clear error.
    const busy = [people.bob.run('sleep 6', 30), people.carol.run('sleep 6', 30)];
    await waitFor(async () => {
      const l = JSON.parse((await ctl(srv, ['--json', 'sandboxes', 'list'])).stdout);
      return l.filter((s) => s.commands > 0).length === 2;
    }, { what: 'two running commands' });
    const refused = await people.alice.run('true');
    assert.equal(refused.isError, true);
    assert.match(resultText(refused), /SANDBOX_MAX_SANDBOXES=2/);
    for (const r of await Promise.all(busy)) assert.equal(r.structuredContent.exit_code, 0);
  });

  it('the FILE_TTL clean-up sweeps every running sandbox', async () => {
    // bob and carol run (alice was stopped at the cap).
    for (const n of ['bob', 'carol']) {
      const c = `${srv.container}-${hash12(n)}`;
      const r = await docker('exec', c, 'bash', '-c', `mkdir -p /sandbox/old-${n} /sandbox/new-${n} && touch -d '2000-01-01' /sandbox/old-${n}`);
      assert.equal(r.code, 0, r.stderr);
    }
    const r = await ctl(srv, ['--json', 'cleanup']);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.state, 'ok', r.stdout);
    assert.equal(out.removed, 2, r.stdout);
    for (const n of ['bob', 'carol']) {
      const ls = await docker('exec', `${srv.container}-${hash12(n)}`, 'ls', '/sandbox');
      assert.doesNotMatch(ls.stdout, /old-/);
      assert.match(ls.stdout, new RegExp(`new-${n}`));
    }
  });

  it('the operator sees every person in sandboxctl', async () => {
    const audit = JSON.parse((await ctl(srv, ['--json', 'audit', '--limit', '100'])).stdout);
    const owners = new Set(audit.map((r) => r.owner));
    for (const n of ['alice', 'bob', 'carol']) assert.ok(owners.has(n), `audit has ${n}'s runs`);
    const st = JSON.parse((await ctl(srv, ['--json', 'status'])).stdout);
    assert.deepEqual(st.sandboxes.map((s) => s.owner).sort(), ['alice', 'bob', 'carol']);
    for (const s of st.sandboxes) assert.match(s.container, new RegExp(`^${srv.container}-[0-9a-f]{12}$`));
    const keys = JSON.parse((await ctl(srv, ['--json', 'keys', 'list'])).stdout);
    assert.deepEqual(keys.map((k) => [k.owner, k.state]), [['alice', 'valid'], ['bob', 'valid'], ['carol', 'valid']]);
  });

  it('revoking a key ends its tokens at once and stops its sandbox', async () => {
    const token = people.carol.provider.tokens().access_token;
    const ok = await fetch(srv.mcpUrl, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
    });
    assert.equal(ok.status, 200);
    const r = await ctl(srv, ['keys', 'revoke', 'carol']);
    assert.equal(r.code, 0, r.stderr);
    const gone = await fetch(srv.mcpUrl, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
    });
    assert.equal(gone.status, 401);
    assert.equal(await running(`${srv.container}-${hash12('carol')}`), 'false');
    // Its volume stays until the operator removes it explicitly.
    assert.equal((await docker('volume', 'inspect', `${srv.volume}-${hash12('carol')}`)).code, 0);
    const rm = await ctl(srv, ['sandboxes', 'remove', 'carol']);
    assert.equal(rm.code, 0, rm.stderr);
    assert.notEqual((await docker('volume', 'inspect', `${srv.volume}-${hash12('carol')}`)).code, 0);
    assert.equal(await running(`${srv.container}-${hash12('carol')}`), 'absent');
    // The revoked key no longer signs in.
    const { challenge } = pkce();
    const client = (await register(srv, CLAUDE_REGISTRATION)).json;
    const s = await signIn(srv, authorizeUrl(srv, { clientId: client.client_id, redirectUri: client.redirect_uris[0], challenge }), { key: people.carol.key });
    assert.equal(s.post.status, 403);
    delete people.carol;
  });
});

describe('SANDBOX_SCOPE=shared (the default)', () => {
  let srv;
  const people = {};

  before(async () => {
    srv = await startServer({ name: 'teams-shared' });
    for (const n of ['dora', 'ed']) people[n] = await person(srv, n);
  });

  after(async () => {
    for (const p of Object.values(people)) await p.client.close().catch(() => {});
    if (srv) await srv.stop();
  });

  it('everyone shares the one sandbox, but runs stay their owner\'s', async () => {
    const d = await people.dora.sh('echo shared > /sandbox/common.txt && echo dora-run');
    assert.equal((await people.ed.sh('cat /sandbox/common.txt')).stdout, 'shared\n');
    assert.equal(await running(srv.container), 'true');
    assert.doesNotMatch(resultText(await people.ed.getResult()), /dora-run/);
    assert.equal((await people.ed.getResult({ run_id: d.run_id })).isError, true);
    // The operator's key is owner "operator" and does not see theirs either.
    const st = JSON.parse((await ctl(srv, ['--json', 'status'])).stdout);
    assert.equal(st.sandboxes.length, 1);
    assert.equal(st.sandboxes[0].container, srv.container);
  });

  it('shared scope: key holders have no confidentiality from each other, and keys add says so (security review item 4)', async () => {
    // One person's model, root in the shared container, sees another's
    // command line (tokens included) while it runs.
    const slow = people.dora.run('sleep 20; true # dora-secret-token-123');
    await waitFor(async () => /dora-secret-token-123/.test((await people.ed.sh('cat /proc/[0-9]*/cmdline 2>/dev/null | tr "\\0" " "')).stdout),
      { timeout: 15000, what: "another person's command line" });
    // And can end it: the run's whole process group (its own session).
    await people.ed.sh('for f in $(grep -l "dora-secret-token-[1]23" /proc/[0-9]*/cmdline 2>/dev/null); do p=${f#/proc/}; ' +
      'kill -- -$(cut -d" " -f5 /proc/${p%/cmdline}/stat) 2>/dev/null; done; true');
    await slow;
    const r = await ctl(srv, ['--json', 'keys', 'add', 'frank']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).owner, 'frank');
    assert.match(r.stderr, /SANDBOX_SCOPE is shared[^]*SANDBOX_SCOPE=person/);
  });
});

describe('SANDBOX_IDLE_STOP on the next call', () => {
  let srv;
  const people = {};

  before(async () => {
    srv = await startServer({ name: 'teams-idle', settings: { SANDBOX_SCOPE: 'person', SANDBOX_IDLE_STOP: 1 } });
    for (const n of ['fay', 'gus']) people[n] = await person(srv, n);
  });

  after(async () => {
    for (const p of Object.values(people)) await p.client.close().catch(() => {});
    if (!srv) return;
    try {
      await srv.stop();
    } finally {
      for (const n of ['fay', 'gus']) {
        await docker('rm', '-f', `${srv.container}-${hash12(n)}`);
        await docker('volume', 'rm', '-f', `${srv.volume}-${hash12(n)}`);
      }
    }
  });

  it('a running command holds its sandbox; once idle, another person\'s call stops it', async () => {
    const fay = `${srv.container}-${hash12('fay')}`;
    await people.fay.sh('echo kept > /sandbox/f.txt');
    const long = people.fay.run('sleep 5', 30);
    await waitFor(async () => {
      const l = JSON.parse((await ctl(srv, ['--json', 'sandboxes', 'list'])).stdout);
      return l.find((s) => s.owner === 'fay')?.commands === 1;
    }, { what: "fay's command running" });
    await sleep(2100);
    await people.gus.sh('true');
    assert.equal(await running(fay), 'true', 'not idle while a command runs');
    assert.equal((await long).structuredContent.exit_code, 0);
    await sleep(2100);
    await people.gus.sh('true');
    assert.equal(await running(fay), 'false', 'idle: stopped by the next call');
    assert.equal((await people.fay.sh('cat /sandbox/f.txt')).stdout, 'kept\n');
  });
});
