#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# --states discard plans a "%" state (every discard kept its old data)
# wherever replay's "%" image differs from the prefix state, by the
# newer-write rule as replay applies it.  A FUA discard D issued after a
# write W completed is durable first, so durability order applies W
# after D; D still discarded W's data on the device, and the state in
# which D kept it (W's data) is legal and must be planned.  The other way
# round, a FUA write issued after a discard completed holds its sectors:
# the discard kept nothing there, and no "%" state is planned for it.
# Each log's states must be exactly the table's, and the "%" image must
# be the one fl-mklog computes for the same writes without the discard.
. "$FLUSHLOG_TOP/tests/common.sh"

cat >"$TEST_TMP/d-newer.fls" <<'EOS'
device 2048
version 2
write 0 8 seed 1 ticks 2 4      # W, waits for the flush
discard 0 8 fua ticks 6 8       # D, issued after W completed
write 8 8 seed 2 ticks 9 10
flush ticks 11 12
EOS
cat >"$TEST_TMP/w-newer.fls" <<'EOS'
device 2048
version 2
discard 0 8 ticks 2 4           # D, waits for the flush
write 0 8 fua seed 1 ticks 6 8  # W, issued after D completed
write 8 8 seed 2 ticks 9 10
flush ticks 11 12
EOS

# states NAME: the states check --states discard hands over, sorted
states() {
	"$MKLOG" -o "$TEST_TMP/$1.log" "$TEST_TMP/$1.fls"
	rm -f "$TEST_TMP/$1.states"
	# shellcheck disable=SC2016 # the checker's shell expands them
	"$FLUSHLOG" check -q --every-state -w "$TEST_TMP" --states discard "$TEST_TMP/$1.log" -- \
		sh -c 'echo "$FLUSHLOG_STATE_NAME $FLUSHLOG_SPEC" >>"$1"' _ "$TEST_TMP/$1.states" >/dev/null
	sort "$TEST_TMP/$1.states"
}

# expect NAME STATE...: NAME's states are exactly these
expect() {
	local name=$1
	shift
	diff <(printf '%s\n' "$@" | sort) <(states "$name") ||
		_fail "$name: the states above differ (< expected, > planned)"
}

# durability order D W W2 F: entry 0 is D, flush:2 and the end apply all 4
expect d-newer "0 start" "1 flush:1" "4 flush:2" "4 end" "4% end"
# durability order W D W2 F: W holds sectors 0-7, D keeps nothing
expect w-newer "0 start" "1 flush:1" "4 flush:2" "4 end"
echo "the planned discard states are the table's"

# the writes of both logs, without the discard, in the order issued
printf 'device 2048\nwrite 0 8 seed 1\nwrite 8 8 seed 2\n' >"$TEST_TMP/kept.fls"
_mklog "$TEST_TMP/kept.fls" flushlog "$TEST_TMP/kept"
"$FLUSHLOG" replay -q -o "$TEST_TMP/got.img" --state 4% "$TEST_TMP/d-newer.log"
_same_image "$TEST_TMP/kept/point-1.img" "$TEST_TMP/got.img" "d-newer, state 4%"
echo "state 4% holds the write the discard kept"
