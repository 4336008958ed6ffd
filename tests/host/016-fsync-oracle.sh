#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# fl-workload's fsync oracle: the same seed writes the same promises; in
# the folder the workload leaves, every promise made before its last mark
# holds; a promised file corrupted or removed is named with its mark; a
# promise binds at an early mark only until the file is touched by an
# operation that may be in the state (--until-mark), so the final folder,
# whose files changed later, breaks early promises only when the window
# says those changes cannot have happened yet.
. "$FLUSHLOG_TOP/tests/common.sh"

wl=$FLUSHLOG_BUILD/fl-workload
for i in 1 2; do
	mkdir "$TEST_TMP/run$i"
	"$wl" --seed 7 --ops 400 --oracle "$TEST_TMP/oracle$i" "$TEST_TMP/run$i" >/dev/null
done
cmp "$TEST_TMP/oracle1" "$TEST_TMP/oracle2" || _fail "the same seed wrote different oracles"
oracle=$TEST_TMP/oracle1 dir=$TEST_TMP/run1
mapfile -t marks < <(awk '$1 == "mark" { print $4 }' "$oracle")
((${#marks[@]} > 10)) || _fail "only ${#marks[@]} marks in 400 operations"
last=${marks[-1]}
"$wl" --verify "$oracle" --last-mark "$last" "$dir" >"$TEST_TMP/out" ||
	_fail "the workload's own folder breaks a promise: $(cat "$TEST_TMP/out")"
kept=$(sed -n 's/.* \([0-9]*\) promises kept.*/\1/p' "$TEST_TMP/out")
((kept > 0)) || _fail "no promise checked at $last: $(cat "$TEST_TMP/out")"
echo "at $last: $kept promises kept"

# a promised file that lost its contents, then one that is gone
victim=$(sed -n 's/^fsync oracle: kept \([^ ]*\) .*/\1/p' "$TEST_TMP/out" | head -n 1)
cp -a "$dir" "$TEST_TMP/bad"
printf 'X' | dd of="$TEST_TMP/bad/$victim" bs=1 seek=0 conv=notrunc status=none
_expect_exit 1 "$wl" --verify "$oracle" --last-mark "$last" "$TEST_TMP/bad"
grep -q "fsync oracle: $victim holds .* before mark $last" "$TEST_TMP/stdout" ||
	_fail "the corrupted $victim is not named with its mark: $(cat "$TEST_TMP/stdout")"
rm "$TEST_TMP/bad/$victim"
_expect_exit 1 "$wl" --verify "$oracle" --last-mark "$last" "$TEST_TMP/bad"
grep -q "fsync oracle: $victim is missing" "$TEST_TMP/stdout" ||
	_fail "the removed $victim is not named: $(cat "$TEST_TMP/stdout")"
echo "a corrupted and a removed promised file are named"

# early marks: with no until mark every later touch may be in the state,
# so the final folder keeps what is left; with the next mark as the until
# mark, files changed after it must still hold their promise and do not
rc_until=0 checked=0
for ((i = 1; i < ${#marks[@]} - 1; i++)); do
	"$wl" --verify "$oracle" --last-mark "${marks[i]}" "$dir" >"$TEST_TMP/out" ||
		_fail "at ${marks[i]} with no until mark: $(cat "$TEST_TMP/out")"
	"$wl" --verify "$oracle" --last-mark "${marks[i]}" --until-mark "${marks[i + 1]}" "$dir" \
		>"$TEST_TMP/out" || rc_until=$((rc_until + 1))
	checked=$((checked + 1))
done
((rc_until > 0)) || _fail "no early promise was broken by later changes: the window is not applied"
echo "$checked early marks: all kept without a window, $rc_until broken by changes after the next mark"

_expect_exit 2 "$wl" --verify "$TEST_TMP/nonexistent" --last-mark x "$dir"
echo "durable 1 bogus" >"$TEST_TMP/bad-oracle"
_expect_exit 2 "$wl" --verify "$TEST_TMP/bad-oracle" --last-mark x "$dir"
grep -q "bad-oracle:1: not an oracle line" "$TEST_TMP/stderr" || _fail "a bad oracle line is not named"

# --procs: four workloads at once, each in its own folder.  Promises of
# every process bind at any later mark, whichever process logged it: in
# the folders they leave all hold at the last mark; one corrupted is
# named.  Its marks are pK-WHAT-N.
mkdir "$TEST_TMP/procs"
"$wl" --seed 3 --ops 150 --procs 4 --oracle "$TEST_TMP/oracle-p" "$TEST_TMP/procs" \
	>"$TEST_TMP/procs.out" || _fail "fl-workload --procs 4 failed: $(tail -n 3 "$TEST_TMP/procs.out")"
for k in 0 1 2 3; do
	[ "$(grep -c "^p$k " "$TEST_TMP/procs.out")" = 150 ] ||
		_fail "process $k did not report 150 operations"
done
grep -Evq '^mark [0-9]+ [0-9]+ p[0-3]-(fsync|fdatasync|sync)-[0-9]+$|^(touch|durable) ' "$TEST_TMP/oracle-p" &&
	_fail "oracle lines of several processes mixed: $(grep -Ev '^(mark|touch|durable) ' "$TEST_TMP/oracle-p" | head -n 3)"
last=$(awk '$1 == "mark" { print $2, $4 }' "$TEST_TMP/oracle-p" | sort -n | tail -n 1 | cut -d' ' -f2)
"$wl" --verify "$TEST_TMP/oracle-p" --last-mark "$last" "$TEST_TMP/procs" >"$TEST_TMP/out" ||
	_fail "--procs: the workloads' own folders break a promise: $(cat "$TEST_TMP/out")"
owners=$(sed -n 's/^fsync oracle: kept p\([0-9]\)\/.*/\1/p' "$TEST_TMP/out" | sort -u | tr -d '\n')
# (a promise later writes touched no longer binds: not every process may have one)
[ -n "${owners//${last:1:1}/}" ] ||
	_fail "at $last, only promises of processes '$owners' were checked, none of another process"
victim=$(sed -n 's/^fsync oracle: kept \([^ ]*\) .*/\1/p' "$TEST_TMP/out" | grep -v "^${last%%-*}/" | head -n 1)
printf 'X' | dd of="$TEST_TMP/procs/$victim" bs=1 seek=0 conv=notrunc status=none
_expect_exit 1 "$wl" --verify "$TEST_TMP/oracle-p" --last-mark "$last" "$TEST_TMP/procs"
grep -q "fsync oracle: $victim holds .* before mark $last" "$TEST_TMP/stdout" ||
	_fail "--procs: $victim, corrupted, is not named at $last: $(cat "$TEST_TMP/stdout")"
echo "--procs 4: promises of processes $owners bind at $last; a corrupted one is named"
_expect_exit 2 "$wl" --procs 0 "$TEST_TMP/procs"
