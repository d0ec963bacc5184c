#!/bin/sh
# make bench: measure code-sandbox against the Docker engine it wraps, in
# one run, through real lighttpd with the normal build (build/bin):
#   1. execute of `true` end to end (MCP tools/call over HTTP, keep-alive)
#      against the raw Docker API calls (exec create + start + inspect) and
#      against `docker exec`;
#   2. tools/list requests per second at concurrency 8 (wrk);
#   3. the /mcp workers' peak RSS while a command prints 1 GB;
# then tests/bench/dl.mjs (download links against the Docker archive API)
# and tests/bench/streaming.mjs, behind lighttpd and behind Caddy:
#   4. a printed line to its progress notification at the client, against
#      the raw Docker exec stream of the same command;
#   5. JSON-RPC ping p50/p99 while 32 long commands stream, as a ratio to an
#      idle server.
# Each part starts a server of its own on a free loopback port, with its
# own container. tests/bench/run.sh NAME... runs only those parts (bench,
# dl, streaming, supervisor: commands under the supervisor against the
# Engine API floor, interleaved, tests/bench/supervisor.mjs).
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
[ $# -gt 0 ] || set -- bench dl streaming supervisor
rc=0
for part in "$@"; do
	[ -f "tests/bench/$part.mjs" ] || { echo "bench: no tests/bench/$part.mjs" >&2; rc=1; continue; }
	echo
	node "tests/bench/$part.mjs" || rc=1
done
exit "$rc"
