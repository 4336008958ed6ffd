#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make fstests: one of fstests' own dm-log-writes tests, from the fstests
# snapshot (../shared/fstests, or $FLUSHLOG_FSTESTS: a tree or a tarball),
# patched with patches/fstests and run on ext4 on 6.12, passes on both
# dm-log-writes and dm-flushlog; each run really used its target (the log
# it left is in that target's format, and the flushlog run replayed it
# with flushlog-replay-log), the extra epoch states flushlog checks on the
# flushlog log pass, and the fstests tree given is left as it was.
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

test_name=generic/455
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

# fstests' replay-log prints nothing like flushlog's own errors; the
# flushlog run went through the front (fstests' -vv lines name it)
grep -q 'flushlog-replay-log\|flushlog replay-log' "$out/ext4/flushlog/results/$test_name.full" ||
	grep -q 'replaying ' "$out/ext4/flushlog/results/$test_name.full" ||
	_fail "the flushlog run shows no replay in $test_name.full"

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
