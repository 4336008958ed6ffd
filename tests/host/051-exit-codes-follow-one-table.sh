#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# One table of exit codes for flushlog, fl-workload and crashtest: the
# enum in userspace/cli/cli.h, flushlog(1) EXIT STATUS and crashtest's
# --help list the same codes, and every code has a case here that gives
# it.  0 done; 1 only for a verdict (a state failed, a promise broken);
# 2 usage or an output refused; 3 the log refused; 4 the run could not be
# done (a work folder missing, no space for the state images or the
# image, a checker that cannot run, an output that cannot be written),
# never 1, so that CI tells a broken run from an inconsistent state; 5
# incomplete (a merge with a shard missing); 77 crashtest's "cannot be
# tested here" (test 017 gives it).  The no-space cases run in a mount
# namespace of this test's own, on a small tmpfs.
. "$FLUSHLOG_TOP/tests/common.sh"
_require_cmd jq

wl=$FLUSHLOG_BUILD/fl-workload

# in_namespace: the cases that need a full filesystem, on a 512 KiB tmpfs
# at $TEST_TMP/ns; the log writes 2 MiB
in_namespace() {
	local ns=$TEST_TMP/ns log=$TEST_TMP/big.log
	mkdir -p "$ns"
	mount -t tmpfs -o size=512k flushlog-test "$ns"
	_expect_exit 4 "$FLUSHLOG" check -q -w "$ns" "$log" -- true
	grep -q "No space left on device" "$TEST_TMP/stderr" ||
		_fail "check out of space: $(cat "$TEST_TMP/stderr")"
	_expect_exit 4 "$FLUSHLOG" replay -q -o "$ns/state.img" "$log"
	[ -z "$(ls -A "$ns")" ] || _fail "a failed replay left files: $(ls -A "$ns")"
	echo "4: no space for check's state images, nor for an image"
	# stdout a device that is always full (1:7, /dev/full's numbers)
	mknod "$ns/full" c 1 7
	# shellcheck disable=SC2016 # the words are bash -c's own arguments
	_expect_exit 4 bash -c '"$0" dump "$1" >"$2"' "$FLUSHLOG" "$log" "$ns/full"
	grep -q "cannot write to stdout: No space left on device" "$TEST_TMP/stderr" ||
		_fail "dump to a full stdout: $(cat "$TEST_TMP/stderr")"
	echo "4: dump's stdout cannot be written"
}

if [ "${1:-}" = in-namespace ]; then
	in_namespace
	exit 0
fi

# the table: every code of cli.h's enum, and only those, in flushlog(1),
# and crashtest's --help names each of its codes the same way
mapfile -t enum < <(sed -n '/^enum cli_exit {/,/^};/s/^\tEXIT_[A-Z_]* = \([0-9]*\),.*/\1/p' \
	"$FLUSHLOG_TOP/userspace/cli/cli.h")
