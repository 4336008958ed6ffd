#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The target checksums data with XXH64 by default (FLUSHLOG_SF_DATA_XXH64).
# libflushlog's XXH64 equals xxhsum's, whole and fed in pieces; a log with
# XXH64 data checksums replays to the model's image by every replay path;
# a bad data byte in it is caught by each path, naming the entry; and the
# super block's flag is what decides: the same entries read as CRC32C are
# all refused.
. "$FLUSHLOG_TOP/tests/common.sh"
_require_cmd xxhsum
_require_cmd jq

# (a) the hash itself, against xxHash's own tool
for n in 0 1 3 4 7 8 31 32 33 63 64 65 100 4096 1048589; do
	head -c "$n" /dev/urandom >"$TEST_TMP/x.$n"
done
"$FLUSHLOG_BUILD/tests/t-xxh64" "$TEST_TMP"/x.* >"$TEST_TMP/ours" ||
	_fail "XXH64 whole and in pieces differ: $(cat "$TEST_TMP/ours")"
xxhsum -H1 "$TEST_TMP"/x.* >"$TEST_TMP/theirs"
diff "$TEST_TMP/theirs" "$TEST_TMP/ours" ||
	_fail "XXH64 differs from xxhsum -H1 (< xxhsum, > libflushlog)"
echo "XXH64 equals xxhsum -H1 on $(wc -l <"$TEST_TMP/ours") lengths, whole and in pieces"

# (b) a log with XXH64 data checksums: writes small and larger than the
# replay's window (1 MiB), every replay path, new and in place
{
	echo "device 8192"
	echo "checksum xxh64"
	awk 'BEGIN { srand(45)
		for (n = 1; n <= 60; n++) {
			nr = n == 30 ? 3000 : int(rand() * 64) + 1
			print "write", int(rand() * (8192 - nr)), nr
			if (n % 7 == 0) print "flush"
			if (n % 11 == 0) print "discard", int(rand() * 8000), 16
		}
		print "flush" }'
} >"$TEST_TMP/w.fls"
_mklog "$TEST_TMP/w.fls" flushlog "$TEST_TMP/m"
log=$TEST_TMP/m/log
end=$(awk 'END { print $1 }' "$TEST_TMP/m/points.txt")
for path in "" "FLUSHLOG_READER=1" "FLUSHLOG_READER=0 FLUSHLOG_NO_KERNEL_COPY=1" \
	    "FLUSHLOG_READER=1 FLUSHLOG_NO_KERNEL_COPY=1"; do
	# shellcheck disable=SC2086 # the path is words
	env $path "$FLUSHLOG" replay -q -o "$TEST_TMP/new.img" "$log" ||
		_fail "replay ($path) failed: $(cat "$TEST_TMP/stderr" 2>/dev/null)"
	_same_image "$TEST_TMP/m/point-$end.img" "$TEST_TMP/new.img" "xxh64 log ($path)"
done
while read -r k _; do
	"$FLUSHLOG" replay -q -o "$TEST_TMP/new.img" --to "point:$k" "$log"
	_same_image "$TEST_TMP/m/point-$k.img" "$TEST_TMP/new.img" "xxh64 log, point:$k"
done <"$TEST_TMP/m/points.txt"
echo "an xxh64 log replays to the model's image at every point, by every path"

# (c) a bad byte in a small and in the large entry: every path names it
"$MKLOG" -l -o "$TEST_TMP/l.log" "$TEST_TMP/w.fls" >"$TEST_TMP/layout"
cmp -s "$TEST_TMP/l.log" "$log" || _fail "fl-mklog wrote two different logs of one script"
for which in small large; do
	if [ $which = small ]; then
		read -r _ seq off size < <(awk '$4 > 512 && $4 < 65536 { n++ } n == 5 { print; exit }' "$TEST_TMP/layout")
	else
		read -r _ seq off size < <(awk '$4 > 1048576 { print; exit }' "$TEST_TMP/layout")
	fi
	[ -n "$seq" ] || _fail "no $which entry in the layout"
	cp "$log" "$TEST_TMP/bad.log"
	printf 'X' | dd of="$TEST_TMP/bad.log" bs=1 seek=$((off + 512 + (size - 512) / 2)) \
		conv=notrunc status=none
	for path in "FLUSHLOG_READER=1" "FLUSHLOG_READER=0"; do
		# shellcheck disable=SC2086
		_expect_exit 3 env $path "$FLUSHLOG" replay -q -o "$TEST_TMP/bad.img" "$TEST_TMP/bad.log"
		grep -q "entry $seq at offset $off: data checksum mismatch" "$TEST_TMP/stderr" ||
			_fail "$which entry $seq ($path): $(cat "$TEST_TMP/stderr")"
	done
	_expect_exit 3 "$FLUSHLOG" info "$TEST_TMP/bad.log"
	grep -q "offset $off" "$TEST_TMP/stderr" "$TEST_TMP/stdout" ||
		_fail "info, $which entry $seq: $(cat "$TEST_TMP/stdout" "$TEST_TMP/stderr")"
