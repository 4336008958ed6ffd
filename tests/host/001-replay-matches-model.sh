#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Replay to every crash point equals the image the test writer computed on
# its own model disk, byte for byte, for every scenario and both formats;
# and the points flushlog lists are the writer's points.
. "$FLUSHLOG_TOP/tests/common.sh"

check_scenario() {
	local scenario=$1 format=$2 dir k kind applied got spec
	dir=$TEST_TMP/$(basename "$1" .fls)-$2
	_mklog "$scenario" "$format" "$dir"
	"$FLUSHLOG" points --json "$dir/log" >"$dir/points.json"
	[ "$(wc -l <"$dir/points.json")" = "$(wc -l <"$dir/points.txt")" ] ||
		_fail "$scenario ($format): $(wc -l <"$dir/points.json") points listed, the writer made $(wc -l <"$dir/points.txt")"
	while read -r k kind applied; do
		got=$(sed -n "$((k + 1))p" "$dir/points.json")
		[[ $got == *"\"kind\":\"$kind\",\"entry\":$((applied - 1)),\"applied\":$applied,"* ]] ||
			_fail "$scenario ($format) point $k: expected $kind after $applied entries, got $got"
		# the scripts' FUA writes follow unflushed writes, which a real
		# target would log later: not durability order, on purpose
		"$FLUSHLOG" replay -q --no-order-check -o "$dir/got.img" --to "point:$k" "$dir/log"
		_same_image "$dir/point-$k.img" "$dir/got.img" "$scenario ($format) point:$k"
		# the same point by its other name (flush:K, mark:LABEL, end)
		spec=${got##*\"spec\":\"}
		spec=${spec%\"\}}
		"$FLUSHLOG" replay -q --no-order-check -o "$dir/got2.img" --to "$spec" "$dir/log"
		_same_image "$dir/point-$k.img" "$dir/got2.img" "$scenario ($format) $spec"
	done <"$dir/points.txt"
	echo "$scenario ($format): $(wc -l <"$dir/points.txt") points match"
}

for s in basic block4k concurrent big; do
	check_scenario "$DATA/$s.fls" flushlog
done
check_scenario "$DATA/logwrites.fls" flushlog
check_scenario "$DATA/logwrites.fls" log-writes
