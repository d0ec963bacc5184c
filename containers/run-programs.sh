#!/bin/sh
# Start code-sandbox's FastCGI programs for Caddy or nginx (which do not
# start FastCGI applications themselves) and look after them.
#
#   containers/run-programs.sh [run]   start them, restart any that dies, and
#                                      on SIGTERM/SIGINT/SIGHUP stop them all
#                                      and exit (foreground, for a supervisor
#                                      or tests/setup/serve.sh)
#   containers/run-programs.sh start   start them and return
#   containers/run-programs.sh stop    stop the ones "start" or "run" started
#
# Each program present in CS_BIN (mcp, wellknown, authorize, token,
# register, dl, up, preview) is started with spawn-fcgi on CS_RUN/NAME.sock (mode 0660),
# the socket on the program's fd 0 as FastCGI wants; /mcp gets CS_MCP_PROCS
# processes (default 1) sharing its socket, the others one each. Each
# process serves SANDBOX_THREADS requests at once. Their PIDs are kept in
# CS_RUN/NAME.pids, their stderr (log lines, sanitizer reports) appended to
# CS_RUN/programs.log. CS_RUN/programs.started appears once every socket is
# there (and goes away on stop).
#
# Environment:
#   CS_BIN            folder with the programs (absolute)
#   CS_RUN            runtime folder (absolute; created if missing)
#   CS_MCP_PROCS      processes for /mcp (default 1)
#   CS_SOCKET_GROUP   group that may use the sockets (when Caddy or nginx
#                     runs as another user; needs root)
#   CS_STOP_TIMEOUT   seconds the programs get to exit on stop (default 20),
#                     then they are killed
# The whole environment is passed to the programs: SANDBOX_ENV_FILE and the
# SANDBOX_* settings (lib/base/config.c), DOCKER_HOST, ...
set -u

PROGRAMS="mcp wellknown authorize token register dl up preview"

say() {
	echo "run-programs: $*" >&2
}

: "${CS_BIN:?CS_BIN must name the programs folder}"
: "${CS_RUN:?CS_RUN must name the runtime folder}"
case "$CS_BIN$CS_RUN" in
	*"
"*) say "CS_BIN and CS_RUN must not contain newlines"; exit 2 ;;
esac
case "$CS_BIN" in /*) ;; *) CS_BIN=$(pwd)/$CS_BIN ;; esac
case "$CS_RUN" in /*) ;; *) CS_RUN=$(pwd)/$CS_RUN ;; esac
CS_MCP_PROCS=${CS_MCP_PROCS:-1}
CS_STOP_TIMEOUT=${CS_STOP_TIMEOUT:-20}
CS_PROGRAMS_LOG=$CS_RUN/programs.log
export CS_BIN CS_RUN CS_PROGRAMS_LOG

command -v spawn-fcgi >/dev/null 2>&1 || { say "spawn-fcgi is missing (apt-get install spawn-fcgi)"; exit 1; }

# Is PID a live (not zombie) process running program NAME? Processes that
# spawn-fcgi forked are not our children: /proc tells a reused PID apart.
alive() {	# alive PID NAME
	[ -r "/proc/$1/stat" ] || return 1
	state=$(sed -n 's/^.*) \(.\).*/\1/p' "/proc/$1/stat" 2>/dev/null)
	case "$state" in ''|Z|X) return 1 ;; esac
	cmd=$(tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null)
	case "$cmd" in "$CS_BIN/$2"*) return 0 ;; esac
	return 1
}

pids_of() {	# pids_of NAME: the recorded PIDs
	[ -f "$CS_RUN/$1.pids" ] && cat "$CS_RUN/$1.pids"
	return 0
}

# Start one program. spawn-fcgi binds the socket and forks the processes;
# each runs through sh only to send its stderr to programs.log, then execs
# the program (same PID, argv[0] the program's path).
start_one() {	# start_one NAME
	name=$1
	n=1
	[ "$name" = mcp ] && n=$CS_MCP_PROCS
	set -- -F "$n" -s "$CS_RUN/$name.sock" -M 0660
	[ -n "${CS_SOCKET_GROUP:-}" ] && set -- "$@" -G "$CS_SOCKET_GROUP"
	# shellcheck disable=SC2016
	out=$(spawn-fcgi "$@" -- /bin/sh -c 'exec "$0" 2>>"$CS_PROGRAMS_LOG"' "$CS_BIN/$name" 2>&1)
	rc=$?
	pids=$(printf '%s\n' "$out" | sed -n 's/.*PID: *\([0-9][0-9]*\).*/\1/p' | tr '\n' ' ')
	printf '%s\n' "$pids" >"$CS_RUN/$name.pids"
	if [ "$rc" -ne 0 ] || [ -z "$pids" ]; then
		say "$name: spawn-fcgi failed: $out"
		return 1
	fi
	return 0
}

