#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# flushlog replay-log is a drop-in for fstests' src/log-writes/replay-log:
# built from the fstests snapshot (../shared/fstests beside the repo, or
# $FLUSHLOG_FSTESTS, a tarball or a checkout), replay-log and the
# front are run side by side on dm-log-writes logs, and must agree on
# everything fstests reads: the image hashed at every --check step, --find
# for every mark and from every start entry, --num-entries, the image
# after --limit N for every N, the -vv lines.  The logs hold writes with
# PREFLUSH and not FUA between a FUA write and the next flush, which the
# library's durability order moves: a front numbering entries in that
# order fails here.  On a flushlog log the front speaks durability order:
# its images equal 'flushlog replay' at the same point, its FUA and flush
# stops are dump's.  Bad input exits 1 with a message that says what.
. "$FLUSHLOG_TOP/tests/common.sh"
_require_cmd jq
_require_cmd cc

FRONT=$FLUSHLOG_BUILD/flushlog-replay-log
RL=$TEST_TMP/replay-log

# build_replay_log: fstests' replay-log from the snapshot, as it is
build_replay_log() {
	local snap src
	_fstests_snapshot
	snap=$FSTESTS_SNAPSHOT
	if [ -d "$snap" ]; then
		src=$snap/src/log-writes
	else
		_require_cmd xz
		tar -xJf "$snap" -C "$TEST_TMP" --wildcards '*/src/log-writes/*' ||
			_fail "cannot unpack src/log-writes from $snap"
		src=$(find "$TEST_TMP" -type d -path '*/src/log-writes' | head -n 1)
	fi
	[ -f "$src/replay-log.c" ] || _skip "$snap has no src/log-writes/replay-log.c"
	cc -o "$RL" "$src/replay-log.c" "$src/log-writes.c" ||
		_fail "fstests' replay-log does not build from $src"
	echo "replay-log built from $snap"
}

# the checker --fsck runs: one line a step, the image's hash
cat >"$TEST_TMP/record" <<'EOS'
#!/bin/bash
sha256sum <"$1" | cut -c1-64 >>"$2"
EOS
chmod +x "$TEST_TMP/record"

# both LOG SIZE ARGS...: run replay-log and the front with ARGS, each onto
# a fresh zero image of SIZE bytes ($TEST_TMP/rl.img, front.img) where
# ARGS name IMG, their stdout in rl.out and front.out, exit status the same
both() {
	local log=$1 size=$2 rc_rl=0 rc_front=0 t
	shift 2
	for t in rl front; do
		rm -f "$TEST_TMP/$t.img" "$TEST_TMP/$t.hashes"
		if [ -n "${FILL:-}" ]; then
			# old data under the discards, so that a discard shows
			head -c "$size" /dev/zero | tr '\0' '\252' >"$TEST_TMP/$t.img"
		else
			truncate -s "$size" "$TEST_TMP/$t.img"
		fi
	done
	"$RL" --log "$log" "${@//IMG/$TEST_TMP/rl}" >"$TEST_TMP/rl.out" 2>"$TEST_TMP/rl.err" || rc_rl=$?
	"$FRONT" --log "$log" "${@//IMG/$TEST_TMP/front}" >"$TEST_TMP/front.out" 2>"$TEST_TMP/front.err" || rc_front=$?
	[ "$rc_rl" = "$rc_front" ] ||
		_fail "$(basename "$log") $*: replay-log exited $rc_rl ($(cat "$TEST_TMP/rl.err")), the front $rc_front ($(cat "$TEST_TMP/front.err"))"
}

# same_output WHAT: the two stdouts are equal
same_output() {
	diff "$TEST_TMP/rl.out" "$TEST_TMP/front.out" >&2 ||
		_fail "$1: the front printed otherwise than replay-log (< replay-log, > front)"
}

