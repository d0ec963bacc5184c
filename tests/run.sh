#!/bin/sh
# Run every test: the source and documentation checks (tests/checksrc.sh,
# tests/checkdocs.sh), the C unit tests (build/san/tests/test_*, each printing
# "ok - ..." / "not ok - ..." lines) and the end-to-end tests (tests/e2e,
# node's test runner, through real lighttpd and Docker), then the files that
# test what differs between fronts (FRONT_FILES below) once more behind
# Caddy (caddy/Caddyfile, containers/run-programs.sh), named
# "e2e[caddy]/FILE: ...", and fewer (NGINX_FILES) behind nginx
# (nginx/code-sandbox.conf) and behind Apache with mod_fcgid (APACHE_FILES;
# apache/). Prints one line per test ("ok - ...", "not ok - ...", and
# "ok - ... # SKIP reason" for one that did not run), the skipped ones again
# with their reasons, and, last, "N passed, N failed, N skipped". Exits
# non-zero if any failed.
#
#   tests/run.sh               everything
#   tests/run.sh unit          unit tests only
#   tests/run.sh e2e [FILE..]  e2e tests only (FILE: tests/e2e/NAME.test.mjs)
#   tests/run.sh fuzz          each libFuzzer target for FUZZ_TEST_SECONDS (3)
#   tests/run.sh checks        the source check (tests/checksrc.sh: no banned
#                              function) and the documentation checks
#                              (tests/checkdocs.sh: the man pages, the links)
#
# CS_WEB=lighttpd, caddy, nginx or apache runs the e2e tests behind that
# web server only. Files named config*.test.mjs check configuration
# files without a server: they run once, in the lighttpd pass.
#
# make test builds what this needs first (make SAN=1 all units, make FUZZ=1
# fuzzers); the unit, fuzz and e2e runs make it again (nothing to do when
# it is up to date) so they never run stale binaries.
#
# The runner's own test (tests/runner.test.sh, run with the checks) points
# it at fixtures: CS_UNIT_DIR, a folder of test_* programs to run instead
# of build/san/tests (nothing is built); CS_E2E_FIXTURES=1, e2e FILEs
# (absolute paths) that need no server, Docker or network set-up.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
what=${1:-all}
[ $# -gt 0 ] && shift

passed=0
failed=0
skipped=0
tmp=$(mktemp -d /tmp/cs-run.XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM

# The sanitizer build's options, as the e2e servers use them.
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:halt_on_error=1:print_summary=1:detect_stack_use_after_return=1:check_initialization_order=1}
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:print_summary=1}
export ASAN_OPTIONS UBSAN_OPTIONS

# A sanitizer report in a program's output (as tests/e2e/lib/server.mjs
# reads one): a failure whatever the program's exit status.
SANITIZER_REPORT='ERROR: (Address|Leak)Sanitizer|runtime error:|WARNING: ThreadSanitizer|AddressSanitizer:DEADLYSIGNAL'

count() {	# count PATTERN FILE
	grep -c "$1" "$2" 2>/dev/null || true
}

# tally FILE: its "ok - " lines (but skips), "not ok - " lines and
# "ok - ... # SKIP" lines in p, f and s; the skips are kept for the end.
tally() {
	s=$(count '^ok - .*# SKIP' "$1")
	p=$(($(count '^ok - ' "$1") - s))
	f=$(count '^not ok - ' "$1")
	grep '^ok - .*# SKIP' "$1" >>"$tmp/skips" 2>/dev/null
	skipped=$((skipped + s))
}

# build WHAT...: make SAN=1 WHAT (or FUZZ=1 with fuzzers); a failure is a
# failed line with make's last words.
build() {
	case "$1" in fuzzers) mode=FUZZ=1 ;; *) mode=SAN=1 ;; esac
	if ! make --no-print-directory "$mode" "$@" >"$tmp/make.out" 2>&1; then
		echo "not ok - build: make $mode $* failed"
		tail -n 30 "$tmp/make.out" | sed 's/^/#   /'
		failed=$((failed + 1))
		return 1
	fi
}

