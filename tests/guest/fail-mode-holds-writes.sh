#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the guest: with on_full=fail, a write is acknowledged only once its
# entry is on the log device.  The log device fails past its first 2 MiB
# (an 'error' table after a linear one) while four writers go on, with
# O_DSYNC (FUA) and without, each until a write fails.  The blocks whose
# writes were acknowledged go to the acks disk, a line each, for the host
# to find every one in the log.
. "$FLUSHLOG_TOP/tests/guest/common.sh"

log=/dev/flushlog/log
good=4096	# the log's working sectors: 2 MiB, about 250 entries of 4 KiB
sz=$(blockdev --getsz "$log")
printf '0 %s linear %s 0\n%s %s error\n' "$good" "$log" "$good" "$((sz - good))" |
	dmsetup create logdev
_flushlog_init fl /dev/flushlog/data /dev/mapper/logdev on_full=fail
head -c 2M /dev/urandom >"$TMPDIR/pattern"

writer() {	# writer K FLAGS: blocks K*1024, K*1024+1, ... until one fails
	local k=$1 flags=$2 i
	for ((i = 0; i < 1024; i++)); do
		dd if="$TMPDIR/pattern" of=/dev/mapper/fl bs=4k count=1 \
			skip=$((i % 512)) seek=$((k * 1024 + i)) oflag="$flags" \
			status=none 2>"$TMPDIR/err.$k" || return 0
		echo $((k * 1024 + i))
	done
	echo "writer $k: 1024 writes fit in a 2 MiB log" >&2
	return 1
}
pids=()
writer 0 direct,dsync >"$TMPDIR/acks.0" & pids+=($!)
writer 1 direct,dsync >"$TMPDIR/acks.1" & pids+=($!)
writer 2 direct >"$TMPDIR/acks.2" & pids+=($!)
writer 3 direct >"$TMPDIR/acks.3" & pids+=($!)
for pid in "${pids[@]}"; do
	wait "$pid" || _fail "a writer never saw the log fail"
done
for k in 0 1 2 3; do
	grep -q "Input/output error" "$TMPDIR/err.$k" ||
		_fail "writer $k stopped with: $(cat "$TMPDIR/err.$k")"
done
[ "$(_flushlog_field fl state)" = error ] ||
	_fail "status: $(_flushlog_status fl)"
sort -n "$TMPDIR"/acks.* >/dev/flushlog/acks
sync
echo "$(sort -n "$TMPDIR"/acks.* | wc -l) writes acknowledged before the log failed"
_flushlog_remove fl
dmsetup remove logdev
