#!/bin/sh
# Serve code-sandbox in the foreground: tests/setup/serve.sh [lighttpd|caddy]
#
#   lighttpd   lighttpd.conf: lighttpd starts the FastCGI programs itself
#   caddy      caddy/Caddyfile, the programs started and watched by
#              caddy/run-programs.sh; SIGTERM/SIGINT stop the programs first
#              (running streams end with a "restarting" result), then Caddy
#
# Environment (all optional):
#   CS_BIN            folder with the programs (default build/bin)
#   CS_RUN            runtime folder for sockets and logs (default /run/code-sandbox)
#   SANDBOX_ENV_FILE  settings file (default .env at the top of the tree)
#   SANDBOX_HOST, SANDBOX_PORT  override the settings file (default 127.0.0.1:8891)
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
server=${1:-lighttpd}

abspath() {
	case "$1" in
		/*) printf '%s\n' "$1" ;;
		*) printf '%s/%s\n' "$(pwd)" "$1" ;;
	esac
}

cd "$top"
CS_BIN=$(abspath "${CS_BIN:-build/bin}")
CS_RUN=$(abspath "${CS_RUN:-/run/code-sandbox}")
SANDBOX_ENV_FILE=$(abspath "${SANDBOX_ENV_FILE:-.env}")
export CS_BIN CS_RUN SANDBOX_ENV_FILE

if [ ! -f "$SANDBOX_ENV_FILE" ]; then
	echo "serve: no settings file $SANDBOX_ENV_FILE (make setup creates .env)" >&2
	exit 1
fi
if [ ! -x "$CS_BIN/mcp" ]; then
	echo "serve: $CS_BIN/mcp is missing (run make)" >&2
	exit 1
fi

# One setting from the environment, else the settings file (last one wins,
# as the programs read it), else a default. Only ever used for non-secrets.
setting() {
	eval "v=\${$1:-}"
	if [ -z "$v" ]; then
		v=$(sed -n "s/^[[:space:]]*\(export[[:space:]]\{1,\}\)\{0,1\}$1[[:space:]]*=[[:space:]]*//p" \
			"$SANDBOX_ENV_FILE" | tail -n 1 | sed -e 's/[[:space:]]*$//' \
			-e "s/^\"\(.*\)\"\$/\1/" -e "s/^'\(.*\)'\$/\1/")
	fi
	printf '%s\n' "${v:-$2}"
}
SANDBOX_HOST=$(setting SANDBOX_HOST 127.0.0.1)
SANDBOX_PORT=$(setting SANDBOX_PORT 8891)
# The web servers read these too: lighttpd's read deadline, Caddy's
# trusted proxies (whose X-Forwarded-For it passes on).
SANDBOX_TRUSTED_PROXIES=$(setting SANDBOX_TRUSTED_PROXIES '')
SANDBOX_BODY_DEADLINE=$(setting SANDBOX_BODY_DEADLINE 30)
export SANDBOX_HOST SANDBOX_PORT SANDBOX_TRUSTED_PROXIES SANDBOX_BODY_DEADLINE

mkdir -p "$CS_RUN"
chmod 700 "$CS_RUN"

case "$SANDBOX_HOST" in
	*:*) url="http://[$SANDBOX_HOST]:$SANDBOX_PORT/mcp" ;;
	*) url="http://$SANDBOX_HOST:$SANDBOX_PORT/mcp" ;;
esac

case "$server" in
lighttpd)
	echo "code-sandbox: serving $url through lighttpd"
	echo "code-sandbox: the API key is SANDBOX_API_KEY in $SANDBOX_ENV_FILE"
	echo "code-sandbox: programs from $CS_BIN; logs in $CS_RUN (lighttpd.log, programs.log)"
	exec lighttpd -D -f "$top/lighttpd.conf"
	;;
caddy)
	command -v caddy >/dev/null 2>&1 || { echo "serve: caddy is missing (apt-get install caddy)" >&2; exit 1; }
	echo "code-sandbox: serving $url through Caddy"
	echo "code-sandbox: the API key is SANDBOX_API_KEY in $SANDBOX_ENV_FILE"
	echo "code-sandbox: programs from $CS_BIN; logs in $CS_RUN (programs.log)"
	set +e
	programs=
	caddy_pid=
	stop() {
		trap '' TERM INT HUP
		# The programs first: they end their streams, which still go out
		# through Caddy; then Caddy (its grace period covers the rest).
		if [ -n "$programs" ]; then
			kill -TERM "$programs" 2>/dev/null
			wait "$programs" 2>/dev/null
		fi
		if [ -n "$caddy_pid" ]; then
			kill -TERM "$caddy_pid" 2>/dev/null
			wait "$caddy_pid" 2>/dev/null
		fi
		exit "${1:-0}"
	}
	trap 'stop 0' TERM INT HUP
	rm -f "$CS_RUN/programs.started"
	"$top/caddy/run-programs.sh" run &
	programs=$!
	# Caddy once every program's socket is there (no 502 at start-up).
	i=0
	while [ ! -f "$CS_RUN/programs.started" ]; do
		kill -0 "$programs" 2>/dev/null || { wait "$programs"; exit 1; }
		i=$((i + 1))
		[ "$i" -le 300 ] || { echo "serve: the programs did not start within 30 s" >&2; stop 1; }
		sleep 0.1
	done
	caddy run --adapter caddyfile --config "$top/caddy/Caddyfile" &
	caddy_pid=$!
	# Until one of them ends (a background sleep lets the trap run at once).
	while kill -0 "$programs" 2>/dev/null && kill -0 "$caddy_pid" 2>/dev/null; do
		sleep 1 &
		wait $! 2>/dev/null
	done
	echo "serve: $(kill -0 "$caddy_pid" 2>/dev/null && echo caddy/run-programs.sh || echo caddy) exited" >&2
	stop 1
	;;
*)
	echo "usage: $0 lighttpd|caddy" >&2
	exit 2
	;;
esac
