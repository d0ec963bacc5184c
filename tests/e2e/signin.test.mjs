// The sign-in page in a real browser (headless Chromium through
// playwright-core): rendered on a phone-sized screen, filled, submitted, the
// redirect to the client's loopback callback captured, the code exchanged;
// the Content-Security-Policy checked (and shown to allow the redirect that
// follows the form, which Chromium checks against form-action).

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { startServer, freePort } from './lib/server.mjs';
import { http, initializeBody } from './lib/client.mjs';
import { authorizeUrl, pkce, register, tokenRequest } from './lib/oauth.mjs';

const CHROMIUM = '/usr/bin/chromium';

describe('sign-in page in headless Chromium', () => {
  let srv;
  let browser;	// a persistent context on a fresh profile
  let profile;
  let callback;
  let callbackPort;
  const received = [];

  before(async () => {
    srv = await startServer({ name: 'signin-browser' });
    profile = mkdtempSync(join(tmpdir(), 'cs-chromium-'));
    // A fresh profile folder (playwright passes it as --user-data-dir);
    // no JavaScript: the page must work without it.
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      javaScriptEnabled: false,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    // The client's redirect target: a loopback server, as Claude Code runs.
    callbackPort = await freePort();
    callback = createServer((req, res) => {
      received.push(req.url);
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('signed in; you may close this window');
    });
    await new Promise((r) => callback.listen(callbackPort, '127.0.0.1', r));
  });
  after(async () => {
    await browser?.close();
    await new Promise((r) => (callback ? callback.close(r) : r()));
    if (profile) rmSync(profile, { recursive: true, force: true });
    await srv?.stop();
  });

  it('renders on a phone, is filled and submitted, and the redirect carries the code', async () => {
    const redirectUri = `http://127.0.0.1:${callbackPort}/callback`;
    const name = 'Phone <b>"App"</b> & co';
    const client = (await register(srv, { redirect_uris: [redirectUri], token_endpoint_auth_method: 'none', client_name: name })).json;
    const { verifier, challenge } = pkce();
    const url = authorizeUrl(srv, { clientId: client.client_id, redirectUri, challenge, state: 'browser-state' });

    const page = await browser.newPage();
    await page.setViewportSize({ width: 375, height: 667 });
    const violations = [];
    page.on('console', (m) => {
      if (/Content Security Policy|Refused/.test(m.text())) violations.push(m.text());
    });
    const resp = await page.goto(url.toString());
    assert.equal(resp.status(), 200);
    const h = resp.headers();
    assert.match(h['content-security-policy'], /default-src 'none'/);
    assert.match(h['content-security-policy'], /style-src 'sha256-[A-Za-z0-9+/]+=*'/);
    assert.match(h['content-security-policy'], /frame-ancestors 'none'/);
    assert.match(h['content-security-policy'], new RegExp(`form-action 'self' http://127\\.0\\.0\\.1:${callbackPort}(;|$)`));
    assert.equal(h['x-frame-options'], 'DENY');
    assert.equal(h['referrer-policy'], 'no-referrer');
    assert.equal(h['cache-control'], 'no-store');

    // The client name is shown as text, escaped, never as markup.
    const shown = await page.locator('.who strong').first().textContent();
    assert.equal(shown, name);
    assert.equal(await page.locator('.who b').count(), 0);
    assert.match(await page.locator('.who').textContent(), new RegExp(`127\\.0\\.0\\.1:${callbackPort}`));
    // The style block applied under the CSP (hash matches), and no horizontal scrolling on a phone.
    // Values a browser's defaults never give: main's max-width (26rem) and,
    // on a phone, the narrow screen's full height.
    const styled = await page.evaluate(() => {
      const m = getComputedStyle(document.querySelector('main'));
      return `${m.maxWidth} ${m.minHeight} ${window.innerHeight}px`;
    });
    const [maxWidth, minHeight, screen] = styled.split(' ');
    assert.equal(maxWidth, '416px', `the style block applied: ${styled}`);
    assert.equal(minHeight, screen, `the phone rule applied: ${styled}`);
    const fits = await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
    assert.ok(fits, 'fits a 375 px wide screen');
    const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    assert.equal(bg, 'rgb(244, 245, 247)', 'the inline style is allowed by its hash');

    await page.fill('#key', srv.key);
    const [req] = await Promise.all([
      page.waitForRequest((r) => r.url().startsWith(redirectUri), { timeout: 15000 }),
      page.click('button[value=allow]'),
    ]);
    const back = new URL(req.url());
    assert.equal(back.searchParams.get('state'), 'browser-state');
    assert.equal(back.searchParams.get('iss'), srv.url);
    const code = back.searchParams.get('code');
    assert.ok(code);
    await page.waitForLoadState('load');
    assert.ok(received.some((u) => u.includes(`code=${encodeURIComponent(code)}`) || u.includes(`code=${code}`)), 'the callback server got the code');
    assert.deepEqual(violations, [], 'no CSP violations');

    const t = await tokenRequest(srv, { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri, client_id: client.client_id });
    assert.equal(t.status, 200, t.text);
    const m = await http(srv, { body: initializeBody(), headers: { authorization: `Bearer ${t.json.access_token}` } });
    assert.equal(m.status, 200);
    await page.close();
  });

  it('a wrong key in the browser shows the error on the page and goes nowhere', async () => {
    const redirectUri = `http://127.0.0.1:${callbackPort}/callback`;
    const client = (await register(srv, { redirect_uris: [redirectUri], token_endpoint_auth_method: 'none', client_name: 'Wrong key' })).json;
    const { challenge } = pkce();
    const page = await browser.newPage();
    await page.goto(authorizeUrl(srv, { clientId: client.client_id, redirectUri, challenge }).toString());
    const before = received.length;
    await page.fill('#key', 'definitely-not-the-key');
    const [resp] = await Promise.all([page.waitForNavigation(), page.click('button[value=allow]')]);
    assert.equal(resp.status(), 403);
    assert.match(await page.locator('.err').textContent(), /Wrong key/);
    assert.equal(received.length, before, 'no redirect');
    assert.ok(page.url().startsWith(srv.url));
    await page.close();
  });
});
