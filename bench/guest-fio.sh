#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the guest (make bench): fio throughput through dm-linear, dm-flushlog
# (XXH64 data checksums, the default, and CRC32C) and dm-log-writes on the
# same disks, and the bytes each wrote to the log
# device (as the log disk counts them).
# Prints "target job KiB/s data-bytes log-bytes peak-memory" lines, ROUNDS
# (argument, default 3) times each; peak memory is flushlog's own count of
# the bytes it held for logging (its status), "-" for the others.
set -euo pipefail
data=/dev/flushlog/data
log=/dev/flushlog/log
sz=$(blockdev --getsz "$data")

run_fio() {	# run_fio NAME ARGS...: prints "KiB/s bytes"
	local name=$1
	shift
	fio --name="$name" --filename=/dev/mapper/bench --direct=1 --ioengine=psync \
		--randrepeat=1 --output-format=json "$@" >"$TMPDIR/fio.json"
	jq -r '.jobs[0].write | "\(.bw) \(.io_bytes)"' "$TMPDIR/fio.json"
}

# Sectors written to the log device, whatever the target: entries, super
# block updates and all, from /sys/block/*/stat.
log_disk=$(basename "$(readlink -f "$log")")
log_sectors_written() {
	awk '{ print $7 }' "/sys/block/$log_disk/stat"
}

# Rounds in rotating order; bench/run takes each pairing's median.
rounds=${1:-3}
targets=(linear flushlog flushlog-fail log-writes)
for ((round = 0; round < rounds; round++)); do
	for ((t = 0; t < ${#targets[@]}; t++)); do
		target=${targets[(t + round) % ${#targets[@]}]}
		for job in fsync8 dsync; do
			case $target in
			linear) table="0 $sz linear $data 0" ;;
			flushlog-fail) table="0 $sz flushlog $data $log 1 on_full=fail" ;;
			*) table="0 $sz $target $data $log" ;;
			esac
			# fresh, equal disks for every run
			blkdiscard "$data" 2>/dev/null || true
			blkdiscard "$log" 2>/dev/null || true
			before=$(log_sectors_written)
			dmsetup create bench --table "$table"
			case $job in
			fsync8) r=$(run_fio fsync8 --rw=randwrite --bsrange=4k-64k --fsync=8 --size=512m --io_size=48m) ;;
			dsync) r=$(run_fio dsync --rw=randwrite --bs=4k --sync=dsync --size=512m --io_size=6m) ;;
			esac
			peak=-
			[[ $target == flushlog* ]] &&
				peak=$(dmsetup status bench | sed -n 's/.* peak_pending_bytes=\([0-9]*\).*/\1/p')
			dmsetup remove bench
			sync
			echo "$target $job $r $((($(log_sectors_written) - before) * 512)) $peak"
		done
	done
done
