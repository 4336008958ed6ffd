#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# An application's crash promise, checked on ext4's real crash states with
# crashtest --verify (examples/run): SQLite in WAL mode with
# synchronous=FULL keeps every commit it acknowledged in every state, and
# its verifier passes everywhere; with synchronous=OFF it does not, and
# the states that lost an acknowledged commit fail, by the verifier
# (check-state's exit 3: e2fsck passes them) and with the promise named.
# The filesystem alone cannot tell: such a state rechecked without
# --verify passes.
. "$FLUSHLOG_TOP/tests/common.sh"
# kernels: 6.1
# asan: no
_require_guest
_require_cmd sqlite3

run=$FLUSHLOG_TOP/examples/run
# check RUN CONFIG: the exit status of examples/run sqlite CONFIG
check() {
	local rc=0
	"$run" sqlite "$2" --count 12 --fs ext4 --out "$TEST_TMP/$1" >"$TEST_TMP/$1.out" 2>&1 || rc=$?
	tail -n 3 "$TEST_TMP/$1.out"
	return "$rc"
}
# exits RUN: how many states exited with each status, "N exit C" per line
exits() {
	jq -r '.states[] | .exit' "$TEST_TMP/$1/report.json" | sort -n | uniq -c
}

rc=0
check safe wal-full || rc=$?
((rc == 0)) || _fail "SQLite WAL synchronous=FULL failed (exit $rc): $(grep -h . "$TEST_TMP"/safe/failures/*/checker.out 2>/dev/null | grep -v '^[/P]\|^e2fsck' | head -n 5)"
jq -e '.states | length > 20' "$TEST_TMP/safe/report.json" >/dev/null ||
	_fail "the safe run checked $(jq '.states | length' "$TEST_TMP/safe/report.json") states, not the 20 or more 12 commits make"
# every promise was logged (a promise lost on the way would make the
# check vacuous) and each is a crash point that was checked
for i in $(seq 1 12); do
	grep -q " mark:promise:txn=$i\$" "$TEST_TMP/safe/points.txt" || _fail "no point at the promise of txn $i"
done
jq -e '[.states[] | select(.spec | startswith("mark:promise:txn="))] | length == 12' \
	"$TEST_TMP/safe/report.json" >/dev/null || _fail "not every promise's point was checked"
echo "wal-full: every state passed: $(exits safe | tr '\n' ' ')"

rc=0
check unsafe off || rc=$?
((rc == 1)) || _fail "SQLite synchronous=OFF: crashtest exited $rc, not 1 (a state failed)"
exits unsafe >"$TEST_TMP/exits"
awk '$2 != 0 && $2 != 3 { bad = 1 } END { exit bad }' "$TEST_TMP/exits" ||
	_fail "a state failed other than by the verifier (e2fsck?): $(cat "$TEST_TMP/exits")"
grep -q ' 3$' "$TEST_TMP/exits" || _fail "no state failed by the verifier: $(cat "$TEST_TMP/exits")"
grep -l 'sqlite-app verify: .* (promised: txn [1-9]' \
	"$TEST_TMP"/unsafe/failures/*/checker.out >"$TEST_TMP/lost" ||
	_fail "no failure names a lost acknowledged transaction"
grep -q "^crashtest: --verify 'sqlite-app verify' failed where the filesystem passed: [1-9]" "$TEST_TMP/unsafe.out" ||
	_fail "the summary does not name the verifier's failures"
echo "off: caught, $(jq '[.states[] | select(.exit == 3)] | length' "$TEST_TMP/unsafe/report.json") states lost an acknowledged commit, e.g.:"
grep -h -m1 'sqlite-app verify: ' "$(head -n 1 "$TEST_TMP/lost")"

# a state that lost a commit, the filesystem's check alone: it passes
lost=$(jq -r '[.states[] | select(.exit == 3) | .state] | last' "$TEST_TMP/unsafe/report.json")
rc=0
"$FLUSHLOG_TOP/scripts/crashtest" --recheck "$TEST_TMP/unsafe" --state "$lost" --verify '' \
	--out "$TEST_TMP/fs-only" >"$TEST_TMP/fs-only.out" 2>&1 || rc=$?
((rc == 0)) || _fail "without --verify state $lost exited $rc: the filesystem itself failed? $(tail -n 3 "$TEST_TMP/fs-only.out")"
echo "off, state $lost without --verify: passes: the filesystem cannot see the lost commit"
