// Security review finding: anyone could fill the host's runtime folder
// through /up. A chunked body to a made-up upload link was spooled whole by
// the front (lighttpd into server.upload-dirs = CS_RUN, a RAM tmpfs under
// systemd; mod_fcgid into Apache's temporary folder) before the up program
// saw the request and refused the link. Now: a 64 MiB chunked body to a
// made-up link leaves at most 8 MiB spooled at any moment, behind every
// front (behind Apache: mod_fcgid and mod_proxy_fcgi), and a stranger's
// /mcp body with a length is refused before the front reads it.
//
// What is measured, sampled while the body is sent: the regular files in
// the runtime folder (CS_RUN), in the test's SANDBOX_SPOOL_DIR and in the
// front's TMPDIR (both the test's own folders), plus any file the front's
// processes (and the programs) hold open that is already unlinked (nginx
// and mod_fcgid unlink theirs at once).

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, readdirSync, readlinkSync, rmSync, statSync, lstatSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { startServer, childPids, sleep, WEB } from './lib/server.mjs';

const MIB = 1 << 20;
const SENT = 64 * MIB;
const BOUND = 8 * MIB;
const FAKE = `/up/AAAAAAAAAAAAAAAAAAAAAA/9999999999/${'A'.repeat(43)}/x.bin`;

/* Bytes in the regular files under dir (not the logs). */
function folderBytes(dir, seen) {
  let n = 0;
  let names;
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  for (const f of names) {
    const p = join(dir, f);
    let st;
    try {
      st = lstatSync(p);
    } catch {
      continue;
    }
    if (st.isDirectory()) n += folderBytes(p, seen);
    else if (st.isFile() && !f.endsWith('.log') && !seen.has(st.ino)) {
      seen.add(st.ino);
      n += st.size;
    }
  }
  return n;
}

/* Every process under pid (pid included). */
function tree(pid) {
  const out = [pid];
  for (let i = 0; i < out.length; i++) out.push(...childPids(out[i]));
  return out;
}

/* Bytes spooled now: the folders, and unlinked files the processes hold. */
function spooled(srv, dirs) {
  const seen = new Set();
  let n = 0;
  for (const d of dirs) n += folderBytes(d, seen);
  for (const pid of tree(srv.proc.pid)) {
    let fds;
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        if (!readlinkSync(`/proc/${pid}/fd/${fd}`).endsWith(' (deleted)')) continue;
        const st = statSync(`/proc/${pid}/fd/${fd}`);
        if (st.isFile() && !seen.has(st.ino)) {
          seen.add(st.ino);
          n += st.size;
        }
      } catch {
        /* closed meanwhile */
      }
    }
  }
  return n;
}

/*
 * Send body bytes (1 MiB pieces) to path, chunked or with a length, while
 * sampling the spool every 20 ms. Resolves { status, text, sent, peak }
 * once the answer has come or the connection has ended.
 */
function sendAndSample(srv, dirs, { path, method = 'PUT', total = SENT, length = false, headers = {}, hold = 0 }) {
  return new Promise((resolve) => {
    let peak = 0;
    let sent = 0;
    let status = null;
    let text = '';
    let done = false;
    const sample = () => {
      if (dirs) peak = Math.max(peak, spooled(srv, dirs));
    };
    const sampler = setInterval(sample, 20);
    const finish = (why) => {
      if (done) return;
      done = true;
      // A last few samples: what the front still holds once it answered.
      setTimeout(() => {
        clearInterval(sampler);
        sample();
        req.destroy();
        resolve({ status, text, sent, peak, why });
      }, 300);
    };
    const h = { 'Content-Type': 'application/octet-stream', ...headers };
    if (length) h['Content-Length'] = String(total);
    else h['Transfer-Encoding'] = 'chunked';
    const req = request({ host: srv.host, port: srv.port, path, method, headers: h });
    req.on('response', (r) => {
      status = r.statusCode;
      r.setEncoding('utf8');
      r.on('data', (d) => (text += d));
      r.on('end', () => finish('answered'));
      r.on('error', () => finish('answer cut'));
    });
    req.on('error', (e) => finish(`connection ended: ${e.code ?? e.message}`));
    if (hold) {
      // All but the last byte, which comes after hold ms: a client that
      // trickles its body keeps the front holding what came.
      req.write(Buffer.alloc(total - 1, 0x5a));
      sent = total - 1;
      setTimeout(() => {
        if (!done) req.end(Buffer.alloc(1, 0x5a));
      }, hold);
      setTimeout(() => finish('timed out'), 120000);
      return;
    }
    const piece = Buffer.alloc(MIB, 0x5a);
    const pump = () => {
      while (!done && sent < total) {
        sent += piece.length;
        if (!req.write(piece)) {
          req.once('drain', pump);
          return;
        }
      }
      if (!done && sent >= total) req.end();
    };
    pump();
    // Bounded: whatever happens, the sample ends within two minutes.
    setTimeout(() => finish('timed out'), 120000);
  });
}

