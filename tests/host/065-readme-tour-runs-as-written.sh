#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The README's five-minute tour runs as written, on the shipped log, as a
# user without root would run it: every command exits 0, the states it
# checks all pass, and a bare e2fsck -fn fails where the README says it
# does (a state needs its journal replayed first).
. "$FLUSHLOG_TOP/tests/common.sh"

_require_cmd xz
_require_cmd e2fsck
[ -x /sbin/debugfs ] || _skip "debugfs is not installed (e2fsprogs)"

# the block under the tour's heading, as a reader copies it
# shellcheck disable=SC2016 # sed's addresses, not the shell's
sed -n '/^## A five-minute tour/,/^## /p' "$FLUSHLOG_TOP/README.md" |
	sed -n '/^```sh$/,/^```$/p' | sed '1d;$d' >"$TEST_TMP/tour.sh"
grep -q 'flushlog check' "$TEST_TMP/tour.sh" || _fail "no tour block in README.md"

# in a copy of what it reads, with the build under test, /tmp its own
mkdir -p "$TEST_TMP/tree/docs/tour" "$TEST_TMP/tree/build" "$TEST_TMP/tmp"
cp "$FLUSHLOG_TOP"/docs/tour/{ext4.log.xz,check-ext4} "$TEST_TMP/tree/docs/tour/"
ln -s "$FLUSHLOG" "$TEST_TMP/tree/build/flushlog"
sed -i -e 's/^make\([[:space:]]\|$\)/: make\1/' -e "s|/tmp/|$TEST_TMP/tmp/|g" "$TEST_TMP/tour.sh"
# as root, the tour runs as nobody, owning the copy as a user owns a clone
as_user=()
if ((EUID == 0)) && command -v setpriv >/dev/null; then
	as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	chmod a+rx "$TEST_TMP" "$TEST_TMP/tour.sh"
	chown -R 65534:65534 "$TEST_TMP/tree" "$TEST_TMP/tmp"
fi
start=$SECONDS
(cd "$TEST_TMP/tree" && "${as_user[@]}" bash -euo pipefail -x "$TEST_TMP/tour.sh") \
	>"$TEST_TMP/tour.out" 2>&1 < /dev/null ||
	{ tail -n 30 "$TEST_TMP/tour.out"; _fail "the README's tour failed"; }
echo "the tour: $((SECONDS - start)) s${as_user:+, as nobody}"
grep -E '^[0-9]+ states checked' "$TEST_TMP/tour.out"
[ "$(grep -cE '^[0-9]+ states checked: ([0-9]+) passed, 0 failed' "$TEST_TMP/tour.out")" = 2 ] ||
	_fail "the tour's checks did not both pass"

# what the README says of a bare e2fsck
_expect_exit 1 "$FLUSHLOG" check -q --from mark:mkfs-done "$TEST_TMP/tree/docs/tour/ext4.log" -- e2fsck -fn {}
grep -q 'flush:17' "$TEST_TMP/stdout" || _fail "a bare e2fsck -fn did not fail at flush:17: $(cat "$TEST_TMP/stdout")"
