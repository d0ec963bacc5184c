#!/bin/sh
# The test runner's own test: tests/run.sh on fixtures (a unit program, e2e
# files in a scratch folder), each changing its last line as it should:
#
#   a unit check that prints "ok - NAME # SKIP WHY" is skipped, not passed;
#   a skipped describe counts each test written in it as skipped;
#   a file that exits (status 0) with tests still queued fails them;
#   a file that exits before it queued any test fails;
#   tests cancelled by a failed before hook fail;
#   a test-level skip (t.skip) is skipped, with its reason listed;
#   a sanitizer report fails: a unit program's (even one that exits 0)
#   and sandboxctl's in an e2e test (even when it exits as the test
#   expects).
#
# Prints "ok - runner: ..." / "not ok - runner: ..." lines (tests/run.sh
# runs it with the checks).
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/cs-runner.XXXXXX)
trap 'rm -rf "$work"' EXIT INT TERM
rc=0
unset NODE_TEST_CONTEXT
run=$top/tests/run.sh

# expect NAME WANT-LAST-LINE WANT-STATUS WANT-LINE... -- COMMAND...
expect() {
	name=$1 want=$2 wstatus=$3
	shift 3
	lines=
	while [ "$1" != -- ]; do
		lines="$lines$1
"
		shift
	done
	shift
	"$@" >"$work/out" 2>&1
	status=$?
	last=$(tail -n 1 "$work/out")
	why=
	[ "$last" = "$want" ] || why="last line \"$last\", not \"$want\""
	if [ "$wstatus" = 0 ] && [ "$status" -ne 0 ]; then why="$why; exit status $status"; fi
	if [ "$wstatus" != 0 ] && [ "$status" -eq 0 ]; then why="$why; exit status 0"; fi
	printf '%s' "$lines" | while IFS= read -r l; do
		[ -n "$l" ] || continue
		grep -q -F -x -e "$l" "$work/out" || echo "no line \"$l\""
	done >"$work/missing"
	[ -s "$work/missing" ] && why="$why; $(tr '\n' ';' <"$work/missing")"
	if [ -z "$why" ]; then
		echo "ok - runner: $name"
	else
		echo "not ok - runner: $name: $why"
		sed 's/^/#   /' "$work/out"
		rc=1
	fi
}

# A unit program with a check it cannot run here.
mkdir -p "$work/units"
cat >"$work/units/test_fixture" <<'EOF'
#!/bin/sh
echo "ok - runs"
echo "ok - needs a thing # SKIP no thing here"
EOF
chmod +x "$work/units/test_fixture"
expect "a unit check that says SKIP counts as skipped, not passed" \
	"1 passed, 0 failed, 1 skipped" 0 \
	"ok - unit/test_fixture: needs a thing # SKIP no thing here" \
	"#   unit/test_fixture: needs a thing # SKIP no thing here" \
	-- env CS_UNIT_DIR="$work/units" "$run" unit

cat >"$work/units/test_fixture" <<'EOF'
#!/bin/sh
echo "ok - needs a thing # SKIP no thing here"
EOF
expect "a unit program that only skips is not a program that ran nothing" \
	"0 passed, 0 failed, 1 skipped" 0 \
	-- env CS_UNIT_DIR="$work/units" "$run" unit

# e2e files; node:test runs each in its own process.
cat >"$work/suite.test.mjs" <<'EOF'
import { describe, it, test } from 'node:test';
describe('a suite', { skip: 'not here' }, () => {
  it('first (with a paren)', () => {});
  // it('a comment is not a test', () => {});
  describe('inner', () => {
    it(`second ${1 + 1}`, () => { const s = "it('a string is not a test')"; return s; });
  });
  test.skip('third', () => {});
});
test('runs', () => {});
test('skips itself', (t) => { t.skip('no reason to run'); });
EOF
expect "a skipped describe counts each of its tests as skipped, with the reason" \
	"1 passed, 0 failed, 4 skipped" 0 \
	"ok - e2e/suite: a suite > first (with a paren) # SKIP not here" \
	"ok - e2e/suite: a suite > second \${...} # SKIP not here" \
	"ok - e2e/suite: a suite > third # SKIP not here" \
	"ok - e2e/suite: skips itself # SKIP no reason to run" \
	"#   e2e/suite: a suite > third # SKIP not here" \
	-- env CS_E2E_FIXTURES=1 "$run" e2e "$work/suite.test.mjs"

cat >"$work/early.test.mjs" <<'EOF'
import { test } from 'node:test';
test('before', () => {});
test('exits', async () => { setTimeout(() => process.exit(0), 10); await new Promise((r) => setTimeout(r, 5000)); });
test('after', () => {});
EOF
expect "a file that exits 0 with tests left fails them" \
	"1 passed, 2 failed, 0 skipped" 1 \
	"not ok - e2e/early: exits: never finished (the file's process ended before it passed or failed)" \
	"not ok - e2e/early: after: never finished (the file's process ended before it passed or failed)" \
	-- env CS_E2E_FIXTURES=1 "$run" e2e "$work/early.test.mjs"

cat >"$work/none.test.mjs" <<'EOF'
import { test } from 'node:test';
test('never queued', () => {});
process.exit(0);
EOF
expect "a file that exits before its tests are queued fails" \
	"1 passed, 1 failed, 4 skipped" 1 \
	"not ok - e2e/none: the file ran no test" \
	-- env CS_E2E_FIXTURES=1 "$run" e2e "$work/suite.test.mjs" "$work/none.test.mjs"

cat >"$work/hook.test.mjs" <<'EOF'
import { describe, it, before } from 'node:test';
describe('a suite whose set-up fails', () => {
  before(() => { throw new Error('set-up failed'); });
  it('one', () => {});
  it('two', () => {});
});
EOF
expect "tests cancelled by a failed hook fail" \
	"0 passed, 2 failed, 0 skipped" 1 \
	-- env CS_E2E_FIXTURES=1 "$run" e2e "$work/hook.test.mjs"

# A unit program whose checks pass but which printed a sanitizer report
# and exited 0 (a report the sanitizer did not halt on).
cat >"$work/units/test_fixture" <<'EOF'
#!/bin/sh
echo "ok - runs"
echo "==1==ERROR: LeakSanitizer: detected memory leaks" >&2
EOF
expect "a unit program's sanitizer report fails it, whatever its exit status" \
	"1 passed, 1 failed, 0 skipped" 1 \
	"not ok - unit/test_fixture: a sanitizer report (above)" \
	-- env CS_UNIT_DIR="$work/units" "$run" unit

# sandboxctl through the e2e helper: a stand-in that exits 1, as the test
# expects, but with the sanitizer's report on stderr.
mkdir -p "$work/bin"
cat >"$work/bin/sandboxctl" <<'EOF'
#!/bin/sh
echo "sandboxctl: no such key" >&2
echo "$0:1:2: runtime error: signed integer overflow" >&2
exit 1
EOF
chmod +x "$work/bin/sandboxctl"
cat >"$work/san.test.mjs" <<EOF
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ctl } from '$top/tests/e2e/lib/hostile.mjs';
test('sandboxctl refuses', async () => {
  const r = await ctl('$work/bin', ['keys', 'revoke', 'nobody'], { clean: true });
  assert.equal(r.code, 1);
});
EOF
expect "sandboxctl's sanitizer report fails the e2e test that ran it" \
	"0 passed, 1 failed, 0 skipped" 1 \
	-- env CS_E2E_FIXTURES=1 "$run" e2e "$work/san.test.mjs"

exit "$rc"
