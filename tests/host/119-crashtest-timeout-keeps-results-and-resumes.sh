#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A crashtest stopped by --timeout keeps what it checked: the checker
# hangs from the third crash point on, the guest is killed, and the run
# folder still has a report.json with the finished states (exit 5).
# crashtest --recheck RUN --resume then checks only the rest, the earlier
# results carried over.  The checker is an --add file named by its bare
# name (the --add folder is on PATH) and reads its mode from the folder it
# runs in; a state failing on purpose in the resumed run shows that the
# output names the host's run folder, not the guest's.
. "$FLUSHLOG_TOP/tests/common.sh"
# kernels: 6.1
# asan: no
_require_guest

w=$TEST_TMP/w
mkdir -p "$w"
cat >"$w/writer" <<'EOS'
#!/bin/sh
printf 'block %d\n' "$1" | dd of="$FLUSHLOG_DEV" bs=512 seek="$1" conv=sync,fsync status=none
EOS
# the workload finds writer on its PATH (an --add file)
cat >"$w/workload" <<'EOS'
#!/bin/sh
for i in 1 2 3 4; do writer "$i"; done
EOS
# hang: points 0-2 pass, the later ones never finish; resume: points 0-2
# must not be checked again, point 3 fails on purpose, the rest pass
cat >"$w/checker" <<'EOS'
#!/bin/sh
mode=$(cat mode)
if [ "$FLUSHLOG_POINT" -le 2 ]; then
	[ "$mode" = hang ] && exit 0
	echo "point $FLUSHLOG_POINT was checked again"; exit 1
fi
[ "$mode" = hang ] && exec sleep 3600
[ "$FLUSHLOG_POINT" -ne 3 ] && exit 0
echo "point 3 fails on purpose"; exit 1
EOS
chmod +x "$w/writer" "$w/workload" "$w/checker"
echo hang >"$w/mode"

rc=0
"$FLUSHLOG_TOP/scripts/crashtest" --fs raw --workload "$w/workload" --add "$w/writer" \
	--add "$w/checker" --add "$w/mode" --check "checker {}" \
	--timeout 100 --out "$TEST_TMP/first" >"$TEST_TMP/first.out" 2>&1 || rc=$?
cat "$TEST_TMP/first.out"
((rc == 5)) || _fail "a run stopped by --timeout exited $rc, expected 5"
[ -f "$TEST_TMP/first/report.json" ] || _fail "the stopped run left no report.json"
# point 0 (the start) is there if the log's first epoch is checked
got=$(jq -c '[.states[] | .point | select(. > 0)] | sort' "$TEST_TMP/first/report.json")
[ "$got" = "[1,2]" ] || _fail "the stopped run's report lists the points $got, expected [1,2]"
jq -e '.failed == 0' "$TEST_TMP/first/report.json" >/dev/null || _fail "the stopped run has failures"
grep -q 'stopped the run' "$TEST_TMP/first/summary.txt" || _fail "the summary does not say the run was stopped"

total=$(grep -m1 -o '^[0-9]* states at' "$TEST_TMP/first/summary.txt" | cut -d' ' -f1)
((total > 2)) || _fail "the log has $total states, the test needs more than 2"
echo resume >"$w/mode"
last=3
rc=0
"$FLUSHLOG_TOP/scripts/crashtest" --recheck "$TEST_TMP/first" --resume --add "$w/checker" \
	--add "$w/mode" --out "$TEST_TMP/second" >"$TEST_TMP/second.out" 2>&1 || rc=$?
cat "$TEST_TMP/second.out"
((rc == 1)) || _fail "the resumed run exited $rc, expected 1 (point $last fails on purpose)"
report=$TEST_TMP/second/report.json
jq -e --argjson n "$total" '.checked == $n and .failed == 1' "$report" >/dev/null ||
	_fail "the resumed report does not have all $total states with one failure: $(cat "$report")"
jq -e --argjson p "$last" '[.states[] | select(.result != "pass") | .point] == [$p]' "$report" >/dev/null ||
	_fail "the failing state is not point $last's alone: $(cat "$report")"
grep -q "saved in $TEST_TMP/second/failures/point-$last" "$TEST_TMP/second/summary.txt" ||
	_fail "the summary does not name the host's failure folder: $(grep 'saved in' "$TEST_TMP/second/summary.txt")"
grep -q "saved in $TEST_TMP/second/failures/point-$last" "$TEST_TMP/second.out" ||
	_fail "crashtest's output does not name the host's failure folder"
[ -f "$TEST_TMP/second/failures/point-$last/checker.out" ] || _fail "no checker.out for point $last"
jq -e --arg log "$TEST_TMP/second/log.img" '.log == $log' "$report" >/dev/null ||
	_fail "the report names the log $(jq .log "$report"), not the run folder's"
grep -q "$TEST_TMP/second/log.img" "$TEST_TMP/second/failures/point-$last/reproduce.sh" ||
	_fail "reproduce.sh does not name the run folder's log"
if grep -rq '/dev/flushlog\|/dev/vd\|/run/flushlog' "$TEST_TMP/second"/{summary.txt,report.json,junit.xml} \
	"$TEST_TMP/second/failures"; then
	_fail "a guest path leaked: $(grep -r '/dev/flushlog\|/dev/vd\|/run/flushlog' "$TEST_TMP/second"/{summary.txt,report.json,junit.xml} "$TEST_TMP/second/failures" | head -n 3)"
fi
echo "stopped with points 1-2 checked; resumed: $total states, point $last failing as meant"
