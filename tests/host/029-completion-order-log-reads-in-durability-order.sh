#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A version 2 log holds its entries in completion order; flushlog reads it
# in durability order.  One trace is written both ways: as the target
# writes it now (version 2, completion order) and as a version 1 target
# did (durability order).  The version 2 log lists its entries in the
# durability order stated below, with the numbers they were logged with;
# it has the same entries, points and, at every crash point, the same
# image as the version 1 log, whose images fl-mklog's model computes.  A
# dirty version 2 log with a torn tail is reordered the same way, a
# version 2 log whose completion ticks go backwards is refused naming the
# entry, and a log of a version this reader does not know (4) is refused.
. "$FLUSHLOG_TOP/tests/common.sh"
_require_cmd jq

# The trace, one tick an event:
#   1 A submitted   6 B completes   11 mark m1       16 F2 completes
#   2 B submitted   7 C completes   12 E submitted   17 G completes
#   3 A completes   8 F1 completes  13 E completes   18 H submitted
#   4 C submitted   9 D submitted   14 F2 submitted  19 H completes
#   5 F1 submitted 10 D completes   15 G submitted
# F1 covers A only (B and C completed after it was issued); D is FUA; F2
# covers B, C and the discard E; G and H are covered by no flush.
# Explicit seeds: the data must not depend on where an entry is logged.
cat >"$TEST_TMP/completion.fls" <<'EOS'
device 2048
version 2
write 0 8 seed 1 ticks 1 3          # A  logged 0
write 8 8 seed 2 ticks 2 6          # B  logged 1
write 16 8 seed 3 ticks 4 7         # C  logged 2
flush ticks 5 8                     # F1 logged 3
write 24 8 fua seed 4 ticks 9 10    # D  logged 4
mark m1                             # m1 logged 5, tick 11
discard 0 8 ticks 12 13             # E  logged 6
flush ticks 14 16                   # F2 logged 7
write 32 8 seed 5 ticks 15 17       # G  logged 8
write 8 8 seed 6 ticks 18 19        # H  logged 9
EOS
# the same entries in durability order, as a version 1 log
cat >"$TEST_TMP/durability.fls" <<'EOS'
device 2048
write 0 8 seed 1 ticks 1 3          # A
flush ticks 5 8                     # F1
write 24 8 fua seed 4 ticks 9 10    # D
mark m1                             # m1, tick 11
write 8 8 seed 2 ticks 2 6          # B
write 16 8 seed 3 ticks 4 7         # C
discard 0 8 ticks 12 13             # E
flush ticks 14 16                   # F2
write 32 8 seed 5 ticks 15 17       # G
write 8 8 seed 6 ticks 18 19        # H
EOS
# "entry logged_seq op sector": A F1 D m1 B C E F2 G H
expected_order='0 0 write 0
1 3 flush 0
2 4 write 24
3 5 mark 0
4 1 write 8
5 2 write 16
6 6 discard 0
7 7 flush 0
8 8 write 32
9 9 write 8'

v2=$TEST_TMP/v2.log
"$MKLOG" -o "$v2" "$TEST_TMP/completion.fls"
_mklog "$TEST_TMP/durability.fls" flushlog "$TEST_TMP/v1"
v1=$TEST_TMP/v1/log

# order_of LOG: "entry logged_seq op sector" per entry, as dump lists them
order_of() {
	"$FLUSHLOG" dump --json "$1" | jq -r '"\(.entry) \(.logged_seq) \(.op) \(.sector)"'
}

# (a) durability order, each entry with the number it was logged with
diff <(echo "$expected_order") <(order_of "$v2") ||
	_fail "version 2 log: entries not in the durability order above (< expected, > listed)"
# the version 1 log is in durability order as written
diff <(echo "$expected_order" | awk '{ print $1, $1, $3, $4 }') <(order_of "$v1") ||
	_fail "version 1 log: entries renumbered (< expected, > listed)"
# every other fact of an entry, ticks and flags included, is the same;
# only where it lies in the log differs
diff <("$FLUSHLOG" dump --json "$v1" | jq -c 'del(.logged_seq, .offset)') \
	<("$FLUSHLOG" dump --json "$v2" | jq -c 'del(.logged_seq, .offset)') ||
	_fail "entries differ between the version 1 (<) and version 2 (>) logs"
echo "dump lists the version 2 log in durability order: A F1 D m1 B C E F2 G H"

# info names the version and finds the order right
_expect_exit 0 "$FLUSHLOG" info --json "$v2"
jq -e '.version == 2 and .order_verified' "$TEST_TMP/stdout" >/dev/null ||
	_fail "info --json: $(cat "$TEST_TMP/stdout")"