run_units() {
	units=${CS_UNIT_DIR:-build/san/tests}
	[ -n "${CS_UNIT_DIR:-}" ] || build all units || return
	found=0
	for t in "$units"/test_*; do
		[ -f "$t" ] && [ -x "$t" ] || continue
		case "$t" in *.o|*.d) continue ;; esac
		found=1
		name=$(basename "$t")
		timeout 300 "$t" >"$tmp/unit.out" 2>&1
		rc=$?
		sed -n -e "s|^ok - |ok - unit/$name: |p" -e "s|^not ok - |not ok - unit/$name: |p" \
			"$tmp/unit.out" >"$tmp/unit.lines"
		cat "$tmp/unit.lines"
		tally "$tmp/unit.lines"
		san=0
		grep -q -E "$SANITIZER_REPORT" "$tmp/unit.out" && san=1
		if [ "$rc" -ne 0 ] || [ "$f" -ne 0 ] || [ "$san" -eq 1 ]; then
			# Show what the failing binary printed (sanitizer reports, asserts).
			grep -v -e '^ok - ' -e '^not ok - ' "$tmp/unit.out" | tail -n 60 | sed 's/^/#   /'
		fi
		if [ "$san" -eq 1 ]; then
			echo "not ok - unit/$name: a sanitizer report (above)"
			f=$((f + 1))
		elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
			echo "not ok - unit/$name: exited with status $rc"
			f=1
		fi
		if [ "$rc" -eq 0 ] && [ "$p" -eq 0 ] && [ "$f" -eq 0 ] && [ "$s" -eq 0 ]; then
			echo "not ok - unit/$name: ran no test"
			f=1
		fi
		passed=$((passed + p))
		failed=$((failed + f))
	done
	if [ "$found" = 0 ]; then
		echo "not ok - unit: no unit test binaries in $units (make SAN=1 units)"
		failed=$((failed + 1))
	fi
}

# Containers and volumes of e2e tests are named cs-e2e-RUN-..., RUN being
# the PID of the run that made them. Remove those of runs that have ended
# (interrupted earlier), and with "own" this run's too; never those of a
# run going on beside this one.
CS_TEST_RUN=$$
export CS_TEST_RUN
clean_test_containers() {
	command -v docker >/dev/null 2>&1 || return 0
	for kind in container volume; do
		if [ "$kind" = container ]; then
			names=$(docker ps -a --format '{{.Names}}' --filter 'name=^cs-e2e-' 2>/dev/null)
		else
			names=$(docker volume ls -q --filter 'name=^cs-e2e-' 2>/dev/null)
		fi
		for n in $names; do
			run=$(printf '%s\n' "$n" | sed -n 's/^cs-e2e-\([0-9][0-9]*\)-.*/\1/p')
			[ -n "$run" ] || continue
			if kill -0 "$run" 2>/dev/null; then
				[ "${1:-}" = own ] && [ "$run" = "$CS_TEST_RUN" ] || continue
			fi
			if [ "$kind" = container ]; then
				docker rm -f "$n" >/dev/null 2>&1
			else
				docker volume rm -f "$n" >/dev/null 2>&1
			fi
		done
	done
	# Networks of egress tests, with their firewall rules (after the
	# containers: a network in use cannot be removed).
	for n in $(docker network ls --format '{{.Name}}' --filter 'name=^cs-e2e-' 2>/dev/null); do
		run=$(printf '%s\n' "$n" | sed -n 's/^cs-e2e-\([0-9][0-9]*\)-.*/\1/p')
		[ -n "$run" ] || continue
		if kill -0 "$run" 2>/dev/null; then
			[ "${1:-}" = own ] && [ "$run" = "$CS_TEST_RUN" ] || continue
		fi
		CS_NETPOLICY_STATE="$tmp/np" containers/netpolicy.sh remove --network "$n" >/dev/null 2>&1
	done
	return 0
}

# The sandbox image the tests use: the full one when it is there, else the
# core image while the full one builds (make test starts that build in the
# background). Files named *.image.test.mjs need the full image: they run
# last, once containers/build-image.sh --wait says it is there.
image_ready() {	# the full image, built from the Dockerfiles as they are
	SANDBOX_IMAGE=${SANDBOX_IMAGE:-code-sandbox:latest} containers/build-image.sh --check
}
# make test builds the core image while the C code builds and the unit and
# fuzz tests run: CS_CORE_STATUS names the file its exit status goes to
# (its output beside it, in .log). The e2e tests wait for it.
core_wait() {
	[ -n "${CS_CORE_STATUS:-}" ] || return 0
	n=0
	while [ ! -s "$CS_CORE_STATUS" ] && [ $n -lt 900 ]; do
		sleep 2
		n=$((n + 1))
	done
	[ -f "$CS_CORE_STATUS.log" ] && cat "$CS_CORE_STATUS.log"
	if [ "$(cat "$CS_CORE_STATUS" 2>/dev/null)" != 0 ]; then
		echo "not ok - e2e: the sandbox's core image could not be built (containers/build-image.sh, above)"
		failed=$((failed + 1))
		return 1
	fi
}
pick_image() {
	if [ -z "${CS_TEST_IMAGE:-}" ] && command -v docker >/dev/null 2>&1 && ! image_ready &&
	   docker image inspect code-sandbox:core >/dev/null 2>&1; then
		CS_TEST_IMAGE=code-sandbox:core
		export CS_TEST_IMAGE
		echo "# the full sandbox image is not built yet: tests run on code-sandbox:core meanwhile"
	fi
}
image_files=

