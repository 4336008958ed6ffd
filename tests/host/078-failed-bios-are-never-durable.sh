#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A bio that failed (F_FAILED) is never guaranteed durable, and what it
# left is unknown: each sector of its range holds its old content or the
# bio's.  In tests/data/failed.fls a failed write F overwrites W0's
# sectors 0..15 after a flush made W0 durable; a failed flush follows a
# completed write W1, and a failed FUA write comes before the last flush.
# Every prefix state (replay to each crash point) holds W0's data on F's
# range, W1's sectors are empty at the mark after the failed flush and
# W1's after the next good flush, and the failed FUA write's sectors stay
# empty at every point.  Every epoch and torn state at the points after
# F's submission holds, sector by sector, W0's data or F's on F's range,
# and among them are one with all of W0's and one with all of F's.  The
# reference sectors come from fl-mklog's model disk.
. "$FLUSHLOG_TOP/tests/common.sh"

log=$TEST_TMP/failed.log
"$MKLOG" -o "$log" "$DATA/failed.fls"

# ref NAME LINE: the image fl-mklog's model disk holds after LINE alone
ref() {
	printf 'device 64\n%s\n' "$2" >"$TEST_TMP/$1.fls"
	_mklog "$TEST_TMP/$1.fls" flushlog "$TEST_TMP/$1"
	cp "$TEST_TMP/$1/point-1.img" "$TEST_TMP/$1.img"
}
ref old 'write 0 16 seed 1'
ref new 'write 0 16 seed 2'
ref w1 'write 32 8 seed 3'
ref zero 'flush'

# sector IMAGE S: a digest of sector S of IMAGE
sector() {
	dd if="$1" bs=512 skip="$2" count=1 status=none | cksum
}

# holds IMAGE REF FIRST COUNT: sectors FIRST.. of IMAGE are REF's
holds() {
	local s
	for ((s = $3; s < $3 + $4; s++)); do
		[ "$(sector "$1" "$s")" = "$(sector "$2" "$s")" ] || return 1
	done
}

# the prefix states: old data under F, W1 only once a flush that did not
# fail covered it, never the failed FUA write's
while read -r spec want_w1; do
	"$FLUSHLOG" replay -q -o "$TEST_TMP/p.img" --to "$spec" "$log"
	holds "$TEST_TMP/p.img" "$TEST_TMP/old.img" 0 16 ||
		_fail "$spec: the prefix state does not hold the old data on the failed write's sectors 0..15"
	holds "$TEST_TMP/p.img" "$TEST_TMP/$want_w1.img" 32 8 ||
		_fail "$spec: W1's sectors 32..39 are not $want_w1 (a failed flush makes nothing durable)"
	holds "$TEST_TMP/p.img" "$TEST_TMP/zero.img" 40 8 ||
		_fail "$spec: the failed FUA write's sectors 40..47 hold data: it is not durable"
	echo "$spec: old data under the failed write, W1 $want_w1, no failed FUA data"
done <<EOS
mark:after-failed-flush zero
flush:2 w1
mark:end-of-log w1
end w1
EOS

# every epoch and torn state at a point after F's submission (tick 5)
cat >"$TEST_TMP/classify" <<EOS
#!/usr/bin/env bash
set -euo pipefail
. "$TEST_TMP/functions"
old=0 new=0
for ((s = 0; s < 16; s++)); do
	got=\$(sector "\$1" "\$s")
	if [ "\$got" = "\$(sector "$TEST_TMP/old.img" "\$s")" ]; then
		old=\$((old + 1))
	elif [ "\$got" = "\$(sector "$TEST_TMP/new.img" "\$s")" ]; then
		new=\$((new + 1))
	else
		echo "\$FLUSHLOG_STATE_NAME sector \$s neither" >>"$TEST_TMP/kinds"
		exit 1
	fi
done
echo "\$FLUSHLOG_STATE_NAME \$((old == 16 ? 1 : 0)) \$((new == 16 ? 1 : 0))" >>"$TEST_TMP/kinds"
EOS
declare -f sector >"$TEST_TMP/functions"
chmod +x "$TEST_TMP/classify"
: >"$TEST_TMP/kinds"
"$FLUSHLOG" check -q -w "$TEST_TMP" --states epoch,torn --max-torn 4 --from flush:1 \
	"$log" -- "$TEST_TMP/classify" {} >"$TEST_TMP/check.out" ||
	_fail "a state holds on the failed write's range neither the old nor the new data: $(grep neither "$TEST_TMP/kinds")"
all_old=$(awk '$2 == 1' "$TEST_TMP/kinds" | wc -l)
all_new=$(awk '$3 == 1' "$TEST_TMP/kinds" | wc -l)
mixed=$(awk '$2 == 0 && $3 == 0' "$TEST_TMP/kinds" | wc -l)
((all_old > 0)) || _fail "no state holds all the old data on the failed write's range"
((all_new > 0)) || _fail "no state holds all of the failed write's data: it is possibly durable"
((mixed > 0)) || _fail "no torn state of the failed write"
echo "check: $(tail -n 1 "$TEST_TMP/check.out"): $all_old all old, $all_new all new, $mixed mixed"