((${#enum[@]} == 7)) || _fail "cli.h's enum cli_exit has ${#enum[@]} codes: ${enum[*]}"
page=$(awk '/^\.SH EXIT STATUS/ { on = 1; next } /^\.SH/ { on = 0 } on && prev == ".TP" { print } { prev = $0 }' \
	"$FLUSHLOG_TOP/userspace/man/flushlog.1")
[ "$(grep -oE '^\.BR? [0-9]+' <<<"$page" | grep -oE '[0-9]+' | paste -sd' ')" = "${enum[*]} 125" ] ||
	_fail "flushlog(1) EXIT STATUS lists $(grep -oE '[0-9]+' <<<"$page" | paste -sd' '), cli.h ${enum[*]} (and crashtest's 125, 126)"
help=$("$FLUSHLOG_TOP/scripts/crashtest" --help 2>&1 || true)
grep -q 'flushlog(1) EXIT STATUS' <<<"$help" || _fail "crashtest --help does not point at flushlog(1) EXIT STATUS"
for code in "${enum[@]}"; do
	grep -qE "^ +$code +[a-z]" <<<"$help" || _fail "crashtest --help does not say what exit $code is"
done
for c in info dump points replay check merge plot; do
	grep -q 'flushlog(1) EXIT STATUS' <<<"$("$FLUSHLOG" "$c" --help)" ||
		_fail "flushlog $c --help does not point at the table"
done
grep -q 'flushlog(1) EXIT STATUS' <<<"$("$wl" --help)" || _fail "fl-workload --help does not point at the table"
echo "one table: ${enum[*]} in cli.h, flushlog(1) and crashtest --help"

_mklog "$DATA/basic.fls" flushlog "$TEST_TMP/basic"
log=$TEST_TMP/basic/log

# 0
_expect_exit 0 "$FLUSHLOG" info "$log"
_expect_exit 0 "$FLUSHLOG" check -q -w "$TEST_TMP" --report "$TEST_TMP/pass.json" "$log" -- true
echo "0: done, every state passed"

# 1: a verdict, and nothing else
_expect_exit 1 "$FLUSHLOG" check -q -k -w "$TEST_TMP" "$log" -- false
mkdir "$TEST_TMP/wl"
"$wl" --seed 3 --ops 60 --oracle "$TEST_TMP/oracle" "$TEST_TMP/wl" >/dev/null
last=$(awk '$1 == "mark" { l = $4 } END { print l }' "$TEST_TMP/oracle")
rm -rf "${TEST_TMP:?}/wl"/*
_expect_exit 1 "$wl" --verify "$TEST_TMP/oracle" --last-mark "$last" "$TEST_TMP/wl"
echo "1: a state failed, a promise was broken"

# 2: usage, and outputs refused
_expect_exit 2 "$FLUSHLOG" replay "$log"
_expect_exit 2 "$FLUSHLOG" replay -q -o "$log" "$log"
_expect_exit 2 "$FLUSHLOG" check -q -w "$TEST_TMP" --report "$log" "$log" -- true
_expect_exit 2 "$wl" --procs 0 "$TEST_TMP/wl"
_expect_exit 2 "$FLUSHLOG_TOP/scripts/crashtest" --fs zfs
echo "2: bad command lines, an output that is the log"

# 3: the log refused
head -c 8192 /dev/zero | tr '\0' 'x' >"$TEST_TMP/junk.log"
for cmd in info dump points; do
	_expect_exit 3 "$FLUSHLOG" "$cmd" "$TEST_TMP/junk.log"
done
_expect_exit 3 "$FLUSHLOG" replay -q -o "$TEST_TMP/x.img" "$TEST_TMP/junk.log"
_expect_exit 3 "$FLUSHLOG" check -q -w "$TEST_TMP" "$TEST_TMP/junk.log" -- true
[ ! -e "$TEST_TMP/x.img" ] || _fail "a refused log left an image"
echo "3: a log that is none, refused by every command"

# 4: the run could not be done, never 1
_expect_exit 4 "$FLUSHLOG" check -q -w "$TEST_TMP/nonexistent" "$log" -- true
grep -q "cannot make a folder in '$TEST_TMP/nonexistent'" "$TEST_TMP/stderr" ||
	_fail "check -w a folder that does not exist: $(cat "$TEST_TMP/stderr")"
_expect_exit 4 "$FLUSHLOG" check -q -w "$TEST_TMP" "$log" -- "$TEST_TMP/no-such-checker" {}
_expect_exit 4 "$FLUSHLOG" check -q -w "$TEST_TMP" --report "$TEST_TMP/nonexistent/r.json" "$log" -- true
_expect_exit 4 "$FLUSHLOG" check -q -k -w "$TEST_TMP" --save-failures "$TEST_TMP/basic/log/x" "$log" -- false
_expect_exit 4 "$FLUSHLOG" plot -o "$TEST_TMP/nonexistent/p.svg" "$log"
_expect_exit 4 "$FLUSHLOG" replay -q -o "$TEST_TMP/nonexistent/x.img" "$log"
_expect_exit 4 "$wl" --ops 1 "$TEST_TMP/nonexistent"
_expect_exit 4 "$wl" --ops 1 --oracle "$TEST_TMP/nonexistent/oracle" "$TEST_TMP/wl"
echo "4: a work folder, checker, report, failure folder, picture, image or folder that cannot be used"
{
	echo 'device 8192'
	for ((i = 0; i < 32; i++)); do
		echo "write $((i * 128)) 128"
		echo flush
	done
} >"$TEST_TMP/big.fls"
"$MKLOG" -o "$TEST_TMP/big.log" "$TEST_TMP/big.fls"
_require_cmd unshare
unshare -m --propagation private bash "$0" in-namespace ||
	_fail "the cases out of space failed (exit $?)"

# 5: incomplete, a shard missing and none failing
_expect_exit 0 "$FLUSHLOG" check -q -k --shard 0/2 -w "$TEST_TMP" --report "$TEST_TMP/s0.json" "$log" -- true
_expect_exit 5 "$FLUSHLOG" merge --report "$TEST_TMP/part.json" "$TEST_TMP/s0.json"
jq -e '.finished == false' "$TEST_TMP/part.json" >/dev/null || _fail "the incomplete merge wrote no report"
echo "5: a merge with a shard missing"
