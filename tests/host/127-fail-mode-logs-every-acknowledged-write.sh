#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# on_full=fail promises a log entry for every write that succeeds: with the
# log device failing past its first 2 MiB under four writers (FUA and
# not), every write the guest saw succeed is in the log, with its data:
# the replay of the log equals the data disk at each acknowledged block.
# Before writes were held until logged, the last ones acknowledged before
# the log write failed were missing.
. "$FLUSHLOG_TOP/tests/common.sh"
# asan: no
# kernels: 6.1 6.12 debug
_require_guest

truncate -s 32M "$TEST_TMP/data.img" "$TEST_TMP/log.img"
truncate -s 1M "$TEST_TMP/acks.img"
# two CPUs, whatever FLUSHLOG_GUEST_SMP says: the target's bios are
# submitted and completed on both at once
_run_guest "$FLUSHLOG_TOP/tests/guest/fail-mode-holds-writes.sh" --smp 2 \
	--disk "data=$TEST_TMP/data.img" --disk "log=$TEST_TMP/log.img" \
	--disk "acks=$TEST_TMP/acks.img"
tr -d '\0' <"$TEST_TMP/acks.img" >"$TEST_TMP/acks"
acked=$(wc -l <"$TEST_TMP/acks")
((acked > 0)) || _fail "no write was acknowledged"
"$FLUSHLOG" replay -q -o "$TEST_TMP/replay.img" "$TEST_TMP/log.img" ||
	_fail "the log before the failure does not replay"
missing=
while read -r block; do
	cmp -s <(dd if="$TEST_TMP/data.img" bs=4k skip="$block" count=1 status=none) \
		<(dd if="$TEST_TMP/replay.img" bs=4k skip="$block" count=1 status=none) ||
		missing+=" $block"
done <"$TEST_TMP/acks"
[ -z "$missing" ] ||
	_fail "acknowledged writes missing from the log (blocks):$missing"
echo "all $acked acknowledged writes are in the log, with their data"
