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
. "$FLUSHLOG_TOP/tests/common.sh"
# asan: no
# debug-kernel: yes
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
	"$FLUSHLOG" check -q -k -w "$TEST_TMP" --json "$TEST_TMP/$m.json" \
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
