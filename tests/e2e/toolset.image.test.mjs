// The sandbox image's toolset and view_image, on the full image (its tools
// take minutes to build: tests/run.sh runs files named *.image.test.mjs
// last, once containers/build-image.sh --wait says the image is there).
// The image is CS_TOOLSET_IMAGE, else code-sandbox:latest.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';

import { startServer } from './lib/server.mjs';
import { connect, resultText } from './lib/client.mjs';

const IMAGE = process.env.CS_TOOLSET_IMAGE || 'code-sandbox:latest';

let srv;
let mcp;

async function sh(command, timeout = 300) {
  const r = await mcp.execute({ command, timeout });
  assert.equal(r.structuredContent.exit_code, 0, `${command}: ${resultText(r)}`);
  return r.structuredContent.stdout;
}

async function view(path) {
  return mcp.client.callTool({ name: 'view_image', arguments: { path } }, undefined, { timeout: 180000 });
}

before(async () => {
  srv = await startServer({
    name: 'toolset',
    settings: { SANDBOX_IMAGE: IMAGE, SANDBOX_MEMORY: '1g', SANDBOX_IMAGE_MAX_BYTES: '100k', SANDBOX_IMAGE_MAX_DIM: '1000' },
  });
  mcp = await connect(srv);
});

after(async () => {
  if (mcp) await mcp.close();
  if (srv) await srv.stop();
});

test('ffmpeg, pandoc, ImageMagick, ripgrep, poppler and the Python libraries run', async () => {
  const out = await sh('ffmpeg -version | head -1; pandoc --version | head -1; convert -version | head -1; ' +
    'rg --version | head -1; pdftotext -v 2>&1 | head -1; ' +
    'python3 -c "import numpy, pandas, matplotlib, scipy, PIL, requests, bs4; print(\'python ok\')"');
  for (const re of [/^ffmpeg version/m, /^pandoc /m, /ImageMagick/, /^ripgrep /m, /pdftotext version/, /^python ok$/m]) {
    assert.match(out, re);
  }
});

test('headless Chromium takes a screenshot; /dev/shm is sized for it', async () => {
  const shm = Number((await sh("df -k --output=size /dev/shm | tail -1")).trim());
  assert.ok(shm >= 512 * 1024, `/dev/shm is ${shm} KiB`);
  await sh('printf "<h1 style=color:red>hello</h1>" > /tmp/p.html && ' +
    'timeout 120 chromium --headless --no-sandbox --disable-gpu --screenshot=/sandbox/shot.png ' +
    '--window-size=640,480 file:///tmp/p.html 2>/dev/null; test -s /sandbox/shot.png', 180);
  const r = await view('shot.png');
  assert.notEqual(r.isError, true, resultText(r));
  const img = r.content.find((c) => c.type === 'image');
  assert.equal(img.mimeType, 'image/png');
  assert.match(resultText(r), /640×480 pixels/);
});

test('a matplotlib PNG comes back as image content, byte for byte', async () => {
  await sh(`python3 -c "
import matplotlib; matplotlib.use('Agg')
import matplotlib.pyplot as plt
plt.figure(figsize=(4, 3), dpi=100); plt.plot([1, 3, 2]); plt.savefig('/sandbox/chart.png')"`);
  const sum = (await sh('sha256sum /sandbox/chart.png | cut -d" " -f1')).trim();
  const r = await view('chart.png');
  assert.notEqual(r.isError, true, resultText(r));
  const img = r.content.find((c) => c.type === 'image');
  assert.equal(img.mimeType, 'image/png');
  assert.equal(createHash('sha256').update(Buffer.from(img.data, 'base64')).digest('hex'), sum);
  assert.match(resultText(r), /400×300 pixels/);
  assert.doesNotMatch(resultText(r), /scaled/);
});

test('a large picture is scaled down within the budget, and says so', async () => {
  await sh(`python3 -c "
import numpy as np, matplotlib; matplotlib.use('Agg')
import matplotlib.pyplot as plt
plt.figure(figsize=(30, 20), dpi=100); plt.imshow(np.random.rand(200, 300)); plt.savefig('/sandbox/big.png')"`);
  const r = await view('/sandbox/big.png');
  assert.notEqual(r.isError, true, resultText(r));
  const img = r.content.find((c) => c.type === 'image');
  const bytes = Buffer.from(img.data, 'base64');
  assert.ok(bytes.length <= 100 * 1024, `${bytes.length} bytes`);
  assert.match(resultText(r), /3000×2000 pixels/);
  assert.match(resultText(r), /scaled down/);
  const m = /scaled down to (PNG|JPEG), (\d+)×(\d+) pixels/.exec(resultText(r));
  assert.ok(m && Number(m[2]) <= 1000 && Number(m[3]) <= 1000, resultText(r));
  // What came back is that picture: same signature as the format named.
  assert.equal(img.mimeType, m[1] === 'PNG' ? 'image/png' : 'image/jpeg');
});

test('not an image: a clear error naming share_file', async () => {
  await sh('echo text > /sandbox/notes.txt');
  const r = await view('notes.txt');
  assert.equal(r.isError, true);
  assert.match(resultText(r), /share_file/);
  const missing = await view('nope.png');
  assert.equal(missing.isError, true);
  assert.match(resultText(missing), /No file/);
});
