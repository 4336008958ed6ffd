#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Long commands show a progress line on stderr when it is a terminal
# (script(1) gives them one): info reading and verifying a log, replay,
# check with its ETA; the line is erased at the end and never reaches
# stdout.  With stderr not a terminal, or with -q, stderr gets nothing
# of it.
. "$FLUSHLOG_TOP/tests/common.sh"
_require_cmd script

# a log of some megabytes, and a checker slow enough for an ETA
{
	echo 'device 65536'
	for ((i = 0; i < 400; i++)); do
		echo "write $((i * 128)) 128"
		((i % 40 != 39)) || echo flush
	done
} >"$TEST_TMP/s.fls"
"$MKLOG" -o "$TEST_TMP/log" "$TEST_TMP/s.fls"
log=$TEST_TMP/log
printf '#!/bin/sh\nsleep 0.3\n' >"$TEST_TMP/slow"
chmod +x "$TEST_TMP/slow"

# _on_tty OUT CMD...: run CMD with stderr (only) on a terminal; what the
# terminal got in OUT, CMD's stdout in OUT.stdout
_on_tty() {
	local out=$1 cmd
	shift
	printf -v cmd '%q ' "$@"
	script -qec "$cmd >$(printf %q "$out.stdout")" /dev/null >"$out" ||
		_fail "on a terminal, '$*' failed: $(cat -v "$out")"
}

# 1. not a terminal: nothing but what was asked for
"$FLUSHLOG" info "$log" >/dev/null 2>"$TEST_TMP/info.err"
"$FLUSHLOG" replay -o "$TEST_TMP/img" "$log" 2>"$TEST_TMP/replay.err"
"$FLUSHLOG" check -w "$TEST_TMP" "$log" -- true {} >/dev/null 2>"$TEST_TMP/check.err"
for f in info replay check; do
	[ ! -s "$TEST_TMP/$f.err" ] || _fail "$f wrote to stderr, not a terminal: $(cat -v "$TEST_TMP/$f.err")"
done
echo "not a terminal: info, replay and check write nothing to stderr"

# 2. a terminal: a line, redrawn, and erased at the end
export FLUSHLOG_PROGRESS_DELAY=0
_on_tty "$TEST_TMP/info.tty" "$FLUSHLOG" info "$log"
grep -q "flushlog info: verifying '.*log': .*% of" "$TEST_TMP/info.tty" ||
	_fail "info shows no progress: $(cat -v "$TEST_TMP/info.tty")"
[ "$(tail -c 4 "$TEST_TMP/info.tty" | od -An -c | tr -d ' ')" = '\r033[K' ] ||
	_fail "info leaves its progress line: $(cat -v "$TEST_TMP/info.tty")"
grep -q '^entries: *410$' "$TEST_TMP/info.tty.stdout" || _fail "info's stdout: $(cat "$TEST_TMP/info.tty.stdout")"
grep -q 'flushlog info' "$TEST_TMP/info.tty.stdout" && _fail "the progress line went to stdout"
_on_tty "$TEST_TMP/replay.tty" "$FLUSHLOG" replay -o "$TEST_TMP/img" "$log"
grep -q 'flushlog replay: .*% of' "$TEST_TMP/replay.tty" ||
	_fail "replay shows no progress: $(cat -v "$TEST_TMP/replay.tty")"
_on_tty "$TEST_TMP/check.tty" "$FLUSHLOG" check -w "$TEST_TMP" --json "$log" -- "$TEST_TMP/slow" {}
grep -q 'flushlog check: [0-9]*/[0-9]* states, 0 failed ETA [0-9]' "$TEST_TMP/check.tty" ||
	_fail "check shows no ETA: $(cat -v "$TEST_TMP/check.tty")"
jq -e '.finished and .failed == 0' "$TEST_TMP/check.tty.stdout" >/dev/null ||
	_fail "check --json's stdout is not the report alone: $(head -c 300 "$TEST_TMP/check.tty.stdout")"
echo "a terminal: info, replay and check (with an ETA) show progress, erased at the end"

# 3. -q: not even on a terminal
for cmd in "info $log" "replay -o $TEST_TMP/img $log" "check -w $TEST_TMP $log -- true {}"; do
	read -r -a words <<<"$cmd"
	_on_tty "$TEST_TMP/quiet.tty" "$FLUSHLOG" "${words[0]}" -q "${words[@]:1}"
	[ ! -s "$TEST_TMP/quiet.tty" ] ||
		_fail "'${words[0]} -q' wrote to the terminal: $(cat -v "$TEST_TMP/quiet.tty")"
done
echo "-q: info, replay and check write nothing to a terminal"
