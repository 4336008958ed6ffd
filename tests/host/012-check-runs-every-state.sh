#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# flushlog check: every state it hands a checker equals the model's image
# at that point, even when earlier checkers scribbled on theirs; a broken
# writer (commit made durable before its data) is caught at the right
# point with a saved, working reproducer; -j 2 reports what -j 1 does;
# shards cover every point exactly once; JUnit is well-formed.
. "$FLUSHLOG_TOP/tests/common.sh"
_require_cmd jq

dir=$TEST_TMP/basic
_mklog "$DATA/basic.fls" flushlog "$dir"
# the checker compares with the model, then writes over its own state
cat >"$TEST_TMP/model-check" <<EOS
#!/bin/sh
cmp "\$1" "$dir/point-\$FLUSHLOG_POINT.img" || exit 1
[ -n "\$FLUSHLOG_SPEC" ] && [ -n "\$FLUSHLOG_ENTRY" ] || exit 2
dd if=/dev/urandom of="\$1" bs=4k count=64 conv=notrunc status=none
EOS
chmod +x "$TEST_TMP/model-check"
"$FLUSHLOG" check -q -w "$TEST_TMP" --report "$TEST_TMP/j1.json" "$dir/log" -- "$TEST_TMP/model-check" {}
n=$(wc -l <"$dir/points.txt")
jq -e ".checked == $n and .failed == 0" "$TEST_TMP/j1.json" >/dev/null ||
	_fail "not every state matched the model: $(cat "$TEST_TMP/j1.json")"
"$FLUSHLOG" check -q -j 2 -w "$TEST_TMP" --report "$TEST_TMP/j2.json" "$dir/log" -- "$TEST_TMP/model-check" {}
diff <(jq -c '.states[] | del(.seconds)' "$TEST_TMP/j1.json") \
	<(jq -c '.states[] | del(.seconds)' "$TEST_TMP/j2.json") || _fail "-j 2 differs from -j 1"
for k in 0 1 2; do
	"$FLUSHLOG" check -q --shard "$k/3" -w "$TEST_TMP" --report "$TEST_TMP/s$k.json" "$dir/log" -- true
done
diff <(jq '.states[].point' "$TEST_TMP"/s[012].json | sort -n) <(jq '.states[].point' "$TEST_TMP/j1.json") ||
	_fail "the shards do not cover every point exactly once"
"$FLUSHLOG" check -q --points mark -w "$TEST_TMP" --report "$TEST_TMP/m.json" "$dir/log" -- true
jq -e '[.states[].kind] | unique == ["mark"]' "$TEST_TMP/m.json" >/dev/null || _fail "--points mark"

# a toy journal: a commit block (sector 100) is only valid with its data (sector 0)
cat >"$TEST_TMP/toy-check" <<'EOS'
#!/bin/sh
commit=$(dd if="$1" bs=512 skip=100 count=1 status=none | tr -d '\0' | wc -c)
data=$(dd if="$1" bs=512 skip=0 count=1 status=none | tr -d '\0' | wc -c)
[ "$commit" -eq 0 ] || [ "$data" -gt 0 ]
EOS
chmod +x "$TEST_TMP/toy-check"
printf '%s\n' 'device 2048' 'write 0 8' 'flush' 'write 100 8 fua' 'mark m1' >"$TEST_TMP/good.fls"
printf '%s\n' 'device 2048' 'write 200 8' 'flush' 'write 100 8 fua' 'write 0 8' 'flush' 'mark m1' >"$TEST_TMP/bad.fls"
"$MKLOG" -o "$TEST_TMP/good.log" "$TEST_TMP/good.fls"
"$MKLOG" -o "$TEST_TMP/bad.log" "$TEST_TMP/bad.fls"
"$FLUSHLOG" check -q -w "$TEST_TMP" "$TEST_TMP/good.log" -- "$TEST_TMP/toy-check" {} ||
	_fail "the correct journal failed"
_expect_exit 1 "$FLUSHLOG" check -q -k -w "$TEST_TMP" --save-failures "$TEST_TMP/fails" \
	--junit "$TEST_TMP/check.xml" "$TEST_TMP/bad.log" -- "$TEST_TMP/toy-check" {}
grep -q "^ *2 fua .*FAIL" "$TEST_TMP/stdout" || _fail "expected point 2 (the FUA commit) to fail: $(cat "$TEST_TMP/stdout")"
grep -q "1 failed" "$TEST_TMP/stdout" || _fail "expected exactly one failure: $(cat "$TEST_TMP/stdout")"
saved=$TEST_TMP/fails/point-2
for f in reproduce.sh checker.out first-bad.img last-good.img entries.txt; do
	[ -e "$saved/$f" ] || _fail "no $f saved"
done
grep -q " 100 " "$saved/entries.txt" || _fail "entries.txt does not show the commit write"
"$FLUSHLOG" replay -q -o "$TEST_TMP/p1.img" --to point:1 "$TEST_TMP/bad.log"
_same_image "$TEST_TMP/p1.img" "$saved/last-good.img" "last good state"
if "$saved/reproduce.sh" >/dev/null 2>&1; then
	_fail "the reproducer does not reproduce the failure"
fi
_require_cmd xmllint
xmllint --noout "$TEST_TMP/check.xml" || _fail "invalid JUnit XML"
# the start (the base), 4 points after entries, the end
grep -c "<testcase" "$TEST_TMP/check.xml" | grep -qx 6 || _fail "expected 6 test cases"

# every {} of an argument is the image, as --help says
# shellcheck disable=SC2016 # expanded by the checker's shell
_expect_exit 0 "$FLUSHLOG" check -q --points end -w "$TEST_TMP" "$TEST_TMP/bad.log" -- \
	sh -c '[ "${1%%:*}" = "${1#*:}" ] && [ -f "${1%%:*}" ]' sh '{}:{}'
_expect_exit 2 "$FLUSHLOG" check "$TEST_TMP/bad.log"
_expect_exit 2 "$FLUSHLOG" check --shard 3/3 "$TEST_TMP/bad.log" -- true
_expect_exit 2 "$FLUSHLOG" check --points sometimes "$TEST_TMP/bad.log" -- true
