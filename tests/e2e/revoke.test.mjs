// Security review item 3: revoking a personal key reaches its download and
// upload links (revoked with the key, and refused by the checks while the
// owner has no valid key), so nothing of a revoked person serves or starts
// again, in both scopes; and a link opened by anyone starts a stopped
// sandbox only through the claim that counts it against
// SANDBOX_MAX_SANDBOXES and idle-stops it later.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startServer, docker, sleep } from './lib/server.mjs';
import { ctl as sandboxctl } from './lib/hostile.mjs';
import { resultText } from './lib/client.mjs';
import { TestProvider, connectOAuth } from './lib/oauth.mjs';

const execFileP = promisify(execFile);

/* sandboxctl (sanitizer build) with the test's settings; env overrides. */
const ctl = (srv, args, env = {}) => sandboxctl(srv, args, { env });

async function sql(srv, query) {
  const { stdout } = await execFileP('sqlite3', ['-cmd', '.timeout 5000', srv.settings.SANDBOX_DB, query]);
  return stdout.trim();
}

/* A person with a personal key, signed in through OAuth with the SDK. */
async function person(srv, name) {
  const r = await ctl(srv, ['--json', 'keys', 'add', name]);
  assert.equal(r.code, 0, r.stderr);
  const { key } = JSON.parse(r.stdout);
  const provider = new TestProvider(srv, { key, clientName: 'revoke client' });
  const sdk = await connectOAuth(srv, provider, { name: `e2e-${name}` });
  const tool = async (tname, args) => {
    const res = await sdk.client.callTool({ name: tname, arguments: args }, undefined, { timeout: 180000 });
    assert.notEqual(res.isError, true, `${name}: ${tname}: ${resultText(res)}`);
    return res.structuredContent;
  };
  const sh = (command) => tool('execute', { command, timeout: 120 });
  return { name, key, ...sdk, tool, sh };
}

const hash12 = (owner) => createHash('sha256').update(owner).digest('hex').slice(0, 12);

async function running(container) {
  const r = await docker('inspect', '-f', '{{.State.Running}}', container);
  return r.code === 0 ? r.stdout.trim() : 'absent';
}

const put = (url, body) => fetch(url, { method: 'PUT', body });
const REFUSED = [403, 404, 410];

for (const scope of ['person', 'shared']) {
  describe(`security review 3: a revoked key's links (SANDBOX_SCOPE=${scope})`, () => {
    let srv;
    let rita;
    const container = () => (scope === 'person' ? `${srv.container}-${hash12('rita')}` : srv.container);

    before(async () => {
      srv = await startServer({ name: `revoke-${scope}`, settings: { SANDBOX_SCOPE: scope, SANDBOX_ALLOW_KEY_BEARER: 0 } });
      rita = await person(srv, 'rita');
    });

    after(async () => {
      await rita?.client.close().catch(() => {});
      if (!srv) return;
      try {
        await srv.stop();
      } finally {
        if (scope === 'person') {
          await docker('rm', '-f', `${srv.container}-${hash12('rita')}`).catch(() => {});
          await docker('volume', 'rm', '-f', `${srv.volume}-${hash12('rita')}`).catch(() => {});
        }
      }
    });

    it('revoke-links: download and upload links answer 403/404/410 and the sandbox stays stopped', async () => {
      await rita.sh('mkdir -p /sandbox/out && echo secret > /sandbox/out/a.txt');
      const file = await rita.tool('share_file', { path: 'out/a.txt' });
      const folder = await rita.tool('share_file', { path: 'out' });
      const up = await rita.tool('upload_link', {});
      // They work while the key is valid.
      assert.equal((await fetch(file.url)).status, 200);
      assert.equal((await fetch(folder.url)).status, 200);
      assert.equal((await fetch(up.url)).status, 200);
      assert.equal((await put(`${up.url}before.txt`, 'x')).status, 201);

      const r = await ctl(srv, ['keys', 'revoke', 'rita']);
      assert.equal(r.code, 0, r.stderr);
      if (scope === 'person') {
        assert.equal(await running(container()), 'false', 'revoke stops the person\'s sandbox');
      } else {
        // The shared sandbox is everyone's: revoke leaves it; stopped here
        // so that a start by any of rita's links would show.
        assert.equal((await docker('stop', '-t', '1', container())).code, 0);
      }
      assert.equal(await sql(srv, "select count(*) from link where owner = 'rita' and revoked is null"), '0');
      assert.equal(await sql(srv, "select count(*) from upload_link where owner = 'rita' and revoked is null"), '0');

      const tries = async (what) => {
        for (const [label, res] of [
          ['file link', await fetch(file.url)],
          ['folder link', await fetch(folder.url)],
          ['upload page', await fetch(up.url)],
          ['upload PUT', await put(`${up.url}after.txt`, 'y')],
        ]) {
          assert.ok(REFUSED.includes(res.status), `${what}: ${label} answered ${res.status}`);
          await res.arrayBuffer();
        }
        assert.equal(await running(container()), 'false', `${what}: the sandbox stays stopped`);
      };
      await tries('revoked links');
      // A row the revocation missed (or one written back) is still refused:
      // the checks look at the owner's key.
      await sql(srv, "update link set revoked = null where owner = 'rita'; " +
        "update upload_link set revoked = null where owner = 'rita'");
      await tries('owner without a valid key');
      assert.equal(await sql(srv, "select sum(uploads) from upload_link where owner = 'rita'"), '1',
        'nothing stored after the revocation');
    });
  });
}

