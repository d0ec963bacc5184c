#!/bin/sh
# Run every libFuzzer target (build/fuzz/fuzz/fuzz_NAME, from
# tests/fuzz/fuzz_NAME.c; make FUZZ=1 fuzzers builds them) for SECONDS
# each, starting from the seeds in tests/fuzz/corpus/NAME (new inputs go to
# a scratch folder: the tree is not written). Prints one line per target:
#
#   ok - fuzz/NAME: EXECS executions in SECONDS s, no crash
#   not ok - fuzz/NAME: crash or leak (input saved as build/fuzz/crash-NAME-...)
#
# and exits non-zero if any failed. The whole output of a failing target
# follows its line, prefixed with "#".
#
#   tests/fuzz/run.sh [SECONDS] [NAME...]    (SECONDS default FUZZ_SECONDS or 60)
#
# FUZZ_JOBS targets run at once (default: the number of cores).
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
secs=${1:-${FUZZ_SECONDS:-60}}
[ $# -gt 0 ] && shift
case "$secs" in ''|*[!0-9]*) echo "usage: $0 [SECONDS] [NAME...]" >&2; exit 2 ;; esac
bin=build/fuzz/fuzz
work=$(mktemp -d /tmp/cs-fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT INT TERM
# Leaks count as failures; a slow input (10 s) too.
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:halt_on_error=1}
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export ASAN_OPTIONS UBSAN_OPTIONS

names=$*
if [ -z "$names" ]; then
	for t in "$bin"/fuzz_*; do
		[ -x "$t" ] && names="$names ${t##*/fuzz_}"
	done
fi
if [ -z "$names" ]; then
	echo "not ok - fuzz: no targets in $bin (make FUZZ=1 fuzzers)"
	exit 1
fi
# One target, its line (and a failure's output) into $work/NAME.line.
fuzz_one() {	# fuzz_one NAME
	name=$1
	mkdir -p "$work/$name"
	seeds=tests/fuzz/corpus/$name
	[ -d "$seeds" ] || seeds=
	# shellcheck disable=SC2086
	"$bin/fuzz_$name" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
	    -print_final_stats=1 -artifact_prefix="build/fuzz/crash-$name-" \
	    "$work/$name" $seeds >"$work/$name.log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$name.log" | tail -n 1)
	if [ "$rc" -eq 0 ] && [ -n "$execs" ]; then
		echo "ok - fuzz/$name: $execs executions in $secs s, no crash"
	else
		echo "not ok - fuzz/$name: crash or leak (status $rc; input saved as build/fuzz/crash-$name-...)"
		grep -v '^#[0-9]' "$work/$name.log" | tail -n 60 | sed 's/^/#   /'
	fi >"$work/$name.line"
}

# FUZZ_JOBS targets at a time (default: one per core), their lines in order.
jobs=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
case "$jobs" in ''|*[!0-9]*|0) jobs=1 ;; esac
failed=0
# shellcheck disable=SC2086
set -- $names
while [ $# -gt 0 ]; do
	batch=
	i=0
	while [ $# -gt 0 ] && [ $i -lt "$jobs" ]; do
		fuzz_one "$1" &
		batch="$batch $1"
		shift
		i=$((i + 1))
	done
	wait
	for name in $batch; do
		cat "$work/$name.line"
		grep -q '^not ok' "$work/$name.line" && failed=$((failed + 1))
	done
done
[ "$failed" -eq 0 ]
