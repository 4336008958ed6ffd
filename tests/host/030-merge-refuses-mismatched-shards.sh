#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# flushlog merge: the reports of 4 shards merge into the report one run
# without --shard writes (the same first line and state lines, but for
# the times), which --resume takes; a missing shard and a shard cut short
# are errors naming the states without a result; two reports of one
# shard, two results for one state, and shards of another log, checker,
# options or N are refused, naming the files and what differs, with
# exit 2 and nothing written.
. "$FLUSHLOG_TOP/tests/common.sh"
_require_cmd jq

_broken_journal "$TEST_TMP/journal"
log=$TEST_TMP/journal/log
check=$TEST_TMP/journal/check
run=$TEST_TMP/run
mkdir -p "$run"

# shard K/N ARGS...: flushlog check --shard K/N ARGS into $run/sK.json
shard() {
	local k=$1 n=$2 rc=0
	shift 2
	"$FLUSHLOG" check -q -k --states epoch -w "$TEST_TMP" --shard "$k/$n" \
		--report "$run/s$k.json" "$@" >/dev/null || rc=$?
	((rc <= 1)) || _fail "shard $k/$n exited $rc"
}

# merge_refused PATTERN REPORT...: exit 2, PATTERN said, nothing written
merge_refused() {
	local pattern=$1
	shift
	rm -f "$run/merged.json"
	_expect_exit 2 "$FLUSHLOG" merge --report "$run/merged.json" "$@"
	grep -Eq -- "$pattern" "$TEST_TMP/stderr" ||
		_fail "merge $*: expected /$pattern/ on stderr, got: $(cat "$TEST_TMP/stderr")"
	[ ! -e "$run/merged.json" ] || _fail "merge $*: wrote a report all the same"
	echo "refused: $(head -n 1 "$TEST_TMP/stderr")"
}

_expect_exit 1 "$FLUSHLOG" check -q -k --states epoch -w "$TEST_TMP" \
	--report "$run/one.json" --junit "$run/one.xml" "$log" -- "$check" {}
total=$(jq '.states | length' "$run/one.json")
failed=$(jq '.failed' "$run/one.json")
((failed > 0 && failed < total)) || _fail "the log should have passing and failing states: $failed of $total failed"
for k in 0 1 2 3; do
	shard "$k" 4 "$log" -- "$check" {}
done

# all four, in any order: the unsharded run's report but for the times
_expect_exit 1 "$FLUSHLOG" merge --report "$run/all.json" --junit "$run/all.xml" \
	"$run/s2.json" "$run/s0.json" "$run/s3.json" "$run/s1.json"
_same_verdicts "$run/one.json" "$run/all.json" "4 shards merged"
diff <(jq -c 'del(.states)' "$run/one.json") <(jq -c 'del(.states)' "$run/all.json") ||
	_fail "the merged report's first line differs from the unsharded run's"
diff <(jq -c '.states[] | del(.seconds)' "$run/one.json") \
	<(jq -c '.states[] | del(.seconds)' "$run/all.json") ||
	_fail "the merged report's states differ from the unsharded run's"
grep -q "^$total states checked: $((total - failed)) passed, $failed failed" "$TEST_TMP/stdout" ||
	_fail "merge's summary: $(cat "$TEST_TMP/stdout")"
diff <(grep -o 'name="[^"]*"' "$run/one.xml") <(grep -o 'name="[^"]*"' "$run/all.xml") ||
	_fail "the merged JUnit report's test cases differ from the unsharded run's"
[ "$(grep -c '<failure' "$run/all.xml")" = "$failed" ] ||
	_fail "the merged JUnit report has $(grep -c '<failure' "$run/all.xml") failures, not $failed"
if command -v xmllint >/dev/null; then
	xmllint --noout "$run/all.xml" || _fail "the merged JUnit report is not well-formed"
fi
# check --resume takes the merged report as its own: nothing is left to run
_expect_exit 1 "$FLUSHLOG" check -q -k --states epoch -w "$TEST_TMP" --resume "$run/all.json" \
	"$log" -- "$TEST_TMP/never-run" {}
grep -q "^$total states already checked" "$TEST_TMP/stdout" || _fail "resume from the merge: $(cat "$TEST_TMP/stdout")"
echo "4 shards merged: $total states, $failed failing, as in one run"

# a missing shard: named with its states; the rest is written, unfinished,
# and check --resume checks what is missing (exit 1, as states of the
# other shards failed; with none failing, 5, incomplete: test 051)
_expect_exit 1 "$FLUSHLOG" merge --report "$run/part.json" "$run/s0.json" "$run/s1.json" "$run/s3.json"
share=$(jq '.states | length' "$run/s2.json")
grep -q "shard 2/4 is missing: no report has its $share states (numbers 2, 6, 10," "$TEST_TMP/stderr" ||
	_fail "missing shard: $(cat "$TEST_TMP/stderr")"