_expect_exit 0 "$FLUSHLOG" info "$v2"
grep -q '^format: *flushlog version 2$' "$TEST_TMP/stdout" ||
	_fail "info: $(cat "$TEST_TMP/stdout")"
grep -q 'durability order verified' "$TEST_TMP/stdout" ||
	_fail "info: order not verified: $(cat "$TEST_TMP/stdout")"
_expect_exit 0 "$FLUSHLOG" info --json "$v1"
jq -e '.version == 1' "$TEST_TMP/stdout" >/dev/null ||
	_fail "info --json of the version 1 log: $(cat "$TEST_TMP/stdout")"

# (b) the same points, and at each the version 1 model's image
diff <("$FLUSHLOG" points --json "$v1") <("$FLUSHLOG" points --json "$v2") ||
	_fail "points differ between the version 1 (<) and version 2 (>) logs"
while read -r k kind _; do
	"$FLUSHLOG" replay -q -o "$TEST_TMP/got.img" --to "point:$k" "$v2"
	_same_image "$TEST_TMP/v1/point-$k.img" "$TEST_TMP/got.img" "version 2 log, point:$k ($kind)"
done <"$TEST_TMP/v1/points.txt"
echo "replay of the version 2 log equals the version 1 model at $(wc -l <"$TEST_TMP/v1/points.txt") points"

# a dirty version 2 log torn in H's data: the entries before it, in the
# same order, G still last; the torn slot is named by its logged number
{ echo dirty; cat "$TEST_TMP/completion.fls"; } >"$TEST_TMP/dirty.fls"
"$MKLOG" -l -o "$TEST_TMP/dirty.log" "$TEST_TMP/dirty.fls" >"$TEST_TMP/layout"
read -r _ _ h_offset _ < <(grep '^entry 9 ' "$TEST_TMP/layout")
head -c "$((h_offset + 1024))" "$TEST_TMP/dirty.log" >"$TEST_TMP/torn.log"
diff <(echo "$expected_order" | head -n 9) <(order_of "$TEST_TMP/torn.log" 2>/dev/null) ||
	_fail "torn version 2 log: not in durability order (< expected, > listed)"
_expect_exit 0 "$FLUSHLOG" info --json "$TEST_TMP/torn.log"
jq -e ".torn.entry == 9 and .torn.offset == $h_offset and .entries == 9" \
	"$TEST_TMP/stdout" >/dev/null || _fail "torn tail: $(cat "$TEST_TMP/stdout")"
"$FLUSHLOG" replay -q -o "$TEST_TMP/got.img" "$TEST_TMP/torn.log" 2>/dev/null
"$FLUSHLOG" replay -q -o "$TEST_TMP/want.img" --to entry:8 "$v1"
_same_image "$TEST_TMP/want.img" "$TEST_TMP/got.img" "torn version 2 log, replayed to its end"
echo "a torn version 2 log: entry 9 at offset $h_offset torn, the 9 before it in durability order"

# (c) completion ticks that go backwards: not a completion-order log
printf '%s\n' 'device 2048' 'version 2' 'write 0 8 ticks 1 2' \
	'write 8 8 ticks 3 6' 'write 16 8 ticks 4 5' 'flush ticks 7 8' >"$TEST_TMP/back.fls"
"$MKLOG" -l -o "$TEST_TMP/back.log" "$TEST_TMP/back.fls" >"$TEST_TMP/layout"
read -r _ _ offset _ < <(grep '^entry 2 ' "$TEST_TMP/layout")
_expect_exit 3 "$FLUSHLOG" info "$TEST_TMP/back.log"
grep -q "entry 2 at offset $offset: completed at tick 5, before entry 1 (tick 6)" "$TEST_TMP/stderr" ||
	_fail "ticks backwards: $(cat "$TEST_TMP/stderr")"
# the order check cannot be skipped past it: the log has no order to use
_expect_exit 3 "$FLUSHLOG" replay -q --no-order-check -o "$TEST_TMP/x.img" "$TEST_TMP/back.log"
echo "completion ticks going backwards are refused: $(cat "$TEST_TMP/stderr")"

# (d) a version this reader does not know
sed 's/^version 2$/version 4/' "$TEST_TMP/completion.fls" >"$TEST_TMP/v4.fls"
"$MKLOG" -o "$TEST_TMP/v4.log" "$TEST_TMP/v4.fls"
_expect_exit 3 "$FLUSHLOG" dump "$TEST_TMP/v4.log"
grep -q "super block: unsupported version 4 (this reader knows 1 to 3)" "$TEST_TMP/stderr" ||
	_fail "version 4: $(cat "$TEST_TMP/stderr")"
echo "version 4 is refused: $(cat "$TEST_TMP/stderr")"
