#!/bin/sh
# The /dl benchmark: download throughput of a 1 GB file through lighttpd (then
# Caddy) and /dl as a ratio to the Docker API's own archive stream, and /dl's
# peak RSS.
# Uses the normal build (build/bin); tests/bench/run.sh calls it, or run it
# alone after make. See tests/bench/dl.mjs for its settings.
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
[ -d tests/e2e/node_modules ] || tests/setup/packages.sh
exec node tests/bench/dl.mjs "$@"
