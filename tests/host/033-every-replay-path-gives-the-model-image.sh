#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Replay moves data by several paths (userspace/lib/replay.c): a copy in
# the kernel or through buffers (FLUSHLOG_NO_KERNEL_COPY), read by a
# reader thread or by the replay itself (FLUSHLOG_READER=1, 0), a clone
# where the filesystem shares blocks.  Every path gives the image
# fl-mklog's own model computes, byte for byte: on both formats, with
# writes of odd sizes at odd sectors, overlapping, larger than the window
# and a reader's buffer (1 MiB), discards and write-zeroes;
# to a new image and in place from a crash point; on 512-byte and 4 KiB
# log blocks.  A version 2 log whose durability order goes back and forth
# in the file gives the image of the same entries in that order.  A bad
# data byte is refused by every path, naming the entry and its offset,
# and the image holds exactly the entries before it, nothing of that one.
. "$FLUSHLOG_TOP/tests/common.sh"

paths=("" "FLUSHLOG_READER=1" "FLUSHLOG_READER=1 FLUSHLOG_NO_KERNEL_COPY=1"
       "FLUSHLOG_READER=0 FLUSHLOG_NO_KERNEL_COPY=1")

# gen UNIT LOGWRITES: a script on a 4 MiB device, data in units of UNIT
# sectors; every flush is followed by a write, the fourth by one of 2100
# units' worth of sectors (more than the window)
gen() {
	awk -v unit="$1" -v lw="$2" 'BEGIN {
		srand(33)
		sectors = 8192
		print "device", sectors, unit * 512
		if (unit > 1 && !lw)
			print "logblock 4096"
		split("1 3 7 8 15 64 129 700", sizes, " ")
		# the last block first: a dm-log-writes image ends at the
		# highest sector written, so it is as large as the model image
		print "write", sectors - unit, unit
		for (n = 1; n <= 240; n++) {
			nr = sizes[int(rand() * 8) + 1] * unit
			if (n == 121)
				nr = 2100 * unit
			if (nr > 4096)
				nr = 4096 - 4096 % unit
			at = int(rand() * (sectors - nr) / unit) * unit
			print "write", at, nr
			if (n % 30 == 0)
				print "flush"
			else if (n % 13 == 0)
				print "discard", int(rand() * (sectors - 64) / unit) * unit, 16 * unit
			else if (n % 17 == 0 && !lw)
				print "zeroes", int(rand() * (sectors - 64) / unit) * unit, 8 * unit
		}
		print "flush"
	}'
}

# same_every_path LOG WANT [FROM_IMAGE FROM_POINT]: every path rebuilds WANT
same_every_path() {
	local log=$1 want=$2 path
	for path in "${paths[@]}"; do
		# shellcheck disable=SC2086 # the path is words
		env $path "$FLUSHLOG" replay -q -o "$TEST_TMP/new.img" "$log" ||
			_fail "$log ($path): replay failed"
		_same_image "$want" "$TEST_TMP/new.img" "$log, new image ($path)"
		[ -n "${3:-}" ] || continue
		cp "$3" "$TEST_TMP/in-place.img"
		# shellcheck disable=SC2086
		env $path "$FLUSHLOG" replay -q --in-place --from "$4" \
			-o "$TEST_TMP/in-place.img" "$log" ||
			_fail "$log ($path): in-place replay failed"
		_same_image "$want" "$TEST_TMP/in-place.img" "$log, in place from $4 ($path)"
	done
}

# point_after K DIR: the number of entries applied at crash point K
point_after() {
	awk -v k="$1" '$1 == k { print $3 }' "$2/points.txt"
}

for v in 1:0:odd-flushlog 1:1:odd-log-writes 8:0:aligned-flushlog 8:1:aligned-log-writes; do
	IFS=: read -r unit lw name <<<"$v"
	format=flushlog
	((lw)) && format="log-writes"
	gen "$unit" "$lw" >"$TEST_TMP/$name.fls"
	_mklog "$TEST_TMP/$name.fls" "$format" "$TEST_TMP/$name"
	dir=$TEST_TMP/$name
	end=$(awk 'END { print $1 }' "$dir/points.txt")
	same_every_path "$dir/log" "$dir/point-$end.img" "$dir/point-3.img" point:3
	echo "$name: every path gives the model's image, new and in place"
	rm -f "$dir"/point-[5-9].img
done

