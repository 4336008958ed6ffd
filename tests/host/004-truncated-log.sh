#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A clean log cut at any 512-byte boundary is refused (exit 3, naming the
# entry or the super block).  A dirty log (writer crashed) cut anywhere
# gives exactly the entries that were wholly written: a partial last entry
# is reported as the torn tail and never replayed.
. "$FLUSHLOG_TOP/tests/common.sh"

dir=$TEST_TMP/d
_mklog "$DATA/basic.fls" flushlog "$dir"
size=$(stat -c %s "$dir/log")
for ((cut = 0; cut < size; cut += 512)); do
	head -c "$cut" "$dir/log" >"$dir/cut"
	_expect_exit 3 "$FLUSHLOG" info "$dir/cut"
	grep -Eq "entry [0-9]+ at offset|super block|too small|truncated" "$TEST_TMP/stderr" ||
		_fail "cut at $cut: unclear message: $(cat "$TEST_TMP/stderr")"
done

# the dirty twin of the same log, and the offsets of its entries
{ echo dirty; cat "$DATA/basic.fls"; } >"$dir/dirty.fls"
"$MKLOG" -l -o "$dir/dirty" "$dir/dirty.fls" >"$dir/layout"
for ((cut = 512; cut <= size; cut += 512)); do
	head -c "$cut" "$dir/dirty" >"$dir/cut"
	whole=$(awk -v cut="$cut" '$3 + $4 <= cut { n++ } END { print n + 0 }' "$dir/layout")
	_expect_exit 0 "$FLUSHLOG" info --json "$dir/cut"
	grep -q "\"entries\":$whole," "$TEST_TMP/stdout" ||
		_fail "dirty log cut at $cut: expected $whole entries: $(cat "$TEST_TMP/stdout")"
	partial=$(awk -v cut="$cut" '$3 < cut && $3 + $4 > cut' "$dir/layout")
	if [ -n "$partial" ]; then
		grep -q "\"torn\":{\"entry\":$whole," "$TEST_TMP/stdout" ||
			_fail "cut at $cut inside entry $whole: torn tail not reported: $(cat "$TEST_TMP/stdout")"
		grep -q "torn at entry $whole" "$TEST_TMP/stderr" ||
			_fail "cut at $cut: no warning on stderr"
	fi
	if ((whole > 0)); then
		"$FLUSHLOG" replay -q -o "$dir/a.img" "$dir/cut" 2>/dev/null
		"$FLUSHLOG" replay -q -o "$dir/b.img" --to "entry:$((whole - 1))" "$dir/log"
		_same_image "$dir/b.img" "$dir/a.img" "dirty log cut at $cut"
	fi
done
