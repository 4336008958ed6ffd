#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make fstests: generic/482, one of fstests' own dm-log-writes tests,
# from the fstests snapshot (../shared/fstests, or $FLUSHLOG_FSTESTS: a
# tree or a tarball), patched with patches/fstests and run on ext4 on
# 6.12, passes on both dm-log-writes and dm-flushlog, and each run really
# used its target: the log it left is in that target's format (fstests'
# replay-log cannot read a flushlog log, so the flushlog pass is
# flushlog-replay-log's).  The epoch states flushlog checks on the
# flushlog log pass; on the real dm-log-writes log, flushlog-replay-log
# and fstests' own replay-log give the same image at every --check fua
# and --check flush step; the fstests tree given is left as it was.
. "$FLUSHLOG_TOP/tests/common.sh"
# kernels: 6.12
# asan: no
FLUSHLOG_KERNEL=${FLUSHLOG_KERNEL:-6.12}
_require_guest

_fstests_snapshot
snap=$FSTESTS_SNAPSHOT
if [ -f "$snap" ]; then
	before=$(sha256sum <"$snap")
else
	before=$(cd "$snap" && find . -path ./.git -prune -o -type f -printf '%P %s %T@\n' | sort | sha256sum)
fi

test_name=generic/482
out=$TEST_TMP/run
rc=0
"$FLUSHLOG_TOP/scripts/fstests" --fstests "$snap" --fs ext4 --kernel "$FLUSHLOG_KERNEL" \
	--beyond epoch --beyond-max-states 12 --keep-logs --out "$out" "$test_name" || rc=$?
cat "$out/table.md" 2>/dev/null
if ((rc)); then
	keep=$FLUSHLOG_BUILD/test-results/fstests-$FLUSHLOG_KERNEL
	rm -rf "$keep" && cp -r "$out" "$keep" && rm -f "$keep"/*/*/logs/*
	_fail "scripts/fstests exited $rc; its run folder is kept in $keep"
fi

name=${test_name//\//-}
for target in log-writes flushlog; do
	line=$(awk -F'\t' -v t="$test_name" '$1 == t' "$out/ext4/$target/results.tsv")
	[ "$(cut -f2 <<<"$line")" = pass ] ||
		_fail "$test_name on $target: '$line', not a pass"
	log=$out/ext4/$target/logs/$name.log
	[ -s "$log" ] || _fail "$target: no log kept"
	format=$("$FLUSHLOG_BUILD/flushlog" info --json "$log" | jq -r .format)
	want=$target
	[ "$target" = log-writes ] && want=dm-log-writes
	[ "$format" = "$want" ] || _fail "$target: the log left is in format '$format'"
	echo "$test_name on $target: pass, its log in the $format format"
done

# the real dm-log-writes log fstests made: flushlog-replay-log gives
# fstests' own replay-log's image at every FUA and every flush step
src=$TEST_TMP/rl
mkdir -p "$src"
if [ -d "$snap" ]; then
	cp "$snap"/src/log-writes/*.[ch] "$src/"
else
	tar -xJf "$snap" -C "$src" --strip-components=3 --wildcards '*/src/log-writes/*.[ch]'
fi
cc -o "$src/replay-log" "$src/replay-log.c" "$src/log-writes.c" || _fail "replay-log does not build"
# shellcheck disable=SC2016 # the record script's own $1 and $2
printf '#!/bin/bash\nsha256sum <"$1" | cut -c1-64 >>"$2"\n' >"$TEST_TMP/record"
chmod +x "$TEST_TMP/record"
log=$out/ext4/log-writes/logs/$name.log
size=$("$FLUSHLOG_BUILD/flushlog" info --json "$log" | jq -r '.data_sectors * 512')
for when in fua flush; do
	for tool in "$src/replay-log" "$FLUSHLOG_BUILD/flushlog-replay-log"; do
		img=$TEST_TMP/img.${tool##*/}
		rm -f "$img" "$img.hashes"
		truncate -s "$size" "$img"
		"$tool" --log "$log" --replay "$img" --check "$when" \
			--fsck "$TEST_TMP/record $img $img.hashes" >/dev/null ||
			_fail "${tool##*/} --check $when failed on $name's log"
	done
	a=$TEST_TMP/img.replay-log.hashes b=$TEST_TMP/img.flushlog-replay-log.hashes
	[ -s "$a" ] || _fail "--check $when: replay-log checked nothing"
	cmp -s "$a" "$b" || _fail "--check $when on $name's log: the images differ first at step $(cmp "$a" "$b" | awk '{print $NF}') ($(wc -l <"$a") vs $(wc -l <"$b") steps)"
	echo "--check $when on $name's dm-log-writes log: the same image at all $(wc -l <"$a") steps"
done

report=$out/ext4/flushlog/beyond/$name.json
[ -s "$report" ] || _fail "no report of the epoch states"
checked=$(jq '.states | length' "$report")
failed=$(jq '[.states[] | select(.result != "pass")] | length' "$report")
((checked > 0)) || _fail "flushlog checked no epoch state"
((failed == 0)) || _fail "$failed of $checked epoch states failed (report: $report)"
echo "flushlog checked $checked epoch states of the flushlog log: all pass"

if [ -f "$snap" ]; then
	after=$(sha256sum <"$snap")
else
	after=$(cd "$snap" && find . -path ./.git -prune -o -type f -printf '%P %s %T@\n' | sort | sha256sum)
fi
[ "$before" = "$after" ] || _fail "the fstests tree given was changed"
echo "the fstests tree given is as it was"
