// Secrets (sandboxctl secrets, docs/secrets.md): the operator's words
// checked, the value read from standard input only, sealed at rest (not in
// the SQLite file in plain text), never printed; bad input refused with a
// clear message and nothing stored.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { TOP, runProgram } from './lib/server.mjs';

const execFileP = promisify(execFile);
const BIN = resolve(TOP, process.env.CS_BIN ?? 'build/san/bin');
const VALUE = 'tok-E2E-s3cr3t-value-0123456789';

describe('sandboxctl secrets', () => {
  let dir, env;
  const ctl = (args, input) => runProgram(join(BIN, 'sandboxctl'), ['-e', env, ...args], { input });
  const rows = async () => (await execFileP('sqlite3', [join(dir, 'state.db'), 'select count(*) from secret'])).stdout.trim();

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'cs-e2e-secrets-'));
    env = join(dir, '.env');
    writeFileSync(env, 'SANDBOX_API_KEY=e2e-secrets-key-0123456789\nSANDBOX_SCOPE=person\n', { mode: 0o600 });
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('adds a secret from standard input, lists it without its value, seals it at rest', async () => {
    const r = await ctl(['secrets', 'add', 'GH', '--host', 'api.example.test,Git.Example.test'], `${VALUE}\n`);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /secret GH added for api\.example\.test,git\.example\.test/);
    assert.ok(!r.stdout.includes(VALUE) && !r.stderr.includes(VALUE));
    const b = await ctl(['secrets', 'add', 'NPM', '--host', 'registry.example.test', '--owner', 'bob', '--header', 'X-Api-Key: {}'], 'npm-value-0123456789');
    assert.equal(b.code, 0, b.stderr);
    const l = await ctl(['secrets', 'list']);
    assert.equal(l.code, 0, l.stderr);
    assert.match(l.stdout, /GH +\(all\) +api\.example\.test,git\.example\.test +Authorization: Bearer \{\}/);
    assert.match(l.stdout, /NPM +bob +registry\.example\.test +X-Api-Key: \{\}/);
    const j = JSON.parse((await ctl(['--json', 'secrets', 'list'])).stdout);
    assert.deepEqual(j.map((s) => s.name), ['GH', 'NPM']);
    assert.ok(!JSON.stringify(j).includes(VALUE));
    // Sealed: neither the file nor what sqlite3 shows holds the value.
    assert.ok(!readFileSync(join(dir, 'state.db')).includes(VALUE));
    const dump = (await execFileP('sqlite3', [join(dir, 'state.db'), '.dump secret'])).stdout;
    assert.ok(!dump.includes(VALUE) && dump.includes('GH'));
    assert.equal(statSync(join(dir, 'secrets.key')).mode & 0o777, 0o600);
  });

  it('refuses bad input with a clear message and stores nothing', async () => {
    const before = await rows();
    const cases = [
      [['secrets', 'add', 'NL', '--host', 'a.example.test'], 'abcd\nefgh-ijkl', /control character/],
      [['secrets', 'add', 'TAB', '--host', 'a.example.test'], 'abcd\tefgh-ijkl', /control character/],
      [['secrets', 'add', 'SHORT', '--host', 'a.example.test'], 'short', /shorter than 8/],
      [['secrets', 'add', 'EMPTY', '--host', 'a.example.test'], '', /no value on standard input/],
      [['secrets', 'add', 'TPL', '--host', 'a.example.test', '--header', 'X-Api-Key: token'], 'abcdefgh-ijkl', /no \{\}/],
      [['secrets', 'add', 'TPL2', '--host', 'a.example.test', '--header', 'X-Api-Key {}'], 'abcdefgh-ijkl', /Name: template/],
      [['secrets', 'add', 'HOST', '--host', '127.0.0.1'], 'abcdefgh-ijkl', /not a host name/],
      [['secrets', 'add', 'HOST2', '--host', 'a.example.test:443'], 'abcdefgh-ijkl', /not a host name/],
      [['secrets', 'add', '1bad', '--host', 'a.example.test'], 'abcdefgh-ijkl', /starts with a letter/],
      [['secrets', 'add', 'NOHOST'], 'abcdefgh-ijkl', /--host/],
      [['secrets', 'add', 'GH', '--host', 'a.example.test'], 'abcdefgh-ijkl', /exists/],
      [['secrets', 'add', 'BOTH', '--host', 'a.example.test', '--basic', 'u', '--header', 'X: {}'], 'abcdefgh-ijkl', /not both/],
      [['secrets', 'add', 'ARG', '--host', 'a.example.test', '--value', 'abcdefgh-ijkl'], 'abcdefgh-ijkl', /standard input/],
    ];
    for (const [args, input, msg] of cases) {
      const r = await ctl(args, input);
      assert.notEqual(r.code, 0, `${args.join(' ')} accepted`);
      assert.match(r.stderr, msg, args.join(' '));
      assert.ok(!r.stderr.includes('abcdefgh-ijkl'), 'the value is not echoed');
    }
    assert.equal(await rows(), before);
  });

  it('removes a secret at once; a second removal says there is none', async () => {
    const r = await ctl(['secrets', 'remove', 'NPM']);
    assert.equal(r.code, 0, r.stderr);
    const again = await ctl(['secrets', 'remove', 'NPM']);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /no secret named NPM/);
    assert.equal(await rows(), '1');
  });

  it('SANDBOX_EGRESS_HOSTS is refused at start with none, open, without the proxy, or with a bad name', async () => {
    const cases = [
      [{ SANDBOX_EGRESS: 'none', SANDBOX_PROXY: '1', SANDBOX_EGRESS_HOSTS: 'mirror.example.test' }, /only with SANDBOX_EGRESS=internet/],
      [{ SANDBOX_EGRESS: 'open', SANDBOX_PROXY: '1', SANDBOX_EGRESS_HOSTS: 'mirror.example.test' }, /only with SANDBOX_EGRESS=internet/],
      [{ SANDBOX_EGRESS_HOSTS: 'mirror.example.test' }, /needs SANDBOX_PROXY=1/],
      [{ SANDBOX_PROXY: '1', SANDBOX_EGRESS_HOSTS: 'mirror.example.test 10.0.0.1' }, /10\.0\.0\.1 is not a host name/],
      [{ SANDBOX_PROXY: '1', SANDBOX_EGRESS_HOSTS: 'mirror.example.test:443' }, /is not a host name/],
    ];
    for (const [env, msg] of cases) {
      const r = await runProgram(join(BIN, 'sandboxctl'), ['-e', env === null ? '' : join(dir, '.env'), 'check'], { env });
      assert.notEqual(r.code, 0, JSON.stringify(env));
      assert.match(r.stderr, msg, JSON.stringify(env));
    }
    const ok = await runProgram(join(BIN, 'sandboxctl'), ['-e', join(dir, '.env'), 'check'], { env: { SANDBOX_PROXY: '1', SANDBOX_EGRESS_HOSTS: 'mirror.example.test *.files.example.test' } });
    assert.equal(ok.code, 0, ok.stderr);
  });
});
