// An engine that cannot be reached, or a missing image: a clear isError
// result, quickly, never a hung request. DOCKER_HOST is set in lighttpd's
// environment, which also shows environment variables override the file.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from './lib/server.mjs';
import { connect, resultText } from './lib/client.mjs';

describe('an unreachable Docker engine', () => {
  let srv;
  let conn;

  before(async () => {
    srv = await startServer({ name: 'noengine', env: { DOCKER_HOST: 'unix:///nonexistent.sock' } });
    conn = await connect(srv);
  });
  after(async () => {
    await conn?.close().catch(() => {});
    await srv?.stop();
  });

  it('execute answers isError with a clear message within seconds', async () => {
    const t0 = Date.now();
    const res = await conn.execute({ command: 'echo hi' }, { timeout: 30000 });
    const took = Date.now() - t0;
    assert.equal(res.isError, true, JSON.stringify(res));
    assert.match(resultText(res), /docker/i);
    assert.match(resultText(res), /engine|daemon|connect|reach|socket/i);
    assert.ok(took < 10000, `answered in ${took} ms`);
  });

  it('the session still works afterwards', async () => {
    assert.deepEqual(await conn.client.ping(), {});
  });

  it('the programs exit cleanly on SIGTERM with no sanitizer reports', async () => {
    await conn.close();
    conn = null;
    await srv.shutdown();
  });
});

describe('a missing sandbox image', () => {
  let srv;
  let conn;

  before(async () => {
    srv = await startServer({ name: 'noimage', settings: { SANDBOX_IMAGE: 'cs-e2e-no-such-image:none' } });
    conn = await connect(srv);
  });
  after(async () => {
    await conn?.close().catch(() => {});
    await srv?.stop();
  });

  it('execute answers isError naming the image', async () => {
    const t0 = Date.now();
    const res = await conn.execute({ command: 'echo hi' }, { timeout: 90000 });
    const took = Date.now() - t0;
    assert.equal(res.isError, true, JSON.stringify(res));
    assert.match(resultText(res), /cs-e2e-no-such-image:none/);
    assert.match(resultText(res), /image/i);
    assert.ok(took < 60000, `answered in ${took} ms`);
  });

  it('the programs exit cleanly on SIGTERM with no sanitizer reports', async () => {
    await conn.close();
    conn = null;
    await srv.shutdown();
  });
});
