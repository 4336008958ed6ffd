#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the guest (512 MiB): swap on a flushlog device, fl-swap, and a
# memory hog of HOG_MIB that goes through it once, while fio writes
# another flushlog device, fl-io, with 4 KiB random writes (16 at once)
# and 1 MiB O_DIRECT writes (2 at once).  Every job must finish its fixed
# amount, nothing be killed for memory, the hog read back every page it
# wrote, and each log's peak memory stay within max_pending (64 MiB).
# The host test (138) replays both logs.
. "$FLUSHLOG_TOP/tests/guest/common.sh"

hog_mib=$1
_flushlog_init fl-swap /dev/flushlog/swap /dev/flushlog/swaplog
_flushlog_init fl-io /dev/flushlog/io /dev/flushlog/iolog
mkswap /dev/mapper/fl-swap >/dev/null
swapon /dev/mapper/fl-swap
grep -E "^(MemTotal|MemAvailable|SwapTotal):" /proc/meminfo | tr -s ' ' | tr '\n' ' '
echo

swap_used() {
	awk '/^SwapTotal:/ { t = $2 } /^SwapFree:/ { f = $2 } END { print int((t - f) / 1024) }' /proc/meminfo
}
"$FLUSHLOG_BUILD/tests/fl-memhog" "$hog_mib" 1 >"$TMPDIR/hog.out" 2>&1 &
hog=$!
# fio starts once the hog has the machine swapping
while (($(swap_used) < 16)) && kill -0 "$hog" 2>/dev/null; do
	sleep 1
done
echo "fio starts with $(swap_used) MiB in swap"
fio --output-format=json --output="$TMPDIR/fio.json" \
	--filename=/dev/mapper/fl-io --direct=1 --ioengine=libaio \
	--name=small --rw=randwrite --bs=4k --size=8m --offset=0 --iodepth=16 \
	--name=large --rw=write --bs=1m --size=32m --offset=64m --iodepth=2 ||
	_fail "fio failed: $(cat "$TMPDIR/fio.json")"
hog_state=finished
kill -0 "$hog" 2>/dev/null && hog_state="still running"
echo "fio done with $(swap_used) MiB in swap; the hog is $hog_state"
jq -r '.jobs[] | "\(.jobname): \(.write.io_bytes / 1048576) MiB written, \(.write.total_ios) writes, latency max \(.write.clat_ns.max / 1000000 | floor) ms, mean \(.write.clat_ns.mean / 1000000 | floor) ms"' \
	"$TMPDIR/fio.json"
wait "$hog" || _fail "the memory hog failed: $(cat "$TMPDIR/hog.out")"
cat "$TMPDIR/hog.out"
! dmesg | grep -E "invoked oom-killer|Out of memory" ||
	_fail "the kernel ran out of memory"
for job in small:8 large:32; do
	want=${job#*:} job=${job%:*}
	[ "$(jq -r --arg j "$job" '.jobs[] | select(.jobname == $j) | .write.io_bytes' "$TMPDIR/fio.json")" = $((want << 20)) ] ||
		_fail "fio job $job did not write its $want MiB"
done
swapoff /dev/mapper/fl-swap
for dev in fl-swap fl-io; do
	status=$(_flushlog_status "$dev")
	echo "$dev: $status"
	peak=$(_flushlog_field "$dev" peak_pending_bytes)
	state=${status%% *}
	[ "$state" = logging ] || _fail "$dev: state $state"
	((peak > 0 && peak <= 64 << 20)) ||
		_fail "$dev: peak memory $peak bytes, over the 64 MiB budget"
	_flushlog_remove "$dev"
done
