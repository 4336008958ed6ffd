#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A write issued after another one completed holds the sectors they share,
# wherever durability order puts the two.  A write W that completed into
# the cache waits for the flush that makes it durable; a FUA write X to
# some of its sectors, issued after W completed, is durable at once and so
# comes first in durability order.  At the flush the disk holds X's data
# on the shared sectors, not W's.  The ground truth is fl-mklog's model of
# the writes in the order they were issued; the log is written in
# completion order (version 2, as the target writes it) and in durability
# order (version 1, as the old target wrote it, with the same flaw baked
# in).  A state in which X was never issued keeps W's data there.
. "$FLUSHLOG_TOP/tests/common.sh"
_require_cmd jq

# The trace, one tick an event:
#   1 W submitted    6 F1 completes   11 D submitted (discard 32+8)
#   2 W completes    7 Y submitted    12 D completes
#   3 X submitted    8 Y completes    13 Z submitted (FUA 32+4)
#   4 X completes    9 F2 submitted   14 Z completes
#   5 F1 submitted  10 F2 completes   15 F3 submitted, 16 completes
# X (FUA) overtakes W on sectors 8-15; Y, newer than both, takes 12-19;
# Z (FUA) overtakes the discard D on sectors 32-35.
cat >"$TEST_TMP/completion.fls" <<'EOS'
device 2048
version 2
write 0 16 seed 1 ticks 1 2         # W
write 8 8 fua seed 2 ticks 3 4      # X
flush ticks 5 6                     # F1
write 12 8 seed 3 ticks 7 8         # Y
flush ticks 9 10                    # F2
discard 32 8 ticks 11 12            # D
write 32 4 fua seed 4 ticks 13 14   # Z
flush ticks 15 16                   # F3
EOS
# what the old target logged: durability order, X before W, Z before D
cat >"$TEST_TMP/durability.fls" <<'EOS'
device 2048
write 8 8 fua seed 2 ticks 3 4      # X
write 0 16 seed 1 ticks 1 2         # W
flush ticks 5 6                     # F1
write 12 8 seed 3 ticks 7 8         # Y
flush ticks 9 10                    # F2
write 32 4 fua seed 4 ticks 13 14   # Z
discard 32 8 ticks 11 12            # D
flush ticks 15 16                   # F3
EOS

# truth NAME OPS...: the model's image after the writes, in issue order
truth() {
	local name=$1 op
	shift
	{
		echo "device 2048"
		for op in "$@"; do
			case $op in
			W) echo "write 0 16 seed 1" ;;
			X) echo "write 8 8 seed 2" ;;
			Y) echo "write 12 8 seed 3" ;;
			D) echo "discard 32 8" ;;
			Z) echo "write 32 4 seed 4" ;;
			esac
		done
	} >"$TEST_TMP/$name.fls"
	mkdir -p "$TEST_TMP/$name"
	"$MKLOG" -e "$TEST_TMP/$name" -o "$TEST_TMP/$name/log" "$TEST_TMP/$name.fls"
	cp "$TEST_TMP/$name/point-$(($(wc -l <"$TEST_TMP/$name/points.txt") - 1)).img" \
		"$TEST_TMP/$name.img"
}
truth at-x X			# X durable, W maybe lost from the cache
truth at-f1 W X
truth at-f2 W X Y
truth at-z W X Y Z		# D still in the cache
truth at-f3 W X Y D Z