// The answers that mean refused. Caddy's FastCGI transport sends the whole
// body before it reads the answer: when the program has answered 403 and
// its lingering close (2 s, lib/http/out.c) ends before Caddy is done
// sending 64 MiB (a loaded host), Caddy answers 502 instead. Either way
// nothing was stored.
const refused = (web) => (web === 'caddy' ? [403, 411, 413, 500, 502] : [403, 411, 413, 500]);

const fronts = WEB === 'apache' ? ['apache', 'apache-proxy'] : [WEB];

for (const web of fronts) {
  describe(`body spool behind ${web}`, () => {
    let srv;
    let spool;
    let tmp;
    before(async () => {
      // The front's temporary folder and the spool folder, the test's own.
      const ids = { spool: `${process.pid}-${Math.random().toString(36).slice(2)}` };
      spool = join('/var/tmp', `cs-e2e-spool-${ids.spool}`);
      tmp = join('/var/tmp', `cs-e2e-tmp-${ids.spool}`);
      for (const d of [spool, tmp]) {
        mkdirSync(d);
        chmodSync(d, 0o1777);
      }
      srv = await startServer({
        name: 'spool',
        web,
        settings: { SANDBOX_SPOOL_DIR: spool },
        env: { SANDBOX_SPOOL_DIR: spool, TMPDIR: tmp },
      });
    });
    after(async () => {
      await srv?.stop();
      for (const d of [spool, tmp]) if (d) rmSync(d, { recursive: true, force: true });
    });

    it('anyone can fill the runtime folder through /up: no longer, a 64 MiB chunked body to a made-up link spools at most 8 MiB', async () => {
      const dirs = [srv.runDir, spool, tmp];
      const base = spooled(srv, dirs);
      const r = await sendAndSample(srv, dirs, { path: FAKE });
      const grew = r.peak - base;
      assert.ok(grew <= BOUND, `${(grew / MIB).toFixed(1)} MiB spooled at the peak (${r.sent / MIB} MiB sent, ${r.why}, status ${r.status})`);
      // Refused, never stored: the link's 403, or the front's 411/413 (a
      // body without a length), or 500 (mod_fcgid past FcgidMaxRequestLen),
      // or the connection ended by the front.
      if (r.status !== null) assert.ok(refused(web).includes(r.status), `status ${r.status}: ${r.text}`);
      if (r.status === 411 || r.status === 413) {
        if (web === 'lighttpd') assert.match(r.text, /Content-Length|length/i, r.text);
      }
      // Still serving, and nothing left behind.
      await sleep(500);
      const again = await fetch(`${srv.url}${FAKE}`, { method: 'PUT', body: 'x' });
      assert.equal(again.status, 403);
      assert.ok(spooled(srv, dirs) - base < MIB, 'the spool is empty again');
    });

    it('the same body with a length: at most 8 MiB spooled', async () => {
      const dirs = [srv.runDir, spool, tmp];
      const base = spooled(srv, dirs);
      const r = await sendAndSample(srv, dirs, { path: FAKE, length: true });
      const grew = r.peak - base;
      assert.ok(grew <= BOUND, `${(grew / MIB).toFixed(1)} MiB spooled at the peak (${r.sent / MIB} MiB sent, ${r.why}, status ${r.status})`);
      if (r.status !== null) assert.ok(refused(web).filter((s) => s !== 411).includes(r.status), `status ${r.status}: ${r.text}`);
    });

    it('a stranger\'s /mcp bodies (1 MiB each, 16 at once, with a length, the last byte held back) spool at most 8 MiB', { skip: web === 'apache' && 'mod_fcgid reads each body (up to the /mcp cap, 1088 KiB) before the program: docs/operating.md' }, async () => {
      const dirs = [srv.runDir, spool, tmp];
      const base = spooled(srv, dirs);
      let peak = 0;
      const sampler = setInterval(() => (peak = Math.max(peak, spooled(srv, dirs))), 20);
      const rs = await Promise.all(Array.from({ length: 16 }, () => sendAndSample(srv, null, {
        path: '/mcp', method: 'POST', total: MIB, length: true, hold: 2000, headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      })));
      clearInterval(sampler);
      const grew = peak - base;
      assert.ok(grew <= BOUND, `${(grew / MIB).toFixed(1)} MiB spooled at the peak`);
      for (const r of rs) if (r.status !== null) assert.equal(r.status, 401, r.text);
    });
  });
}
