#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# fl-workload --ace: the space is numbered the same every time, its shards
# partition it, no sequence is listed twice and none ends without a
# persistence point.  Every seq-1 sequence runs here without a failing
# step, and its oracle holds on a copy of the folder taken at each mark;
# but the copy taken at the setup's mark, standing for a crash that lost
# the sequence, breaks the final promise of every sequence whose steps
# change what it promised: all but the keep-size fallocates, which change
# nothing a reader sees; the fdatasyncs of a name the step made, as
# fdatasync promises a file's contents but not its name; and the renames
# over a name whose only promise is its folder's names (fsync of the
# folder), which the oracle compares without the inodes behind them.  The
# crashtest options refuse what --ace excludes, and a sequence whose step
# fails exits 3.
. "$FLUSHLOG_TOP/tests/common.sh"

wl=$FLUSHLOG_BUILD/fl-workload
"$wl" --ace seq-1 --list >"$TEST_TMP/seq1"
"$wl" --ace seq-1 --list >"$TEST_TMP/seq1.again"
cmp -s "$TEST_TMP/seq1" "$TEST_TMP/seq1.again" || _fail "two listings of seq-1 differ"
n=$(wc -l <"$TEST_TMP/seq1")
((n > 50)) || _fail "seq-1 has only $n sequences"
cut -f1 "$TEST_TMP/seq1" | cmp -s - <(seq 0 $((n - 1))) ||
	_fail "seq-1 is not numbered 0 to $((n - 1))"
dup=$(cut -f2 "$TEST_TMP/seq1" | sort | uniq -d | head -n 3)
[ -z "$dup" ] || _fail "seq-1 lists the same sequence twice: $dup"
for k in 0 1 2; do
	"$wl" --ace seq-1 --list --shard "$k/3"
done | sort -n | cmp -s - <(sort -n "$TEST_TMP/seq1") ||
	_fail "the shards 0/3, 1/3, 2/3 are not seq-1"
"$wl" --ace seq-2 --list >"$TEST_TMP/seq2"
n2=$(wc -l <"$TEST_TMP/seq2")
((n2 > n * 10)) || _fail "seq-2 has only $n2 sequences (seq-1 $n)"
bad=$(awk -F'\t' '{ k = split($2, s, "; "); if (s[k] !~ /^(fsync|fdatasync|sync)/) print }' \
	"$TEST_TMP/seq1" "$TEST_TMP/seq2" | head -n 3)
[ -z "$bad" ] || _fail "sequences that do not end with a persistence point: $bad"
dup=$(cut -f2 "$TEST_TMP/seq2" | sort | uniq -d | head -n 3)
[ -z "$dup" ] || _fail "seq-2 lists the same sequence twice: $dup"
echo "seq-1: $n sequences, seq-2: $n2"

# the mark command keeps a copy of the folder as it is at each mark
cat >"$TEST_TMP/snap" <<'EOF'
#!/bin/sh
cp -a "$ACE_DIR" "$ACE_SNAPS/$1"
EOF
chmod +x "$TEST_TMP/snap"
caught=0 missed=()
while IFS=$'\t' read -r i steps; do
	export ACE_DIR=$TEST_TMP/w$i ACE_SNAPS=$TEST_TMP/s$i
	mkdir "$ACE_DIR" "$ACE_SNAPS"
	"$wl" --ace seq-1 --index "$i" --mark "$TEST_TMP/snap" --oracle "$TEST_TMP/o$i" \
		"$ACE_DIR" >"$TEST_TMP/out" 2>&1 || _fail "#$i '$steps' exited non-zero: $(cat "$TEST_TMP/out")"
	! grep -Ev '^(seq-1 #|[0-9]+ .* ok$)' "$TEST_TMP/out" ||
		_fail "#$i '$steps': a step did not run"
	mapfile -t marks < <(awk '$1 == "mark" { print $4 }' "$TEST_TMP/o$i")
	if ((${#marks[@]} != 2)) || [ "${marks[0]}" != setup-1 ]; then
		_fail "#$i '$steps' marked ${marks[*]}, not setup-1 and its persistence point"
	fi
	final=${marks[1]}
	"$wl" --verify "$TEST_TMP/o$i" --last-mark setup-1 --until-mark "$final" \
		"$ACE_SNAPS/setup-1" >"$TEST_TMP/v" || _fail "#$i: the setup state breaks a promise: $(cat "$TEST_TMP/v")"
	"$wl" --verify "$TEST_TMP/o$i" --last-mark "$final" "$ACE_SNAPS/$final" >"$TEST_TMP/v" ||
		_fail "#$i '$steps': the state at its last mark breaks a promise: $(cat "$TEST_TMP/v")"
	grep -q 'kept' "$TEST_TMP/v" || _fail "#$i: no promise checked at $final"
	if "$wl" --verify "$TEST_TMP/o$i" --last-mark "$final" "$ACE_SNAPS/setup-1" >"$TEST_TMP/v"; then
		missed+=("$steps")
	else
		grep -q "before mark $final" "$TEST_TMP/v" ||
			_fail "#$i: the lost state's failure does not name its mark: $(cat "$TEST_TMP/v")"
		caught=$((caught + 1))
	fi
done <"$TEST_TMP/seq1"
unseen() {
	[[ $1 == "fallocate-keep-size "* || $1 =~ ^(creat|link|rename)\ .*\;\ fdatasync ||
	   $1 == "rename foo A/foo; fsync A" || $1 == "rename A/foo foo; fsync ." ]]
}
for steps in "${missed[@]}"; do
	unseen "$steps" || _fail "a crash that lost '$steps' is not caught by the oracle"
done
expected=0
while IFS=$'\t' read -r i steps; do
	! unseen "$steps" || expected=$((expected + 1))
done <"$TEST_TMP/seq1"
((${#missed[@]} == expected)) ||
	_fail "${#missed[@]} sequences not caught, expected $expected: $(printf '%s; ' "${missed[@]}")"
echo "a lost sequence is caught in $caught of $n; not in $expected: ${missed[*]}"

# crashtest refuses what --ace does not go with, before any guest
for args in "--ace seq-4" "--ace seq-1 --shard 3/3" "--ace seq-1 --ops 5" \
	    "--ace seq-1 --check true" "--shard 0/2" "--ace seq-1 --fs raw" \
	    "--ace seq-1 --out /dev/shm/flushlog-047-$$"; do
	# shellcheck disable=SC2086 # the options are words
	_expect_exit 2 "$FLUSHLOG_TOP/scripts/crashtest" $args
done
_expect_exit 2 "$wl" --ace seq-1 --index 0 --seed 3 "$TEST_TMP"
_expect_exit 2 "$wl" --ace seq-1 --index 0 --verbose "$TEST_TMP"
# a step that fails runs another sequence than the one asked for: exit 4,
# the workload could not be run
i=$(awk -F'\t' '$2 == "creat bar; fsync bar" { print $1 }' "$TEST_TMP/seq1")
mkdir "$TEST_TMP/taken" && touch "$TEST_TMP/taken/bar"
_expect_exit 4 "$wl" --ace seq-1 --index "$i" "$TEST_TMP/taken"
grep -q "step 0 'creat bar' failed: File exists" "$TEST_TMP/stderr" ||
	_fail "a failing step is not named: $(cat "$TEST_TMP/stderr")"
_expect_exit 2 "$wl" --ace seq-1 --index "$n" "$TEST_TMP/w0"
grep -q "seq-1 has $n sequences" "$TEST_TMP/stderr" || _fail "an index past the space is not named: $(cat "$TEST_TMP/stderr")"
echo "bad --ace and --shard arguments are refused"