describe('security review 3: a link starts a stopped sandbox only through the claim', () => {
  let srv;
  const people = {};
  const c = (n) => `${srv.container}-${hash12(n)}`;

  before(async () => {
    srv = await startServer({
      name: 'revoke-claim',
      settings: { SANDBOX_SCOPE: 'person', SANDBOX_MAX_SANDBOXES: 1, SANDBOX_ALLOW_KEY_BEARER: 0 },
    });
    for (const n of ['ann', 'ben']) people[n] = await person(srv, n);
  });

  after(async () => {
    for (const p of Object.values(people)) await p.client.close().catch(() => {});
    if (!srv) return;
    try {
      await srv.stop();
    } finally {
      for (const n of ['ann', 'ben']) {
        await docker('rm', '-f', c(n)).catch(() => {});
        await docker('volume', 'rm', '-f', `${srv.volume}-${hash12(n)}`).catch(() => {});
      }
    }
  });

  it('link-claim: /up and folder downloads count against SANDBOX_MAX_SANDBOXES and are idle-stopped', async () => {
    await people.ann.sh('mkdir -p /sandbox/d && echo from-ann > /sandbox/d/f.txt');
    const folder = await people.ann.tool('share_file', { path: 'd' });
    const up = await people.ann.tool('upload_link', {});
    // ben's call takes the one place: ann's sandbox is stopped (cap).
    await people.ben.sh('true');
    assert.equal(await running(c('ann')), 'false');
    assert.equal(await running(c('ben')), 'true');

    // A stranger's upload to ann's link: ann's sandbox starts in ben's place.
    const res = await put(`${up.url}in.txt`, 'uploaded');
    assert.equal(res.status, 201, await res.text());
    assert.equal(await running(c('ann')), 'true');
    assert.equal(await running(c('ben')), 'false', 'the cap holds: ben (idle) was stopped for the link');
    let list = JSON.parse((await ctl(srv, ['--json', 'sandboxes', 'list'])).stdout);
    assert.deepEqual(list.map((s) => [s.owner, s.running]).sort(), [['ann', true], ['ben', false]]);

    // ben again, then the folder link: the same through the claim.
    await people.ben.sh('true');
    assert.equal(await running(c('ann')), 'false');
    const dl = await fetch(folder.url);
    assert.equal(dl.status, 200);
    assert.ok((await dl.arrayBuffer()).byteLength > 0);
    assert.equal(await running(c('ann')), 'true');
    assert.equal(await running(c('ben')), 'false', 'the cap holds for folder downloads');

    // Started by a link, idle-stopped like any other.
    await sleep(2100);
    const r = await ctl(srv, ['sandboxes', 'stop-idle'], { SANDBOX_IDLE_STOP: '1' });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(await running(c('ann')), 'false', 'a sandbox a link started is idle-stopped');
    list = JSON.parse((await ctl(srv, ['--json', 'sandboxes', 'list'])).stdout);
    assert.equal(list.find((s) => s.owner === 'ann').stop_reason, 'idle');
  });
});
