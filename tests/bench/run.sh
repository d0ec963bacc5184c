#!/bin/sh
# make bench: measure code-sandbox against the Docker engine it wraps, in
# one run, through real lighttpd with the normal build (build/bin):
#   1. execute of `true` end to end (MCP tools/call over HTTP, keep-alive)
#      against the raw Docker API calls (exec create + start + inspect) and
#      against `docker exec`;
#   2. tools/list requests per second at concurrency 8 (wrk);
#   3. the /mcp workers' peak RSS while a command prints 1 GB.
# A server of its own on a free loopback port, with its own container.
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
exec node tests/bench/bench.mjs "$@"
