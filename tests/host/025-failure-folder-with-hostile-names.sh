#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# flushlog check --save-failures runs no shell on what it is given: with
# a save folder, a checker path and a mark label holding spaces, quotes
# and $(touch pwned), the failure folder is complete, its reproduce.sh
# (every word quoted) runs and rebuilds byte-identical images, and
# nothing named pwned appears.
. "$FLUSHLOG_TOP/tests/common.sh"

nasty="sp ace 'sq' \"dq\" \$(touch pwned) \`touch pwned\`"
cdir="$TEST_TMP/checker $nasty"
mkdir -p "$cdir"
checker="$cdir/toy $nasty"
# a toy journal: a commit block (sector 100) is only valid with its data (sector 0)
cat >"$checker" <<'EOS'
#!/bin/sh
commit=$(dd if="$1" bs=512 skip=100 count=1 status=none | tr -d '\0' | wc -c)
data=$(dd if="$1" bs=512 skip=0 count=1 status=none | tr -d '\0' | wc -c)
[ "$commit" -eq 0 ] || [ "$data" -gt 0 ]
EOS
chmod +x "$checker"
label="q'\$(touch\${IFS}pwned)\"\`touch\${IFS}pwned\`"
printf '%s\n' 'device 2048' 'write 200 8' 'flush' 'write 100 8 fua' "mark $label" \
	'write 0 8' 'flush' >"$TEST_TMP/bad.fls"
"$MKLOG" -o "$TEST_TMP/bad.log" "$TEST_TMP/bad.fls"
saves="$TEST_TMP/fails $nasty"
mkdir -p "$TEST_TMP/cwd"
cd "$TEST_TMP/cwd"
_expect_exit 1 "$FLUSHLOG" check -q -k -w "$TEST_TMP" --save-failures "$saves" \
	"$TEST_TMP/bad.log" -- "$checker" {} "arg $nasty"
if grep -q "could not" "$TEST_TMP/stderr"; then
	_fail "saving a failure: $(cat "$TEST_TMP/stderr")"
fi
nr=0
for dir in "$saves"/*/; do
	nr=$((nr + 1))
	for f in reproduce.sh checker.out first-bad.img last-good.img entries.txt; do
		[ -s "$dir/$f" ] || [ "$f" = checker.out ] || _fail "no $f in '$dir'"
		[ -e "$dir/$f" ] || _fail "no $f in '$dir'"
	done
	sh -n "$dir/reproduce.sh" || _fail "'$dir/reproduce.sh' is not valid sh"
	mkdir -p "$TEST_TMP/orig"
	mv "$dir"/{first-bad.img,last-good.img,entries.txt} "$TEST_TMP/orig/"
	# the checker fails the state again: the reproducer's exit is 1
	rc=0
	"$dir/reproduce.sh" >"$TEST_TMP/repro.out" 2>&1 || rc=$?
	((rc == 1)) || _fail "reproduce.sh exited $rc: $(cat "$TEST_TMP/repro.out")"
	for f in first-bad.img last-good.img entries.txt; do
		_same_image "$TEST_TMP/orig/$f" "$dir/$f" "rebuilt $f"
	done
	rm -rf "$TEST_TMP/orig"
	# the checker's environment, as the reproducer sets it, has the label
	marks=$(grep '^export FLUSHLOG_' "$dir/reproduce.sh")
	marks=$(sh -c "$marks"'
		printf "%s\n" "${FLUSHLOG_MARK:-}" "${FLUSHLOG_LAST_MARK:-}" "${FLUSHLOG_AFTER_MARK:-}"')
	grep -qxF -- "$label" <<<"$marks" || _fail "the mark's label is not in the reproducer: $marks"
done
((nr > 0)) || _fail "no failure folder in '$saves'"
found=$(find "$TEST_TMP" -name pwned)
[ -z "$found" ] || _fail "a shell ran a name: $found"
echo "$nr failure folders, reproducers rebuild identical images, nothing pwned"
