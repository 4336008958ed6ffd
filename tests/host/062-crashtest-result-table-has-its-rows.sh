#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# scripts/crashtest's result table, with stdout not a terminal (a file, as
# in CI and in a test's log): a row under the heading for each state that
# failed, as report.json has them, and for a run in which every state
# passed no heading without rows, only the count.  On a terminal it prints
# the same.  No guest: crashtest runs whole on the host, but for a
# stand-in for qemu/run-guest that does what qemu/crashtest-guest's
# check_trace does, flushlog check on a log into the run folder.
. "$FLUSHLOG_TOP/tests/common.sh"
# asan: no
_require_cmd jq
_require_cmd perl

# a checkout of stand-ins: no dependencies to install, nothing to build,
# and a "guest" that checks tests/data/basic.fls's log
top=$TEST_TMP/top
mkdir -p "$top/scripts" "$top/qemu" "$TEST_TMP/cache"
printf 'all:\n' >"$top/Makefile"
printf '#!/bin/sh\nexit 0\n' >"$top/scripts/install-deps"
chmod +x "$top/scripts/install-deps"
cat >"$top/qemu/run-guest" <<'EOS'
#!/usr/bin/env bash
# run-guest's options, then crashtest-guest and its arguments (FS OPS SEED
# WORKLOAD CHECK ... CHECK-OPTS ...): check_trace on the host
set -euo pipefail
out=
while [[ $1 == --* ]]; do
	[ "$1" != --share ] || out=$2
	shift 2
done
shift
check=$5 check_opts=${10}
cp "$FAKE_LOG" "$out/log.img"
"$FLUSHLOG_BUILD/flushlog" info "$out/log.img" >"$out/info.txt"
rc=0
# shellcheck disable=SC2086 # as crashtest-guest: options and checker are words
"$FLUSHLOG_BUILD/flushlog" check -k -j 2 --from start --save-failures "$out/failures" \
	$check_opts --report "$out/report.json" --junit "$out/junit.xml" "$out/log.img" \
	-- $check >"$out/summary.txt" 2>&1 || rc=$?
exit "$rc"
EOS
chmod +x "$top/qemu/run-guest"
_mklog "$DATA/basic.fls" flushlog "$TEST_TMP/g"
cat >"$TEST_TMP/checker" <<'EOS'
#!/bin/sh
# points 3 and 5 fail
[ "$FLUSHLOG_POINT" != 3 ] && [ "$FLUSHLOG_POINT" != 5 ]
EOS
chmod +x "$TEST_TMP/checker"

# the real crashtest, in the checkout of stand-ins
crashtest_cmd=$FLUSHLOG_TOP/scripts/crashtest
stand_ins=(env FLUSHLOG_TOP="$top" FLUSHLOG_CACHE="$TEST_TMP/cache" FAKE_LOG="$TEST_TMP/g/log")

# crashtest OUT CHECKER: a run with stdout a file, its output in OUT.txt;
# its exit code
crashtest() {
	local rc=0
	"${stand_ins[@]}" "$crashtest_cmd" --fs raw --check "$2" --out "$1" \
		>"$1.txt" 2>"$1.err" || rc=$?
	echo "$rc"
}

heading='^ +point +kind +entry +spec +state +result$'

rc=$(crashtest "$TEST_TMP/bad" "$TEST_TMP/checker {}")
[ "$rc" = 1 ] || _fail "a run with failing states exited $rc: $(cat "$TEST_TMP/bad.err")"
grep -Eq "$heading" "$TEST_TMP/bad.txt" || _fail "no table heading: $(cat "$TEST_TMP/bad.txt")"
rows=0
while read -r point state; do
	grep -Eq "^ +$point [a-z]+ +-?[0-9]+ \S+ +$state +FAIL" "$TEST_TMP/bad.txt" ||
		_fail "no row for failing state $state (point $point): $(cat "$TEST_TMP/bad.txt")"
	rows=$((rows + 1))
done < <(jq -r '.states[] | select(.result != "pass") | "\(.point) \(.state)"' \
	"$TEST_TMP/bad/report.json")
[ "$rows" = 2 ] || _fail "report.json has $rows failing states, expected 2"
echo "stdout a file: the heading and a row for each of the 2 failing states"

rc=$(crashtest "$TEST_TMP/good" true)
[ "$rc" = 0 ] || _fail "a passing run exited $rc: $(cat "$TEST_TMP/good.err")"
if grep -Eq "$heading" "$TEST_TMP/good.txt"; then
	_fail "a run in which every state passed prints a heading without rows: $(cat "$TEST_TMP/good.txt")"
fi
grep -q '^8 states checked: 8 passed, 0 failed$' "$TEST_TMP/good.txt" ||
	_fail "no count of the states: $(cat "$TEST_TMP/good.txt")"
echo "every state passed: the count, no empty table"

# on a terminal, the same lines (the run folder's name aside)
if command -v script >/dev/null; then
	"${stand_ins[@]}" script -qec \
		"'$crashtest_cmd' --fs raw --check '$TEST_TMP/checker {}' --out '$TEST_TMP/tty' 2>/dev/null" \
		/dev/null </dev/null | tr -d '\r' >"$TEST_TMP/tty.txt" || true
	diff <(sed "s|$TEST_TMP/bad|RUN|g" "$TEST_TMP/bad.txt") \
		<(sed "s|$TEST_TMP/tty|RUN|g" "$TEST_TMP/tty.txt") ||
		_fail "crashtest prints otherwise on a terminal"
	echo "on a terminal: the same table"
fi
