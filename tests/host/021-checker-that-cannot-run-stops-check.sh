#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# flushlog check: a checker that cannot run (not found, not executable,
# or exiting 126/127 as a shell does for those) is not a failing state:
# the first such state stops the run with exit 4 (the run could not be
# done) and one message naming
# the command, no FAIL lines and no failure folders.  A checker that
# exits 1 still fails states as before.
. "$FLUSHLOG_TOP/tests/common.sh"

_mklog "$DATA/basic.fls" flushlog "$TEST_TMP/basic"
log=$TEST_TMP/basic/log
printf 'not a program\n' >"$TEST_TMP/not-executable"
chmod -x "$TEST_TMP/not-executable"

cannot_run() {	# cannot_run PATTERN CHECKER...
	local pattern=$1
	shift
	rm -rf "$TEST_TMP/fails"
	_expect_exit 4 "$FLUSHLOG" check -q -k -j 2 -w "$TEST_TMP" \
		--save-failures "$TEST_TMP/fails" "$log" -- "$@"
	[ "$(wc -l <"$TEST_TMP/stderr")" = 1 ] ||
		_fail "'$*': expected one message, got: $(cat "$TEST_TMP/stderr")"
	grep -Eq "cannot run the checker '.*$2.*': $pattern" "$TEST_TMP/stderr" ||
		grep -Eq "cannot run the checker .*: $pattern" "$TEST_TMP/stderr" ||
		_fail "'$*': expected /$pattern/, got: $(cat "$TEST_TMP/stderr")"
	if grep -q FAIL "$TEST_TMP/stdout"; then
		_fail "'$*': states reported as failed: $(cat "$TEST_TMP/stdout")"
	fi
	[ ! -e "$TEST_TMP/fails" ] || _fail "'$*': failure folders were made"
	echo "'$*': $(cat "$TEST_TMP/stderr")"
}

cannot_run "No such file or directory" "$TEST_TMP/no-such-checker" {}
cannot_run "No such file or directory" no-such-checker-on-path {}
cannot_run "Permission denied" "$TEST_TMP/not-executable" {}
# shellcheck disable=SC2016 # for the checker's shell to expand
cannot_run "it exited 127 \(not found\).*not found" sh -c 'no-such-command "$1"' sh {}
cannot_run "it exited 126 \(not executable\)" sh -c 'exit 126'
# the work folder is gone after such a stop
[ -z "$(find "$TEST_TMP" -maxdepth 1 -name 'flushlog-check.*')" ] ||
	_fail "a work folder was left behind"

# a checker that runs and says "inconsistent" is a failure, not this
_expect_exit 1 "$FLUSHLOG" check -q -k -w "$TEST_TMP" "$log" -- sh -c 'exit 1'
grep -Eq "checked: 0 passed, [1-9][0-9]* failed" "$TEST_TMP/stdout" || _fail "exit 1: $(cat "$TEST_TMP/stdout")"
_expect_exit 0 "$FLUSHLOG" check -q -w "$TEST_TMP" "$log" -- true