# Stop the processes of the given programs: SIGTERM (they end running
# streams with a "restarting" result and exit), SIGKILL after the timeout.
stop_some() {	# stop_some NAME...
	for name in "$@"; do
		for p in $(pids_of "$name"); do
			alive "$p" "$name" && kill -TERM "$p" 2>/dev/null
		done
	done
	waited=0
	while :; do
		left=
		for name in "$@"; do
			for p in $(pids_of "$name"); do
				alive "$p" "$name" && left="$left $p"
			done
		done
		[ -z "$left" ] && break
		if [ "$waited" -ge $((CS_STOP_TIMEOUT * 10)) ]; then
			say "still running after ${CS_STOP_TIMEOUT}s, killing:$left"
			# shellcheck disable=SC2086
			kill -KILL $left 2>/dev/null
			break
		fi
		sleep 0.1
		waited=$((waited + 1))
	done
	for name in "$@"; do
		rm -f "$CS_RUN/$name.pids" "$CS_RUN/$name.sock"
	done
}

present() {	# the programs present in CS_BIN
	for name in $PROGRAMS; do
		[ -x "$CS_BIN/$name" ] && printf '%s\n' "$name"
	done
	return 0
}

# The programs that were started (have a PID file).
started() {
	for name in $PROGRAMS; do
		[ -f "$CS_RUN/$name.pids" ] && printf '%s\n' "$name"
	done
	return 0
}

stop_all() {
	rm -f "$CS_RUN/programs.started"
	# shellcheck disable=SC2046
	stop_some $(started)
	rm -f "$CS_RUN"/*.restarted
}

start_all() {
	mkdir -p "$CS_RUN" || exit 1
	# The sockets' folder is the programs' user's own (SECURITY.md); with
	# CS_SOCKET_GROUP the caller has opened it to that group.
	if [ -z "${CS_SOCKET_GROUP:-}" ]; then
		chmod 700 "$CS_RUN" || exit 1
	fi
	names=$(present)
	if [ -z "$names" ]; then
		say "no programs in $CS_BIN (run make)"
		exit 1
	fi
	# Leftovers of an earlier run that was killed.
	# shellcheck disable=SC2046
	stop_some $(started)
	for name in $names; do
		if ! start_one "$name"; then
			# shellcheck disable=SC2046
			stop_some $(started)
			exit 1
		fi
	done
	say "started $(printf '%s ' $names)on $CS_RUN/*.sock; stderr to $CS_PROGRAMS_LOG"
	# Every socket is there: what waits for the programs can go on.
	date +%s >"$CS_RUN/programs.started"
}

case "${1:-run}" in
start)
	start_all
	;;
stop)
	stop_all
	;;
run)
	stopping=0
	on_signal() {
		stopping=1
		say "stopping"
		stop_all
		exit 0
	}
	trap on_signal TERM INT HUP
	start_all
	# Supervise: a program with a process gone is restarted as a whole
	# (its processes share one socket), at most once every 5 s.
	while [ "$stopping" = 0 ]; do
		for name in $(started); do
			dead=0
			n=0
			for p in $(pids_of "$name"); do
				n=$((n + 1))
				alive "$p" "$name" || dead=1
			done
			[ "$n" -eq 0 ] && dead=1
			[ "$dead" = 1 ] || continue
			last=$(cat "$CS_RUN/$name.restarted" 2>/dev/null || echo 0)
			now=$(date +%s)
			[ $((now - last)) -ge 5 ] || continue
			echo "$now" >"$CS_RUN/$name.restarted"
			say "$name: a process exited; restarting $name"
			stop_some "$name"
			start_one "$name" || say "$name: could not restart"
		done
		# A background sleep lets the traps run at once.
		sleep 1 &
		wait $! 2>/dev/null
	done
	;;
*)
	echo "usage: $0 [run|start|stop]" >&2
	exit 2
	;;
esac
