#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Hostile numbers get an error, never a wild write: state names and point
# specs whose numbers overflow 64 bits, wrap when added, or do not fit the
# 32-bit sector counts are refused with the name quoted, and a 4 TiB sparse
# image given to replay --in-place is left untouched.  Planning is bounded:
# a deep-queue log of 20,000 flush points (every write submitted at tick
# 0, about 2*10^8 epoch states) is counted in O(N log N) and refused with
# the count and a hint to sample; a sample of 10^6 states is listed with
# bounded memory.
. "$FLUSHLOG_TOP/tests/common.sh"
[ -x /usr/bin/time ] || _skip "/usr/bin/time is not installed"

{
	echo "device 2048"
	for i in 0 1 2 3 4 5 6 7 8 9 10 11; do echo "write $((i * 8)) 8"; done
	echo flush
} >"$TEST_TMP/s.fls"
"$MKLOG" -o "$TEST_TMP/log" "$TEST_TMP/s.fls"
truncate -s 4T "$TEST_TMP/big.img"

blocks() { stat -c %b "$1"; }
for name in '0~0:18446744073709551615+2' '0~0:1+18446744073709551615' \
	'0~0:0+4294967296' '0~0:4294967295+1' '0~0:4294967288+8' '0~0:0+0' '0~0:8+1' \
	'0~18446744073709551615:0+1' '0~12:0+1' '1~0:0+1' '0~0:0+' '0~0:+1' '0~0' \
	'18446744073709551615' '18446744073709551616' '99999999999999999999999' '14' \
	'0+18446744073709551615' '0+13' '0+0,0' '2+1' '0+1,2,3,4,5,6,7,8,9' \
	'%' '0%%' '0%1' '-1' '+1' ' 1' '1 ' '0x1' '1e3' '' '0,1'; do
	_expect_exit 2 "$FLUSHLOG" replay -q --in-place -o "$TEST_TMP/big.img" --state "$name" "$TEST_TMP/log"
	grep -qF "state '$name'" "$TEST_TMP/stderr" ||
		_fail "--state '$name': the message does not name the state: $(cat "$TEST_TMP/stderr")"
done
if [ "$(blocks "$TEST_TMP/big.img")" != 0 ] || [ "$(stat -c %s "$TEST_TMP/big.img")" != 4398046511104 ]; then
	_fail "a refused state changed the 4 TiB image ($(blocks "$TEST_TMP/big.img") blocks)"
fi
echo "hostile state names refused, the 4 TiB image untouched"
_expect_exit 2 "$FLUSHLOG" replay -q --in-place -o "$TEST_TMP/big.img" --state '0~0:18446744073709551615+2' "$TEST_TMP/log"
echo "  e.g. $(cat "$TEST_TMP/stderr")"
# the extreme legal ones work
"$FLUSHLOG" replay -q --in-place -o "$TEST_TMP/big.img" --state '0~0:7+1' "$TEST_TMP/log"
"$FLUSHLOG" replay -q --in-place -o "$TEST_TMP/big.img" --state '11~11:0+8' "$TEST_TMP/log"
"$FLUSHLOG" replay -q -o "$TEST_TMP/end.img" "$TEST_TMP/log"
cmp -n 1048576 "$TEST_TMP/big.img" "$TEST_TMP/end.img" ||
	_fail "state 11~11:0+8 on the 4 TiB image differs from the end state"
echo "legal extremes replayed onto the 4 TiB image"

for spec in entry:18446744073709551615 entry:18446744073709551616 entry:13 \
	point:18446744073709551615 point:18446744073709551616 point:3 point:-1 \
	flush:0 flush:-1 flush:+1 flush:2 entry: point:1x 'entry: 1'; do
	_expect_exit 2 "$FLUSHLOG" replay -q -o "$TEST_TMP/x.img" --to "$spec" "$TEST_TMP/log"
	grep -qF "'$spec'" "$TEST_TMP/stderr" || _fail "--to $spec: $(cat "$TEST_TMP/stderr")"
	_expect_exit 2 "$FLUSHLOG" check -q -w "$TEST_TMP" --from "$spec" "$TEST_TMP/log" -- true
	grep -qF "'$spec'" "$TEST_TMP/stderr" || _fail "check --from $spec: $(cat "$TEST_TMP/stderr")"
done
echo "hostile point specs refused by replay --to and check --from"

# 20,000 flush epochs, each write submitted at tick 0
"$FLUSHLOG_TOP/bench/gen-deep-queue" 20000 >"$TEST_TMP/dq.fls"
"$MKLOG" -o "$TEST_TMP/dq.log" "$TEST_TMP/dq.fls"
# (RSS in KiB, generous bounds: sanitizer builds take more; the lists of
# all points at once took 1.6 GB here)
# rss OUT CMD...: CMD's peak RSS in KiB, its output in OUT
rss() {
	local out=$1
	shift
	/usr/bin/time -f %M -o "$TEST_TMP/rss" "$@" >"$out" 2>&1 || true
	tail -n 1 "$TEST_TMP/rss"
}
kb=$(rss "$TEST_TMP/stderr" "$FLUSHLOG" check -q -w "$TEST_TMP" --states epoch "$TEST_TMP/dq.log" -- true)
grep -q "200030002 crash states, more than the 1000000 that can be listed: .*--max-states" "$TEST_TMP/stderr" ||
	_fail "deep queue: expected a refusal naming 200030002 states and --max-states: $(cat "$TEST_TMP/stderr")"
((kb < 400000)) || _fail "deep queue: counting took $kb KiB"
echo "deep queue, 20000 points: refused after counting in $kb KiB: $(cat "$TEST_TMP/stderr")"
_expect_exit 2 "$FLUSHLOG" check -q -w "$TEST_TMP" --states epoch "$TEST_TMP/dq.log" -- true
_expect_exit 2 "$FLUSHLOG" check -q -w "$TEST_TMP" --states epoch --max-states 1000001 "$TEST_TMP/dq.log" -- true
grep -q "a sample of 1000001 of 200030002 crash states" "$TEST_TMP/stderr" || _fail "sample: $(cat "$TEST_TMP/stderr")"
# a sample as large as allowed: planned and listed (one state checked)
kb=$(rss "$TEST_TMP/out" "$FLUSHLOG" check -q -w "$TEST_TMP" --states epoch,torn -K 2 \
	--max-states 1000000 --shard 0/100000000 "$TEST_TMP/dq.log" -- true)
grep -q '^999999 states at 20002 crash points (1333533360002 candidates, sampled)' "$TEST_TMP/out" ||
	_fail "sample of 10^6: $(head -n 3 "$TEST_TMP/out")"
((kb < 1500000)) || _fail "deep queue: a sample of 10^6 states took $kb KiB"
echo "deep queue: a sample of 10^6 states planned in $kb KiB: $(head -n 1 "$TEST_TMP/out")"
