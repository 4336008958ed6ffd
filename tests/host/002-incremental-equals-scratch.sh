#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Incremental replay (point k to k+1 in one image, library and CLI) equals
# a replay from scratch at every point.
. "$FLUSHLOG_TOP/tests/common.sh"

for s in basic concurrent big block4k; do
	dir=$TEST_TMP/$s
	_mklog "$DATA/$s.fls" flushlog "$dir"
	"$FLUSHLOG_BUILD/tests/t-incremental" "$dir/log" "$dir/work"
	# the CLI's --in-place --from: step through the points in one image
	"$FLUSHLOG" replay -q -o "$dir/step.img" --to start "$dir/log"
	prev=start
	while read -r k _ _; do
		"$FLUSHLOG" replay -q --in-place --from "$prev" --to "point:$k" \
			-o "$dir/step.img" "$dir/log"
		_same_image "$dir/point-$k.img" "$dir/step.img" "$s: --in-place --from $prev --to point:$k"
		prev=point:$k
	done <"$dir/points.txt"
done
