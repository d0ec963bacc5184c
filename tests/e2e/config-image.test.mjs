// containers/build-image.sh: an image is rebuilt when what goes into it
// changes (its label org.code-sandbox.inputs, the content hash of its
// Dockerfile and base), not when it does not, and the image it replaced is
// removed. Tried on images of its own (CS_IMAGE_DIR with a small
// Dockerfile.local, names of this test), never on the images in use.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, appendFileSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TOP } from './lib/server.mjs';

const script = join(TOP, 'containers/build-image.sh');
const dir = mkdtempSync(join(tmpdir(), 'cs-e2e-image-'));
const name = `cs-e2e-img-${process.pid}`;
const env = {
  ...process.env,
  SANDBOX_IMAGE: `${name}:latest`,
  CS_CORE_IMAGE: `${name}:core`,
  CS_BASE_IMAGE: `${name}-base:bookworm`,
  CS_IMAGE_DIR: dir,
  CS_IMAGE_REGISTRY: 'no',
  CS_IMAGE_LOCK: join(dir, 'lock'),
  CS_IMAGE_LOG: join(dir, 'log'),
};

function sh(cmd, args, input) {
  return spawnSync(cmd, args, { env, input, encoding: input === undefined ? 'utf8' : undefined, timeout: 300000 });
}
const build = (...args) => sh(script, args);
const inputs = () => Object.fromEntries(build('--inputs').stdout.trim().split('\n').map((l) => l.split(' ')));
const inspect = (image, fmt) => {
  const r = sh('docker', ['image', 'inspect', '-f', fmt, image]);
  return r.status === 0 ? r.stdout.trim() : null;
};
const id = (image) => inspect(image, '{{.Id}}');
const hashOf = (image) => inspect(image, '{{ index .Config.Labels "org.code-sandbox.inputs" }}');

after(() => {
  for (const t of [`${name}:latest`, `${name}:core`, `${name}-base:bookworm`]) sh('docker', ['image', 'rm', '-f', t]);
  rmSync(dir, { recursive: true, force: true });
});

// Two stages as in containers/Dockerfile.local, without RUN: the base can
// be a tiny imported file system.
writeFileSync(join(dir, 'Dockerfile.local'), [
  'ARG BASE=none',
  'FROM ${BASE} AS core',
  'LABEL org.code-sandbox.test=core',
  'FROM core',
  'LABEL org.code-sandbox.toolset="1"',
  '',
].join('\n'));
writeFileSync(join(dir, 'Dockerfile.unified'), 'FROM scratch\n');

test('the image is built, labelled with its inputs, then left alone while they stay the same', () => {
  // The base as the script would have made it (its label says so): one
  // file, no debootstrap.
  writeFileSync(join(dir, 'hello'), 'hello\n');
  const tar = spawnSync('tar', ['-C', dir, '-c', 'hello']).stdout;
  const imp = sh('docker', ['import', '--change', `LABEL org.code-sandbox.inputs=${inputs().base}`, '-', env.CS_BASE_IMAGE], tar);
  assert.equal(imp.status, 0, String(imp.stderr));

  assert.notEqual(build('--check').status, 0, 'no image yet: --check fails');
  let r = build();
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /built cs-e2e-img-\d+:latest/);
  const h = inputs().local;
  assert.equal(hashOf(env.SANDBOX_IMAGE), h);
  assert.equal(hashOf(env.CS_CORE_IMAGE), h);
  assert.equal(build('--check').status, 0);

  const before = id(env.SANDBOX_IMAGE);
  const t0 = Date.now();
  r = build();
  const ms = Date.now() - t0;
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.equal(r.stdout, '', 'nothing to build');
  assert.equal(id(env.SANDBOX_IMAGE), before);
  // A few hashes and one docker image inspect: generous on a loaded machine.
  assert.ok(ms < 20000, `the up-to-date check took ${ms} ms`);
});

test('a changed Dockerfile gives a rebuilt image, and the one it replaced is removed', () => {
  const oldFull = id(env.SANDBOX_IMAGE);
  const oldCore = id(env.CS_CORE_IMAGE);
  const oldHash = inputs().local;
  assert.ok(oldFull && oldCore, 'the first test built both');
  appendFileSync(join(dir, 'Dockerfile.local'), 'LABEL org.code-sandbox.test-change=2\n');
  const h = inputs().local;
  assert.notEqual(h, oldHash);
  assert.notEqual(build('--check').status, 0, 'the image is stale: --check fails');

  const r = build();
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /built cs-e2e-img-\d+:latest/);
  assert.equal(hashOf(env.SANDBOX_IMAGE), h);
  assert.equal(inspect(env.SANDBOX_IMAGE, '{{ index .Config.Labels "org.code-sandbox.test-change" }}'), '2');
  assert.equal(build('--check').status, 0);
  assert.notEqual(id(env.SANDBOX_IMAGE), oldFull);
  assert.equal(id(oldFull), null, 'the replaced full image is gone');
  assert.equal(id(oldCore), null, 'the replaced core image is gone');
});

test('an image built before the label (or by hand) is rebuilt', () => {
  const r0 = sh('docker', ['build', '-q', '--build-arg', `BASE=${env.CS_BASE_IMAGE}`, '-f', join(dir, 'Dockerfile.local'), '-t', env.SANDBOX_IMAGE, dir]);
  assert.equal(r0.status, 0, r0.stderr);
  // Only the base's label, inherited.
  assert.notEqual(hashOf(env.SANDBOX_IMAGE), inputs().local);
  assert.notEqual(build('--check').status, 0);
  const r = build();
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /built cs-e2e-img-\d+:latest/);
  assert.equal(hashOf(env.SANDBOX_IMAGE), inputs().local);
});
