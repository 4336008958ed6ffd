#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# scripts/crashtest end to end with a user's own workload and checker on a
# raw device (--fs raw, --workload, --add, --check): the broken toy journal
# is flagged with its images, output and entries saved in the run folder,
# and a host-side replay of the saved point fails the same checker; the
# correct journal passes.  One state again in the guest (--recheck RUN
# --state): the failing point, through its reproduce.sh --guest, fails
# once more with the checker's own words (exit 1); a state that passed
# passes (exit 0), the kernel's line that its checker logs shown, its
# output reaching the host while it runs; a name that is no state of the
# run is refused (exit 2); the run folder's report, summary and failures
# are left as they were.
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

# the run folder as the trace left it, to compare after the rechecks
run_files() {
	(cd "$TEST_TMP/bad" && find report.json summary.txt junit.xml failures -type f -print0 |
		sort -z | xargs -0 sha256sum)
}
run_files >"$TEST_TMP/before.sums"
rc=0
"$FLUSHLOG_TOP/scripts/crashtest" --recheck "$TEST_TMP/bad" --state no-such-state \
	>"$TEST_TMP/badname.out" 2>&1 || rc=$?
((rc == 2)) || _fail "--state no-such-state exited $rc, expected 2: $(cat "$TEST_TMP/badname.out")"
grep -q "'no-such-state'" "$TEST_TMP/badname.out" ||
	_fail "the refusal does not name the state: $(cat "$TEST_TMP/badname.out")"

# the failing point, from its folder: the checker's words again, exit 1
said=$(head -n 1 "$TEST_TMP/bad/failures/point-$point/checker.out")
[ -n "$said" ] || _fail "the failing point's checker said nothing"
rc=0
"$TEST_TMP/bad/failures/point-$point/reproduce.sh" --guest >"$TEST_TMP/again.out" 2>&1 || rc=$?
cat "$TEST_TMP/again.out"
((rc == 1)) || _fail "reproduce.sh --guest of point $point exited $rc, expected 1"
grep -qxF -- "$said" "$TEST_TMP/again.out" || _fail "the checker's words '$said' are not in the output"
jq -e --argjson p "$point" '[.states[] | {point, result}] == [{point: $p, result: "fail"}]' \
	"$TEST_TMP/bad/recheck-point-$point/report.json" >/dev/null ||
	_fail "the recheck's report is not point $point failing alone: $(cat "$TEST_TMP/bad/recheck-point-$point/report.json")"

# a state that passed: exit 0, and what its checker (--check, --add)
# writes to the kernel's log comes out as the kernel's line.  The checker
# goes on only once its first line has reached the host: its output comes
# as it is written, not when the guest ends.  It waits in the recheck's
# own folder, which the guest shares.
name=$(jq -r --argjson p "$point" '[.states[] | select(.result == "pass" and .point < $p)][-1].state' \
	"$TEST_TMP/bad/report.json")
go=$TEST_TMP/bad/recheck-$name/go
cat >"$TEST_TMP/w/logging-check" <<EOS
#!/bin/sh
echo "logging-check: state \$FLUSHLOG_STATE_NAME" >/dev/kmsg
echo "logging-check: waiting"
end=\$((\$(date +%s) + 120))
until [ -e '$go' ]; do
	[ "\$(date +%s)" -lt "\$end" ] || { echo "logging-check: its first line never reached the host"; exit 3; }
	sleep 0.2
done
exec $toy check "\$1"
EOS
chmod +x "$TEST_TMP/w/logging-check"
rc=0
"$FLUSHLOG_TOP/scripts/crashtest" --recheck "$TEST_TMP/bad" --state "$name" \
	--add "$TEST_TMP/w/logging-check" --check "logging-check {}" >"$TEST_TMP/pass.out" 2>&1 &
pid=$!
while kill -0 "$pid" 2>/dev/null && ! grep -qx 'logging-check: waiting' "$TEST_TMP/pass.out"; do
	sleep 0.5
done
touch "$go"
wait "$pid" || rc=$?
cat "$TEST_TMP/pass.out"
((rc == 0)) || _fail "--state $name, which passed, exited $rc"
grep -Eq "^kernel: \[ *[0-9.]+\] logging-check: state $name\$" "$TEST_TMP/pass.out" ||
	_fail "the kernel's line from the checker is not shown"
run_files | diff "$TEST_TMP/before.sums" - >&2 || _fail "a recheck changed the run folder's report, summary or failures"

printf '%s\n' 'correct' >"$TEST_TMP/w/mode"
"$FLUSHLOG_TOP/scripts/crashtest" --fs raw --workload "$TEST_TMP/w/journal" --add "$TEST_TMP/w/mode" \
	--check "$toy check {}" --out "$TEST_TMP/good" || _fail "the correct journal was flagged"