done
echo "a bad byte in an xxh64 log is caught by every path, naming the entry"

# (d) the flag decides: the same entries with CRC32C's flag are refused
sed 's/^checksum xxh64$/checksum crc32c/' "$TEST_TMP/w.fls" >"$TEST_TMP/c.fls"
"$MKLOG" -o "$TEST_TMP/c.log" "$TEST_TMP/c.fls"
# take the xxh64 log's entries under the crc32c log's super block
{ head -c 512 "$TEST_TMP/c.log"; tail -c +513 "$log"; } >"$TEST_TMP/mixed.log"
_expect_exit 3 "$FLUSHLOG" replay -q -o "$TEST_TMP/mixed.img" "$TEST_TMP/mixed.log"
grep -q "data checksum mismatch" "$TEST_TMP/stderr" ||
	_fail "xxh64 entries read as crc32c: $(cat "$TEST_TMP/stderr")"
for l in "$log:xxh64" "$TEST_TMP/c.log:crc32c"; do
	[ "$("$FLUSHLOG" info --json "${l%:*}" | jq -r .data_checksum)" = "${l##*:}" ] ||
		_fail "info --json does not say ${l##*:} for ${l%:*}"
	"$FLUSHLOG" info "${l%:*}" | grep -q "^data checksums: *${l##*:}, all verified$" ||
		_fail "info does not say ${l##*:} for ${l%:*}: $("$FLUSHLOG" info "${l%:*}")"
done
# a log of headers only names none, whatever flag its super block has
printf '%s\n' 'device 64' 'nodata' 'checksum xxh64' 'write 0 8' 'flush' >"$TEST_TMP/nd.fls"
"$MKLOG" -o "$TEST_TMP/nd.log" "$TEST_TMP/nd.fls"
[ "$("$FLUSHLOG" info --json "$TEST_TMP/nd.log" | jq -c .data_checksum)" = null ] ||
	_fail "info --json names a data checksum for a no_data log"
echo "the super block's flag decides which checksum is read"

# (e) an entry newer writes overwrite whole is checked all the same: W
# waits in the cache, X (FUA, issued after W completed) covers all of it,
# so replay writes nothing of W; a bad byte in W's data is still refused
cat >"$TEST_TMP/o.fls" <<'EOS'
device 2048
checksum xxh64
version 2
write 0 8 seed 1 ticks 1 2
write 0 8 fua seed 2 ticks 3 4
flush ticks 5 6
EOS
"$MKLOG" -l -o "$TEST_TMP/o.log" "$TEST_TMP/o.fls" >"$TEST_TMP/layout"
read -r _ _ off _ < <(awk '$4 > 512 { print; exit }' "$TEST_TMP/layout")
printf 'X' | dd of="$TEST_TMP/o.log" bs=1 seek=$((off + 1024)) conv=notrunc status=none
for path in "FLUSHLOG_READER=1" "FLUSHLOG_READER=0"; do
	for to in end flush:2; do
		# shellcheck disable=SC2086
		_expect_exit 3 env $path "$FLUSHLOG" replay -q -o "$TEST_TMP/o.img" \
			--to $to "$TEST_TMP/o.log"
		grep -q "at offset $off: data checksum mismatch" "$TEST_TMP/stderr" ||
			_fail "overtaken entry, $path, --to $to: $(cat "$TEST_TMP/stderr")"
	done
done
echo "the data of an entry newer writes cover whole is checked too"
