#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# flushlog check rewrites its --report report as states finish: a run
# killed with SIGKILL in the middle leaves a report that parses and lists
# the states it finished; --resume with it checks only the others, and
# the union equals a full run's results (a failure carried over too).
. "$FLUSHLOG_TOP/tests/common.sh"
_require_cmd jq

{
	echo 'device 2048'
	for i in $(seq 12); do
		echo "write $((i * 8)) 8"
		echo flush
	done
} >"$TEST_TMP/many.fls"
"$MKLOG" -o "$TEST_TMP/many.log" "$TEST_TMP/many.fls"
log=$TEST_TMP/many.log
cat >"$TEST_TMP/slow-check" <<EOS
#!/bin/sh
# slow-check RUN: note the state, take a while, fail point 3
echo "\$FLUSHLOG_STATE_NAME" >>"$TEST_TMP/ran-\$1"
sleep 0.3
[ "\$FLUSHLOG_POINT" != 3 ]
EOS
chmod +x "$TEST_TMP/slow-check"

_expect_exit 1 "$FLUSHLOG" check -q -k -w "$TEST_TMP" --report "$TEST_TMP/full.json" "$log" -- "$TEST_TMP/slow-check" full
total=$(jq '.states | length' "$TEST_TMP/full.json")
((total >= 6)) || _fail "the test needs more states than $total"

mkdir -p "$TEST_TMP/work"
"$FLUSHLOG" check -q -k -w "$TEST_TMP/work" --report "$TEST_TMP/part.json" "$log" -- "$TEST_TMP/slow-check" part >/dev/null &
pid=$!
for _ in $(seq 100); do
	[ -f "$TEST_TMP/part.json" ] && (($(jq '.states | length' "$TEST_TMP/part.json") >= 4)) && break
	sleep 0.1
done
kill -KILL "$pid"
wait "$pid" || true
jq -e '.finished == false' "$TEST_TMP/part.json" >/dev/null ||
	_fail "the killed run's report: $(cat "$TEST_TMP/part.json")"
done_before=$(jq '.states | length' "$TEST_TMP/part.json")
((done_before >= 4 && done_before < total)) || _fail "$done_before of $total states in the killed run's report"
# what the report lists as finished, the checker did finish
while read -r name; do
	grep -qx "$name" "$TEST_TMP/ran-part" || _fail "state $name is reported but never ran"
done < <(jq -r '.states[].state' "$TEST_TMP/part.json")

_expect_exit 1 "$FLUSHLOG" check -q -k -w "$TEST_TMP" --resume "$TEST_TMP/part.json" \
	--report "$TEST_TMP/resumed.json" "$log" -- "$TEST_TMP/slow-check" resumed
grep -q "^$done_before states already checked" "$TEST_TMP/stdout" || _fail "resume: $(cat "$TEST_TMP/stdout")"
again=$(jq -r '.states[].state' "$TEST_TMP/part.json" | grep -cxFf - "$TEST_TMP/ran-resumed" || true)
((again == 0)) || _fail "$again states of the report were checked again"
diff <(jq -c '.states[] | [.state, .result, .exit]' "$TEST_TMP/full.json") \
	<(jq -c '.states[] | [.state, .result, .exit]' "$TEST_TMP/resumed.json") ||
	_fail "the resumed run's results differ from a full run's"
jq -e --argjson n "$total" '.finished and .checked == $n and .failed == 1' "$TEST_TMP/resumed.json" >/dev/null ||
	_fail "resumed report: $(head -n 1 "$TEST_TMP/resumed.json")"
echo "killed after $done_before of $total states; --resume checked $(wc -l <"$TEST_TMP/ran-resumed") more"

# a finished report leaves nothing to do; a carried failure still counts
_expect_exit 1 "$FLUSHLOG" check -q -k -w "$TEST_TMP" --resume "$TEST_TMP/full.json" "$log" -- false
grep -q "FAIL (exit 1) (from --resume)" "$TEST_TMP/stdout" || _fail "carried failure: $(cat "$TEST_TMP/stdout")"
# a report on another log is refused, even one with the same states
_mklog "$DATA/basic.fls" flushlog "$TEST_TMP/basic"
_expect_exit 2 "$FLUSHLOG" check -q -w "$TEST_TMP" --resume "$TEST_TMP/full.json" "$TEST_TMP/basic/log" -- true
grep -q "another log or of other options" "$TEST_TMP/stderr" || _fail "another log's report: $(cat "$TEST_TMP/stderr")"
sed 's/^write 8 8$/write 9 7/' "$TEST_TMP/many.fls" >"$TEST_TMP/twin.fls"
"$MKLOG" -o "$TEST_TMP/twin.log" "$TEST_TMP/twin.fls"
diff <("$FLUSHLOG" points "$log") <("$FLUSHLOG" points "$TEST_TMP/twin.log") >/dev/null ||
	_fail "the twin log should have the same points"
_expect_exit 2 "$FLUSHLOG" check -q -w "$TEST_TMP" --resume "$TEST_TMP/full.json" "$TEST_TMP/twin.log" -- true
grep -q "another log or of other options" "$TEST_TMP/stderr" || _fail "twin log's report: $(cat "$TEST_TMP/stderr")"
# and so is one of the same log with other options (a subset of its states)
_expect_exit 2 "$FLUSHLOG" check -q -w "$TEST_TMP" --points flush --resume "$TEST_TMP/full.json" "$log" -- true

# state names hold commas: a report with "0+1,2" must not be read as "0+1"
printf '%s\n' 'device 2048' 'write 0 8' 'write 8 8' 'write 16 8' 'write 24 8' flush >"$TEST_TMP/k2.fls"
"$MKLOG" -o "$TEST_TMP/k2.log" "$TEST_TMP/k2.fls"
"$FLUSHLOG" check -q -k -K 2 --states epoch -w "$TEST_TMP" --report "$TEST_TMP/k2.json" \
	"$TEST_TMP/k2.log" -- "$TEST_TMP/slow-check" k2 >/dev/null
pair=$(jq -r '[.states[].state | select(test(","))][0]' "$TEST_TMP/k2.json")
single=${pair%,*}
if [ "$pair" = null ] ||
   ! jq -e --arg s "$single" 'any(.states[]; .state == $s)' "$TEST_TMP/k2.json" >/dev/null; then
	_fail "the -K 2 run should have states '$single' and '$pair'"
fi
grep -v "\"state\":\"$single\"" "$TEST_TMP/k2.json" >"$TEST_TMP/k2-part.json"
rm -f "$TEST_TMP/ran-k2again"
"$FLUSHLOG" check -q -k -K 2 --states epoch -w "$TEST_TMP" --resume "$TEST_TMP/k2-part.json" \
	"$TEST_TMP/k2.log" -- "$TEST_TMP/slow-check" k2again >/dev/null
[ "$(cat "$TEST_TMP/ran-k2again")" = "$single" ] ||
	_fail "resumed -K 2 run checked '$(cat "$TEST_TMP/ran-k2again")', expected only '$single'"
echo '{"not": "a report"}' >"$TEST_TMP/junk.json"
_expect_exit 2 "$FLUSHLOG" check -q -w "$TEST_TMP" --resume "$TEST_TMP/junk.json" "$log" -- true