jq -e --argjson n "$((total - share))" '.finished == false and .checked == $n' "$run/part.json" >/dev/null ||
	_fail "the report of 3 shards: $(head -n 1 "$run/part.json")"
echo "missing: $(cat "$TEST_TMP/stderr")"
: >"$TEST_TMP/ran"
cat >"$TEST_TMP/note-check" <<EOS
#!/bin/sh
echo "\$FLUSHLOG_STATE_NAME" >>"$TEST_TMP/ran"
exec "$check" "\$@"
EOS
chmod +x "$TEST_TMP/note-check"
"$FLUSHLOG" check -q -k --states epoch -w "$TEST_TMP" --resume "$run/part.json" \
	--report "$run/resumed.json" "$log" -- "$TEST_TMP/note-check" {} >/dev/null || true
diff <(sort "$TEST_TMP/ran") <(jq -r '.states[].state' "$run/s2.json" | sort) ||
	_fail "resuming the 3 shards' report checked other states than shard 2's"
_same_verdicts "$run/one.json" "$run/resumed.json" "3 shards merged, then resumed"

# a shard cut short: without -k it stops at a failure before its last state
k=$(jq --argjson n "$total" '[.states[] | select(.result != "pass" and .index + 4 < $n) | .index][0] % 4' "$run/one.json")
"$FLUSHLOG" check -q --states epoch -w "$TEST_TMP" --shard "$k/4" \
	--report "$run/short.json" "$log" -- "$check" {} >/dev/null && _fail "shard $k/4 should fail"
others=()
for j in 0 1 2 3; do
	((j == k)) || others+=("$run/s$j.json")
done
_expect_exit 1 "$FLUSHLOG" merge "${others[@]}" "$run/short.json"
grep -Eq "shard $k/4 \('.*short.json'\) has no result for [0-9]+ of its $(jq '.states | length' "$run/s$k.json") states" "$TEST_TMP/stderr" ||
	_fail "a shard cut short: $(cat "$TEST_TMP/stderr")"
echo "cut short: $(cat "$TEST_TMP/stderr")"

# two reports of one shard, and two results for one state
merge_refused "'.*s$k.json' and '.*short.json' are both shard $k/4" \
	"$run/s0.json" "$run/s1.json" "$run/s2.json" "$run/s3.json" "$run/short.json"
cp "$run/s1.json" "$run/s1-again.json"
merge_refused "'.*s1.json' and '.*s1-again.json' are both shard 1/4" \
	"$run/s0.json" "$run/s1.json" "$run/s2.json" "$run/s3.json" "$run/s1-again.json"
# (a passing state's line twice, the counts made to agree)
awk -v checked="$(($(jq .checked "$run/s3.json") + 1))" -v passed="$(($(jq .passed "$run/s3.json") + 1))" '
	NR == 1 { sub(/"checked":[0-9]+/, "\"checked\":" checked); sub(/"passed":[0-9]+/, "\"passed\":" passed) }
	{ print }
	/"result":"pass"/ && !twice { sub(/,$/, ""); print $0 ","; twice = 1 }' "$run/s3.json" >"$run/s3-twice.json"
merge_refused "state [^ ]+ \(index [0-9]+\) has results in '.*s3-twice.json' and in '.*s3-twice.json'" \
	"$run/s0.json" "$run/s1.json" "$run/s2.json" "$run/s3-twice.json"
# (a state moved to another shard's index)
sed '2s/"index":2}/"index":3}/' "$run/s2.json" >"$run/s2-moved.json"
merge_refused "'.*s2-moved.json': state [^ ]+ has index 3, which is not one of shard 2/4's $total states" \
	"$run/s0.json" "$run/s1.json" "$run/s2-moved.json" "$run/s3.json"
# (a state's name changed: the names no longer make up the plan)
sed -E '2s/"state":"([0-9]+)"/"state":"\1+999"/' "$run/s2.json" >"$run/s2-renamed.json"
merge_refused "the states of the reports do not make up their plan" \
	"$run/s0.json" "$run/s1.json" "$run/s2-renamed.json" "$run/s3.json"

# shards of another log: one write moved, the same points and states
sed 's/^write 2000 8$/write 2008 8/' "$TEST_TMP/journal/journal.fls" >"$TEST_TMP/twin.fls"
"$MKLOG" -o "$TEST_TMP/twin.log" "$TEST_TMP/twin.fls"
diff <("$FLUSHLOG" points "$log") <("$FLUSHLOG" points "$TEST_TMP/twin.log") >/dev/null ||
	_fail "the twin log should have the same points"
