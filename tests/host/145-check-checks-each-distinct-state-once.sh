#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# flushlog check runs the checker once per distinct state: the same image
# with the same marks and promises.  Ground truth is --every-state with
# the same checker, whose verdict is a function of the image and the
# context: every state gets the verdict it gets there, no distinct state
# goes unchecked, none is checked twice, at -j 1 and at -j 2 (where the
# first of a kind is still running when its duplicate's turn comes), and
# a later state under another mark, the same bytes, is checked again.
. "$FLUSHLOG_TOP/tests/common.sh"
_require_cmd jq

# empty flushes and marks between writes; a mark label used twice; a
# promise
cat >"$TEST_TMP/alike.fls" <<'EOF'
device 2048
write 0 8
flush
flush
mark m1
flush
write 100 8 fua
mark m1
flush
write 200 8
write 300 8
flush
mark promise:rows=1
flush
write 400 8
flush
mark m2
flush
flush
EOF
"$MKLOG" -o "$TEST_TMP/alike.log" "$TEST_TMP/alike.fls"

# verdict_checker FILE WORDS: a checker whose verdict is a hash of the
# image and of WORDS (expanded in it), each run noted in $CALLS as
# "NAME@POINT IMAGE-HASH WORDS"
verdict_checker() {
	cat >"$1" <<EOS
#!/bin/sh
sleep 0.1
ctx="\$(sha256sum <"\$1" | cut -c1-16) $2"
echo "\$FLUSHLOG_STATE_NAME@\$FLUSHLOG_POINT \$ctx" >>"\$CALLS"
case \$(printf '%s' "\$ctx" | sha256sum | cut -c1) in
[0-7]) exit 0 ;;
*) exit 1 ;;
esac
EOS
	chmod +x "$1"
}
# the verdict: the image and every variable but those that name the state
# shellcheck disable=SC2016 # expanded by the checker
verdict_checker "$TEST_TMP/checker" \
	'M=${FLUSHLOG_MARK-} L=${FLUSHLOG_LAST_MARK-} A=${FLUSHLOG_AFTER_MARK-} P=${FLUSHLOG_PROMISES-}:${FLUSHLOG_PROMISE_rows-}'

check() {	# NAME [options]: a run, its calls in NAME.calls, its report NAME.json
	local name=$1
	shift
	: >"$TEST_TMP/$name.calls"
	CALLS=$TEST_TMP/$name.calls "$FLUSHLOG" check -q -k -w "$TEST_TMP" \
		--states prefix,epoch,torn --report "$TEST_TMP/$name.json" "$@" \
		"$TEST_TMP/alike.log" -- "$TEST_TMP/checker" {} >"$TEST_TMP/$name.out" ||
		[ $? = 1 ] || _fail "check $name exited $?: $(cat "$TEST_TMP/$name.out")"
}
verdicts() {	# a report's states: name, point, result
	jq -r '.states[] | "\(.state) \(.point) \(.result)"' "$TEST_TMP/$1.json" | sort
}

check every --every-state
check once
check twice -j 2
planned=$(jq .checked "$TEST_TMP/every.json")
[ "$(wc -l <"$TEST_TMP/every.calls")" = "$planned" ] ||
	_fail "--every-state ran the checker $(wc -l <"$TEST_TMP/every.calls") times for $planned states"
distinct=$(cut -d' ' -f2- "$TEST_TMP/every.calls" | sort -u | wc -l)
[ "$distinct" -lt "$planned" ] || _fail "the log has no alike states: the test proves nothing"
jq -e '[.states[].result] | index("fail") and index("pass")' "$TEST_TMP/every.json" >/dev/null ||
	_fail "the checker passed or failed every state: the test proves nothing"
