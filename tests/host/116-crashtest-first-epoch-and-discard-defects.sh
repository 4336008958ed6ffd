#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A writer whose only defect lies in the first epoch, traced on a raw
# device by scripts/crashtest: the toy journal's first-epoch mode writes
# transaction 0's journal blocks and commit block with no flush or FUA
# between them, and flushes only after.  The start is a crash point, so
# the epoch model finds its commit block on the media without its journal
# blocks at point 0; the prefix model cannot see it (every prefix state
# holds the whole transaction or none of it), and this test records that.
# Then the toy journal's trust-discard mode: it empties its journal with a
# discard and writes transaction 0 of a new generation, trusting the old
# records to read back as zeroes.  The discard model (a device may keep
# discarded data) finds a stale record after it; the prefix model, which
# replays discards as zeroes, cannot.
. "$FLUSHLOG_TOP/tests/common.sh"
# kernels: 6.1
# asan: no
_require_guest

toy=$FLUSHLOG_BUILD/tests/fl-toyjournal
mkdir -p "$TEST_TMP/w"
for mode in first-epoch trust-discard; do
	cat >"$TEST_TMP/w/$mode" <<EOS
#!/bin/sh
exec $toy write "\$FLUSHLOG_DEV" $mode 2
EOS
	chmod +x "$TEST_TMP/w/$mode"
done

rc=0
"$FLUSHLOG_TOP/scripts/crashtest" --fs raw --workload "$TEST_TMP/w/first-epoch" \
	--check "$toy check {}" --states epoch --max-reorder 1 --jobs 1 \
	--out "$TEST_TMP/run" || rc=$?
[ -e "$TEST_TMP/run/report.json" ] || _fail "no report (crashtest exit $rc)"
echo "epoch: $(grep -m1 'states at' "$TEST_TMP/run/summary.txt"), exit $rc"
((rc == 1)) || _fail "the epoch model did not flag the first-epoch defect (exit $rc)"
failed=$(jq -c '[.states[] | select(.result == "fail") | .point] | unique' "$TEST_TMP/run/report.json")
[ "$failed" = "[0]" ] || _fail "expected failures at point 0 (the start) only, got points $failed"
echo "epoch: caught at point 0: $(jq -c '[.states[] | select(.result == "fail") | .state]' "$TEST_TMP/run/report.json")"

# the same log under the prefix model, on the host: not caught
base=()
[ -e "$TEST_TMP/run/base.img" ] && base=(--base "$TEST_TMP/run/base.img")
"$FLUSHLOG" check -q -k -w "$TEST_TMP" "${base[@]}" "$TEST_TMP/run/log.img" -- "$toy" check {} \
	>"$TEST_TMP/prefix.out" || _fail "the prefix model flagged it: $(cat "$TEST_TMP/prefix.out")"
echo "prefix: $(tail -n 1 "$TEST_TMP/prefix.out") (not caught, as expected of that model)"

rc=0
"$FLUSHLOG_TOP/scripts/crashtest" --fs raw --workload "$TEST_TMP/w/trust-discard" \
	--check "$toy check {}" --states discard --jobs 1 --out "$TEST_TMP/discard" || rc=$?
[ -e "$TEST_TMP/discard/report.json" ] || _fail "trust-discard: no report (crashtest exit $rc)"
"$FLUSHLOG" dump "$TEST_TMP/discard/log.img" | grep -q ' discard ' ||
	_fail "trust-discard: the log holds no discard"
echo "discard: $(grep -m1 'states at' "$TEST_TMP/discard/summary.txt"), exit $rc"
((rc == 1)) || _fail "the discard model did not flag the journal that trusts discard (exit $rc)"
failed=$(jq -r '.states[] | select(.result == "fail") | .state' "$TEST_TMP/discard/report.json")
for name in $failed; do
	[[ $name == *% ]] || _fail "trust-discard: state $name failed, not one that keeps discards"
done
echo "discard: caught in $(echo "$failed" | tr '\n' ' ')"
base=()
[ -e "$TEST_TMP/discard/base.img" ] && base=(--base "$TEST_TMP/discard/base.img")
"$FLUSHLOG" check -q -k -w "$TEST_TMP" "${base[@]}" "$TEST_TMP/discard/log.img" -- "$toy" check {} \
	>"$TEST_TMP/prefix.out" || _fail "trust-discard: the prefix model flagged it: $(cat "$TEST_TMP/prefix.out")"
echo "trust-discard, prefix: $(tail -n 1 "$TEST_TMP/prefix.out") (not caught: discards replay as zeroes)"
