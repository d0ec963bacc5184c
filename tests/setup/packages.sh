#!/bin/sh
# Install what code-sandbox needs, when missing:
#   tests/setup/packages.sh serve   to build and serve (make run)
#   tests/setup/packages.sh [test]  that, and the tests' tools: nginx and Apache
#                                   with mod_fcgid (fronts the tests also run
#                                   behind), Chromium, unzip,
#                                   man-db, socat, shellcheck (the start-up
#                                   scripts' lint), Node.js and the end-to-end
#                                   tests' Node packages (tests/e2e,
#                                   package-lock.json)
# Debian packages come from apt-get (update only when something is missing).
# Idempotent: a second run installs nothing and prints nothing.
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
what=${1:-test}

pkgs="build-essential pkg-config libfcgi-dev libfcgi-bin libjson-c-dev
libcurl4-openssl-dev libssl-dev libsqlite3-dev libvterm-dev sqlite3 lighttpd caddy
spawn-fcgi docker.io debootstrap curl ca-certificates openssl squid-openssl"
case "$what" in
serve) ;;
test) pkgs="$pkgs nginx apache2 libapache2-mod-fcgid chromium socat clang unzip man-db shellcheck" ;;
*) echo "usage: $0 [serve|test]" >&2; exit 2 ;;
esac

missing=
for p in $pkgs; do
	if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q ' installed$'; then
		missing="$missing $p"
	fi
done
# Node.js and npm may come from another packaging of Node (its npm is then
# not a Debian package): only install Debian's when the commands are missing.
if [ "$what" = test ]; then
	command -v node >/dev/null 2>&1 || missing="$missing nodejs"
	command -v npm >/dev/null 2>&1 || missing="$missing npm"
fi

if [ -n "$missing" ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "packages: missing:$missing (run as root to install them)" >&2
		exit 1
	fi
	echo "packages: installing$missing"
	export DEBIAN_FRONTEND=noninteractive NEEDRESTART_SUSPEND=1
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq $missing >/dev/null
fi

# The fixed-size /sandbox test (tests/e2e/disk.test.mjs) needs a loop
# device: load the module where the machine lets us.
if [ "$what" = test ] && ! losetup -f >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
	modprobe loop 2>/dev/null || echo "packages: no loop device here (the fixed-size /sandbox test will be skipped)" >&2
fi

# The e2e tests' packages (the MCP SDK client, playwright-core). Reinstall
# when node_modules is missing or older than the lock file.
[ "$what" = test ] || exit 0
e2e="$top/tests/e2e"
stamp="$e2e/node_modules/.package-lock.json"
if [ ! -f "$stamp" ] || [ "$e2e/package-lock.json" -nt "$stamp" ] ||
   [ "$e2e/package.json" -nt "$stamp" ]; then
	echo "packages: installing tests/e2e node modules"
	(cd "$e2e" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
fi