mkdir -p "$run/twin"
"$FLUSHLOG" check -q -k --states epoch -w "$TEST_TMP" --shard 3/4 \
	--report "$run/twin/s3.json" "$TEST_TMP/twin.log" -- "$check" {} >/dev/null || true
merge_refused "'.*twin/s3.json' is a report on another log than '.*s0.json'" \
	"$run/s0.json" "$run/s1.json" "$run/s2.json" "$run/twin/s3.json"

# another checker: the same script under another name
cp "$check" "$TEST_TMP/check-too"
"$FLUSHLOG" check -q -k --states epoch -w "$TEST_TMP" --shard 3/4 \
	--report "$run/other-checker.json" "$log" -- "$TEST_TMP/check-too" {} >/dev/null || true
merge_refused "'.*other-checker.json' ran another checker than '.*s0.json'" \
	"$run/s0.json" "$run/s1.json" "$run/s2.json" "$run/other-checker.json"

# other options: another model; the same checker with a --timeout
"$FLUSHLOG" check -q -k -w "$TEST_TMP" --shard 3/4 \
	--report "$run/prefix.json" "$log" -- "$check" {} >/dev/null || true
merge_refused "'.*prefix.json' was checked with other options than '.*s0.json'" \
	"$run/s0.json" "$run/s1.json" "$run/s2.json" "$run/prefix.json"
"$FLUSHLOG" check -q -k --states epoch --timeout 60 -w "$TEST_TMP" --shard 3/4 \
	--report "$run/timeout.json" "$log" -- "$check" {} >/dev/null || true
merge_refused "'.*timeout.json' was checked with other options" \
	"$run/s0.json" "$run/s1.json" "$run/s2.json" "$run/timeout.json"
truncate -s 2M "$TEST_TMP/base.img"
"$FLUSHLOG" check -q -k --states epoch --base "$TEST_TMP/base.img" -w "$TEST_TMP" --shard 3/4 \
	--report "$run/base.json" "$log" -- "$check" {} >/dev/null || true
merge_refused "'.*base.json' was checked with other options" \
	"$run/s0.json" "$run/s1.json" "$run/s2.json" "$run/base.json"

# another N: shard 1/3 beside the quarters
"$FLUSHLOG" check -q -k --states epoch -w "$TEST_TMP" --shard 1/3 \
	--report "$run/third.json" "$log" -- "$check" {} >/dev/null || true
merge_refused "'.*third.json' is shard 1/3, '.*s0.json' shard 0/4" \
	"$run/s0.json" "$run/third.json" "$run/s2.json" "$run/s3.json"

# what is not a report of this version
echo '{"not": "a report"}' >"$run/junk.json"
merge_refused "'.*junk.json' line 1 is not from a 'flushlog check --report' report" \
	"$run/s0.json" "$run/junk.json"
sed -E '1s/,"shard":.*,"states":\[/,"states":[/' "$run/s1.json" >"$run/old.json"
merge_refused "'.*old.json' is a report of an older flushlog check" "$run/s0.json" "$run/old.json"
head -n 2 "$run/s1.json" >"$run/cut.json"
merge_refused "'.*cut.json' ends at line 2, before the end of its states" \
	"$run/s0.json" "$run/cut.json"
merge_refused "cannot open '.*nowhere.json'" "$run/s0.json" "$run/nowhere.json"
_expect_exit 2 "$FLUSHLOG" merge

# a log and a checker whose paths hold quotes, backslashes, a newline and
# UTF-8: the reports carry them, merge reads them back and writes them again
odd=$TEST_TMP/$'a "quoted\\ \n\xc3\xa9 dir'
mkdir -p "$odd"
cp "$log" "$odd/log"
cp "$check" "$odd/check"
for k in 0 1; do
	"$FLUSHLOG" check -q -k -w "$TEST_TMP" --shard "$k/2" --report "$run/odd$k.json" \
		"$odd/log" -- "$odd/check" {} >/dev/null || true
done
"$FLUSHLOG" check -q -k -w "$TEST_TMP" --report "$run/odd.json" "$odd/log" -- "$odd/check" {} >/dev/null || true
_expect_exit 1 "$FLUSHLOG" merge --report "$run/odd-merged.json" "$run/odd0.json" "$run/odd1.json"
cmp <(head -n 1 "$run/odd.json") <(head -n 1 "$run/odd-merged.json") ||
	_fail "odd paths: the merged report's first line differs from the unsharded run's"
_same_verdicts "$run/odd.json" "$run/odd-merged.json" "odd paths"