# same_hashes WHAT: the images hashed at the same steps were the same
same_hashes() {
	local a=$TEST_TMP/rl.hashes b=$TEST_TMP/front.hashes step
	touch "$a" "$b"
	if ! cmp -s "$a" "$b"; then
		step=$(diff <(cat -n "$a") <(cat -n "$b") | sed -n 's/^[<>] *\([0-9]*\).*/\1/p' | head -n 1) || true
		_fail "$1: the images differ first at check step $step ($(wc -l <"$a") steps by replay-log, $(wc -l <"$b") by the front)"
	fi
}

# compare_log_writes FLS: every comparison on the log-writes log of FLS
compare_log_writes() {
	local fls=$1 name log size n k label mode
	name=$(basename "$fls" .fls)
	log=$TEST_TMP/$name.log
	"$MKLOG" -f log-writes -o "$log" "$fls"
	size=$((8 << 20))
	both "$log" "$size"
	same_output "$name: the log's line"
	both "$log" "$size" --num-entries
	same_output "$name --num-entries"
	n=$(cat "$TEST_TMP/rl.out")
	for mode in flush fua 1 3 discard; do
		both "$log" "$size" --replay IMG.img --check "$mode" \
			--fsck "$TEST_TMP/record IMG.img IMG.hashes"
		same_hashes "$name --check $mode"
	done
	# on old data: discards zero it, or with --no-discard keep it; and
	# --check from a start entry, and up to a limit
	for extra in "" --no-discard "--start-entry 2" "--limit 5"; do
		# shellcheck disable=SC2086 # extra is words
		FILL=yes both "$log" "$size" --replay IMG.img --check 1 $extra \
			--fsck "$TEST_TMP/record IMG.img IMG.hashes"
		same_hashes "$name --check 1 $extra (over old data)"
	done
	while read -r label; do
		both "$log" "$size" --find --end-mark "$label"
		same_output "$name --find --end-mark $label"
		both "$log" "$size" --find --start-mark "$label" --next-flush
		same_output "$name --find --start-mark $label --next-flush"
		both "$log" "$size" --replay IMG.img --end-mark "$label"
		_same_image "$TEST_TMP/rl.img" "$TEST_TMP/front.img" "$name --end-mark $label"
	done < <(sed -n 's/^mark \([^ #]*\).*/\1/p' "$fls" | sort -u)
	for ((k = 0; k < n; k++)); do
		for stop in --next-fua --next-flush; do
			both "$log" "$size" --find "$stop" --start-entry "$k"
			same_output "$name --find $stop --start-entry $k"
		done
	done
	for ((k = 1; k <= n; k++)); do
		both "$log" "$size" --find --limit "$k"
		same_output "$name --find --limit $k"
		both "$log" "$size" --replay IMG.img --limit "$k"
		_same_image "$TEST_TMP/rl.img" "$TEST_TMP/front.img" "$name --replay --limit $k"
	done
	# the -vv lines but for replay-log's note that a file takes no discard
	both "$log" "$size" -vv --replay IMG.img --start-entry 1
	sed -i '/doesn.t support discard/d' "$TEST_TMP/rl.out"
	same_output "$name -vv --start-entry 1"
	echo "$name: $n entries, every --check, --find and --limit as replay-log"
}

build_replay_log

# a PREFLUSH write P between a FUA write and the next flush, a mark
# between them: durability order moves P's data past the FUA write and
# the mark, replay-log does not
cat >"$TEST_TMP/waits.fls" <<'EOS'
device 4096
write 0 8 seed 1
write 8 8 fua seed 2
write 16 8 preflush seed 3      # P
write 16 4 fua seed 4           # over P's head
mark m1
write 100 16 meta seed 5
discard 0 4
flush
write 200 8 preflush fua seed 6
write 16 8 preflush seed 7      # P again, then no flush
mark m1
write 300 8 seed 8
EOS
# 4096-byte sectors: the options' sectors are the log's
cat >"$TEST_TMP/block4k.fls" <<'EOS'
device 4096 4096
write 0 8 seed 1
write 8 16 preflush seed 2
write 64 8 fua seed 3
mark a
discard 8 8
write 128 32 preflush seed 4
flush
mark b
EOS
for fls in "$DATA/logwrites.fls" "$DATA/model-log-writes-preflush-data-waits.fls" \
	"$TEST_TMP/waits.fls" "$TEST_TMP/block4k.fls"; do
	compare_log_writes "$fls"
