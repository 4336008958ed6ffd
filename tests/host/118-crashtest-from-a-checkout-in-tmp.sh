#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# crashtest from a checkout under /tmp, with its build, its cache's job
# folders, its workload and its checker there too: the guest sees every
# host path at the same path (its scratch space is not /tmp), so the
# scripts are found, and the checker, named by its /tmp path, runs in
# every state (it passes only a state it has read).
. "$FLUSHLOG_TOP/tests/common.sh"
# kernels: 6.1
# asan: no
_require_guest
_require_cmd git

tmp=$(mktemp -d /tmp/flushlog-118.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
src=$tmp/flushlog

# the working tree as it is (uncommitted changes too), and the test's
# build, so that make in the copy has nothing to do
mkdir -p "$src/build" "$tmp/cache/jobs" "$tmp/x"
(cd "$FLUSHLOG_TOP" && git ls-files -co --exclude-standard -z |
	while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
	tar --null -T - -cf -) | tar -C "$src" -xf -
cp -a "$FLUSHLOG_BUILD/." "$src/build/"
rm -rf "$src/build/test-results"
# the cache under /tmp as well; the kernel and the images stay where they are
real_cache=${FLUSHLOG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/flushlog}
for d in "$real_cache"/*; do
	[ "$(basename "$d")" = jobs ] || ln -s "$d" "$tmp/cache/"
done

cat >"$tmp/x/workload" <<'EOS'
#!/bin/sh
for i in 1 2 3; do
	printf 'block %d\n' "$i" | dd of="$FLUSHLOG_DEV" bs=512 seek="$i" conv=sync,fsync status=none
done
EOS
# a state holds each block whole or not at all: zeroes or "block N"
cat >"$tmp/x/checker" <<'EOS'
#!/bin/sh
for i in 1 2 3; do
	got=$(dd if="$1" bs=512 skip="$i" count=1 status=none | tr -d '\0')
	[ -z "$got" ] || [ "$got" = "block $i" ] || { echo "block $i holds '$got'"; exit 1; }
done
echo "checked $1"
EOS
chmod +x "$tmp/x/workload" "$tmp/x/checker"

rc=0
env -u FLUSHLOG_TOP -u FLUSHLOG_BUILD FLUSHLOG_CACHE="$tmp/cache" \
	"$src/scripts/crashtest" --fs raw --workload "$tmp/x/workload" \
	--check "$tmp/x/checker {}" --out "$tmp/run" >"$TEST_TMP/out" 2>&1 || rc=$?
cat "$TEST_TMP/out"
((rc == 0)) || _fail "crashtest from $src exited $rc"
checked=$(jq '[.states[] | select(.result == "pass")] | length' "$tmp/run/report.json")
((checked >= 3)) || _fail "the checker passed $checked states, expected one per flush at least"
jq -e '.checked == ([.states[] | select(.result == "pass")] | length)' "$tmp/run/report.json" >/dev/null ||
	_fail "not every state passed: $(cat "$tmp/run/report.json")"
echo "$checked states checked by $tmp/x/checker from a checkout in $src"
