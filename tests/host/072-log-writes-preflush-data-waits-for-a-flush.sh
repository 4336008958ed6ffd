#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# In a dm-log-writes log a write with PREFLUSH and no FUA guarantees, at
# its crash point, the writes before it, not its own data: that is durable
# only at the next flush.  A mark or a FUA write logged in between does not
# make it durable, and the epoch and torn models offer the states with and
# without it.  The target logs such a write when it completes, so the log
# alone cannot say this; the reader must.
#
# First, every state check hands over for the log of
#   A: write 0 8; P: write 8 8 preflush; mark fsynced; C: write 16 8; flush
# holds one of the images of a table made by hand, and every image of the
# table is handed over: the legal ones the models reach, a point's prefix
# with up to 2 more writes whole, or 1 more cut once at its middle.  (P
# with C cut is legal too, and beyond the models: torn writes do not come
# with reordered ones.)
# Then a FUA write X over part of P's sectors, logged between P and the
# flush: each crash point's replay equals fl-mklog's model, in which X,
# the newer, keeps its sectors once P is durable.
. "$FLUSHLOG_TOP/tests/common.sh"
_require_cmd jq

# (a dm-log-writes log has no device size: it ends with the last write)
cat >"$TEST_TMP/lw.fls" <<'EOS'
device 24
write 0 8 seed 1            # A
write 8 8 preflush seed 2   # P: its flush is a crash point, its data is not
mark fsynced
write 16 8 seed 3           # C
flush
EOS
"$MKLOG" -f log-writes -o "$TEST_TMP/lw.log" "$TEST_TMP/lw.fls"
printf 'device 24\nwrite 0 8 seed 1\nwrite 8 8 seed 2\nwrite 16 8 seed 3\n' >"$TEST_TMP/all.fls"
_mklog "$TEST_TMP/all.fls" flushlog "$TEST_TMP/all"
final=$TEST_TMP/all/point-1.img	# the end

# the checker: which sectors of A, P and C hold their data, one letter
# each ('.' for not), "AAAAAAAA PPPP.... ........" for A and P's head
cat >"$TEST_TMP/present" <<EOS
#!/bin/bash
for w in A:0 P:8 C:16; do
	for ((s = \${w#*:}; s < \${w#*:} + 8; s++)); do
		if cmp -s <(dd if="\$1" bs=512 skip=\$s count=1 status=none) \\
			<(dd if="$final" bs=512 skip=\$s count=1 status=none); then
			printf '%s' "\${w%%:*}"
		else
			printf .
		fi
	done
	printf ' '
done >>"$TEST_TMP/seen"
echo >>"$TEST_TMP/seen"
EOS
chmod +x "$TEST_TMP/present"
"$FLUSHLOG" check -q -w "$TEST_TMP" --states epoch,torn --max-reorder 2 --max-torn 1 \
	"$TEST_TMP/lw.log" -- "$TEST_TMP/present" {} >"$TEST_TMP/out" ||
	_fail "check failed: $(cat "$TEST_TMP/out")"
# the start: A in flight; from P's flush on, A durable, P and C in flight
# (C logged before the flush) until the flush makes both durable
diff <(printf '%s \n' \
	"........ ........ ........" \
	"AAAAAAAA ........ ........" "AAAA.... ........ ........" "....AAAA ........ ........" \
	"AAAAAAAA PPPPPPPP ........" "AAAAAAAA PPPP.... ........" "AAAAAAAA ....PPPP ........" \
	"AAAAAAAA ........ CCCCCCCC" "AAAAAAAA ........ CCCC...." "AAAAAAAA ........ ....CCCC" \
	"AAAAAAAA PPPPPPPP CCCCCCCC" | sort) <(sort -u "$TEST_TMP/seen") ||
	_fail "the images handed over differ from the legal ones (< legal, > handed over)"
echo "check hands over exactly the $(sort -u "$TEST_TMP/seen" | wc -l) legal images"

# the prefix state at the mark and at P's flush: A alone
printf 'device 24\nwrite 0 8 seed 1\n' >"$TEST_TMP/a.fls"
_mklog "$TEST_TMP/a.fls" flushlog "$TEST_TMP/a"
for spec in flush:1 mark:fsynced; do
	"$FLUSHLOG" replay -q -o "$TEST_TMP/got.img" --to "$spec" "$TEST_TMP/lw.log"
	_same_image "$TEST_TMP/a/point-1.img" "$TEST_TMP/got.img" "replay --to $spec (A alone)"
done
echo "neither P's own crash point nor the mark after it holds P"

cat >"$TEST_TMP/x.fls" <<'EOS'
device 32
write 0 8 seed 1            # A
write 8 8 preflush seed 2   # P
write 8 4 fua seed 3        # X, over P's head: durable, P is not
mark m
write 16 8 seed 4           # C
flush                       # P durable, under X where they overlap
write 24 8 preflush seed 5  # Q: no flush after it
mark last
EOS
dir=$TEST_TMP/x
_mklog "$TEST_TMP/x.fls" log-writes "$dir"
"$FLUSHLOG" points --json "$dir/log" >"$dir/points.json"
[ "$(wc -l <"$dir/points.json")" = "$(wc -l <"$dir/points.txt")" ] ||
	_fail "$(wc -l <"$dir/points.json") points listed, the model has $(wc -l <"$dir/points.txt")"
while read -r k kind applied; do
	got=$(sed -n "$((k + 1))p" "$dir/points.json")
	[[ $got == *"\"kind\":\"$kind\",\"entry\":$((applied - 1)),\"applied\":$applied,"* ]] ||
		_fail "point $k: expected $kind after $applied entries, got $got"
	"$FLUSHLOG" replay -q -o "$dir/got.img" --to "point:$k" "$dir/log"
	_same_image "$dir/point-$k.img" "$dir/got.img" "point:$k ($kind)"
done <"$dir/points.txt"
echo "a FUA write over a waiting PREFLUSH write: $(wc -l <"$dir/points.txt") points equal the model"
