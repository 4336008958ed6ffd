#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# flushlog plot at scale (issue 28, item 7): a log of 100000 entries and
# 50000 flush points makes a valid SVG of tens of kilobytes (one line a
# point made megabytes that painted the plot solid); mark labels never
# overlap, however close their marks, and the marks left without one are
# counted; no axis number runs off the picture; --from and --to draw the
# entries between two points, as replay and check take them.
. "$FLUSHLOG_TOP/tests/common.sh"
_require_cmd xmllint

# attr ELEMENT NAME: the value of attribute NAME in ELEMENT's start tag
attr() {
	sed -n "s/.* $2=\"\\([^\"]*\\)\".*/\\1/p" <<<"$1"
}

# labels SVG: "x y width" of each mark label
labels() {
	local tag
	grep -o '<text class="mark-label"[^>]*>' "$1" | while IFS= read -r tag; do
		echo "$(attr "$tag" x) $(attr "$tag" y) $(attr "$tag" textLength)"
	done
}

# svg_width SVG: the picture's width
svg_width() {
	grep -o '<svg [^>]*>' "$1" | sed -n 's/.* width="\([0-9]*\)".*/\1/p'
}

# plotted SVG WHAT MARKS: SVG is valid, its labels do not overlap within a
# row and stay inside the picture, as do the axis numbers, and of MARKS
# marks each is labelled or counted; "N labelled" is printed
plotted() {
	local labelled unlabelled
	xmllint --noout "$1" || _fail "$2: not valid XML"
	labels_apart "$1" "$2"
	ticks_inside "$1" "$2"
	labelled=$(labels "$1" | wc -l)
	unlabelled=$(sed -n 's/.*>+\([0-9]*\) marks\{0,1\} not labelled<.*/\1/p' "$1")
	((labelled + ${unlabelled:-0} == $3)) ||
		_fail "$2: $labelled marks labelled and ${unlabelled:-0} counted, of $3"
	echo "$labelled labelled"
}

# labels_apart SVG WHAT: the labels of a row do not overlap, and each is
# inside the picture
labels_apart() {
	local width bad
	width=$(svg_width "$1")
	bad=$(labels "$1" | sort -k2,2n -k1,1n | awk -v w="$width" '
		$1 < 0 || $1 + $3 > w { print "label at x " $1 " of width " $3 " leaves the picture (" w ")"; exit }
		$2 == y && $1 < end { print "label at x " $1 ", y " $2 " overlaps the one ending at " end; exit }
		{ y = $2; end = $1 + $3 }')
	[ -z "$bad" ] || _fail "$2: $bad"
}

# ticks_inside SVG WHAT: each entry number of the axis is inside the
# picture (a digit is at most 0.64 em of 11 pixels)
ticks_inside() {
	local width bad
	width=$(svg_width "$1")
	bad=$(grep -o '<text class="x-tick"[^<]*<' "$1" | sed 's/.* x="\([^"]*\)".*text-anchor="\([a-z]*\)">\([0-9]*\)<$/\1 \2 \3/' |
		awk -v w="$width" '{
			len = length($3) * 0.64 * 11
			lo = $2 == "end" ? $1 - len : $2 == "middle" ? $1 - len / 2 : $1
			if (lo < 0 || lo + len > w) { print "entry number " $3 " spans " lo " to " lo + len " of " w; exit }
		}')
	[ -z "$bad" ] || _fail "$2: $bad"
}

# (a) 100000 entries: a write and a flush, 50000 times, and a mark every
# 50 pairs
{
	echo "device 65536"
	echo "nodata"
	awk 'BEGIN {
		for (i = 0; i < 50000; i++) {
			print "write", (i * 37) % 65528, 8, "\nflush"
			if (i % 50 == 0)
				print "mark", "step-" i
		}
	}'
} >"$TEST_TMP/big.fls"
"$MKLOG" -o "$TEST_TMP/big.log" "$TEST_TMP/big.fls"
"$FLUSHLOG" plot -o "$TEST_TMP/big.svg" "$TEST_TMP/big.log"
labelled=$(plotted "$TEST_TMP/big.svg" "100000 entries" 1000)
size=$(stat -c %s "$TEST_TMP/big.svg")
elements=$(grep -o '<[a-z]' "$TEST_TMP/big.svg" | wc -l)
((size < 100000)) || _fail "100000 entries: $size bytes of SVG, expected tens of kilobytes"
((elements < 2000)) || _fail "100000 entries: $elements elements"
echo "100000 entries: $size bytes, $elements elements, $labelled of 1000 marks"

