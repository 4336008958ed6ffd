#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the guest: a flushlog device suspended and resumed mid-workload keeps
# one log (clean while suspended); a table reload starts a new log.
. "$FLUSHLOG_TOP/tests/guest/common.sh"

head -c 8M /dev/urandom >/tmp/pattern
_flushlog_init fl /dev/flushlog/data /dev/flushlog/log
dd if=/tmp/pattern of=/dev/mapper/fl bs=64k count=64 oflag=direct conv=fsync status=none
dmsetup suspend fl
"$FLUSHLOG" info --json /dev/flushlog/log >/tmp/suspended.json ||
	_fail "the log is not readable while suspended"
grep -q '"clean":true' /tmp/suspended.json || _fail "not clean while suspended: $(cat /tmp/suspended.json)"
dmsetup resume fl
dd if=/tmp/pattern of=/dev/mapper/fl bs=64k skip=64 seek=64 oflag=direct conv=fsync status=none
_flushlog_remove fl

_flushlog_init fl2 /dev/flushlog/data2 /dev/flushlog/log2
dd if=/tmp/pattern of=/dev/mapper/fl2 bs=64k count=64 oflag=direct conv=fsync status=none
"$FLUSHLOG" info --json /dev/flushlog/log2 >/tmp/before.json
dmsetup reload fl2 --table "$(dmsetup table fl2)"
dmsetup resume fl2
dd if=/tmp/pattern of=/dev/mapper/fl2 bs=64k skip=64 seek=64 oflag=direct conv=fsync status=none
_flushlog_remove fl2
"$FLUSHLOG" info --json /dev/flushlog/log2 >/tmp/after.json
uuid() { sed 's/.*"uuid":"\([^"]*\)".*/\1/' "$1"; }
[ "$(uuid /tmp/before.json)" != "$(uuid /tmp/after.json)" ] || _fail "the reload did not start a new log"
cmp -n 8M /tmp/pattern /dev/flushlog/data2 || _fail "data2 does not hold the writes"
echo "reload: log $(uuid /tmp/before.json) replaced by $(uuid /tmp/after.json)"
