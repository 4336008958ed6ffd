#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# One word, one meaning, in every output: "entry" is the entry number
# (durability order) in dump, points and check, text and JSON, and
# "logged_seq" the header's seq (the log as written), which differs in a
# completion-order log; dump's JSON keeps "seq" as the entry number it
# always was.  "crash points" is one count in info (text and JSON),
# points and check, and info names the entries that end one apart
# (crash_point_entries, two fewer).  flushlog -V names the formats it
# reads by the versions the format header gives.  flushlog(1)'s WORDS
# and flushlog-format(5)'s Words define each of these words.
. "$FLUSHLOG_TOP/tests/common.sh"
_require_cmd jq

# a version 2 log, in completion order: B and C are logged before F1 but
# come after D and m1 in durability order (test 029 has the whole trace)
cat >"$TEST_TMP/v2.fls" <<'EOS'
device 2048
version 2
write 0 8 seed 1 ticks 1 3
write 8 8 seed 2 ticks 2 6
write 16 8 seed 3 ticks 4 7
flush ticks 5 8
write 24 8 fua seed 4 ticks 9 10
mark m1
discard 0 8 ticks 12 13
flush ticks 14 16
write 32 8 seed 5 ticks 15 17
EOS
mkdir -p "$TEST_TMP/g"
"$MKLOG" -o "$TEST_TMP/g/log" "$TEST_TMP/v2.fls"
log=$TEST_TMP/g/log

# 1. entry and logged_seq
"$FLUSHLOG" dump --json "$log" >"$TEST_TMP/dump.json"
jq -e -s 'to_entries | all(.key == .value.entry and .value.seq == .value.entry)' \
	"$TEST_TMP/dump.json" >/dev/null ||
	_fail "dump --json: entry is not the line's entry number, or seq differs from it: $(cat "$TEST_TMP/dump.json")"
jq -e -s 'any(.entry != .logged_seq)' "$TEST_TMP/dump.json" >/dev/null ||
	_fail "a completion-order log whose every logged_seq is its entry number"
# the text: the same numbers under the same names
"$FLUSHLOG" dump "$log" >"$TEST_TMP/dump.txt"
read -r -a head <"$TEST_TMP/dump.txt"
[ "${head[0]} ${head[1]}" = "entry logged_seq" ] ||
	_fail "dump's columns are '${head[*]:0:2}', expected 'entry logged_seq'"
diff <(tail -n +2 "$TEST_TMP/dump.txt" | awk '{ print $1, $2 }') \
	<(jq -r '"\(.entry) \(.logged_seq)"' "$TEST_TMP/dump.json") ||
	_fail "dump's text and JSON differ on entry and logged_seq"
# points and check name a point's entry by the same number: the one dump
# marks as ending a crash point (but for the start's and the end's)
while read -r entry; do
	jq -e -s ".[$entry].crash_point" "$TEST_TMP/dump.json" >/dev/null ||
		_fail "points' entry $entry ends no crash point in dump"
done < <("$FLUSHLOG" points --json "$log" | jq 'select(.kind != "start" and .kind != "end") | .entry')
diff <("$FLUSHLOG" points --json "$log" | jq .entry) \
	<("$FLUSHLOG" check -q --json "$log" -- true | jq '.states[].entry') ||
	_fail "points and check give the points' entries apart"
echo "entry: one number in dump, points and check; logged_seq: the header's seq"

# 2. one count of crash points
points=$("$FLUSHLOG" points --json "$log" | wc -l)
marked=$(jq -s '[.[] | select(.crash_point)] | length' "$TEST_TMP/dump.json")
"$FLUSHLOG" info --json "$log" >"$TEST_TMP/info.json"
[ "$(jq .crash_points "$TEST_TMP/info.json")" = "$points" ] ||
	_fail "info --json: crash_points $(jq .crash_points "$TEST_TMP/info.json"), points lists $points"
[ "$(jq .crash_point_entries "$TEST_TMP/info.json")" = "$marked" ] ||
	_fail "info --json: crash_point_entries $(jq .crash_point_entries "$TEST_TMP/info.json"), dump marks $marked"
[ $((marked + 2)) = "$points" ] || _fail "$marked crash-point entries, $points crash points"
"$FLUSHLOG" info "$log" >"$TEST_TMP/info.txt"
grep -q "^crash points: *$points (the start, $marked at entries, the end)$" "$TEST_TMP/info.txt" ||
	_fail "info: $(grep crash "$TEST_TMP/info.txt")"
"$FLUSHLOG" check "$log" -- true >"$TEST_TMP/check.txt"
grep -q "^$points states at $points crash points" "$TEST_TMP/check.txt" ||
	_fail "check: $(head -n 1 "$TEST_TMP/check.txt")"
echo "crash points: $points in info, points and check; $marked crash-point entries"

# 3. -V: the versions the format header gives, and dm-log-writes'
header=$FLUSHLOG_TOP/drivers/uapi/linux/dm-flushlog.h
oldest=$(awk '$2 == "FLUSHLOG_VERSION_DURABILITY_ORDER" { print $3 }' "$header")
newest=$(awk '$2 == "FLUSHLOG_VERSION" { print $3 }' "$header")
version=$("$FLUSHLOG" -V)
grep -q "dm-flushlog logs of format versions $oldest to $newest, dm-log-writes logs of version 1)$" <<<"$version" ||
	_fail "flushlog -V: '$version', expected dm-flushlog versions $oldest to $newest and dm-log-writes 1"
echo "-V: dm-flushlog $oldest to $newest, dm-log-writes 1"

# 4. the words are defined where a reader looks: flushlog(1)'s WORDS and
# docs/log-format.md's Words (flushlog-format(5))
words=$(sed -n '/^\.SH WORDS/,/^\.SH /p' "$FLUSHLOG_TOP/userspace/man/flushlog.1")
doc=$(sed -n '/^## Words/,/^## /p' "$FLUSHLOG_TOP/docs/log-format.md")
for w in 'entry number' 'logged seq' position 'crash point' 'crash-point entry' epoch tick; do
	grep -qi "$w" <<<"${words//\\-/-}" || _fail "flushlog(1) WORDS does not define '$w'"
	grep -qi "$w" <<<"$doc" || _fail "docs/log-format.md Words does not define '$w'"
done
for key in entry logged_seq applied crash_points crash_point_entries; do
	grep -q "$key" <<<"$words" || _fail "flushlog(1) WORDS does not name the output's '$key'"
done
echo "flushlog(1) and flushlog-format(5) define the words the outputs use"
