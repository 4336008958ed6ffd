#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# flushlog check --state NAME checks one state as a whole run of the same
# options checked it: for every state of a run (prefix and epoch, from a
# mark on), --state gives its checker the same environment and the same
# verdict, and the report names that state alone.  Its checker's output
# reaches stderr while the checker still runs, not at its end.  A name
# that is no state, or a state the options do not plan, is refused (exit
# 2) with the name in the message.
. "$FLUSHLOG_TOP/tests/common.sh"
_require_cmd jq

_mklog "$DATA/basic.fls" flushlog "$TEST_TMP/g"
log=$TEST_TMP/g/log
mkdir -p "$TEST_TMP/env"
# each state's FLUSHLOG_* (but the image's path) to ENVDIR/NAME and to
# stdout; point 5's states fail
cat >"$TEST_TMP/checker" <<'EOS'
#!/bin/sh
env | grep '^FLUSHLOG_' | grep -v '^FLUSHLOG_STATE=' | sort >"$ENVDIR/$FLUSHLOG_STATE_NAME"
cat "$ENVDIR/$FLUSHLOG_STATE_NAME"
[ "$FLUSHLOG_POINT" != 5 ]
EOS
chmod +x "$TEST_TMP/checker"
opts=(--states "prefix,epoch" --from mark:after-fua)

rc=0
ENVDIR=$TEST_TMP/env "$FLUSHLOG" check -q -k "${opts[@]}" --report "$TEST_TMP/all.json" "$log" \
	-- "$TEST_TMP/checker" {} >/dev/null || rc=$?
((rc == 1)) || _fail "the whole run exited $rc, expected 1 (point 5 fails)"
n=0
while read -r name result; do
	mkdir -p "$TEST_TMP/one"
	want=0
	[ "$result" = pass ] || want=1
	rc=0
	ENVDIR=$TEST_TMP/one "$FLUSHLOG" check -q "${opts[@]}" --state "$name" \
		--report "$TEST_TMP/one.json" "$log" -- "$TEST_TMP/checker" {} \
		>"$TEST_TMP/one.out" 2>"$TEST_TMP/one.err" || rc=$?
	((rc == want)) || _fail "--state $name exited $rc, its state was '$result' in the whole run"
	got=$(jq -c '[.states[] | {state, result}]' "$TEST_TMP/one.json")
	[ "$got" = "[{\"state\":\"$name\",\"result\":\"$result\"}]" ] ||
		_fail "--state $name: the report holds $got"
	diff "$TEST_TMP/env/$name" "$TEST_TMP/one/$name" >&2 ||
		_fail "--state $name: its checker's environment differs from the whole run's"
	# the checker's output, on stderr
	diff "$TEST_TMP/env/$name" "$TEST_TMP/one.err" >&2 ||
		_fail "--state $name: stderr is not its checker's output"
	rm -rf "$TEST_TMP/one"
	n=$((n + 1))
done < <(jq -r '.states[] | "\(.state) \(.result)"' "$TEST_TMP/all.json")
((n == $(jq .checked "$TEST_TMP/all.json"))) || _fail "$n states tried"
echo "each of $n states alone: its verdict, its environment, its output on stderr"

# the output as it comes: the checker goes on only once its first line
# has been seen on check's stderr
cat >"$TEST_TMP/waits" <<'EOS'
#!/bin/sh
echo started
i=0
while [ ! -e "$GO" ]; do
	i=$((i + 1))
	[ $i -lt 200 ] || { echo "nobody saw 'started'"; exit 3; }
	sleep 0.05
done
echo ended
EOS
chmod +x "$TEST_TMP/waits"
GO=$TEST_TMP/go "$FLUSHLOG" check -q --state 6 "$log" -- "$TEST_TMP/waits" {} \
	>/dev/null 2>"$TEST_TMP/waits.err" &
pid=$!
for _ in $(seq 100); do
	grep -q started "$TEST_TMP/waits.err" && break
	sleep 0.05
done
grep -q started "$TEST_TMP/waits.err" && touch "$TEST_TMP/go"
rc=0
wait "$pid" || rc=$?
((rc == 0)) || _fail "the checker's first line did not reach stderr while it ran (exit $rc): $(cat "$TEST_TMP/waits.err")"
[ "$(cat "$TEST_TMP/waits.err")" = "$(printf 'started\nended')" ] ||
	_fail "stderr holds $(cat "$TEST_TMP/waits.err")"
echo "the checker's output reaches stderr as it comes"

_expect_exit 2 "$FLUSHLOG" check --state bogus "$log" -- true
grep -q "'bogus'" "$TEST_TMP/stderr" || _fail "the refusal does not name 'bogus': $(cat "$TEST_TMP/stderr")"
# an epoch state, without the epoch model
_expect_exit 2 "$FLUSHLOG" check --state 6+9 "$log" -- true
grep -q "'6+9' is none of the" "$TEST_TMP/stderr" || _fail "6+9 unplanned: $(cat "$TEST_TMP/stderr")"
# point 1's state, before --from
_expect_exit 2 "$FLUSHLOG" check --from mark:after-fua --state 4 "$log" -- true
grep -q "'4' is none of the" "$TEST_TMP/stderr" || _fail "4 before --from: $(cat "$TEST_TMP/stderr")"
_expect_exit 2 "$FLUSHLOG" check --state 4 --shard 1/2 "$log" -- true
echo "names that are no planned state are refused, named"
