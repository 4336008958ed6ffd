#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# flushlog plot draws a log as valid SVG: a line for every crash point,
# each mark labelled, highlighted entries in red, label text escaped; a
# long log stays small; bad arguments are refused.
. "$FLUSHLOG_TOP/tests/common.sh"
_require_cmd xmllint

dir=$TEST_TMP/basic
_mklog "$DATA/basic.fls" flushlog "$dir"
"$FLUSHLOG" plot --highlight 2,4 --title 'a <basic> log & more' -o "$TEST_TMP/p.svg" "$dir/log"
xmllint --noout "$TEST_TMP/p.svg" || _fail "not valid XML"
points=$(grep -c -v ' end ' "$dir/points.txt")
lines=$(grep -c '<line ' "$TEST_TMP/p.svg")
((lines >= points)) || _fail "$lines lines for $points crash points"
for label in after-fua commit-1; do
	grep -q ">$label</text>" "$TEST_TMP/p.svg" || _fail "mark '$label' is not labelled"
done
[ "$(grep -c 'stroke="#cc0000"' "$TEST_TMP/p.svg")" = 2 ] || _fail "expected 2 red lines"
grep -q 'a &lt;basic&gt; log &amp; more' "$TEST_TMP/p.svg" || _fail "title not escaped"
echo "basic log: $lines lines, marks labelled, 2 highlighted"

# 20000 writes: one bar a kind a pixel column keeps the picture small
{ echo "device 65536"; for ((i = 0; i < 20000; i++)); do echo "write $(((i * 37) % 65000)) 8"; ((i % 100)) || echo flush; done; } >"$TEST_TMP/long.fls"
"$MKLOG" -o "$TEST_TMP/long.log" "$TEST_TMP/long.fls"
"$FLUSHLOG" plot "$TEST_TMP/long.log" >"$TEST_TMP/long.svg"
xmllint --noout "$TEST_TMP/long.svg" || _fail "long log: not valid XML"
size=$(stat -c %s "$TEST_TMP/long.svg")
((size < 200000)) || _fail "long log: $size bytes of SVG"
echo "20000-entry log: $size bytes"

_expect_exit 2 "$FLUSHLOG" plot --highlight 3,x "$dir/log"
_expect_exit 2 "$FLUSHLOG" plot
_expect_exit 4 "$FLUSHLOG" plot -o /nonexistent/p.svg "$dir/log"
grep -q "/nonexistent/p.svg" "$TEST_TMP/stderr" || _fail "the error does not name the file"