# A version 2 log in completion order.  Group g, one tick an event:
#   W submitted, F submitted, W completes, D (FUA) submitted and completes,
#   F completes.
# F covers no write of its own group (W completed after F was issued), so
# W waits for the next group's flush: the durability order is
#   D1 F1 D2 W1 F2 D3 W2 F3 ... W_last
# while the file holds W1 D1 F1 W2 D2 F2 ...: W's data lies before D's in
# the file, but is applied after it.  Writes overlap; where they do, the
# newer one holds the sectors (D_g and later were issued after W_g
# completed), so the model applies the same entries in the order they
# were issued: the file's.
awk -v v2="$TEST_TMP/v2.fls" -v v1="$TEST_TMP/v1.fls" 'BEGIN {
	srand(7)
	print "device 2048" >v2
	print "version 2" >v2
	print "device 2048" >v1
	for (g = 1; g <= 20; g++) {
		t = g * 10
		w = sprintf("write %d %d seed %d ticks %d %d", int(rand() * 1800),
			    int(rand() * 240) + 1, g, t + 1, t + 3)
		d = sprintf("write %d %d fua seed %d ticks %d %d", int(rand() * 1800),
			    int(rand() * 240) + 1, 1000 + g, t + 4, t + 5)
		f = sprintf("flush ticks %d %d", t + 2, t + 6)
		print w >v2
		print d >v2
		print f >v2
		print w >v1
		print d >v1
		print f >v1
	}
}'
"$MKLOG" -o "$TEST_TMP/v2.log" "$TEST_TMP/v2.fls"
_mklog "$TEST_TMP/v1.fls" flushlog "$TEST_TMP/v1"
end=$(awk 'END { print $1 }' "$TEST_TMP/v1/points.txt")
same_every_path "$TEST_TMP/v2.log" "$TEST_TMP/v1/point-$end.img"
echo "version 2 log, applied out of file order: every path gives the model's image"

# first_small DIR BLOCK: the first crash point followed by a write of at
# most 64 KiB, which a reader buffer holds with others
first_small() {
	local k seq
	while read -r k _ seq; do
		((k)) || continue
		awk -v s="$seq" -v b="$2" '$2 == s && $4 - b <= 65536 { f = 1 } END { exit !f }' \
			"$1/layout" && echo "$k" && return
	done <"$1/points.txt"
}

# A bad data byte in the first write after crash point K: a small entry,
# and the 2100-sector write after point 4, larger than the window
for name in odd-flushlog aligned-flushlog; do
	dir=$TEST_TMP/$name
	"$MKLOG" -l -o "$dir/log2" "$TEST_TMP/$name.fls" >"$dir/layout"
	block=512
	[[ $name == aligned-* ]] && block=4096
	small=$(first_small "$dir" "$block")
	[ -n "$small" ] || _fail "$name: no crash point followed by a small write"
	for k in "$small" 4; do
		seq=$(point_after "$k" "$dir")
		read -r _ _ off size < <(awk -v s="$seq" '$2 == s' "$dir/layout")
		cp "$dir/log" "$dir/bad"
		printf 'X' | dd of="$dir/bad" bs=1 seek=$((off + block + (size - block) / 2)) \
			conv=notrunc status=none
		for path in "${paths[@]}"; do
			cp "$dir/point-0.img" "$TEST_TMP/in-place.img"
			# shellcheck disable=SC2086
			_expect_exit 3 env $path "$FLUSHLOG" replay -q --in-place \
				-o "$TEST_TMP/in-place.img" "$dir/bad"
			grep -q "entry $seq at offset $off: data checksum mismatch" "$TEST_TMP/stderr" ||
				_fail "$name entry $seq ($path): $(cat "$TEST_TMP/stderr")"
			_same_image "$dir/point-$k.img" "$TEST_TMP/in-place.img" \
				"$name, replay stopped at bad entry $seq ($path)"
			rm -f "$TEST_TMP/new.img"
			# shellcheck disable=SC2086
			_expect_exit 3 env $path "$FLUSHLOG" replay -q -o "$TEST_TMP/new.img" "$dir/bad"
			[ ! -e "$TEST_TMP/new.img" ] || _fail "$name ($path): a failed replay left an image"
		done
		echo "$name: bad data in entry $seq ($((size - block)) bytes, after point $k) refused by every path, nothing of it applied"
	done
done

# Clones: only where TEST_TMP's filesystem shares blocks (XFS, btrfs)
if cp --reflink=always "$TEST_TMP/odd-flushlog/log" "$TEST_TMP/clone-probe" 2>/dev/null; then
	for name in aligned-flushlog aligned-log-writes; do
		dir=$TEST_TMP/$name
		end=$(awk 'END { print $1 }' "$dir/points.txt")
		"$FLUSHLOG" replay -o "$TEST_TMP/new.img" "$dir/log" 2>"$TEST_TMP/stderr"
		grep -q "bytes of data cloned from the log" "$TEST_TMP/stderr" ||
			_fail "$name: nothing cloned: $(cat "$TEST_TMP/stderr")"
		_same_image "$dir/point-$end.img" "$TEST_TMP/new.img" "$name, cloned"
	done
	echo "clones: the aligned logs' data was cloned, and the images are the model's"
else
	echo "clones: not tried, $TEST_TMP cannot share blocks (TMPDIR on XFS or btrfs tries them)"
fi
