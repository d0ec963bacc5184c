// The terminal link: a person opens a terminal in headless Chromium (the
// page behind whichever front runs the file), types a password into
// `read -s`, and the model's next terminal_read shows its length, never
// its text (checked over every MCP message of the test). Then tampered,
// revoked and (behind lighttpd) expired links, and the page's headers.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { startServer, sleep, waitFor, WEB } from './lib/server.mjs';
import { connect, resultText } from './lib/client.mjs';
import { ctl } from './lib/hostile.mjs';

const PASSWORD = 'pw-Hunter2-Zq9xK7';
const TTL = 25; // TERMINAL_LINK_TTL for this server, seconds

describe('terminal_link', () => {
  let srv;
  let conn;
  const traffic = []; // every MCP request and result of the test

  const tool = async (name, args) => {
    traffic.push(JSON.stringify({ name, args }));
    const r = await conn.client.callTool({ name, arguments: args }, undefined, { timeout: 90000 });
    traffic.push(JSON.stringify(r));
    return r;
  };
  const ok = async (name, args) => {
    const r = await tool(name, args);
    assert.notEqual(r.isError, true, `${name}: ${resultText(r)}`);
    return r.structuredContent;
  };
  const linkParts = (url) => {
    const m = /\/dl\/([A-Za-z0-9_-]{22})\/(\d+)\/([A-Za-z0-9_-]{43})\/([^/]+)$/.exec(url);
    assert.ok(m, url);
    return { id: m[1], expires: m[2], sig: m[3], name: m[4] };
  };

  before(async () => {
    srv = await startServer({ name: 'terminal-link', settings: { TERMINAL_LINK_TTL: TTL } });
    conn = await connect(srv);
  });
  after(async () => {
    await conn?.close().catch(() => {});
    await srv?.stop();
  });

  it('a password typed on the page reaches the program, never the model', async () => {
    const t = await ok('terminal_start', { command: 'bash', cols: 200, rows: 20 });
    // Colours; then wide characters (three of two columns, and an e with a
    // combining accent) before a caret that must stand in the same column
    // as the caret of a line of 8 dots (all typed as escapes, so the
    // command line itself holds no caret).
    const wide = String.raw`printf '\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9ee\xcc\x81|\x5e\n........\x5e\n'; `;
    await ok('terminal_send', { terminal_id: t.terminal_id, input: 'printf "\\e[31mRED\\e[0m \\e[1;44mBLUE\\e[0m\\n"; ' + wide + 'read -s P; echo "len=${#P}"\n', wait_ms: 500 });
    const profile = mkdtempSync(join(tmpdir(), 'cs-chromium-'));
    const browser = await chromium.launchPersistentContext(profile, {
      executablePath: '/usr/bin/chromium',
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    const errors = [];
    const hosts = new Set();
    try {
      // The link made once the browser is up: its TTL is short here.
      const l = await ok('terminal_link', { terminal_id: t.terminal_id });
      assert.ok(l.url.startsWith(`${srv.url}/dl/`), l.url);
      assert.match(l.expires, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      const { id } = linkParts(l.url);
      const page = await browser.newPage();
      page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
      page.on('request', (q) => hosts.add(new URL(q.url()).host));
      const resp = await page.goto(l.url);
      assert.equal(resp.status(), 200);
      assert.equal(new URL(page.url()).pathname, `/dl/t/${id}/`, 'redirected to the clean path: no token in the address');
      const csp = resp.headers()['content-security-policy'];
      assert.match(csp, /default-src 'none'/);
      assert.match(csp, /connect-src 'self'/);
      assert.doesNotMatch(csp, /https?:/, 'no other host allowed');
      assert.equal(resp.headers()['cache-control'], 'no-store');
      await page.waitForFunction(() => /read -s P/.test(document.getElementById('s').textContent), null, { timeout: 15000 });
      // Colours as the supervisor's emulator renders them.
      const styles = await page.evaluate(() => Object.fromEntries([...document.querySelectorAll('#s span')]
        .filter((x) => /^(RED|BLUE)$/.test(x.textContent))
        .map((x) => [x.textContent, { color: getComputedStyle(x).color, bg: getComputedStyle(x).backgroundColor, weight: getComputedStyle(x).fontWeight }])));
      const rgb = (c) => (c ?? '').match(/\d+/g)?.map(Number) ?? [];
      const [r, g, b] = rgb(styles.RED?.color);
      assert.ok(r > 150 && g < 100 && b < 100, `RED is drawn red: ${JSON.stringify(styles)}`);
      const [br, bgr, bb] = rgb(styles.BLUE?.bg);
      assert.ok(bb > 150 && br < 100 && bgr < 100, `BLUE has a blue background: ${JSON.stringify(styles)}`);
      assert.ok(Number(styles.BLUE.weight) >= 600, 'and is bold');
      // Wide characters take their two columns: both carets line up.
      const carets = await page.evaluate(() => {
        const out = [];
        const w = document.createTreeWalker(document.getElementById('s'), NodeFilter.SHOW_TEXT);
        for (let n = w.nextNode(); n; n = w.nextNode()) {
          for (let i = n.data.indexOf('^'); i >= 0; i = n.data.indexOf('^', i + 1)) {
            const r = document.createRange();
            r.setStart(n, i);
            r.setEnd(n, i + 1);
            out.push(r.getBoundingClientRect().left);
          }
        }
        return { out, wide: document.querySelectorAll('#s .w').length, text: document.getElementById('s').textContent };
      });
      assert.equal(carets.out.length, 2, JSON.stringify(carets));
      assert.ok(Math.abs(carets.out[0] - carets.out[1]) < 1, `the carets line up: ${JSON.stringify(carets.out)}`);
      assert.equal(carets.wide, 3, 'three wide characters, each in its two columns');
      assert.match(carets.text, /\u65e5\u672c\u8a9ee\u0301\|\^/);
      await page.locator('#s').click();
      await page.keyboard.type(PASSWORD, { delay: 5 });
      await page.keyboard.press('Enter');
      await page.waitForFunction(() => /len=\d+/.test(document.getElementById('s').textContent), null, { timeout: 30000 })
        .catch(async (e) => assert.fail(`${e.message}: status ${await page.locator('#st').textContent()}, screen ${await page.locator('#s').textContent()}`));
      const shown = await page.locator('#s').textContent();
      assert.doesNotMatch(shown, new RegExp(PASSWORD), 'read -s echoes nothing, on the page either');
      assert.deepEqual([...hosts], [new URL(srv.url).host], 'the page talks to its own server only');
      assert.deepEqual(errors, [], 'no errors in the page (CSP violations included)');
    } finally {
      await browser.close();
      rmSync(profile, { recursive: true, force: true });
    }
    const r = await ok('terminal_read', { terminal_id: t.terminal_id });
    assert.match(r.screen, new RegExp(`^len=${PASSWORD.length}$`, 'm'), r.screen);
    await ok('terminal_close', { terminal_id: t.terminal_id });
    for (const m of traffic) assert.ok(!m.includes(PASSWORD), `the password is in an MCP message: ${m.slice(0, 200)}`);
    assert.ok(!srv.logs().includes(PASSWORD), 'nor in the programs\' logs');
  });

  it('a tampered and a revoked link are refused; so is the page without its cookie', async () => {
    const t = await ok('terminal_start', { command: 'cat' });
    const a = await ok('terminal_link', { terminal_id: t.terminal_id });
    const p = linkParts(a.url);
    const bad = p.sig.slice(0, -1) + (p.sig.endsWith('A') ? 'B' : 'A');
    let res = await fetch(`${srv.url}/dl/${p.id}/${p.expires}/${bad}/${p.name}`, { redirect: 'manual' });
    assert.equal(res.status, 403, 'tampered signature');
    res = await fetch(`${srv.url}/dl/${p.id}/${Number(p.expires) + 100}/${p.sig}/${p.name}`, { redirect: 'manual' });
    assert.equal(res.status, 403, 'a later expiry is not signed');
    res = await fetch(`${srv.url}/dl/t/${p.id}/`);
    assert.equal(res.status, 403, 'no cookie');
    res = await fetch(`${srv.url}/dl/t/${p.id}/`, { headers: { cookie: `cs_term=${p.expires}.${bad}.${t.terminal_id}` } });
    assert.equal(res.status, 403, 'a forged cookie');
    // The real link: cookie and redirect, then the page and keystrokes.
    res = await fetch(a.url, { redirect: 'manual' });
    assert.equal(res.status, 303);
    assert.equal(res.headers.get('location'), `/dl/t/${p.id}/`);
    const setCookie = res.headers.get('set-cookie');
    assert.match(setCookie, /HttpOnly/i);
    assert.match(setCookie, /SameSite=Strict/i);
    const cookie = setCookie.split(';')[0];
    res = await fetch(`${srv.url}/dl/t/${p.id}/`, { headers: { cookie } });
    assert.equal(res.status, 200);
    res = await fetch(`${srv.url}/dl/t/${p.id}/keys`, { method: 'POST', body: 'typed-by-person\r', headers: { cookie, origin: srv.url, 'content-type': 'text/plain' } });
    assert.equal(res.status, 204);
    res = await fetch(`${srv.url}/dl/t/${p.id}/keys`, { method: 'POST', body: 'x', headers: { cookie, origin: 'https://evil.example', 'content-type': 'text/plain' } });
    assert.equal(res.status, 403, 'another origin');
    // sandboxctl lists it, and revokes it.
    const list = await ctl(srv, ['--json', 'links', 'list']);
    assert.ok(JSON.parse(list.stdout).some((x) => x.id === p.id), list.stdout);
    assert.equal((await ctl(srv, ['links', 'revoke', p.id])).code, 0);
    res = await fetch(`${srv.url}/dl/t/${p.id}/`, { headers: { cookie } });
    assert.equal(res.status, 410, 'revoked: the page');
    res = await fetch(`${srv.url}/dl/t/${p.id}/keys`, { method: 'POST', body: 'y', headers: { cookie, origin: srv.url } });
    assert.equal(res.status, 410, 'revoked: keystrokes');
    res = await fetch(a.url, { redirect: 'manual' });
    assert.equal(res.status, 410, 'revoked: the link');
    const r = await ok('terminal_read', { terminal_id: t.terminal_id });
    assert.match(r.screen, /typed-by-person/, 'cat echoes what the person typed on the screen, as any terminal would');
    await ok('terminal_close', { terminal_id: t.terminal_id });
  });

  // The expiry is the program's own check, the same behind every front.
  it('an expired link is refused, and so is its page', { skip: WEB !== 'lighttpd' ? 'behind lighttpd only' : false }, async () => {
    const t = await ok('terminal_start', { command: 'cat' });
    const b = await ok('terminal_link', { terminal_id: t.terminal_id });
    let res = await fetch(b.url, { redirect: 'manual' });
    assert.equal(res.status, 303);
    const cookieB = res.headers.get('set-cookie').split(';')[0];
    await sleep((TTL + 1.5) * 1000);
    res = await fetch(b.url, { redirect: 'manual' });
    assert.equal(res.status, 410, 'expired: the link');
    res = await fetch(`${srv.url}/dl/t/${linkParts(b.url).id}/`, { headers: { cookie: cookieB } });
    assert.equal(res.status, 410, 'expired: the page');
    await ok('terminal_close', { terminal_id: t.terminal_id });
  });
});
