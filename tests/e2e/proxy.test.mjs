// The egress proxy and secrets, seen from inside the sandbox
// (docs/secrets.md). The test makes everything it talks to on this
// machine: its own network and rules (containers/netpolicy.sh with the
// proxy's ports), a network namespace holding an HTTPS server with its own
// test CA (trusted by the proxy as if it were a public one:
// SANDBOX_PROXY_CA) and public-looking names given to it through the
// proxy's hosts file (SANDBOX_PROXY_HOSTS_FILE), and the proxy itself
// (containers/proxy.sh run). No traffic leaves the machine.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { appendFileSync, chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect as tcpConnect, createServer } from 'node:net';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { docker, startServer, TOP, waitFor } from './lib/server.mjs';
import { connect, http, resultText } from './lib/client.mjs';
import { TestProvider, connectOAuth } from './lib/oauth.mjs';
import { netpolicy, ctl, testName, hostAddress, loAddresses, run, status } from './lib/hostile.mjs';

const VALUE = `tok-${randomBytes(12).toString('hex')}`;
const GIT_PASSWORD = `gitpw-${randomBytes(10).toString('hex')}`;
const LL = '169.254.78.9';	// a link-local test address on lo

async function sh(conn, command) {
  const res = await conn.execute({ command, timeout: 120 });
  assert.notEqual(res.isError, true, resultText(res));
  return res.structuredContent;
}

/* A 2026-07-28 request over raw HTTP (tests/e2e/tasks.test.mjs says more). */
function modern(srv, method, params) {
  const V = '2026-07-28';
  const TASKS = 'io.modelcontextprotocol/tasks';
  return http(srv, {
    body: {
      jsonrpc: '2.0', id: 1, method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': V,
          'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } },
          'io.modelcontextprotocol/clientInfo': { name: 'raw-2026', version: '1.0.0' },
        },
      },
    },
    headers: { 'mcp-protocol-version': V, 'mcp-method': method, 'mcp-name': params.name ?? params.taskId },
    timeout: 60000,
  });
}

function canConnect(host, port) {
  return new Promise((res) => {
    const s = tcpConnect({ host, port }, () => { s.destroy(); res(true); });
    s.on('error', () => res(false));
  });
}

