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
failed=0
for name in $names; do
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
		failed=$((failed + 1))
	fi
done
[ "$failed" -eq 0 ]