"$MKLOG" -o "$TEST_TMP/v2.log" "$TEST_TMP/completion.fls"
"$MKLOG" -o "$TEST_TMP/v1.log" "$TEST_TMP/durability.fls"
for log in v2 v1; do
	points=$("$FLUSHLOG" points --json "$TEST_TMP/$log.log" |
		 jq -r 'select(.kind == "fua" or .kind == "flush") | .spec' | tr '\n' ' ')
	[ "$points" = "flush:1 flush:2 flush:3 flush:4 flush:5 " ] ||
		_fail "$log: expected five flush or FUA points, got: $points"
	set -- at-x at-f1 at-f2 at-z at-f3
	for k in 1 2 3 4 5; do
		"$FLUSHLOG" replay -q -o "$TEST_TMP/got.img" --to "flush:$k" \
			"$TEST_TMP/$log.log"
		_same_image "$TEST_TMP/$1.img" "$TEST_TMP/got.img" \
			"version ${log#v} log, flush:$k ($1)"
		shift
	done
	# one replay through every point on one image: the same end
	"$FLUSHLOG" replay -q -o "$TEST_TMP/got.img" "$TEST_TMP/$log.log"
	_same_image "$TEST_TMP/at-f3.img" "$TEST_TMP/got.img" "version ${log#v} log, end"
done
echo "newer writes keep their sectors at every point, in both log versions"

# replay in steps (--in-place --from) gives the same images
"$FLUSHLOG" replay -q -o "$TEST_TMP/step.img" --to flush:1 "$TEST_TMP/v2.log"
for k in 2 3 4 5; do
	"$FLUSHLOG" replay -q --in-place --from "flush:$((k - 1))" \
		-o "$TEST_TMP/step.img" --to "flush:$k" "$TEST_TMP/v2.log"
done
_same_image "$TEST_TMP/at-f3.img" "$TEST_TMP/step.img" "replay in steps, flush:5"
echo "replay in steps agrees"

# A state whose crash point comes before X was issued: W may be durable
# there (the cache wrote it back), and X does not exist yet.  Epoch state
# "1+2" is the mark plus W; its image is W's, shared sectors included.
cat >"$TEST_TMP/mark.fls" <<'EOS'
device 2048
version 2
write 0 16 seed 1 ticks 1 2         # W
mark m1                             # tick 3
write 8 8 fua seed 2 ticks 4 5      # X
flush ticks 6 7
EOS
"$MKLOG" -o "$TEST_TMP/mark.log" "$TEST_TMP/mark.fls"
truth w-only W
# check_hands LOG IMAGE WHAT: check --states epoch hands its checker
# state 1+2 with IMAGE
check_hands() {
	rm -f "$TEST_TMP/names"
	# shellcheck disable=SC2016 # the checker's shell expands them
	"$FLUSHLOG" check -q -w "$TEST_TMP" --states epoch "$1" -- \
		sh -c 'echo "$FLUSHLOG_STATE_NAME" >>"$2"; [ "$FLUSHLOG_STATE_NAME" != 1+2 ] || cmp -s "$1" "$3"' \
		_ {} "$TEST_TMP/names" "$2" >"$TEST_TMP/out" ||
		_fail "check handed state 1+2 an image other than $3's: $(cat "$TEST_TMP/out")"
	grep -qx '1+2' "$TEST_TMP/names" ||
		_fail "check --states epoch did not hand over state 1+2: $(tr '\n' ' ' <"$TEST_TMP/names")"
}
# the checker is handed state 1+2 (the mark plus W) with W's image
check_hands "$TEST_TMP/mark.log" "$TEST_TMP/w-only.img" W
"$FLUSHLOG" replay -q -o "$TEST_TMP/got.img" --state 1+2 "$TEST_TMP/mark.log"
_same_image "$TEST_TMP/w-only.img" "$TEST_TMP/got.img" "state 1+2 (W, X not yet issued)"
"$FLUSHLOG" replay -q -o "$TEST_TMP/got.img" --to end "$TEST_TMP/mark.log"
_same_image "$TEST_TMP/at-f1.img" "$TEST_TMP/got.img" "mark log, end (W then X)"
echo "a state without X keeps W's data on the shared sectors"

