#!/bin/sh
# Build the sandbox image named by SANDBOX_IMAGE (default code-sandbox:latest)
# if it is missing, if it lacks the toolset (an older, smaller build under
# the same name: its label org.code-sandbox.toolset is not "1"), or if what
# goes into it changed: each image this script makes carries the label
# org.code-sandbox.inputs, the content hash of its inputs (the Dockerfile it
# was built from; for the local build also the debootstrap base's inputs:
# its suite and variant, below), and is rebuilt when the hash differs. The
# image it replaced is removed (unless a container still uses it), and so
# are untagged images with that label left from earlier builds.
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
#   build-image.sh --check      0 when the full image is there and up to date
#   build-image.sh --inputs     print the content hashes: "base H", "local H"
#                               (Dockerfile.local: core and full image) and
#                               "unified H"
#
# Other names, for trying the script beside images in use: CS_CORE_IMAGE
# (code-sandbox:core), CS_BASE_IMAGE (code-sandbox-base:bookworm);
# CS_IMAGE_DIR, the folder with the Dockerfiles (this one);
# CS_IMAGE_REGISTRY=no, build locally without asking a registry.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
dir=${CS_IMAGE_DIR:-$here}
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
base=${CS_BASE_IMAGE:-code-sandbox-base:bookworm}
core=${CS_CORE_IMAGE:-code-sandbox:core}
LOCK=${CS_IMAGE_LOCK:-/var/tmp/code-sandbox-image.lock}
LOG=${CS_IMAGE_LOG:-/var/tmp/code-sandbox-image.log}
mode=${1:-}

# What the debootstrapped base is made of.
DEBOOTSTRAP_ARGS="--variant=minbase bookworm"
LABEL=org.code-sandbox.inputs

sha() {	# sha FILE...: a short content hash of the FILEs and stdin
	cat "$@" 2>/dev/null | sha256sum | cut -c1-16
}
base_hash=$(printf 'debootstrap %s\n' "$DEBOOTSTRAP_ARGS" | sha)
local_hash=$(echo "base $base_hash" | sha "$dir/Dockerfile.local" -)
unified_hash=$(sha "$dir/Dockerfile.unified" </dev/null)

label() {	# label IMAGE NAME: the image's label NAME, empty if none
	docker image inspect -f "{{ index .Config.Labels \"$2\" }}" "$1" 2>/dev/null | sed 's/^<no value>$//'
}

# Is the full image there, with its toolset, built from the inputs as they
# are now (from either Dockerfile: which one depends on the registry)?
full_ready() {
	[ "$(label "$image" org.code-sandbox.toolset)" = 1 ] || return 1
	h=$(label "$image" "$LABEL")
	[ "$h" = "$local_hash" ] || [ "$h" = "$unified_hash" ]
}

registry() {
	[ "${CS_IMAGE_REGISTRY:-}" != no ] || return 1
	timeout 30 docker pull -q python:3.13-slim >/dev/null 2>&1
}

# replaced OLD-ID TAG: after a build of TAG, remove the image it replaced
# (not when a container or another tag still uses it), and untagged images
# of earlier builds of this script.
replaced() {
	new=$(docker image inspect -f '{{.Id}}' "$2" 2>/dev/null || true)
	if [ -n "$1" ] && [ "$1" != "$new" ]; then
		docker image rm "$1" >/dev/null 2>&1 &&
			echo "build-image: removed the previous $2 (${1#sha256:})" | cut -c1-80 || true
	fi
	for id in $(docker images -q --no-trunc --filter dangling=true --filter "label=$LABEL" 2>/dev/null); do
		docker image rm "$id" >/dev/null 2>&1 || true
	done
}

id_of() {
	docker image inspect -f '{{.Id}}' "$1" 2>/dev/null || true
}

# The debootstrapped base, imported once.
ensure_base() {
	[ "$(label "$base" "$LABEL")" = "$base_hash" ] && return 0
	old=$(id_of "$base")
	command -v debootstrap >/dev/null 2>&1 ||
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
	root=$(mktemp -d /var/tmp/code-sandbox-rootfs.XXXXXX)
	trap 'rm -rf "$root"' EXIT
	echo "build-image: debootstrap bookworm (takes a minute or two)"
	# shellcheck disable=SC2086
	debootstrap $DEBOOTSTRAP_ARGS "$root" >/var/log/code-sandbox-debootstrap.log 2>&1 || {
		echo "build-image: debootstrap failed; see /var/log/code-sandbox-debootstrap.log" >&2
		exit 1
	}
	tar -C "$root" -c . | docker import --change "LABEL $LABEL=$base_hash" - "$base" >/dev/null
	rm -rf "$root"
	trap - EXIT
	replaced "$old" "$base"
}

ensure_core() {
	[ "$(label "$core" "$LABEL")" = "$local_hash" ] && return 0
	ensure_base
	old=$(id_of "$core")
	echo "build-image: building $core (Dockerfile.local, stage core)"
	docker build -q --build-arg BASE="$base" --label "$LABEL=$local_hash" --target core \
		-f "$dir/Dockerfile.local" -t "$core" "$dir" >/dev/null
	replaced "$old" "$core"
}

build_full() {
	old=$(id_of "$image")
	if registry; then
		echo "build-image: registry reachable; building $image from Dockerfile.unified"
		docker build -q --label "$LABEL=$unified_hash" -f "$dir/Dockerfile.unified" \
			-t "$image" "$dir" >/dev/null
		echo "build-image: built $image (full image, Dockerfile.unified)"
	else
		echo "build-image: no container registry reachable; building $image from a local Debian base"
		ensure_core
		docker build -q --build-arg BASE="$base" --label "$LABEL=$local_hash" \
			-f "$dir/Dockerfile.local" -t "$image" "$dir" >/dev/null
		echo "build-image: built $image (Debian bookworm base, Dockerfile.local, with the toolset)"
	fi
	replaced "$old" "$image"
}

case "$mode" in
--check) full_ready ;;
--inputs) printf 'base %s\nlocal %s\nunified %s\n' "$base_hash" "$local_hash" "$unified_hash" ;;
--wait)
	# A background build holds the lock until it ends.
	flock "$LOCK" true
	if full_ready; then exit 0; fi
	echo "build-image: $image is not there or not built from the Dockerfiles as they are now (containers/build-image.sh builds it); see $LOG" >&2
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
*) echo "usage: $0 [--force|--background|--wait|--check|--inputs]" >&2; exit 2 ;;
esac
