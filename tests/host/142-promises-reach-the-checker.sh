#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Promises (marks labelled promise:KEY=VALUE) reach each state's checker:
# FLUSHLOG_PROMISE_KEY is the last value promised before the state's
# point, unset before the first, for every key however the keys
# interleave; FLUSHLOG_PROMISES lists the keys due in the order they were
# first promised.  The expected table is worked out here from the script,
# not from flushlog.  A promise mark of another form refuses the log (exit
# 3, its entry named), so that no verifier silently loses a promise.
. "$FLUSHLOG_TOP/tests/common.sh"

cat >"$TEST_TMP/script" <<'S'
device 64
write 0 8 seed 1
flush
mark promise:txn=1
write 8 8 seed 2
flush
mark promise:ref=abc
mark promise:txn=2
mark plain-label
write 16 8 seed 3 fua
mark promise:txn=3
mark promise:ref=d=e
S
"$MKLOG" -o "$TEST_TMP/log" "$TEST_TMP/script"

# what each state's checker saw, one line per state
cat >"$TEST_TMP/show" <<'S'
#!/bin/sh
echo "$FLUSHLOG_POINT ${FLUSHLOG_PROMISES:--} txn=${FLUSHLOG_PROMISE_txn-unset} ref=${FLUSHLOG_PROMISE_ref-unset} foo=${FLUSHLOG_PROMISE_foo-unset}" >>"$OUT"
S
chmod +x "$TEST_TMP/show"
# a promise in the caller's environment is not one of the log's, whether
# the log has its key or not; and every state of every model, a
# reordered or torn one with the promises of the point it is checked at
OUT=$TEST_TMP/seen FLUSHLOG_PROMISE_txn=99 FLUSHLOG_PROMISE_foo=7 FLUSHLOG_PROMISES=foo \
	"$FLUSHLOG" check --states prefix,epoch,torn "$TEST_TMP/log" -- "$TEST_TMP/show" >/dev/null ||
	_fail "check with the promise checker failed"
(($(wc -l <"$TEST_TMP/seen") > $("$FLUSHLOG" points "$TEST_TMP/log" | tail -n +2 | wc -l))) ||
	_fail "no epoch or torn state was checked"
sort -n -u "$TEST_TMP/seen" >"$TEST_TMP/seen.sorted"

# the expected: walk the script's entries; a point after entry i owes the
# promises of the marks among entries 0..i
"$FLUSHLOG" points --json "$TEST_TMP/log" | jq -r '"\(.point) \(.applied)"' >"$TEST_TMP/points"
labels=()
while read -r label; do labels+=("$label"); done < <(grep -v '^#' "$TEST_TMP/script" |
	awk '$1 != "device" { print ($1 == "mark" ? $2 : "-") }')
while read -r point applied; do
	keys='' txn=unset ref=unset
	for ((i = 0; i < applied; i++)); do
		case ${labels[i]} in
		promise:txn=*) txn=${labels[i]#promise:txn=}; [[ " $keys " == *" txn "* ]] || keys+=${keys:+ }txn ;;
		promise:ref=*) ref=${labels[i]#promise:ref=}; [[ " $keys " == *" ref "* ]] || keys+=${keys:+ }ref ;;
		esac
	done
	echo "$point ${keys:--} txn=$txn ref=$ref foo=unset"
done <"$TEST_TMP/points" | sort -n >"$TEST_TMP/expected.all"
# the points a state was checked at (a reordered one at the latest it is
# legal at, as the oracle wants)
join -j1 <(cut -d' ' -f1 "$TEST_TMP/seen.sorted" | sort -u) <(sort -k1,1 "$TEST_TMP/expected.all") |
	sort -n >"$TEST_TMP/expected"
diff -u "$TEST_TMP/expected" "$TEST_TMP/seen.sorted" || _fail "the checkers' promises differ from the script's (- expected, + seen)"
grep -q ' txn=3 ref=d=e foo=unset$' "$TEST_TMP/seen.sorted" || _fail "no state saw the last promises"
echo "ok: $(wc -l <"$TEST_TMP/seen") states at $(wc -l <"$TEST_TMP/seen.sorted") points, each with the promises made before its point"

# a reproducer carries them too
cat >"$TEST_TMP/fail-at-3" <<'S'
#!/bin/sh
[ "${FLUSHLOG_PROMISE_txn:-0}" -lt 3 ]
S
chmod +x "$TEST_TMP/fail-at-3"
_expect_exit 1 "$FLUSHLOG" check -k --save-failures "$TEST_TMP/failures" "$TEST_TMP/log" -- "$TEST_TMP/fail-at-3"
grep -rqx "export FLUSHLOG_PROMISE_txn='\?3'\?" "$TEST_TMP/failures" ||
	_fail "no reproducer sets FLUSHLOG_PROMISE_txn=3: $(grep -rh PROMISE "$TEST_TMP/failures" | sort -u)"

# malformed promises refuse the log, naming the entry
for bad in 'promise:txn' 'promise:=1' 'promise:1x=2' 'promise:t-x=2' 'promise:txn='; do
	printf 'device 64\nwrite 0 8\nflush\nmark %s\n' "$bad" >"$TEST_TMP/bad.script"
	"$MKLOG" -o "$TEST_TMP/bad.log" "$TEST_TMP/bad.script"
	_expect_exit 3 "$FLUSHLOG" check "$TEST_TMP/bad.log" -- true
	grep -q "entry 2 at offset [0-9]*: mark '$bad' is no promise" "$TEST_TMP/stderr" ||
		_fail "'$bad': $(cat "$TEST_TMP/stderr")"
done
echo "ok: malformed promises refuse the log with their entry named"
