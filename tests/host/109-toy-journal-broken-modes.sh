#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A toy journal on a raw device, traced through dm-flushlog: 'flushlog
# check' with the journal's own checker flags every broken mode that the
# flush-boundary model can expose (commit before its data, commit while the
# data is in flight, commit with FUA but no flush), each first at the
# commit of transaction 0 (the first FUA point), and never the correct
# mode.  'same-epoch' (commit without FUA, one flush after) is wrong, yet
# every flush boundary holds journal and commit together: the
# flush-boundary model cannot see it, and this test records that it passes.
# The epoch model (--states epoch) then catches every broken mode,
# same-epoch included, and passes the correct one.
. "$FLUSHLOG_TOP/tests/common.sh"
# kernels: 6.1
# asan: no
_require_guest

modes=(correct commit-first no-wait no-flush same-epoch)
disks=()
for m in "${modes[@]}"; do
	truncate -s 8M "$TEST_TMP/data-$m.img"
	truncate -s 16M "$TEST_TMP/log-$m.img"
	disks+=(--disk "data-$m=$TEST_TMP/data-$m.img" --disk "log-$m=$TEST_TMP/log-$m.img")
done
_run_guest "$FLUSHLOG_TOP/tests/guest/toy-journal-trace.sh" "${disks[@]}" -- "${modes[@]}"

toy=$FLUSHLOG_BUILD/tests/fl-toyjournal
for m in "${modes[@]}"; do
	rc=0
	"$FLUSHLOG" check -q -k -w "$TEST_TMP" --report "$TEST_TMP/$m.json" \
		"$TEST_TMP/log-$m.img" -- "$toy" check {} >"$TEST_TMP/$m.out" || rc=$?
	first=$(jq -c '[.states[] | select(.result == "fail")][0] // empty | {point, kind}' "$TEST_TMP/$m.json")
	first_fua=$(jq '[.states[] | select(.kind == "fua")][0].point' "$TEST_TMP/$m.json")
	echo "$m: exit $rc, first failure $first, $(jq .failed "$TEST_TMP/$m.json") of $(jq .checked "$TEST_TMP/$m.json") states"
	case $m in
	correct|same-epoch)
		((rc == 0)) || _fail "$m: flagged: $(cat "$TEST_TMP/$m.out")" ;;
	*)
		((rc == 1)) || _fail "$m: not flagged (exit $rc)"
		[ "$first" = "{\"point\":$first_fua,\"kind\":\"fua\"}" ] ||
			_fail "$m: first failure $first, expected the first FUA point ($first_fua)" ;;
	esac
done

# The epoch model sees inside the epochs: at each point, any one of the
# writes submitted before the next flush or FUA completed may also be on
# the media.  Every broken mode is caught there, same-epoch included
# (its commit can reach the media without its journal blocks); the
# correct mode passes every such state.
for m in "${modes[@]}"; do
	rc=0
	"$FLUSHLOG" check -q -k -w "$TEST_TMP" --states epoch -K 1 --report "$TEST_TMP/$m-epoch.json" \
		"$TEST_TMP/log-$m.img" -- "$toy" check {} >"$TEST_TMP/$m-epoch.out" || rc=$?
	echo "$m, epoch states: exit $rc, $(head -n 1 "$TEST_TMP/$m-epoch.out"), $(jq .failed "$TEST_TMP/$m-epoch.json") failed"
	if [ "$m" = correct ]; then
		((rc == 0)) || _fail "correct: an epoch state failed: $(cat "$TEST_TMP/$m-epoch.out")"
	else
		((rc == 1)) || _fail "$m: not flagged by the epoch model (exit $rc)"
	fi
done
