#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A write that fails on the data device may still have changed some of
# its sectors: the log keeps it, flagged failed, and the crash states at
# the end of the log include the data device as it is.  The data device
# is a linear range then an error range over one disk.  A 64 KiB direct
# write across the boundary (sector 8000, inside one of the target's
# 1 MiB split units, so that the target sees one bio) fails (EIO) but
# writes its first 32 KiB; a write inside the error range fails and
# writes nothing.  The log must have both, with their ranges and
# "failed" in flushlog dump --json, and the disk (which was zeroes) must
# equal one of the states check builds at the end of the log (prefix,
# epoch, torn at every block): the oracle is the disk itself.  Before
# failed bios were logged, neither write had an entry and no state held
# the 32 KiB the disk got.  Needs the library to read FLUSHLOG_F_FAILED
# (dump's "failed", and the torn states of a failed write: branch
# i30-lib).
. "$FLUSHLOG_TOP/tests/common.sh"
# asan: no
# kernels: 6.1
_require_guest
_require_cmd jq

truncate -s 8M "$TEST_TMP/data.img" "$TEST_TMP/log.img" "$TEST_TMP/data2.img" "$TEST_TMP/log2.img"
head -c 8M /dev/urandom >"$TEST_TMP/pattern"
_run_guest "$FLUSHLOG_TOP/tests/guest/failed-writes.sh" \
	--disk "data=$TEST_TMP/data.img" --disk "log=$TEST_TMP/log.img" \
	--disk "data2=$TEST_TMP/data2.img" --disk "log2=$TEST_TMP/log2.img" -- "$TEST_TMP/pattern"
# the failed write's data on the sectors the newer write holds
dd if="$TEST_TMP/pattern" of="$TEST_TMP/stale" bs=512 skip=7936 count=64 status=none
problems=()

# entry DUMP SECTOR SECTORS FAILED: the log has that write, and says
# whether it failed
entry() {
	jq -se --argjson s "$2" --argjson n "$3" --argjson f "$4" \
		'any(.[]; .op == "write" and .sector == $s and .nr_sectors == $n and (.failed // false) == $f)' \
		"$1" >/dev/null
}

# check_log NAME DATA LOG: the log's entries, and the disk among the end
# states (none of which holds stale data under a newer write)
check_log() {
	local name=$1 data=$2 log=$3 dump=$TEST_TMP/$1.json rc=0 states
	"$FLUSHLOG" dump "$log"
	"$FLUSHLOG" dump --json "$log" >"$dump" || { problems+=("$name: dump refused the log"); return; }
	entry "$dump" 7936 128 true || problems+=("$name: no failed entry for the write across the error range (sectors 7936+128)")
	entry "$dump" 9216 8 true || problems+=("$name: no failed entry for the write inside the error range (sectors 9216+8)")
	entry "$dump" 0 8 false || problems+=("$name: no entry for the write at sector 0")
	entry "$dump" 16 8 false || problems+=("$name: no entry for the write at sector 16")
	cat >"$TEST_TMP/checker" <<EOS
#!/bin/sh
cmp -s "\$1" "$data" && echo "\$FLUSHLOG_STATE_NAME" >>"$TEST_TMP/$name.matches"
cmp -s -i \$((7936 * 512)):0 -n 32768 "\$1" "$TEST_TMP/stale" && echo "\$FLUSHLOG_STATE_NAME" >>"$TEST_TMP/$name.stale"
exit 0
EOS
	chmod +x "$TEST_TMP/checker"
	: >"$TEST_TMP/$name.matches"
	: >"$TEST_TMP/$name.stale"
	"$FLUSHLOG" check -q -p end --states prefix,epoch,torn -K 2 --max-torn 128 --json -w "$TEST_TMP" \
		"$log" -- "$TEST_TMP/checker" {} >"$TEST_TMP/$name.report.json" || rc=$?
	((rc == 0)) || problems+=("$name: check of the end states exited $rc")
	states=$(jq '.states | length' "$TEST_TMP/$name.report.json" 2>/dev/null || echo none)
	echo "$name: $states end states; equal to the disk: $(wc -l <"$TEST_TMP/$name.matches")"
	if [ ! -s "$TEST_TMP/$name.matches" ]; then
		if "$FLUSHLOG" replay -q -o "$TEST_TMP/end.img" "$log"; then
			cmp "$TEST_TMP/end.img" "$data" | sed "s/^/$name: end state vs disk: /" || true
		fi
		problems+=("$name: no state at the end of the log is the data disk")
	fi
}
check_log stop "$TEST_TMP/data.img" "$TEST_TMP/log.img"
check_log fail "$TEST_TMP/data2.img" "$TEST_TMP/log2.img"
# on the default log nothing overwrote the failed write: its written half
# must be a state (the disk is one), which the stale file shows too
[ -s "$TEST_TMP/stop.stale" ] || problems+=("stop: no end state holds the failed write's written half")
[ ! -s "$TEST_TMP/fail.stale" ] ||
	problems+=("fail: end states hold the failed write's data under the newer write: $(head -n 3 "$TEST_TMP/fail.stale" | tr '\n' ' ')")
entry "$TEST_TMP/fail.json" 7936 64 false || problems+=("fail: no entry for the newer write (sectors 7936+64)")
((${#problems[@]} == 0)) || _fail "$(printf '\n  %s' "${problems[@]}")"
echo "the failed writes are logged, flagged failed, in both modes; the disks are end states; the newer write wins"
