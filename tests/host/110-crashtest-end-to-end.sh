#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# scripts/crashtest end to end with a user's own workload and checker on a
# raw device (--fs raw, --workload, --add, --check): the broken toy journal
# is flagged with its images, output and entries saved in the run folder,
# and a host-side replay of the saved point fails the same checker; the
# correct journal passes.
. "$FLUSHLOG_TOP/tests/common.sh"
# kernels: 6.1
# asan: no
_require_guest

toy=$FLUSHLOG_BUILD/tests/fl-toyjournal
mkdir -p "$TEST_TMP/w"
printf '%s\n' 'commit-first' >"$TEST_TMP/w/mode"
cat >"$TEST_TMP/w/journal" <<'EOS'
#!/bin/sh
# a user's workload: the journal's mode comes from an --add file
exec "$TOY" write "$FLUSHLOG_DEV" "$(cat mode)" 4
EOS
sed -i "s|\"\$TOY\"|$toy|" "$TEST_TMP/w/journal"
chmod +x "$TEST_TMP/w/journal"

rc=0
"$FLUSHLOG_TOP/scripts/crashtest" --fs raw --workload "$TEST_TMP/w/journal" --add "$TEST_TMP/w/mode" \
	--check "$toy check {}" --out "$TEST_TMP/bad" || rc=$?
((rc == 1)) || _fail "the broken journal was not flagged (exit $rc)"
jq -e '.failed > 0' "$TEST_TMP/bad/report.json" >/dev/null || _fail "no failure in report.json"
point=$(jq '[.states[] | select(.result == "fail")][0].point' "$TEST_TMP/bad/report.json")
for f in first-bad.img last-good.img checker.out entries.txt; do
	[ -e "$TEST_TMP/bad/failures/point-$point/$f" ] || _fail "run folder lacks failures/point-$point/$f"
done
"$FLUSHLOG" replay -q -o "$TEST_TMP/state.img" --base "$TEST_TMP/bad/base.img" \
	--to "point:$point" "$TEST_TMP/bad/log.img"
if "$toy" check "$TEST_TMP/state.img"; then
	_fail "the host-side replay of point:$point passes the checker"
fi

printf '%s\n' 'correct' >"$TEST_TMP/w/mode"
"$FLUSHLOG_TOP/scripts/crashtest" --fs raw --workload "$TEST_TMP/w/journal" --add "$TEST_TMP/w/mode" \
	--check "$toy check {}" --out "$TEST_TMP/good" || _fail "the correct journal was flagged"
