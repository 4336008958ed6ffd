#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# What flushlog check spends on a state does not grow with the log (issue
# 28: the library scanned the log for every state's last and next mark,
# 300 states of a log of a million entries took 62 s against 10 s for 10).
# Two logs without marks, of 4000 and of 40000 entries, the first the
# start of the second: checking the states of 16 flush points rather than
# 4 costs the same instructions more on both.  Counted by callgrind, which
# is deterministic where wall time is not: the flushlog process, and each
# checker's child from its fork (prctl, its first call) until its exec.
# asan: no
. "$FLUSHLOG_TOP/tests/common.sh"
_require_cmd valgrind

# make_log PAIRS: a write and a flush, PAIRS times, the same entries first
make_log() {
	{
		echo "device 2048"
		awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) print "write", i % 2048, 1, "\nflush" }'
	} >"$TEST_TMP/$1.fls"
	"$MKLOG" -o "$TEST_TMP/$1.log" "$TEST_TMP/$1.fls"
	rm "$TEST_TMP/$1.fls"
}

# instructions PAIRS K: what check of the states up to flush:K costs
instructions() {
	local out=$TEST_TMP/cg-$1-$2
	mkdir "$out"
	valgrind --tool=callgrind --zero-before=prctl --dump-before=execve \
		--callgrind-out-file="$out/cg.%p" "$FLUSHLOG" check -q -w "$out" \
		--to "flush:$2" "$TEST_TMP/$1.log" -- true >"$out/stdout" 2>"$out/valgrind" ||
		_fail "check under valgrind failed: $(tail -n 3 "$out/valgrind")"
	awk '/^totals:/ { sum += $2 } END { print sum }' "$out"/cg.*
	rm -rf "$out"
}

few=4 many=16
declare -A per_state
for pairs in 2000 20000; do
	make_log "$pairs"
	a=$(instructions "$pairs" "$few")
	b=$(instructions "$pairs" "$many")
	per_state[$pairs]=$(((b - a) / (many - few)))
	echo "$((pairs * 2)) entries: $a instructions for $((few + 1)) states, $b for $((many + 1)): ${per_state[$pairs]} a state"
done
short=${per_state[2000]} long=${per_state[20000]}
# a tenth more allows for what the run's timing changes (its polls)
((long * 10 <= short * 11)) ||
	_fail "a state costs $long instructions on the 40000-entry log, $short on the 4000-entry one: the cost grows with the log"
echo "per state: $short and $long instructions"
