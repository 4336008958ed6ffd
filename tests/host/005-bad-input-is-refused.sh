#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Logs that are wrong in ways a checksum cannot catch (the writer meant
# them), files that are no log at all, and bad command lines: each gets a
# clear message and the documented exit code, never a crash.
. "$FLUSHLOG_TOP/tests/common.sh"

bad_log() {	# bad_log FORMAT PATTERN SCRIPT-LINES...
	local format=$1 pattern=$2
	shift 2
	printf '%s\n' "$@" >"$TEST_TMP/s.fls"
	"$MKLOG" -f "$format" -o "$TEST_TMP/bad.log" "$TEST_TMP/s.fls"
	_expect_exit 3 "$FLUSHLOG" info "$TEST_TMP/bad.log"
	grep -Eq "$pattern" "$TEST_TMP/stderr" ||
		_fail "expected /$pattern/ for '$*', got: $(cat "$TEST_TMP/stderr")"
	_expect_exit 3 "$FLUSHLOG" replay -q -o "$TEST_TMP/x.img" "$TEST_TMP/bad.log"
}

bad_log flushlog "entry 1 at offset 5120: sectors 2048\+8 beyond" \
	"write 0 8" "raw op=1 sector=2048 nr=8 datalen=4096"
bad_log flushlog "entry 0 .*unknown operation 9" "raw op=9"
bad_log flushlog "entry 0 .*unknown flags" "raw op=5 flags=0x100"
bad_log flushlog "entry 0 .*data length 512 does not match 8 sectors" \
	"raw op=1 nr=8 datalen=512"
bad_log flushlog "entry 0 .*4096 bytes of data" "raw op=2 nr=8 datalen=4096"
bad_log flushlog "entry 0 .*write of zero length" "raw op=1"
bad_log flushlog "entry 0 .*with a sector range" "raw op=5 sector=8"
bad_log flushlog "entry 0 .*invalid label length" "raw op=6"
bad_log flushlog "entry 0 .*not aligned" "device 2048 4096" "raw op=1 sector=1 nr=8 datalen=4096"
bad_log flushlog "entry 0 .*no-data flag" "raw op=1 flags=16 nr=8"
bad_log log-writes "entry 1 at offset 5120: unknown flags" "write 0 8" "raw lwflags=0x40"
bad_log log-writes "entry 0 .*absurd range" "raw op=1 nr=0xffffffffffff datalen=0"
bad_log log-writes "entry 0 .*invalid mark" "raw op=6"

# a no_data log describes, but cannot be replayed
_mklog "$DATA/nodata.fls" flushlog "$TEST_TMP/nd"
_expect_exit 0 "$FLUSHLOG" info "$TEST_TMP/nd/log"
_expect_exit 3 "$FLUSHLOG" replay -q -o "$TEST_TMP/x.img" "$TEST_TMP/nd/log"
grep -q "entry 0 at offset 512: write logged without its data" "$TEST_TMP/stderr" ||
	_fail "no_data replay: $(cat "$TEST_TMP/stderr")"

# not logs at all
: >"$TEST_TMP/empty"
_expect_exit 3 "$FLUSHLOG" info "$TEST_TMP/empty"
grep -q "too small" "$TEST_TMP/stderr" || _fail "empty file: $(cat "$TEST_TMP/stderr")"
head -c 1M /dev/urandom >"$TEST_TMP/random"
_expect_exit 3 "$FLUSHLOG" dump "$TEST_TMP/random"
grep -q "not a flushlog or dm-log-writes log" "$TEST_TMP/stderr" || _fail "random file"
_expect_exit 3 "$FLUSHLOG" points "$TEST_TMP/nonexistent"
grep -q "cannot open '.*nonexistent': No such file" "$TEST_TMP/stderr" || _fail "missing file"
_expect_exit 3 "$FLUSHLOG" info "$TEST_TMP"
grep -q "not a regular file or block device" "$TEST_TMP/stderr" || _fail "directory"
# a super block that claims a future version
_mklog "$DATA/basic.fls" flushlog "$TEST_TMP/b"
printf '\x07' | dd of="$TEST_TMP/b/log" bs=1 seek=8 conv=notrunc status=none
_expect_exit 3 "$FLUSHLOG" info "$TEST_TMP/b/log"
grep -q "unsupported version 7" "$TEST_TMP/stderr" || _fail "version: $(cat "$TEST_TMP/stderr")"

# command lines
_mklog "$DATA/basic.fls" flushlog "$TEST_TMP/g"
log=$TEST_TMP/g/log
_expect_exit 2 "$FLUSHLOG"
_expect_exit 2 "$FLUSHLOG" frobnicate
_expect_exit 2 "$FLUSHLOG" info
_expect_exit 2 "$FLUSHLOG" info --bogus "$log"
_expect_exit 2 "$FLUSHLOG" replay "$log"
_expect_exit 2 "$FLUSHLOG" replay -o "$TEST_TMP/x" --to flush:99 "$log"
grep -q "flush points 1 to 4 only" "$TEST_TMP/stderr" || _fail "flush:99: $(cat "$TEST_TMP/stderr")"
_expect_exit 2 "$FLUSHLOG" replay -o "$TEST_TMP/x" --to mark:nope "$log"
grep -q "no mark labelled 'nope'" "$TEST_TMP/stderr" || _fail "mark:nope"
_expect_exit 2 "$FLUSHLOG" replay -o "$TEST_TMP/x" --to entry:18 "$log"
_expect_exit 2 "$FLUSHLOG" replay -o "$TEST_TMP/x" --to sometime "$log"
_expect_exit 2 "$FLUSHLOG" replay -o "$TEST_TMP/x" --from flush:1 "$log"
_expect_exit 2 "$FLUSHLOG" dump --from x "$log"
# entries 5 to 4 are none (the positions meet); 5 to 3 run backwards
_expect_exit 2 "$FLUSHLOG" dump --from 5 --to 3 "$log"
[ ! -e "$TEST_TMP/x" ] || _fail "a refused replay created its output"
# a base image smaller than the device
head -c 4096 /dev/zero >"$TEST_TMP/small"
_expect_exit 2 "$FLUSHLOG" replay -o "$TEST_TMP/x" --base "$TEST_TMP/small" "$log"
grep -q "base '.*small' has 4096 bytes" "$TEST_TMP/stderr" || _fail "small base"
