#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# flushlog check --timeout: a checker that hangs, and the child it
# started, are killed (its whole process group: SIGTERM, then SIGKILL
# for one that ignores it); the state's result is "timeout" in the table,
# the JSON and JUnit reports, never a pass (not even for a checker that
# exits 0 on SIGTERM), and the exit status is 1.
. "$FLUSHLOG_TOP/tests/common.sh"
_require_cmd jq

_mklog "$DATA/basic.fls" flushlog "$TEST_TMP/basic"
log=$TEST_TMP/basic/log
cat >"$TEST_TMP/hang" <<EOS
#!/bin/sh
[ "\${1:-}" = ignore-term ] && trap '' TERM
[ "\${1:-}" = exit-0-on-term ] && trap 'exit 0' TERM
sleep 1000 &
echo \$\$ \$! >"$TEST_TMP/pids"
sleep 1001
EOS
chmod +x "$TEST_TMP/hang"

gone() {	# gone PID...: every one has exited (a zombie has)
	local pid stat
	for pid in "$@"; do
		stat=$(ps -o stat= -p "$pid" || true)
		if [ -n "$stat" ] && [[ $stat != Z* ]]; then
			ps -o pid,stat,cmd -p "$pid" >&2 || true
			_fail "process $pid is still running"
		fi
	done
}

for mode in obeys-term exit-0-on-term ignore-term; do
	start=$SECONDS
	_expect_exit 1 "$FLUSHLOG" check -q --points end --timeout 1 -w "$TEST_TMP" \
		--report "$TEST_TMP/r.json" --junit "$TEST_TMP/r.xml" "$log" -- "$TEST_TMP/hang" "$mode"
	read -r -a pids <"$TEST_TMP/pids"
	gone "${pids[@]}"
	grep -q "TIMEOUT" "$TEST_TMP/stdout" || _fail "$mode: no TIMEOUT line: $(cat "$TEST_TMP/stdout")"
	grep -q "1 failed (1 timed out)" "$TEST_TMP/stdout" || _fail "$mode: $(cat "$TEST_TMP/stdout")"
	jq -e '.timeouts == 1 and .failed == 1 and .passed == 0 and .states[0].result == "timeout"' \
		"$TEST_TMP/r.json" >/dev/null || _fail "$mode: JSON report: $(cat "$TEST_TMP/r.json")"
	grep -q '<failure type="timeout"' "$TEST_TMP/r.xml" || _fail "$mode: JUnit: $(cat "$TEST_TMP/r.xml")"
	echo "$mode: killed in $((SECONDS - start)) s"
done
((SECONDS - start >= 5)) || _fail "one ignoring SIGTERM was killed before the 5 s grace"

# a checker within its time passes
_expect_exit 0 "$FLUSHLOG" check -q --timeout 30 -w "$TEST_TMP" "$log" -- true
_expect_exit 2 "$FLUSHLOG" check --timeout 0 "$log" -- true
_expect_exit 2 "$FLUSHLOG" check --timeout soon "$log" -- true