# (b) 60 marks close together, labels short and long, one not UTF-8
{
	echo "device 2048"
	for ((i = 0; i < 60; i++)); do
		echo "write $((i * 8)) 8"
		case $((i % 3)) in
		0) echo "mark m$i" ;;
		1) echo "mark fsync-/mnt/scratch/a/rather/long/path/$i" ;;
		2) printf 'mark bad\xffbyte-%d\n' "$i" ;;
		esac
	done
} >"$TEST_TMP/marks.fls"
"$MKLOG" -o "$TEST_TMP/marks.log" "$TEST_TMP/marks.fls"
"$FLUSHLOG" plot -o "$TEST_TMP/marks.svg" "$TEST_TMP/marks.log"
labelled=$(plotted "$TEST_TMP/marks.svg" "60 marks" 60)
((${labelled% *} >= 20)) || _fail "60 marks: only $labelled"
tr -d '\n' <"$TEST_TMP/marks.svg" |
	grep -q '<title>fsync-/mnt/scratch/a/rather/long/path/1</title>fsync-/mnt/scratch/a/rat…</text>' ||
	_fail "60 marks: a long label is not cut with its whole text as a tooltip"
grep -q '>bad\\xFFbyte-2<' "$TEST_TMP/marks.svg" || _fail "60 marks: a byte that is not UTF-8 is not drawn as \\xFF"
echo "60 marks: $labelled"

# (c) --from and --to: the entries after flush:2 (5 applied) up to
# flush:4 (14), whose crash points are mark:after-fua (6), flush:3 (12)
# and flush:4
dir=$TEST_TMP/basic
_mklog "$DATA/basic.fls" flushlog "$dir"
"$FLUSHLOG" plot --from flush:2 --to flush:4 -o "$TEST_TMP/part.svg" "$dir/log"
xmllint --noout "$TEST_TMP/part.svg" || _fail "--from/--to: not valid XML"
ticks=$(grep -o '<text class="x-tick"[^<]*<' "$TEST_TMP/part.svg" | sed 's/.*>\([0-9]*\)<$/\1/' | paste -sd' ')
[ "$ticks" = "5 7 9 11 14" ] || _fail "--from flush:2 --to flush:4: entry numbers '$ticks', expected '5 7 9 11 14'"
lines=$(grep -o '<title>entry [0-9]*</title>' "$TEST_TMP/part.svg" | sed 's/[^0-9]//g' | paste -sd' ')
[ "$lines" = "5 11 13" ] || _fail "--from flush:2 --to flush:4: lines at entries '$lines', expected '5 11 13'"
grep -q '>after-fua<' "$TEST_TMP/part.svg" || _fail "--from/--to: mark after-fua is not labelled"
! grep -q '>commit-1<' "$TEST_TMP/part.svg" || _fail "--from/--to: mark commit-1, past --to, is drawn"
"$FLUSHLOG" plot --from mark:after-fua -o "$TEST_TMP/from-mark.svg" "$dir/log"
grep -q 'text-anchor="end">18<' "$TEST_TMP/from-mark.svg" || _fail "--from mark:after-fua: the axis does not end at 18"
_expect_exit 2 "$FLUSHLOG" plot --from flush:4 --to flush:2 "$dir/log"
grep -q "comes before" "$TEST_TMP/stderr" || _fail "--to before --from: $(cat "$TEST_TMP/stderr")"
_expect_exit 2 "$FLUSHLOG" plot --from mark:no-such "$dir/log"
grep -q "no-such" "$TEST_TMP/stderr" || _fail "--from mark:no-such: $(cat "$TEST_TMP/stderr")"
_expect_exit 2 "$FLUSHLOG" plot --to flush:99 "$dir/log"
echo "--from flush:2 --to flush:4: entries 5 to 14, lines at $lines"
