#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A RESIZE entry changes its device's size from its place in the log on:
# a log that grows a device (64 to 128 sectors) and shrinks it (to 96),
# with writes past the first size after the growth, replays at every
# crash point to the image fl-mklog's model disk holds, as large as the
# largest size (replay -o, and every image check hands over); info gives
# the first and the largest size and counts the resizes; dump shows each
# as "resize" with its new size.  A range past the size in effect where
# it stands (a write past 64 sectors before the growth, one past 96 after
# the shrink) and a malformed RESIZE (size 0, a range, data, a label,
# two ticks) are refused, naming the entry and its offset.
. "$FLUSHLOG_TOP/tests/common.sh"

dir=$TEST_TMP/resize
_mklog "$DATA/resize.fls" flushlog "$dir"
log=$dir/log
largest=$((128 * 512))
n=0
while read -r k kind applied; do
	"$FLUSHLOG" replay -q -o "$dir/got.img" --to "point:$k" "$log" ||
		_fail "replay to point:$k ($kind) failed"
	[ "$(stat -c %s "$dir/got.img")" = "$largest" ] ||
		_fail "point:$k: the image has $(stat -c %s "$dir/got.img") bytes, not the largest size's $largest"
	_same_image "$dir/point-$k.img" "$dir/got.img" "point:$k ($kind, $applied entries)"
	n=$((n + 1))
done <"$dir/points.txt"
echo "replay: $n points equal the model's images, each of $largest bytes"

# every image check hands over is as large as the largest size
# shellcheck disable=SC2016 # the checker's shell expands them
"$FLUSHLOG" check -q -w "$TEST_TMP" --states prefix,epoch,torn "$log" -- \
	sh -c '[ "$(stat -c %s "$1")" = "$2" ]' _ {} "$largest" >"$TEST_TMP/check.out" ||
	_fail "check: a state image is not $largest bytes: $(cat "$TEST_TMP/check.out")"
echo "check: $(tail -n 1 "$TEST_TMP/check.out"), every image of $largest bytes"

"$FLUSHLOG" info --json "$log" >"$TEST_TMP/info.json"
jq -e '.devices[0].sectors == 128 and .devices[0].first_sectors == 64 and
	.data_sectors == 128 and .resizes == 2' "$TEST_TMP/info.json" >/dev/null ||
	_fail "info --json: expected sectors 128, first_sectors 64, resizes 2: $(cat "$TEST_TMP/info.json")"
"$FLUSHLOG" info "$log" | grep -q '^data device: *128 sectors (the largest of its sizes; 64 when first listed)' ||
	_fail "info does not give the largest size and the first: $("$FLUSHLOG" info "$log" | grep 'data device')"
[ "$("$FLUSHLOG" dump --json "$log" | jq -c 'select(.op == "resize") | .size')" = "$(printf '128\n96')" ] ||
	_fail "dump --json: the resizes are not 128 and 96: $("$FLUSHLOG" dump --json "$log" | grep resize)"
"$FLUSHLOG" dump "$log" | grep -Eq '^ +[0-9]+ +[0-9]+ resize +N +- +- .* size=96$' ||
	_fail "dump does not show the shrink as 'resize ... size=96': $("$FLUSHLOG" dump "$log")"
echo "info and dump: sizes 64 first, 128 largest, resizes to 128 and 96"

# refused LINES ENTRY OFFSET MESSAGE: a log of a write and a flush, then
# LINES, is corrupt (exit 3), and the message names entry ENTRY at byte
# OFFSET and says MESSAGE
refused() {
	printf 'device 64\nwrite 0 1\nflush\n%s\n' "$1" >"$TEST_TMP/bad.fls"
	"$MKLOG" -o "$TEST_TMP/bad.log" "$TEST_TMP/bad.fls"
	_expect_exit 3 "$FLUSHLOG" replay -q -o "$TEST_TMP/bad.img" "$TEST_TMP/bad.log"
	grep -qF "entry $2 at offset $3: $4" "$TEST_TMP/stderr" ||
		_fail "'$1': expected 'entry $2 at offset $3: $4', got: $(cat "$TEST_TMP/stderr")"
	echo "refused: $(cat "$TEST_TMP/stderr")"
}
# a write past the first size, though a resize after it grows the device
refused "$(printf 'raw op=1 sector=64 nr=8 datalen=4096\nresize 128')" 2 2048 \
	"sectors 64+8 beyond device 0's 64 sectors"
# a write past the size a shrink left, though the device was larger
refused "$(printf 'resize 128\nresize 96\nraw op=1 sector=96 nr=8 datalen=4096')" 4 3072 \
	"sectors 96+8 beyond device 0's 96 sectors (its size since a resize)"
refused 'raw op=7 sector=0' 2 2048 "resize of device 0 to an invalid size of 0 sectors"
for bad in 'nr=8' 'datalen=512' 'label=x'; do
	refused "raw op=7 sector=128 $bad" 2 2048 "resize with a range, data, a label or flags"
done