# The whole suite runs behind lighttpd; behind every other front only what
# differs between fronts: sign-in and the client's address, request bodies,
# the transport and its streams (progress, keep-alive, sessions across
# workers), /dl and /up, a worker killed mid-command, the installed units.
FRONT_FILES="bodies body-spool folders front initialize links oauth signin signin-hardening
streaming supervisor systemd transport uploads terminal-link preview"
# Behind nginx, what its server block decides, in under 2 minutes: front
# (sign-in, streams and pings, /dl, /up, a killed worker), bodies (each
# route's cap, the body deadline), transport (headers and bodies as nginx
# passes them: chunked, Accept, Origin, unrouted paths), signin-hardening
# (X-Forwarded-For and SANDBOX_TRUSTED_PROXIES) and uploads (bodies that
# stream on to the program: a made-up link refused before its body,
# chunked, names in the URL, the page's form).
NGINX_FILES="bodies body-spool front signin-hardening transport uploads terminal-link preview"
# Behind Apache (apache/): with mod_fcgid the front as a whole, and a host
# left at mod_fcgid's defaults; with mod_proxy_fcgi its routes and streams;
# with both, what a stranger's body makes Apache spool (body-spool).
# Preview links (preview) behind every front: their WebSocket, cookies and
# streams are what each front's routing decides.
APACHE_FILES="front apache-defaults apache-proxy body-spool terminal-link preview"
front_files() {	# front_files LIST FILE...: the FILEs named in LIST
	list=$1
	shift
	for f in "$@"; do
		n=$(basename "$f" .test.mjs)
		for k in $list; do
			[ "$n" = "$k" ] && echo "$f"
		done
	done
}
# The files to run behind WEB: all of them behind lighttpd or when named;
# in a whole run, behind another front those of its list.
web_files() {	# web_files WEB FILE...
	w=$1
	shift
	case "$whole:$w" in
	# Files named apache-* test Apache only: behind lighttpd they would
	# only skip.
	1:lighttpd) for f; do case "$f" in */apache-*) ;; *) echo "$f" ;; esac; done ;;
	1:caddy) front_files "$FRONT_FILES" "$@" ;;
	1:nginx) front_files "$NGINX_FILES" "$@" ;;
	1:apache) front_files "$APACHE_FILES" "$@" ;;
	*) printf '%s\n' "$@" ;;
	esac
}

