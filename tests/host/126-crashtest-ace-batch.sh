#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make crashtest --ace: one boot traces and checks a shard of seq-1 on
# ext4, each sequence on a new mkfs with its own log, oracle and states
# (from its setup's mark to its last persistence point), and every one
# passes; ace.json and ace.txt say so.  With ext4's ordering switched off
# (barrier=0: no flush reaches the log after mkfs), a sample of the epoch
# states holds states that lost the setup's sync, and the batch must fail
# the sequence, name its failing states and keep its log for a replay on
# the host.
. "$FLUSHLOG_TOP/tests/common.sh"
# kernels: 6.1
# asan: no
_require_guest

ace() {
	local name=$1 want=$2 rc=0 keep
	shift 2
	"$FLUSHLOG_TOP/scripts/crashtest" --fs ext4 --ace seq-1 --out "$TEST_TMP/$name" "$@" \
		>"$TEST_TMP/$name.out" 2>&1 || rc=$?
	if [ "$rc" != "$want" ]; then
		keep=$FLUSHLOG_BUILD/test-results/crashtest-ace-$name
		rm -rf "$keep" && cp -r "$TEST_TMP/$name" "$keep"
		tail -n 20 "$TEST_TMP/$name.out" >&2
		_fail "$name: crashtest --ace $* exited $rc, expected $want; run folder kept in $keep"
	fi
	tail -n 1 "$TEST_TMP/$name/ace.txt"
}

# two sequences of 95, one boot
ace ordered 0 --shard 0/48
run=$TEST_TMP/ordered
[ "$(jq -c '[.passed, .failed, .not_run]' "$run/ace.json")" = '[2,0,0]' ] ||
	_fail "ordered: ace.json does not say 2 passed: $(cat "$run/ace.json")"
for i in 0 48; do
	steps=$("$FLUSHLOG_BUILD/fl-workload" --ace seq-1 --list | awk -F'\t' -v i="$i" '$1 == i { print $2 }')
	[ "$(jq -r --argjson i "$i" '.sequences[] | select(.index == $i) | .steps' "$run/ace.json")" = "$steps" ] ||
		_fail "ordered: sequence $i is not '$steps' in ace.json"
	grep -q "^seq-1 #$i: $steps\$" "$run/ace/$i/workload.txt" ||
		_fail "ordered: ace/$i ran something else: $(head -n 1 "$run/ace/$i/workload.txt")"
	last=$(awk '$1 == "mark" { l = $4 } END { print l }' "$run/ace/$i/oracle.txt")
	[ "$(jq -r '.options | "\(.from) \(.to)"' "$run/ace/$i/report.json")" = "mark:setup-1 mark:$last" ] ||
		_fail "ordered: sequence $i was not checked from mark:setup-1 to mark:$last"
	n=$(jq '.states | length' "$run/ace/$i/report.json")
	((n >= 2)) || _fail "ordered: sequence $i had $n states"
	echo "#$i $steps: $n states, setup-1 to $last"
done

# the same filesystem without its flushes: caught
ace unordered 1 --shard 0/95 --ordering off --states epoch --max-states 8
run=$TEST_TMP/unordered
[ "$(jq -c '[.passed, .failed]' "$run/ace.json")" = '[0,1]' ] ||
	_fail "unordered: ace.json does not say 1 failed: $(cat "$run/ace.json")"
state=$(jq -r '.sequences[0].failing_states[0] // empty' "$run/ace.json")
[ -n "$state" ] || _fail "unordered: the failing sequence names no state"
grep -q "^fail: #0 .*(states .*$state" "$run/ace.txt" ||
	_fail "unordered: ace.txt does not name #0 and state $state: $(cat "$run/ace.txt")"
"$FLUSHLOG" replay -o "$TEST_TMP/state.img" --state "$state" "$run/ace/0/log.img" ||
	_fail "unordered: the kept log does not replay state $state on the host"
echo "ordering off: #0 caught, state $state replays on the host"
