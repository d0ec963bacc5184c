#!/bin/sh
# Serve code-sandbox in the foreground: tests/setup/serve.sh [lighttpd|caddy|nginx|apache]
#
#   lighttpd   lighttpd.conf: lighttpd starts the FastCGI programs itself
#   caddy      caddy/Caddyfile, the programs started and watched by
#              containers/run-programs.sh; SIGTERM/SIGINT stop the programs
#              first (running streams end with a "restarting" result), then Caddy
#   nginx      nginx/code-sandbox.conf in nginx/nginx.conf, written with the
#              paths and address below into CS_RUN/nginx/; the programs as
#              for caddy
#   apache     Apache httpd with mod_proxy_fcgi (apache/proxy-fcgi.conf, its
#              address from below, in CS_RUN/apache/); the programs as for
#              caddy, their sockets in group www-data (Apache's workers).
#              Apache spawning the programs itself (mod_fcgid, shared
#              hosting) is apache/.htaccess and apache/fcgid.conf instead.
#
# Environment (all optional):
#   CS_BIN            folder with the programs (default build/bin)
#   CS_RUN            runtime folder for sockets and logs (default /run/code-sandbox)
#   SANDBOX_ENV_FILE  settings file (default .env at the top of the tree)
#   SANDBOX_HOST, SANDBOX_PORT  override the settings file (default 127.0.0.1:8891)
#   CS_CADDYFILE      Caddy's configuration (default caddy/Caddyfile; the
#                     https preview test adds a TLS site to a copy)
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
caddy|nginx|apache)
	cmd=$server
	[ "$server" = apache ] && cmd=apache2
	command -v "$cmd" >/dev/null 2>&1 || { echo "serve: $cmd is missing (apt-get install $cmd)" >&2; exit 1; }
	front=Caddy
	stop_signal=TERM
	if [ "$server" = apache ]; then
		front="Apache (mod_proxy_fcgi)"
		case "$CS_RUN$SANDBOX_HOST$SANDBOX_PORT" in *[!A-Za-z0-9._/:-]*)
			echo "serve: CS_RUN, SANDBOX_HOST and SANDBOX_PORT must be plain for Apache" >&2; exit 1 ;;
		esac
		case "$SANDBOX_HOST" in *:*) listen="[$SANDBOX_HOST]:$SANDBOX_PORT" ;; *) listen="$SANDBOX_HOST:$SANDBOX_PORT" ;; esac
		# Apache's workers (www-data) reach the sockets through the group.
		CS_SOCKET_GROUP=www-data
		export CS_SOCKET_GROUP
		chgrp www-data "$CS_RUN" && chmod 750 "$CS_RUN" || exit 1
		mkdir -p "$CS_RUN/apache"
		sed -e "s|127\.0\.0\.1:8891|$listen|g" "$top/apache/proxy-fcgi.conf" >"$CS_RUN/apache/code-sandbox.conf"
		m=/usr/lib/apache2/modules
		cat >"$CS_RUN/apache/httpd.conf" <<-EOF
			ServerRoot $CS_RUN/apache
			ServerName localhost
			PidFile $CS_RUN/apache/httpd.pid
			DefaultRuntimeDir $CS_RUN/apache
			Mutex file:$CS_RUN/apache default
			User www-data
			Group www-data
			ErrorLog $CS_RUN/apache/error.log
			LoadModule mpm_event_module $m/mod_mpm_event.so
			LoadModule authz_core_module $m/mod_authz_core.so
			LoadModule proxy_module $m/mod_proxy.so
			LoadModule proxy_fcgi_module $m/mod_proxy_fcgi.so
			LoadModule proxy_http_module $m/mod_proxy_http.so
			Define CS_RUN $CS_RUN
			Include $CS_RUN/apache/code-sandbox.conf
		EOF
		if ! out=$(apache2 -t -f "$CS_RUN/apache/httpd.conf" 2>&1); then
			printf '%s\n' "$out" >&2
			exit 1
		fi
	fi
	if [ "$server" = nginx ]; then
		front=nginx
		stop_signal=QUIT
		# nginx reads no environment: its files, with this run's
		# sockets, address and body deadline, in CS_RUN/nginx/.
		case "$CS_RUN" in *[!A-Za-z0-9._/-]*)
			echo "serve: CS_RUN must be a plain path for nginx: $CS_RUN" >&2; exit 1 ;;
		esac
		case "$SANDBOX_HOST$SANDBOX_PORT" in *[!A-Za-z0-9.:-]*)
			echo "serve: SANDBOX_HOST/SANDBOX_PORT not an address: $SANDBOX_HOST $SANDBOX_PORT" >&2; exit 1 ;;
		esac
		case "$SANDBOX_BODY_DEADLINE" in ''|*[!0-9]*) SANDBOX_BODY_DEADLINE=30 ;; esac
		case "$SANDBOX_HOST" in *:*) listen="[$SANDBOX_HOST]:$SANDBOX_PORT" ;; *) listen="$SANDBOX_HOST:$SANDBOX_PORT" ;; esac
		mkdir -p "$CS_RUN/nginx"
		sed -e "s|unix:/run/code-sandbox/|unix:$CS_RUN/|" \
			-e "s|^\([[:space:]]*listen\) 127\.0\.0\.1:8891;|\1 $listen;|" \
			-e "s|[0-9]*s;\([[:space:]]*# SANDBOX_BODY_DEADLINE\)|${SANDBOX_BODY_DEADLINE}s;\1|" \
			"$top/nginx/code-sandbox.conf" >"$CS_RUN/nginx/code-sandbox.conf"
		cp "$top/nginx/nginx.conf" "$CS_RUN/nginx/nginx.conf"
		# Its workers as root too (they reach the sockets in CS_RUN, mode 0700).
		user=
		[ "$(id -u)" = 0 ] && user='user root;'
		nginx -p "$CS_RUN/nginx/" -c nginx.conf -e stderr ${user:+-g "$user"} -t -q || exit 1
	fi
	echo "code-sandbox: serving $url through $front"
	echo "code-sandbox: the API key is SANDBOX_API_KEY in $SANDBOX_ENV_FILE"
	echo "code-sandbox: programs from $CS_BIN; logs in $CS_RUN (programs.log)"
	set +e
	programs=
	web_pid=
	stop() {
		trap '' TERM INT HUP
		# The programs first: they end their streams, which still go out
		# through the web server; then it (its grace period covers the rest).
		if [ -n "$programs" ]; then
			kill -TERM "$programs" 2>/dev/null
			wait "$programs" 2>/dev/null
		fi
		if [ -n "$web_pid" ]; then
			# nginx: QUIT is its graceful stop (TERM its fast one).
			kill "-$stop_signal" "$web_pid" 2>/dev/null
			wait "$web_pid" 2>/dev/null
		fi
		exit "${1:-0}"
	}
	trap 'stop 0' TERM INT HUP
	rm -f "$CS_RUN/programs.started"
	"$top/containers/run-programs.sh" run &
	programs=$!
	# The web server once every program's socket is there (no 502 at start-up).
	i=0
	while [ ! -f "$CS_RUN/programs.started" ]; do
		kill -0 "$programs" 2>/dev/null || { wait "$programs"; exit 1; }
		i=$((i + 1))
		[ "$i" -le 300 ] || { echo "serve: the programs did not start within 30 s" >&2; stop 1; }
		sleep 0.1
	done
	if [ "$server" = nginx ]; then
		nginx -p "$CS_RUN/nginx/" -c nginx.conf -e stderr ${user:+-g "$user"} &
	elif [ "$server" = apache ]; then
		apache2 -f "$CS_RUN/apache/httpd.conf" -DFOREGROUND &
	else
		caddy run --adapter caddyfile --config "${CS_CADDYFILE:-$top/caddy/Caddyfile}" &
	fi
	web_pid=$!
	# Until one of them ends (a background sleep lets the trap run at once).
	while kill -0 "$programs" 2>/dev/null && kill -0 "$web_pid" 2>/dev/null; do
		sleep 1 &
		wait $! 2>/dev/null
	done
	echo "serve: $(kill -0 "$web_pid" 2>/dev/null && echo containers/run-programs.sh || echo "$server") exited" >&2
	stop 1
	;;
*)
	echo "usage: $0 lighttpd|caddy|nginx|apache" >&2
	exit 2
	;;
esac
