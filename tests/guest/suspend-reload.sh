#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the guest: a flushlog device suspended and resumed mid-workload keeps
# one log (clean while suspended); a table reload starts a new log.
. "$FLUSHLOG_TOP/tests/guest/common.sh"

head -c 8M /dev/urandom >"$TMPDIR/pattern"
_flushlog_init fl /dev/flushlog/data /dev/flushlog/log
dd if="$TMPDIR/pattern" of=/dev/mapper/fl bs=64k count=64 oflag=direct conv=fsync status=none
dmsetup suspend fl
"$FLUSHLOG" info --json /dev/flushlog/log >"$TMPDIR/suspended.json" ||
	_fail "the log is not readable while suspended"
grep -q '"clean":true' "$TMPDIR/suspended.json" || _fail "not clean while suspended: $(cat "$TMPDIR/suspended.json")"
dmsetup resume fl
dd if="$TMPDIR/pattern" of=/dev/mapper/fl bs=64k skip=64 seek=64 oflag=direct conv=fsync status=none
_flushlog_remove fl

_flushlog_init fl2 /dev/flushlog/data2 /dev/flushlog/log2
dd if="$TMPDIR/pattern" of=/dev/mapper/fl2 bs=64k count=64 oflag=direct conv=fsync status=none
"$FLUSHLOG" info --json /dev/flushlog/log2 >"$TMPDIR/before.json"
dmsetup reload fl2 --table "$(dmsetup table fl2)"
dmsetup resume fl2
dd if="$TMPDIR/pattern" of=/dev/mapper/fl2 bs=64k skip=64 seek=64 oflag=direct conv=fsync status=none
_flushlog_remove fl2
"$FLUSHLOG" info --json /dev/flushlog/log2 >"$TMPDIR/after.json"
uuid() { sed 's/.*"uuid":"\([^"]*\)".*/\1/' "$1"; }
[ "$(uuid "$TMPDIR/before.json")" != "$(uuid "$TMPDIR/after.json")" ] || _fail "the reload did not start a new log"
cmp -n 8M "$TMPDIR/pattern" /dev/flushlog/data2 || _fail "data2 does not hold the writes"
echo "reload: log $(uuid "$TMPDIR/before.json") replaced by $(uuid "$TMPDIR/after.json")"