for run in once twice; do
	diff <(verdicts every) <(verdicts $run) >"$TEST_TMP/diff" ||
		_fail "$run: verdicts differ from --every-state: $(cat "$TEST_TMP/diff")"
	diff <(cut -d' ' -f2- "$TEST_TMP/every.calls" | sort -u) \
		<(cut -d' ' -f2- "$TEST_TMP/$run.calls" | sort) >"$TEST_TMP/diff" ||
		_fail "$run: not each distinct state checked exactly once: $(cat "$TEST_TMP/diff")"
	same=$(jq '[.states[] | select(.same_as)] | length' "$TEST_TMP/$run.json")
	[ "$same" = $((planned - distinct)) ] ||
		_fail "$run: $same states say same_as, $((planned - distinct)) were not checked"
	# a same_as names a state checked, with the same image and context
	while read -r state first; do
		mine=$(grep -m1 "^$state " "$TEST_TMP/every.calls" | cut -d' ' -f2-)
		theirs=$(grep -m1 "^$first@" "$TEST_TMP/$run.calls" | cut -d' ' -f2-)
		if [ -z "$theirs" ] || [ "$mine" != "$theirs" ]; then
			_fail "$run: $state is said to be the same as $first: '$mine' vs '$theirs'"
		fi
	done < <(jq -r '.states[] | select(.same_as) | "\(.state)@\(.point) \(.same_as)"' "$TEST_TMP/$run.json")
done
grep -q "$((planned - distinct)) of them the same as an earlier state" "$TEST_TMP/once.out" ||
	_fail "the summary does not count the states checked once: $(cat "$TEST_TMP/once.out")"
if jq -e '.states[] | select(.same_as and .result == "fail")' "$TEST_TMP/once.json" >/dev/null; then
	grep -q "FAIL (exit 1) (same as state " "$TEST_TMP/once.out" ||
		_fail "a failure checked once is not named so in the table: $(cat "$TEST_TMP/once.out")"
fi

# the mark point right after an empty flush: the same bytes, another
# FLUSHLOG_LAST_MARK, checked again
jq -e '.states[] | select(.kind == "mark" and .entry == 3) | .same_as == null' "$TEST_TMP/once.json" >/dev/null ||
	_fail "the state under mark m1 was taken for the one before it"
# --context none: a checker that reads the image alone, checked once per
# distinct image, the marks and promises no longer telling states apart
verdict_checker "$TEST_TMP/fsck-like" ''
for run in every-image image; do
	: >"$TEST_TMP/$run.calls"
	opt=--context=none
	[ $run = image ] || opt=--every-state
	CALLS=$TEST_TMP/$run.calls "$FLUSHLOG" check -q -k -w "$TEST_TMP" "$opt" \
		--report "$TEST_TMP/$run.json" "$TEST_TMP/alike.log" -- "$TEST_TMP/fsck-like" {} >/dev/null ||
		[ $? = 1 ] || _fail "check $run exited $?"
done
diff <(verdicts every-image) <(verdicts image) || _fail "--context none changed a verdict"
images=$(cut -d' ' -f2 "$TEST_TMP/every-image.calls" | sort -u | wc -l)
[ "$(wc -l <"$TEST_TMP/image.calls")" = "$images" ] ||
	_fail "--context none: $(wc -l <"$TEST_TMP/image.calls") checker runs for $images distinct images"
jq -e '.states[] | select(.kind == "mark" and .entry == 3) | .same_as' "$TEST_TMP/image.json" >/dev/null ||
	_fail "--context none: the state under mark m1, the same bytes as the one before, was checked again"
_expect_exit 2 "$FLUSHLOG" check --context sometimes "$TEST_TMP/alike.log" -- true

# --resume carries what was checked, and gives the same_as results again
# by its own rules: a state that borrowed under --context none is checked
# under --every-state, by a checker that reads the mark
cat >"$TEST_TMP/mark-reader" <<'EOS'
#!/bin/sh
echo "$FLUSHLOG_STATE_NAME@$FLUSHLOG_POINT" >>"$CALLS"
[ -n "${FLUSHLOG_MARK-}" ]
EOS
chmod +x "$TEST_TMP/mark-reader"
CALLS=/dev/null "$FLUSHLOG" check -q -k -w "$TEST_TMP" --context none --report "$TEST_TMP/none.json" \
	"$TEST_TMP/alike.log" -- "$TEST_TMP/mark-reader" {} >/dev/null || true
