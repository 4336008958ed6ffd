#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A crash point may complete at any tick, the last one (2^64 - 1)
# included: the writes in flight when it completed are still offered.
# Two logs of the same three bios differ only in the tick at which the
# second FUA write X and the write W in flight with it complete: 2^64 - 2
# in one, 2^64 - 1 in the other.  W was submitted before X completed, so
# at the first FUA point it may be on the media without X: state 1+2.
# Both logs must give the same epoch and torn states.
. "$FLUSHLOG_TOP/tests/common.sh"

# log NAME TICK: the three bios, X and W completing at TICK
log() {
	cat >"$TEST_TMP/$1.fls" <<EOS
device 2048
version 2
write 0 8 fua seed 1 ticks 1 2   # A, FUA: point 1
write 8 8 fua seed 2 ticks 3 $2  # X, FUA: point 2
write 16 8 seed 3 ticks 4 $2     # W, in flight when X completed
EOS
	"$MKLOG" -o "$TEST_TMP/$1.log" "$TEST_TMP/$1.fls"
	"$FLUSHLOG" info "$TEST_TMP/$1.log" >/dev/null ||
		_fail "$1: flushlog info refused the log"
}

# states NAME: the states check hands over, one "NAME SPEC" a line
states() {
	rm -f "$TEST_TMP/$1.states"
	# shellcheck disable=SC2016 # the checker's shell expands them
	"$FLUSHLOG" check -q -w "$TEST_TMP" --states epoch,torn "$TEST_TMP/$1.log" -- \
		sh -c 'echo "$FLUSHLOG_STATE_NAME $FLUSHLOG_SPEC" >>"$1"' _ "$TEST_TMP/$1.states" >/dev/null
	sort "$TEST_TMP/$1.states"
}

log below 18446744073709551614
log last 18446744073709551615
states below >"$TEST_TMP/want"
grep -qx '1+2 flush:1' "$TEST_TMP/want" ||
	_fail "the log completing below the last tick lacks state 1+2 at flush:1: $(tr '\n' ' ' <"$TEST_TMP/want")"
states last >"$TEST_TMP/got"
diff "$TEST_TMP/want" "$TEST_TMP/got" ||
	_fail "a crash point completing at tick 2^64 - 1 changes its states (< at 2^64 - 2, > at 2^64 - 1)"
echo "a crash point at tick 2^64 - 1 keeps its $(wc -l <"$TEST_TMP/got") states, 1+2 among them"
