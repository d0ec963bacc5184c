#!/bin/sh
# make soak: tests/soak/soak.mjs against lighttpd, then against Caddy, with
# the release build (build/bin, or CS_BIN). SOAK_MINUTES (default 10), SOAK_CLIENTS
# (default 200), SOAK_WEB (default "lighttpd caddy"). Needs the e2e set-up
# (tests/e2e/node_modules, Docker, the sandbox image). Prints per minute
# the RSS and open file descriptors of every process of the server; the last
# line is "soak: N passed, N failed".
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
# 200 clients with streams open at once: more descriptors than a login
# shell's default.
ulimit -n 65536 2>/dev/null || ulimit -n 8192 2>/dev/null || true
passed=0
failed=0
for web in ${SOAK_WEB:-lighttpd caddy}; do
	if (cd tests/e2e && CS_BIN="${CS_BIN:-$top/build/bin}" node ../soak/soak.mjs "$web"); then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
	fi
done
echo "soak: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
