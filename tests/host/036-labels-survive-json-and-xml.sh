#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Mark labels are bytes: UTF-8 ("café"), a byte that is no UTF-8 (0xE9
# alone), control characters and a terminal escape.  The spec of each
# comes back from 'points --json | jq -r .spec' and names its mark for
# 'replay --to'; the --json of dump, info, points, check and merge parses;
# the SVG of plot and the JUnit XML of check are well-formed, checker
# output with bad bytes included, and cut at 64 KiB between characters;
# dump and points show no raw control character on a terminal's behalf.
. "$FLUSHLOG_TOP/tests/common.sh"
_require_cmd jq
_require_cmd xmllint

esc=$'\e'
labels=(café $'caf\xe9' "${esc}[31mred${esc}[0m" $'bell\x07del\x7f' $'csi\xc2\x9b2J')
{
	echo 'device 2048'
	for i in "${!labels[@]}"; do
		printf 'write %d 8\nflush\nmark %s\n' "$((8 * i))" "${labels[i]}"
	done
} >"$TEST_TMP/labels.fls"
"$MKLOG" -o "$TEST_TMP/log" "$TEST_TMP/labels.fls"
log=$TEST_TMP/log

# every spec, read back by jq as a script would, names its point
"$FLUSHLOG" points --json "$log" >"$TEST_TMP/points.json"
jq -e -s . "$TEST_TMP/points.json" >/dev/null || _fail "points --json does not parse"
[ "$(jq -r 'select(.kind == "mark") | .spec' "$TEST_TMP/points.json" | head -n 1)" = "mark:café" ] ||
	_fail "the UTF-8 label came back as '$(jq -r 'select(.kind == "mark") | .spec' "$TEST_TMP/points.json" | head -n 1)'"
while read -r point spec; do
	"$FLUSHLOG" replay -q -o "$TEST_TMP/by-spec.img" --to "$spec" "$log" ||
		_fail "point $point: replay --to '$spec' (from points --json) failed"
	"$FLUSHLOG" replay -q -o "$TEST_TMP/by-number.img" --to "point:$point" "$log"
	_same_image "$TEST_TMP/by-number.img" "$TEST_TMP/by-spec.img" "replay --to '$spec'"
done < <(jq -r '"\(.point) \(.spec)"' "$TEST_TMP/points.json")
echo "all $(wc -l <"$TEST_TMP/points.json") specs of points --json replay their points"

# the text that a terminal gets holds no control character, only \xNN
for cmd in dump points; do
	"$FLUSHLOG" "$cmd" "$log" >"$TEST_TMP/$cmd.txt"
	if LC_ALL=C grep -n $'[\x01-\x08\x0b-\x1f\x7f]' "$TEST_TMP/$cmd.txt" >&2 ||
	   grep -nF $'\xc2\x9b' "$TEST_TMP/$cmd.txt" >&2; then
		_fail "$cmd prints a raw control character"
	fi
	grep -qF '\x1B[31mred\x1B[0m' "$TEST_TMP/$cmd.txt" || _fail "$cmd does not show ESC as \\x1B"
	grep -qF 'csi\xC2\x9B2J' "$TEST_TMP/$cmd.txt" || _fail "$cmd does not show a C1 control as \\xC2\\x9B"
	grep -qF 'caf\xE9' "$TEST_TMP/$cmd.txt" || _fail "$cmd does not show the byte 0xE9 as \\xE9"
	grep -qF 'café' "$TEST_TMP/$cmd.txt" || _fail "$cmd does not show UTF-8 as it is"
done
# and a spec copied from the text works too
spec=$(grep -oF 'mark:\x1B[31mred\x1B[0m' "$TEST_TMP/points.txt")
"$FLUSHLOG" replay -q -o "$TEST_TMP/by-text.img" --to "$spec" "$log" ||
	_fail "replay --to '$spec' (from the text of points) failed"

# JSON everywhere: the labels of dump, exactly where they are UTF-8
"$FLUSHLOG" dump --json "$log" | jq -e -s . >/dev/null || _fail "dump --json does not parse"
got=$("$FLUSHLOG" dump --json "$log" | jq -r 'select(.op == "mark") | .label' | head -n 3 | tail -n 1)
[ "$got" = "${labels[2]}" ] || _fail "the label with an ESC came back as '$got'"
"$FLUSHLOG" info --json "$log" | jq -e .entries >/dev/null || _fail "info --json does not parse"

# a checker whose output is no UTF-8 in places and longer than the JUnit
# report keeps: its first 64 KiB end in the middle of an 'é'
cat >"$TEST_TMP/checker" <<'EOS'
#!/bin/sh
# fails the states after the second mark, with an awkward output
printf 'bad \351 byte, \033[31mred\033[0m\n'
head -c 65529 /dev/zero | tr '\0' x
i=0; while [ $i -lt 100 ]; do printf '\303\251'; i=$((i + 1)); done
[ "${FLUSHLOG_LAST_MARK:-}" = "café" ] && exit 1
exit 0
EOS
chmod +x "$TEST_TMP/checker"
_expect_exit 1 "$FLUSHLOG" check -q -k -w "$TEST_TMP" --json --junit "$TEST_TMP/junit.xml" \
	"$log" -- "$TEST_TMP/checker" {}
jq -e '.failed >= 1' "$TEST_TMP/stdout" >/dev/null || _fail "check --json: $(head -c 300 "$TEST_TMP/stdout")"
jq -r '.states[].spec' "$TEST_TMP/stdout" | grep -qx 'mark:café' || _fail "check --json lost the UTF-8 spec"
xmllint --noout "$TEST_TMP/junit.xml" || _fail "the JUnit report is not well-formed XML"
grep -qF 'bad \xE9 byte, \x1B[31mred' "$TEST_TMP/junit.xml" || _fail "the checker's bad bytes are not escaped"
grep -qF '\xC3' "$TEST_TMP/junit.xml" && _fail "the checker's output was cut inside a character"
grep -q 'more bytes not shown' "$TEST_TMP/junit.xml" || _fail "the JUnit report does not say the output was cut"
echo "check: --json parses, junit.xml well-formed, output cut between characters"

# the reports of shards, merged, are JSON a line at a time and whole
for k in 0 1; do
	"$FLUSHLOG" check -q -k --shard "$k/2" -w "$TEST_TMP" --report "$TEST_TMP/s$k.json" \
		"$log" -- "$TEST_TMP/checker" {} >/dev/null || true
done
"$FLUSHLOG" merge --json "$TEST_TMP/s0.json" "$TEST_TMP/s1.json" >"$TEST_TMP/merged.json" || true
jq -r '.states[].spec' "$TEST_TMP/merged.json" | grep -qxF 'mark:caf\xE9' ||
	_fail "merge --json lost the spec of the 0xE9 label"

"$FLUSHLOG" plot --title "${esc}]0;title"$'\x07 caf\xe9' -o "$TEST_TMP/plot.svg" "$log"
xmllint --noout "$TEST_TMP/plot.svg" || _fail "the SVG is not well-formed XML"
grep -qF '>caf\xE9</text>' "$TEST_TMP/plot.svg" || _fail "the SVG does not show 0xE9 as \\xE9"
echo "plot: well-formed SVG"