# A newer write's claim outlives the writes applied over it.  Z completes
# into the cache; X (FUA), issued after that, overtakes it; Y (FUA), in
# flight since before Z completed, lands after X.  At the flush Z is
# durable too, but X overwrote it on the disk: the end holds Y's data
# (or X's, had Y come first), never Z's.
cat >"$TEST_TMP/chain.fls" <<'EOS'
device 2048
version 2
write 0 8 seed 5 ticks 2 3          # Z
write 0 8 fua seed 7 ticks 4 5      # X
write 0 8 fua seed 6 ticks 1 6      # Y
flush ticks 7 8
EOS
"$MKLOG" -o "$TEST_TMP/chain.log" "$TEST_TMP/chain.fls"
# only_seed NAME SEED: the model's image after one write of seed SEED
only_seed() {
	printf 'device 2048\nwrite 0 8 seed %s\n' "$2" >"$TEST_TMP/$1.fls"
	mkdir -p "$TEST_TMP/$1"
	"$MKLOG" -e "$TEST_TMP/$1" -o "$TEST_TMP/$1/log" "$TEST_TMP/$1.fls"
	cp "$TEST_TMP/$1/point-1.img" "$TEST_TMP/$1.img"
}
only_seed y-only 6
only_seed x-only 7
"$FLUSHLOG" replay -q -o "$TEST_TMP/got.img" "$TEST_TMP/chain.log"
_same_image "$TEST_TMP/y-only.img" "$TEST_TMP/got.img" \
	"X's claim on Z's sectors after Y wrote over them"
# Epoch state 1+2 is X with Z from the cache: X's data, in a replay of
# the state and in check's image of it, which borrows what the image
# replayed up to X knows of newer writes.
"$FLUSHLOG" replay -q -o "$TEST_TMP/got.img" --state 1+2 "$TEST_TMP/chain.log"
_same_image "$TEST_TMP/x-only.img" "$TEST_TMP/got.img" "state 1+2 (X, then Z from the cache)"
check_hands "$TEST_TMP/chain.log" "$TEST_TMP/x-only.img" X
echo "an overtaken write stays overwritten after later writes"

# Many at once: rounds of writes that wait in the cache and FUA writes
# that overtake them, to a small device (many overlaps, partly), one
# write in flight at a time, so that issue order is the truth.  Enough
# of them for replay to drop what no later entry can need any more.
awk 'BEGIN { srand(35); t = 1; s = 1; print "device 4096"; print "version 2"
	for (r = 0; r < 6; r++) {
		for (k = 0; k < 700; k++) {
			fua = rand() < 0.8 ? " fua" : ""
			printf "write %d %d%s seed %d ticks %d %d\n", int(rand() * 4000),
				int(rand() * 24) + 1, fua, s++, t, t + 1
			t += 2
		}
		printf "flush ticks %d %d\n", t, t + 1
		t += 2
	} }' >"$TEST_TMP/many.fls"
"$MKLOG" -o "$TEST_TMP/many.log" "$TEST_TMP/many.fls"
grep -v '^version' "$TEST_TMP/many.fls" | sed 's/ fua//; s/ ticks.*//' >"$TEST_TMP/many-truth.fls"
mkdir -p "$TEST_TMP/many-truth"
"$MKLOG" -e "$TEST_TMP/many-truth" -o "$TEST_TMP/many-truth/log" "$TEST_TMP/many-truth.fls"
flush_specs() {
	"$FLUSHLOG" points --json "$1" | jq -r 'select(.kind == "flush") | .spec'
}
mapfile -t got < <(flush_specs "$TEST_TMP/many.log")
mapfile -t want < <(flush_specs "$TEST_TMP/many-truth/log")
((${#got[@]} == 6 && ${#want[@]} == 6)) ||
	_fail "expected six flush points, got ${#got[@]} and ${#want[@]}"
for k in 0 2 5; do
	"$FLUSHLOG" replay -q -o "$TEST_TMP/got.img" --to "${got[k]}" "$TEST_TMP/many.log"
	"$FLUSHLOG" replay -q -o "$TEST_TMP/want.img" --to "${want[k]}" "$TEST_TMP/many-truth/log"
	_same_image "$TEST_TMP/want.img" "$TEST_TMP/got.img" "many overtaking writes, flush $k"
done
echo "thousands of overtaking writes replay to the issue-order image"
