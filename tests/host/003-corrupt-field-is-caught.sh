#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A flipped bit in any header field of a clean log (super block, first,
# middle and last entry) and in entry data gives exit 3, a message naming
# the entry or the super block and the offset, no crash, and no output
# image.
. "$FLUSHLOG_TOP/tests/common.sh"

dir=$TEST_TMP/basic
_mklog "$DATA/basic.fls" flushlog "$dir"
"$MKLOG" -l -f flushlog -o "$dir/log2" "$DATA/basic.fls" >"$dir/layout"
cmp -s "$dir/log" "$dir/log2" || _fail "the writer is not deterministic"
nr=$(wc -l <"$dir/layout")

flip() {	# flip FILE BYTE: invert the lowest bit of byte BYTE
	local v
	v=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
	# shellcheck disable=SC2059 # the format is the octal escape
	printf "$(printf '\\%03o' $((v ^ 1)))" |
		dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

try() {	# try WHAT BYTE PATTERN: corrupt one byte, expect a clean refusal
	cp "$dir/log" "$dir/bad"
	flip "$dir/bad" "$2"
	rm -f "$dir/out.img"
	_expect_exit 3 "$FLUSHLOG" info "$dir/bad"
	grep -Eq "$3" "$TEST_TMP/stderr" ||
		_fail "$1 (byte $2): message does not say where: $(cat "$TEST_TMP/stderr")"
	_expect_exit 3 "$FLUSHLOG" replay -q -o "$dir/out.img" "$dir/bad"
	[ ! -e "$dir/out.img" ] || _fail "$1: a failed replay left an image"
	local left
	left=$(find "$dir" -name 'out.img.flushlog-*')
	[ -z "$left" ] || _fail "$1: temporary image left behind: $left"
	checked=$((checked + 1))
}

checked=0
while read -r field off size; do
	for byte in "$off" $((off + size - 1)); do
		case $field in
		flushlog_super.*)
			try "$field" "$byte" "super block|at offset 0"
			;;
		flushlog_entry.*)
			for e in 0 $((nr / 2)) $((nr - 1)); do
				read -r _ _ eoff _ < <(sed -n "$((e + 1))p" "$dir/layout")
				try "entry $e $field" $((eoff + byte)) "entry $e at offset $eoff"
			done
			;;
		esac
	done
done < <("$MKLOG" --fields)

# a data byte of the first and of the last write
for e in 0 $((nr - 1)); do
	read -r _ _ eoff _ < <(sed -n "$((e + 1))p" "$dir/layout")
	try "entry $e data" $((eoff + 512 + 100)) "entry $e at offset $eoff: data checksum"
done
echo "$checked corruptions refused"
