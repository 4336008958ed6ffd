#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Before building states, check and replay verify that the log is in
# durability order: a misordered log is refused with exit 3 naming the
# entry, unless --no-order-check.  Edge cases work: a log with no
# entries (points, dump --to -1, plot --highlight -1, replay, check and
# its failure folder), a check with no point of the chosen kinds, and a
# dm-log-writes replay into a larger existing file keeps its size.
. "$FLUSHLOG_TOP/tests/common.sh"

# the order: a write the flush covered, logged after the flush
printf '%s\n' 'device 2048' 'write 0 8 ticks 1 2' 'flush ticks 3 4' \
	'write 8 8 ticks 1 2' >"$TEST_TMP/mis.fls"
"$MKLOG" -o "$TEST_TMP/mis.log" "$TEST_TMP/mis.fls"
for cmd in "check -w $TEST_TMP $TEST_TMP/mis.log -- true" \
	"replay -o $TEST_TMP/mis.img $TEST_TMP/mis.log"; do
	# shellcheck disable=SC2086 # words of the command
	_expect_exit 3 "$FLUSHLOG" $cmd
	grep -q "not in durability order: entry 2 .*logged after flush entry 1" "$TEST_TMP/stderr" ||
		_fail "$cmd: $(cat "$TEST_TMP/stderr")"
	grep -q -- "--no-order-check" "$TEST_TMP/stderr" || _fail "$cmd: no hint at --no-order-check"
	[ ! -e "$TEST_TMP/mis.img" ] || _fail "replay wrote an image of a misordered log"
	# shellcheck disable=SC2086
	_expect_exit 0 "$FLUSHLOG" ${cmd%% *} --no-order-check ${cmd#* }
done
echo "misordered log refused, and used with --no-order-check"

# a log with no entries: its crash points (the end, and the start) have
# the base as their state
printf '%s\n' 'device 2048' 'empty' >"$TEST_TMP/empty.fls"
_mklog "$TEST_TMP/empty.fls" flushlog "$TEST_TMP/empty"
log=$TEST_TMP/empty/log
_expect_exit 0 "$FLUSHLOG" points "$log"
grep -Eq '^ +[0-9]+ end +-1 +0  end$' "$TEST_TMP/stdout" || _fail "points: $(cat "$TEST_TMP/stdout")"
_expect_exit 0 "$FLUSHLOG" dump --to -1 "$log"
[ "$(wc -l <"$TEST_TMP/stdout")" = 1 ] || _fail "dump --to -1: $(cat "$TEST_TMP/stdout")"
_expect_exit 0 "$FLUSHLOG" plot --highlight -1 -o "$TEST_TMP/empty.svg" "$log"
if command -v xmllint >/dev/null; then
	xmllint --noout "$TEST_TMP/empty.svg" || _fail "plot of an empty log is not valid SVG"
fi
_expect_exit 0 "$FLUSHLOG" replay -o "$TEST_TMP/empty.img" "$log"
_same_image "$TEST_TMP/empty/point-1.img" "$TEST_TMP/empty.img" "replay of an empty log"
_expect_exit 0 "$FLUSHLOG" check -w "$TEST_TMP" "$log" -- cmp {} "$TEST_TMP/empty/point-1.img"
grep -Eq "^([1-9]) states checked: \1 passed" "$TEST_TMP/stdout" || _fail "check: $(cat "$TEST_TMP/stdout")"
_expect_exit 1 "$FLUSHLOG" check -q -w "$TEST_TMP" --save-failures "$TEST_TMP/fails" "$log" -- false
if grep -q "could not" "$TEST_TMP/stderr"; then
	_fail "saving the failure of an empty log: $(cat "$TEST_TMP/stderr")"
fi
saved=$(find "$TEST_TMP/fails" -mindepth 1 -maxdepth 1 -name 'point-*' | head -n 1)
[ -n "$saved" ] || _fail "empty log: no failure folder"
for f in first-bad.img last-good.img entries.txt checker.out reproduce.sh; do
	[ -e "$saved/$f" ] || _fail "empty log: no $f saved"
done
_same_image "$TEST_TMP/empty/point-1.img" "$saved/first-bad.img" "saved state"
# no crash point of the chosen kinds: said, and nothing fails
_expect_exit 0 "$FLUSHLOG" check --points mark -w "$TEST_TMP" "$log" -- false
grep -q "no state to check" "$TEST_TMP/stderr" || _fail "--points mark: $(cat "$TEST_TMP/stderr")"
echo "empty log: points, dump, plot, replay and check work"

# dm-log-writes records no device size: a larger existing image keeps its size
printf '%s\n' 'device 8192' 'write 0 8' 'flush' 'write 100 8' 'mark m' >"$TEST_TMP/lw.fls"
_mklog "$TEST_TMP/lw.fls" log-writes "$TEST_TMP/lw"
truncate -s 4M "$TEST_TMP/lw.img"
_expect_exit 0 "$FLUSHLOG" replay -o "$TEST_TMP/lw.img" "$TEST_TMP/lw/log"
[ "$(stat -c %s "$TEST_TMP/lw.img")" = 4194304 ] ||
	_fail "replay shrank the image to $(stat -c %s "$TEST_TMP/lw.img") bytes"
grep -q "keeps its 4194304 bytes" "$TEST_TMP/stderr" || _fail "size not said: $(cat "$TEST_TMP/stderr")"
end=$(awk 'END { print $1 }' "$TEST_TMP/lw/points.txt")
_same_image "$TEST_TMP/lw/point-$end.img" "$TEST_TMP/lw.img" "dm-log-writes replay into a larger file"
_expect_exit 0 "$FLUSHLOG" replay -o "$TEST_TMP/lw-new.img" "$TEST_TMP/lw/log"
grep -q "up to the highest sector written" "$TEST_TMP/stderr" || _fail "size not said: $(cat "$TEST_TMP/stderr")"
echo "dm-log-writes: a larger image keeps its size"
