// share_file of a folder: a link that streams the folder as one .tar.gz or
// .zip made at download time. The download unpacks to the same tree (every
// file's sha256, empty folders, a symbolic link kept as a link in a
// .tar.gz, followed in a .zip); HEAD; no
// length or ranges promised; a missing folder is 404; the archive kind in
// the URL is signed.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { startServer } from './lib/server.mjs';
import { connect, resultText } from './lib/client.mjs';

const execFileP = promisify(execFile);

let srv;
let mcp;
let tmp;

async function sh(command) {
  const r = await mcp.execute({ command, timeout: 300 });
  assert.equal(r.structuredContent.exit_code, 0, `${command}: ${resultText(r)}`);
  return r.structuredContent.stdout;
}

async function share(args) {
  const r = await mcp.client.callTool({ name: 'share_file', arguments: args }, undefined, { timeout: 120000 });
  assert.notEqual(r.isError, true, resultText(r));
  return r.structuredContent;
}

// The tree under a folder: "path sha256" per file, "path/" per folder, "path -> target" per link.
const TREE = 'cd "$1" && find . -mindepth 1 | LC_ALL=C sort | while read -r p; do ' +
  'if [ -L "$p" ]; then echo "$p -> $(readlink "$p")"; elif [ -d "$p" ]; then echo "$p/"; ' +
  'else echo "$p $(sha256sum < "$p" | cut -c1-64)"; fi; done';

before(async () => {
  srv = await startServer({ name: 'folders' });
  mcp = await connect(srv);
  await sh('mkdir -p "/sandbox/proj/src/deep er" /sandbox/proj/empty && cd /sandbox/proj && ' +
    'echo top > README.md && head -c 3000000 /dev/urandom > src/data.bin && ' +
    'printf "x\\n" > "src/deep er/n ame.txt" && ln -s README.md link.md');
  tmp = mkdtempSync(join(tmpdir(), 'cs-folders-'));
});

after(async () => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
  if (mcp) await mcp.close();
  if (srv) await srv.stop();
});

for (const archive of ['tar.gz', 'zip']) {
  test(`a folder downloads as .${archive} and unpacks to the same tree`, async () => {
    const s = await share(archive === 'zip' ? { path: 'proj', archive } : { path: 'proj' });
    assert.equal(s.name, `proj.${archive}`);
    assert.ok(s.url.endsWith(`/proj.${archive}`), s.url);
    const res = await fetch(s.url, { signal: AbortSignal.timeout(120000) });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-length'), null);
    assert.equal(res.headers.get('accept-ranges'), 'none');
    assert.equal(res.headers.get('content-type'), archive === 'zip' ? 'application/zip' : 'application/gzip');
    assert.match(res.headers.get('content-disposition'), new RegExp(`attachment; filename="proj\\.${archive.replace('.', '\\.')}"`));
    const file = join(tmp, `proj.${archive}`);
    writeFileSync(file, Buffer.from(await res.arrayBuffer()));
    const out = join(tmp, archive);
    await execFileP('mkdir', ['-p', out]);
    if (archive === 'zip') await execFileP('unzip', ['-q', file, '-d', out]);
    else await execFileP('tar', ['-xzf', file, '-C', out]);
    let want = await sh(`set -- /sandbox/proj; ${TREE}`);
    // A .zip holds what a symbolic link points to (zip writes to a pipe).
    if (archive === 'zip') want = want.replace(/\.\/link\.md -> README\.md/, `./link.md ${/\.\/README\.md (\w+)/.exec(want)[1]}`);
    const { stdout: got } = await execFileP('sh', ['-c', TREE, 'tree', join(out, 'proj')]);
    assert.equal(got, want);
    if (archive === 'tar.gz') assert.match(want, /\.\/link\.md -> README\.md/);
    assert.match(want, /\.\/empty\//);
  });
}

test('HEAD, a missing folder, and the signed archive kind', async () => {
  const s = await share({ path: '/sandbox/proj' });
  const head = await fetch(s.url, { method: 'HEAD' });
  assert.equal(head.status, 200);
  // The kind in the name is signed: another kind, or the plain name, is refused.
  for (const url of [s.url.replace(/\.tar\.gz$/, '.zip'), s.url.replace(/\.tar\.gz$/, '')]) {
    assert.equal((await fetch(url)).status, 403, url);
  }
  await sh('mkdir -p /sandbox/temp && echo x > /sandbox/temp/a');
  const t = await share({ path: 'temp', archive: 'zip' });
  await sh('rm -rf /sandbox/temp');
  assert.equal((await fetch(t.url)).status, 404);
  assert.equal((await fetch(t.url, { method: 'HEAD' })).status, 404);
  const bad = await mcp.client.callTool({ name: 'share_file', arguments: { path: 'proj', archive: 'rar' } });
  assert.equal(bad.isError, true);
});
