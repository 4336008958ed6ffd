#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The starting position is a crash point for every model: at the start
# (point 0, the base image) and at a --from that names no point (entry:N),
# check hands over the prefix state and the states of the first epoch, as
# at any other point; and the other edges hold: the last epoch before the
# end, an epoch that starts at a mark (and, with --to, ends there), a log
# of no entries, of one entry, of no flush at all.  Each list is compared
# with a table made by hand.
# A writer whose only defect lies in the first epoch (its commit can reach
# the media before its journal blocks, no flush until the end) passes
# under the prefix model and is caught by the epoch model at point 0.
. "$FLUSHLOG_TOP/tests/common.sh"

# which 8-sector writes of the final image a state holds: "A8 B0 ..."
cat >"$TEST_TMP/present" <<'EOS'
#!/bin/bash
img=$1 final=$2
shift 2
for w in "$@"; do
	n=0
	for ((s = ${w#*:}; s < ${w#*:} + 8; s++)); do
		cmp -s <(dd if="$img" bs=512 skip=$s count=1 status=none) \
			<(dd if="$final" bs=512 skip=$s count=1 status=none) && n=$((n + 1))
	done
	printf '%s%d ' "${w%%:*}" "$n"
done
echo
EOS
chmod +x "$TEST_TMP/present"

# scenario NAME WRITES: a log from stdin; WRITES are "A:0 B:8 ..."
scenario() {
	dir=$TEST_TMP/$1
	writes=$2
	cat >"$TEST_TMP/$1.fls"
	_mklog "$TEST_TMP/$1.fls" flushlog "$dir"
	final=$dir/point-$(tail -n 1 "$dir/points.txt" | cut -d' ' -f1).img
	cat >"$TEST_TMP/record" <<EOS
#!/bin/sh
echo "\$FLUSHLOG_POINT \$FLUSHLOG_KIND \$FLUSHLOG_SPEC \$FLUSHLOG_STATE_NAME \$("$TEST_TMP/present" "\$1" "$final" $writes)" >>"$TEST_TMP/seen"
EOS
	chmod +x "$TEST_TMP/record"
}

# states ARGS... -- COUNT-LINE EXPECTED...: check's count line and every
# state it handed over: "point kind spec name contents"
states() {
	local args=()
	while [ "$1" != -- ]; do args+=("$1"); shift; done
	shift
	local count=$1
	shift
	rm -f "$TEST_TMP/seen"
	touch "$TEST_TMP/seen"
	"$FLUSHLOG" check -q --every-state -w "$TEST_TMP" "${args[@]}" "$dir/log" -- "$TEST_TMP/record" {} \
		>"$TEST_TMP/out" || _fail "$(basename "$dir"): check ${args[*]} failed: $(cat "$TEST_TMP/out")"
	[ "$(head -n 1 "$TEST_TMP/out")" = "$count" ] ||
		_fail "$(basename "$dir"): check ${args[*]}: '$(head -n 1 "$TEST_TMP/out")', expected '$count'"
	diff <(printf '%s\n' "$@" | sort) <(sort "$TEST_TMP/seen") ||
		_fail "$(basename "$dir"): check ${args[*]}: the states above differ (< expected, > handed over)"
	echo "$(basename "$dir"): check ${args[*]}: $count"
}

# One epoch: journal blocks J, K and a commit C, then one flush.
scenario one-epoch "J:0 K:8 C:16" <<'EOS'
device 2048
write 0 8     # 0 J
write 8 8     # 1 K
write 16 8    # 2 C
flush         # 3   point 1: 4 entries; the end
EOS
states -- "3 states at 3 crash points (3 candidates)" \
	"0 start start 0 J0 K0 C0 " "1 flush flush:1 4 J8 K8 C8 " "2 end end 4 J8 K8 C8 "
# the first epoch: any one of J, K, C may be on the media without the others
states --states epoch -- "6 states at 3 crash points (6 candidates)" \
	"0 start start 0 J0 K0 C0 " "0 start start 1 J8 K0 C0 " "0 start start 0+1 J0 K8 C0 " \
	"0 start start 0+2 J0 K0 C8 " "1 flush flush:1 4 J8 K8 C8 " "2 end end 4 J8 K8 C8 "
# (all three is the flushed state: it folds into "4")
states --states epoch -K 3 -- "9 states at 3 crash points (10 candidates)" \
	"0 start start 0 J0 K0 C0 " "0 start start 1 J8 K0 C0 " "0 start start 0+1 J0 K8 C0 " \
	"0 start start 0+2 J0 K0 C8 " "0 start start 2 J8 K8 C0 " "0 start start 1+2 J8 K0 C8 " \
	"0 start start 0+1,2 J0 K8 C8 " \
	"1 flush flush:1 4 J8 K8 C8 " "2 end end 4 J8 K8 C8 "
# torn at the start too: one cut a write, head or tail
states --states torn --max-torn 1 -- "9 states at 3 crash points (9 candidates)" \
	"0 start start 0 J0 K0 C0 " "1 flush flush:1 4 J8 K8 C8 " "2 end end 4 J8 K8 C8 " \
	"0 start start 0~0:0+4 J4 K0 C0 " "0 start start 0~0:4+4 J4 K0 C0 " \
	"0 start start 0~1:0+4 J0 K4 C0 " "0 start start 0~1:4+4 J0 K4 C0 " \
	"0 start start 0~2:0+4 J0 K0 C4 " "0 start start 0~2:4+4 J0 K0 C4 "
# --points without start leaves it out; with only start, only it
states --states epoch --points flush,end -- "2 states at 2 crash points (2 candidates)" \
	"1 flush flush:1 4 J8 K8 C8 " "2 end end 4 J8 K8 C8 "
states --states epoch --points start -- "4 states at 1 crash points (4 candidates)" \
	"0 start start 0 J0 K0 C0 " "0 start start 1 J8 K0 C0 " "0 start start 0+1 J0 K8 C0 " \
	"0 start start 0+2 J0 K0 C8 "

# The writer's defect inside the first epoch: a commit (C at sector 16) is
# only valid with both journal blocks.  Prefix: every state passes; epoch:
# the commit alone on the media, at point 0.
cat >"$TEST_TMP/journal-check" <<'EOS'
#!/bin/sh
nonzero() { dd if="$1" bs=512 skip="$2" count=1 status=none | tr -d '\0' | wc -c; }
[ "$(nonzero "$1" 16)" -eq 0 ] || { [ "$(nonzero "$1" 0)" -gt 0 ] && [ "$(nonzero "$1" 8)" -gt 0 ]; }
EOS
chmod +x "$TEST_TMP/journal-check"
"$FLUSHLOG" check -q -k -w "$TEST_TMP" "$dir/log" -- "$TEST_TMP/journal-check" {} >"$TEST_TMP/out" ||
	_fail "the prefix model flagged the first-epoch writer: $(cat "$TEST_TMP/out")"
echo "first-epoch writer, prefix: $(tail -n 1 "$TEST_TMP/out") (not caught: no prefix state splits the epoch)"
_expect_exit 1 "$FLUSHLOG" check -q -k -w "$TEST_TMP" --states epoch --report "$TEST_TMP/j.json" \
	"$dir/log" -- "$TEST_TMP/journal-check" {}
[ "$(jq -c '[.states[] | select(.result == "fail") | [.point, .kind, .state]]' "$TEST_TMP/j.json")" = '[[0,"start","0+2"]]' ] ||
	_fail "epoch: expected exactly state 0+2 at point 0 to fail: $(cat "$TEST_TMP/stdout")"
echo "first-epoch writer, epoch: $(tail -n 1 "$TEST_TMP/stdout") (caught at point 0, state 0+2)"

# The last epoch before the end: B and C were written after the last flush.
scenario last-epoch "A:0 B:8 C:16" <<'EOS'
device 2048
write 0 8     # 0 A
flush         # 1   point 1: 2 entries
write 8 8     # 2 B
write 16 8    # 3 C   the end: 4 entries
EOS
# (A alone is the flushed state "2": the start adds only the base)
states --states epoch -- "5 states at 3 crash points (6 candidates)" \
	"0 start start 0 A0 B0 C0 " \
	"1 flush flush:1 2 A8 B0 C0 " "1 flush flush:1 3 A8 B8 C0 " "1 flush flush:1 2+3 A8 B0 C8 " \
	"2 end end 4 A8 B8 C8 "

# An epoch that starts at a mark: the log is in durability order, so
# what comes before a mark is durable at it; the writes after it, up to
# the next flush, may be on the media.
scenario at-mark "A:0 B:8 C:16 D:24" <<'EOS'
device 2048
write 0 8     # 0 A
write 8 8     # 1 B
flush         # 2   point 1: 3 entries
mark m        # 3   point 2: 4 entries
write 16 8    # 4 C
write 24 8    # 5 D
flush         # 6   point 3: 7 entries; the end
EOS
states --states epoch --from mark:m -- "5 states at 3 crash points (5 candidates)" \
	"2 mark mark:m 4 A8 B8 C0 D0 " "2 mark mark:m 5 A8 B8 C8 D0 " "2 mark mark:m 4+5 A8 B8 C0 D8 " \
	"3 flush flush:2 7 A8 B8 C8 D8 " "4 end end 7 A8 B8 C8 D8 "
# --to the same mark: that point alone, its epoch still in its states
states --states epoch --from mark:m --to mark:m -- "3 states at 1 crash points (3 candidates)" \
	"2 mark mark:m 4 A8 B8 C0 D0 " "2 mark mark:m 5 A8 B8 C8 D0 " "2 mark mark:m 4+5 A8 B8 C0 D8 "
# --to a flush: the points up to it; --to before --from: an error
states --to flush:1 -- "2 states at 2 crash points (2 candidates)" \
	"0 start start 0 A0 B0 C0 D0 " "1 flush flush:1 3 A8 B8 C0 D0 "
_expect_exit 2 "$FLUSHLOG" check -q -w "$TEST_TMP" --from mark:m --to flush:1 "$dir/log" -- true
grep -q -- "--to flush:1 comes before --from mark:m" "$TEST_TMP/stderr" ||
	_fail "--to before --from: $(cat "$TEST_TMP/stderr")"
# --from a position that is no crash point: a start point of its own,
# point 0 at entry:0, with B possibly there ("1+1" folds into point 1's
# "3"); C and D, in the epochs of point 1 and the mark, go to the mark
states --states epoch --from entry:0 -- "7 states at 5 crash points (10 candidates)" \
	"0 start entry:0 1 A8 B0 C0 D0 " "1 flush flush:1 3 A8 B8 C0 D0 " \
	"2 mark mark:m 4 A8 B8 C0 D0 " "2 mark mark:m 5 A8 B8 C8 D0 " "2 mark mark:m 4+5 A8 B8 C0 D8 " \
	"3 flush flush:2 7 A8 B8 C8 D8 " "4 end end 7 A8 B8 C8 D8 "
# the whole log from the start: the first epoch is A and B
states --states epoch -- "9 states at 5 crash points (11 candidates)" \
	"0 start start 0 A0 B0 C0 D0 " "0 start start 1 A8 B0 C0 D0 " "0 start start 0+1 A0 B8 C0 D0 " \
	"1 flush flush:1 3 A8 B8 C0 D0 " "2 mark mark:m 4 A8 B8 C0 D0 " \
	"2 mark mark:m 5 A8 B8 C8 D0 " "2 mark mark:m 4+5 A8 B8 C0 D8 " \
	"3 flush flush:2 7 A8 B8 C8 D8 " "4 end end 7 A8 B8 C8 D8 "

# No entries: the start and the end, the same base state.
scenario no-entries "" <<'EOS'
device 2048
empty
EOS
states --states epoch,torn,discard -K 2 -- "2 states at 2 crash points (2 candidates)" \
	"0 start start 0 " "1 end end 0 "
# One entry, never flushed: it may or may not be there.
scenario one-entry "A:0" <<'EOS'
device 2048
write 0 8
EOS
states --states epoch -- "2 states at 2 crash points (3 candidates)" \
	"0 start start 0 A0 " "1 end end 1 A8 "
# No flush at all: every write is in the first epoch.
scenario no-flush "A:0 B:8 C:16" <<'EOS'
device 2048
write 0 8
write 8 8
write 16 8
EOS
states --states epoch -K 2 -- "8 states at 2 crash points (8 candidates)" \
	"0 start start 0 A0 B0 C0 " "0 start start 1 A8 B0 C0 " "0 start start 0+1 A0 B8 C0 " \
	"0 start start 0+2 A0 B0 C8 " "0 start start 2 A8 B8 C0 " "0 start start 1+2 A8 B0 C8 " \
	"0 start start 0+1,2 A0 B8 C8 " "1 end end 3 A8 B8 C8 "

# point:0 names the start everywhere a point is named
"$FLUSHLOG" points "$dir/log" | grep -q '^ *0 start *-1 *0  start$' ||
	_fail "flushlog points does not list the start: $("$FLUSHLOG" points "$dir/log")"
"$FLUSHLOG" replay -q -o "$TEST_TMP/p0.img" --to point:0 "$dir/log"
_same_image "$dir/point-0.img" "$TEST_TMP/p0.img" "replay --to point:0"
