#!/bin/sh
# make bench: measure code-sandbox against the Docker engine it wraps, in
# one run, through real lighttpd with the normal build (build/bin):
#   1. execute of `true` end to end (MCP tools/call over HTTP, keep-alive)
#      against the raw Docker API calls (exec create + start + inspect) and
#      against `docker exec`;
#   2. tools/list requests per second at concurrency 8 (wrk);
#   3. the /mcp workers' peak RSS while a command prints 1 GB;
# then tests/bench/dl.mjs (download links against the Docker archive API,
# behind lighttpd and Caddy, CPU per GB of each)
# tests/bench/up.mjs (upload links against the Docker archive PUT, behind
# lighttpd and Caddy, with the up program's peak RSS)
# and tests/bench/streaming.mjs, behind lighttpd and behind Caddy:
#   4. a printed line to its progress notification at the client, against
#      the raw Docker exec stream of the same command;
#   5. JSON-RPC ping p50/p99 while 32 long commands stream, as a ratio to an
#      idle server;
# tests/bench/eras.mjs: 2026-07-28 stateless requests against 2025
# session requests on one server (tools/list, execute of `true`);
# tests/bench/teams.mjs: execute in SANDBOX_SCOPE=person against shared,
# and the first call after an idle stop against a warm one;
# tests/bench/lean.mjs: tools/list and ping CPU per request, p99 and rate
# against the Node reference server (tests/bench/reference/, the official
# TypeScript SDK v1), PSS of lighttpd and every program idle and under that
# load, Caddy's own memory, and plain CGI's cost per request.
# Each part starts a server of its own on a free loopback port, with its
# own container. tests/bench/run.sh NAME... runs only those parts (bench,
# dl, up, streaming, eras, teams, lean, supervisor: commands under the
# supervisor against the Engine API floor, interleaved,
# tests/bench/supervisor.mjs; close: a closed 2026 stream to its command
# killed, behind lighttpd and Caddy, tests/bench/close.mjs; tail: execute
# p99 at concurrency 1 against its p50 and the Node reference's p99,
# tests/bench/tail.mjs; terminal: time to echo on a terminal and through
# its link against execute, tests/bench/terminal.mjs; snapshots: snapshot
# and restore of 1 GB in 10,000 files against the engine's commit and
# archive GET and PUT, interleaved, tests/bench/snapshots.mjs).
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"

if ! command -v wrk >/dev/null 2>&1; then
	echo "bench: installing wrk"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null 2>&1 || {
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null
	}
fi
[ -d tests/e2e/node_modules ] || tests/setup/packages.sh
[ $# -gt 0 ] || set -- bench dl up streaming eras teams lean supervisor close base tail terminal preview snapshots
rc=0
for part in "$@"; do
	[ -f "tests/bench/$part.mjs" ] || { echo "bench: no tests/bench/$part.mjs" >&2; rc=1; continue; }
	echo
	node "tests/bench/$part.mjs" || rc=1
done
exit "$rc"