done

# replay onto a sector range: entries wholly outside it are skipped
log=$TEST_TMP/logwrites.log
for range in "0 63" "1024 2100" "8 8"; do
	read -r s e <<<"$range"
	both "$log" $((8 << 20)) --replay IMG.img --start-sector "$s" --end-sector "$e"
	_same_image "$TEST_TMP/rl.img" "$TEST_TMP/front.img" "logwrites --start-sector $s --end-sector $e"
done
echo "sector ranges replay as replay-log"

# a checker that fails stops both on the same entry
cat >"$TEST_TMP/third" <<'EOS'
#!/bin/bash
echo x >>"$1"; [ "$(wc -l <"$1")" -lt 3 ]
EOS
chmod +x "$TEST_TMP/third"
both "$log" $((8 << 20)) --replay IMG.img --check 2 --fsck "$TEST_TMP/third IMG.count"
for t in rl front; do
	grep -o 'Fsck errored out on entry [0-9]*' "$TEST_TMP/$t.err" >"$TEST_TMP/$t.fsck" ||
		_fail "$t: no 'Fsck errored out' message: $(cat "$TEST_TMP/$t.err")"
done
cmp -s "$TEST_TMP/rl.fsck" "$TEST_TMP/front.fsck" ||
	_fail "replay-log: $(cat "$TEST_TMP/rl.fsck"), the front: $(cat "$TEST_TMP/front.fsck")"
echo "a failing checker: $(cat "$TEST_TMP/front.fsck"), as replay-log"

# called replay-log (a link, as fstests' src/log-writes/replay-log would be)
mkdir "$TEST_TMP/bin"
ln -s "$FLUSHLOG_BUILD/flushlog" "$TEST_TMP/bin/replay-log"
[ "$("$TEST_TMP/bin/replay-log" --log "$log" --num-entries)" = "$("$RL" --log "$log" --num-entries)" ] ||
	_fail "flushlog called replay-log does not act as replay-log"

# a flushlog log: durability order, as 'flushlog replay' and dump have it
fl=$TEST_TMP/basic.log
"$MKLOG" -o "$fl" "$DATA/basic.fls"
"$FLUSHLOG" replay -q -o "$TEST_TMP/ref.img" "$fl"
size=$(stat -c %s "$TEST_TMP/ref.img")
"$FLUSHLOG" dump --json "$fl" >"$TEST_TMP/dump.json"
n=$(wc -l <"$TEST_TMP/dump.json")
[ "$("$FRONT" --log "$fl" --num-entries)" = "$n" ] || _fail "basic: --num-entries is not dump's $n"
fresh() { rm -f "$TEST_TMP/f.img"; truncate -s "$size" "$TEST_TMP/f.img"; }
for label in after-fua commit-1; do
	"$FLUSHLOG" replay -q -o "$TEST_TMP/ref.img" --to "mark:$label" "$fl"
	fresh
	"$FRONT" --log "$fl" --replay "$TEST_TMP/f.img" --end-mark "$label"
	_same_image "$TEST_TMP/ref.img" "$TEST_TMP/f.img" "basic --end-mark $label vs replay --to mark:$label"
done
for ((k = 1; k <= n; k++)); do
	"$FLUSHLOG" replay -q -o "$TEST_TMP/ref.img" --to "entry:$((k - 1))" "$fl"
	fresh
	"$FRONT" --log "$fl" --replay "$TEST_TMP/f.img" --limit "$k"
	_same_image "$TEST_TMP/ref.img" "$TEST_TMP/f.img" "basic --limit $k vs replay --to entry:$((k - 1))"