describe('egress proxy with secrets', () => {
  const net = testName('proxy');
  const tag = randomBytes(2).toString('hex');
  const ns = `cs-e2e-px-${tag}`;
  const vethHost = `cspx${tag}a`;
  const vethNs = `cspx${tag}b`;
  const octet = 16 + (randomBytes(1)[0] % 200);
  const hostSide = `10.203.${octet}.1`;
  const addr = `10.203.${octet}.2`;
  const port = 20000 + 3 * (randomBytes(2).readUInt16BE() % 5000);
  const dir = mkdtempSync(join(tmpdir(), 'cs-e2e-proxy-'));
  const state = join(dir, 'np');
  const log = join(dir, 'server.log');
  let srv, conn, server, proxy, unLo, gateway, pset;

  const seen = () => readFileSync(log, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  // The proxy reads the settings and secrets of one server: srv, or the
  // person-scope server of the last describe.
  const startProxy = (of = srv) => {
    proxy = spawn(join(TOP, 'containers/proxy.sh'), ['run'], {
      env: { ...process.env, SANDBOX_ENV_FILE: of.envFile, CS_SANDBOXCTL: join(of.bin, 'sandboxctl') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    proxy.out = '';
    proxy.stdout.on('data', (d) => (proxy.out += d));
    proxy.stderr.on('data', (d) => (proxy.out += d));
    return waitFor(() => canConnect(gateway, port), { timeout: 30000, what: 'the proxy listening' })
      .catch((e) => { throw new Error(`${e.message}; containers/proxy.sh said: ${proxy.out}`); });
  };
  const stopProxy = async () => {
    if (!proxy || proxy.exitCode !== null) return;
    const done = new Promise((r) => proxy.once('exit', r));
    proxy.kill('SIGTERM');
    await done;
  };

  before(async () => {
    chmodSync(dir, 0o711);	// the proxy's user passes through to its folder
    // The test CA and the server's certificate for the test names.
    const o = (args) => run('openssl', args);
    let r = await o(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-keyout', join(dir, 'ca.key'), '-out', join(dir, 'ca.pem'), '-subj', '/CN=cs e2e test CA', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign']);
    assert.equal(r.code, 0, r.stderr);
    r = await o(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'srv.key'), '-out', join(dir, 'srv.csr'), '-subj', '/CN=api.example.test']);
    assert.equal(r.code, 0, r.stderr);
    writeFileSync(join(dir, 'ext.cnf'), 'subjectAltName=DNS:api.example.test,DNS:other.example.test,DNS:git.example.test\n');
    r = await o(['x509', '-req', '-in', join(dir, 'srv.csr'), '-CA', join(dir, 'ca.pem'), '-CAkey', join(dir, 'ca.key'), '-CAcreateserial', '-days', '2', '-out', join(dir, 'srv.pem'), '-extfile', join(dir, 'ext.cnf')]);
    assert.equal(r.code, 0, r.stderr);
    // A git repository for the Basic test.
    r = await run('sh', ['-c', `set -e; git init -q --bare ${dir}/git/repo.git; git init -q ${dir}/w; cd ${dir}/w; echo private > README; git add README; git -c user.email=t@t -c user.name=t commit -qm one; git push -q ${dir}/git/repo.git HEAD:refs/heads/main; git -C ${dir}/git/repo.git symbolic-ref HEAD refs/heads/main`]);
    assert.equal(r.code, 0, r.stderr);
    // The namespace and its server.
    for (const c of [['netns', 'add', ns], ['link', 'add', vethHost, 'type', 'veth', 'peer', 'name', vethNs], ['link', 'set', vethNs, 'netns', ns], ['addr', 'add', `${hostSide}/30`, 'dev', vethHost], ['link', 'set', vethHost, 'up'], ['-n', ns, 'addr', 'add', `${addr}/30`, 'dev', vethNs], ['-n', ns, 'link', 'set', vethNs, 'up'], ['-n', ns, 'link', 'set', 'lo', 'up']]) {
      r = await run('ip', c);
      assert.equal(r.code, 0, `ip ${c.join(' ')}: ${r.stderr}`);
    }
    writeFileSync(log, '');
    server = spawn('ip', ['netns', 'exec', ns, process.execPath, join(TOP, 'tests/e2e/lib/tlsecho.mjs'), join(dir, 'srv.pem'), join(dir, 'srv.key'), addr, log, join(dir, 'git')], { env: { ...process.env, TOKEN: VALUE, GIT_PASSWORD }, stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise((res) => server.stdout.once('data', res));
    unLo = await loAddresses([LL]);
    const host = hostAddress();
    writeFileSync(join(dir, 'hosts'), `${addr} api.example.test other.example.test git.example.test x.sub.example.test\n127.0.0.1 loop.example.test\n${host} host.example.test\n${LL} ll.example.test\n`);
    r = await netpolicy(['apply', '--network', net, '--policy', 'internet', '--allow', `${addr}/32`, '--proxy-port', String(port)], state);
    assert.equal(r.code, 0, r.stderr);
    gateway = (await run('docker', ['network', 'inspect', '-f', '{{(index .IPAM.Config 0).Gateway}}', net])).stdout.trim();
    pset = {
      SANDBOX_NETWORK: net, SANDBOX_EGRESS_ALLOW: `${addr}/32`, SANDBOX_PROXY: '1',
      SANDBOX_PROXY_PORT: String(port), SANDBOX_PROXY_DIR: join(dir, 'proxy'),
      SANDBOX_PROXY_CA: join(dir, 'ca.pem'), SANDBOX_PROXY_HOSTS_FILE: join(dir, 'hosts'),
      SANDBOX_SECRETS_KEY: join(dir, 'secrets.key'),
      // A 2026-07-28 call becomes a task after this long (the masking test).
      SANDBOX_INLINE_WAIT: 3,
    };
    srv = await startServer({ name: 'proxy', settings: pset });
    r = await ctl(srv, ['secrets', 'add', 'GH', '--host', 'api.example.test'], { input: `${VALUE}\n` });
    assert.equal(r.code, 0, r.stderr);
    r = await ctl(srv, ['secrets', 'add', 'GIT', '--host', 'git.example.test', '--basic', 'git'], { input: GIT_PASSWORD });
    assert.equal(r.code, 0, r.stderr);
    await startProxy();
    conn = await connect(srv);
  });
  after(async () => {
    await conn?.close().catch(() => {});
    await srv?.stop();
    await stopProxy();
    server?.kill('SIGTERM');
    await run('ip', ['netns', 'del', ns]);
    await run('ip', ['link', 'del', vethHost]);
    await unLo?.();
    await netpolicy(['remove', '--network', net], state);
    rmSync(dir, { recursive: true, force: true });
  });

  it('a request to a secret host gets the header; the sandbox never holds the value', async () => {
    const out = await sh(conn, 'curl -sS -w "\\n%{http_code}\\n" -H "Authorization: Bearer from-the-sandbox" https://api.example.test/echo-auth');
    assert.match(out.stdout, /\n200\n$/, out.stdout + out.stderr);
    const got = seen().filter((s) => s.path === '/echo-auth');
    assert.equal(got.at(-1).authorization, `Bearer ${VALUE}`, 'the server saw the real header, the sandbox\'s dropped');
    // Nowhere in the container: environment, processes, /etc, /sandbox.
    const rev = [...VALUE].reverse().join('');
    const look = await sh(conn, `v=$(printf %s '${rev}' | rev); { env; cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' '\\n'; } | grep -cF -f <(printf '%s\\n' "$v") || true; grep -rlsF -f <(printf '%s\\n' "$v") /etc /sandbox | head; echo done`);
    assert.equal(look.stdout.trim(), '0\ndone', look.stdout);
  });

  it('the instructions name the secrets and their hosts, never a value', async () => {
    const text = conn.client.getInstructions();
    assert.match(text, /HTTPS requests to api\.example\.test are authenticated for you \(secret GH, as Authorization\)/);
    assert.match(text, /git\.example\.test are authenticated for you \(secret GIT, as HTTP Basic/);
    assert.ok(!text.includes(VALUE) && !text.includes(GIT_PASSWORD));
  });

  it('the value the server echoes reaches the model masked', async () => {
    const out = await sh(conn, 'curl -sS https://api.example.test/token; curl -sS https://api.example.test/token | base64');
    assert.ok(!out.stdout.includes(VALUE), out.stdout);
    assert.match(out.stdout, /token=\[secret GH\]/);
    assert.ok(!out.stdout.includes(Buffer.from(`token=${VALUE}\n`).toString('base64').slice(8, 24)));
  });

  it('git over HTTPS with Basic credentials: clone works with no credential in the sandbox', async () => {
    const out = await sh(conn, 'cd /tmp && rm -rf cl && git clone -q https://git.example.test/git/repo.git cl && cat cl/README && git -C cl config --get-regexp "credential|url" || true');
    assert.match(out.stdout, /^private$/m, out.stdout + out.stderr);
    assert.ok(!out.stdout.includes(GIT_PASSWORD));
  });

  it('another host gets no header and is not intercepted: the sandbox sees the server\'s own certificate', async () => {
    const out = await sh(conn, 'curl -sS -k -v https://other.example.test/echo-auth 2>&1 | grep -E "issuer:|^\\{"');
    assert.match(out.stdout, /issuer: CN=cs e2e test CA/, out.stdout);
    const got = seen().filter((s) => s.host === 'other.example.test');
    assert.equal(got.at(-1).authorization, null);
    const mine = await sh(conn, 'curl -sS -v https://api.example.test/ 2>&1 | grep "issuer:"');
    assert.match(mine.stdout, /issuer: O=code-sandbox; CN=code-sandbox egress proxy CA/);
  });

  it('plain HTTP to a secret host gets no header', async () => {
    await sh(conn, 'curl -sS http://api.example.test/plain >/dev/null');
    const got = seen().filter((s) => s.path === '/plain');
    assert.equal(got.length, 1);
    assert.equal(got[0].authorization, null);
  });

  it('the proxy is no way around the address rules: loopback, the host and link-local are refused', async () => {
    const out = await sh(conn, 'for h in loop.example.test host.example.test ll.example.test; do printf "%s " $h; curl -s -o /dev/null -w "%{http_code}\\n" --max-time 10 http://$h/; done; curl -sS --max-time 10 https://loop.example.test/ 2>&1 | head -1');
    assert.match(out.stdout, /loop\.example\.test 403/);
    assert.match(out.stdout, /host\.example\.test 403/);
    assert.match(out.stdout, /ll\.example\.test 403/);
    assert.match(out.stdout, /CONNECT|403|refused/i);
  });

  it('over HTTPS too: CONNECT to a name resolving to loopback, the host or link-local, and TLS redirected to such an address, are refused', async () => {
    // A listener on the link-local test address's port 443 counts what reaches it.
    let reached = 0;
    const ll = createServer((s) => { reached++; s.destroy(); });
    await new Promise((res, rej) => { ll.once('error', rej); ll.listen(443, LL, res); });
    try {
      const host = hostAddress();
      const out = await sh(conn, `for h in loop.example.test host.example.test ll.example.test; do printf "%s " $h; curl -s -o /dev/null -w "%{http_connect} %{http_code}\\n" --max-time 10 https://$h/; echo " $?"; done; for a in ${LL} ${host}; do printf "%s " $a; curl -s -k --noproxy '*' -o /dev/null -w "%{http_code}" --max-time 10 https://$a/; echo " $?"; done`);
      // Refused with 403: on the CONNECT itself, or (the proxy's CA being
      // trusted) inside the tunnel it ends; or the connection fails.
      for (const h of ['loop', 'host', 'll']) assert.match(out.stdout, new RegExp(`${h}\\.example\\.test (\\d{3} 403|403 000\\s+[1-9]\\d*)`), out.stdout);
      for (const a of [LL, host]) {
        const line = out.stdout.split('\n').find((l) => l.startsWith(`${a} `));
        assert.ok(line && (/ 403 /.test(line) || / 000 [1-9]\d*$/.test(line)), `${a}: ${line}\n${out.stdout}`);
      }
      assert.equal(reached, 0, 'nothing reached the link-local listener');
    } finally {
      await new Promise((r) => ll.close(r));
    }
  });

  it('masking applies in a task\'s stored status line too', async () => {
    // Longer than SANDBOX_INLINE_WAIT (3 s here): answered as a task.
    const r = await modern(srv, 'tools/call', { name: 'execute', arguments: { command: 'curl -sS https://api.example.test/token; sleep 90' } });
    assert.equal(r.status, 200, r.text);
    const task = r.json.result;
    assert.equal(task.resultType, 'task', r.text);
    const working = await waitFor(async () => {
      const g = await modern(srv, 'tasks/get', { taskId: task.taskId });
      return g.json.result.status === 'working' && /token=/.test(g.json.result.statusMessage ?? '') && g.json.result;
    }, { timeout: 20000, interval: 1000, what: 'the output line in statusMessage' });
    assert.match(working.statusMessage, /token=\[secret GH\]/);
    assert.ok(!working.statusMessage.includes(VALUE));
    const q = (sql) => promisify(execFile)('sqlite3', ['-cmd', '.timeout 5000', srv.settings.SANDBOX_DB, sql]).then((o) => o.stdout.trim());
    assert.equal(await q(`select count(*) from run where last_line like '%${VALUE}%'`), '0');
    assert.equal(await q(`select last_line from run where id = '${task.taskId}'`), 'token=[secret GH]');
    await modern(srv, 'tasks/cancel', { taskId: task.taskId });
  });

  it('ignoring the proxy variables does not bypass it: HTTPS to the address is redirected and injected', async () => {
    const out = await sh(conn, `env -u https_proxy -u HTTPS_PROXY curl -sS --noproxy '*' --resolve api.example.test:443:${addr} -o /dev/null -w "%{http_code}\\n" https://api.example.test/direct`);
    assert.equal(out.stdout.trim(), '200', out.stdout + out.stderr);
    const got = seen().filter((s) => s.path === '/direct');
    assert.equal(got.at(-1).authorization, `Bearer ${VALUE}`);
  });

  it('a secret removed takes effect at once; the proxy survives a restart', async () => {
    let r = await ctl(srv, ['secrets', 'remove', 'GH']);
    assert.equal(r.code, 0, r.stderr);
    await waitFor(async () => {
      await sh(conn, 'curl -sS -k https://api.example.test/after-remove >/dev/null');
      return seen().filter((s) => s.path === '/after-remove').at(-1)?.authorization === null;
    }, { timeout: 15000, what: 'no header after the removal' });
    assert.equal((await status(srv)).proxy.running, true);
    await stopProxy();
    const st = await status(srv);
    assert.equal(st.proxy.running, false);
    assert.match(st.problems, /egress proxy not running/);
    r = await ctl(srv, ['secrets', 'add', 'GH', '--host', 'api.example.test'], { input: VALUE });
    assert.equal(r.code, 0, r.stderr);
    await startProxy();
    await sh(conn, 'curl -sS https://api.example.test/after-restart >/dev/null');
    assert.equal(seen().filter((s) => s.path === '/after-restart').at(-1).authorization, `Bearer ${VALUE}`);
    assert.ok(!proxy.out.includes(VALUE), 'the proxy\'s output holds no value');
    assert.ok(!readFileSync(join(dir, 'proxy', 'cache.log'), 'utf8').includes(VALUE));
  });

  it('the canary checks that HTTPS cannot bypass the proxy, and status says when it can', async () => {
    let st = await status(srv);
    assert.equal(st.egress.canary.ok, true, JSON.stringify(st.egress));
    assert.match(st.egress.canary.detail, /No route to host.*TCP port 443 sent to the egress proxy/);
    // Without the redirect of port 443, HTTPS would go straight out.
    const nat = `CSNAT-cs-${createHash('sha256').update(net).digest('hex').slice(0, 10)}`;
    const r = await run('iptables', ['-w', '10', '-t', 'nat', '-F', nat]);
    assert.equal(r.code, 0, r.stderr);
    try {
      st = await status(srv);
      assert.equal(st.egress.canary.ok, false, JSON.stringify(st.egress));
      assert.match(st.egress.canary.detail, /TCP port 443 not sent to the egress proxy.*HTTPS can bypass it/);
      assert.equal(st.exitCode, 1);
      assert.match(st.problems, /egress policy not in force/);
    } finally {
      const np = await netpolicy(['apply', '--network', net, '--policy', 'internet', '--allow', `${addr}/32`, '--proxy-port', String(port)], state);
      assert.equal(np.code, 0, np.stderr);
    }
    assert.equal((await status(srv)).egress.canary.ok, true);
  });

  it('direct TCP to an allowed address works while no host list is set', async () => {
    const out = await sh(conn, `timeout 5 bash -c 'exec 3<>/dev/tcp/${addr}/7000; head -1 <&3' || echo refused`);
    assert.equal(out.stdout.trim(), 'hi');
  });

  // The benchmark (CS_PROXY_BENCH=1): HTTPS from the sandbox to the test
  // server through the proxy with and without injection, against the same
  // requests straight to the server (its port 8443, which the packet filter
  // does not redirect), in the same run. Every request verifies the
  // certificate it is shown against the same bundle: the system's (which
  // holds the installation's CA) plus the test CA. Loading a bundle of 140
  // certificates is most of a short request's time in curl, so a reference
  // that skipped verification (-k) would charge that load to the proxy.
  it('benchmark: latency and throughput through the proxy', { skip: process.env.CS_PROXY_BENCH ? false : 'CS_PROXY_BENCH=1 runs it' }, async () => {
    const N = 20;
    const pem = readFileSync(join(dir, 'ca.pem'), 'utf8');
    await sh(conn, `cat /etc/ssl/certs/ca-certificates.crt - > /tmp/bench-ca.pem <<'PEM'\n${pem}PEM`);
    const ca = '--cacert /tmp/bench-ca.pem';
    const times = async (url, extra = '') => {
      const out = await sh(conn, `for i in $(seq ${N}); do curl -sS -o /dev/null ${extra} -w '%{time_total}\\n' '${url}'; done`);
      const t = out.stdout.trim().split('\n').map(Number).sort((a, b) => a - b);
      return t[Math.floor(t.length / 2)] * 1000;
    };
    const speed = async (url, extra = '') => {
      const out = await sh(conn, `curl -sS -o /dev/null ${extra} -w '%{speed_download}\\n' '${url}'`);
      return Number(out.stdout.trim()) / (1 << 20);
    };
    const direct = `--noproxy '*' ${ca} --resolve api.example.test:8443:${addr}`;
    const paths = {
      direct: [`https://api.example.test:8443`, direct],
      spliced: ['https://other.example.test', ca],
      injected: ['https://api.example.test', ca],
    };
    for (const [url, extra] of Object.values(paths)) await times(`${url}/`, extra);	// warm
    // Interleaved rounds; each figure is the median of the rounds, with
    // their range.
    const ROUNDS = Number(process.env.BENCH_REPS ?? 5);
    const p50 = { direct: [], spliced: [], injected: [] };
    const mbs = { direct: [], spliced: [], injected: [] };
    for (let r = 0; r < ROUNDS; r++) {
      for (const [k, [url, extra]] of Object.entries(paths)) p50[k].push(await times(`${url}/`, extra));
      if (r < 3)
        for (const [k, [url, extra]] of Object.entries(paths)) mbs[k].push(await speed(`${url}/big?mb=100`, extra));
    }
    const med = (a) => { const x = [...a].sort((p, q) => p - q); return x.length % 2 ? x[(x.length - 1) / 2] : (x[x.length / 2 - 1] + x[x.length / 2]) / 2; };
    const range = (a, f) => `${f(Math.min(...a))}..${f(Math.max(...a))}`;
    const added = (k) => p50[k].map((v, i) => v - p50.direct[i]);
    const ratio = (k) => mbs[k].map((v, i) => v / mbs.direct[i]);
    const ms1 = (v) => `${v >= 0 ? '+' : ''}${v.toFixed(1)}`;
    const x2 = (v) => v.toFixed(2);
    const line = `${ROUNDS} rounds of ${N} requests, 3 of 100 MiB; p50 ms: straight ${med(p50.direct).toFixed(1)}, ` +
      `spliced ${ms1(med(added('spliced')))} (${range(added('spliced'), ms1)}), injected ${ms1(med(added('injected')))} (${range(added('injected'), ms1)}); ` +
      `100 MiB: straight ${med(mbs.direct).toFixed(0)} MiB/s, spliced ${x2(med(ratio('spliced')))}x (${range(ratio('spliced'), x2)}), ` +
      `injected ${x2(med(ratio('injected')))}x (${range(ratio('injected'), x2)})`;
    console.log(`# bench: ${line}`);
    writeFileSync(join(TOP, 'build', 'proxy-bench.txt'), `${line}\n`);
  });

  describe('SANDBOX_EGRESS_HOSTS', () => {
    before(async () => {
      appendFileSync(srv.envFile, 'SANDBOX_EGRESS_HOSTS=api.example.test *.sub.example.test\n');
      const r = await netpolicy(['apply', '--network', net, '--policy', 'internet', '--allow', `${addr}/32`, '--proxy-port', String(port), '--hosts-only'], state);
      assert.equal(r.code, 0, r.stderr);
      await stopProxy();
      await startProxy();
    });

    it('a listed host works, with its secret', async () => {
      const out = await sh(conn, 'curl -sS -o /dev/null -w "%{http_code}\\n" https://api.example.test/hosts-ok');
      assert.equal(out.stdout.trim(), '200', out.stdout + out.stderr);
      assert.equal(seen().filter((s) => s.path === '/hosts-ok').at(-1).authorization, `Bearer ${VALUE}`);
    });

    it('an unlisted host is refused with an answer that names the setting, over HTTP and HTTPS', async () => {
      const out = await sh(conn, 'curl -s -w "\\n%{http_code}\\n" http://other.example.test/x; curl -sS -w "\\n%{http_code}\\n" --max-time 10 https://other.example.test/y 2>&1; env -u https_proxy -u HTTPS_PROXY curl -sS --noproxy "*" --resolve other.example.test:443:' + addr + ' -w "\\n%{http_code}\\n" --max-time 10 https://other.example.test/z 2>&1');
      const pages = out.stdout.split(/\n403\n/);
      assert.equal(pages.length, 4, out.stdout);
      for (const p of pages.slice(0, 3)) assert.match(p, /other\.example\.test is not one of the hosts[^]*SANDBOX_EGRESS_HOSTS/, out.stdout);
      for (const p of ['/x', '/y', '/z']) assert.equal(seen().filter((s) => s.host === 'other.example.test' && s.path === p).length, 0);
    });

    it('a listed host without a secret is not intercepted', async () => {
      const out = await sh(conn, 'curl -sS -k -v https://x.sub.example.test/ 2>&1 | grep -E "issuer:|^hello"');
      assert.match(out.stdout, /issuer: CN=cs e2e test CA/, out.stdout);
    });

    it('a direct connection to the server\'s address, bypassing the proxy, is refused at once', async () => {
      const t0 = Date.now();
      const out = await sh(conn, `timeout 5 bash -c 'exec 3<>/dev/tcp/${addr}/7000; head -1 <&3' 2>&1 || echo refused; curl -sS -k --noproxy '*' --max-time 10 https://${addr}/echo-auth 2>&1 | head -1`);
      assert.match(out.stdout, /refused/i, out.stdout);
      assert.ok(!/^hi$/m.test(out.stdout));
      // TLS to the bare address (no listed name): an error page of the
      // proxy (its first line), or a failed connection.
      assert.match(out.stdout, /curl: \(\d+\)|<!DOCTYPE html|<html>/, out.stdout);
      assert.ok(!seen().some((s) => s.host === addr && s.path === '/echo-auth'));
      assert.ok(Date.now() - t0 < 15000);
    });

    it('the canary checks that TCP other than through the proxy is refused', async () => {
      const st = await status(srv);
      assert.equal(st.egress.canary.ok, true, JSON.stringify(st.egress));
      assert.match(st.egress.canary.detail, /TCP port 443 sent to the egress proxy; TCP to 192\.0\.2\.1 port 9 refused/);
    });

    it('a proxy restart is survived', async () => {
      await stopProxy();
      await startProxy();
      const out = await sh(conn, 'curl -sS -o /dev/null -w "%{http_code}\\n" https://api.example.test/after-hosts-restart');
      assert.equal(out.stdout.trim(), '200', out.stdout + out.stderr);
    });
  });

  // Person scope (SANDBOX_SCOPE=person): an owner's own secret reaches that
  // owner's sandbox alone, told apart by the owner's fixed address on the
  // network (lib/sandbox/owneraddr.h), never by an address Docker gives
  // out again; a shared secret reaches every sandbox.
  describe('in person scope', () => {
    const OWN = `alice-${randomBytes(10).toString('hex')}`;
    const hash12 = (o) => createHash('sha256').update(o).digest('hex').slice(0, 12);
    const people = {};
    let psrv;

    before(async () => {
      let r = await netpolicy(['apply', '--network', net, '--policy', 'internet', '--allow', `${addr}/32`, '--proxy-port', String(port), '--any-host'], state);
      assert.equal(r.code, 0, r.stderr);
      psrv = await startServer({
        name: 'proxy-person',
        settings: { ...pset, SANDBOX_SCOPE: 'person', SANDBOX_ALLOW_KEY_BEARER: 0, SANDBOX_SECRETS_KEY: join(dir, 'secrets-person.key') },
      });
      r = await ctl(psrv, ['secrets', 'add', 'MINE', '--host', 'api.example.test', '--owner', 'alice', '--header', 'X-Api-Key: {}'], { input: OWN });
      assert.equal(r.code, 0, r.stderr);
      r = await ctl(psrv, ['secrets', 'add', 'SHARED', '--host', 'api.example.test'], { input: VALUE });
      assert.equal(r.code, 0, r.stderr);
      await stopProxy();
      await startProxy(psrv);
      for (const n of ['alice', 'bob']) {
        const k = await ctl(psrv, ['--json', 'keys', 'add', n]);
        assert.equal(k.code, 0, k.stderr);
        const provider = new TestProvider(psrv, { key: JSON.parse(k.stdout).key, clientName: `proxy ${n}` });
        people[n] = await connectOAuth(psrv, provider, { name: `e2e-${n}` });
      }
    });
    after(async () => {
      for (const p of Object.values(people)) await p.client.close().catch(() => {});
      await psrv?.stop();
      for (const n of ['alice', 'bob']) {
        await docker('rm', '-f', `${psrv?.container}-${hash12(n)}`).catch(() => {});
        await docker('volume', 'rm', '-f', `${psrv?.volume}-${hash12(n)}`).catch(() => {});
      }
    });

    const run = async (who, command) => {
      const r = await people[who].client.callTool({ name: 'execute', arguments: { command, timeout: 120 } }, undefined, { timeout: 180000 });
      assert.notEqual(r.isError, true, `${who}: ${resultText(r)}`);
      return r.structuredContent;
    };

    it('the owner\'s sandbox gets the owner\'s header, another owner\'s does not; the shared one reaches both', async () => {
      for (const who of ['alice', 'bob']) {
        const out = await run(who, `curl -sS -o /dev/null -w "%{http_code}\\n" https://api.example.test/person-${who}; env -u https_proxy -u HTTPS_PROXY curl -sS --noproxy '*' --resolve api.example.test:443:${addr} -o /dev/null -w "%{http_code}\\n" https://api.example.test/person-direct-${who}`);
        assert.equal(out.stdout.trim(), '200\n200', `${who}: ${out.stdout}${out.stderr}`);
      }
      for (const path of ['/person-alice', '/person-direct-alice']) {
        const got = seen().filter((s) => s.path === path).at(-1);
        assert.equal(got.xApiKey, OWN, `${path}: alice's own header`);
        assert.equal(got.authorization, `Bearer ${VALUE}`, `${path}: the shared one`);
      }
      for (const path of ['/person-bob', '/person-direct-bob']) {
        const got = seen().filter((s) => s.path === path).at(-1);
        assert.equal(got.xApiKey, null, `${path}: not alice's header`);
        assert.equal(got.authorization, `Bearer ${VALUE}`, `${path}: the shared one`);
      }
    });

    it('each owner\'s container holds its owner\'s fixed address, outside Docker\'s dynamic range', async () => {
      const range = (await run('alice', 'true'), (await docker('network', 'inspect', '-f', '{{(index .IPAM.Config 0).IPRange}}', net)).stdout.trim());
      assert.match(range, /^\d+\.\d+\.\d+\.\d+\/\d+$/);
      const ips = {};
      for (const n of ['alice', 'bob']) {
        ips[n] = (await docker('inspect', '-f', `{{(index .NetworkSettings.Networks "${net}").IPAddress}} {{(index .NetworkSettings.Networks "${net}").IPAMConfig.IPv4Address}}`, `${psrv.container}-${hash12(n)}`)).stdout.trim().split(' ');
        assert.equal(ips[n][0], ips[n][1], `${n}: the address asked for`);
      }
      assert.notEqual(ips.alice[0], ips.bob[0]);
      const inRange = (ip) => {
        const [b, bits] = range.split('/');
        const n = (x) => x.split('.').reduce((a, o) => a * 256 + Number(o), 0);
        return Math.floor(n(ip) / 2 ** (32 - bits)) === Math.floor(n(b) / 2 ** (32 - bits));
      };
      assert.ok(!inRange(ips.alice[0]) && !inRange(ips.bob[0]), `${ips.alice[0]} ${ips.bob[0]} outside ${range}`);
    });

    it('the instructions name the owner\'s own secret to that owner alone', () => {
      assert.match(people.alice.client.getInstructions(), /secret MINE/);
      assert.doesNotMatch(people.bob.client.getInstructions(), /secret MINE/);
      assert.match(people.bob.client.getInstructions(), /secret SHARED/);
    });
  });
});