jq -e '.states[] | select(.kind == "mark" and .entry == 3) | .same_as and .result == "fail"' \
	"$TEST_TMP/none.json" >/dev/null || _fail "--context none: the mark state did not borrow a failure"
: >"$TEST_TMP/every-resumed.calls"
CALLS=$TEST_TMP/every-resumed.calls "$FLUSHLOG" check -q -k -w "$TEST_TMP" --every-state \
	--resume "$TEST_TMP/none.json" --report "$TEST_TMP/every-resumed.json" \
	"$TEST_TMP/alike.log" -- "$TEST_TMP/mark-reader" {} >/dev/null || true
jq -e '.states[] | select(.kind == "mark" and .entry == 3) | .result == "pass" and (.same_as | not)' \
	"$TEST_TMP/every-resumed.json" >/dev/null ||
	_fail "--resume --every-state carried a borrowed result: $(jq -c '.states[] | select(.entry == 3)' "$TEST_TMP/every-resumed.json")"
[ "$(wc -l <"$TEST_TMP/every-resumed.calls")" = "$(jq '[.states[] | select(.same_as)] | length' "$TEST_TMP/none.json")" ] ||
	_fail "--resume did not check exactly the states that had borrowed: $(cat "$TEST_TMP/every-resumed.calls")"
check resumed --resume "$TEST_TMP/once.json"
diff <(verdicts once) <(verdicts resumed) || _fail "--resume changed a verdict"
[ "$(jq '[.states[] | select(.same_as)] | length' "$TEST_TMP/resumed.json")" = $((planned - distinct)) ] ||
	_fail "--resume lost the same_as of the states it gave results again"
[ ! -s "$TEST_TMP/resumed.calls" ] || _fail "--resume checked again: $(cat "$TEST_TMP/resumed.calls")"
# two shards under other rules are no one run: merge refuses them
for k in 0 1; do
	opt=--every-state
	[ $k = 1 ] || opt=--context=none
	"$FLUSHLOG" check -q -k -w "$TEST_TMP" "$opt" --shard $k/2 --report "$TEST_TMP/shard-$k.json" \
		"$TEST_TMP/alike.log" -- true >/dev/null
done
_expect_exit 2 "$FLUSHLOG" merge --report "$TEST_TMP/merged.json" "$TEST_TMP"/shard-[01].json

# a timed-out check says nothing of the bytes: its duplicates are each
# checked, at -j 2 also those already waiting for it
cat >"$TEST_TMP/hangs" <<'EOS'
#!/bin/sh
echo "$FLUSHLOG_STATE_NAME@$FLUSHLOG_POINT" >>"$CALLS"
[ "$(dd if="$1" bs=512 skip=100 count=1 status=none | tr -d '\0' | wc -c)" = 0 ] || exec sleep 30
EOS
chmod +x "$TEST_TMP/hangs"
: >"$TEST_TMP/hangs.calls"
_expect_exit 1 env CALLS="$TEST_TMP/hangs.calls" "$FLUSHLOG" check -q -k -j 2 --timeout 1 --context none \
	-w "$TEST_TMP" --report "$TEST_TMP/hangs.json" "$TEST_TMP/alike.log" -- "$TEST_TMP/hangs" {}
timeouts=$(jq '[.states[] | select(.result == "timeout")] | length' "$TEST_TMP/hangs.json")
((timeouts > 1)) || _fail "expected several states with sector 100 written to time out, not $timeouts"
jq -e '[.states[] | select(.result == "timeout" and .same_as)] | length == 0' "$TEST_TMP/hangs.json" >/dev/null ||
	_fail "a timeout was handed on as a duplicate's result"
[ "$(grep -c . "$TEST_TMP/hangs.calls")" = "$(jq '[.states[] | select(.same_as | not)] | length' "$TEST_TMP/hangs.json")" ] ||
	_fail "the checker runs are not the states without same_as"
