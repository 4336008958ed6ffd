#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A bio with REQ_PREFLUSH and data, no FUA, is logged as a FLUSH entry and
# a WRITE entry with F_PREFLUSH sharing one submit_tick.  The block layer
# sends the data only once the flush completed, so the data is on the
# media only with the writes that flush made durable, and never at a crash
# point that completed while the flush ran.  Taken as in flight from the
# shared tick, it was offered there: states 0+3 and 1+3 below, P without
# A (illegal).  And a write that completed before P's data was sent is
# older than P, wherever durability order applies it: P keeps the sectors
# they share.
#
# The ticks of the version 2 log, P's data entry logged when it completed:
#   1 A submitted   2 A completes   3 X (FUA) submitted   4 P submitted
#   5 X completes   6 P's flush completes   7 P's data completes
#   8 F2 submitted  9 F2 completes
# In durability order, X comes where it completed, P's flush takes A
# (completed before it was issued), P waits for F2:
#   entry 0 X (flush:1)  1 A  2 P's flush (flush:2)  3 P  4 F2 (flush:3)
# The states, by hand (--states epoch,torn -K 2 --max-torn 1, each write
# of 8 sectors torn once at its middle, a head or a tail):
# - start, until X completes (tick 5): X and A may be on the media, not
#   P, submitted at 4 but sent at 6: 0, 0+1, X or A torn (0+0 is "1", X
#   and A together "3", the prefix states of flush:1 and flush:2);
# - flush:1, until P's flush completes (6): A may be; P still not: 1, A
#   torn (1+1 is "3");
# - flush:2, until F2 completes: P may be: 3, P torn (3+3 is "5");
# - flush:3 and the end: 5.
# The same with X a FUA write of a second device (version 3): a crash
# point of one device is a crash point of all.
. "$FLUSHLOG_TOP/tests/common.sh"

cat >"$TEST_TMP/v2.fls" <<'EOS'
device 2048
version 2
write 0 8 seed 1 ticks 1 2            # A
write 16 8 fua seed 2 ticks 3 5       # X, completes while P's flush runs
flush ticks 4 6                       # P's flush
write 8 8 preflush seed 3 ticks 4 7   # P's data, sent at 6
flush ticks 8 9                       # F2
EOS
cat >"$TEST_TMP/v3.fls" <<'EOS'
device 2048
adddevice 2048
version 3
write 0 8 seed 1 ticks 1 2            # A
write 16 8 fua seed 2 ticks 3 5 dev 1 # X, device 1's
flush ticks 4 6                       # P's flush, device 0's
write 8 8 preflush seed 3 ticks 4 7   # P's data, sent at 6
flush ticks 8 9                       # F2
EOS

# states NAME ARGS...: the states check hands over, one "NAME SPEC" a line
states() {
	local name=$1
	shift
	rm -f "$TEST_TMP/$name.states"
	# shellcheck disable=SC2016 # the checker's shell expands them
	"$FLUSHLOG" check -q --every-state -w "$TEST_TMP" "$@" "$TEST_TMP/$name.log" -- \
		sh -c 'echo "$FLUSHLOG_STATE_NAME $FLUSHLOG_SPEC" >>"$1"' _ "$TEST_TMP/$name.states" >/dev/null
	sort "$TEST_TMP/$name.states"
}

# the durability order the states are named by: X A flush P flush (dump
# names a sector DEVICE:SECTOR in a log of several devices)
declare -A order=(
	[v2]="write:16 write:0 flush:- write:8 flush:- "
	[v3]="write:1:16 write:0:0 flush:0:- write:0:8 flush:0:- "
)
for v in v2 v3; do
	"$MKLOG" -o "$TEST_TMP/$v.log" "$TEST_TMP/$v.fls"
	got=$("$FLUSHLOG" dump "$TEST_TMP/$v.log" | awk '
		NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		{ printf "%s:%s ", $col["op"], $col["sector"] }')
	[ "$got" = "${order[$v]}" ] ||
		_fail "$v: durability order is $got"
	diff <(printf '%s\n' "0 start" "0+1 start" \
		"0~0:0+4 start" "0~0:4+4 start" "0~1:0+4 start" "0~1:4+4 start" \
		"1 flush:1" "1~1:0+4 flush:1" "1~1:4+4 flush:1" \
		"3 flush:2" "3~3:0+4 flush:2" "3~3:4+4 flush:2" \
		"5 end" "5 flush:3" | sort) \
		<(states "$v" --states epoch,torn -K 2 --max-torn 1) ||
		_fail "$v: the states differ from the legal ones (< legal, > handed over)"
done
echo "no state has P's data without A, or before its flush completed"

# A version 1 log, in durability order as its writer put it: Z, over P's
# sectors, completed (5) before P's flush did (6), so before P's data was
# sent, and is logged after P, both made durable by F2.  P is the newer:
# every state applying both has P's data there.  At the start (until P's
# flush completes) Z may be on the media, P may not.
cat >"$TEST_TMP/v1.fls" <<'EOS'
device 2048
write 0 8 seed 1 ticks 1 2            # 0 A
flush ticks 3 6                       # 1 P's flush
write 8 8 preflush seed 2 ticks 3 7   # 2 P's data, sent at 6
write 8 8 seed 3 ticks 4 5            # 3 Z, older than P's data
flush ticks 8 9                       # 4 F2
EOS
"$MKLOG" -o "$TEST_TMP/v1.log" "$TEST_TMP/v1.fls"
diff <(printf '%s\n' "0 start" "0+3 start" "2 flush:1" "2+3 flush:1" \
	"3 flush:1" "5 end" "5 flush:2" | sort) \
	<(states v1 --states epoch -K 2) ||
	_fail "v1: the states differ from the legal ones (< legal, > handed over)"
printf 'device 2048\nwrite 0 8 seed 1\nwrite 8 8 seed 2\n' >"$TEST_TMP/ap.fls"
_mklog "$TEST_TMP/ap.fls" flushlog "$TEST_TMP/ap"
for spec in end flush:2; do
	"$FLUSHLOG" replay -q -o "$TEST_TMP/got.img" --to "$spec" "$TEST_TMP/v1.log"
	_same_image "$TEST_TMP/ap/point-1.img" "$TEST_TMP/got.img" "v1, $spec (A and P)"
done
echo "P keeps its sectors against Z, which completed before P's data was sent"
