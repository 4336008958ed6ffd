#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A device need not zero what it is told to discard: --states discard adds,
# at each crash point where some discarded sector was not written since,
# the state "N%" in which every discard kept its old data.  Write-zeroes
# stays zeroes.  The states are exactly those of a table made by hand, and
# each image, from check and from replay --state, equals an independent
# model: fl-mklog's image of the same script without its discards (and,
# on a base, a replay of that script).  A journal that trusts discard to
# zero its old records passes under the prefix model and is caught by the
# discard model; one that writes zeroes passes both.
. "$FLUSHLOG_TOP/tests/common.sh"
_require_cmd jq

cat >"$TEST_TMP/d.fls" <<'EOS'
device 2048
write 0 16 seed 11  # 0 A, sectors 0-15
write 100 8 seed 12 # 1 X
flush               # 2   point 1: 3 entries
discard 0 16        # 3   A discarded
write 8 4 seed 13   # 4   sectors 8-11 written again
flush               # 5   point 2: 6 entries
zeroes 100 8        # 6   X zeroed: a guarantee
discard 200 8       # 7   never written: the base's data
flush               # 8   point 3: 9 entries
write 0 16 seed 14  # 9   A's sectors all written again
flush               # 10  point 4: 11 entries; the end
EOS
# (explicit seeds: without its discards, the script writes the same data)
grep -v '^discard' "$TEST_TMP/d.fls" >"$TEST_TMP/nd.fls"
_mklog "$TEST_TMP/d.fls" flushlog "$TEST_TMP/d"
_mklog "$TEST_TMP/nd.fls" flushlog "$TEST_TMP/nd"
log=$TEST_TMP/d/log

# the checker: records each state and compares it with the model's image
cat >"$TEST_TMP/record" <<EOS
#!/bin/sh
case \$FLUSHLOG_STATE_NAME in
*%) want=$TEST_TMP/nd/point-\$FLUSHLOG_POINT.img ;;
*) want=$TEST_TMP/d/point-\$FLUSHLOG_POINT.img ;;
esac
cmp -s "\$1" "\$want" && r=same || r=differs
echo "\$FLUSHLOG_POINT \$FLUSHLOG_STATE_NAME \$r" >>"$TEST_TMP/seen"
EOS
chmod +x "$TEST_TMP/record"

rm -f "$TEST_TMP/seen"
"$FLUSHLOG" check -q --every-state -w "$TEST_TMP" --states discard "$log" -- "$TEST_TMP/record" {} >"$TEST_TMP/out"
[ "$(head -n 1 "$TEST_TMP/out")" = "8 states at 6 crash points (8 candidates)" ] ||
	_fail "count: $(head -n 1 "$TEST_TMP/out")"
# points 2 and 3 have a discarded sector that held data and was not
# written since; at 4 only the never-written 200-207 is left, and on a
# zero base discarding zeroes keeps zeroes: no state "11%" to check
diff <(printf '%s\n' "0 0 same" "1 3 same" "2 6 same" "3 9 same" "4 11 same" "5 11 same" \
	"2 6% same" "3 9% same" | sort) <(sort "$TEST_TMP/seen") ||
	_fail "the states above differ (< expected, > handed over)"
echo "check --states discard: $(head -n 1 "$TEST_TMP/out"), each image equals the model's"

# replay --state rebuilds them byte for byte
for s in 6%:2 9%:3 11%:4; do
	"$FLUSHLOG" replay -q -o "$TEST_TMP/r.img" --state "${s%:*}" "$log"
	_same_image "$TEST_TMP/nd/point-${s#*:}.img" "$TEST_TMP/r.img" "replay --state ${s%:*}"
done
# a discard among the extras keeps its data too; "%" on a state without a
# surviving discard is the prefix state
"$FLUSHLOG" replay -q -o "$TEST_TMP/r.img" --state 3+3% "$log"
_same_image "$TEST_TMP/nd/point-1.img" "$TEST_TMP/r.img" "replay --state 3+3%"
"$FLUSHLOG" replay -q -o "$TEST_TMP/r.img" --state 3% "$log"
_same_image "$TEST_TMP/d/point-1.img" "$TEST_TMP/r.img" "replay --state 3%"
echo "replay --state N% equals the script without its discards"

# on a base of random bytes: the discarded sectors get the base's back
head -c 1M /dev/urandom >"$TEST_TMP/base.img"
mkdir -p "$TEST_TMP/based"
while read -r k _ _; do
	"$FLUSHLOG" replay -q -o "$TEST_TMP/based/point-$k.img" --base "$TEST_TMP/base.img" \
		--to "point:$k" "$TEST_TMP/nd/log"
done <"$TEST_TMP/nd/points.txt"
for s in 6%:2 9%:3 11%:4; do
	"$FLUSHLOG" replay -q -o "$TEST_TMP/r.img" --base "$TEST_TMP/base.img" --state "${s%:*}" "$log"
	_same_image "$TEST_TMP/based/point-${s#*:}.img" "$TEST_TMP/r.img" "replay --base --state ${s%:*}"
done
rm -f "$TEST_TMP/seen"
mkdir -p "$TEST_TMP/based-d"
while read -r k _ _; do
	"$FLUSHLOG" replay -q -o "$TEST_TMP/based-d/point-$k.img" --base "$TEST_TMP/base.img" \
		--to "point:$k" "$log"
done <"$TEST_TMP/d/points.txt"
cat >"$TEST_TMP/based-check" <<EOS
#!/bin/sh
case \$FLUSHLOG_STATE_NAME in
*%) want=$TEST_TMP/based/point-\$FLUSHLOG_POINT.img ;;
*) want=$TEST_TMP/based-d/point-\$FLUSHLOG_POINT.img ;;
esac
cmp -s "\$1" "\$want"
EOS
chmod +x "$TEST_TMP/based-check"
"$FLUSHLOG" check -q -k -w "$TEST_TMP" --base "$TEST_TMP/base.img" --states discard "$log" -- \
	"$TEST_TMP/based-check" {} >"$TEST_TMP/out" || _fail "check --base: $(cat "$TEST_TMP/out")"
