#!/bin/sh
# Build the sandbox image named by SANDBOX_IMAGE (default code-sandbox:latest)
# if it is missing, or if it lacks the toolset (an older, smaller build under
# the same name: its label org.code-sandbox.toolset is not "1").
# SANDBOX_IMAGE is read as the programs read it: from the environment, else
# from the settings file (SANDBOX_ENV_FILE; else .env at the top of the
# source tree; else /etc/code-sandbox/env when installed).
#
# With a reachable container registry it builds Dockerfile.unified
# (python:3.13-slim based). Without one it makes a Debian bookworm base with
# debootstrap, imports it, and builds Dockerfile.local on it: first its
# "core" stage, tagged code-sandbox:core (shell, Python, Node.js, compilers),
# then the full image with the toolset (ffmpeg, pandoc, ImageMagick,
# Chromium, Python's data libraries; build times and sizes in
# docs/performance.md).
#
#   build-image.sh              the full image, now
#   build-image.sh --force      rebuild it anyway
#   build-image.sh --background the core image now (tests that do not need
#                               the toolset run on it), the full image in the
#                               background (log: $LOG); returns at once
#   build-image.sh --wait       wait for a background build; 0 when the full
#                               image is there
set -eu

here=$(cd "$(dirname "$0")" && pwd)
envfile=${SANDBOX_ENV_FILE:-}
if [ -z "$envfile" ]; then
	if [ -f "$here/../.env" ] && [ -f "$here/../Makefile" ]; then
		envfile=$here/../.env
	else
		envfile=/etc/code-sandbox/env
	fi
fi
if [ -n "${SANDBOX_ENV_FILE:-}" ] && [ ! -f "$envfile" ]; then
	echo "build-image: the settings file $envfile does not exist" >&2
	exit 1
fi
image=${SANDBOX_IMAGE:-}
if [ -z "$image" ] && [ -r "$envfile" ]; then
	# The last SANDBOX_IMAGE= line wins, as in the programs; quotes dropped.
	image=$(sed -n 's/^[[:space:]]*\(export[[:space:]]\{1,\}\)\{0,1\}SANDBOX_IMAGE[[:space:]]*=[[:space:]]*//p' \
		"$envfile" | tail -n 1 | sed -e 's/[[:space:]]*$//' \
		-e "s/^\"\(.*\)\"\$/\1/" -e "s/^'\(.*\)'\$/\1/")
fi
image=${image:-code-sandbox:latest}
base=code-sandbox-base:bookworm
core=code-sandbox:core
LOCK=${CS_IMAGE_LOCK:-/var/tmp/code-sandbox-image.lock}
LOG=${CS_IMAGE_LOG:-/var/tmp/code-sandbox-image.log}
mode=${1:-}

# Is the full image there (with its toolset)?
full_ready() {
	[ "$(docker image inspect -f '{{ index .Config.Labels "org.code-sandbox.toolset" }}' \
		"$image" 2>/dev/null)" = 1 ]
}

registry() {
	timeout 30 docker pull -q python:3.13-slim >/dev/null 2>&1
}

# The debootstrapped base, imported once.
ensure_base() {
	docker image inspect "$base" >/dev/null 2>&1 && return 0
	command -v debootstrap >/dev/null 2>&1 ||
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
	root=$(mktemp -d /var/tmp/code-sandbox-rootfs.XXXXXX)
	trap 'rm -rf "$root"' EXIT
	echo "build-image: debootstrap bookworm (takes a minute or two)"
	debootstrap --variant=minbase bookworm "$root" >/var/log/code-sandbox-debootstrap.log 2>&1 || {
		echo "build-image: debootstrap failed; see /var/log/code-sandbox-debootstrap.log" >&2
		exit 1
	}
	tar -C "$root" -c . | docker import - "$base" >/dev/null
	rm -rf "$root"
	trap - EXIT
}

ensure_core() {
	docker image inspect "$core" >/dev/null 2>&1 && return 0
	ensure_base
	echo "build-image: building $core (Dockerfile.local, stage core)"
	docker build -q --build-arg BASE="$base" --target core -f "$here/Dockerfile.local" \
		-t "$core" "$here" >/dev/null
}

build_full() {
	if registry; then
		echo "build-image: registry reachable; building $image from Dockerfile.unified"
		docker build -q -f "$here/Dockerfile.unified" -t "$image" "$here" >/dev/null
		echo "build-image: built $image (full image, Dockerfile.unified)"
		return 0
	fi
	echo "build-image: no container registry reachable; building $image from a local Debian base"
	ensure_core
	docker build -q --build-arg BASE="$base" -f "$here/Dockerfile.local" -t "$image" "$here" >/dev/null
	echo "build-image: built $image (Debian bookworm base, Dockerfile.local, with the toolset)"
}

case "$mode" in
--wait)
	# A background build holds the lock until it ends.
	flock "$LOCK" true
	if full_ready; then exit 0; fi
	echo "build-image: $image is not there; see $LOG" >&2
	exit 1
	;;
--background)
	full_ready && exit 0
	ensure_core
	# One background build at a time (the lock is held until it ends).
	if flock -n "$LOCK" true; then
		echo "build-image: building $image in the background (log: $LOG)"
		setsid flock "$LOCK" "$0" >"$LOG" 2>&1 </dev/null &
		# Let the child take the lock before --wait can look.
		i=0
		while flock -n "$LOCK" true && [ $i -lt 50 ]; do
			sleep 0.1
			i=$((i + 1))
		done
	fi
	exit 0
	;;
--force) build_full ;;
'') full_ready || build_full ;;
*) echo "usage: $0 [--force|--background|--wait]" >&2; exit 2 ;;
esac
