#!/bin/sh
# Make sure a Docker engine answers on DOCKER_HOST (default the local unix socket).
# Starts a local dockerd when none answers; copes with a stale pid file left by
# a killed daemon. Prints nothing on success when an engine was already running.
set -eu

sock=/var/run/docker.sock
case "${DOCKER_HOST:-}" in
	""|unix://*) h=${DOCKER_HOST:-}; sock=${h#unix://}; sock=${sock:-/var/run/docker.sock} ;;
	*) echo "ensure-docker: remote engine ${DOCKER_HOST}: not starting a local one"; exit 0 ;;
esac

ping() {
	curl -fsS --max-time 3 --unix-socket "$sock" http://localhost/_ping >/dev/null 2>&1
}

ping && exit 0

if ! command -v dockerd >/dev/null 2>&1; then
	echo "ensure-docker: installing docker.io"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io >/dev/null
fi

# A dockerd that was killed leaves its pid file behind; a new one refuses to start.
if [ -f /var/run/docker.pid ]; then
	pid=$(cat /var/run/docker.pid 2>/dev/null || true)
	if [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null; then
		rm -f /var/run/docker.pid
	fi
fi
rm -f /var/run/docker/containerd/containerd.pid 2>/dev/null || true

echo "ensure-docker: starting dockerd (log: /var/log/dockerd.log)"
# Its own session: a Ctrl-C on `make run` or the end of a test run must
# not take the engine down with it.
setsid nohup dockerd >>/var/log/dockerd.log 2>&1 </dev/null &

i=0
while ! ping; do
	i=$((i + 1))
	if [ "$i" -gt 60 ]; then
		echo "ensure-docker: dockerd did not answer within 60 s; see /var/log/dockerd.log" >&2
		exit 1
	fi
	sleep 1
done
echo "ensure-docker: engine ready"
# The sandbox's firewall rules after a host restart (a dockerd restart
# keeps them): those of every network netpolicy.sh applied before.
if [ "$(id -u)" = 0 ]; then
	"$(cd "$(dirname "$0")" && pwd)/netpolicy.sh" reapply >/dev/null ||
		echo "ensure-docker: netpolicy.sh reapply failed: the sandbox refuses commands until its rules are in place" >&2
fi
