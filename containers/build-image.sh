#!/bin/sh
# Build the sandbox image named by SANDBOX_IMAGE (default code-sandbox:latest) if
# it is missing. SANDBOX_IMAGE is read as the programs read it: from the
# environment, else from the settings file (SANDBOX_ENV_FILE; else .env at
# the top of the source tree; else /etc/code-sandbox/env when installed). With a reachable container registry it builds Dockerfile.unified
# (python:3.13-slim based, the full tool set). Without one it makes a Debian
# bookworm base with debootstrap, imports it, and builds Dockerfile.local on it
# with what Debian's packages provide. Pass --force to rebuild anyway.
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
force=0
[ "${1:-}" = "--force" ] && force=1

if [ "$force" = 0 ] && docker image inspect "$image" >/dev/null 2>&1; then
	exit 0
fi

if timeout 30 docker pull -q python:3.13-slim >/dev/null 2>&1; then
	echo "build-image: registry reachable; building $image from Dockerfile.unified"
	docker build -q -f "$here/Dockerfile.unified" -t "$image" "$here"
	echo "build-image: built $image (full image, Dockerfile.unified)"
	exit 0
fi

echo "build-image: no container registry reachable; building $image from a local Debian base"
if ! docker image inspect "$base" >/dev/null 2>&1; then
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
fi
docker build -q --build-arg BASE="$base" -f "$here/Dockerfile.local" -t "$image" "$here" >/dev/null
echo "build-image: built $image (Debian bookworm base, Dockerfile.local)"