# on a base, 200-207 held the base's data: point 4's "11%" is a state too
[ "$(head -n 1 "$TEST_TMP/out")" = "9 states at 6 crash points (10 candidates)" ] ||
	_fail "count on a base: $(head -n 1 "$TEST_TMP/out")"
echo "on a base: $(tail -n 1 "$TEST_TMP/out")"
_expect_exit 2 "$FLUSHLOG" replay -q --in-place -o "$TEST_TMP/r.img" --state 9% "$log"
grep -q "in-place" "$TEST_TMP/stderr" || _fail "--in-place --state 9%: $(cat "$TEST_TMP/stderr")"

# A journal of 4 blocks (sectors 0-31) whose recovery reads records from
# block 0 until a zero block: every record read must be of one generation.
# Generation 1 fills it; the journal is then emptied, and generation 2
# writes block 0.  Emptied by a discard, the old blocks 1-3 may still be
# there after block 0: recovery reads a record of the wrong generation.
printf '%s\n' 'device 2048' 'write 0 32 seed 1' >"$TEST_TMP/g1.fls"
printf '%s\n' 'device 2048' 'write 0 8 seed 2' >"$TEST_TMP/g2.fls"
_mklog "$TEST_TMP/g1.fls" flushlog "$TEST_TMP/g1"
_mklog "$TEST_TMP/g2.fls" flushlog "$TEST_TMP/g2"
cat >"$TEST_TMP/journal-check" <<EOS
#!/bin/bash
block() { dd if="\$1" bs=4096 skip="\$2" count=1 status=none; }
gen=
for b in 0 1 2 3; do
	[ -n "\$(block "\$1" \$b | tr -d '\0' | head -c 1)" ] || break
	if cmp -s <(block "\$1" \$b) <(block "$TEST_TMP/g1/point-1.img" \$b); then g=1
	elif cmp -s <(block "\$1" \$b) <(block "$TEST_TMP/g2/point-1.img" \$b); then g=2
	else echo "block \$b: not a record"; exit 1; fi
	[ -z "\$gen" ] || [ "\$gen" = "\$g" ] || { echo "block \$b: generation \$g after \$gen"; exit 1; }
	gen=\$g
done
EOS
chmod +x "$TEST_TMP/journal-check"
for empty in discard zeroes; do
	printf '%s\n' 'device 2048' 'write 0 32 seed 1' 'flush' "$empty 0 32" 'flush' \
		'write 0 8 seed 2' 'flush' >"$TEST_TMP/j-$empty.fls"
	"$MKLOG" -o "$TEST_TMP/j-$empty.log" "$TEST_TMP/j-$empty.fls"
	"$FLUSHLOG" check -q -k -w "$TEST_TMP" "$TEST_TMP/j-$empty.log" -- "$TEST_TMP/journal-check" {} \
		>"$TEST_TMP/out" || _fail "journal emptied by $empty: a prefix state failed: $(cat "$TEST_TMP/out")"
	echo "journal emptied by $empty, prefix: $(tail -n 1 "$TEST_TMP/out")"
	rc=0
	"$FLUSHLOG" check -q -k -w "$TEST_TMP" --states discard --report "$TEST_TMP/j.json" \
		"$TEST_TMP/j-$empty.log" -- "$TEST_TMP/journal-check" {} >"$TEST_TMP/out" || rc=$?
	echo "journal emptied by $empty, discard: exit $rc, $(tail -n 1 "$TEST_TMP/out")"
	if [ "$empty" = discard ]; then
		((rc == 1)) || _fail "the journal that trusts discard was not caught"
		[ "$(jq -c '[.states[] | select(.result == "fail") | .state]' "$TEST_TMP/j.json")" = '["6%"]' ] ||
			_fail "expected state 6% to fail: $(cat "$TEST_TMP/out")"
	else
		((rc == 0)) || _fail "write-zeroes is a guarantee, yet a state failed: $(cat "$TEST_TMP/out")"
	fi
done

# A discard logged before an older write it overtook (a durability-order
# log: the discard was issued after the write completed) does not keep
# that write out of the state where discards keep their data: there the
# discard never happened, and the write's data is what the disk holds.
printf '%s\n' 'device 2048' 'discard 0 8 ticks 3 4' 'write 0 8 seed 1 ticks 1 2' \
	'flush ticks 5 6' >"$TEST_TMP/o.fls"
"$MKLOG" -o "$TEST_TMP/o.log" "$TEST_TMP/o.fls"
printf '%s\n' 'device 2048' 'write 0 8 seed 1' >"$TEST_TMP/ow.fls"
mkdir -p "$TEST_TMP/ow"
"$MKLOG" -e "$TEST_TMP/ow" -o "$TEST_TMP/ow/log" "$TEST_TMP/ow.fls"
"$FLUSHLOG" replay -q -o "$TEST_TMP/r.img" --state 3% "$TEST_TMP/o.log"
_same_image "$TEST_TMP/ow/point-1.img" "$TEST_TMP/r.img" "state 3%: an overtaking discard kept its data"
"$FLUSHLOG" replay -q -o "$TEST_TMP/r.img" --state 3 "$TEST_TMP/o.log"
cmp -s "$TEST_TMP/r.img" <(head -c 1048576 /dev/zero) ||
	_fail "state 3: the discard, issued after the write completed, did not zero it"
echo "an overtaking discard that kept its data leaves the older write"
