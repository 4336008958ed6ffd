#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# tests/run starts the longest test first: by the cache's time of each test
# from the last run (written at the end of every run), else by
# tests/expected-durations, else a minute.  A tree of its own with four
# tests that only note when they start, run with one job so that the start
# order is the whole schedule.
. "$FLUSHLOG_TOP/tests/common.sh"
# asan: no

tree=$TEST_TMP/tree
mkdir -p "$tree/tests/host"
cp "$FLUSHLOG_TOP/tests/run" "$tree/tests/run"
for t in 001-a 002-b 003-c 004-d; do
	printf 'echo %s >>"%s/started"\n' "$t" "$TEST_TMP" >"$tree/tests/host/$t.sh"
done
printf '# a comment\nhost/002-b 100\nhost/001-a 1\nhost/004-d 300\n' >"$tree/tests/expected-durations"
export FLUSHLOG_CACHE=$TEST_TMP/cache

# order EXPECTED: run the tree, and the tests must start in that order
order() {
	rm -f "$TEST_TMP/started"
	"$tree/tests/run" --build "$TEST_TMP/build" --jobs 1 >"$TEST_TMP/run.out" 2>&1 ||
		_fail "tests/run failed: $(tail -n 3 "$TEST_TMP/run.out")"
	got=$(paste -sd' ' "$TEST_TMP/started")
	[ "$got" = "$1" ] || _fail "started '$got', expected '$1'"
	echo "started: $got"
}

# 003 is in no file: a minute, between 002 (100 s) and 001 (1 s)
order "004-d 002-b 003-c 001-a"
grep -q '^host/003-c [0-9]*$' "$FLUSHLOG_CACHE/test-durations" ||
	_fail "the run's times are not in the cache: $(cat "$FLUSHLOG_CACHE/test-durations" 2>&1)"
# the cache's times come before the committed ones
printf 'host/001-a 900\nhost/002-b 0\nhost/003-c 0\nhost/004-d 0\n' >"$FLUSHLOG_CACHE/test-durations"
order "001-a 002-b 003-c 004-d"