# The e2e files behind lighttpd, then behind Caddy (or CS_WEB's only; named
# files run in full behind each).
run_e2e() {
	if [ "${CS_E2E_FIXTURES:-}" = 1 ]; then
		web=${CS_WEB:-lighttpd}
		run_e2e_batch 3 "$@"
		return
	fi
	if [ ! -d tests/e2e/node_modules ]; then
		echo "not ok - e2e: tests/e2e/node_modules is missing (tests/setup/packages.sh)"
		failed=$((failed + 1))
		return
	fi
	whole=0
	if [ $# -eq 0 ]; then
		set -- tests/e2e/*.test.mjs
		whole=1
	fi
	core_wait || return
	pick_image
	build all || return
	# The default egress policy's network and rules (idempotent).
	if ! containers/netpolicy.sh apply --network code-sandbox --policy internet >"$tmp/netpolicy.out" 2>&1; then
		echo "not ok - e2e: containers/netpolicy.sh apply failed: $(tail -n 1 "$tmp/netpolicy.out")"
		failed=$((failed + 1))
	fi
	others=
	for f in "$@"; do
		case "$f" in
		*.image.test.mjs) image_files="$image_files $f" ;;
		*) others="$others $f" ;;
		esac
	done
	# shellcheck disable=SC2086
	set -- $others
	case "${CS_WEB:-}" in
	'') webs="lighttpd caddy nginx apache" ;;
	lighttpd|caddy|nginx|apache) webs=$CS_WEB ;;
	*)
		echo "not ok - e2e: CS_WEB must be lighttpd, caddy, nginx or apache, not $CS_WEB"
		failed=$((failed + 1))
		return
		;;
	esac
	for w in $webs; do
		# shellcheck disable=SC2046
		[ $# -gt 0 ] && run_e2e_web "$w" $(web_files "$w" "$@")
	done
	[ -n "$image_files" ] || return 0
	# CS_TOOLSET_IMAGE names another full image to use (the tests read it too).
	if ! SANDBOX_IMAGE=${CS_TOOLSET_IMAGE:-${SANDBOX_IMAGE:-}} containers/build-image.sh --wait; then
		echo "not ok - e2e: the full sandbox image could not be built (containers/build-image.sh)"
		failed=$((failed + 1))
		return
	fi
	unset CS_TEST_IMAGE
	for w in $webs; do
		# shellcheck disable=SC2046,SC2086
		run_e2e_web "$w" $(web_files "$w" $image_files)
	done
}

# The files that take longest, started first so that none of them is
# left running alone at the end of a pass (a minute or more each behind
# lighttpd).
LONG_FILES="tasks snapshots terminal supervisor teams streaming front proxy preview"

run_e2e_web() {	# run_e2e_web WEB FILE...
	web=$1
	shift
	started=$(date +%s)
	clean_test_containers
	# Files named *.serial.test.mjs disturb the machine (they restart the
	# Docker engine): they run alone, after the others.
	files=
	long=
	serial=
	for f in "$@"; do
		n=$(basename "$f" .test.mjs)
		case "$web:$n.test.mjs" in
		caddy:config*|nginx:config*|apache:config*) continue ;;
		*.serial.test.mjs) serial="$serial $top/$f"; continue ;;
		esac
		case " $LONG_FILES " in
		*" $n "*) long="$long $top/$f" ;;
		*) files="$files $top/$f" ;;
		esac
	done
	# shellcheck disable=SC2086
	run_e2e_batch 3 $long $files
	[ -n "$serial" ] && run_e2e_batch 1 $serial
	clean_test_containers own
	echo "# e2e behind $web: $(($(date +%s) - started)) s"
}

run_e2e_batch() {	# run_e2e_batch CONCURRENCY FILE...
	conc=$1
	shift
	[ $# -gt 0 ] || return 0
	files="$*"
	# There before tail looks (tail -f gives up on a missing file).
	: >"$tmp/e2e.out"
	# Most of the time is spent waiting for Docker: three files at once
	# fits 2 cores. The whole run is capped so the suite stays bounded.
	# shellcheck disable=SC2086
	(cd tests/e2e && CS_WEB=$web timeout -k 30 1080 node --test --test-concurrency="$conc" \
		--test-timeout=600000 --test-reporter=./lib/reporter.mjs $files) \
		>"$tmp/e2e.out" 2>&1 &
	pid=$!
	# Stream the lines as they come.
	tail -n +1 -f "$tmp/e2e.out" --pid=$pid 2>/dev/null | grep -v '^E2E-SUMMARY '
	wait $pid
	rc=$?
	summary=$(grep '^E2E-SUMMARY ' "$tmp/e2e.out" | tail -n 1)
	if [ -z "$summary" ]; then
		echo "not ok - e2e($web): the test runner ended without a summary (status $rc)"
		failed=$((failed + 1))
	else
		p=$(echo "$summary" | sed -n 's/.*passed=\([0-9]*\).*/\1/p')
		f=$(echo "$summary" | sed -n 's/.*failed=\([0-9]*\).*/\1/p')
		s=$(echo "$summary" | sed -n 's/.*skipped=\([0-9]*\).*/\1/p')
		passed=$((passed + p))
		failed=$((failed + f))
		skipped=$((skipped + ${s:-0}))
		grep '^ok - .*# SKIP' "$tmp/e2e.out" >>"$tmp/skips"
		if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
			echo "not ok - e2e($web): the test runner exited with status $rc"
			failed=$((failed + 1))
		fi
	fi
}

# Every fuzz target for a few seconds (make fuzz runs them longer): a crash
# found from the seeds fails its line.
run_fuzz() {
	build fuzzers || return
	tests/fuzz/run.sh "${FUZZ_TEST_SECONDS:-3}" >"$tmp/fuzz.out" 2>&1
	cat "$tmp/fuzz.out"
	tally "$tmp/fuzz.out"
	passed=$((passed + p))
	failed=$((failed + f))
}

# The source and documentation checks: no build or server needed but the
# settings' man page, which make writes.
run_checks() {
	for c in tests/checksrc.sh tests/checkdocs.sh tests/runner.test.sh; do
		"$c" >"$tmp/check.out" 2>&1
		cat "$tmp/check.out"
		tally "$tmp/check.out"
		if [ "$p" -eq 0 ] && [ "$f" -eq 0 ] && [ "$s" -eq 0 ]; then
			echo "not ok - $c: ran no check"
			f=1
		fi
		passed=$((passed + p))
		failed=$((failed + f))
	done
}

case "$what" in
	all) run_checks; run_units; run_fuzz; run_e2e ;;
	unit) run_units ;;
	fuzz) run_fuzz ;;
	checks) run_checks ;;
	e2e) run_e2e "$@" ;;
	*) echo "usage: $0 [all|unit|fuzz|checks|e2e [FILE...]]" >&2; exit 2 ;;
esac

if [ "$skipped" -gt 0 ]; then
	echo "# skipped, and why:"
	sed 's/^ok - /#   /' "$tmp/skips"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