done
# FUA stops: crash-point entries with FUA (a PREFLUSH|FUA write too);
# flush stops: flushes and crash-point PREFLUSH writes
for stop in fua flush; do
	if [ "$stop" = fua ]; then
		jq -r 'select(.crash_point and .fua) | .entry' "$TEST_TMP/dump.json" >"$TEST_TMP/stops"
	else
		jq -r 'select(.crash_point and (.op == "flush" or .preflush)) | .entry' "$TEST_TMP/dump.json" >"$TEST_TMP/stops"
	fi
	[ -s "$TEST_TMP/stops" ] || _fail "basic has no $stop point to look for"
	for ((k = 0; k < n; k++)); do
		want=$(awk -v k="$k" '$1 >= k { print; exit }' "$TEST_TMP/stops")
		got=$("$FRONT" --log "$fl" --find "--next-$stop" --start-entry "$k" 2>/dev/null) || got=none
		[ "${got%@*}" = "${want:-none}" ] ||
			_fail "basic --find --next-$stop --start-entry $k: got $got, dump's next $stop point is ${want:-none}"
	done
done
jq -r 'select(.kind == "fua") | .entry' < <("$FLUSHLOG" points --json "$fl") >"$TEST_TMP/fua-points"
jq -r 'select(.crash_point and .fua) | .entry' "$TEST_TMP/dump.json" | grep -qxFf "$TEST_TMP/fua-points" ||
	_fail "the FUA points of 'flushlog points' are no FUA stops"
echo "basic (flushlog): --end-mark, --limit 1 to $n, --next-fua and --next-flush as replay and dump"

# failed entries: never replayed, never a stop
"$MKLOG" -o "$TEST_TMP/failed.log" "$DATA/failed.fls"
"$FLUSHLOG" replay -q -o "$TEST_TMP/ref.img" "$TEST_TMP/failed.log"
size=$(stat -c %s "$TEST_TMP/ref.img")
fresh
"$FRONT" --log "$TEST_TMP/failed.log" --replay "$TEST_TMP/f.img"
_same_image "$TEST_TMP/ref.img" "$TEST_TMP/f.img" "failed: the whole log vs replay --to end"
"$FLUSHLOG" dump --json "$TEST_TMP/failed.log" >"$TEST_TMP/dump.json"
bad=$(jq -r 'select(.failed) | .entry' "$TEST_TMP/dump.json")
for stop in --next-fua --next-flush; do
	for ((k = 0; k < $(wc -l <"$TEST_TMP/dump.json"); k++)); do
		got=$("$FRONT" --log "$TEST_TMP/failed.log" --find "$stop" --start-entry "$k" 2>/dev/null) || continue
		! grep -qx "${got%@*}" <<<"$bad" || _fail "failed: $stop stops at failed entry ${got%@*}"
	done
done
echo "failed (flushlog): failed entries are neither replayed nor stops"

# bad input: exit 1, a message that names what is wrong
_expect_exit 1 "$FRONT" --log "$TEST_TMP/no-such.log"
grep -q "no-such.log" "$TEST_TMP/stderr" || _fail "a missing log is not named: $(cat "$TEST_TMP/stderr")"
cp "$log" "$TEST_TMP/corrupt.log"
off=$("$MKLOG" -f log-writes -l -o "$TEST_TMP/x.log" "$DATA/logwrites.fls" | awk '$1 == "entry" && $2 == 3 { print $3 }')
printf '\xff' | dd of="$TEST_TMP/corrupt.log" bs=1 seek=$((off + 16)) conv=notrunc status=none
_expect_exit 1 "$FRONT" --log "$TEST_TMP/corrupt.log" --num-entries
grep -q "entry 3 at offset $off" "$TEST_TMP/stderr" ||
	_fail "a corrupt entry 3 at offset $off is not named: $(cat "$TEST_TMP/stderr")"
for args in "--limit 12x" "--check 0 --fsck true" "--fsck true" "--check flush" \
	"--start-entry 0x" "--find --end-mark no-such-mark" "--start-mark no-such-mark" \
	"--start-entry 99" "--bogus"; do
	# shellcheck disable=SC2086
	_expect_exit 1 "$FRONT" --log "$log" $args
	[ -s "$TEST_TMP/stderr" ] || _fail "$args: exit 1 without a message"
	echo "$args: $(head -n 1 "$TEST_TMP/stderr")"
done
